/*
 * ctxstate.c - a code context as state (sessions/core/state.h), for an
 * upgrade in place: its settings, variables and executions, and its
 * interpreter's pid and descriptors with what the driver said that is
 * not parsed yet, so that the next program drives the same interpreter
 * (same pid, same variables of the user's code) and an execution in
 * progress ends there with its real result. Every object keeps its id.
 *
 * Without the descriptors (a restart after a crash, or one not handed
 * over) the interpreter cannot be driven again: its finished executions
 * stay, the running one fails, the queued ones are canceled, and the
 * next code starts a fresh interpreter, as in a new context; one line in
 * the session's error file says so.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/objs.h"
#include "sessions/ctx/ctx.h"
#include "sessions/ctx/ctxint.h"
#include "sessions/session/fdq.h"
#include "sessions/session/output.h"
#include "sessions/session/runstate.h"
#include "sessions/session/sess.h"

enum {
	C_ID = 1,
	C_NAME,
	C_LANG,
	C_LOCKED,
	C_CWD,
	C_TIMEOUT,
	C_STATE,
	C_WHY,
	C_START_ERR,
	C_STARTED_WALL,
	C_IDLE_SAID,
	C_GEN,
	C_COUNT,
	C_INTERRUPTED,
	C_KEY,
	C_RESTART,
	C_READY,
	C_INTR_PENDING,
	C_NEXT_NO,
	C_KILL_STAGE,
	C_BY_CTL,
	C_KILL_AT,
	C_GOING,
	C_PID,
	C_FD_CHARGE,
	C_REQ_FD,
	C_ANS_FD,
	C_OUT_FD,
	C_ERR_FD,
	C_IDLE_O,
	C_IDLE_E,
	C_ABUF,
	C_VAR = 64, /* objects: a variable each, then an execution each */
	C_EXEC,
};

enum { V_ID = 1, V_NAME, V_VALUE };
enum {
	X_REC = RUNSTATE_KEY_MAX, /* an execution's record, an object */
	X_EMPTIED,		  /* saved without its texts (a checkpoint) */
};

/* The formats and error texts a checkpoint keeps of a context. */
#define CTX_CKPT_BYTES (1u << 20)

static void save_settings(const struct ctx *c, struct state_w *w)
{
	state_put_u64(w, C_ID, c->id);
	state_put_str(w, C_NAME, c->name);
	state_put_u64(w, C_LANG, c->lang);
	state_put_u64(w, C_LOCKED, c->locked);
	state_put_str(w, C_CWD, c->cwd);
	state_put_u64(w, C_TIMEOUT, c->timeout_ms);
	state_put_u64(w, C_STATE, c->state);
	state_put_str(w, C_WHY, c->why);
	state_put_i64(w, C_START_ERR, c->start_err);
	state_put_i64(w, C_STARTED_WALL, c->started_wall);
	state_put_u64(w, C_IDLE_SAID, c->idle_said);
	state_put_u64(w, C_GEN, c->gen);
	state_put_u64(w, C_COUNT, c->count);
	state_put_u64(w, C_INTERRUPTED, c->interrupted);
	state_put_str(w, C_KEY, c->key);
	state_put_u64(w, C_RESTART, c->restart);
	state_put_u64(w, C_READY, c->ready);
	state_put_u64(w, C_INTR_PENDING, c->intr_pending);
	state_put_u64(w, C_NEXT_NO, c->next_no);
	state_put_u64(w, C_KILL_STAGE, (uint64_t)c->kill_stage);
	state_put_u64(w, C_BY_CTL, c->by_ctl);
	state_put_i64(w, C_KILL_AT, c->kill_at);
	state_put_u64(w, C_GOING, c->gone_cb != NULL);
}

/* The interpreter: its pid and the daemon's ends of its fifos and pipes. */
static void save_live(const struct ctx *c, struct state_w *w)
{
	state_put_i64(w, C_PID, c->pid);
	state_put_u64(w, C_FD_CHARGE, c->fd_charge);
	state_put_fd(w, C_REQ_FD, c->req_fd);
	state_put_fd(w, C_ANS_FD, c->ans.fd);
	state_put_fd(w, C_OUT_FD, c->out_fd);
	state_put_fd(w, C_ERR_FD, c->err_fd);
	state_put_fd(w, C_IDLE_O, c->idle_o.fd);
	state_put_fd(w, C_IDLE_E, c->idle_e.fd);
	/* a checkpoint's restart has no interpreter to finish it for */
	if (c->abuf.len && !w->no_fds)
		state_put(w, C_ABUF, c->abuf.p, c->abuf.len);
}

