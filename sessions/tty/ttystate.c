/*
 * ttystate.c - a session's terminal saved by an upgrade in place and
 * made again in the next program (tty.h: tty_save, tty_part_kind).
 *
 * Kept: the PTY master (the shell and what runs on it never notice), the
 * shell's pid (a child still: its exit is claimed again), the size, the
 * output run (runstate.h), the input not yet taken by the PTY and the
 * output not yet on the screen, expect and quiet, the recording, the
 * cgroup's name and the screen (termstate.c). Timers are not saved but
 * their deadlines are (monotonic). Without a master (a restart after a
 * crash, whose state holds no descriptor) the terminal is gone: what can
 * be read of it is kept (screen, scrollback, title, output, recording),
 * it is an exited one, and one line in the session's error file says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sessions/core/pattern.h"
#include "sessions/core/state.h"
#include "sessions/session/runstate.h"
#include "sessions/session/sess.h"
#include "sessions/tty/tty.h"

enum {
	K_STATE = 1,
	K_PID,
	K_EXIT,
	K_SIG,
	K_COLS,
	K_ROWS,
	K_MASTER,
	K_WQ,
	K_PEND,
	K_LAST_OUT,
	K_QUIET,
	K_EXPECT,
	K_EXPECT_MS,
	K_WAKE,
	K_GRACE,
	K_RESTART,
	K_HAS_CG,
	K_CG_LEADER,
	K_CG_SID,
	K_START_FD,
	K_START_WHY,
	K_READY,
	K_OUT = 32, /* objects: the output run, the recording, the screen */
	K_CAST,
	K_TERM,
};

enum { C_FD = 1, C_N, C_START, C_WALL, C_COLS, C_ROWS };

static void save_cast(const struct cast *c, struct state_w *w)
{
	state_open(w, K_CAST);
	state_put_fd(w, C_FD, c->fd);
	state_put_u64(w, C_N, c->n);
	state_put_i64(w, C_START, c->start_us);
	state_put_i64(w, C_WALL, c->wall_s);
	state_put_i64(w, C_COLS, c->cols);
	state_put_i64(w, C_ROWS, c->rows);
	state_close(w);
}

/* The fields of t but its objects. */
static void save_fields(const struct tty *t, struct state_w *w)
{
	state_put_u64(w, K_STATE, t->state);
	state_put_i64(w, K_PID, t->pid);
	state_put_i64(w, K_EXIT, t->exit_code);
	state_put_i64(w, K_SIG, t->sig);
	state_put_i64(w, K_COLS, t->cols);
	state_put_i64(w, K_ROWS, t->rows);
	state_put_fd(w, K_MASTER, t->master.fd);
	state_put(w, K_WQ, t->wq.p, t->wq.len);
	state_put(w, K_PEND, t->pend.p, t->pend.len);
	state_put_i64(w, K_LAST_OUT, t->last_out_ms);
	state_put_u64(w, K_QUIET, t->quiet_ms);
	state_put_u64(w, K_READY, t->ready_ms);
	state_put_str(w, K_EXPECT, t->expect);
	state_put_u64(w, K_EXPECT_MS, t->expect_ms);
	if (t->wake.armed)
		state_put_i64(w, K_WAKE, t->wake.when);
	if (t->grace.armed)
		state_put_i64(w, K_GRACE, t->grace.when);
	state_put_u64(w, K_RESTART, t->restart);
	state_put_u64(w, K_HAS_CG, t->has_cg);
	state_put_i64(w, K_CG_LEADER, t->cg.leader);
	state_put_i64(w, K_CG_SID, t->cg.sid);
	state_put_fd(w, K_START_FD, t->start.w.fd);
	state_put_str(w, K_START_WHY, t->start.why);
}

