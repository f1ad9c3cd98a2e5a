/*
 * ctxrun.c - the life of code contexts' interpreters and the queue of
 * their executions (one at a time, like a session's runs): started at
 * the first code or a restart, killed past a timeout's grace, by ctl
 * kill, rmdir or the session's end; their answers read from the loop.
 *
 * The interpreter's stdout and stderr are pipes for its whole life; an
 * execution reads them through descriptors of its own (dups, watched as
 * the run's pipes by output.c), closed once the driver says "done", which
 * it says after flushing them: what the execution printed is in its
 * spools when it ends. Between executions their output is dropped (and
 * said in the session's error file).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/ctx/ctxproc.h"
#include "sessions/core/log.h"
#include "sessions/core/objs.h"
#include "sessions/session/output.h"
#include "sessions/ctx/ctx.h"
#include "sessions/ctx/ctxint.h"
#include "sessions/session/sess.h"
#include "sessions/core/state.h"
#include "sessions/session/fdq.h"

static void pump(struct ctx *c);

/* Drops the oldest finished executions past the history's size. */
static void trim(struct ctx *c)
{
	struct list *l = c->execs.next;

	while (c->nexecs > conf.history && l != &c->execs) {
		struct run *r = list_entry(l, struct run, link);

		l = l->next;
		if (run_active(r))
			continue;
		list_del(&r->link);
		c->nexecs--;
		ctx_forget_record(c, r);
		run_forget_files(r, ~0u, sess_trash, c->sess);
		r->ctx = NULL;
		r->sess = NULL;
		run_unref(r);
	}
}

/* Ends r, which has not started or whose interpreter is gone. */
static void fail_exec(struct ctx *c, struct run *r, const char *name,
		      enum run_end end)
{
	if (r->state == RUN_QUEUED)
		list_del(&r->qlink);
	ctx_fail_record(c, r, name, c->why ? c->why : "the context is gone");
	r->cx->count = c->count;
	r->start_err = end == END_CANCELED ? 0 : c->start_err;
	run_finish(r, 1, 0, end);
}

static void fail_queue(struct ctx *c, enum run_end end)
{
	while (!list_empty(&c->queue))
		fail_exec(c, list_entry(c->queue.next, struct run, qlink),
			  end == END_CANCELED ? "Canceled" : "ContextDead",
			  end);
}

struct run *ctx_submit(struct ctx *c, const char *code, size_t len, int *err)
{
	struct run *r = run_new_empty();
	char no[16];

	if (!r || !(r->cx = calloc(1, sizeof(*r->cx)))) {
		*err = -ENOMEM;
		goto fail;
	}
	r->part_free = ctx_exec_release;
	r->sess = c->sess;
	*err = run_set_cmd(r, c->sess->dirfd, code, len);
	snprintf(no, sizeof(no), "%u", c->next_no + 1);
	if (*err == 0 && !(r->name = strdup(no)))
		*err = -ENOMEM;
	if (*err < 0)
		goto fail;
	r->ctx = c;
	r->no = ++c->next_no;
	r->has_cmd = true;
	r->queued_wall = loop_wall_ms();
	c->locked = true;
	state_touch();
	list_add_tail(&c->execs, &r->link);
	c->nexecs++;
	list_add_tail(&c->queue, &r->qlink);
	pump(c);
	trim(c);
	return r;
fail:
	if (r) {
		r->sess = NULL;
		run_unref(r);
	}
	return NULL;
}

/* Closes what links the daemon to the interpreter (its output first goes
 * to the active execution). */
static void disconnect(struct ctx *c)
{
	if (c->active) {
		output_close(c->active, &c->active->pipe_o);
		output_close(c->active, &c->active->pipe_e);
	}
	if (c->ans.fd >= 0) {
		loop_del(&c->ans);
		close(c->ans.fd);
	}
	for (int *fd = &c->out_fd; fd <= &c->err_fd; fd++) {
		struct loop_watch *w =
			fd == &c->out_fd ? &c->idle_o : &c->idle_e;

		if (w->fd >= 0) {
			loop_del(w);
			close(w->fd);
		}
		if (*fd >= 0)
			close(*fd);
		*fd = w->fd = -1;
	}
	if (c->req_fd >= 0)
		close(c->req_fd);
	fdq_uncharge(c->sess->uid, &c->fd_charge);
	c->req_fd = c->ans.fd = -1;
	c->abuf.len = 0;
}

