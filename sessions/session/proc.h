/*
 * proc.h - background processes (procs/NAME) of a session: runs started
 * apart from its shell, each with a cgroup of its own.
 */
#ifndef SFS_PROC_H
#define SFS_PROC_H

#include <stddef.h>
#include "sessions/session/run.h"

struct sess;

/* Makes procs/NAME, not started yet. Returns 0, -EINVAL, -EEXIST,
 * -ENOENT (s is dying), -ENOSPC or -errno. */
int proc_new(struct sess *s, const char *name, struct run **out);
struct run *proc_by_name(struct sess *s, const char *name);
/* Starts p with its command; returns once it runs (0) or -errno. */
int proc_start(struct sess *s, struct run *p, const char *text, size_t len);
/* Signals p's processes; TERM escalates to KILL after the grace. */
int proc_signal(struct run *p, int sig);
/* Queues bytes for p's stdin. -EPIPE once stdin is closed. */
int proc_write(struct run *p, const char *buf, size_t len);
/* Closes p's stdin once what is queued is written. */
void proc_eof(struct run *p);
/* Ends p if it runs, then removes it and calls cb(arg). */
int proc_remove(struct sess *s, struct run *p, void (*cb)(void *), void *arg);
/* Drops every process of s (the session is being freed). */
void proc_free_all(struct sess *s);

/* An upgrade: p as one object (SSTATE_PROC), and made again in s. */
struct state_w;
struct state_r;
void proc_save(const struct run *p, struct state_w *w);
int proc_restore(struct sess *s, const struct state_r *o);

#endif