void tty_save(struct tty *t, struct state_w *w)
{
	state_open(w, TTY_PART_KEY);
	save_fields(t, w);
	if (t->out) {
		state_open(w, K_OUT);
		run_save_fields(t->out, w);
		state_close(w);
	}
	save_cast(&t->cast, w);
	if (t->term) {
		state_open(w, K_TERM);
		term_save(t->term, w);
		state_close(w);
	}
	state_close(w);
}

/* A descriptor handed over: never 0, 1 or 2, which a malformed state
 * could name (the terminal would read, and at its end close, the
 * daemon's own). */
static int handed_fd(const struct state_r *o, uint16_t key)
{
	int fd = state_get_fd(o, key);

	return fd > 2 ? fd : -1;
}

/* A number of o in [lo, hi], else dflt. */
static int64_t in_range(const struct state_r *o, uint16_t key, int64_t lo,
			int64_t hi, int64_t dflt)
{
	int64_t v = state_get_i64(o, key, dflt);

	return v < lo || v > hi ? dflt : v;
}

/* The size, within tty_parse_size's bounds (else 80x24). */
static void restore_size(struct tty *t, const struct state_r *o)
{
	t->cols = (int)in_range(o, K_COLS, TTY_SIZE_MIN, TTY_SIZE_MAX, 80);
	t->rows = (int)in_range(o, K_ROWS, TTY_SIZE_MIN, TTY_SIZE_MAX, 24);
	if ((int64_t)t->cols * t->rows > TTY_AREA_MAX) {
		t->cols = 80;
		t->rows = 24;
	}
}

/* The cgroup below its session's, made again (as make_cgroup in tty.c
 * does: after a crash the directory may be gone), with the shell that
 * runs in it. */
static void restore_cg(struct tty *t, const struct state_r *o)
{
	t->has_cg = state_get_u64(o, K_HAS_CG, 0) &&
		    contain_new_in(&t->cg, &t->s->cg, "tty") == 0;
	if (t->has_cg) {
		t->cg.leader = (pid_t)in_range(o, K_CG_LEADER, 0, INT32_MAX, 0);
		t->cg.sid = (pid_t)in_range(o, K_CG_SID, 0, INT32_MAX, 0);
	}
}

/* The numbers, the queues and expect. */
static void restore_fields(struct tty *t, const struct state_r *o)
{
	const void *p;
	size_t len;

	t->state = (enum tty_state)in_range(o, K_STATE, TTY_NONE, TTY_EXITED,
					    TTY_EXITED);
	/* only a running terminal's shell is still to be reaped */
	t->pid = t->state != TTY_RUNNING ?
			 0 :
			 (pid_t)in_range(o, K_PID, 0, INT32_MAX, 0);
	t->exit_code = (int)in_range(o, K_EXIT, INT32_MIN, INT32_MAX, 0);
	t->sig = (int)in_range(o, K_SIG, 0, 64, 0);
	restore_size(t, o);
	if (state_get(o, K_WQ, &p, &len))
		sb_add(&t->wq, p, len);
	if (state_get(o, K_PEND, &p, &len))
		sb_add(&t->pend, p, len);
	t->last_out_ms = state_get_i64(o, K_LAST_OUT, 0);
	t->quiet_ms = (uint64_t)in_range(o, K_QUIET, 0, 3600000, TTY_QUIET_MS);
	t->ready_ms = (uint64_t)in_range(o, K_READY, 0, 3600000, TTY_READY_MS);
	t->expect = state_get_str(o, K_EXPECT);
	if (t->expect && strlen(t->expect) > PATTERN_MAX) {
		free(t->expect);
		t->expect = NULL;
	}
	t->expect_ms = state_get_u64(o, K_EXPECT_MS, TTY_EXPECT_MS);
	t->restart = state_get_u64(o, K_RESTART, 0) != 0;
	restore_cg(t, o);
	/* read at the reaping (execerr.h): a child that has not exec'd yet
	 * may still say why it did not */
	t->start.w.fd = handed_fd(o, K_START_FD);
	t->start.w.arg = &t->start;
	state_get_buf(o, K_START_WHY, t->start.why, sizeof(t->start.why));
}

