/* test_ctl.c - ctl lines against a table of every verb (ctl_lookup), the
 * error line's list of verbs (ctl_usage) and signal names (ctl_signal). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include "fuzz/ctl_every.h"
#include "sessions/core/ctl.h"
#include "sessions/core/names.h"
#include "unit.h"

/*
 * Parses the first len bytes of s, copied so that they end where an
 * inaccessible page begins (a read past len crashes the test).
 */
static int parse_n(const char *s, size_t len, struct ctl_cmd *c)
{
	struct guarded g;
	const char *p = guard_copy(&g, s, len);
	int rc = every_parse(p, len, c);

	guard_free(&g);
	return rc;
}

static int parse(const char *s, struct ctl_cmd *c)
{
	return parse_n(s, strlen(s), c);
}

static int sig_n(const char *s, size_t len)
{
	struct guarded g;
	const char *p = guard_copy(&g, s, len);
	int rc = ctl_signal(p, len);

	guard_free(&g);
	return rc;
}

static int sig(const char *s)
{
	return sig_n(s, strlen(s));
}

/* A poisoned command, so that a field the parser must set is seen set. */
static struct ctl_cmd poisoned(void)
{
	struct ctl_cmd c;

	memset(&c, 0xa5, sizeof(c));
	return c;
}

static void expect_kill(const char *line, int want)
{
	struct ctl_cmd c = poisoned();

	ck_assert_msg(parse(line, &c) == 0, "'%s' refused", line);
	ck_assert_msg(c.op == CTL_KILL, "'%s': op %d, expected CTL_KILL", line,
		      (int)c.op);
	ck_assert_msg(c.sig == want, "'%s': signal %d, expected %d", line,
		      c.sig, want);
}

static void expect_op(const char *line, enum ctl_op op)
{
	struct ctl_cmd c = poisoned();

	ck_assert_msg(parse(line, &c) == 0, "'%s' refused", line);
	ck_assert_msg(c.op == op, "'%s': op %d, expected %d", line, (int)c.op,
		      (int)op);
}

static void expect_timeout(const char *line, uint64_t ms)
{
	struct ctl_cmd c = poisoned();

	ck_assert_msg(parse(line, &c) == 0, "'%s' refused", line);
	ck_assert_msg(c.op == CTL_TIMEOUT, "'%s': op %d, expected CTL_TIMEOUT",
		      line, (int)c.op);
	ck_assert_msg(c.ms == ms, "'%s': ms %llu, expected %llu", line,
		      (unsigned long long)c.ms, (unsigned long long)ms);
}

static void expect_bad(const char *line)
{
	struct ctl_cmd c = poisoned();
	int rc = parse(line, &c);

	ck_assert_msg(rc == -EINVAL, "'%s' gave %d, expected -EINVAL", line,
		      rc);
}

/* ---------------------------------------------------------------- kill */

START_TEST(kill_default)
{
	expect_kill("kill", SIGTERM);
}
END_TEST

START_TEST(kill_names)
{
	expect_kill("kill TERM", SIGTERM);
	expect_kill("kill SIGKILL", SIGKILL);
	expect_kill("kill KILL", SIGKILL);
	expect_kill("kill 9", SIGKILL);
	expect_kill("kill 15", SIGTERM);
	expect_kill("kill 1", 1);
	expect_kill("kill 64", 64);
	expect_kill("kill INT", SIGINT);
	expect_kill("kill SIGHUP", SIGHUP);
	expect_kill("kill USR1", SIGUSR1);
	expect_kill("kill STOP", SIGSTOP);
	expect_kill("kill CONT", SIGCONT);
}
END_TEST

START_TEST(kill_case)
{
	expect_kill("kill hup", SIGHUP);
	expect_kill("kill Hup", SIGHUP);
	expect_kill("kill sigterm", SIGTERM);
	expect_kill("kill SigKill", SIGKILL);
}
END_TEST

START_TEST(kill_bad)
{
	expect_bad("kill BOGUS");
	expect_bad("kill SIGBOGUS");
	expect_bad("kill SIG");
	expect_bad("kill 0");
	expect_bad("kill 65");
	expect_bad("kill 99999999999999999999999"); /* out of range */
	expect_bad("kill -9");
	expect_bad("kill -TERM");
	expect_bad("kill TERM extra");
	expect_bad("kill 9 9");
	expect_bad("kill TERMX");
	expect_bad("kill TER");
}
END_TEST

/*
 * The command word is lower case; a signal name alone may be any case, so
 * "KILL" or "Kill" alone is the bare signal KILL, and "KILL TERM" is refused.
 */
