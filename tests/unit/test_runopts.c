/* test_runopts.c - a run's own options (sessions/session/runopts.c):
 * taken only before its cmd, its stdin file and bound, the control
 * line's letters, the options file, the environment of a process,
 * status and result.json, and an upgrade's round trip. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include "sessions/core/state.h"
#include "sessions/session/run.h"
#include "sessions/session/runopts.h"
#include "sessions/session/spool.h"
#include "unit.h"

static int dirfd_tmp(char *dir, size_t cap)
{
	int fd;

	snprintf(dir, cap, "/tmp/unit-runopts.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static char *status_of(const struct run *r)
{
	struct strbuf b = { 0 };
	size_t len;

	runopts_status(r, &b);
	runopts_json(r, &b);
	return sb_take(&b, &len);
}

START_TEST(env_and_cwd)
{
	struct run *r = run_new_empty();
	char *text;

	ck_assert_str_eq(runopts_flags(r), "-");
	ck_assert_uint_eq(runopts_env(r)->n, 0);
	text = status_of(r);
	ck_assert_str_eq(text ? text : "", "");
	free(text);
	ck_assert_int_eq(runopts_setenv(r, "B", "two", 3), 0);
	ck_assert_int_eq(runopts_setenv(r, "A", "", 0), 0);
	ck_assert_int_eq(runopts_set_cwd(r, "/x/\"y"), 0);
	ck_assert_str_eq(runopts_flags(r), "o");
	text = status_of(r);
	ck_assert_str_eq(text, "env -A B\ncwd /x/\"y\n,\"options\":{\"env\":"
			       "{\"A\":null,\"B\":\"two\"},\"cwd\":\"/x/"
			       "\\\"y\",\"stdinBytes\":null}");
	free(text);
	ck_assert_int_eq(runopts_forget(r, "A"), 0);
	ck_assert_int_eq(runopts_forget(r, "A"), -ENOENT);
	r->has_cmd = true;
	ck_assert_int_eq(runopts_setenv(r, "C", "x", 1), -EBUSY);
	ck_assert_int_eq(runopts_forget(r, "B"), -EBUSY);
	ck_assert_int_eq(runopts_set_cwd(r, "/"), -EBUSY);
	run_unref(r);
}
END_TEST

START_TEST(process_env)
{
	struct run *r = run_new_empty();
	struct envmap base;
	char **envp;

	envmap_init(&base, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_set(&base, "KEEP", "k", 1), 0);
	ck_assert_int_eq(envmap_set(&base, "GONE", "g", 1), 0);
	ck_assert_int_eq(envmap_set(&base, "OVER", "old", 3), 0);
	ck_assert_int_eq(runopts_setenv(r, "GONE", "", 0), 0);
	ck_assert_int_eq(runopts_setenv(r, "OVER", "new", 3), 0);
	ck_assert_int_eq(runopts_setenv(r, "ADD", "a\nb", 3), 0);
	envp = runopts_envp(r, &base);
	ck_assert_ptr_nonnull(envp);
	ck_assert_str_eq(envp[0], "ADD=a\nb");
	ck_assert_str_eq(envp[1], "KEEP=k");
	ck_assert_str_eq(envp[2], "OVER=new");
	ck_assert_ptr_null(envp[3]);
	envmap_envp_free(envp);
	envmap_free(&base);
	run_unref(r);
}
END_TEST

START_TEST(stdin_file)
{
	struct run *r = run_new_empty();
	char dir[64], name[64], buf[16];
	int dfd = dirfd_tmp(dir, sizeof(dir)), fd;

	ck_assert_int_eq(
		runopts_write_stdin(r, dfd, getuid(), getgid(), "ab\0c", 4, 0),
		0);
	ck_assert_int_eq(
		runopts_write_stdin(r, dfd, getuid(), getgid(), "d", 1, -1), 0);
	ck_assert_uint_eq(r->opts->stdin_len, 5);
	ck_assert_str_eq(runopts_flags(r), "i");
	ck_assert_int_eq(runopts_write_stdin(r, dfd, getuid(), getgid(), "x", 1,
					     RUNOPTS_STDIN_MAX),
			 -EFBIG);
	snprintf(name, sizeof(name), "r%llu.in", (unsigned long long)r->id);
	fd = openat(dfd, name, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 5);
	ck_assert_mem_eq(buf, "ab\0cd", 5);
	close(fd);
	ck_assert_int_eq(runopts_truncate_stdin(r, dfd, getuid(), getgid(), 2),
			 0);
	ck_assert_uint_eq(r->opts->stdin_len, 2);
	ck_assert_int_eq(runopts_setenv(r, "V", "v", 1), 0);
	ck_assert_str_eq(runopts_flags(r), "oi");
	ck_assert_int_eq(runopts_write_file(r, dfd, getuid(), getgid()), 0);
	ck_assert(r->files & RUN_F_OPT);
	ck_assert(r->files & RUN_F_IN);
	/* it counts in the spools' budget until its run has ended */
	ck_assert_uint_eq(spool_used(), 2);
	spool_set_budget(4);
	ck_assert_int_eq(
		runopts_write_stdin(r, dfd, getuid(), getgid(), "xyz", 3, 2),
		-ENOSPC);
	ck_assert_uint_eq(r->opts->stdin_len, 2);
	ck_assert_uint_eq(spool_used(), 2);
	spool_set_budget(0);
	runopts_done(r);
	ck_assert_uint_eq(spool_used(), 0);
	ck_assert_uint_eq(r->opts->stdin_len, 2);
	unlinkat(dfd, name, 0);
	snprintf(name, sizeof(name), "r%llu.opt", (unsigned long long)r->id);
	unlinkat(dfd, name, 0);
	close(dfd);
	rmdir(dir);
	run_unref(r);
}
END_TEST

START_TEST(upgrade_round_trip)
{
	struct run *r = run_new_empty(), *back = run_new_empty();
	struct state_w w;
	struct state_r root, o;
	const void *p;
	size_t len;
	void *copy;
	char *a, *b;

	ck_assert_int_eq(runopts_setenv(r, "X", "1 2", 3), 0);
	ck_assert_int_eq(runopts_setenv(r, "Y", "", 0), 0);
	ck_assert_int_eq(runopts_set_cwd(r, "/tmp"), 0);
	state_w_init(&w);
	state_open(&w, 5);
	runopts_save(r, &w, 7);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	copy = malloc(len);
	memcpy(copy, p, len);
	state_w_free(&w);
	ck_assert_int_eq(state_check(copy, len, &root), 0);
	ck_assert(state_obj(&root, 5, &o));
	runopts_restore(back, &o, 7);
	a = status_of(r);
	b = status_of(back);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	free(copy);
	run_unref(r);
	run_unref(back);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("runopts");
	TCase *tc = tcase_create("runopts");

	tcase_add_test(tc, env_and_cwd);
	tcase_add_test(tc, process_env);
	tcase_add_test(tc, stdin_file);
	tcase_add_test(tc, upgrade_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
