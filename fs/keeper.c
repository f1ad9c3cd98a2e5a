/*
 * keeper.c - the keeper process and the server's side of its socket
 * (keeper.h). The keeper's loop is a poll of three descriptors: its
 * signals, its child's socket, and (only once restarts are used up)
 * /dev/fuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "keeper.h"
#include "sessions/core/log.h"
#include "upgrade.h"

static int server_sock = -1; /* the server's end */
static unsigned long recoveries;

/* The keeper's state. */
struct keeper {
	int fuse_fd, sock, sigfd;
	pid_t server;
	const char *exe, *cwd;
	char **argv;
	int fds[KEEPER_FDS_MAX], nums[KEEPER_FDS_MAX];
	size_t nfds;
	time_t starts[KEEPER_TRIES]; /* of the latest restarts */
	unsigned long restarts;
	bool eio;
};

/* A message of the server: the numbers, and the descriptors by
 * SCM_RIGHTS, that replace what was held. */
static void take_message(struct keeper *k)
{
	char cbuf[CMSG_SPACE(sizeof(int) * KEEPER_FDS_MAX)];
	int nums[KEEPER_FDS_MAX];
	struct iovec iov = { nums, sizeof(nums) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(k->sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	size_t got;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) { /* the server is gone; its exit comes as SIGCHLD */
		close(k->sock);
		k->sock = -1;
		return;
	}
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return;
	got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	for (size_t i = 0; i < k->nfds; i++)
		close(k->fds[i]);
	k->nfds = 0;
	for (size_t i = 0; i < got; i++) {
		int fd;

		memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		/* a number the next server gets it at: small, as the
		 * server's first descriptors are */
		if (i < (size_t)n / sizeof(int) && nums[i] >= 3 &&
		    nums[i] < 256) {
			k->fds[k->nfds] = fd;
			k->nums[k->nfds++] = nums[i];
		} else {
			close(fd);
		}
	}
}

/* In the child: the held descriptors at their numbers, the new socket
 * above them, then the program. */
static void exec_server(struct keeper *k, int sock)
{
	char arg[64];
	int tmp[KEEPER_FDS_MAX], top = 3, v = 0;
	char **argv;

	for (size_t i = 0; i < k->nfds; i++) {
		tmp[i] = fcntl(k->fds[i], F_DUPFD_CLOEXEC, 256 + (int)i);
		top = k->nums[i] >= top ? k->nums[i] + 1 : top;
	}
	sock = fcntl(sock, F_DUPFD_CLOEXEC, 300);
	for (size_t i = 0; i < k->nfds; i++)
		if (tmp[i] < 0 || dup2(tmp[i], k->nums[i]) < 0)
			_exit(127);
	if (dup2(sock, top) < 0)
		_exit(127);
	close_range((unsigned)top + 1, ~0U, 0);
	while (k->argv[v])
		v++;
	argv = calloc((size_t)v + 2, sizeof(*argv));
	if (!argv)
		_exit(127);
	memcpy(argv, k->argv, (size_t)v * sizeof(*argv));
	snprintf(arg, sizeof(arg), "--recover=%d,%d,%lu",
		 k->nfds ? k->nums[0] : -1, top, k->restarts);
	argv[v] = arg;
	if (chdir(k->cwd) < 0) /* relative arguments read as at the start */
		_exit(127);
	execv(k->exe, argv);
	_exit(127);
}

/* A new server with what was held; false when restarts are used up. */
static bool restart(struct keeper *k)
{
	time_t now = time(NULL);
	int sv[2];
	pid_t pid;

	if (k->restarts >= KEEPER_TRIES &&
	    now - k->starts[k->restarts % KEEPER_TRIES] < KEEPER_WINDOW_S)
		return false;
	if (k->nfds == 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	k->starts[k->restarts % KEEPER_TRIES] = now;
	k->restarts++;
	pid = fork();
	if (pid == 0)
		exec_server(k, sv[1]);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return false;
	}
	if (k->sock >= 0)
		close(k->sock);
	k->sock = sv[0];
	k->server = pid;
	return true;
}

/* Restarts are used up: every request fails with EIO (FORGET and
 * INTERRUPT want no answer), so that nothing hangs on the mount. */
static void answer_eio(struct keeper *k)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];
	ssize_t n = read(k->fuse_fd, buf, sizeof(buf));
	struct fuse_in_header *in = (void *)buf;
	struct fuse_out_header out;

	if (n < 0 && errno == ENODEV)
		_exit(1); /* unmounted: the end */
	if (n < (ssize_t)sizeof(*in) || in->opcode == FUSE_FORGET ||
	    in->opcode == FUSE_BATCH_FORGET || in->opcode == FUSE_INTERRUPT)
		return;
	out = (struct fuse_out_header){ sizeof(out), -EIO, in->unique };
	if (write(k->fuse_fd, &out, sizeof(out)) < 0 && errno == ENODEV)
		_exit(1);
}

