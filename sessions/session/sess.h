/*
 * sess.h - a session and the API of the session layer: the table and
 * life of sessions (sess.c, table.c), their queue of runs (runs.c), their
 * shell (driver.c), environment and cwd (env.c), kills and timeouts
 * (kill.c), background processes (proc.h), refusals (errlog.h) and its
 * parts, a terminal and contexts, which it knows by their ops (part.h).
 */
#ifndef SFS_SESS_H
#define SFS_SESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/contain.h"
#include "sessions/core/envmap.h"
#include "sessions/session/errlog.h"
#include "sessions/core/list.h"
#include "sessions/core/loop.h"
#include "sessions/core/names.h"
#include "sessions/session/part.h"
#include "sessions/session/proc.h"
#include "sessions/core/reap.h"
#include "sessions/session/run.h"
#include "sessions/core/strbuf.h"

struct tty;

struct sess {
	uint64_t id; /* object id */
	char name[NAME_MAX_LEN + 1];
	struct list link;
	struct sess *name_next; /* the next in its bucket of names (table.c) */
	int dirfd;		/* this session's spool directory */
	char dir[4096];
	char *cwd;
	struct envmap env;	/* exported variables, as users see them */
	struct envmap pend_set; /* changes not yet sent to the shell */
	struct envmap pend_unset;
	bool pend_cwd;
	uint64_t timeout_ms;
	char *expect; /* the pattern written to its expect, or NULL */
	uint64_t expect_ms;
	uid_t uid;
	gid_t gid;
	int64_t created_wall;

	pid_t pid; /* the shell, 0 when none */
	struct reap_watch shell_reap;
	bool shell_idle; /* it is SCHED_IDLE: it has no command to run */
	int ctl_fd;
	uint64_t run_key; /* the latest run's key (sessions/session/shell.h) */
	bool spoke;	  /* the shell has sent a report of the driver's */
	/* The read ends of the fifos f<gen>.o and f<gen>.e for the next run,
	 * made while the shell is busy with the last one (-1: not made). */
	struct {
		unsigned gen;
		int o, e;
	} fifo;
	/* Chores left for a quiet moment (chores.c): names to unlink,
	 * NUL-terminated one after another, and the next fifos. */
	struct strbuf trash;
	bool has_chores;
	struct list chores_link;
	struct loop_watch res;
	struct strbuf rbuf;

	bool env_pending; /* a run ended; its variables are coming */

	struct run *active;
	struct list queue;		 /* runs waiting, in arrival order */
	struct list runs;		 /* every run kept, oldest first */
	unsigned next_no, nruns, nnamed; /* numbered, named runs kept */
	struct list procs;		 /* background processes (procs/NAME) */
	unsigned nprocs;
	struct list ctxs; /* code contexts (contexts/NAME) */
	unsigned nctxs;

	struct errlog errs;
	struct tty *tty;   /* its terminal (tty/), made at first use */
	struct list parts; /* its terminal and contexts (part.h) */

	struct contain cg;
	bool dying, hard_killed, is_default;
	int64_t kill_deadline; /* monotonic ms, while dying */
	int kill_stage;	       /* the active run's kill: 0 none, 1 signalled,
				* 2 KILLed, waiting for the shell */
	int64_t kill_at;       /* when the kill escalates */
	int64_t kill_began;
	struct loop_timer run_timer;   /* the active run's timeout or kill */
	struct loop_timer dying_timer; /* polls a dying session's end */
	bool reset;		       /* restart the shell once it is idle */
	int64_t fork_after; /* no fork before (its shell did not answer one) */
	void (*gone_cb)(void *arg);
	void *gone_arg;
};

/* Starts the session layer: runtime directory, containment, timers;
 * restoring (an upgrade, a recovery), the first two were taken over by
 * sstate_restore_dirs (sstate.h). */
int sess_init(bool restoring);
/* Called at the loop's quiet time after the layer's own chores (set by
 * fs/: the checkpoint): true when it did something. */
extern bool (*sess_quiet_hook)(void);
/* Removes this instance's runtime directory and cgroup (after
 * sess_shutdown has ended every session). */
void sess_fini(void);
/* A session with nothing yet: its id (an object of kind), no shell,
 * empty lists; for sess.c and a restore (sstate.c). NULL on ENOMEM. */
struct sess *sess_blank(enum obj_kind kind);
/* Whether uid may have one more session (mkdir, clone, a fork): 0,
 * -EACCES or -EDQUOT. */
