/*
 * test_machine.c - the run and shell state machine of sessions/ (queue,
 * start, report frames, shell death, kill, timeout, reset, deletion)
 * driven through the real loop against a fake shell that speaks the
 * frame protocol of sessions/session/shell.h, without a mount.
 */
#include <errno.h>
#include <signal.h>
#include "conf/conf.h"
#include "sessions/core/loop.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "pump.h"
#include "unit.h"

/* The stand-in for bash: it reads control lines "ID GEN FLAG SPIN KEY OPTS"
 * and answers with frames of the run's key, doing what the first word of
 * each command says (ok STATUS OUT, flag, hang, stuck, die STATUS, garble,
 * forge STATUS, slowenv). */
static const char fake_shell[] =
	"#!/bin/bash\n"
	"d=${@: -1}\n"
	"trap 'aborted=1' RTMIN+3\n"
	"frame() { printf '%s%s %s\\0%s\\0%s\\0' \"$1\" \"$2\" \"${4-$key}\" "
	"\"$PWD\" \"$3\" >&201; }\n"
	"while read -r id gen flag spin key opts; do\n"
	"  read -r op a b <\"$d/r$id.cmd\"\n"
	"  exec 3>\"$d/f$gen.o\" 4>\"$d/f$gen.e\"\n"
	"  st=0\n"
	"  case $op in\n"
	"  ok) st=$a; printf '%s' \"$b\" >&3 ;;\n"
	"  flag) printf '%s' \"$flag\" >&3\n"
	"        [[ $flag == p ]] && cat \"$d/r$id.pre\" >&4 ;;\n"
	"  hang) printf hanging >&3; sleep 30 & wait $!; st=$?\n"
	"        kill $! 2>/dev/null ;;\n"
	"  stuck) trap '' RTMIN+3; printf stuck >&3; while :; do :; done ;;\n"
	"  die) printf 'X0\\0/tmp\\0\\0' >\"$d/state\"\n"
	"       echo 'declare -x DIED=\"1\"' >\"$d/env\"; exit \"$a\" ;;\n"
	"  garble) printf 'Zjunk\\0\\0\\0' >&201; exec sleep 30 ;;\n"
	"  forge) frame R 99 '' 0123456789abcdef; st=$a\n"
	"         printf 'R98\\0/\\0\\0' >&201 ;;\n"
	"  esac\n"
	"  exec 3>&- 4>&-\n"
	"  frame R \"$st\" ''\n"
	"  [[ $op == slowenv ]] && sleep 0.3\n"
	"  frame E 0 \"declare -x LAST=\\\"$id\\\"\"\n"
	"done\n";

static char base[64];
static char dir[4096];
static struct sess *S;

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-machine-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

/* ---- driving the loop ---- */

static bool is_done(void *r)
{
	return ((struct run *)r)->state == RUN_DONE;
}

static bool has_output(void *r)
{
	return ((struct run *)r)->out.size > 0;
}

static bool is_set(void *flag)
{
	return *(bool *)flag;
}

static void set_flag(void *flag)
{
	*(bool *)flag = true;
}

static bool env_known(void *s)
{
	return !((struct sess *)s)->env_pending;
}

static bool shell_gone(void *s)
{
	return ((struct sess *)s)->pid == 0;
}

/* ---- the session under test ---- */

static void setup(void)
{
	char fake[4200];
	int dfd = unit_new_dir(base, dir, sizeof(dir));

	unit_put_at(dfd, "fake-shell", fake_shell, sizeof(fake_shell) - 1);
	ck_assert_int_eq(fchmodat(dfd, "fake-shell", 0755, 0), 0);
	close(dfd);
	snprintf(fake, sizeof(fake), "%s/fake-shell", dir);
	conf_defaults();
	free(conf.shell);
	free(conf.runtime_dir);
	free(conf.workspace);
	conf.shell = strdup(fake);
	conf.runtime_dir = strdup(dir);
	conf.workspace = strdup(dir);
	conf.kill_grace_ms = 300;
	conf.shell_spin_us = 0;
	/* the fake shell ignores the driver module, but it must exist */
	shell_set_driver(SFS_TEST_DRIVER);
	ck_assert_int_eq(loop_init(), 0);
	ck_assert_int_eq(sess_init(false), 0);
	ck_assert_int_eq(sess_create("m", getuid(), getgid(), &S), 0);
}

static void teardown(void)
{
	bool gone = false;

	sess_shutdown(set_flag, &gone);
	ck_assert(pump(is_set, &gone, 5000));
	sess_fini();
}