static __attribute__((format(printf, 2, 3))) void
set_dead(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *why = NULL;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		why = NULL;
	va_end(ap);
	if (!c->why) {
		c->why = why;
		if (why)
			sess_error(c->sess, "contexts/%s: %s", c->name, why);
	} else {
		free(why);
	}
}

/* Between executions: what the interpreter's children print is dropped,
 * said once between two executions. */
void ctx_on_idle_output(struct loop_watch *w, uint32_t events)
{
	struct ctx *c = w->arg;
	char buf[4096];
	ssize_t n;

	(void)events;
	while ((n = read(w->fd, buf, sizeof(buf))) > 0)
		if (!c->idle_said) {
			c->idle_said = true;
			sess_error(c->sess,
				   "contexts/%s: output printed between "
				   "executions (by a child or a thread) "
				   "was dropped",
				   c->name);
		}
	if (n == 0 || errno != EAGAIN) {
		/* every writer closed it (os.close(1)): nothing more comes */
		loop_del(w);
		close(w->fd);
		w->fd = -1;
	}
}

/* While an execution runs, its own watches read the output. */
static void idle_watch(struct ctx *c, bool on)
{
	c->idle_said = false;
	if (c->idle_o.fd >= 0)
		loop_mod(&c->idle_o, on ? EPOLLIN : 0);
	if (c->idle_e.fd >= 0)
		loop_mod(&c->idle_e, on ? EPOLLIN : 0);
}

static void fifo_tag(const struct ctx *c, char *buf, size_t len)
{
	snprintf(buf, len, "x%llu.%u", (unsigned long long)c->id, c->gen);
}

static int spawn_with(struct ctx *c, const char *drv)
{
	struct sess *s = c->sess;
	char tag[48];
	char **envp = envmap_envp(&c->env);
	struct ctxproc_spec sp = {
		.interp = c->lang == CTX_PYTHON ? "python3" : "node",
		.flag = c->lang == CTX_PYTHON ? NULL : "--expose-internals",
		.driver = drv,
		.arg = c->lang == CTX_TYPESCRIPT ? "typescript" : NULL,
		.dirfd = s->dirfd,
		.dir = s->dir,
		.tag = tag,
		.uid = s->uid,
		.gid = s->gid,
		.cwd = c->cwd,
		.envp = envp,
		.cg = &c->cg,
	};
	struct ctxproc p;
	int rc;

	if (!envp)
		return -ENOMEM;
	c->gen++;
	fifo_tag(c, tag, sizeof(tag));
	rc = ctxproc_spawn(&sp, &p);
	envmap_envp_free(envp);
	if (rc < 0 && p.why[0]) { /* her bound or the cut: her code says so */
		c->start_err = -rc;
		set_dead(c, "%s", p.why);
	}
	if (rc < 0)
		return rc;
	c->fd_charge = p.fd_charge;
	contain_add(&c->cg, p.pid);
	c->pid = c->cg.leader = c->cg.sid = p.pid;
	c->started_wall = loop_wall_ms();
	c->ready = c->intr_pending = false;
	c->req_fd = p.req_fd;
	c->ans = (struct loop_watch){ p.ans_fd, ctx_on_answer, c };
	c->out_fd = p.out_fd;
	c->err_fd = p.err_fd;
	c->idle_o = (struct loop_watch){ fcntl(p.out_fd, F_DUPFD_CLOEXEC, 0),
					 ctx_on_idle_output, c };
	c->idle_e = (struct loop_watch){ fcntl(p.err_fd, F_DUPFD_CLOEXEC, 0),
					 ctx_on_idle_output, c };
	loop_add(&c->ans, EPOLLIN);
	loop_add(&c->idle_o, EPOLLIN);
	loop_add(&c->idle_e, EPOLLIN);
	reap_add(&c->reap, p.pid, ctx_reaped, c);
	state_touch(); /* a checkpoint names the interpreter it loses */
	return 0;
}

/* Starts the interpreter; a context that cannot have one is dead. */
static void spawn(struct ctx *c)
{
	const char *file = c->lang == CTX_PYTHON ? "sfsctx.py" : "sfsctx.js";
	char drv[4096];
	int rc = -ENOENT;

	free(c->why);
	c->why = NULL;
	c->count = 0;
	c->start_err = EIO;
	c->state = CTX_IDLE;
	if (ctxproc_driver(file, drv, sizeof(drv)))
		rc = spawn_with(c, drv);
	else
		set_dead(c,
			 "the driver %s is neither next to the daemon nor "
			 "in " SFS_DRIVER_DIR,
			 file);
	if (rc < 0 && !c->why)
		set_dead(c, "cannot start %s: %s", ctx_lang_name(c->lang),
			 strerror(-rc));
	if (rc < 0) {
		disconnect(c);
		c->state = CTX_DEAD;
		return;
	}
	log_msg(LOG_INFO, "session %s: contexts/%s: %s started, pid %ld",
		c->sess->name, c->name, ctx_lang_name(c->lang), (long)c->pid);
}

