/* test_conf.c - integers in the configuration file (conf_load). */
#include <errno.h>
#include <string.h>
#include "unit.h"
#include "conf/conf.h"

/* Loads text as a configuration file over the built-in defaults. */
static int load(const char *text)
{
	char path[] = "/tmp/sfs-unit-conf-XXXXXX";
	int fd = mkstemp(path);
	int rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	conf_defaults();
	rc = conf_load(path);
	unlink(path);
	return rc;
}

/* libconfig reads 010 as ten (found by tests/fuzz/fuzz_conf.c: the
 * digits re-read from the line were taken as octal, 0999 as 0). */
START_TEST(leading_zeros_are_decimal)
{
	ck_assert_int_eq(load("history = 010;\nshell_spin_us = 0999;\n"), 0);
	ck_assert_uint_eq(conf.history, 10);
	ck_assert_uint_eq(conf.shell_spin_us, 999);
}
END_TEST

/* Hexadecimal stays hexadecimal, past 32 bits too. */
START_TEST(hex)
{
	ck_assert_int_eq(load("max_sessions = 0x10;\n"
			      "max_output_bytes = 0x100000000;\n"),
			 0);
	ck_assert_uint_eq(conf.max_sessions, 16);
	ck_assert_uint_eq(conf.max_output_bytes, 1ULL << 32);
}
END_TEST

/* What libconfig 1.5 wraps to 32 bits is read as written. */
START_TEST(past_32_bits)
{
	ck_assert_int_eq(load("max_output_bytes = 4294967297;\n"), 0);
	ck_assert_uint_eq(conf.max_output_bytes, 4294967297ULL);
	ck_assert_int_eq(load("history = 4294967297;\n"), -EINVAL);
}
END_TEST

/* Only the setting itself counts, not its name in a string or a comment
 * (found by tests/fuzz/fuzz_conf.c), and lines of any length. */
START_TEST(name_in_strings_and_comments)
{
	ck_assert_int_eq(load("workspace = \"/history=7\"; history = 5;\n"), 0);
	ck_assert_uint_eq(conf.history, 5);
	ck_assert_int_eq(load("/* history = 9 */ history = 5;\n"), 0);
	ck_assert_uint_eq(conf.history, 5);
	ck_assert_int_eq(load("# history = 9\nhistory = 6; // history = 8\n"),
			 0);
	ck_assert_uint_eq(conf.history, 6);
	ck_assert_int_eq(load("/* a\nhistory = 9\n*/ history = 4;\n"), 0);
	ck_assert_uint_eq(conf.history, 4);
}
END_TEST

START_TEST(long_lines)
{
	char text[8192];

	memset(text, ' ', 5000);
	memcpy(text, "# ", 2);
	snprintf(text + 5000, sizeof(text) - 5000, "\nhistory = 4294967297;\n");
	ck_assert_int_eq(load(text), -EINVAL);
	memset(text, ' ', 5000);
	snprintf(text + 5000, sizeof(text) - 5000,
		 "max_output_bytes = 4294967297;\n");
	ck_assert_int_eq(load(text), 0);
	ck_assert_uint_eq(conf.max_output_bytes, 4294967297ULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("integers");

	tcase_add_test(tc, leading_zeros_are_decimal);
	tcase_add_test(tc, hex);
	tcase_add_test(tc, past_32_bits);
	tcase_add_test(tc, name_in_strings_and_comments);
	tcase_add_test(tc, long_lines);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
