/* test_pattern.c - the patterns of expect files (sessions/core/pattern.c):
 * what a pattern may be, its timeout, its compilation and its errors,
 * and the search of a growing file's lines: resumed where it stopped,
 * an unfinished line tried only once the file is complete, a line
 * longer than PATTERN_LINE_MAX matched on its start and passed over. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sessions/core/pattern.h"
#include "unit.h"

/* pattern_check of s, copied so that it ends at an inaccessible
 * page. */
static int check_pat(const char *s)
{
	struct guarded g;
	size_t len = strlen(s);
	const char *p = guard_copy(&g, s, len);
	int rc = pattern_check(p, len);

	guard_free(&g);
	return rc;
}

START_TEST(patterns)
{
	char big[PATTERN_MAX + 2];

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
	big[PATTERN_MAX] = '\0';
	ck_assert_int_eq(check_pat(big), 0); /* 1 KiB of plain atoms */
}
END_TEST

START_TEST(timeouts)
{
	uint64_t ms = 7;
	size_t len = strlen("listening on 5000");

	pattern_split_timeout("listening on 5000", &len, &ms);
	ck_assert_uint_eq(ms, 5000);
	ck_assert_uint_eq(len, strlen("listening on"));
	ms = 7;
	len = strlen("port 1234567890");
	pattern_split_timeout("port 1234567890", &len, &ms); /* 10 digits */
	ck_assert_uint_eq(ms, 7);
	len = strlen("42");
	pattern_split_timeout("42", &len, &ms); /* a pattern of digits */
	ck_assert_uint_eq(ms, 7);
	ck_assert_uint_eq(len, 2);
}
END_TEST

START_TEST(compile)
{
	char why[160] = "";
	regex_t re;

	ck_assert_int_eq(pattern_compile("a+b", 3, &re, why, sizeof(why)), 0);
	regfree(&re);
	ck_assert_int_eq(pattern_compile("a(", 2, &re, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "not an extended regex"), "%s", why);
	ck_assert_int_eq(pattern_compile("(x)\\1", 5, &re, why, sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, "back-reference"), "%s", why);
}
END_TEST

/* A file of its own with text, for the scans. */
static int file_with(const char *text)
{
	char path[] = "/tmp/test_pattern.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	return fd;
}

static void append(int fd, const char *text)
{
	ck_assert_int_eq(pwrite(fd, text, strlen(text), lseek(fd, 0, SEEK_END)),
			 (ssize_t)strlen(text));
}

static uint64_t size_of(int fd)
{
	return (uint64_t)lseek(fd, 0, SEEK_END);
}

START_TEST(scan_grows)
{
	struct pattern_scan s = { 0 };
	int fd = file_with("starting\nlisten"), err;
	regex_t re;
	char *line;

	ck_assert_int_eq(regcomp(&re, "^listening on [0-9]+$",
				 REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_ptr_null(pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err));
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(s.off, strlen("starting\n")); /* the tail waits */
	append(fd, "ing on 80");
	/* "listening on 80" is no match yet: it may grow to 8000 */
	ck_assert_ptr_null(pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err));
	append(fd, "00\nlistening on 9\n");
	line = pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err);
	ck_assert_str_eq(line, "listening on 8000\n");
	free(line);
	line = pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err);
	ck_assert_str_eq(line, "listening on 9\n");
	free(line);
	ck_assert_ptr_null(pattern_scan_fd(&s, fd, size_of(fd), true, &re, &err));
	/* the last line, without a newline, counts once the file is done */
	append(fd, "listening on 7");
	ck_assert_ptr_null(pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err));
	line = pattern_scan_fd(&s, fd, size_of(fd), true, &re, &err);
	ck_assert_str_eq(line, "listening on 7");
	free(line);
	regfree(&re);
	close(fd);
}
END_TEST

START_TEST(scan_long_lines)
{
	struct pattern_scan s = { 0 };
	char *big = malloc(3 * PATTERN_LINE_MAX), *line;
	int fd = file_with(""), err;
	regex_t re;

	ck_assert_int_eq(regcomp(&re, "^x|y$|^z", REG_EXTENDED | REG_NOSUB), 0);
	memset(big, 'y', 3 * PATTERN_LINE_MAX - 1);
	big[3 * PATTERN_LINE_MAX - 1] = '\0';
	big[0] = 'x';
	append(fd, big);
	append(fd, "\nyy\nz\n");
	/* matched on its first PATTERN_LINE_MAX bytes */
	line = pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err);
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(strlen(line), PATTERN_LINE_MAX);
	free(line);
	/* its rest is passed over, "y$" in it matches nothing */
	line = pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err);
	ck_assert_str_eq(line, "yy\n");
	free(line);
	line = pattern_scan_fd(&s, fd, size_of(fd), false, &re, &err);
	ck_assert_str_eq(line, "z\n");
	free(line);
	ck_assert_uint_eq(s.off, size_of(fd));
	regfree(&re);
	free(big);
	close(fd);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("basic");

	tcase_add_test(tc, patterns);
	tcase_add_test(tc, timeouts);
	tcase_add_test(tc, compile);
	tcase_add_test(tc, scan_grows);
	tcase_add_test(tc, scan_long_lines);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