/* Submits text to s and holds a reference to the run. */
static struct run *submit(struct sess *s, const char *text)
{
	int err;
	struct run *r = sess_submit(s, text, strlen(text), &err);

	ck_assert_msg(r != NULL, "submit: %s", strerror(-err));
	run_ref(r);
	return r;
}

/* Runs text to its end; returns the run (a reference held). */
static struct run *run_wait(struct sess *s, const char *text)
{
	struct run *r = submit(s, text);

	ck_assert_msg(pump(is_done, r, 5000), "%s did not end", text);
	return r;
}

/* r's spool file with that suffix as a string ("" when there is none). */
static char *spool(const struct run *r, const char *suffix, size_t *len)
{
	char name[64];
	char *p;

	run_file(r, suffix, name, sizeof(name));
	p = unit_slurp_at(S->dirfd, name, len);
	if (!p) {
		*len = 0;
		p = strdup("");
	}
	return p;
}

static void assert_stdout(const struct run *r, const char *want)
{
	size_t len;
	char *p = spool(r, "out", &len);

	ck_assert_str_eq(p, want);
	free(p);
}

static const char *env_value(struct sess *s, const char *name)
{
	struct envvar *v = envmap_get(&s->env, name);

	return v ? v->value : NULL;
}

/* ---- the queue ---- */

START_TEST(queue_in_order)
{
	struct run *r1 = submit(S, "ok 1 a");
	struct run *r2 = submit(S, "ok 2 b");
	struct run *r3 = submit(S, "ok 3 c");

	ck_assert_int_eq(r1->state, RUN_RUNNING);
	ck_assert_int_eq(r2->state, RUN_QUEUED);
	ck_assert_int_eq(r3->state, RUN_QUEUED);
	ck_assert(pump(is_done, r3, 5000));
	ck_assert_int_eq(r1->exit_code, 1);
	ck_assert_int_eq(r2->exit_code, 2);
	ck_assert_int_eq(r3->exit_code, 3);
	ck_assert_int_eq(r3->end, END_EXITED);
	ck_assert_int_ge(r2->started_mono, r1->ended_mono);
	ck_assert_int_ge(r3->started_mono, r2->ended_mono);
	ck_assert_int_eq(r1->pid, r3->pid); /* one shell for all */
	assert_stdout(r1, "a");
	assert_stdout(r2, "b");
	assert_stdout(r3, "c");
	ck_assert_ptr_eq(sess_latest(S), r3);
	run_unref(r1);
	run_unref(r2);
	run_unref(r3);
}
END_TEST

START_TEST(named_run)
{
	struct run *r;

	ck_assert_int_eq(sess_new_run(S, "mine", &r), 0);
	ck_assert_int_eq(sess_new_run(S, "mine", &r), -EEXIST);
	ck_assert_int_eq(sess_new_run(S, "12", &r), -EINVAL);
	r = sess_run_by_name(S, "mine");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->state, RUN_QUEUED);
	ck_assert_ptr_null(sess_latest(S)); /* no command yet */
	run_ref(r);
	ck_assert_int_eq(sess_queue_run(S, r, "ok 5", 4), 0);
	ck_assert_int_eq(sess_queue_run(S, r, "ok 6", 4), -EBUSY);
	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 5);
	ck_assert_int_eq(sess_remove_run(S, r), 0);
	ck_assert_ptr_null(sess_run_by_name(S, "mine"));
	run_unref(r);
}
END_TEST

START_TEST(history_trimmed)
{
	struct run *r[4];

	conf.history = 2;
	for (int i = 0; i < 4; i++)
		r[i] = submit(S, "ok 0");
	ck_assert(pump(is_done, r[3], 5000));
	ck_assert_uint_eq(S->nruns, 2);
	ck_assert_ptr_null(r[0]->sess); /* dropped from the history */
	ck_assert_ptr_eq(r[3]->sess, S);
	ck_assert_ptr_eq(sess_latest(S), r[3]);
	for (int i = 0; i < 4; i++)
		run_unref(r[i]);
}
END_TEST

/* Named runs are trimmed apart from numbered ones, and a named run that
 * has no command yet is kept however many finish after it. */
