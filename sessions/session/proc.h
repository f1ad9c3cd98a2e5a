/*
 * proc.h - background processes (procs/NAME) of a session: runs started
 * apart from its shell, each with a cgroup of its own.
 */
#ifndef SFS_PROC_H
#define SFS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sessions/core/contain.h"
#include "sessions/core/execerr.h"
#include "sessions/core/loop.h"
#include "sessions/core/reap.h"
#include "sessions/core/strbuf.h"
#include "sessions/session/run.h"

struct sess;

/* What a process has beyond a run (its run's proc), made with it and
 * freed with the run. */
struct proc_part {
	struct contain cg;     /* the process's own cgroup */
	unsigned fd_charge;    /* descriptors counted as its owner's (fdq.h) */
	bool want_stdin;       /* stdin was opened for writing before start */
	struct strbuf stdin_q; /* bytes not yet taken by the process */
	struct loop_watch stdin_w; /* write end of its stdin, or fd -1 */
	bool stdin_eof;		   /* close stdin once the queue is written */
	int kill_stage;		   /* 0, 1 (signalled), 2 (KILLed) */
	int64_t kill_at;
	/* Its leader died during its kill's grace while the rest of its tree
	 * lived on: the wait status, kept until the tree is gone. */
	bool leader_gone;
	int leader_wstatus;
	struct loop_timer timer; /* kill_at, or polls its cgroup for rmdir */
	struct reap_watch reap;	 /* its exit */
	struct execerr start;	 /* why it did not start its bash */
	void (*gone_cb)(void *arg); /* rmdir procs/NAME waiting */
	void *gone_arg;
};

/* Makes procs/NAME, not started yet. Returns 0, -EINVAL, -EEXIST,
 * -ENOENT (s is dying), -ENOSPC or -errno. */
int proc_new(struct sess *s, const char *name, struct run **out);
struct run *proc_by_name(struct sess *s, const char *name);
/* Starts p with its command; returns once it runs (0) or -errno. */
int proc_start(struct sess *s, struct run *p, const char *text, size_t len);
/* Signals p's processes; TERM escalates to KILL after the grace. */
int proc_signal(struct run *p, int sig);
/* A process not started yet gets a pipe for its stdin. */
void proc_want_stdin(struct run *p);
/* Queues bytes for p's stdin. -EPIPE once stdin is closed. */
int proc_write(struct run *p, const char *buf, size_t len);
/* Closes p's stdin once what is queued is written. */
void proc_eof(struct run *p);
/* Whether p waits for its stdin (procwait.c): a process of its cgroup
 * is blocked reading the pipe, none runs, and nothing is queued. */
bool proc_waiting_input(const struct run *p);
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
