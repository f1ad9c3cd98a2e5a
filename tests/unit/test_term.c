/* test_term.c - the screen of tty/ (term.c): what patterns expect may
 * take, the screen's version, a match (once per version, a tenth of the
 * time at most), and 2 columns with wide
 * characters (1 crashes libvterm 0.1.4, hence the minimum). */
#include <errno.h>
#include <regex.h>
#include "sessions/term.h"
#include "unit.h"

/* term_pattern_check of s, copied so that it ends at an inaccessible
 * page. */
static int check_pat(const char *s)
{
	struct guarded g;
	size_t len = strlen(s);
	const char *p = guard_copy(&g, s, len);
	int rc = term_pattern_check(p, len);

	guard_free(&g);
	return rc;
}

START_TEST(patterns)
{
	char big[TERM_PATTERN_MAX + 2];

	ck_assert_int_eq(check_pat("^\\$ $"), 0);
	ck_assert_int_eq(check_pat("(a*)*(a*)*z"), 0);
	ck_assert_int_eq(check_pat("^a{70}$"), 0);
	ck_assert_int_eq(check_pat("[\\1]x \\\\1 [[:digit:]]{3}"), 0);
	ck_assert_int_eq(check_pat("a{1,"), 0);
	ck_assert_int_eq(check_pat("(a*)*(a*)*(a*)*\\3\\2\\1z"), -ENOTSUP);
	ck_assert_int_eq(check_pat("(x)\\1"), -ENOTSUP);
	ck_assert_int_eq(check_pat("(a{1,100}){1,100}z"), -E2BIG);
	ck_assert_int_eq(check_pat("a{1,1000}"), -E2BIG);
	ck_assert_int_eq(check_pat("((a{2}){2}){2}"), 0);
	ck_assert_int_eq(check_pat("(((a{9}){9}){9}){9}"), -E2BIG);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(check_pat(big), -E2BIG);
	big[TERM_PATTERN_MAX] = '\0';
	ck_assert_int_eq(check_pat(big), 0); /* 1 KiB of plain atoms */
}
END_TEST

static void drop(void *arg, const char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
}

START_TEST(versions_and_match)
{
	struct term *a = term_new(80, 24, 10, drop, NULL);
	struct term *b = term_new(80, 24, 10, drop, NULL);
	uint64_t va = term_version(a);
	regex_t re;
	size_t len;
	char *line;

	ck_assert_uint_ne(va, term_version(b));
	ck_assert_int_eq(regcomp(&re, "^h.$", REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_ptr_null(term_match(a, &re, &len));
	term_feed(a, "hi\r\n", 4);
	ck_assert_uint_gt(term_version(a), va);
	line = term_match(a, &re, &len);
	ck_assert_str_eq(line, "hi\n");
	free(line);
	va = term_version(a);
	term_resize(a, 40, 10);
	ck_assert_uint_gt(term_version(a), va);
	regfree(&re);
	ck_assert_int_eq(regcomp(&re, "^never$", REG_EXTENDED | REG_NOSUB), 0);
	{
		struct term_seen seen = { 0 };
		int64_t retry;

		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_uint_eq(seen.version, term_version(a));
		seen.after_us = INT64_MAX - 1000; /* the last try was costly */
		term_feed(a, "x", 1);
		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_int_gt(retry, 0);
		ck_assert_uint_ne(seen.version, term_version(a));
		seen.after_us = 0;
		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_int_eq(retry, 0);
		ck_assert_uint_eq(seen.version, term_version(a));
	}
	regfree(&re);
	term_free(a);
	term_free(b);
}
END_TEST

START_TEST(two_columns_wide)
{
	struct term *t = term_new(80, 24, 10, drop, NULL);
	const char wide[] = "\xe4\xb8\xad\xe4\xb8\xad x\xe4\xb8\xad\r\n";
	size_t len;
	char *s;

	for (int i = 0; i < 30; i++)
		term_feed(t, wide, sizeof(wide) - 1);
	term_resize(t, 2, 5);
	for (int i = 0; i < 30; i++)
		term_feed(t, wide, sizeof(wide) - 1);
	term_resize(t, 3, 5);
	term_resize(t, 2, 2);
	term_feed(t, "\xe4\xb8\xad\033[1;2H\xe4\xb8\xad\033[@\033[P", 15);
	s = term_screen(t, &len);
	ck_assert_ptr_nonnull(s);
	free(s);
	s = term_scrollback(t, &len);
	ck_assert_ptr_nonnull(s);
	free(s);
	term_free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("term");
	TCase *tc = tcase_create("term");

	tcase_add_test(tc, patterns);
	tcase_add_test(tc, versions_and_match);
	tcase_add_test(tc, two_columns_wide);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
