/*
 * tmpl.c - the driver as a template (`sfs_driver --template`): a shell
 * that has loaded the driver and runs no command, and that forks the
 * shells of new sessions on the daemon's request (sessions/session/tmpl.c is the
 * daemon's side). A fork costs a fraction of starting bash (exec, the
 * dynamic linker, bash's start, the module).
 *
 * A request is one message on the socket on fd 0: the session's
 * directory, with its cgroup's directory, the read end of its control
 * pipe and the write end of its result pipe (SCM_RIGHTS). The child is
 * cloned into that cgroup and as the daemon's child (CLONE_PARENT, so
 * that the daemon reaps it); the template answers with its pid, or with
 * -errno. The template is single-threaded: the holder thread (fds.c)
 * starts in each child. What bash worked out once at its start and that
 * must be the new shell's is set again in the child: $$, its process
 * group, the seeds of $RANDOM and of bash's temporary names, $SECONDS.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "variables.h"
#include "jobs.h"
#include "externs.h"
#include "drv.h"

#define NFDS 3 /* the cgroup, the control pipe's read end, the result's */

/* Reads a request: the directory into dir, the descriptors into fds.
 * Returns 1, 0 at EOF (the daemon is done), -1 on a malformed one. */
static int take_request(char *dir, size_t cap, int *fds)
{
	char ctl[CMSG_SPACE(NFDS * sizeof(int))];
	struct iovec iov = { dir, cap - 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(0, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	dir[n] = '\0';
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(NFDS * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(c), NFDS * sizeof(int));
	return dir[0] == '/' && strlen(dir) == (size_t)n ? 1 : -2;
}

/* In the child: the session's descriptors on 0 and 201, /dev/null on 1
 * and 2, nothing else (the template's socket least of all). */
static int child_fds(const int *fds)
{
	int ctl = fcntl(fds[1], F_DUPFD_CLOEXEC, DRV_RES_FD + 1);
	int res = fcntl(fds[2], F_DUPFD_CLOEXEC, DRV_RES_FD + 1);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	null = null < 0 ? -1 : fcntl(null, F_DUPFD_CLOEXEC, DRV_RES_FD + 1);
	if (ctl < 0 || res < 0 || null < 0 || dup2(ctl, 0) < 0 ||
	    dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(res, DRV_RES_FD) < 0)
		return -1;
	close_range(3, DRV_RES_FD - 1, 0);
	close_range(DRV_RES_FD + 1, ~0U, 0);
	return 0;
}

/* In the child: a shell of its own, as if bash had just started. */
static int child_shell(const int *fds, pid_t daemon)
{
	pid_t me = getpid();

	/* no PR_SET_PDEATHSIG (sessions/session/shell.c says why) */
	setsid();
	if (getppid() != daemon || child_fds(fds) < 0)
		return -1; /* the daemon is gone, or no descriptors */
	dollar_dollar_pid = me;
	shell_pgrp = original_pgrp = me;
	seedrand();
	seedrand32();
	return 0;
}

/* Forks the shell of one request. Returns 1 in the child, 0 in the
 * template once it has answered. */
static int fork_one(const int *fds)
{
	struct clone_args a = { .flags = CLONE_PARENT | CLONE_INTO_CGROUP,
				.cgroup = (uint64_t)fds[0] };
	pid_t daemon = getppid();
	char reply[32];
	long pid;

	fflush(stdout);
	fflush(stderr);
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		if (child_shell(fds, daemon) < 0)
			_exit(126);
		return 1;
	}
	snprintf(reply, sizeof(reply), "%ld", pid < 0 ? -(long)errno : pid);
	for (int i = 0; i < NFDS; i++)
		close(fds[i]);
	while (send(0, reply, strlen(reply), MSG_NOSIGNAL) < 0 &&
	       errno == EINTR)
		;
	return 0;
}

int drv_template(char *dir, size_t cap)
{
	int fds[NFDS], rc;

	for (;;) {
		rc = take_request(dir, cap, fds);
		if (rc == 0 || rc == -1)
			return -1;
		if (rc < 0) { /* descriptors, but no directory */
			for (int i = 0; i < NFDS; i++)
				close(fds[i]);
			send(0, "-22", 3, MSG_NOSIGNAL);
			continue;
		}
		if (fork_one(fds))
			return 0;
	}
}
