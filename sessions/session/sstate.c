/*
 * sstate.c - the session layer saved for the next program and made again
 * there (sstate.h). A session is made again with its old id, its shell's
 * pid and pipes, its runs in their order (the active one still reading
 * its fifos), its queue, procs, variables and error lines, then its
 * parts through their kinds.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/core/names.h"
#include "sessions/core/objs.h"
#include "sessions/session/driver.h"
#include "sessions/session/env.h"
#include "sessions/session/kill.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/runs.h"
#include "sessions/session/runstate.h"
#include "sessions/session/sess.h"
#include "sessions/session/sstate.h"
#include "sessions/session/table.h"

enum {
	K_ID = 1,
	K_NAME,
	K_UID,
	K_GID,
	K_CWD,
	K_TIMEOUT,
	K_CREATED,
	K_DEFAULT,
	K_PID,
	K_CTL_FD,
	K_RES_FD,
	K_RBUF,
	K_RUN_KEY,
	K_SPOKE,
	K_IDLE,
	K_FIFO_GEN,
	K_FIFO_O,
	K_FIFO_E,
	K_TRASH,
	K_ENV_PENDING,
	K_PEND_CWD,
	K_NEXT_NO,
	K_DIRFD,
	K_DIR,
	K_CG_DFD,
	K_CG_NAME,
	K_CG_SID,
	K_ERR_LINE,
	K_RTDIR, /* objects of the layer */
	K_CONTAIN,
	K_NEXT_ID, /* fields of the layer */
	K_IS_CKPT,
	K_NOBJS,
	K_EXPECT, /* fields of a session again */
	K_EXPECT_MS,
	/* fields of a session's run object beyond runstate's */
	K_RUN_QUEUED = RUNSTATE_KEY_MAX,
	K_RUN_ACTIVE,
};

int sstate_busy(void)
{
	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		if (s->dying || s->kill_stage || s->reset)
			return -EBUSY;
		/* a process killed keeps its kill_stage once it has ended */
		for (struct list *l = s->procs.next; l != &s->procs;
		     l = l->next) {
			const struct run *p = list_entry(l, struct run, link);

			if (p->state == RUN_RUNNING && p->proc->kill_stage)
				return -EBUSY;
		}
	}
	return 0;
}

static bool queued(const struct sess *s, const struct run *r)
{
	for (const struct list *l = s->queue.next; l != &s->queue; l = l->next)
		if (list_entry(l, struct run, qlink) == r)
			return true;
	return false;
}

static void save_runs(const struct sess *s, struct state_w *w)
{
	for (const struct list *l = s->runs.next; l != &s->runs; l = l->next) {
		const struct run *r = list_entry(l, struct run, link);

		state_open(w, SSTATE_RUN);
		run_save_fields(r, w);
		state_put_u64(w, K_RUN_QUEUED, queued(s, r));
		state_put_u64(w, K_RUN_ACTIVE, s->active == r);
		state_close(w);
	}
	for (const struct list *l = s->procs.next; l != &s->procs; l = l->next)
		proc_save(list_entry(l, struct run, link), w);
}

static void save_shell(const struct sess *s, struct state_w *w)
{
	state_put_i64(w, K_PID, s->pid);
	state_put_fd(w, K_CTL_FD, s->ctl_fd);
	state_put_fd(w, K_RES_FD, s->res.fd);
	state_put(w, K_RBUF, s->rbuf.p, s->rbuf.len);
	state_put_u64(w, K_RUN_KEY, s->run_key);
	state_put_u64(w, K_SPOKE, s->spoke);
	state_put_u64(w, K_IDLE, s->shell_idle);
	state_put_u64(w, K_FIFO_GEN, s->fifo.gen);
	state_put_fd(w, K_FIFO_O, s->fifo.o);
	state_put_fd(w, K_FIFO_E, s->fifo.e);
	state_put_fd(w, K_CG_DFD, s->cg.dfd);
	state_put_str(w, K_CG_NAME, s->cg.name);
	state_put_i64(w, K_CG_SID, s->cg.sid);
}