/* The output run, of t's session again. */
static int restore_out(struct tty *t, const struct state_r *o)
{
	struct state_r b;

	if (!state_obj(o, K_OUT, &b))
		return 0;
	t->out = run_restore_fields(&b);
	if (!t->out)
		return -ENOMEM;
	t->out->sess = t->s;
	t->out->is_tty = true;
	return 0;
}

/* The recording; without its descriptor, its file is opened again (the
 * records it has stay readable). */
static void restore_cast(struct tty *t, const struct state_r *o)
{
	struct cast *c = &t->cast;
	struct state_r b;
	char name[64];

	if (!state_obj(o, K_CAST, &b))
		return;
	c->fd = handed_fd(&b, C_FD);
	if (c->fd < 0 && t->out) {
		run_file(t->out, "cast", name, sizeof(name));
		c->fd = openat(t->s->dirfd, name, O_RDWR | O_CLOEXEC);
	}
	c->n = state_get_u64(&b, C_N, 0);
	c->start_us = state_get_i64(&b, C_START, 0);
	c->wall_s = state_get_i64(&b, C_WALL, 0);
	c->cols = (int)in_range(&b, C_COLS, 1, TTY_SIZE_MAX, t->cols);
	c->rows = (int)in_range(&b, C_ROWS, 1, TTY_SIZE_MAX, t->rows);
}

/* A terminal whose master did not come back (or that was saved running
 * with no output or shell): its shell got a hangup when the master
 * closed, and what is left in its cgroup is killed, as at any end of a
 * terminal's shell; it is an exited one now. */
static void gone(struct tty *t)
{
	/* by its cgroup only: a session id or pid saved may be another's */
	t->pid = t->cg.leader = t->cg.sid = 0;
	if (t->has_cg)
		contain_kill(&t->cg);
	if (t->master.fd >= 0)
		close(t->master.fd);
	t->master.fd = -1;
	t->state = TTY_EXITED;
	t->exit_code = 128 + SIGHUP;
	t->sig = SIGHUP;
	t->wq.len = 0;
	if (t->out)
		run_finish(t->out, t->exit_code, t->sig, END_ERROR);
	sess_error(t->s, "tty: its terminal was lost with the daemon (no "
			 "PTY kept); the screen, scrollback and output are "
			 "kept");
}

static int restore(struct sess *s, const struct state_r *o)
{
	struct tty *t = s->tty ? NULL : tty_of(s);
	struct state_r screen = { NULL, 0 };
	int rc;

	if (!t)
		return s->tty ? -EEXIST : -ENOMEM;
	restore_fields(t, o);
	rc = restore_out(t, o);
	t->master.fd = handed_fd(o, K_MASTER);
	if (t->state == TTY_RUNNING && (t->master.fd < 0 || !t->out || !t->pid))
		gone(t);
	else if (t->state != TTY_RUNNING && t->master.fd >= 0) {
		close(t->master.fd); /* only a live shell's is kept */
		t->master.fd = -1;
	}
	if (t->state != TTY_NONE && !t->out && rc == 0)
		t->state = TTY_NONE; /* no output: as if never started */
	restore_cast(t, o);
	state_obj(o, K_TERM, &screen);
	if (rc == 0)
		rc = tty_resume(t, &screen, state_get_i64(o, K_GRACE, 0),
				state_get_i64(o, K_WAKE, 0));
	if (rc < 0)
		tty_free(s);
	return rc;
}

static const struct sess_part_kind kind = { TTY_PART_KEY, restore };

/* Known from the program's start, before any restore (as part.h asks of
 * a kind; a later sess_part_kind_add of it changes nothing). */
__attribute__((constructor)) static void add_kind(void)
{
	sess_part_kind_add(&kind);
}

const struct sess_part_kind *tty_part_kind(void)
{
	return &kind;
}
