/*
 * fork.c - a session made from another (its ctl's "fork NEW"): the new
 * session's shell is a fork of the source's, asked of its driver between
 * runs (sessions/sfsdrv/fork.c), so it starts with the whole state of
 * bash as the latest run left it. The request goes as the template's
 * does (shell_fork_from), on a socket the daemon listens on in the
 * source's directory for that one connection, which it takes from the
 * source's shell alone (its pid). A source without a shell gives a new
 * shell started from its cwd and variables, as its own next run would.
 * The daemon's side of the session follows either way: its variables
 * (env/, with writes not yet sent), its cwd and its timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/session/driver.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"

#define FORK_SOCK "fork"
/* How long the source's shell may take to connect: it is idle, but it
 * may be running a trap between runs. The loop waits, as for the
 * template: a shell that does not answer makes its session refuse forks
 * for FORK_BACKOFF_MS (EAGAIN), so that its owner cannot hold the loop
 * for long. */
#define FORK_CONNECT_MS 100
#define FORK_BACKOFF_MS 10000

/* The listening socket FORK_SOCK in src's directory, only its owner's,
 * its path in a. Returns it or -errno. */
static int listen_on(struct sess *src, struct sockaddr_un *a)
{
	int fd, rc = 0;

	a->sun_family = AF_UNIX;
	if ((size_t)snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s",
			     src->dir, FORK_SOCK) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlinkat(src->dirfd, FORK_SOCK, 0); /* anything a command left */
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) < 0 ||
	    fchmodat(src->dirfd, FORK_SOCK, 0600, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchownat(src->dirfd, FORK_SOCK, src->uid, src->gid,
		     AT_SYMLINK_NOFOLLOW) < 0 ||
	    listen(fd, 4) < 0)
		rc = -errno;
	if (rc == 0)
		return fd;
	close(fd);
	return rc;
}

/* The connection of src's shell on lsock, within FORK_CONNECT_MS; any
 * other (a process of its commands that found the socket) is closed. */
static int accept_shell(struct sess *src, int lsock)
{
	int64_t until = loop_now_ms() + FORK_CONNECT_MS;
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int64_t left;
	int fd;

	while ((left = until - loop_now_ms()) > 0) {
		if (poll(&p, 1, (int)left) <= 0)
			break;
		fd = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
		    cr.pid == src->pid)
			return fd;
		close(fd);
	}
	return -ETIMEDOUT;
}

/* Forks src's shell as n's. Returns 0 or -errno. */
static int fork_shell(struct sess *src, struct sess *n)
{
	struct shell_who w = { n->dir, n->cwd, n->uid, n->gid };
	struct sockaddr_un a;
	char line[sizeof(a.sun_path) + 8];
	int lsock = listen_on(src, &a), conn = -1, ctl = -1, res = -1;
	pid_t pid = lsock;

	if (lsock < 0)
		return lsock;
	driver_sched(src, false); /* it has work now */
	snprintf(line, sizeof(line), "fork %s\n", a.sun_path);
	if (write(src->ctl_fd, line, strlen(line)) < 0)
		pid = -errno;
	else if ((conn = accept_shell(src, lsock)) < 0)
		pid = conn;
	else
		pid = shell_fork_from(conn, &w, &n->cg, &ctl, &res);
	if (conn >= 0)
		close(conn);
	close(lsock);
	unlinkat(src->dirfd, FORK_SOCK, 0);
	if (pid < 0)
		return (int)pid;
	n->ctl_fd = ctl;
	n->res.fd = res;
	return driver_take(n, pid);
}

/* n's daemon-side state from src's: variables, the writes the shell
 * has not had yet, cwd, timeout. */
static int copy_state(struct sess *n, const struct sess *src)
{
	char *cwd = strdup(src->cwd);
	int rc = cwd ? 0 : -ENOMEM;

	if (rc == 0)
		rc = envmap_assign(&n->env, &src->env);
	if (rc == 0)
		rc = envmap_assign(&n->pend_set, &src->pend_set);
	if (rc == 0)
		rc = envmap_assign(&n->pend_unset, &src->pend_unset);
	if (rc < 0) {
		free(cwd);
		return rc;
	}
	free(n->cwd);
	n->cwd = cwd;
	n->pend_cwd = src->pend_cwd;
	n->timeout_ms = src->timeout_ms;
	return 0;
}

/* Whether src may be forked now by uid: 0, or -errno with a line in its
 * error. */
static int may_fork(struct sess *src, const char *name, uid_t uid)
{
	if (src->dying)
		return -ENOENT;
	if (uid != src->uid) {
		/* its functions and traps would run as uid */
		sess_error(src,
			   "ctl: fork %.64s: only the session's owner may fork "
			   "it",
			   name);
		return -EPERM;
	}
	if (src->active || !list_empty(&src->queue))
		return -EBUSY;
	return loop_now_ms() < src->fork_after ? -EAGAIN : 0;
}

int sess_fork(struct sess *src, const char *name, uid_t uid, gid_t gid,
	      struct sess **out)
{
	struct sess *n = NULL;
	int rc = may_fork(src, name, uid);

	if (rc == -EPERM || rc == -ENOENT)
		return rc; /* said, or nobody to say it to */
	if (rc == 0)
		rc = sess_may_create(uid);
	if (rc == 0)
		rc = sess_create(name, uid, gid, &n);
	if (rc == 0) {
		driver_retire(n); /* a shell made ahead */
		if (src->pid && src->ctl_fd >= 0 && src->res.fd >= 0)
			rc = fork_shell(src, n);
		if (rc == -ETIMEDOUT)
			src->fork_after = loop_now_ms() + FORK_BACKOFF_MS;
	}
	if (rc == 0) {
		driver_read(src); /* the latest run's variables, sent before */
		rc = copy_state(n, src);
	}
	if (rc == -ETIMEDOUT)
		sess_error(src,
			   "ctl: fork %.64s: the shell did not answer within "
			   "%d ms (a trap running between runs, or no "
			   "descriptor left under its ulimit -n); forks are "
			   "refused for %d s",
			   name, FORK_CONNECT_MS, FORK_BACKOFF_MS / 1000);
	else if (rc < 0)
		sess_error(src, "ctl: fork %.64s: %s", name, strerror(-rc));
	if (rc < 0) {
		if (n)
			sess_delete(n, NULL, NULL);
		return rc;
	}
	log_msg(LOG_INFO, "session %s: forked from %s", name, src->name);
	*out = n;
	return 0;
}