START_TEST(kill_word_case)
{
	expect_bad("KILL TERM");
	expect_bad("Kill HUP");
	expect_kill("Kill", SIGKILL);
	expect_kill("KILL", SIGKILL);
}
END_TEST

/* ---------------------------------------------------------------- bare */

START_TEST(bare_signal)
{
	expect_kill("TERM", SIGTERM);
	expect_kill("HUP", SIGHUP);
	expect_kill("INT", SIGINT);
	expect_kill("KILL", SIGKILL);
	expect_kill("SIGINT", SIGINT);
	expect_kill("hup", SIGHUP);
	expect_kill("9", SIGKILL);
}
END_TEST

START_TEST(bare_bad)
{
	expect_bad("BOGUS");
	expect_bad("TERM extra");
	expect_bad("TERM TERM");
	expect_bad("0");
	expect_bad("65");
}
END_TEST

/* ---------------------------------------------------------------- others */

START_TEST(reset_eof_killall)
{
	expect_op("reset", CTL_RESET);
	expect_op("eof", CTL_EOF);
	expect_op("killall", CTL_KILLALL);
}
END_TEST

START_TEST(others_bad)
{
	expect_bad("reset now");
	expect_bad("eof now");
	expect_bad("killall 9");
	expect_bad("killall TERM");
	expect_bad("RESET");
	expect_bad("resets");
	expect_bad("rese");
	expect_bad("kil");
	expect_bad("killer");
}
END_TEST

START_TEST(timeout_ok)
{
	expect_timeout("timeout 500", 500);
	expect_timeout("timeout 0", 0);
	expect_timeout("timeout 1", 1);
	expect_timeout("timeout 3600000", 3600000);
	/* 365 days, the most a deadline is given */
	expect_timeout("timeout 31536000000", 31536000000ULL);
}
END_TEST

START_TEST(timeout_bad)
{
	expect_bad("timeout");
	expect_bad("timeout -5");
	expect_bad("timeout abc");
	expect_bad("timeout 5x");
	expect_bad("timeout 1.5");
	expect_bad("timeout +5");
	expect_bad("timeout 500 600");
	expect_bad("timeout 500 ms");
	expect_bad("TIMEOUT 500");
	/* past 365 days: near 2^63 and 2^64 a deadline wrapped into the
	 * past, and the run timed out at once */
	expect_bad("timeout 31536000001");
	expect_bad("timeout 9223372036854775808");
	expect_bad("timeout 18446744073709551615");
	expect_bad("timeout 18446744073709551616");
}
END_TEST

/* An overflowing timeout is refused (-ERANGE or -EINVAL, never 0). */
START_TEST(timeout_overflow)
{
	struct ctl_cmd c = poisoned();

	ck_assert_int_ne(parse("timeout 18446744073709551616", &c), 0);
	ck_assert_int_ne(parse("timeout 99999999999999999999999", &c), 0);
}
END_TEST

/* ---------------------------------------------------------------- blanks */

START_TEST(empty)
{
	struct ctl_cmd c = poisoned();

	ck_assert_int_eq(parse_n("", 0, &c), -EINVAL);
	expect_bad(" ");
	expect_bad("   ");
	expect_bad("\t");
	expect_bad("\r");
	expect_bad(" \t\r ");
}
END_TEST

START_TEST(blanks)
{
	expect_kill(" kill", SIGTERM);
	expect_kill("kill ", SIGTERM);
	expect_kill("kill\r", SIGTERM);
	expect_kill("  kill   TERM  ", SIGTERM);
	expect_kill("\tkill\tHUP\t", SIGHUP);
	expect_kill("kill 9\r", SIGKILL);
	expect_kill("kill HUP\r", SIGHUP);
	expect_kill(" TERM \r", SIGTERM);
	expect_kill("INT\r", SIGINT);
	expect_op("reset\r", CTL_RESET);
	expect_op("  reset  ", CTL_RESET);
	expect_op("\teof\t", CTL_EOF);
	expect_op("killall\r", CTL_KILLALL);
	expect_timeout("timeout 500\r", 500);
	expect_timeout("  timeout\t250  ", 250);
	expect_timeout("timeout    0 \r", 0);
}
END_TEST

