/*
 * tty.h - a session's terminal (tty/): an interactive shell on a PTY,
 * started at first use, apart from the session's command shell. What it
 * prints is spooled like a run's output (its struct run holds the spool
 * and the requests waiting on it), fed to the screen (term.h) and
 * recorded (cast.h).
 */
#ifndef SFS_TTY_H
#define SFS_TTY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/tty/cast.h"
#include "sessions/core/contain.h"
#include "sessions/core/execerr.h"
#include "sessions/tty/keys.h"
#include "sessions/core/loop.h"
#include "sessions/core/reap.h"
#include "sessions/core/strbuf.h"
#include "sessions/session/part.h"
#include "sessions/tty/term.h"

struct sess;
struct run;

enum tty_state { TTY_NONE, TTY_RUNNING, TTY_EXITED };

/* each dimension of the size, and its area (cells) */
#define TTY_SIZE_MIN	    2
#define TTY_SIZE_MAX	    1000
#define TTY_AREA_MAX	    100000
#define TTY_QUIET_MS	    200
#define TTY_READY_MS	    20 /* ready's pause of the output */
#define TTY_READY_POLL_MS   5  /* a ready waiter's look at the processes */
#define TTY_READY_POLL_MAX_MS 50 /* and its longest wait between looks */
#define TTY_EXPECT_MS	    10000
#define TTY_INPUT_QUEUE_MAX (1 << 20)
#define TTY_RETRY_MS	    100 /* a look for the slave after a hangup */
#define TTY_SETTLE_MS	    10	/* the output's pause before held text is fed */

struct tty {
	struct sess *s;
	enum tty_state state;
	pid_t pid;
	int exit_code, sig;
	int cols, rows;
	struct run *out; /* the output spool and its waiters (NULL: none) */
	struct term *term;
	struct cast cast;
	struct contain cg;
	bool has_cg;
	struct loop_watch master; /* fd -1 when none */
	bool watched;  /* master in the loop (not while the slave is closed) */
	uint32_t mask; /* the events it is watched for */
	struct strbuf wq;	  /* bytes the PTY has not taken yet */
	struct strbuf pend;	  /* printed, not yet on the screen */
	struct loop_timer more;	  /* puts more of pend on the screen */
	struct loop_timer retry;  /* looks for the slave after a hangup */
	struct loop_timer settle; /* feeds the screen what it held */
	struct reap_watch reap;
	struct execerr start; /* why its shell did not start */
	int64_t last_out_ms; /* monotonic, the latest output (or start) */
	int64_t last_in_ms;  /* and the latest input (typed or answered) */
	uint64_t quiet_ms;
	uint64_t ready_ms;
	char *expect;		 /* the pattern for the next read of expect */
	uint64_t expect_ms;	 /* and its timeout */
	struct loop_timer wake;	 /* a waiter's deadline */
	struct loop_timer grace; /* a kill's escalation to KILL */
	bool restart;		 /* start anew once the shell is reaped */
	struct sess_part part;	 /* in its session's parts (ttypart.c) */
};

/* s's terminal, made (with no process) if it has none; NULL on ENOMEM. */
struct tty *tty_of(struct sess *s);
/* Starts the shell unless it runs. Returns 0 or -errno. */
int tty_start(struct tty *t);
/* Typed bytes, and keys; -EAGAIN when the PTY is 1 MiB behind (the
 * output's waiters are woken when it has taken some). */
int tty_input(struct tty *t, const char *buf, size_t len);
int tty_keys(struct tty *t, const struct keys_seq *seq);
/* "COLS ROWS" or COLSxROWS into *cols and *rows: 0, or -EINVAL when it
 * is not that or out of bounds (each TTY_SIZE_MIN..TTY_SIZE_MAX, at most
 * TTY_AREA_MAX cells). */
int tty_parse_size(const char *p, size_t len, int *cols, int *rows);
/* The size (the program gets SIGWINCH); the next start's if none runs. */
void tty_resize(struct tty *t, int cols, int rows);
/* sig to the terminal's processes (TERM escalates to KILL after the
 * grace). Returns 0 or -ESRCH when none runs. */
int tty_kill(struct tty *t, int sig);
/* A fresh shell: the running one is killed first. */
int tty_restart(struct tty *t);
/* The loop should look at the waiters again by when (monotonic ms). */
void tty_wake_at(struct tty *t, int64_t when);
/* The status file's text (t may be NULL). */
char *tty_status(const struct tty *t, size_t *len);
/* Whether the terminal's foreground process group is blocked reading
 * the terminal, none of it running, and no typed byte is still queued
 * for the PTY (ttywait.c, from /proc: sessions/core/inwait.h). */
bool tty_waiting_input(const struct tty *t);

/* For the terminal as a part of its session (ttypart.c): the session's
 * deletion hangs it up; whether its shell is still to be reaped; its
 * end. */
void tty_hangup(struct tty *t);
bool tty_alive(const struct tty *t);
void tty_free(struct sess *s);
/* What its session asks of a terminal (part.h). */
extern const struct sess_part_ops tty_part_ops;

/* An upgrade in place (ttystate.c). tty_save writes t as one object of
 * the terminal's kind (key TTY_PART_KEY), its PTY master and files as
 * descriptors; tty_part_kind is the kind whose restore makes it again
 * (the fs layer registers it before restoring). tty_resume, for that
 * restore, once t's fields are set: makes its screen from screen (what
 * term_save wrote), watches its master, claims its shell's exit, arms
 * its kill's escalation and its waiters' wake again (0: none). Returns
 * 0 or -ENOMEM. */
#define TTY_PART_KEY 0x100
void tty_save(struct tty *t, struct state_w *w);
const struct sess_part_kind *tty_part_kind(void);
int tty_resume(struct tty *t, const struct state_r *screen, int64_t grace_at,
	       int64_t wake_at);

#endif