/* The error lines, oldest first (each ends with its newline). */
static void save_errors(const struct sess *s, struct state_w *w)
{
	struct strbuf b = { 0 };

	for (unsigned i = 0; i < s->errs.n; i++)
		sb_addf(&b, "%s",
			s->errs.lines[(s->errs.first + i) % SESS_ERRORS_KEPT]);
	state_put(w, K_ERR_LINE, b.p, b.len);
	free(b.p);
}

static void save_sess(const struct sess *s, struct state_w *w)
{
	state_open(w, SSTATE_SESS);
	state_put_u64(w, K_ID, s->id);
	state_put_str(w, K_NAME, s->name);
	state_put_u64(w, K_UID, s->uid);
	state_put_u64(w, K_GID, s->gid);
	state_put_str(w, K_CWD, s->cwd);
	state_put_u64(w, K_TIMEOUT, s->timeout_ms);
	state_put_str(w, K_EXPECT, s->expect);
	state_put_u64(w, K_EXPECT_MS, s->expect_ms);
	state_put_i64(w, K_CREATED, s->created_wall);
	state_put_u64(w, K_DEFAULT, s->is_default);
	state_put(w, K_TRASH, s->trash.p, s->trash.len);
	state_put_u64(w, K_ENV_PENDING, s->env_pending);
	state_put_u64(w, K_PEND_CWD, s->pend_cwd);
	state_put_u64(w, K_NEXT_NO, s->next_no);
	state_put_fd(w, K_DIRFD, s->dirfd);
	state_put_str(w, K_DIR, s->dir);
	save_errors(s, w);
	save_shell(s, w);
	env_save_map(w, SSTATE_ENV, &s->env);
	env_save_map(w, SSTATE_PEND_SET, &s->pend_set);
	env_save_map(w, SSTATE_PEND_UNSET, &s->pend_unset);
	save_runs(s, w);
	sess_parts_save((struct sess *)s, w);
	state_close(w);
}

void sstate_save(struct state_w *w)
{
	state_open(w, SSTATE_LAYER);
	state_open(w, K_RTDIR);
	rtdir_save(w);
	state_close(w);
	state_open(w, K_CONTAIN);
	contain_save(w);
	state_close(w);
	env_save_root(w);
	state_put_u64(w, K_NEXT_ID, objs_next());
	state_put_u64(w, K_IS_CKPT, w->no_fds);
	state_put_u64(w, K_NOBJS, objs_live());
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		save_sess(s, w);
	state_close(w);
}

void sstate_save_dirs(struct state_w *w)
{
	state_open(w, SSTATE_LAYER);
	state_open(w, K_RTDIR);
	rtdir_save(w);
	state_close(w);
	state_close(w);
}

static void restore_errors(struct sess *s, const struct state_r *o)
{
	const char *p, *nl;
	const void *v;
	size_t len;

	if (!state_get(o, K_ERR_LINE, &v, &len))
		return;
	for (p = v; (nl = memchr(p, '\n', len - (size_t)(p - (const char *)v)));
	     p = nl + 1) {
		unsigned slot;

		if (s->errs.n == SESS_ERRORS_KEPT)
			break;
		slot = (s->errs.first + s->errs.n) % SESS_ERRORS_KEPT;
		/* with its newline, as sess_error makes a line */
		s->errs.lines[slot] = strndup(p, (size_t)(nl - p) + 1);
		s->errs.n += s->errs.lines[slot] != NULL;
	}
}

/* A run of s's history (and maybe its queue, or the active one). */
static int restore_run(struct sess *s, const struct state_r *o)
{
	struct run *r = run_restore_fields(o);

	if (!r)
		return -ENOMEM;
	r->sess = s;
	list_add_tail(&s->runs, &r->link);
	if (r->no)
		s->nruns++;
	else
		s->nnamed++;
	if (state_get_u64(o, K_RUN_QUEUED, 0))
		list_add_tail(&s->queue, &r->qlink);
	if (state_get_u64(o, K_RUN_ACTIVE, 0) && r->state == RUN_RUNNING)
		s->active = r;
	return 0;
}

