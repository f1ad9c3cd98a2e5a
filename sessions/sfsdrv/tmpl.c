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

/* Reads a request on sock: the directory into dir, the descriptors into
 * fds. Returns 1, 0 at EOF (the daemon is done), -1 on a malformed one,
 * -2 for descriptors without a directory. */
static int take_request(int sock, char *dir, size_t cap, int *fds)
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
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
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
 * and 2, nothing else (the template's socket least of all). Under a hard
 * `ulimit -n` of 201 or less (a session's shell forked, fork.c) the
 * result pipe stays where it came, below the limit. Returns where it
 * is, or -1. (The descriptors that came are above 2: 0-2 were open.) */
static int child_fds(const int *fds)
{
	int res = fds[2], null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(fds[1], 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0)
		return -1;
	if (dup3(res, DRV_RES_FD, O_CLOEXEC) == DRV_RES_FD)
		res = DRV_RES_FD;
	close_range(3, (unsigned)res - 1, 0);
	close_range((unsigned)res + 1, ~0U, 0);
	return res;
}

/* In the child: a shell of its own, as if bash had just started. */
static int child_shell(const int *fds, pid_t daemon)
{
	pid_t me = getpid();

	/* no PR_SET_PDEATHSIG (sessions/session/shell.c says why) */
	setsid();
	if (getppid() != daemon || (drv.res_fd = child_fds(fds)) < 0)
		return -1; /* the daemon is gone, or no descriptors */
	dollar_dollar_pid = me;
	shell_pgrp = original_pgrp = me;
	seedrand();
	seedrand32();
	return 0;
}

/* Forks the shell of one request. A shell of another user's than the
 * cgroup's may not clone into it: its child is then cloned where it is,
 * and the answer "PID m" asks the daemon to move it (it runs nothing of
 * the user's before its first run). Returns 1 in the child, 0 in the
 * parent once it has answered on sock. */
static int fork_one(int sock, const int *fds)
{
	struct clone_args a = { .flags = CLONE_PARENT | CLONE_INTO_CGROUP,
				.cgroup = (uint64_t)fds[0] };
	pid_t daemon = getppid();
	char reply[32];
	long pid;

	fflush(stdout);
	fflush(stderr);
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid < 0 && (errno == EACCES || errno == EPERM)) {
		a.flags = CLONE_PARENT;
		pid = syscall(SYS_clone3, &a, sizeof(a));
	}
	if (pid == 0) {
		if (child_shell(fds, daemon) < 0)
			_exit(126);
		return 1;
	}
	snprintf(reply, sizeof(reply), "%ld%s", pid < 0 ? -(long)errno : pid,
		 pid > 0 && !(a.flags & CLONE_INTO_CGROUP) ? " m" : "");
	for (int i = 0; i < NFDS; i++)
		close(fds[i]);
	while (send(sock, reply, strlen(reply), MSG_NOSIGNAL) < 0 &&
	       errno == EINTR)
		;
	return 0;
}

int drv_fork_request(int sock, char *dir, size_t cap)
{
	int fds[NFDS], rc = take_request(sock, dir, cap, fds);

	if (rc == 0 || rc == -1)
		return -1;
	if (rc < 0) { /* descriptors, but no directory */
		for (int i = 0; i < NFDS; i++)
			close(fds[i]);
		send(sock, "-22", 3, MSG_NOSIGNAL);
		return 0;
	}
	return fork_one(sock, fds);
}

int drv_template(char *dir, size_t cap)
{
	int rc;

	while ((rc = drv_fork_request(0, dir, cap)) == 0)
		;
	return rc > 0 ? 0 : -1;
}
