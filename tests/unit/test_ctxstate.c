/*
 * test_ctxstate.c - a code context through an upgrade in place, in one
 * process and without a mount: a real python interpreter is saved with
 * its part's save (sessions/ctx/ctxstate.c), the context is dropped from
 * memory as an execve drops it (its descriptors and its interpreter
 * stay), and the kind's restore makes it again: the same interpreter
 * keeps its variables, the execution in progress ends with its real
 * result, and the ids are the same. Without the descriptors (a restart
 * after a crash) the finished executions stay and the next code starts
 * a fresh interpreter.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include "conf/conf.h"
#include "sessions/core/loop.h"
#include "sessions/core/objs.h"
#include "sessions/ctx/ctx.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "pump.h"
#include "unit.h"

/* The session's shell is not used here: it only has to live. */
static const char idle_shell[] = "#!/bin/bash\nwhile read -r l; do :; done\n";

static char base[64];
static char dir[4096];
static struct sess *S;

static bool run_done(void *id)
{
	struct run *r = objs_get(*(uint64_t *)id, OBJ_RUN);

	return !r || r->state == RUN_DONE;
}

static bool pid_gone(void *pid)
{
	return kill(*(pid_t *)pid, 0) < 0;
}

static bool is_set(void *flag)
{
	return *(bool *)flag;
}

static void set_flag(void *flag)
{
	*(bool *)flag = true;
}

static void setup(void)
{
	char shell[4200];
	int dfd = unit_new_dir(base, dir, sizeof(dir));

	unit_put_at(dfd, "idle-shell", idle_shell, sizeof(idle_shell) - 1);
	ck_assert_int_eq(fchmodat(dfd, "idle-shell", 0755, 0), 0);
	close(dfd);
	snprintf(shell, sizeof(shell), "%s/idle-shell", dir);
	conf_defaults();
	free(conf.shell);
	free(conf.runtime_dir);
	free(conf.workspace);
	conf.shell = strdup(shell);
	conf.runtime_dir = strdup(dir);
	conf.workspace = strdup(dir);
	conf.kill_grace_ms = 300;
	shell_set_driver(SFS_TEST_DRIVER);
	ck_assert_int_eq(loop_init(), 0);
	ck_assert_int_eq(sess_init(NULL), 0);
	ck_assert_int_eq(sess_create("c", getuid(), getgid(), &S), 0);
}

static void teardown(void)
{
	bool gone = false;

	sess_shutdown(set_flag, &gone);
	ck_assert(pump(is_set, &gone, 5000));
	sess_fini();
}

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-ctxstate-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

/* Queues code in c; returns its run's id. */
static uint64_t submit(struct ctx *c, const char *code)
{
	int err = 0;
	struct run *r = ctx_submit(c, code, strlen(code), &err);

	ck_assert_msg(r != NULL, "submit: %s", strerror(-err));
	return r->id;
}

static struct run *run_of(uint64_t id)
{
	struct run *r = objs_get(id, OBJ_RUN);

	ck_assert_ptr_nonnull(r);
	return r;
}

/* The text of the value of execution id, "" when it has none. */
static const char *value(uint64_t id)
{
	const struct ctx_result *m = ctx_exec_main(run_of(id)->cx);

	return m && m->fmt[0].has ? m->fmt[0].p : "";
}

static uint64_t run_wait(struct ctx *c, const char *code)
{
	uint64_t id = submit(c, code);

	ck_assert_msg(pump(run_done, &id, 15000), "%s did not end", code);
	return id;
}

/* What the execve drops of c: its memory, watches, timers and claims;
 * not its descriptors nor its interpreter. */
static void forget_run(struct run *r)
{
	if (r->pipe_o.fd >= 0)
		loop_del(&r->pipe_o);
	if (r->pipe_e.fd >= 0)
		loop_del(&r->pipe_e);
	loop_timer_del(&r->rest);
	list_del(&r->link);
	objs_del(r->id);
	spool_release(&r->out);
	spool_release(&r->err);
	ctx_exec_release(r);
	free(r->name);
	free(r);
}

