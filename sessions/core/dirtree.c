/*
 * dirtree.c - the one walk that removes spool directories (files, any
 * depth) and cgroups (subdirectories only, killed first), and the one
 * sweep for what dead instances left. A live instance holds an flock on
 * a file of its runtime directory: a pid says nothing about a daemon of
 * another pid namespace (containers sharing /dev/shm).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>
#include "sessions/core/dirtree.h"

/* Whether the walk descends into entry e. */
static bool wanted(const struct dirent *e, const struct dirtree_how *how)
{
	if (how->files)
		return strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	return e->d_type == DT_DIR && e->d_name[0] != '.';
}

static void remove_at(int parent, const char *name,
		      const struct dirtree_how *how, unsigned depth)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd >= 0 && how->enter)
		how->enter(fd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		if (how->files)
			unlinkat(parent, name, 0); /* not a directory */
		return;
	}
	while (depth > 0 && (e = readdir(d)))
		if (wanted(e, how) &&
		    (!how->files || unlinkat(dirfd(d), e->d_name, 0) < 0))
			remove_at(dirfd(d), e->d_name, how, depth - 1);
	closedir(d);
	for (unsigned i = 1; unlinkat(parent, name, AT_REMOVEDIR) < 0 &&
			     errno == EBUSY && i < how->busy_tries;
	     i++)
		usleep(10000); /* killed processes take a moment to go */
}

void dirtree_remove(int parent, const char *name, const struct dirtree_how *how)
{
	remove_at(parent, name, how, how->depth);
}

int dirtree_hold_live(int dfd)
{
	int fd = openat(dfd, DIRTREE_LIVE,
			O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd; /* held while fd is open: the process's life */
	close(fd);
	return -EBUSY;
}

/* Whether the instance of parent/name, numbered pid, is gone: its lock
 * is free, or (no lock file: cgroups, or older instances) its pid names
 * no process. */
static bool gone(int parent, const char *name, long pid)
{
	char path[300];
	int fd;
	bool unlocked;

	snprintf(path, sizeof(path), "%s/" DIRTREE_LIVE, name);
	fd = openat(parent, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
	unlocked = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd); /* and the lock taken to look goes with it */
	return unlocked;
}

void dirtree_sweep_stale(int parent, const char *prefix,
			 void (*fn)(int parent, const char *name))
{
	int fd = dup(parent);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t n = strlen(prefix);
	struct dirent *e;
	long pid;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, n) == 0 &&
		    sscanf(e->d_name + n, "%ld", &pid) == 1 &&
		    gone(dirfd(d), e->d_name, pid))
			fn(dirfd(d), e->d_name);
	closedir(d);
}

int dirtree_open_plain(int dirfd, const char *name)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	return fd;
}
