/*
 * run.h - one execution of a command in a session: its state machine,
 * its spooled output and its reports (status, exit, result.json).
 */
#ifndef SFS_RUN_H
#define SFS_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "sessions/core/list.h"
#include "sessions/core/loop.h"
#include "sessions/session/spool.h"

struct sess;
struct ctx;
struct ctx_exec;
struct proc_part;
struct run_opts;

enum run_state { RUN_QUEUED, RUN_RUNNING, RUN_DONE };
/* Which of its files a run has made, so that only those are unlinked. */
#define RUN_F_CMD    1u	 /* r<id>.cmd */
#define RUN_F_SPOOLS 2u	 /* r<id>.out, .err and .idx */
#define RUN_F_PRE    4u	 /* r<id>.pre */
#define RUN_F_OPT    8u	 /* r<id>.opt, its options for the driver */
#define RUN_F_IN     16u /* r<id>.in, its stdin */
/* How a finished run ended. */
enum run_end {
	END_NONE,
	END_EXITED,
	END_TIMEDOUT,
	END_KILLED,
	END_CANCELED,
	END_ERROR, /* a process that could not be started */
};

/* The exit_code of a run whose shell a crash of sessionfs took: not
 * known, and shown as "-" (null in result.json), never made up. */
#define RUN_EXIT_LOST (-1)

struct run {
	uint64_t id;	   /* object id; names its spool files r<id>.* */
	unsigned no;	   /* 1, 2, ... within its session */
	char *name;	   /* directory name under runs/ */
	struct sess *sess; /* NULL once the session is gone */
	int refs;
	enum run_state state;
	enum run_end end;
	int exit_code;		 /* valid when state is RUN_DONE */
	int sig;		 /* signal that ended it, or 0 */
	int start_err;		 /* errno when it could not start, or 0 */
	long pid;		 /* the shell that ran it, 0 before it starts */
	uint64_t timeout_ms;	 /* its own timeout, 0: the session's */
	bool has_timeout;	 /* timeout_ms was set for this run */
	uint64_t eff_timeout_ms; /* the timeout in force when it started */
	char *expect;	    /* the pattern written to its expect, or NULL */
	uint64_t expect_ms; /* and its timeout */
	int64_t queued_wall, started_wall, started_mono, ended_mono;
	int64_t ended_wall;
	int64_t deadline; /* monotonic ms when its timeout ends it, or 0 */
	bool has_cmd;	  /* its command is written (it runs only once) */
	unsigned files;	  /* RUN_F_* of the files it has in the session dir */
	uint64_t cmd_len;
	struct spool out, err;
	struct outidx all; /* output: the interleaving of out and err */
	struct loop_watch pipe_o, pipe_e; /* output fifos while running */
	struct loop_timer rest; /* their watch is off while it is armed */
	unsigned fifo_gen;	/* names them: f<gen>.o, f<gen>.e */
	struct list link;    /* session's run (or procs) list, oldest first */
	struct list qlink;   /* session's queue while queued */
	struct list waiters; /* parked filesystem requests */
	/* Its own env/, cwd and stdin (runopts.h), NULL: none. */
	struct run_opts *opts;

	/* A background process (procs/NAME) is a run started apart from the
	 * shell; what only it has is its part (proc.h), NULL in other runs. */
	bool is_proc;
	struct proc_part *proc;
	/* A terminal's output (tty.c) is a run that is never queued. */
	bool is_tty;

	/* An execution of a code context (contexts/NAME): its context
	 * (NULL once it is gone) and what it produced. */
	struct ctx *ctx;
	struct ctx_exec *cx;
	/* What its kind keeps beyond these fields (an execution's record),
	 * freed with the run; NULL: nothing. */
	void (*part_free)(struct run *r);
};

/* Called whenever a run gains output or changes state (set by fs/). */
extern void (*run_changed_hook)(struct run *r);

/* A new queued run whose command text (len bytes) goes to dirfd/r<id>.cmd.
 * Returns NULL and sets *err on failure. */
struct run *run_new(int dirfd, const char *text, size_t len, int *err);
/* A new run with no command yet (a named run made by mkdir). */
struct run *run_new_empty(void);
/* The run named name in a list of runs linked by their link, or NULL. */
struct run *run_find(struct list *head, const char *name);
/* Writes the command of an empty run. Returns 0 or -errno. */
int run_set_cmd(struct run *r, int dirfd, const char *text, size_t len);
void run_ref(struct run *r);
void run_unref(struct run *r);
bool run_active(const struct run *r);
const char *run_state_name(const struct run *r);
uint64_t run_duration_ms(const struct run *r);
/* Marks r done with this exit code and cause; notifies waiters. */
void run_finish(struct run *r, int exit_code, int sig, enum run_end end);
/* Name of r's spool file with that suffix ("cmd", "out", ...). */
void run_file(const struct run *r, const char *suffix, char *buf, size_t len);
/* Passes fn the name of each file of r that which (RUN_F_*) selects and
 * r has made, then forgets them. */
void run_forget_files(struct run *r, unsigned which,
		      void (*fn)(void *arg, const char *name), void *arg);

/* Reports, as malloc'd text; *len gets the length. NULL on ENOMEM. */
char *run_format_exit(const struct run *r, size_t *len);
char *run_format_status(const struct run *r, size_t *len);
/* result.json; reads up to cap bytes of stdout and stderr from dirfd.
 * NULL with errno when a spool file cannot be read (EMFILE, ENFILE, EIO)
 * or on ENOMEM. */
char *run_format_json(const struct run *r, int dirfd, const char *sess_name,
		      uint64_t cap, size_t *len);

/* A queued run's own timeout (runs/N/timeout). */
void run_set_timeout(struct run *r, uint64_t ms);

#endif
