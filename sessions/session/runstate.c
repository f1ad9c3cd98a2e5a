/*
 * runstate.c - the common fields of a run saved and made again
 * (runstate.h).
 */
#include <stdlib.h>
#include <string.h>
#include "sessions/core/objs.h"
#include "sessions/session/output.h"
#include "sessions/session/runopts.h"
#include "sessions/session/runstate.h"

enum {
	K_ID = 1,
	K_NO,
	K_NAME,
	K_STATE,
	K_END,
	K_EXIT,
	K_SIG,
	K_START_ERR,
	K_PID,
	K_TIMEOUT,
	K_HAS_TIMEOUT,
	K_EFF_TIMEOUT,
	K_QUEUED_WALL,
	K_STARTED_WALL,
	K_STARTED_MONO,
	K_ENDED_MONO,
	K_DEADLINE,
	K_HAS_CMD,
	K_FILES,
	K_CMD_LEN,
	K_FIFO_GEN,
	K_ENDED_WALL,
	K_PIPE_O,
	K_PIPE_E,
	K_OUT, /* objects: the spools */
	K_ERR,
	K_ALL,
	K_EXPECT,
	K_EXPECT_MS,
	K_OPTS, /* an object: its options (runopts.c) */
};

enum { S_FD = 1, S_SIZE, S_MAX, S_TRUNC, S_CUT, S_ERR, S_NREC, S_LAST };

static void save_spool(struct state_w *w, uint16_t key, const struct spool *sp)
{
	state_open(w, key);
	state_put_fd(w, S_FD, sp->fd);
	state_put_u64(w, S_SIZE, sp->size);
	state_put_u64(w, S_MAX, sp->max);
	state_put_u64(w, S_TRUNC, sp->truncated);
	state_put_u64(w, S_CUT, sp->cut);
	state_put_i64(w, S_ERR, sp->err);
	state_close(w);
}

static void restore_spool(const struct state_r *o, uint16_t key,
			  struct spool *sp)
{
	struct state_r b;

	if (!state_obj(o, key, &b))
		return;
	sp->fd = state_get_fd(&b, S_FD);
	sp->size = state_get_u64(&b, S_SIZE, 0);
	sp->max = state_get_u64(&b, S_MAX, 0);
	sp->truncated = state_get_u64(&b, S_TRUNC, 0) != 0;
	sp->cut = (enum spool_cut)state_get_u64(&b, S_CUT, 0);
	sp->err = (int)state_get_i64(&b, S_ERR, 0);
	spool_charge(sp);
}

static void save_index(struct state_w *w, const struct outidx *x)
{
	state_open(w, K_ALL);
	state_put_fd(w, S_FD, x->fd);
	state_put_u64(w, S_SIZE, x->size);
	state_put_u64(w, S_NREC, x->nrec);
	state_put(w, S_LAST, &x->last, sizeof(x->last));
	state_close(w);
}

static void restore_index(const struct state_r *o, struct outidx *x)
{
	struct state_r b;
	const void *p;
	size_t len;

	if (!state_obj(o, K_ALL, &b))
		return;
	x->fd = state_get_fd(&b, S_FD);
	x->size = state_get_u64(&b, S_SIZE, 0);
	x->nrec = state_get_u64(&b, S_NREC, 0);
	if (state_get(&b, S_LAST, &p, &len) && len == sizeof(x->last))
		memcpy(&x->last, p, len);
}

