/*
 * test_ttystate.c - a session's terminal on a real PTY (bash -i) saved by
 * its part's save into a state's bytes and made again in the same
 * process by its kind's restore (ttystate.c), as the next program of an
 * upgrade makes it: into another session, the old terminal taken off the
 * loop first. Restored with its descriptors, its screen, scrollback,
 * cursor, title and status are the same and its shell (the same pid)
 * answers what is typed; restored with none (a restart after a crash),
 * it is an exited terminal that keeps its screen and says so in one
 * error line; a malformed object is refused or made blank, never a
 * crash.
 */
#include <errno.h>
#include <signal.h>
#include "conf/conf.h"
#include "sessions/core/loop.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "sessions/tty/tty.h"
#include "pump.h"
#include "unit.h"

static char base[64];
static char dir[4096];
static struct sess *S;

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-ttystate-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

/* ---- driving the loop ---- */

static bool is_set(void *flag)
{
	return *(bool *)flag;
}

static void set_flag(void *flag)
{
	*(bool *)flag = true;
}

/* What a screen must show, for shows(). */
struct want {
	struct tty *t;
	const char *text;
};

static bool shows(void *arg)
{
	struct want *w = arg;
	char *s = w->t->term ? term_screen(w->t->term, &(size_t){ 0 }) : NULL;
	bool yes = s && strstr(s, w->text);

	free(s);
	return yes;
}

static void setup(void)
{
	conf_defaults();
	free(conf.shell);
	free(conf.runtime_dir);
	free(conf.workspace);
	unit_new_dir(base, dir, sizeof(dir));
	conf.shell = strdup("/bin/bash");
	conf.runtime_dir = strdup(dir);
	conf.workspace = strdup(dir);
	conf.kill_grace_ms = 300;
	shell_set_driver(SFS_TEST_DRIVER);
	ck_assert_int_eq(loop_init(), 0);
	ck_assert_int_eq(sess_init(NULL), 0);
	ck_assert_int_eq(sess_create("a", getuid(), getgid(), &S), 0);
}

static void teardown(void)
{
	bool gone = false;

	sess_shutdown(set_flag, &gone);
	ck_assert(pump(is_set, &gone, 10000));
	sess_fini();
}

/* A terminal of S with lines that scrolled off, a title and a prompt. */
static struct tty *started(void)
{
	static const char typed[] =
		"PS1='tt> '; for i in $(seq 1 40); do echo line-$i; done; "
		"printf '\\033]2;the title\\007\\033[1;32mgreen\\033[0m\\n'\n";
	struct tty *t = tty_of(S);
	struct want w = { t, "\ngreen\ntt>" }; /* not the typed line */

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tty_start(t), 0);
	ck_assert_int_eq(tty_input(t, typed, sizeof(typed) - 1), 0);
	ck_assert_msg(pump(shows, &w, 10000), "the shell printed nothing");
	return t;
}

/* t saved, its bytes copied (as the next program reads them): o. */
static void *saved(struct tty *t, struct state_w *w, struct state_r *o)
{
	struct state_r root;
	const void *p;
	size_t len;
	void *copy;

	state_w_init(w);
	tty_save(t, w);
	ck_assert_int_eq(state_w_bytes(w, &p, &len), 0);
	copy = malloc(len);
	memcpy(copy, p, len);
	ck_assert_int_eq(state_check(copy, len, &root), 0);
	ck_assert(state_obj(&root, TTY_PART_KEY, o));
	return copy;
}

/* What an execve leaves of the old terminal: nothing in the loop; its
 * descriptors and shell are the restored one's now. */
static void forget(struct tty *t)
{
	if (t->watched)
		loop_del(&t->master);
	t->watched = false;
	reap_del(&t->reap);
	loop_timer_del(&t->retry);
	loop_timer_del(&t->more);
	loop_timer_del(&t->settle);
	t->master.fd = t->cast.fd = t->out->out.fd = t->out->all.fd = -1;
	t->pid = t->cg.leader = 0;
	t->has_cg = false;
	t->state = TTY_EXITED; /* nothing of it is signalled */
}

static void same_views(struct tty *a, struct tty *b)
{
	char *x, *y;
	int ra, ca, rb, cb;
	bool va, vb;

	x = term_screen(a->term, &(size_t){ 0 });
	y = term_screen(b->term, &(size_t){ 0 });
	ck_assert_str_eq(x, y);
	free(x);
	free(y);
	x = term_scrollback(a->term, &(size_t){ 0 });
	y = term_scrollback(b->term, &(size_t){ 0 });
	ck_assert_str_eq(x, y);
	ck_assert_msg(strstr(y, "line-3\n") != NULL, "scrollback: %s", y);
	free(x);
	free(y);
	term_cursor(a->term, &ra, &ca, &va);
	term_cursor(b->term, &rb, &cb, &vb);
	ck_assert(ra == rb && ca == cb && va == vb);
	ck_assert_str_eq(term_title(b->term), "the title");
	ck_assert_str_eq(term_title(a->term), term_title(b->term));
}

