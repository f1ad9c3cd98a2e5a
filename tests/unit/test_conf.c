/* test_conf.c - integers in the configuration file (conf_load). */
#include <errno.h>
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

int main(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("integers");

	tcase_add_test(tc, leading_zeros_are_decimal);
	tcase_add_test(tc, hex);
	tcase_add_test(tc, past_32_bits);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
