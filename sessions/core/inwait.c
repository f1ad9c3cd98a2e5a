/*
 * inwait.c - whether a process is blocked reading its input (inwait.h).
 *
 * The kernel says which system call a blocked task is in, with its
 * arguments (/proc/PID/task/TID/syscall; reading it needs ptrace access,
 * which the daemon has as root). A read names its descriptor. A select
 * over one descriptor can only wait for descriptor 0; a wider select
 * and a poll name their sets by address, read here from /proc/PID/mem,
 * and only inside a private anonymous mapping: a page of a file (one of
 * this very mount, say) could need this daemon's answer before the read
 * ended. An epoll wait names its epoll descriptor, whose fdinfo lists
 * what it watches. Those deep looks take locks of the process (its mmap
 * lock, the epoll's mutex) that another of its tasks could hold, or
 * want, while it waits for this daemon: they are made only while every
 * task is in a plain wait (harmless). A descriptor is named by its
 * link, which asks no filesystem (pipe:[INO]); a terminal's device is
 * taken by a statx that answers from the caches (AT_STATX_DONT_SYNC),
 * and only for a link under /dev/.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "inwait.h"

#define SET_MAX 1024 /* the descriptors of a select or poll looked at */

/* What a process's tasks do, in order: one waiting wins over none, one
 * running over both. */
enum { INWAIT_NO, INWAIT_YES, INWAIT_BUSY };

/* One task being looked at. */
struct task {
	pid_t pid, tid;
	dev_t tty; /* its process's controlling terminal (0: none) */
	const struct inwait_target *tg;
};

/* A small file of /proc, NUL-terminated; its length or -errno. */
static ssize_t read_path(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* From a stat line: the state, the process group and the terminal. */
static bool parse_stat(const char *buf, char *state, pid_t *pgrp, dev_t *tty)
{
	const char *p = strrchr(buf, ')');
	int ppid, pg, sid;
	unsigned tty_nr;

	if (!p || sscanf(p + 1, " %c %d %d %d %u", state, &ppid, &pg, &sid,
			 &tty_nr) != 5)
		return false;
	*pgrp = pg;
	*tty = (dev_t)tty_nr; /* the kernel's encoding is makedev's */
	return true;
}

/* Whether descriptor fd of task k is its input. */
static bool fd_is(const struct task *k, long fd)
{
	char path[80], link[80];
	unsigned long ino;
	struct statx sx;
	ssize_t n;
	dev_t dev;

	if (fd < 0 || fd > INT32_MAX)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/fd/%ld", k->pid, k->tid,
		 fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (!k->tg->tty)
		return sscanf(link, "pipe:[%lu]", &ino) == 1 &&
		       ino == k->tg->pipe_ino;
	if (strncmp(link, "/dev/", 5) != 0 ||
	    statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE, &sx) < 0 ||
	    !S_ISCHR(sx.stx_mode))
		return false;
	dev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
	return dev == makedev(5, 0) || (k->tty && dev == k->tty);
}

/* Whether [addr, addr + len) is in one private anonymous mapping of
 * pid's (reading it asks no filesystem). */
static bool anon_at(pid_t pid, unsigned long addr, size_t len)
{
	char path[40], line[512], perm[8];
	unsigned long lo, hi, ino;
	bool ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &lo, &hi, perm,
			   &ino) != 4 ||
		    addr < lo || addr >= hi)
			continue;
		ok = ino == 0 && perm[3] == 'p' && addr + len <= hi;
		break;
	}
	if (f)
		fclose(f);
	return ok;
}

/* len bytes of pid's memory at addr (an anonymous mapping's only). */
static bool read_mem(pid_t pid, unsigned long addr, void *buf, size_t len)
{
	char path[40];
	ssize_t n = -1;
	int fd;

	if (!addr || !anon_at(pid, addr, len))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, buf, len, (off_t)addr);
		close(fd);
	}
	return n == (ssize_t)len;
}

/* A select: readfds at addr, over nfds descriptors. One descriptor can
 * only be 0 (an empty set of reads would be odd enough to miss). */
static bool select_waits(const struct task *k, long nfds, unsigned long addr)
{
	unsigned char set[SET_MAX / 8];

	if (!addr || nfds <= 0)
		return false;
	if (nfds == 1)
		return fd_is(k, 0);
	if (nfds > SET_MAX)
		nfds = SET_MAX;
	if (!read_mem(k->pid, addr, set, (size_t)(nfds + 7) / 8))
		return false;
	for (long fd = 0; fd < nfds; fd++)
		if ((set[fd / 8] >> (fd % 8) & 1) && fd_is(k, fd))
			return true;
	return false;
}

/* A poll of nfds struct pollfd at addr. */
static bool poll_waits(const struct task *k, unsigned long addr, long nfds)
{
	struct pollfd *fds;
	bool yes = false;

	if (nfds <= 0)
		return false;
	if (nfds > SET_MAX)
		nfds = SET_MAX;
	fds = malloc((size_t)nfds * sizeof(*fds));
	if (fds && read_mem(k->pid, addr, fds, (size_t)nfds * sizeof(*fds)))
		for (long i = 0; i < nfds && !yes; i++)
			yes = (fds[i].events & (POLLIN | POLLRDNORM)) &&
			      fd_is(k, fds[i].fd);
	free(fds);
	return yes;
}