/* Sends the request of r: its key and the path of its code file. */
static int send_code(struct ctx *c, struct run *r)
{
	struct strbuf b = { 0 };
	char name[64], path[4200];
	int n;
	ssize_t w;

	ctxproto_key(c->key);
	run_file(r, "cmd", name, sizeof(name));
	n = snprintf(path, sizeof(path), "%s %s/%s", c->key, c->sess->dir,
		     name);
	ctxproto_put(&b, "code", path, (size_t)n);
	w = b.err ? -1 : write(c->req_fd, b.p, b.len);
	free(b.p);
	return w == (ssize_t)b.len ? 0 : -EIO;
}

static void watch_output(struct run *r, struct loop_watch *w, int fd)
{
	int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (d >= 0)
		output_watch(r, w, d);
}

static void start_exec(struct ctx *c, struct run *r)
{
	list_del(&r->qlink);
	r->state = RUN_RUNNING;
	r->pid = c->pid;
	r->started_wall = loop_wall_ms();
	r->started_mono = loop_now_ms();
	r->eff_timeout_ms = c->timeout_ms;
	r->deadline =
		c->timeout_ms ? r->started_mono + (int64_t)c->timeout_ms : 0;
	c->active = r;
	c->state = CTX_RUNNING;
	state_touch();
	c->interrupted = false;
	c->kill_stage = 0;
	idle_watch(c, false);
	watch_output(r, &r->pipe_o, c->out_fd);
	watch_output(r, &r->pipe_e, c->err_fd);
	if (send_code(c, r) < 0) {
		set_dead(c, "cannot send the code to the interpreter");
		contain_kill(&c->cg);
	}
	ctx_arm(c);
	if (run_changed_hook)
		run_changed_hook(r);
}

/* The active execution has ended (the driver's "done", or its death). */
static void end_exec(struct ctx *c, enum run_end end, int sig)
{
	struct run *r = c->active;

	output_close(r, &r->pipe_o);
	output_close(r, &r->pipe_e);
	idle_watch(c, true);
	r->cx->count = c->count;
	c->active = NULL;
	c->kill_stage = 0;
	if (c->state == CTX_RUNNING)
		c->state = c->interrupted ? CTX_INTERRUPTED : CTX_IDLE;
	run_finish(r, r->cx->has_error ? 1 : 0, sig, end);
	ctx_arm(c);
}

static void pump(struct ctx *c)
{
	if (c->active || list_empty(&c->queue) || c->gone_cb || c->restart)
		return;
	if (!c->pid && c->state != CTX_DEAD)
		spawn(c);
	if (c->state == CTX_DEAD) {
		fail_queue(c, END_ERROR);
		return;
	}
	start_exec(c, list_entry(c->queue.next, struct run, qlink));
}

/* One frame of the driver's. Returns 0 or -EINVAL (it breaks the
 * protocol: the interpreter is killed). A frame without the execution's
 * key (forged by the user's code or a child) is dropped. */
static int on_frame(struct ctx *c, struct ctxproto_frame *f)
{
	char tag[48];
	int rc;

	if (strcmp(f->tag, "ready") == 0) {
		fifo_tag(c, tag, sizeof(tag));
		ctxproc_unlink(c->sess->dirfd, tag);
		c->ready = true;
		if (c->intr_pending && c->active) {
			/* the grace counts from the signal, not a slow start */
			contain_signal(&c->cg, SIGINT, 0);
			c->kill_at =
				loop_now_ms() + (int64_t)conf.kill_grace_ms;
			ctx_arm(c);
		}
		c->intr_pending = false;
		return 0;
	}
	if (strcmp(f->tag, "fatal") == 0) {
		set_dead(c, "%.*s", (int)(f->len > 300 ? 300 : f->len),
			 f->data);
		return 0;
	}
	if (!c->active || ctxproto_unkey(f, c->key) < 0) {
		sess_error(c->sess,
			   "contexts/%s: a '%s' frame without the "
			   "execution's key was dropped",
			   c->name, f->tag);
		return 0;
	}
	rc = ctx_keep_frame(c, f);
	if (rc == 0 && c->active->cx->done) {
		c->count++;
		end_exec(c, END_EXITED, 0);
		pump(c);
	}
	return rc;
}

