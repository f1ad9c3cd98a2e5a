/* test_safepath.c - a directory found by the walk of safepath.c: names,
 * "." and "..", links relative and absolute, loops, files on the way, and
 * the stop at the mount (here: a temporary directory as the mount). */
#include <errno.h>
#include <limits.h>
#include "sessions/safepath.h"
#include "unit.h"

static char top[PATH_MAX];

static void mk(const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static void touch(const char *rel)
{
	char p[PATH_MAX * 2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* safepath_dir of top/rel */
static int dir(const char *rel, bool *on_mount)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return safepath_dir(p, on_mount);
}

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/sfs-safepath.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	mk("a");
	mk("a/b");
	ln("a/b", "rel");
	ln("/nonexistent/x", "dangling");
	ln("loop", "loop");
	ln("../a", "a/up");
	touch("file");
	ln("file", "tofile");
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(found)
{
	bool m;

	ck_assert_int_eq(safepath_dir("/", &m), 0);
	ck_assert(!m);
	ck_assert_int_eq(dir("a/b", &m), 0);
	ck_assert_int_eq(dir("a//b/", &m), 0);
	ck_assert_int_eq(dir("a/./b/..", &m), 0);
	ck_assert_int_eq(dir("rel", &m), 0);
	ck_assert_int_eq(dir("rel/../b", &m), 0);
	ck_assert_int_eq(dir("a/up/b", &m), 0);
	ck_assert(!m);
}
END_TEST

START_TEST(refused)
{
	bool m;

	ck_assert_int_eq(dir("none", &m), -ENOENT);
	ck_assert_int_eq(dir("dangling", &m), -ENOENT);
	ck_assert_int_eq(dir("loop", &m), -ELOOP);
	ck_assert_int_eq(dir("file", &m), -ENOTDIR);
	ck_assert_int_eq(dir("tofile", &m), -ENOTDIR);
	ck_assert_int_eq(dir("file/a", &m), -ENOTDIR);
	ck_assert_int_eq(safepath_dir("relative/path", &m), -EINVAL);
}
END_TEST

/* With top's device as "the mount", the walk stops on reaching it and
 * says so; what lies below is not looked at. */
START_TEST(stops_at_mount)
{
	bool m;

	ck_assert_int_eq(safepath_set_mount(top), 0);
	ck_assert_int_eq(dir("none/at/all", &m), 0);
	ck_assert(m);
	safepath_set_mount(NULL);
	ck_assert_int_eq(dir("none/at/all", &m), -ENOENT);
	ck_assert(!m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("safepath");
	TCase *tc = tcase_create("walk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, found);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, stops_at_mount);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
