/*
 * fds.c - the shell driver's descriptors. Between runs the control pipe
 * is on fd 0 and the result pipe on fd 201 (stdout and stderr /dev/null);
 * a run has /dev/null and its fifos on 0-2 and no protocol descriptor at
 * all. A holder thread with a file table of its own (unshare CLONE_FILES)
 * keeps both pipes open for the life of the shell and is their source:
 * after each run, and whenever fd 0 or 201 is not the pipe it was, they
 * are opened again through /proc/self/task/TID/fd/N, whatever a command
 * closed or however low it set `ulimit -n`. The holder dies with the
 * process, so the daemon still sees the result pipe close when the shell
 * ends, and a forked subshell has neither pipe.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drv.h"

/* bash's, not in its installed headers */
extern int trapped_signal_received;
extern void run_pending_traps(void);

struct chan {
	int fd, want; /* where it is, where it belongs */
	int flags;    /* open(2) flags through /proc */
	dev_t dev;
	ino_t ino;
	char path[64]; /* /proc/self/task/TID/fd/N of the holder */
};

static struct chan ctl, res;
static sem_t holder_ready;
static pid_t holder_tid;
static int holder_err; /* why the holder has no file table of its own */

static void *holder(void *arg)
{
	(void)arg;
	/* its own file table, with only the two pipes in it */
	if (unshare(CLONE_FILES) == 0) {
		close_range(1, (unsigned)drv.res_fd - 1, 0);
		close_range((unsigned)drv.res_fd + 1, ~0U, 0);
		holder_tid = (pid_t)syscall(SYS_gettid);
	} else {
		holder_err = errno; /* a seccomp filter may refuse unshare */
	}
	sem_post(&holder_ready);
	for (;;)
		pause(); /* every signal is blocked here */
	return NULL;
}

static int start_holder(void)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int rc;

	sem_init(&holder_ready, 0, 0);
	sigfillset(&all);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 65536);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &at, holder, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0)
		return -1;
	while (sem_wait(&holder_ready) < 0 && errno == EINTR)
		;
	if (holder_tid)
		return 0;
	errno = holder_err;
	return -1;
}

static int chan_init(struct chan *c, int fd, int flags)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	c->fd = c->want = fd;
	c->flags = flags;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	snprintf(c->path, sizeof(c->path), "/proc/self/task/%ld/fd/%d",
		 (long)holder_tid, fd);
	return 0;
}

static bool chan_ok(const struct chan *c)
{
	struct stat st;

	return c->fd >= 0 && fstat(c->fd, &st) == 0 && st.st_dev == c->dev &&
	       st.st_ino == c->ino;
}

/* Puts c back on its descriptor (or on any one, if that is out of
 * reach). Returns -1 when the pipe cannot be opened any more. */
static int chan_get(struct chan *c)
{
	int fd;

	if (chan_ok(c))
		return 0;
	fd = open(c->path, c->flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fd != c->want && dup3(fd, c->want, O_CLOEXEC) == c->want) {
		close(fd);
		fd = c->want;
	}
	c->fd = fd;
	return 0;
}

/* Opens path on descriptor target, needing one free descriptor at most
 * (whatever a command left of its `ulimit -n`). */
static int put(const char *path, int flags, int target)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	if (dup2(fd, target) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Takes c out of the shell's file table (fd 0 is put right after). */
static void chan_drop(struct chan *c)
{
	if (c->fd >= 0 && c->fd != DRV_CTL_FD && chan_ok(c))
		close(c->fd);
	c->fd = -1;
}

/* Room for the driver's descriptors above a command's `ulimit -n`, for
 * as long as it opens them (a descriptor above the limit stays usable):
 * the limit the command set is put back by drv_unroom. */
void drv_room(struct rlimit *saved)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, saved) < 0) {
		saved->rlim_cur = RLIM_INFINITY;
		return;
	}
	if (saved->rlim_cur > DRV_RES_FD)
		return;
	r.rlim_cur = DRV_RES_FD + 16;
	r.rlim_max =
		saved->rlim_max > r.rlim_cur ? saved->rlim_max : r.rlim_cur;
	setrlimit(RLIMIT_NOFILE, &r); /* a raised hard limit needs root */
}

void drv_unroom(const struct rlimit *saved)
{
	if (saved->rlim_cur <= DRV_RES_FD)
		setrlimit(RLIMIT_NOFILE, saved);
}

int drv_fds_init(void)
{
	/* A shell of another user's gets its pipes with mode 0 (shell.c's
	 * give_pipe): it is not dumpable now (setup_shell), so they may be
	 * opened again, by it alone. */
	if (fchmod(DRV_CTL_FD, 0600) < 0 || fchmod(drv.res_fd, 0600) < 0 ||
	    start_holder() < 0 ||
	    chan_init(&ctl, DRV_CTL_FD, O_RDONLY | O_NONBLOCK) < 0 ||
	    chan_init(&res, drv.res_fd, O_WRONLY) < 0)
		return -1;
	return 0;
}

int drv_idle_fds(void)
{
	struct rlimit lim;
	int rc = -1;

	fflush(stdout);
	fflush(stderr);
	drv_room(&lim);
	if (put("/dev/null", O_RDWR, 1) == 0 && dup2(1, 2) == 2) {
		if (!chan_ok(&ctl))
			ctl.fd = -1; /* fd 0 is the run's /dev/null */
		rc = chan_get(&ctl) == 0 && chan_get(&res) == 0 ? 0 : -1;
	}
	drv_unroom(&lim);
	return rc;
}

int drv_run_fds(const char *gen)
{
	char o[PATH_MAX + 32], e[PATH_MAX + 32];
	struct rlimit lim;
	int rc;

	snprintf(o, sizeof(o), "%s/f%s.o", drv.dir, gen);
	snprintf(e, sizeof(e), "%s/f%s.e", drv.dir, gen);
	drv_room(&lim);
	chan_drop(&res);
	chan_drop(&ctl);
	rc = put("/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = put(o, O_WRONLY | O_CREAT | O_TRUNC, 1);
	if (rc == 0)
		rc = put(e, O_WRONLY | O_CREAT | O_TRUNC, 2);
	drv_unroom(&lim);
	return rc;
}

int drv_run_traps(void)
{
	chan_drop(&res);
	chan_drop(&ctl);
	if (put("/dev/null", O_RDONLY, 0) < 0)
		return -1;
	run_pending_traps();
	trapped_signal_received = 0;
	return drv_idle_fds();
}

int drv_ctl_fd(void)
{
	return ctl.fd;
}

int drv_res_fd(void)
{
	return res.fd;
}

int drv_put_fd(const char *path, int flags, int target)
{
	return put(path, flags, target);
}