static void parse_answers(struct ctx *c)
{
	struct ctxproto_frame f;
	size_t at = 0;
	ssize_t n = 1;

	while (n > 0) {
		n = ctxproto_parse(c->abuf.p + at, c->abuf.len - at, &f);
		if (n > 0 && on_frame(c, &f) < 0)
			n = -EINVAL;
		if (n > 0)
			at += (size_t)n;
	}
	if (n < 0) {
		set_dead(c, "the driver broke the protocol");
		contain_kill(&c->cg);
		at = c->abuf.len;
	}
	memmove(c->abuf.p, c->abuf.p + at, c->abuf.len - at);
	c->abuf.len -= at;
	if (!c->abuf.len && c->abuf.cap > (1u << 20)) {
		/* a large frame is parsed: its room goes back */
		free(c->abuf.p);
		c->abuf = (struct strbuf){ 0 };
	}
}

/* Answers as they come: at most 1 MiB a wakeup, so that a driver that
 * writes without pause does not hold the loop (the rest is read at the
 * next one); all of it once the interpreter is gone (events 0). */
void ctx_on_answer(struct loop_watch *w, uint32_t events)
{
	struct ctx *c = w->arg;
	char buf[65536];
	ssize_t n = 1;

	for (int i = 0; n > 0 && (!events || i < 16); i++) {
		n = read(w->fd, buf, sizeof(buf));
		if (n > 0)
			sb_add(&c->abuf, buf, (size_t)n);
		if (c->abuf.err)
			break;
	}
	if (n == 0 || c->abuf.err) {
		loop_del(w); /* its end: reaped soon */
		close(w->fd);
		w->fd = -1;
	}
	if (c->abuf.len)
		parse_answers(c);
}

/* Frees c (its interpreter and whatever it started are gone). */
static void drop(struct ctx *c)
{
	struct sess *s = c->sess;

	loop_timer_del(&c->timer);
	reap_del(&c->reap);
	disconnect(c);
	fail_queue(c, END_CANCELED);
	while (!list_empty(&c->execs)) {
		struct run *r = list_entry(c->execs.next, struct run, link);

		if (run_active(r))
			fail_exec(c, r, "Canceled", END_CANCELED);
		list_del(&r->link);
		run_forget_files(r, ~0u, sess_trash, s);
		r->ctx = NULL;
		r->sess = NULL;
		run_unref(r);
	}
	contain_free(&c->cg);
	list_del(&c->link);
	sess_part_del(&c->part);
	s->nctxs--;
	objs_del(c->id);
	state_touch();
	envmap_free(&c->env);
	free(c->abuf.p);
	free(c->why);
	free(c->cwd);
	free(c);
}

/* rmdir waits for the interpreter and its children to be gone. */
static bool finish_removal(struct ctx *c)
{
	void (*cb)(void *) = c->gone_cb;
	void *arg = c->gone_arg;

	if (!cb || c->pid || !contain_empty(&c->cg))
		return false;
	drop(c);
	cb(arg);
	return true;
}

