/*
 * ttyproc.c - the start of a terminal's shell (see ttyproc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/creds.h"
#include "sessions/session/shell.h"
#include "sessions/tty/ttyproc.h"

/* The slave is the owner's, writable by group tty only (for write(1)
 * and wall, as login and grantpt make it), not by the owner's group:
 * that may be shared (users). No group tty: the owner's alone. */
static int own_slave(const struct ttyproc_spec *sp, int slave)
{
	const struct group *g = getgrnam("tty");

	if (fchown(slave, sp->uid, g ? g->gr_gid : sp->gid) < 0 ||
	    fchmod(slave, g ? 0620 : 0600) < 0)
		return -1;
	return 0;
}

int ttyproc_open(const struct ttyproc_spec *sp, int *master, int *slave)
{
	struct winsize ws = { .ws_row = (unsigned short)sp->rows,
			      .ws_col = (unsigned short)sp->cols };
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	char name[64];

	*slave = -1;
	if (m < 0)
		return -errno;
	if (grantpt(m) < 0 || unlockpt(m) < 0 ||
	    ptsname_r(m, name, sizeof(name)) != 0 ||
	    ioctl(m, TIOCSWINSZ, &ws) < 0 ||
	    (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    own_slave(sp, *slave) < 0) {
		int e = errno;

		close(m);
		if (*slave >= 0)
			close(*slave);
		*slave = -1;
		return -e;
	}
	*master = m;
	return 0;
}

/* The environment: the session's exported variables, TERM of ours. */
static char **make_envp(const struct envmap *env)
{
	char **envp = envmap_envp(env), **grown;
	size_t n = 0;

	if (!envp)
		return NULL;
	for (char **p = envp; *p; p++) {
		if (strncmp(*p, "TERM=", 5) == 0)
			free(*p);
		else
			envp[n++] = *p;
	}
	grown = realloc(envp, (n + 2) * sizeof(*envp));
	if (grown)
		envp = grown;
	envp[n] = grown ? strdup("TERM=xterm-256color") : NULL;
	if (envp[n]) {
		envp[n + 1] = NULL;
		return envp;
	}
	for (size_t i = 0; i < n; i++)
		free(envp[i]);
	free(envp);
	return NULL;
}

/* In the child: the terminal becomes its controlling terminal and its
 * 0, 1 and 2; nothing else of the daemon's is left but why (execerr.h);
 * the owner's credentials, then bash -i. */
static void child(const struct ttyproc_spec *sp, int slave, int why,
		  char **envp)
{
	char *argv[] = { "bash", "--norc", "--noprofile", "-i", NULL };

	if (conf.tty_rc)
		argv[1] = "-i", argv[2] = NULL;
	creds_reset_signals(0);
	setsid();
	if ((sp->cg && contain_enter(sp->cg) < 0) ||
	    ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 ||
	    dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
		_exit(126);
	/* nothing else: /dev/fuse and the PTY's master above all */
	shell_exec_child(why, sp->uid, sp->gid, sp->cwd, argv, envp);
}

pid_t ttyproc_spawn(const struct ttyproc_spec *sp, int slave,
		    struct execerr *why)
{
	char **envp = make_envp(sp->env);
	int wfd, rc;
	pid_t pid;

	if (!envp)
		return -ENOMEM;
	rc = execerr_open(why, &wfd);
	if (rc < 0) {
		envmap_envp_free(envp);
		return rc;
	}
	pid = fork();
	if (pid == 0)
		child(sp, slave, wfd, envp);
	rc = -errno;
	envmap_envp_free(envp);
	if (pid < 0) {
		close(wfd);
		execerr_close(why);
		return rc;
	}
	execerr_watch(why, wfd);
	return pid;
}
