/*
 * ctxproc.c - the start of a code context's interpreter. The protocol
 * travels on two fifos of the session's directory that the driver opens
 * by path (close-on-exec in the interpreter, so os.system or
 * child_process never inherit them), and the interpreter's stdout and
 * stderr are pipes of their own: nothing user code prints, or a child it
 * starts, reaches the protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessions/core/creds.h"
#include "sessions/ctx/ctxproc.h"
#include "sessions/core/log.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/shell.h"
#include "sessions/session/fdq.h"

extern char **environ;

/* The file a driver loads from its own directory (sfschart.py,
 * sfsts.js), copied beside it. */
static const char *companion(const char *file)
{
	return strcmp(file, "sfsctx.py") == 0 ? "sfschart.py" : "sfsts.js";
}

bool ctxproc_driver(const char *file, char *buf, size_t len)
{
	const char *with = companion(file);
	char src[PATH_MAX], wsrc[PATH_MAX], wpath[PATH_MAX];
	int rc = -ENOENT;

	if (!shell_find_file(file, src, sizeof(src)))
		return false;
	/* its companion first: a copy of the driver runs beside its copy */
	if (shell_find_file(with, wsrc, sizeof(wsrc)))
		rc = rtdir_copy(wsrc, with, 0444, wpath, sizeof(wpath));
	if (rc == 0)
		rc = rtdir_copy(src, file, 0444, buf, len);
	if (rc < 0) {
		log_msg(LOG_WARNING,
			"cannot copy %s into the runtime directory: %s", src,
			strerror(-rc));
		snprintf(buf, len, "%s", src);
	}
	return true;
}

static void fifo_name(char *buf, size_t len, const char *tag, char end)
{
	snprintf(buf, len, "%s.%c", tag, end);
}

void ctxproc_unlink(int dirfd, const char *tag)
{
	char name[64];

	fifo_name(name, sizeof(name), tag, 'q');
	unlinkat(dirfd, name, 0);
	fifo_name(name, sizeof(name), tag, 'a');
	unlinkat(dirfd, name, 0);
}

/* Makes the fifo TAG.END, the owner's; returns the daemon's end. */
static int make_fifo(const struct ctxproc_spec *sp, char end)
{
	char name[64];
	int fd;

	fifo_name(name, sizeof(name), sp->tag, end);
	unlinkat(sp->dirfd, name, 0);
	if (mkfifoat(sp->dirfd, name, 0600) < 0)
		return -errno;
	if (fchownat(sp->dirfd, name, sp->uid, sp->gid, AT_SYMLINK_NOFOLLOW) <
	    0)
		return -errno;
	fd = openat(sp->dirfd, name,
		    (end == 'q' ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* In the child: the owner's process, in the context's cgroup. An
 * interpreter that cannot be run says why on the answer fifo. */
static void child(const struct ctxproc_spec *sp, int out, int err)
{
	char q[PATH_MAX], a[PATH_MAX], why[PATH_MAX + 64];
	char *argv[] = { (char *)sp->interp,
			 (char *)sp->flag,
			 (char *)sp->driver,
			 q,
			 a,
			 (char *)sp->arg,
			 NULL };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), fd, n = 0;

	creds_reset_signals(0);
	setsid();
	snprintf(q, sizeof(q), "%s/%s.q", sp->dir, sp->tag);
	snprintf(a, sizeof(a), "%s/%s.a", sp->dir, sp->tag);
	if (!sp->flag)
		memmove(argv + 1, argv + 2, 5 * sizeof(*argv));
	if (contain_enter(sp->cg) < 0 || null < 0 || dup2(null, 0) < 0 ||
	    dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	close_range(3, ~0U, 0);
	environ = creds_envp(sp->envp, sp->uid);
	if (creds_become(sp->uid, sp->gid) < 0)
		_exit(126);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (chdir(sp->cwd) < 0)
		n = snprintf(why, sizeof(why), "cannot enter the cwd %s: %s",
			     sp->cwd, strerror(errno));
	else if (execvp(sp->interp, argv) < 0)
		n = snprintf(why, sizeof(why), "cannot run %s: %s", sp->interp,
			     strerror(errno));
	fd = open(a, O_WRONLY | O_NONBLOCK);
	if (fd >= 0)
		dprintf(fd, "fatal %d\n%s", n, why);
	_exit(127);
}

static void close_fds(int *fd, int n)
{
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Counts the interpreter's descriptors as its owner's, checked against
 * her bound and the cut with those just made (fd). */
static int charge(const struct ctxproc_spec *sp, struct ctxproc *p,
		  const int fd[6])
{
	char why[128];
	int top = -1, rc;

	for (int i = 0; i < 6; i++)
		top = fd[i] > top ? fd[i] : top;
	rc = fdq_charge(sp->uid, CTXPROC_FDS, top);
	if (rc < 0)
		snprintf(p->why, sizeof(p->why), "cannot start %s: %s",
			 sp->interp, fdq_why(sp->uid, rc, why, sizeof(why)));
	else
		p->fd_charge = CTXPROC_FDS;
	return rc;
}

int ctxproc_spawn(const struct ctxproc_spec *sp, struct ctxproc *p)
{
	int fd[6] = { -1, -1, -1, -1, -1, -1 }; /* q, a, out r/w, err r/w */
	int rc = (fd[0] = make_fifo(sp, 'q'));

	p->fd_charge = 0;
	p->why[0] = '\0';
	if (rc >= 0)
		rc = fd[1] = make_fifo(sp, 'a');
	if (rc >= 0 &&
	    (pipe2(fd + 2, O_CLOEXEC) < 0 || pipe2(fd + 4, O_CLOEXEC) < 0))
		rc = -errno;
	if (rc >= 0)
		rc = charge(sp, p, fd);
	if (rc < 0)
		goto fail;
	p->pid = fork();
	if (p->pid == 0)
		child(sp, fd[3], fd[5]);
	if (p->pid < 0) {
		rc = -errno;
		fdq_uncharge(sp->uid, &p->fd_charge);
		goto fail;
	}
	close(fd[3]);
	close(fd[5]);
	fcntl(fd[2], F_SETFL, O_NONBLOCK);
	fcntl(fd[4], F_SETFL, O_NONBLOCK);
	p->req_fd = fd[0];
	p->ans_fd = fd[1];
	p->out_fd = fd[2];
	p->err_fd = fd[4];
	return 0;
fail:
	close_fds(fd, 6);
	ctxproc_unlink(sp->dirfd, sp->tag);
	return rc;
}
