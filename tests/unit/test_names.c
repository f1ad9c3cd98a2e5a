/* test_names.c - session, run and env names, env values, u64 parsing. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include "sessions/core/names.h"
#include "unit.h"

static void fill(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
}

START_TEST(name_ok)
{
	static const char *const ok[] = {
		"a",	   "Z",
		"0",	   "build",
		"default", "A-Z_0.9",
		"a.",	   "a..b",
		"x-",	   "-x",
		"_",	   "1",
		"v1.2.3",  "my_session-01",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		ck_assert_msg(name_valid(ok[i]), "'%s' refused", ok[i]);
}
END_TEST

START_TEST(name_bad)
{
	static const char *const bad[] = {
		"",    ".",    "..",   ".hidden",  "a/b",	  "/",
		"a b", " a",   "a ",   "a\tb",	   "a\nb",	  "a:b",
		"a*",  "a?",   "a\\b", "\xc3\xa9", "caf\xc3\xa9", "a+b",
		"a=b", "a@b",  "~",    "a$b",	   "a'b",	  "a\"b",
		"./a", "../a",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(!name_valid(bad[i]), "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(name_length)
{
	char buf[300];

	fill(buf, 'a', 63);
	ck_assert(name_valid(buf));
	fill(buf, 'a', NAME_MAX_LEN);
	ck_assert_int_eq(NAME_MAX_LEN, 64);
	ck_assert(name_valid(buf));
	fill(buf, 'a', NAME_MAX_LEN + 1);
	ck_assert(!name_valid(buf));
	fill(buf, 'b', 255);
	ck_assert(!name_valid(buf));
	/* 64 characters with a bad one last is still refused */
	fill(buf, 'a', 64);
	buf[63] = '/';
	ck_assert(!name_valid(buf));
}
END_TEST

/* Every single byte as a one-character name, and after a valid 'a'. */
START_TEST(name_every_byte)
{
	for (int c = 1; c < 256; c++) {
		char one[2] = { (char)c, 0 };
		char two[3] = { 'a', (char)c, 0 };
		bool cls = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			   c == '.';

		ck_assert_msg(name_valid(one) == (cls && c != '.'),
			      "byte 0x%02x alone", c);
		ck_assert_msg(name_valid(two) == cls, "byte 0x%02x second", c);
	}
}
END_TEST

