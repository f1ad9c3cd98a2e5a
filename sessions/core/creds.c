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
#include <sys/syscall.h>
#include <unistd.h>
#include "sessions/core/creds.h"

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

/* The owner's groups, as initgroups would set them (none without a
 * passwd entry). */
static int plan_groups(struct creds_plan *p, const struct passwd *pw)
{
	int n = 32;

	if (!pw)
		return 0;
	for (int tries = 0; tries < 8; tries++) {
		gid_t *g = realloc(p->groups, (size_t)n * sizeof(*g));

		if (!g)
			return -ENOMEM;
		p->groups = g;
		p->ngroups = n;
		if (getgrouplist(pw->pw_name, p->gid, g, &p->ngroups) >= 0)
			return 0;
		n = p->ngroups > n ? p->ngroups : n * 2;
	}
	return -EINVAL;
}

/* envp with the passwd variables of pw, in strings held in p->own. */
static int plan_envp(struct creds_plan *p, char **envp, const struct passwd *pw)
{
	size_t n = 0, k = 0;

	p->envp = envp;
	if (!pw)
		return 0;
	while (envp[n])
		n++;
	p->own = calloc(5, sizeof(*p->own));
	if (!p->own)
		return -ENOMEM;
	p->envp = calloc(n + 5, sizeof(*p->envp));
	if (!p->envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!is_passwd_var(envp[i]))
			p->envp[k++] = envp[i];
	if (asprintf(&p->own[0], "HOME=%s", pw->pw_dir) < 0 ||
	    asprintf(&p->own[1], "USER=%s", pw->pw_name) < 0 ||
	    asprintf(&p->own[2], "LOGNAME=%s", pw->pw_name) < 0 ||
	    asprintf(&p->own[3], "SHELL=%s", pw->pw_shell) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < 4; i++)
		p->envp[k++] = p->own[i];
	return 0;
}

int creds_plan(struct creds_plan *p, uid_t uid, gid_t gid, char **envp)
{
	struct passwd *pw;
	int rc = 0;

	*p = (struct creds_plan){ .uid = uid, .gid = gid, .envp = envp };
	p->change = !(uid == geteuid() && gid == getegid());
	if (uid == geteuid() && !p->change)
		return 0;
	pw = getpwuid(uid);
	if (p->change)
		rc = plan_groups(p, pw);
	if (rc == 0 && uid != geteuid() && envp)
		rc = plan_envp(p, envp, pw);
	if (rc < 0)
		creds_plan_free(p);
	return rc;
}

int creds_apply(const struct creds_plan *p)
{
	if (!p->change)
		return 0;
	if (syscall(SYS_setgroups, p->ngroups, p->groups) < 0 ||
	    syscall(SYS_setresgid, p->gid, p->gid, p->gid) < 0 ||
	    syscall(SYS_setresuid, p->uid, p->uid, p->uid) < 0)
		return -errno;
	/* Dropped for good, or not at all. */
	if (p->uid != 0 && (syscall(SYS_setuid, 0) == 0 ||
			    syscall(SYS_setresuid, -1, 0, -1) == 0))
		return -EPERM;
	return 0;
}

void creds_plan_free(struct creds_plan *p)
{
	/* envp is a copy of creds_plan's when own is set */
	if (p->own) {
		for (size_t i = 0; p->own[i]; i++)
			free(p->own[i]);
		free(p->own);
		free(p->envp);
	}
	free(p->groups);
	*p = (struct creds_plan){ 0 };
}

int creds_become(uid_t uid, gid_t gid)
{
	struct creds_plan p;
	int rc = creds_plan(&p, uid, gid, NULL);

	if (rc == 0)
		rc = creds_apply(&p);
	creds_plan_free(&p);
	return rc;
}

char **creds_envp(char **envp, uid_t uid)
{
	struct creds_plan p = { .envp = envp };

	/* a failure leaves what was made: the child execs or exits */
	if (uid == geteuid() || plan_envp(&p, envp, getpwuid(uid)) < 0)
		return envp;
	free(p.own); /* its strings are in p.envp */
	return p.envp;
}