START_TEST(live_restore)
{
	struct tty *t = started(), *n;
	const struct sess_part_kind *k = sess_part_kind_of(TTY_PART_KEY);
	struct state_w w;
	struct state_r o;
	struct sess *s2;
	pid_t pid = t->pid;
	void *bytes = saved(t, &w, &o);

	ck_assert_ptr_eq(k, tty_part_kind()); /* known from the start */
	ck_assert_int_eq(sess_create("b", getuid(), getgid(), &s2), 0);
	forget(t);
	/* the next program has none of this one's objects: the id is free */
	objs_del(t->out->id);
	ck_assert_int_eq(k->restore(s2, &o), 0);
	n = s2->tty;
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->state, TTY_RUNNING);
	ck_assert_int_eq(n->pid, pid);
	ck_assert(n->out && n->out->id == t->out->id && n->out->is_tty);
	same_views(t, n);
	ck_assert_str_eq(n->out->name, "tty");
	state_w_free(&w);
	free(bytes);
}
END_TEST

START_TEST(typed_after_restore)
{
	struct tty *t = started(), *n;
	struct state_w w;
	struct state_r o;
	struct sess *s2;
	pid_t pid = t->pid;
	void *bytes = saved(t, &w, &o);
	struct want typed;

	ck_assert_int_eq(sess_create("b", getuid(), getgid(), &s2), 0);
	forget(t);
	ck_assert_int_eq(tty_part_kind()->restore(s2, &o), 0);
	n = s2->tty;
	typed = (struct want){ n, "typed-42" };
	ck_assert_int_eq(tty_input(n, "echo typed-$((6*7))\n", 20), 0);
	ck_assert_msg(pump(shows, &typed, 10000), "the restored shell is mute");
	ck_assert_int_eq(n->pid, pid);
	ck_assert_int_eq(kill(pid, 0), 0);
	state_w_free(&w);
	free(bytes);
}
END_TEST

/* Moves each descriptor of w away (to_high) or back. */
static void move_fds(struct state_w *w, int *high, bool to_high)
{
	for (size_t i = 0; i < w->nfds; i++) {
		if (to_high) {
			high[i] = fcntl(w->fds[i], F_DUPFD_CLOEXEC, 500);
			close(w->fds[i]);
		} else {
			dup2(high[i], w->fds[i]);
			close(high[i]);
		}
	}
}

START_TEST(restore_without_descriptors)
{
	struct tty *t = started(), *n;
	struct state_w w;
	struct state_r o;
	struct sess *s2;
	int high[16];
	void *bytes = saved(t, &w, &o);
	char *err;

	ck_assert_uint_le(w.nfds, 16);
	ck_assert_uint_ge(w.nfds, 2); /* the master, the recording at least */
	ck_assert_int_eq(sess_create("b", getuid(), getgid(), &s2), 0);
	move_fds(&w, high, true); /* a crash: none was handed over */
	ck_assert_int_eq(tty_part_kind()->restore(s2, &o), 0);
	move_fds(&w, high, false);
	n = s2->tty;
	ck_assert_int_eq(n->state, TTY_EXITED);
	ck_assert_int_eq(n->pid, 0);
	ck_assert_int_eq(n->master.fd, -1);
	ck_assert_int_eq(n->out->state, RUN_DONE);
	same_views(t, n);
	err = sess_errors_text(s2, &(size_t){ 0 });
	ck_assert_ptr_nonnull(strstr(err, "tty: its terminal was lost"));
	free(err);
	ck_assert_int_eq(tty_input(n, "x", 1), -EIO);
	state_w_free(&w);
	free(bytes);
}
END_TEST

START_TEST(malformed)
{
	struct state_w w;
	struct state_r root, o;
	const void *p;
	size_t len;
	struct sess *s2;

	ck_assert_int_eq(sess_create("b", getuid(), getgid(), &s2), 0);
	state_w_init(&w);
	state_open(&w, TTY_PART_KEY);
	state_put_i64(&w, 1, 1);	/* running */
	state_put_i64(&w, 2, getpid()); /* a pid not its child */
	state_put_i64(&w, 5, 1 << 20);	/* cols out of bounds */
	state_put_i64(&w, 7, 0);	/* fd 0: not a PTY's */
	state_put(&w, 12, "(", 1);	/* an expect that does not compile */
	state_open(&w, 34);		/* a screen of junk */
	state_put(&w, 1, "\033[999;999H\033]0;x", 15);
	state_close(&w);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	ck_assert_int_eq(state_check(p, len, &root), 0);
	ck_assert(state_obj(&root, TTY_PART_KEY, &o));
	/* running with no output run: gone, an error line, never a crash */
	ck_assert_int_eq(tty_part_kind()->restore(s2, &o), 0);
	ck_assert_int_ne(s2->tty->state, TTY_RUNNING);
	ck_assert_int_eq(s2->tty->pid, 0);
	ck_assert_int_eq(s2->tty->cols, 80);
	ck_assert_int_ge(fcntl(0, F_GETFD), 0); /* fd 0 was not taken */
	ck_assert_int_eq(tty_part_kind()->restore(s2, &o), -EEXIST);
	state_w_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ttystate");
	TCase *tc = tcase_create("ttystate");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, live_restore);
	tcase_add_test(tc, typed_after_restore);
	tcase_add_test(tc, restore_without_descriptors);
	tcase_add_test(tc, malformed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