/* The oldest execution whose record a checkpoint keeps whole, those after
 * it too: the newest ones within CTX_CKPT_BYTES, so that writing one
 * (every SSTATE_CKPT_MS while things change) costs little; an upgrade
 * keeps all. &c->execs: none. */
static struct list *whole_from(struct ctx *c, const struct state_w *w)
{
	struct list *l = c->execs.prev;
	size_t sum = 0;

	if (!w->no_fds)
		return c->execs.next;
	for (; l != &c->execs; l = l->prev) {
		sum += ctx_exec_bytes(list_entry(l, struct run, link)->cx);
		if (sum > CTX_CKPT_BYTES)
			return l->next;
	}
	return c->execs.next;
}

static void save_exec(struct run *r, struct state_w *w, bool whole)
{
	state_open(w, C_EXEC);
	run_save_fields(r, w);
	if (!whole)
		state_put_u64(w, X_EMPTIED, 1);
	state_open(w, X_REC);
	ctx_exec_save(r->cx, w, whole);
	state_close(w);
	state_close(w);
}

void ctx_save(struct ctx *c, struct state_w *w)
{
	struct list *whole = whole_from(c, w);
	bool past = false;

	state_open(w, CTX_PART_KEY);
	save_settings(c, w);
	save_live(c, w);
	for (size_t i = 0; i < c->env.n; i++) {
		state_open(w, C_VAR);
		state_put_u64(w, V_ID, c->env.v[i]->id);
		state_put_str(w, V_NAME, c->env.v[i]->name);
		state_put(w, V_VALUE, c->env.v[i]->value, c->env.v[i]->len);
		state_close(w);
	}
	for (struct list *l = c->execs.next; l != &c->execs; l = l->next) {
		past = past || l == whole;
		save_exec(list_entry(l, struct run, link), w, past);
	}
	state_close(w);
}

/* Whether pid is a child of this program not reaped yet (an upgrade
 * keeps them, a restart after a crash does not): only then is it
 * certainly the interpreter, whose pid no other process can have. */