int sess_may_create(uid_t uid);
/* Creates a session. Returns 0 or -EINVAL, -EEXIST, -ENOSPC, -errno. */
int sess_create(const char *name, uid_t uid, gid_t gid, struct sess **out);
/* Makes session name, of uid and gid, a fork of src (fork.c): its shell
 * a fork of src's, its variables, cwd and timeout src's. Only src's
 * owner may (-EPERM), between runs (-EBUSY); else as sess_may_create and
 * sess_create. A refusal is said in src's error. */
int sess_fork(struct sess *src, const char *name, uid_t uid, gid_t gid,
	      struct sess **out);
/* Makes the next session of made's owner ahead, its shell started,
 * soon after made (just created by a mkdir) has its first run going:
 * sess_create takes it. The one made ahead for another owner is ended. */
void sess_make_ahead(const struct sess *made);
/* The id of the session made ahead (0: none): an upgrade in place does
 * not carry it over, and the next program removes what it left. */
uint64_t sess_ahead_id(void);
struct sess *sess_find(const char *name);
struct sess *sess_get(uint64_t id);
/* Iteration over sessions in creation order. */
struct sess *sess_first(void);
struct sess *sess_next(struct sess *s);
unsigned sess_count(void);
/* Deletes s: ends its processes (TERM, grace, KILL), then calls cb(arg).
 * Returns -EBUSY for the default session. */
int sess_delete(struct sess *s, void (*cb)(void *), void *arg);
/* Ends every session, then calls cb(arg). */
void sess_shutdown(void (*cb)(void *), void *arg);

/* Queues a run of text (len bytes). Returns the run or NULL (*err). A
 * run whose command could not be kept is returned ended, state error,
 * with its errno in start_err (and *err). */
struct run *sess_submit(struct sess *s, const char *text, size_t len, int *err);
/* A named run (mkdir runs/NAME): made now, queued when its cmd is
 * written. Returns 0, -EINVAL or -EEXIST. */
int sess_new_run(struct sess *s, const char *name, struct run **out);
/* Queues a run made by sess_new_run with its command. -EBUSY if it has
 * one already. */
int sess_queue_run(struct sess *s, struct run *r, const char *text, size_t len);
/* Removes a finished run from the history. -EBUSY while it is active. */
int sess_remove_run(struct sess *s, struct run *r);
/* Ends the active run's processes with sig (escalating to KILL after the
 * grace period); end says why. Returns 0, or -ESRCH with no run (then
 * the session's processes but its shell get sig, and KILL after the
 * grace: background jobs of earlier runs). */
int sess_kill_run(struct sess *s, int sig, enum run_end end);
/* The writer of r's cmd was interrupted (Ctrl-C): a queued r is
 * canceled, a running one killed with SIGINT (then KILL after the
 * grace); both exit 130. -ESRCH when r is over. */
int sess_interrupt_run(struct sess *s, struct run *r);
/* A fresh shell with the same cwd and exported variables. */
void sess_reset(struct sess *s);
/* The newest run, or NULL. */
struct run *sess_latest(struct sess *s);
struct run *sess_run_by_name(struct sess *s, const char *name);

/* Environment and cwd, applied to the shell before its next run. */
int sess_setenv(struct sess *s, const char *name, const char *val, size_t len);
int sess_unsetenv(struct sess *s, const char *name);
int sess_chdir(struct sess *s, const char *path);
/* What any variable or cwd written must be (a run's options too): a
 * valid name and a value without NUL (else -EINVAL and an error line);
 * path made absolute against s's cwd into *abs (malloc'd), checked for
 * form only (-ENAMETOOLONG, an error line that names it as what). */
int sess_env_check(struct sess *s, const char *name, const char *val,
		   size_t len);
int sess_cwd_abs(struct sess *s, const char *path, const char *what,
		 char **abs);

/* Ends every run and process of every session, then calls cb(arg). */
void sess_killall(void (*cb)(void *), void *arg);

/* The sandbox-wide variables (root env/): set or unset in every session,
 * present and future. */
const struct envmap *sess_root_env(void);
int sess_root_setenv(const char *name, const char *val, size_t len);
int sess_root_unsetenv(const char *name);

/* Unlinks the file name of s's spool directory soon, when no request
 * waits (s is a struct sess *; the signature suits run_forget_files). */
void sess_trash(void *s, const char *name);

/* Someone waits for s's variables: the shell must not linger as
 * SCHED_IDLE while it reports them. */
void sess_hurry_env(struct sess *s);

/* Called when a session's variables are known again (set by fs/). */
extern void (*sess_env_ready_hook)(struct sess *s);

/* The session's timeout for runs that set none (fs/ timeout, ctl). */
void sess_set_timeout(struct sess *s, uint64_t ms);
/* Makes s the default session: rmdir refuses it (EBUSY). */
void sess_set_default(struct sess *s);

#endif
