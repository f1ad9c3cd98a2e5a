/*
 * creds.c - the child side of running as a session's owner (after fork,
 * before execve): the daemon's signal dispositions and mask are not the
 * user's, and a user's shell must never keep a way back to root.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "creds.h"

void creds_reset_signals(int keep)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	/* A daemon started with & from a script has SIGINT and SIGQUIT
	 * ignored, and an ignored signal stays ignored across execve. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != keep)
			sigaction(sig, &dfl, NULL);
	if (keep)
		signal(keep, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int creds_become(uid_t uid, gid_t gid)
{
	struct passwd *pw;

	if (uid == geteuid() && gid == getegid())
		return 0;
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) < 0 : setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	/* Dropped for good, or not at all. */
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -EPERM;
	return 0;
}

/* Whether e is NAME=... of one of the passwd variables. */
static bool is_passwd_var(const char *e)
{
	static const char *const names[] = { "HOME=", "USER=", "LOGNAME=",
					     "SHELL=" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

char **creds_envp(char **envp, uid_t uid)
{
	struct passwd *pw;
	size_t n = 0, k = 0;
	char **out;

	if (uid == geteuid() || !(pw = getpwuid(uid)))
		return envp;
	while (envp[n])
		n++;
	out = calloc(n + 5, sizeof(*out));
	if (!out)
		return envp;
	for (size_t i = 0; i < n; i++)
		if (!is_passwd_var(envp[i]))
			out[k++] = envp[i];
	if (asprintf(&out[k++], "HOME=%s", pw->pw_dir) < 0 ||
	    asprintf(&out[k++], "USER=%s", pw->pw_name) < 0 ||
	    asprintf(&out[k++], "LOGNAME=%s", pw->pw_name) < 0 ||
	    asprintf(&out[k++], "SHELL=%s", pw->pw_shell) < 0)
		return envp;
	return out;
}