START_TEST(env_name_ok)
{
	static const char *const ok[] = {
		"A",   "a",    "_",	 "_x", "__",	 "A1",
		"a_b", "PATH", "LC_ALL", "_0", "x9y8z7",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		ck_assert_msg(name_env_valid(ok[i]), "'%s' refused", ok[i]);
}
END_TEST

START_TEST(env_name_bad)
{
	static const char *const bad[] = {
		"",    "1A",  "0",  "9_",   "A-B", "A B", " A",
		"A ",  "A=B", "A=", "=A",   "A.B", "a/b", "\xc3\xa9",
		"A\n", "A$",  "$A", "A[0]", "-A",  ".",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(!name_env_valid(bad[i]), "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(env_name_length)
{
	char buf[300];

	fill(buf, 'A', 255);
	ck_assert(name_env_valid(buf));
	fill(buf, 'A', 256);
	ck_assert(!name_env_valid(buf));
	fill(buf, '_', 255);
	ck_assert(name_env_valid(buf));
}
END_TEST

START_TEST(env_name_every_byte)
{
	for (int c = 1; c < 256; c++) {
		char one[2] = { (char)c, 0 };
		char two[3] = { 'A', (char)c, 0 };
		bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_';
		bool digit = c >= '0' && c <= '9';

		ck_assert_msg(name_env_valid(one) == (word && !digit),
			      "byte 0x%02x alone", c);
		ck_assert_msg(name_env_valid(two) == word, "byte 0x%02x second",
			      c);
	}
}
END_TEST

START_TEST(env_value)
{
	char all[255];

	ck_assert(name_env_value_valid("", 0));
	ck_assert(name_env_value_valid("abc", 3));
	ck_assert(name_env_value_valid("$(whoami)`date`'\"\n", 18));
	/* len bounds the check: the NUL terminator is not part of it */
	ck_assert(name_env_value_valid("ab\0", 2));
	ck_assert(!name_env_value_valid("a\0b", 3));
	ck_assert(!name_env_value_valid("ab\0", 3));
	ck_assert(!name_env_value_valid("\0", 1));
	for (int i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	ck_assert(name_env_value_valid(all, sizeof(all)));
	all[200] = '\0';
	ck_assert(!name_env_value_valid(all, sizeof(all)));
}
END_TEST

static int parse(const char *s, unsigned long long *out)
{
	*out = 12345;
	return name_parse_u64(s, strlen(s), out);
}

START_TEST(u64_ok)
{
	static const struct {
		const char *s;
		unsigned long long v;
	} t[] = {
		{ "0", 0 },
		{ "42", 42 },
		{ "007", 7 },
		{ " 42", 42 },
		{ "42\n", 42 },
		{ "\t7 \r\n", 7 },
		{ "  1000  \n", 1000 },
		{ "4294967296", 4294967296ULL },
		{ "1844674407370955161", 1844674407370955161ULL },
		{ "18446744073709551609", 18446744073709551609ULL },
	};
	unsigned long long v;

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		ck_assert_msg(parse(t[i].s, &v) == 0, "'%s' refused", t[i].s);
		ck_assert_msg(v == t[i].v, "'%s' gave %llu", t[i].s, v);
	}
}
END_TEST

/* The largest values: every u64 up to UINT64_MAX fits. */
START_TEST(u64_max)
{
	unsigned long long v;

	ck_assert_int_eq(parse("18446744073709551610", &v), 0);
	ck_assert(v == 18446744073709551610ULL);
	ck_assert_int_eq(parse("18446744073709551615", &v), 0);
	ck_assert(v == ULLONG_MAX);
	ck_assert_int_eq(parse("18446744073709551615\n", &v), 0);
	ck_assert(v == ULLONG_MAX);
}
END_TEST

START_TEST(u64_range)
{
	unsigned long long v;

	ck_assert_int_eq(parse("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(parse("18446744073709551620", &v), -ERANGE);
	ck_assert_int_eq(parse("99999999999999999999", &v), -ERANGE);
	ck_assert_int_eq(parse("100000000000000000000", &v), -ERANGE);
	ck_assert(v == 12345); /* untouched on failure */
}
END_TEST

START_TEST(u64_bad)
{
	static const char *const bad[] = {
		"",    " ",    "\n",  " \n ", "-1",    "+1", "1 2", "12a",
		"a12", "0x10", "1.5", "1e3",  "1,000", "١",  "--",  "1\v",
	};
	unsigned long long v;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		ck_assert_msg(parse(bad[i], &v) == -EINVAL, "'%s' accepted",
			      bad[i]);
		ck_assert_msg(v == 12345, "'%s' wrote *out", bad[i]);
	}
}
END_TEST

/* The length, not a NUL, ends the text. */
START_TEST(u64_len)
{
	unsigned long long v = 0;
	struct guarded g;
	const char *p;

	ck_assert_int_eq(name_parse_u64("123", 2, &v), 0);
	ck_assert(v == 12);
	ck_assert_int_eq(name_parse_u64("4\0", 2, &v), -EINVAL);
	ck_assert_int_eq(name_parse_u64("99", 0, &v), -EINVAL);
	p = guard_copy(&g, "  5000\n", 7);
	ck_assert_int_eq(name_parse_u64(p, 7, &v), 0);
	ck_assert(v == 5000);
	guard_free(&g);
}
END_TEST

/* A timeout is 0 to 365 days; past that, even where a u64 holds it, it
 * is refused and *ms is left alone. */
START_TEST(timeout_range)
{
	static const char *const bad[] = { "31536000001", "9223372036854775807",
					   "9223372036854775808",
					   "18446744073709551615",
					   "18446744073709551616", "-1",
					   "1e9", "", "5 ms" };
	unsigned long long v = 0;

	ck_assert_int_eq(name_parse_timeout("0", 1, &v), 0);
	ck_assert(v == 0);
	ck_assert_int_eq(name_parse_timeout(" 31536000000\n", 13, &v), 0);
	ck_assert(v == NAME_TIMEOUT_MAX_MS);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		ck_assert_msg(name_parse_timeout(bad[i], strlen(bad[i]), &v) ==
				      -EINVAL,
			      "'%s' accepted", bad[i]);
		ck_assert_msg(v == 7, "'%s' wrote *ms", bad[i]);
	}
}
END_TEST

/* What a refusal quotes stays on one line, and is cut to fit. */
START_TEST(escape)
{
	char out[64];

	name_escape(out, sizeof(out), "/tmp\n\tx\\y\x01\x7f\xc3\xa9");
	ck_assert_str_eq(out, "/tmp\\n\\tx\\\\y\\x01\\x7f\xc3\xa9");
	name_escape(out, 8, "abcdefghijkl");
	ck_assert_str_eq(out, "abcd");
	name_escape(out, 8, "\n\n\n\n");
	ck_assert_str_eq(out, "\\n\\n");
	name_escape(out, 1, "abc");
	ck_assert_str_eq(out, "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("session");

	tcase_add_test(tc, name_ok);
	tcase_add_test(tc, name_bad);
	tcase_add_test(tc, name_length);
	tcase_add_test(tc, name_every_byte);
	suite_add_tcase(s, tc);
	tc = tcase_create("env");
	tcase_add_test(tc, env_name_ok);
	tcase_add_test(tc, env_name_bad);
	tcase_add_test(tc, env_name_length);
	tcase_add_test(tc, env_name_every_byte);
	tcase_add_test(tc, env_value);
	tcase_add_test(tc, escape);
	suite_add_tcase(s, tc);
	tc = tcase_create("u64");
	tcase_add_test(tc, u64_ok);
	tcase_add_test(tc, u64_max);
	tcase_add_test(tc, u64_range);
	tcase_add_test(tc, u64_bad);
	tcase_add_test(tc, u64_len);
	tcase_add_test(tc, timeout_range);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