/* The length, not a NUL, ends the line. */
START_TEST(length_ends_line)
{
	struct ctl_cmd c = poisoned();

	ck_assert_int_eq(parse_n("kill TERM", 4, &c), 0);
	ck_assert_int_eq(c.op, CTL_KILL);
	ck_assert_int_eq(c.sig, SIGTERM);
	c = poisoned();
	ck_assert_int_eq(parse_n("kill HUP extra", 8, &c), 0);
	ck_assert_int_eq(c.op, CTL_KILL);
	ck_assert_int_eq(c.sig, SIGHUP);
	c = poisoned();
	ck_assert_int_eq(parse_n("timeout 5000", 10, &c), 0);
	ck_assert_int_eq(c.op, CTL_TIMEOUT);
	ck_assert(c.ms == 50);
	c = poisoned();
	ck_assert_int_eq(parse_n("reset now", 5, &c), 0);
	ck_assert_int_eq(c.op, CTL_RESET);
	/* an embedded NUL is part of the line, not its end */
	ck_assert_int_eq(parse_n("kill\0TERM", 9, &c), -EINVAL);
	ck_assert_int_eq(parse_n("reset\0", 6, &c), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------- tables */

/* A table takes only its own verbs: "kill" with no argument where its row
 * says none, and a signal alone only where it has the bare row. */
START_TEST(table_own_verbs)
{
	static const struct ctl_verb few[] = {
		{ "interrupt", CTL_ARG_NONE, false, NULL },
		{ "kill", CTL_ARG_NONE, false, NULL },
		{ 0 },
	};
	struct ctl_args a;

	ck_assert_ptr_eq(ctl_lookup(few, "kill", 4, &a), &few[1]);
	ck_assert_int_eq(a.sig, SIGTERM);
	ck_assert_ptr_eq(ctl_lookup(few, " interrupt \r", 12, &a), &few[0]);
	ck_assert_ptr_null(ctl_lookup(few, "kill TERM", 9, &a));
	ck_assert_ptr_null(ctl_lookup(few, "TERM", 4, &a));
	ck_assert_ptr_null(ctl_lookup(few, "reset", 5, &a));
	ck_assert_ptr_null(ctl_lookup(few, "", 0, &a));
}
END_TEST

/* A NAME row takes one word, which its handler checks, and no more. */
START_TEST(name_arg)
{
	static const struct ctl_verb tab[] = {
		{ "fork", CTL_ARG_NAME, false, NULL },
		{ 0 },
	};
	struct ctl_args a;
	char buf[64];

	ck_assert_ptr_eq(ctl_lookup(tab, "fork new-1", 10, &a), &tab[0]);
	ck_assert_uint_eq(a.plen, 5);
	ck_assert_int_eq(memcmp(a.path, "new-1", 5), 0);
	ck_assert_ptr_eq(ctl_lookup(tab, " fork  a/b \r", 12, &a), &tab[0]);
	ck_assert_uint_eq(a.plen, 3);
	ck_assert_int_eq(memcmp(a.path, "a/b", 3), 0);
	ck_assert_ptr_null(ctl_lookup(tab, "fork", 4, &a));
	ck_assert_ptr_null(ctl_lookup(tab, "fork  ", 6, &a));
	ck_assert_ptr_null(ctl_lookup(tab, "fork a b", 8, &a));
	ctl_usage(tab, buf, sizeof(buf));
	ck_assert_str_eq(buf, "fork NAME");
}
END_TEST

/* The error line names the listed verbs, their arguments, in order. */
START_TEST(usage_lists)
{
	static const struct ctl_verb quiet[] = {
		{ "kill", CTL_ARG_SIGNAL, false, NULL },
		{ "SIGNAL", CTL_ARG_BARE, true, NULL },
		{ "reset", CTL_ARG_NONE, false, NULL },
		{ 0 },
	};
	static const struct ctl_verb one[] = {
		{ "killall", CTL_ARG_NONE, false, NULL },
		{ 0 },
	};
	char buf[160], want[160];

	ctl_usage(every, buf, sizeof(buf));
	snprintf(want, sizeof(want),
		 "kill [SIGNAL], SIGNAL, reset, timeout MS (0 to %llu), eof "
		 "or killall",
		 NAME_TIMEOUT_MAX_MS);
	ck_assert_str_eq(buf, want);
	ctl_usage(quiet, buf, sizeof(buf));
	ck_assert_str_eq(buf, "kill [SIGNAL] or reset");
	ctl_usage(one, buf, sizeof(buf));
	ck_assert_str_eq(buf, "killall");
	ctl_usage(every, buf, 10); /* cut, and ended */
	ck_assert_str_eq(buf, "kill [SIG");
}
END_TEST

/* ---------------------------------------------------------------- ctl_signal */

START_TEST(signal_names)
{
	static const struct {
		const char *name;
		int sig;
	} t[] = {
		{ "HUP", SIGHUP },     { "SIGHUP", SIGHUP },
		{ "INT", SIGINT },     { "SIGINT", SIGINT },
		{ "QUIT", SIGQUIT },   { "SIGQUIT", SIGQUIT },
		{ "KILL", SIGKILL },   { "SIGKILL", SIGKILL },
		{ "USR1", SIGUSR1 },   { "SIGUSR1", SIGUSR1 },
		{ "USR2", SIGUSR2 },   { "SIGUSR2", SIGUSR2 },
		{ "TERM", SIGTERM },   { "SIGTERM", SIGTERM },
		{ "CONT", SIGCONT },   { "SIGCONT", SIGCONT },
		{ "STOP", SIGSTOP },   { "SIGSTOP", SIGSTOP },
		{ "ALRM", SIGALRM },   { "SIGALRM", SIGALRM },
		{ "PIPE", SIGPIPE },   { "SIGPIPE", SIGPIPE },
		{ "WINCH", SIGWINCH }, { "SIGWINCH", SIGWINCH },
		{ "term", SIGTERM },   { "sigterm", SIGTERM },
		{ "Term", SIGTERM },   { "SigTerm", SIGTERM },
		{ "kill", SIGKILL },   { "sigkill", SIGKILL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		ck_assert_msg(sig(t[i].name) == t[i].sig,
			      "'%s': %d, expected %d", t[i].name,
			      sig(t[i].name), t[i].sig);
}
END_TEST

START_TEST(signal_numbers)
{
	char buf[16];

	for (int n = 1; n <= 64; n++) {
		snprintf(buf, sizeof(buf), "%d", n);
		ck_assert_msg(sig(buf) == n, "'%s': %d", buf, sig(buf));
	}
	ck_assert_int_eq(sig("09"), 9);
	ck_assert_int_eq(sig("0"), -1);
	ck_assert_int_eq(sig("00"), -1);
	ck_assert_int_eq(sig("65"), -1);
	ck_assert_int_eq(sig("100"), -1);
	ck_assert_int_eq(sig("4294967305"), -1);	   /* 2^32 + 9 */
	ck_assert_int_eq(sig("18446744073709551625"), -1); /* overflows */
	ck_assert_int_eq(sig("-9"), -1);
	ck_assert_int_eq(sig("9x"), -1);
}
END_TEST

START_TEST(signal_bad)
{
	static const char *const bad[] = {
		"",	"SIG",	 "sig",	       "BOGUS",	   "SIGBOGUS",
		"TER",	"TERMS", "SIGSIGTERM", "SIG TERM", "S",
		"SIGT", "xTERM", "TERM\r",     "RTMIN",	   "SIGRTMIN",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(sig(bad[i]) == -1, "'%s' gave %d", bad[i],
			      sig(bad[i]));
}
END_TEST

/* The length, not a NUL, ends the name. */
START_TEST(signal_len)
{
	ck_assert_int_eq(sig_n("TERMINAL", 4), SIGTERM);
	ck_assert_int_eq(sig_n("SIGHUPX", 6), SIGHUP);
	ck_assert_int_eq(sig_n("915", 1), SIGKILL);
	ck_assert_int_eq(sig_n("TERM", 3), -1);
	ck_assert_int_eq(sig_n("TERM", 0), -1);
	ck_assert_int_eq(sig_n("SIGTERM", 3), -1);
	ck_assert_int_eq(sig_n("TERM\0", 5), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("kill");

	tcase_add_test(tc, kill_default);
	tcase_add_test(tc, kill_names);
	tcase_add_test(tc, kill_case);
	tcase_add_test(tc, kill_bad);
	tcase_add_test(tc, kill_word_case);
	tcase_add_test(tc, bare_signal);
	tcase_add_test(tc, bare_bad);
	suite_add_tcase(s, tc);
	tc = tcase_create("other");
	tcase_add_test(tc, reset_eof_killall);
	tcase_add_test(tc, others_bad);
	tcase_add_test(tc, timeout_ok);
	tcase_add_test(tc, timeout_bad);
	tcase_add_test(tc, timeout_overflow);
	suite_add_tcase(s, tc);
	tc = tcase_create("blanks");
	tcase_add_test(tc, empty);
	tcase_add_test(tc, blanks);
	tcase_add_test(tc, length_ends_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("tables");
	tcase_add_test(tc, table_own_verbs);
	tcase_add_test(tc, usage_lists);
	tcase_add_test(tc, name_arg);
	suite_add_tcase(s, tc);
	tc = tcase_create("signal");
	tcase_add_test(tc, signal_names);
	tcase_add_test(tc, signal_numbers);
	tcase_add_test(tc, signal_bad);
	tcase_add_test(tc, signal_len);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