static void restore_shell(struct sess *s, const struct state_r *o)
{
	char cg[sizeof(s->cg.name)];
	const void *p;
	size_t len;

	s->pid = (pid_t)state_get_i64(o, K_PID, 0);
	s->ctl_fd = state_get_fd(o, K_CTL_FD);
	s->res.fd = state_get_fd(o, K_RES_FD);
	if (state_get(o, K_RBUF, &p, &len))
		sb_add(&s->rbuf, p, len);
	s->run_key = state_get_u64(o, K_RUN_KEY, 0);
	s->spoke = state_get_u64(o, K_SPOKE, 0) != 0;
	s->shell_idle = state_get_u64(o, K_IDLE, 0) != 0;
	s->fifo.gen = (unsigned)state_get_u64(o, K_FIFO_GEN, 0);
	s->fifo.o = state_get_fd(o, K_FIFO_O);
	s->fifo.e = state_get_fd(o, K_FIFO_E);
	state_get_buf(o, K_CG_NAME, cg, sizeof(cg));
	contain_adopt(&s->cg, state_get_fd(o, K_CG_DFD), cg);
	s->cg.sid = (pid_t)state_get_i64(o, K_CG_SID, 0);
	if (s->pid > 0 && (s->ctl_fd < 0 || s->res.fd < 0)) {
		/* not handed over (a crash): the next run starts a shell */
		sess_error(s, "sessionfs restarted after a crash: the next run "
			      "gets a new shell with the cwd and exported "
			      "variables; functions, aliases, options and "
			      "other variables are lost");
		s->pid = 0;
	}
	s->cg.leader = s->pid;
	driver_adopt(s);
}

static void restore_fields(struct sess *s, const struct state_r *o)
{
	const void *p;
	size_t len;

	state_get_buf(o, K_NAME, s->name, sizeof(s->name));
	state_get_buf(o, K_DIR, s->dir, sizeof(s->dir));
	s->uid = (uid_t)state_get_u64(o, K_UID, 0);
	s->gid = (gid_t)state_get_u64(o, K_GID, 0);
	s->cwd = state_get_str(o, K_CWD);
	s->timeout_ms = state_get_u64(o, K_TIMEOUT, 0);
	s->expect = state_get_str(o, K_EXPECT);
	s->expect_ms = state_get_u64(o, K_EXPECT_MS, 0);
	s->created_wall = state_get_i64(o, K_CREATED, 0);
	s->is_default = state_get_u64(o, K_DEFAULT, 0) != 0;
	if (state_get(o, K_TRASH, &p, &len))
		sb_add(&s->trash, p, len);
	s->env_pending = state_get_u64(o, K_ENV_PENDING, 0) != 0;
	s->pend_cwd = state_get_u64(o, K_PEND_CWD, 0) != 0;
	s->next_no = (unsigned)state_get_u64(o, K_NEXT_NO, 0);
	s->dirfd = state_get_fd(o, K_DIRFD);
	restore_errors(s, o);
}

/* The runs, procs and parts of s, in their order. */
static void restore_children(struct sess *s, const struct state_r *o)
{
	struct state_r c;
	size_t pos = 0;
	uint16_t k;

	while (state_next(o, &pos, &k, &c) == 1) {
		const struct sess_part_kind *kind = sess_part_kind_of(k);
		int rc = 0;

		if (k == SSTATE_RUN)
			rc = restore_run(s, &c);
		else if (k == SSTATE_PROC)
			rc = proc_restore(s, &c);
		else if (k >= SESS_PART_KEY_MIN)
			rc = kind ? kind->restore(s, &c) : -EPROTO;
		if (rc < 0)
			sess_error(s, "a part of the session was lost by the "
				      "upgrade: %s",
				   strerror(-rc));
	}
}

/* A session of o, or NULL (said in the log). */
static struct sess *restore_sess(const struct state_r *o)
{
	struct sess *s;
	char dname[32];