START_TEST(named_history_trimmed)
{
	struct run *r[5], *idle, *num;
	char name[8];

	conf.history = 2;
	ck_assert_int_eq(sess_new_run(S, "waiting", &idle), 0);
	num = submit(S, "ok 0");
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(sess_new_run(S, name, &r[i]), 0);
		run_ref(r[i]);
		ck_assert_int_eq(sess_queue_run(S, r[i], "ok 0", 4), 0);
		ck_assert(pump(is_done, r[i], 5000));
	}
	ck_assert_uint_eq(S->nnamed, 3); /* two finished, and "waiting" */
	ck_assert_ptr_eq(sess_run_by_name(S, "waiting"), idle);
	ck_assert_ptr_null(sess_run_by_name(S, "n2"));
	ck_assert_ptr_eq(sess_run_by_name(S, "n3"), r[3]);
	ck_assert_ptr_eq(sess_run_by_name(S, "n4"), r[4]);
	ck_assert_ptr_eq(num->sess, S); /* numbered runs are not pushed out */
	ck_assert_uint_eq(S->nruns, 1);
	for (int i = 0; i < 5; i++)
		run_unref(r[i]);
	run_unref(num);
}
END_TEST

/* ---- report frames and the environment ---- */

START_TEST(env_from_report)
{
	struct run *r = run_wait(S, "ok 0");
	char want[32];

	ck_assert(pump(env_known, S, 5000));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)r->id);
	ck_assert_str_eq(env_value(S, "LAST"), want); /* from the E frame */
	ck_assert_str_eq(S->cwd, dir);		      /* from the R frame */
	run_unref(r);
}
END_TEST

START_TEST(next_run_waits_for_env)
{
	struct run *r1 = submit(S, "slowenv");
	struct run *r2 = submit(S, "ok 4");

	ck_assert(pump(is_done, r1, 5000));
	/* R came, E is 0.3 s behind it: r2 may not start before it */
	ck_assert_int_eq(S->env_pending, true);
	ck_assert_int_eq(r2->state, RUN_QUEUED);
	ck_assert(pump(is_done, r2, 5000));
	ck_assert_int_eq(r2->exit_code, 4);
	ck_assert_int_ge(r2->started_mono, r1->ended_mono + 250);
	run_unref(r1);
	run_unref(r2);
}
END_TEST

START_TEST(prelude_sent_once)
{
	static const char rec[] = "S\0FOO\0bar\0";
	struct run *r;
	size_t len;
	char *pre;

	run_unref(run_wait(S, "ok 0")); /* a new shell takes all from envp */
	ck_assert_int_eq(sess_setenv(S, "FOO", "bar", 3), 0);
	ck_assert_int_eq(sess_setenv(S, "1X", "v", 1), -EINVAL);
	r = run_wait(S, "flag");
	assert_stdout(r, "p");
	pre = spool(r, "err", &len);
	ck_assert_uint_eq(len, sizeof(rec) - 1);
	ck_assert_mem_eq(pre, rec, len);
	free(pre);
	run_unref(r);
	r = run_wait(S, "flag");
	assert_stdout(r, "-"); /* nothing pending any more */
	run_unref(r);
}
END_TEST

START_TEST(garbled_report)
{
	struct run *r = submit(S, "garble");
	size_t len;
	char *errs;

	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 128 + SIGKILL);
	errs = sess_errors_text(S, &len);
	ck_assert_ptr_nonnull(strstr(errs, "garbled report"));
	free(errs);
	run_unref(r);
	r = run_wait(S, "ok 0");
	ck_assert_int_eq(r->exit_code, 0);
	run_unref(r);
}
END_TEST

/* Frames without the run's key (a wrong one, none) are not the
 * driver's: dropped, said, and the run ends with its own report. */
START_TEST(forged_report)
{
	struct run *r = submit(S, "forge 5");
	size_t len;
	char *errs;

	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 5);
	errs = sess_errors_text(S, &len);
	ck_assert_ptr_nonnull(strstr(errs, "not the shell driver's"));
	free(errs);
	run_unref(r);
	r = run_wait(S, "ok 3");
	ck_assert_int_eq(r->exit_code, 3);
	run_unref(r);
}
END_TEST

/* ---- shell death ---- */

START_TEST(shell_death)
{
	struct run *r = run_wait(S, "ok 0");
	long pid = r->pid;

	run_unref(r);
	r = run_wait(S, "die 7");
	ck_assert_int_eq(r->exit_code, 7);
	ck_assert_int_eq(r->end, END_EXITED);
	ck_assert(pump(shell_gone, S, 5000));
	/* what its EXIT trap left carries over */
	ck_assert_str_eq(S->cwd, "/tmp");
	ck_assert_str_eq(env_value(S, "DIED"), "1");
	run_unref(r);
	r = run_wait(S, "ok 3");
	ck_assert_int_eq(r->exit_code, 3);
	ck_assert_int_ne(r->pid, pid); /* a fresh shell */
	run_unref(r);
}
END_TEST

/* ---- kill, timeout, reset ---- */