/* An epoll wait on epfd: its fdinfo's targets, "tfd: N events: HEX". */
static bool epoll_waits(const struct task *k, long epfd)
{
	char path[80], line[256];
	unsigned events;
	bool yes = false;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/fdinfo/%ld", k->pid,
		 k->tid, epfd);
	f = epfd >= 0 ? fopen(path, "re") : NULL;
	while (f && !yes && fgets(line, sizeof(line), f))
		yes = sscanf(line, "tfd: %d events: %x", &fd, &events) == 2 &&
		      (events & EPOLLIN) && fd_is(k, fd);
	if (f)
		fclose(f);
	return yes;
}

/* The system call task k is blocked in, and whether it waits for its
 * input; deep: the sets of a select or poll and the targets of an epoll
 * may be read. The numbers are this architecture's (a 32-bit program's
 * are not told apart). */
static bool call_waits(const struct task *k, long nr, const unsigned long *a,
		       bool deep)
{
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_preadv:
	case SYS_preadv2:
		return fd_is(k, (long)a[0]);
#ifdef SYS_select
	case SYS_select:
#endif
	case SYS_pselect6:
		return (deep || a[0] == 1) && select_waits(k, (long)a[0], a[1]);
#ifdef SYS_poll
	case SYS_poll:
#endif
	case SYS_ppoll:
		return deep && poll_waits(k, a[0], (long)a[1]);
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return deep && epoll_waits(k, (long)a[0]);
	default:
		return false;
	}
}

/* Whether a task blocked in call nr holds nothing that a read of its
 * process's maps or memory (its mmap lock, wanted for writing by a call
 * that maps or protects) or of an epoll's fdinfo (the epoll's mutex,
 * held by epoll_ctl while it polls the file it adds: a file of this very
 * mount asks this daemon) could wait for: the plain waits. Another task
 * in any other call, or in a page fault (-1), and the deep looks wait for
 * a later look. */
static bool harmless(long nr)
{
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_pread64:
	case SYS_write:
	case SYS_pselect6:
	case SYS_ppoll:
	case SYS_epoll_pwait:
	case SYS_futex:
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
	case SYS_wait4:
	case SYS_waitid:
	case SYS_rt_sigtimedwait:
	case SYS_rt_sigsuspend:
	case SYS_accept4:
	case SYS_recvfrom:
	case SYS_recvmsg:
#ifdef SYS_select
	case SYS_select:
	case SYS_poll:
	case SYS_epoll_wait:
	case SYS_pause:
#endif
	case SYS_accept:
		return true;
	default:
		return false;
	}
}

#define TASK_MAX 256 /* a process with more threads gets no deep look */

/* What a look saw of one asleep task. */
struct seen {
	pid_t tid;
	long nr; /* -1: in no call (a page fault), -2: not asleep in S */
	unsigned long a[3];
};

/* One task: INWAIT_BUSY when it runs, else INWAIT_NO with what it is
 * blocked in, in *o. */
static int look(pid_t pid, pid_t tid, struct seen *o)
{
	char path[80], buf[512], state;
	pid_t pgrp;
	dev_t tty;

	*o = (struct seen){ tid, -2, { 0 } };
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_path(path, buf, sizeof(buf)) <= 0 ||
	    !parse_stat(buf, &state, &pgrp, &tty))
		return INWAIT_NO;
	if (state == 'R')
		return INWAIT_BUSY;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (state != 'S' || read_path(path, buf, sizeof(buf)) <= 0)
		return INWAIT_NO;
	if (strncmp(buf, "running", 7) == 0)
		return INWAIT_BUSY;
	if (sscanf(buf, "%ld %lx %lx %lx", &o->nr, &o->a[0], &o->a[1],
		   &o->a[2]) < 1)
		o->nr = -2;
	else if (o->nr < 0)
		o->nr = -1;
	return INWAIT_NO;
}

/* Every task of k's process: the first pass looks at each (one that
 * runs ends it), the second asks of those asleep whether they wait for
 * the input, deeply only when every task is in a plain wait. */
static int tasks_wait(struct task *k)
{
	struct seen *all = malloc(TASK_MAX * sizeof(*all));
	int rc = all ? INWAIT_NO : INWAIT_BUSY, n = 0, wild = 0;
	char path[40];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", k->pid);
	d = all ? opendir(path) : NULL;
	while (d && rc != INWAIT_BUSY && (e = readdir(d))) {
		pid_t tid = atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (n == TASK_MAX)
			wild++;
		else if ((rc = look(k->pid, tid, &all[n])) == INWAIT_NO)
			wild += !harmless(all[n++].nr);
	}
	for (int i = 0; i < n && rc == INWAIT_NO; i++) {
		k->tid = all[i].tid;
		if (call_waits(k, all[i].nr, all[i].a, wild == 0))
			rc = INWAIT_YES;
	}
	if (d)
		closedir(d);
	free(all);
	return rc;
}

/* pid's process group and terminal; false when it is gone. */
static bool proc_stat(pid_t pid, pid_t *pgrp, dev_t *tty)
{
	char path[40], buf[512], state;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return read_path(path, buf, sizeof(buf)) > 0 &&
	       parse_stat(buf, &state, pgrp, tty);
}

bool inwait_any(const pid_t *pid, int n, pid_t pgrp,
		const struct inwait_target *tg)
{
	int rc = INWAIT_NO;

	for (int i = 0; i < n && rc != INWAIT_BUSY; i++) {
		struct task k = { pid[i], 0, 0, tg };
		pid_t pg;
		int one;

		if (!proc_stat(pid[i], &pg, &k.tty) || (pgrp > 0 && pg != pgrp))
			continue;
		one = tasks_wait(&k);
		if (one > rc)
			rc = one;
	}
	return rc == INWAIT_YES;
}
