/* test_fam.c - what the file families share: bytes written at offsets
 * (cmd), truncation, lines carried out all or nothing (ctl), and the
 * bytes of a parked write. */
#include <errno.h>
#include <stddef.h>
#include "conf/conf.h"
#include "fs/fam.h"
#include "fs/fam_run.h"
#include "unit.h"

static struct fent row = { "cmd", FT_CMD, FENT_RW, NULL, 0, HOME_DIR, NULL };

static struct fh *fresh(void)
{
	struct fh *fh = calloc(1, sizeof(*fh));

	ck_assert_ptr_nonnull(fh);
	fh->fe = &row;
	return fh;
}

static void drop(struct fh *fh)
{
	free(fh->w.p);
	free(fh);
}

static void want(const struct fh *fh, const char *bytes, size_t len)
{
	ck_assert_uint_eq(fh->w.len, len);
	ck_assert(memcmp(fh->w.p, bytes, len) == 0);
}

/* Writes land at their offsets; a gap is NUL bytes; O_APPEND appends. */
START_TEST(write_at)
{
	struct fh *fh = fresh();

	ck_assert_int_eq(fam_write_at(fh, NULL, "echo AAAA\n", 10, 0), 0);
	ck_assert_int_eq(fam_write_at(fh, NULL, "BB", 2, 5), 0);
	want(fh, "echo BBAA\n", 10);
	ck_assert_int_eq(fam_write_at(fh, NULL, "x", 1, 13), 0);
	want(fh, "echo BBAA\n\0\0\0x", 14);
	ck_assert_int_eq(fam_write_at(fh, NULL, "yz", 2, 13), 0);
	want(fh, "echo BBAA\n\0\0\0yz", 15);
	fh->flags = O_WRONLY | O_APPEND;
	ck_assert_int_eq(fam_write_at(fh, NULL, "!", 1, 2), 0);
	want(fh, "echo BBAA\n\0\0\0yz!", 16);
	drop(fh);
}
END_TEST

START_TEST(resize)
{
	struct fh *fh = fresh();

	ck_assert_int_eq(fam_write_at(fh, NULL, "echo one\n", 9, 0), 0);
	ck_assert_int_eq(fam_resize(fh, NULL, 4), 0);
	want(fh, "echo", 4);
	ck_assert_int_eq(fam_resize(fh, NULL, 6), 0);
	want(fh, "echo\0\0", 6);
	ck_assert_int_eq(fam_resize(fh, NULL, -1), -EINVAL);
	drop(fh);
}
END_TEST

/* Past max_command_bytes: E2BIG, sticky, wherever the bytes land. */
START_TEST(too_long)
{
	struct fh *fh = fresh();

	ck_assert_int_eq(fam_write_at(fh, NULL, "ab", 2, 99), -E2BIG);
	ck_assert_int_eq(fh->werr, E2BIG);
	ck_assert_uint_eq(fh->w.len, 0);
	ck_assert_int_eq(fam_resize(fh, NULL, 101), -E2BIG);
	drop(fh);
}
END_TEST

static char done[256];

/* "bad" is refused; anything else is recorded when applied. */
static int line(struct fh *fh, struct sess *s, const char *l, size_t len,
		bool apply)
{
	(void)fh;
	(void)s;
	if (len == 3 && memcmp(l, "bad", 3) == 0)
		return -EINVAL;
	if (apply)
		snprintf(done + strlen(done), sizeof(done) - strlen(done),
			 "%.*s;", (int)len, l);
	return 0;
}

START_TEST(lines_all_or_nothing)
{
	struct fh *fh = fresh();

	done[0] = '\0';
	sb_add(&fh->w, "a\nb\npart", 8);
	ck_assert_int_eq(fam_lines(fh, NULL, false, line), 0);
	ck_assert_str_eq(done, "a;b;");
	want(fh, "part", 4); /* a line without its newline waits */
	sb_add(&fh->w, "\nbad\nkill\n", 10);
	ck_assert_int_eq(fam_lines(fh, NULL, false, line), -EINVAL);
	ck_assert_str_eq(done, "a;b;"); /* not part, not kill */
	ck_assert_uint_eq(fh->w.len, 0);
	ck_assert_int_eq(fh->werr, EINVAL);
	drop(fh);
}
END_TEST

START_TEST(lines_at_close)
{
	struct fh *fh = fresh();

	done[0] = '\0';
	sb_add(&fh->w, "x\n\ny", 4);
	ck_assert_int_eq(fam_lines(fh, NULL, true, line), 0);
	ck_assert_str_eq(done, "x;y;");
	ck_assert_uint_eq(fh->w.len, 0);
	drop(fh);
}
END_TEST

static char seen[4];
static int tries;

static bool take(struct park *p)
{
	memcpy(seen, p->data, p->size);
	return ++tries == 2;
}

/* A parked write keeps a copy of its bytes (libfuse's buffer is gone
 * once the handler returns), until its retry answers. */
START_TEST(park_keeps_data)
{
	struct list waiters = LIST_INIT(waiters);
	char buf[] = "abc";
	struct park how = { .size = 3, .data = buf, .retry = take };
	struct park *p = park_add(&waiters, &how);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_ne(p->data, buf);
	memcpy(buf, "xyz", 3);
	park_wake_list(&waiters);
	ck_assert(memcmp(seen, "abc", 3) == 0);
	ck_assert(!list_empty(&waiters));
	park_wake_list(&waiters);
	ck_assert_int_eq(tries, 2);
	ck_assert(list_empty(&waiters));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fam");
	TCase *tc = tcase_create("written");

	tcase_add_test(tc, write_at);
	tcase_add_test(tc, resize);
	tcase_add_test(tc, too_long);
	tcase_add_test(tc, lines_all_or_nothing);
	tcase_add_test(tc, lines_at_close);
	tcase_add_test(tc, park_keeps_data);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	conf.max_command_bytes = 100;
	return unit_run(suite());
}