START_TEST(kill_run)
{
	struct run *r = submit(S, "hang");
	pid_t pid = S->pid;

	ck_assert(pump(has_output, r, 5000)); /* it hangs now */
	ck_assert_int_eq(sess_kill_run(S, SIGTERM, END_KILLED), 0);
	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 128 + SIGTERM);
	ck_assert_int_eq(r->end, END_KILLED);
	ck_assert_int_eq(r->sig, SIGTERM);
	ck_assert_int_eq(S->pid, pid); /* the shell let go and lives */
	ck_assert_int_eq(sess_kill_run(S, SIGTERM, END_KILLED), -ESRCH);
	run_unref(r);
}
END_TEST

START_TEST(timeout_run)
{
	struct run *r;

	S->timeout_ms = 150;
	r = submit(S, "hang");
	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 124);
	ck_assert_int_eq(r->end, END_TIMEDOUT);
	ck_assert_uint_eq(r->eff_timeout_ms, 150);
	ck_assert_int_ge(r->ended_mono - r->started_mono, 150);
	run_unref(r);
}
END_TEST

START_TEST(stuck_shell_replaced)
{
	struct run *r = submit(S, "stuck");
	pid_t pid = S->pid;

	ck_assert(pump(has_output, r, 5000));
	ck_assert_int_eq(sess_kill_run(S, SIGTERM, END_KILLED), 0);
	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->exit_code, 128 + SIGTERM);
	ck_assert_int_eq(r->end, END_KILLED);
	ck_assert_int_ne(S->pid, pid);
	run_unref(r);
	r = run_wait(S, "ok 2");
	ck_assert_int_eq(r->exit_code, 2);
	ck_assert_int_ne(r->pid, pid);
	run_unref(r);
}
END_TEST

START_TEST(reset_idle)
{
	struct run *r = run_wait(S, "ok 0");
	long pid = r->pid;

	run_unref(r);
	ck_assert_int_ne(S->pid, 0);
	sess_reset(S);
	ck_assert_int_eq(S->pid, 0);
	r = run_wait(S, "ok 0");
	ck_assert_int_ne(r->pid, pid);
	run_unref(r);
}
END_TEST

START_TEST(reset_running)
{
	struct run *r = submit(S, "hang");

	ck_assert(pump(has_output, r, 5000));
	sess_reset(S);
	ck_assert(pump(is_done, r, 5000));
	ck_assert_int_eq(r->end, END_KILLED);
	ck_assert_int_eq(S->pid, 0); /* retired once the run ended */
	run_unref(r);
}
END_TEST

/* ---- deletion and killall ---- */

START_TEST(delete_running)
{
	struct sess *d;
	struct run *r, *q;
	bool gone = false;

	ck_assert_int_eq(sess_create("d", getuid(), getgid(), &d), 0);
	r = submit(d, "hang");
	q = submit(d, "ok 0");
	ck_assert(pump(has_output, r, 5000));
	ck_assert_int_eq(sess_delete(d, set_flag, &gone), 0);
	ck_assert_int_eq(q->state, RUN_DONE); /* the queued one at once */
	ck_assert_int_eq(q->end, END_CANCELED);
	ck_assert_int_eq(sess_delete(d, set_flag, &gone), -EBUSY);
	ck_assert(pump(is_set, &gone, 5000));
	ck_assert_int_eq(r->state, RUN_DONE);
	ck_assert_ptr_null(r->sess);
	ck_assert_ptr_null(sess_find("d"));
	run_unref(r);
	run_unref(q);
}
END_TEST

START_TEST(killall_waits)
{
	struct run *r = submit(S, "hang");
	bool done = false;

	ck_assert(pump(has_output, r, 5000));
	sess_killall(set_flag, &done);
	ck_assert(pump(is_set, &done, 5000));
	ck_assert_int_eq(r->state, RUN_DONE);
	ck_assert_int_eq(r->end, END_KILLED);
	run_unref(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("machine");
	TCase *tc = tcase_create("machine");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, queue_in_order);
	tcase_add_test(tc, named_run);
	tcase_add_test(tc, history_trimmed);
	tcase_add_test(tc, named_history_trimmed);
	tcase_add_test(tc, env_from_report);
	tcase_add_test(tc, next_run_waits_for_env);
	tcase_add_test(tc, prelude_sent_once);
	tcase_add_test(tc, garbled_report);
	tcase_add_test(tc, forged_report);
	tcase_add_test(tc, shell_death);
	tcase_add_test(tc, kill_run);
	tcase_add_test(tc, timeout_run);
	tcase_add_test(tc, stuck_shell_replaced);
	tcase_add_test(tc, reset_idle);
	tcase_add_test(tc, reset_running);
	tcase_add_test(tc, delete_running);
	tcase_add_test(tc, killall_waits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