static void forget(struct ctx *c)
{
	while (!list_empty(&c->execs))
		forget_run(list_entry(c->execs.next, struct run, link));
	for (struct loop_watch *w = &c->ans; w;
	     w = w == &c->ans ? &c->idle_o : w == &c->idle_o ? &c->idle_e : 0)
		if (w->fd >= 0)
			loop_del(w);
	loop_timer_del(&c->timer);
	reap_del(&c->reap);
	list_del(&c->link);
	sess_part_del(&c->part);
	S->nctxs--;
	objs_del(c->id);
	envmap_free(&c->env);
	free(c->abuf.p);
	free(c->why);
	free(c->cwd);
	free(c);
}

/* The descriptors a save handed over, kept for a check. */
static int kept[64];
static size_t nkept;

/* S's parts saved (as a checkpoint, without descriptors, when crash), the
 * context dropped, and its restore from the bytes: its result. */
static int save_restore(struct ctx *c, bool crash, bool taken)
{
	struct state_w w;
	struct state_r root, o;
	const void *p;
	size_t len, pos = 0;
	uint16_t key;
	void *copy;
	int rc;

	state_w_init(&w);
	w.no_fds = crash; /* a checkpoint */
	sess_parts_save(S, &w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	copy = malloc(len);
	memcpy(copy, p, len);
	forget(c);
	for (nkept = 0; nkept < w.nfds && nkept < 64; nkept++)
		kept[nkept] = w.fds[nkept];
	state_w_free(&w);
	if (taken) /* its name is another context's now */
		ck_assert_int_eq(ctx_new(S, "py", &c), 0);
	ck_assert_int_eq(state_check(copy, len, &root), 0);
	ck_assert_int_eq(state_next(&root, &pos, &key, &o), 1);
	ck_assert_int_eq(key, ctx_part_kind()->key);
	rc = ctx_part_kind()->restore(S, &o);
	free(copy);
	return rc;
}

static struct ctx *upgrade(struct ctx *c, bool crash)
{
	ck_assert_int_eq(save_restore(c, crash, false), 0);
	c = ctx_find(S, "py");
	ck_assert_ptr_nonnull(c);
	return c;
}

/* A context holding x = 41, a result of its own and a variable, and an
 * execution that sleeps, running. */
static struct ctx *prepare(uint64_t ids[4])
{
	struct ctx *c;

	ck_assert_int_eq(ctx_new(S, "py", &c), 0);
	ck_assert_int_eq(ctx_setenv(c, "SFS_T", "v", 1), 0);
	ids[0] = run_wait(c, "x = 41\nx\n");
	ck_assert_str_eq(value(ids[0]), "41");
	ids[1] = submit(c, "import time\ntime.sleep(1)\nx + 1\n");
	ck_assert_int_eq(run_of(ids[1])->state, RUN_RUNNING);
	ids[2] = ctx_exec_main(run_of(ids[0])->cx)->id;
	ids[3] = envmap_get(&c->env, "SFS_T")->id;
	return c;
}

START_TEST(live_again)
{
	uint64_t ids[4], id, cid;
	struct ctx *c = prepare(ids);
	pid_t pid = c->pid;

	cid = c->id;
	c = upgrade(c, false);
	ck_assert_uint_eq(c->id, cid);
	ck_assert_int_eq(c->pid, pid); /* the same interpreter */
	ck_assert_ptr_eq(objs_get(ids[2], OBJ_CTXRES),
			 ctx_exec_main(run_of(ids[0])->cx));
	ck_assert_str_eq(((struct envvar *)objs_get(ids[3], OBJ_CTXVAR))->name,
			 "SFS_T");
	ck_assert_ptr_eq(c->active, run_of(ids[1]));
	/* the execution in progress ends with its real result */
	ck_assert(pump(run_done, &ids[1], 15000));
	ck_assert_int_eq(run_of(ids[1])->end, END_EXITED);
	ck_assert_str_eq(value(ids[1]), "42");
	id = run_wait(c, "x\n");
	ck_assert_str_eq(value(id), "41");
	ck_assert_int_eq(c->pid, pid);
	ck_assert_uint_eq(run_of(id)->no, 3);
}
END_TEST

/* The upgrade comes while the driver's answer is read in part: the
 * bytes the daemon holds go with the state, the rest comes after. */
START_TEST(partial_answer)
{
	uint64_t ids[4];
	struct ctx *c = prepare(ids);
	struct pollfd p = { .fd = c->ans.fd, .events = POLLIN };
	char head[5];

	ck_assert_int_eq(poll(&p, 1, 15000), 1);
	ck_assert_int_eq(read(c->ans.fd, head, sizeof(head)), sizeof(head));
	sb_add(&c->abuf, head, sizeof(head));
	c = upgrade(c, false);
	ck_assert_uint_eq(c->abuf.len, sizeof(head));
	ck_assert(pump(run_done, &ids[1], 15000));
	ck_assert_int_eq(run_of(ids[1])->end, END_EXITED);
	ck_assert_str_eq(value(ids[1]), "42");
	ck_assert_int_ne(c->state, CTX_DEAD);
}
END_TEST

START_TEST(lost_without_descriptors)
{
	uint64_t ids[4], id;
	struct ctx *c = prepare(ids);
	pid_t pid = c->pid;
	size_t len;
	char *err;

	c = upgrade(c, true);
	ck_assert_int_eq(c->pid, 0);
	ck_assert(pump(pid_gone, &pid, 5000)); /* nothing of it is left */
	ck_assert_str_eq(value(ids[0]), "41"); /* finished: kept */
	ck_assert_int_eq(run_of(ids[1])->state, RUN_DONE);
	ck_assert_int_eq(run_of(ids[1])->end, END_ERROR);
	ck_assert_str_eq(run_of(ids[1])->cx->ename.p, "ContextLost");
	err = sess_errors_text(S, &len);
	ck_assert_ptr_nonnull(strstr(err, "contexts/py: the interpreter and "
					  "its state were lost"));
	free(err);
	/* a fresh interpreter, as in a new context: x is gone */
	id = run_wait(c, "x\n");
	ck_assert_int_ne(c->pid, pid);
	ck_assert_str_eq(run_of(id)->cx->ename.p, "NameError");
	id = run_wait(c, "2 + 2\n");
	ck_assert_str_eq(value(id), "4");
}
END_TEST

/* A checkpoint keeps the newest executions' results within its budget;
 * the older ones come back emptied, said in one line. */
START_TEST(checkpoint_budget)
{
	struct ctx *c;
	uint64_t big, small;
	size_t len;
	char *err;

	ck_assert_int_eq(ctx_new(S, "py", &c), 0);
	big = run_wait(c, "'y' * (2 << 20)\n");
	ck_assert_uint_gt(strlen(value(big)), 2u << 20);
	small = run_wait(c, "x = 41\nx\n");
	c = upgrade(c, true);
	ck_assert_str_eq(value(small), "41");
	ck_assert_ptr_nonnull(ctx_exec_main(run_of(big)->cx)); /* there, */
	ck_assert_str_eq(value(big), "");		      /* emptied */
	err = sess_errors_text(S, &len);
	ck_assert_ptr_nonnull(strstr(err, "the results of 1 older executions "
					  "were emptied"));
	free(err);
}
END_TEST

/* A context that cannot be made again lets go of what was handed over:
 * no descriptor stays open (none would be close-on-exec) and its
 * interpreter is killed. */
START_TEST(refused_lets_go)
{
	uint64_t ids[4];
	struct ctx *c = prepare(ids);
	pid_t pid = c->pid;

	ck_assert_int_eq(save_restore(c, false, true), -EINVAL);
	ck_assert_uint_gt(nkept, 6);
	for (size_t i = 0; i < nkept; i++)
		ck_assert_msg(fcntl(kept[i], F_GETFD) < 0, "fd %d is open",
			      kept[i]);
	ck_assert(pump(pid_gone, &pid, 5000));
	ck_assert_ptr_null(objs_get(ids[1], OBJ_RUN));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ctxstate");
	TCase *tc = tcase_create("upgrade");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, live_again);
	tcase_add_test(tc, partial_answer);
	tcase_add_test(tc, lost_without_descriptors);
	tcase_add_test(tc, refused_lets_go);
	tcase_add_test(tc, checkpoint_budget);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
