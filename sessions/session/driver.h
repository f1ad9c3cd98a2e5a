/*
 * driver.h - a session's shell as the session layer drives it: started
 * when a run needs it, handed runs one at a time, lowered to SCHED_IDLE
 * between them, its reports read, its death noticed (reset and the
 * variables' hurry are in sess.h).
 */
#ifndef SFS_DRIVER_H
#define SFS_DRIVER_H

#include <stdbool.h>
#include <sys/types.h>

struct sess;
struct run;

/* ended(s, code, sig): the active run of s ended, reported by its shell
 * with status code, or with the shell's death (sig, or 0). ready(s): the
 * shell may take the next run. Both are the run queue's (runs.c). */
void driver_init(void (*ended)(struct sess *s, int code, int sig),
		 void (*ready)(struct sess *s));
/* Hands r to s's shell (started first when there is none) and makes it
 * the active run. Returns 0 or -errno; r is active either way. */
int driver_start(struct sess *s, struct run *r);
/* Starts the shell of s now (driver_start starts one when s has none);
 * fresh: s is a new session, nothing written to its env/ or cwd (see
 * tmpl.h). Returns 0 or -errno. */
int driver_spawn(struct sess *s, bool fresh);
/* Makes pid, started with s's pipes (s->ctl_fd, s->res.fd), the shell
 * of s: its reports read, its exit watched. Returns 0 or -errno. */
int driver_take(struct sess *s, pid_t pid);
/* Takes the reports that s's shell has sent (sessions/session/fork.c
 * needs the latest run's variables now). */
void driver_read(struct sess *s);
/* Lowers s's shell to SCHED_IDLE (idle) or raises it back. */
void driver_sched(struct sess *s, bool idle);
/* Lets go of the idle shell: the next run starts a new one from the
 * cwd and variables of the last report. */
void driver_retire(struct sess *s);
/* How many shells died during or between runs, each to be replaced by a
 * new one at the next run (a retired shell or a dying session's is not
 * counted). */
unsigned long driver_shells_restarted(void);

/* An upgrade in place: the shell of s (pid and pipes restored) is
 * watched again: its exit and its reports. */
void driver_adopt(struct sess *s);

#endif