static bool our_child(pid_t pid)
{
	siginfo_t si;

	return pid > 0 &&
	       waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* The next objs_add gives id, unless an object has it already (a state
 * that names one id twice): then a fresh one. */
static void reuse(uint64_t id)
{
	if (objs_kind(id) == OBJ_NONE)
		objs_reuse(id);
}

static uint64_t u64_at_most(const struct state_r *o, uint16_t key,
			    uint64_t dflt, uint64_t max)
{
	uint64_t v = state_get_u64(o, key, dflt);

	return v > max ? max : v;
}

static void restore_settings(struct ctx *c, const struct state_r *o)
{
	char *key = state_get_str(o, C_KEY);
	int64_t err = state_get_i64(o, C_START_ERR, EIO);

	c->lang = (enum ctx_lang)u64_at_most(o, C_LANG, CTX_PYTHON,
					     CTX_TYPESCRIPT);
	c->locked = state_get_u64(o, C_LOCKED, 0) != 0;
	c->timeout_ms = u64_at_most(o, C_TIMEOUT, c->timeout_ms,
				    NAME_TIMEOUT_MAX_MS);
	c->state = (enum ctx_state)u64_at_most(o, C_STATE, CTX_IDLE, CTX_DEAD);
	c->why = state_get_str(o, C_WHY);
	c->start_err = err > 0 && err < 4096 ? (int)err : EIO;
	c->started_wall = state_get_i64(o, C_STARTED_WALL, 0);
	c->idle_said = state_get_u64(o, C_IDLE_SAID, 0) != 0;
	c->gen = (unsigned)u64_at_most(o, C_GEN, 0, UINT_MAX);
	c->count = (unsigned)u64_at_most(o, C_COUNT, 0, UINT_MAX);
	c->interrupted = state_get_u64(o, C_INTERRUPTED, 0) != 0;
	if (key && strlen(key) == CTX_KEY_LEN)
		memcpy(c->key, key, CTX_KEY_LEN + 1);
	free(key);
	c->restart = state_get_u64(o, C_RESTART, 0) != 0;
	c->ready = state_get_u64(o, C_READY, 0) != 0;
	c->intr_pending = state_get_u64(o, C_INTR_PENDING, 0) != 0;
	c->next_no = (unsigned)u64_at_most(o, C_NEXT_NO, 0, UINT_MAX);
	c->kill_stage = (int)u64_at_most(o, C_KILL_STAGE, 0, 2);
	c->by_ctl = state_get_u64(o, C_BY_CTL, 0) != 0;
	c->kill_at = state_get_i64(o, C_KILL_AT, 0);
	/* rmdir was waiting: the kernel sends it again, and till then the
	 * interpreter's end (it was killed) is no news for the error file */
	if (state_get_u64(o, C_GOING, 0) && !c->why)
		c->why = strdup("the context is being removed");
}

/* Its variables with their ids: env/NAME keeps its inode. */
static int restore_env(struct ctx *c, const struct state_r *o)
{
	struct state_r v;
	size_t pos = 0, len;
	uint16_t key;
	const void *val;
	int rc = 0;

	while (rc == 0 && state_next(o, &pos, &key, &v) == 1) {
		char *name = key == C_VAR ? state_get_str(&v, V_NAME) : NULL;

		if (name && name_env_valid(name) && !envmap_get(&c->env, name) &&
		    state_get(&v, V_VALUE, &val, &len) &&
		    name_env_value_valid(val, len)) {
			reuse(state_get_u64(&v, V_ID, 0));
			rc = envmap_set(&c->env, name, val, len);
		}
		free(name);
	}
	return rc;
}

/* The context of o, attached to s, with its settings but no executions
 * and no interpreter yet. */
static int restore_ctx(struct sess *s, const struct state_r *o,
		       struct ctx **out)
{
	char *name = state_get_str(o, C_NAME);
	struct ctx *c = NULL;
	int rc = -EINVAL;

	if (!name || !name_valid(name) || ctx_find(s, name))
		goto out;
	reuse(state_get_u64(o, C_ID, 0));
	rc = -ENOMEM;
	c = ctx_alloc(s, name);
	if (!c)
		goto out;
	restore_settings(c, o);
	c->cwd = state_get_str(o, C_CWD);
	if (c->cwd && (c->cwd[0] != '/' || strlen(c->cwd) >= PATH_MAX)) {
		free(c->cwd);
		c->cwd = NULL;
	}
	if ((!c->cwd && !(c->cwd = strdup(s->cwd))) || restore_env(c, o) < 0)
		goto out;
	/* without its cgroup, the session's id finds its processes */
	if ((rc = ctx_contain(c)) < 0)
		log_msg(LOG_WARNING, "session %s: contexts/%s: its cgroup: %s",
			s->name, c->name, strerror(-rc));
	rc = 0;
	ctx_attach(c);
	*out = c;
out:
	if (rc < 0 && c)
		ctx_discard(c);
	free(name);
	return rc;
}

/* Ends r, which cannot go on: not started (canceled) or its interpreter
 * lost (an error), as ctxrun.c's fail_exec. */
static void lose_exec(struct ctx *c, struct run *r, const char *why)
{
	bool queued = r->state == RUN_QUEUED;

	if (queued)
		list_del(&r->qlink);
	output_close(r, &r->pipe_o);
	output_close(r, &r->pipe_e);
	ctx_fail_record(c, r, queued ? "Canceled" : "ContextLost", why);
	r->cx->count = c->count;
	r->cx->done = true;
	r->start_err = queued ? 0 : EIO;
	run_finish(r, 1, 0, queued ? END_CANCELED : END_ERROR);
}

/* A result gets its saved id again (ctx_exec_restore leaves it in id). */
static uint64_t res_reuse(struct ctx_result *res)
{
	reuse(res->id);
	return objs_add(OBJ_CTXRES, res);
}

static const struct ctx_ids res_ids = { res_reuse, objs_del };

/* r's record from o; one that cannot be read is said, and r keeps its
 * output with an error for a record. */
static void restore_record(struct ctx *c, struct run *r,
			   const struct state_r *o)
{
	struct state_r rec = { 0 };
	int rc;

	state_obj(o, X_REC, &rec);
	rc = ctx_exec_restore(r->cx, &rec, &res_ids);
	for (size_t i = 0; i < r->cx->nres; i++)
		r->cx->res[i]->owner = r; /* results/N finds its execution */
	if (rc == 0)
		return;
	ctx_exec_free(r->cx, objs_del);
	ctx_exec_fail(r->cx, "StateLost",
		      "the record of this execution was lost in the "
		      "daemon's restart");
	r->cx->done = r->state == RUN_DONE;
	sess_error(c->sess,
		   "contexts/%s: execution %s: its results were lost in the "
		   "daemon's restart: %s",
		   c->name, r->name, strerror(-rc));
}

/* An execution of o joins c's, the queue if it waits. */
static int restore_exec(struct ctx *c, const struct state_r *o)
{
	struct run *r = run_restore_fields(o);

	if (r && !(r->cx = calloc(1, sizeof(*r->cx)))) {
		output_close(r, &r->pipe_o);
		output_close(r, &r->pipe_e);
		run_unref(r);
		r = NULL;
	}
	if (!r)
		return -ENOMEM;
	r->part_free = ctx_exec_release;
	r->sess = c->sess;
	r->ctx = c;
	restore_record(c, r, o);
	list_add_tail(&c->execs, &r->link);
	c->nexecs++;
	c->kept += ctx_exec_bytes(r->cx);
	if (r->state == RUN_QUEUED)
		list_add_tail(&c->queue, &r->qlink);
	else if (r->state == RUN_RUNNING && !c->active)
		c->active = r;
	else if (r->state == RUN_RUNNING) /* one runs at a time */
		lose_exec(c, r, "a second execution running in the state");
	return 0;
}

/* c's executions; one that cannot be made again (ENOMEM) is said. */
static void restore_execs(struct ctx *c, const struct state_r *o)
{
	struct state_r x;
	size_t pos = 0;
	uint16_t key;
	unsigned lost = 0, emptied = 0;

	while (state_next(o, &pos, &key, &x) == 1) {
		if (key != C_EXEC)
			continue;
		if (restore_exec(c, &x) < 0)
			lost++;
		else if (state_get_u64(&x, X_EMPTIED, 0))
			emptied++;
	}
	if (lost)
		sess_error(c->sess,
			   "contexts/%s: %u executions were lost in the "
			   "daemon's restart (out of memory)",
			   c->name, lost);
	if (emptied)
		sess_error(c->sess,
			   "contexts/%s: the results of %u older executions "
			   "were emptied by the restart (a checkpoint keeps "
			   "%u KiB of them)",
			   c->name, emptied, CTX_CKPT_BYTES >> 10);
}

/* The interpreter (pid, 0: none) cannot be driven again: what it ran
 * fails, what waits is canceled (it was written for the state that is
 * lost), and what is left of it in its cgroup is killed; the next code
 * starts a fresh one. */
static void lose_interp(struct ctx *c, long pid)
{
	static const char why[] = "the interpreter and its state were lost "
				  "in the daemon's restart";

	for (struct list *l = c->execs.next; l != &c->execs; l = l->next) {
		struct run *r = list_entry(l, struct run, link);

		if (run_active(r))
			lose_exec(c, r, why);
	}
	c->active = NULL;
	c->kill_stage = 0;
	if (!pid)
		return;
	/* without a cgroup, its session (it made one), if it is still this
	 * program's child: a pid of another program's may be anyone's now */
	if (our_child((pid_t)pid))
		c->cg.sid = (pid_t)pid;
	contain_kill(&c->cg);
	c->count = 0;
	c->restart = c->ready = c->intr_pending = false;
	if (c->state != CTX_DEAD)
		c->state = CTX_IDLE;
	sess_error(c->sess,
		   "contexts/%s: %s (pid %ld); finished executions are kept, "
		   "the next code starts a fresh %s",
		   c->name, why, pid, ctx_lang_name(c->lang));
}

/* The descriptors of the interpreter handed over: the request fifo,
 * its stdout and stderr, then the answer fifo (closed at the driver's
 * end, before its exit is reaped) and the copies of stdout and stderr
 * watched between executions (closed once every writer closed). */
static const uint16_t live_keys[6] = { C_REQ_FD, C_OUT_FD, C_ERR_FD,
				       C_ANS_FD, C_IDLE_O, C_IDLE_E };

static void idle_again(struct ctx *c, struct loop_watch *w, int fd)
{
	*w = (struct loop_watch){ fd, ctx_on_idle_output, c };
	if (fd >= 0)
		loop_add(w, c->active ? 0 : EPOLLIN);
}

/* c drives its interpreter pid again through fd. */
static void live_again(struct ctx *c, const struct state_r *o, pid_t pid,
		       const int fd[6])
{
	unsigned charge = (unsigned)u64_at_most(o, C_FD_CHARGE, 0, 64);
	const void *p;
	size_t len;

	c->pid = c->cg.leader = c->cg.sid = pid;
	c->req_fd = fd[0];
	c->out_fd = fd[1];
	c->err_fd = fd[2];
	c->ans = (struct loop_watch){ fd[3], ctx_on_answer, c };
	if (fd[3] >= 0)
		loop_add(&c->ans, EPOLLIN);
	idle_again(c, &c->idle_o, fd[4]);
	idle_again(c, &c->idle_e, fd[5]);
	if (state_get(o, C_ABUF, &p, &len))
		sb_add(&c->abuf, p, len); /* a frame begun: the rest comes */
	/* they count as the owner's again (the new program counts from 0);
	 * open already, they are not refused past the cut */
	if (charge && fdq_charge(c->sess->uid, charge, -1) == 0)
		c->fd_charge = charge;
	reap_add(&c->reap, pid, ctx_reaped, c);
}

/* The interpreter of o, driven again when its pid and descriptors are
 * there, else lost. */
static void restore_interp(struct ctx *c, const struct state_r *o)
{
	int64_t pid = state_get_i64(o, C_PID, 0);
	int fd[6];
	bool all = true;

	if (pid < 0 || pid > INT_MAX)
		pid = 0;
	for (int i = 0; i < 6; i++) {
		fd[i] = state_get_fd(o, live_keys[i]);
		all = all && (fd[i] >= 0 || i >= 3);
	}
	if (pid && all && our_child((pid_t)pid)) {
		live_again(c, o, (pid_t)pid, fd);
		return;
	}
	for (int i = 0; i < 6; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	lose_interp(c, (long)pid);
}

/* A context that cannot be made again: what was handed over of it is
 * let go (its descriptors closed, no longer kept past an execve, and its
 * interpreter killed). */
static void discard(const struct state_r *o)
{
	int64_t pid = state_get_i64(o, C_PID, 0);
	struct state_r x;
	size_t pos = 0;
	uint16_t key;
	struct run *r;
	int fd;

	for (int i = 0; i < 6; i++)
		if ((fd = state_get_fd(o, live_keys[i])) >= 0)
			close(fd);
	while (state_next(o, &pos, &key, &x) == 1) {
		if (key != C_EXEC || !(r = run_restore_fields(&x)))
			continue;
		output_close(r, &r->pipe_o);
		output_close(r, &r->pipe_e);
		run_unref(r);
	}
	if (pid > 0 && pid <= INT_MAX && our_child((pid_t)pid))
		kill((pid_t)pid, SIGKILL);
}

static int ctx_restore(struct sess *s, const struct state_r *o)
{
	struct ctx *c;
	int rc = restore_ctx(s, o, &c);

	if (rc < 0) {
		discard(o);
		return rc;
	}
	restore_execs(c, o);
	restore_interp(c, o);
	if (!c->active && c->state == CTX_RUNNING)
		c->state = CTX_IDLE;
	ctx_arm(c);
	return 0;
}

static const struct sess_part_kind kind = { CTX_PART_KEY, ctx_restore };

/* Known from the program's start, before any restore (as part.h asks of
 * a kind, and as the terminal's is; a later sess_part_kind_add of it
 * changes nothing). */
__attribute__((constructor)) static void add_kind(void)
{
	sess_part_kind_add(&kind);
}

const struct sess_part_kind *ctx_part_kind(void)
{
	return &kind;
}

enum { J_SHARED = 1, J_TEXT };

void ctx_json_save(const struct ctx_json *j, struct state_w *w)
{
	if (j->owner) /* its execution's: made again the same */
		state_put_u64(w, J_SHARED, 1);
	else
		state_put(w, J_TEXT, j->p, j->len);
}

struct ctx_json *ctx_json_restore(struct run *r, const struct state_r *o)
{
	struct ctx_json *j;
	const void *p;
	size_t len;

	if (!state_get(o, J_TEXT, &p, &len))
		return state_get_u64(o, J_SHARED, 0) && r && r->cx &&
				       r->state == RUN_DONE ?
			       ctx_json_get(r) :
			       NULL;
	j = calloc(1, sizeof(*j));
	if (j && !(j->p = malloc(len + 1))) {
		free(j);
		j = NULL;
	}
	if (!j)
		return NULL;
	memcpy(j->p, p, len);
	j->len = len;
	j->refs = 1;
	return j;
}