void ctx_reaped(struct reap_watch *w, int wstatus)
{
	struct ctx *c = w->arg;
	char tag[48];

	c->pid = c->cg.leader = 0;
	if (c->ans.fd >= 0)
		ctx_on_answer(&c->ans, 0); /* what it said last: why it failed */
	if (c->gone_cb || c->restart)
		; /* it was killed to go */
	else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == CTX_EXIT_LOST)
		set_dead(c, "the driver's protocol descriptors were closed or "
			    "replaced by the code");
	else if (WIFSIGNALED(wstatus))
		set_dead(c, "the interpreter was killed by signal %d (%s)",
			 WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	else
		set_dead(c, "the interpreter exited with status %d",
			 WEXITSTATUS(wstatus));
	if (c->active) {
		ctx_fail_record(c, c->active, "ContextDied",
				c->why ? c->why : "the interpreter was ended");
		/* rmdir or the session's end: canceled, as a run's close */
		c->active->start_err =
			c->gone_cb || c->sess->dying ? ECANCELED : EIO;
		end_exec(c, END_ERROR,
			 WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
	}
	disconnect(c);
	fifo_tag(c, tag, sizeof(tag));
	ctxproc_unlink(c->sess->dirfd, tag);
	contain_kill(&c->cg); /* what it started goes with it */
	c->state = CTX_DEAD;
	if (finish_removal(c))
		return;
	if (c->restart) {
		c->restart = false;
		spawn(c);
	}
	pump(c);
	ctx_arm(c);
}

/* SIGINT before the driver has its handler would kill the interpreter:
 * it is sent once the driver is ready. */
static void signal_int(struct ctx *c)
{
	if (c->ready)
		contain_signal(&c->cg, SIGINT, 0);
	else
		c->intr_pending = true;
}

static void on_timer(struct loop_timer *t)
{
	struct ctx *c = t->arg;
	struct run *r = c->active;
	int64_t now = loop_now_ms();

	if (r && c->kill_stage == 0 && r->deadline && now >= r->deadline) {
		sess_error(c->sess,
			   "contexts/%s: execution %s timed out "
			   "after %llu ms: interrupted",
			   c->name, r->name,
			   (unsigned long long)r->eff_timeout_ms);
		c->interrupted = true;
		signal_int(c);
		c->kill_stage = 1;
		c->by_ctl = false;
		c->kill_at = now + (int64_t)conf.kill_grace_ms;
	} else if (r && c->kill_stage == 1 && now >= c->kill_at) {
		if (c->by_ctl)
			set_dead(c,
				 "execution %s was still running %llu ms "
				 "after ctl interrupt: killed",
				 r->name,
				 (unsigned long long)conf.kill_grace_ms);
		else
			set_dead(c,
				 "execution %s timed out after %llu ms and "
				 "was still running %llu ms after its "
				 "interrupt: killed",
				 r->name, (unsigned long long)r->eff_timeout_ms,
				 (unsigned long long)conf.kill_grace_ms);
		contain_kill(&c->cg);
		c->kill_stage = 2;
	}
	if (!finish_removal(c))
		ctx_arm(c);
}

void ctx_arm(struct ctx *c)
{
	struct run *r = c->active;
	int64_t t = 0;

	if (r && c->kill_stage == 0 && r->deadline)
		t = r->deadline;
	else if (r && c->kill_stage == 1)
		t = c->kill_at;
	if (c->gone_cb)
		t = loop_now_ms() + 10;
	if (t)
		loop_timer_add(&c->timer, t, on_timer, c);
	else
		loop_timer_del(&c->timer);
}

int ctx_interrupt(struct ctx *c)
{
	if (!c->active || !c->pid)
		return -ESRCH;
	c->interrupted = true;
	signal_int(c);
	if (c->kill_stage == 0) { /* not honoured in the grace: killed */
		c->kill_stage = 1;
		c->by_ctl = true;
		c->kill_at = loop_now_ms() + (int64_t)conf.kill_grace_ms;
		ctx_arm(c);
	}
	return 0;
}

void ctx_interrupt_exec(struct ctx *c, struct run *r)
{
	if (r->state == RUN_QUEUED)
		fail_exec(c, r, "Canceled", END_CANCELED);
	else if (r == c->active)
		ctx_interrupt(c);
}

int ctx_kill(struct ctx *c)
{
	if (!c->pid)
		return -ESRCH;
	set_dead(c, "killed by ctl");
	contain_kill(&c->cg);
	return 0;
}

int ctx_restart(struct ctx *c)
{
	if (c->gone_cb)
		return -ENOENT;
	if (c->pid) {
		c->restart = true;
		contain_kill(&c->cg);
		return 0;
	}
	c->locked = true;
	spawn(c);
	pump(c);
	return c->state == CTX_DEAD ? -EIO : 0;
}

int ctx_remove(struct ctx *c, void (*cb)(void *), void *arg)
{
	if (c->gone_cb)
		return -EBUSY;
	c->gone_cb = cb;
	c->gone_arg = arg;
	fail_queue(c, END_CANCELED);
	contain_kill(&c->cg);
	if (!finish_removal(c))
		ctx_arm(c);
	return 0;
}

void ctx_hangup(struct ctx *c)
{
	fail_queue(c, END_CANCELED);
	contain_kill(&c->cg);
	if (c->pid)
		kill(c->pid, SIGKILL);
}

void ctx_free(struct ctx *c)
{
	if (c->pid)
		kill(c->pid, SIGKILL);
	contain_kill(&c->cg);
	drop(c);
}
