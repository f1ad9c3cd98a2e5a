/* test_creds.c - the child side of running as a session's owner:
 * signals, credentials, passwd variables (sessions/core/creds.c). */
#include <pwd.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sessions/core/creds.h"
#include "unit.h"

/* Runs fn in a child; its exit status (0: every check held). */
static int in_child(int (*fn)(void))
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static bool has(char **envp, const char *e)
{
	for (; *envp; envp++)
		if (strcmp(*envp, e) == 0)
			return true;
	return false;
}

START_TEST(envp_own_uid_unchanged)
{
	char *envp[] = { "HOME=/x", "A=1", NULL };

	ck_assert_ptr_eq(creds_envp(envp, geteuid()), envp);
}
END_TEST

START_TEST(envp_other_uid_from_passwd)
{
	char *envp[] = { "HOME=/root", "USER=root", "A=1", "SHELL=/x", NULL };
	struct passwd *pw = getpwnam("nobody");
	char want[600];
	char **got;

	if (!pw || pw->pw_uid == geteuid())
		return;
	got = creds_envp(envp, pw->pw_uid);
	ck_assert(has(got, "A=1"));
	ck_assert(!has(got, "HOME=/root") && !has(got, "USER=root"));
	snprintf(want, sizeof(want), "HOME=%s", pw->pw_dir);
	ck_assert(has(got, want));
	ck_assert(has(got, "USER=nobody") && has(got, "LOGNAME=nobody"));
	snprintf(want, sizeof(want), "SHELL=%s", pw->pw_shell);
	ck_assert(has(got, want));
	/* what it made (a child does not free it): the array, and the
	 * strings that are not envp's */
	for (char **e = got; *e; e++) {
		bool given = false;

		for (char **o = envp; *o; o++)
			given = given || *e == *o;
		if (!given)
			free(*e);
	}
	free(got);
}
END_TEST

static int become_nobody(void)
{
	struct passwd *pw = getpwnam("nobody");

	if (creds_become(pw->pw_uid, pw->pw_gid) < 0)
		return 1;
	if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid ||
	    getgid() != pw->pw_gid)
		return 2;
	return setuid(0) == 0 || seteuid(0) == 0 ? 3 : 0;
}

START_TEST(become_drops_for_good)
{
	if (geteuid() != 0 || !getpwnam("nobody"))
		return; /* needs root and a user to become */
	ck_assert_int_eq(in_child(become_nobody), 0);
}
END_TEST

static int reset_signals(void)
{
	struct sigaction sa;
	sigset_t set;

	signal(SIGINT, SIG_IGN);
	signal(SIGUSR1, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	creds_reset_signals(SIGUSR1);
	sigaction(SIGINT, NULL, &sa);
	if (sa.sa_handler != SIG_DFL)
		return 1;
	sigaction(SIGUSR1, NULL, &sa);
	if (sa.sa_handler != SIG_IGN)
		return 2;
	sigprocmask(SIG_SETMASK, NULL, &set);
	return sigismember(&set, SIGTERM) ? 3 : 0;
}

START_TEST(signals_back_to_default)
{
	ck_assert_int_eq(in_child(reset_signals), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("creds");
	TCase *tc = tcase_create("creds");

	tcase_add_test(tc, envp_own_uid_unchanged);
	tcase_add_test(tc, envp_other_uid_from_passwd);
	tcase_add_test(tc, become_drops_for_good);
	tcase_add_test(tc, signals_back_to_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