	objs_reuse(state_get_u64(o, K_ID, 0));
	s = sess_blank(OBJ_SESS);
	if (!s)
		return NULL;
	restore_fields(s, o);
	snprintf(dname, sizeof(dname), "s%llu", (unsigned long long)s->id);
	if (s->dirfd < 0) /* a checkpoint's: its directory is there */
		s->dirfd = rtdir_reopen(dname, s->dir, sizeof(s->dir));
	if (!name_valid(s->name) || !s->cwd || s->dirfd < 0 ||
	    sess_find(s->name)) {
		log_msg(LOG_ERR, "a saved session (%.64s) is not usable",
			s->name);
		objs_del(s->id);
		free(s->cwd);
		free(s->expect);
		free(s);
		return NULL;
	}
	envmap_init(&s->env, OBJ_ENVVAR, s);
	envmap_init(&s->pend_set, OBJ_NONE, NULL);
	envmap_init(&s->pend_unset, OBJ_NONE, NULL);
	env_restore_map(o, SSTATE_ENV, &s->env);
	env_restore_map(o, SSTATE_PEND_SET, &s->pend_set);
	env_restore_map(o, SSTATE_PEND_UNSET, &s->pend_unset);
	table_add(s);
	restore_shell(s, o);
	restore_children(s, o);
	return s;
}

int sstate_restore_dirs(const struct state_r *layer)
{
	struct state_r o;
	int rc;

	if (!state_obj(layer, K_RTDIR, &o))
		o = (struct state_r){ NULL, 0 };
	rc = rtdir_restore(&o);
	if (rc == 0 && state_obj(layer, K_CONTAIN, &o))
		contain_restore(&o);
	else if (rc == 0 && contain_setup()) /* a restart: cgroups anew */
		contain_watchdog();
	return rc;
}

int sstate_restore(const struct state_r *layer)
{
	struct state_r o;
	size_t pos = 0;
	uint16_t k;
	unsigned n = 0;

	/* at most 2^24 at once: a crafted count is not an allocation */
	objs_reserve(state_get_u64(layer, K_NOBJS, 0) & 0xffffff);
	env_restore_root(layer);
	/* a checkpoint: the crashed program made ids after it; an upgrade:
	 * no fresh id below the old program's next (it gave those to
	 * objects since deleted or not handed over, a session made ahead,
	 * whose inodes or cgroup names must not go to another) */
	if (state_get_u64(layer, K_IS_CKPT, 0))
		objs_reuse(state_get_u64(layer, K_NEXT_ID, 0) + (1ULL << 32));
	else
		objs_floor(state_get_u64(layer, K_NEXT_ID, 0));
	while (state_next(layer, &pos, &k, &o) == 1) {
		struct sess *s = k == SSTATE_SESS ? restore_sess(&o) : NULL;

		/* debug: a line each is a write each, in the upgrade's pause */
		if (s)
			log_msg(LOG_DEBUG, "session %s: taken over, shell %ld",
				s->name, (long)s->pid);
		n += s != NULL;
	}
	log_msg(LOG_INFO, "%u sessions taken over", n);
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		runs_resume(s);
	return 0;
}

static unsigned long saved_gen;
static bool checkpointing;
static int64_t next_at;
static struct loop_timer ckpt_timer;

static void on_ckpt_timer(struct loop_timer *t)
{
	(void)t;
	sstate_checkpoint_quiet();
}

void sstate_checkpoints(bool on)
{
	checkpointing = on;
}

bool sstate_checkpoint_quiet(void)
{
	struct state_w w;
	const void *p;
	size_t len;
	int rc;

	if (!checkpointing || state_generation() == saved_gen)
		return false;
	if (loop_now_ms() < next_at) { /* soon, even if nothing wakes us */
		if (!ckpt_timer.armed)
			loop_timer_add(&ckpt_timer, next_at, on_ckpt_timer,
				       NULL);
		return false;
	}
	saved_gen = state_generation();
	next_at = loop_now_ms() + SSTATE_CKPT_MS;
	state_w_init(&w);
	w.no_fds = true;
	sstate_save(&w);
	rc = state_w_bytes(&w, &p, &len);
	if (rc == 0)
		rc = rtdir_put("checkpoint", p, len);
	if (rc < 0)
		log_msg(LOG_WARNING, "checkpoint: %s", strerror(-rc));
	state_w_free(&w);
	return true;
}

int sstate_read_checkpoint(struct state_r *layer, void **bytes)
{
	struct state_r root;
	size_t len = 0;
	int rc;

	*bytes = rtdir_get("checkpoint", &len);
	if (!*bytes)
		return -ENOENT;
	rc = state_check(*bytes, len, &root);
	if (rc == 0 && !state_obj(&root, SSTATE_LAYER, layer))
		rc = -EPROTO;
	return rc;
}