void run_save_fields(const struct run *r, struct state_w *w)
{
	state_put_u64(w, K_ID, r->id);
	state_put_u64(w, K_NO, r->no);
	state_put_str(w, K_NAME, r->name);
	state_put_u64(w, K_STATE, r->state);
	state_put_u64(w, K_END, r->end);
	state_put_i64(w, K_EXIT, r->exit_code);
	state_put_i64(w, K_SIG, r->sig);
	state_put_i64(w, K_START_ERR, r->start_err);
	state_put_i64(w, K_PID, r->pid);
	state_put_u64(w, K_TIMEOUT, r->timeout_ms);
	state_put_u64(w, K_HAS_TIMEOUT, r->has_timeout);
	state_put_u64(w, K_EFF_TIMEOUT, r->eff_timeout_ms);
	state_put_i64(w, K_QUEUED_WALL, r->queued_wall);
	state_put_i64(w, K_STARTED_WALL, r->started_wall);
	state_put_i64(w, K_STARTED_MONO, r->started_mono);
	state_put_i64(w, K_ENDED_MONO, r->ended_mono);
	state_put_i64(w, K_DEADLINE, r->deadline);
	state_put_u64(w, K_HAS_CMD, r->has_cmd);
	state_put_u64(w, K_FILES, r->files);
	state_put_u64(w, K_CMD_LEN, r->cmd_len);
	state_put_u64(w, K_FIFO_GEN, r->fifo_gen);
	state_put_i64(w, K_ENDED_WALL, r->ended_wall);
	state_put_fd(w, K_PIPE_O, r->pipe_o.fd);
	state_put_fd(w, K_PIPE_E, r->pipe_e.fd);
	save_spool(w, K_OUT, &r->out);
	save_spool(w, K_ERR, &r->err);
	save_index(w, &r->all);
	state_put_str(w, K_EXPECT, r->expect);
	state_put_u64(w, K_EXPECT_MS, r->expect_ms);
	runopts_save(r, w, K_OPTS);
}

/* The numbers and times of o into r. */
static void restore_numbers(const struct state_r *o, struct run *r)
{
	r->no = (unsigned)state_get_u64(o, K_NO, 0);
	r->state = (enum run_state)state_get_u64(o, K_STATE, RUN_DONE);
	if (r->state > RUN_DONE)
		r->state = RUN_DONE;
	r->end = (enum run_end)state_get_u64(o, K_END, END_ERROR);
	if (r->end > END_ERROR)
		r->end = END_ERROR;
	r->exit_code = (int)state_get_i64(o, K_EXIT, 0);
	r->sig = (int)state_get_i64(o, K_SIG, 0);
	r->start_err = (int)state_get_i64(o, K_START_ERR, 0);
	r->pid = (long)state_get_i64(o, K_PID, 0);
	r->timeout_ms = state_get_u64(o, K_TIMEOUT, 0);
	r->has_timeout = state_get_u64(o, K_HAS_TIMEOUT, 0) != 0;
	r->eff_timeout_ms = state_get_u64(o, K_EFF_TIMEOUT, 0);
	r->queued_wall = state_get_i64(o, K_QUEUED_WALL, 0);
	r->started_wall = state_get_i64(o, K_STARTED_WALL, 0);
	r->started_mono = state_get_i64(o, K_STARTED_MONO, 0);
	r->ended_mono = state_get_i64(o, K_ENDED_MONO, 0);
	r->deadline = state_get_i64(o, K_DEADLINE, 0);
	r->has_cmd = state_get_u64(o, K_HAS_CMD, 0) != 0;
	r->files = (unsigned)state_get_u64(o, K_FILES, 0);
	r->cmd_len = state_get_u64(o, K_CMD_LEN, 0);
	r->fifo_gen = (unsigned)state_get_u64(o, K_FIFO_GEN, 0);
	r->ended_wall = state_get_i64(o, K_ENDED_WALL, 0);
	r->expect_ms = state_get_u64(o, K_EXPECT_MS, 0);
}

struct run *run_restore_fields(const struct state_r *o)
{
	struct run *r;
	int fd;

	objs_reuse(state_get_u64(o, K_ID, 0));
	r = run_new_empty();
	if (!r)
		return NULL;
	r->name = state_get_str(o, K_NAME);
	if (!r->name && !(r->name = strdup("?"))) {
		run_unref(r);
		return NULL;
	}
	restore_numbers(o, r);
	r->expect = state_get_str(o, K_EXPECT);
	runopts_restore(r, o, K_OPTS);
	restore_spool(o, K_OUT, &r->out);
	restore_spool(o, K_ERR, &r->err);
	restore_index(o, &r->all);
	if ((fd = state_get_fd(o, K_PIPE_O)) >= 0)
		output_watch(r, &r->pipe_o, fd);
	if ((fd = state_get_fd(o, K_PIPE_E)) >= 0)
		output_watch(r, &r->pipe_e, fd);
	return r;
}