/* The server's end (or a stop): returns the keeper's exit status, or -1
 * while it goes on. */
static int on_child(struct keeper *k)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid != k->server)
			continue; /* an orphan of a server's, reaped */
		/* the first server's end is the daemon's; a restarted one
		 * that could not start counts as a crash */
		if (WIFEXITED(st) && (!k->restarts || WEXITSTATUS(st) == 0))
			return WEXITSTATUS(st);
		log_msg(LOG_ERR, "keeper: the server (pid %ld) %s %d; starting "
				 "it again",
			(long)pid,
			WIFSIGNALED(st) ? "was killed by signal" : "exited",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		if (!restart(k)) {
			log_msg(LOG_ERR, "keeper: %d crashes in %d s: the "
					 "mount answers EIO from now on",
				KEEPER_TRIES, KEEPER_WINDOW_S);
			k->eio = true;
			k->server = 0;
		}
	}
	return -1;
}

/* Passes a signal on with its sender's pid, so that the server's log
 * names who sent it (SI_QUEUE: the one code a process may give another
 * with a pid of its choosing). */
static void forward(pid_t to, const struct signalfd_siginfo *si)
{
	siginfo_t info = { 0 };

	info.si_signo = (int)si->ssi_signo;
	info.si_code = SI_QUEUE;
	info.si_pid = (pid_t)si->ssi_pid;
	info.si_uid = si->ssi_uid;
	if (syscall(SYS_rt_sigqueueinfo, to, info.si_signo, &info) < 0)
		kill(to, info.si_signo);
}

static void on_signal(struct keeper *k)
{
	struct signalfd_siginfo si;

	while (read(k->sigfd, &si, sizeof(si)) == sizeof(si)) {
		bool end = si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT;

		/* the server says what it makes of them (SIGHUP is logged
		 * and ignored, SIGTERM ends every session) */
		if (si.ssi_signo != SIGCHLD && k->server > 0) {
			forward(k->server, &si);
		} else if (end) { /* answering EIO, no server: the end */
			/* unmounted here, as the server would: else the
			 * mount stays, dead (ENOTCONN) */
			upgrade_unmount();
			_exit(0);
		}
	}
}

static int keeper_loop(struct keeper *k)
{
	int rc;

	for (;;) {
		struct pollfd p[3] = { { k->sigfd, POLLIN, 0 },
				       { k->sock, POLLIN, 0 },
				       { k->eio ? k->fuse_fd : -1, POLLIN, 0 } };

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents) {
			on_signal(k);
			if ((rc = on_child(k)) >= 0)
				return rc;
		}
		/* a restart above replaced the socket polled: the new one
		 * is polled next time round */
		if (p[1].revents && p[1].fd == k->sock)
			take_message(k);
		if (p[2].revents)
			answer_eio(k);
	}
}

int keeper_start(int fuse_fd, const char *exe, const char *cwd, char **argv)
{
	struct keeper k = { .fuse_fd = fuse_fd, .exe = exe, .cwd = cwd,
			    .argv = argv };
	sigset_t set;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		server_sock = sv[1];
		return 0;
	}
	close(sv[1]);
	/* orphans of a crashed server (its shells, for the watchdog's
	 * moment) are reaped here, not left to pid 1 */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	k.sock = sv[0];
	k.server = pid;
	k.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	/* _exit: nothing of the daemon's start is the keeper's to free */
	_exit(k.sigfd < 0 ? 1 : keeper_loop(&k));
}

void keeper_adopt(int sock)
{
	int fl = fcntl(sock, F_GETFD);

	if (fl >= 0) {
		fcntl(sock, F_SETFD, fl | FD_CLOEXEC);
		server_sock = sock;
	}
}

int keeper_hold(const int *fds, size_t n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * KEEPER_FDS_MAX)] = { 0 };
	struct iovec iov = { (void *)fds, n * sizeof(int) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	if (server_sock < 0)
		return 0;
	if (n == 0 || n > KEEPER_FDS_MAX)
		return -EINVAL;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	return sendmsg(server_sock, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

int keeper_fd(void)
{
	return server_sock;
}

unsigned long keeper_recoveries(void)
{
	return recoveries;
}

void keeper_set_recoveries(unsigned long n)
{
	recoveries = n;
}
