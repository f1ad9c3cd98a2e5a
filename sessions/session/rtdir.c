/*
 * rtdir.c - the runtime directory: made at start, swept of dead
 * instances' directories, removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/dirtree.h"
#include "sessions/core/log.h"
#include "sessions/session/rtdir.h"
#include "sessions/core/state.h"
#include "sessions/session/spool.h"

static int rt_fd = -1;
static int live_fd = -1; /* holds the lock that says it is in use */
static char rt_path[4096];

/* Spool directories hold files (and, the instance's, directories). */
static const struct dirtree_how spool_how = { .files = true,
					      .depth = UINT_MAX,
					      .busy_tries = 1 };

static void remove_spool(int parent, const char *name)
{
	dirtree_remove(parent, name, &spool_how);
}

/* All output together may take max_spool_bytes, by default half of the
 * filesystem that holds it, so that a runaway leaves the host room. */
static void set_budget(void)
{
	struct statvfs st;
	uint64_t b = conf.max_spool_bytes;

	if (!b && fstatvfs(rt_fd, &st) == 0)
		b = (uint64_t)st.f_blocks * st.f_frsize / 2;
	spool_set_budget(b);
	log_msg(LOG_INFO, "spool budget: %llu bytes in %s",
		(unsigned long long)b, rt_path);
}

/* Makes and locks top/PID (top/PID.i after the first try): a daemon of
 * another pid namespace sharing the runtime directory (containers sharing
 * /dev/shm) may hold it, the same number in its namespace. Returns 0,
 * -EBUSY when it is held, or another -errno. */
static int make_own(int top_fd, const char *top, unsigned i)
{
	char name[64];

	if (i == 0)
		snprintf(name, sizeof(name), "%ld", (long)getpid());
	else
		snprintf(name, sizeof(name), "%ld.%u", (long)getpid(), i);
	if (mkdirat(top_fd, name, 0711) < 0 && errno != EEXIST)
		return -errno;
	snprintf(rt_path, sizeof(rt_path), "%s/%s", top, name);
	rt_fd = openat(top_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rt_fd < 0)
		return -errno;
	live_fd = dirtree_hold_live(rt_fd);
	if (live_fd >= 0)
		return 0;
	close(rt_fd);
	rt_fd = -1;
	return -EBUSY;
}

/* Opens the instances' directory, try i: "sessionfs" for root and
 * "sessionfs-UID" for another user (each has its own), ".i" after the
 * first try. Only a directory of this user's that no one else may write
 * is taken: /dev/shm is everyone's, and someone else's directory of that
 * name would let its owner replace the spool files. */
static int open_top(char *top, size_t len, unsigned i)
{
	uid_t me = geteuid();
	struct stat st;
	int n, fd;

	n = snprintf(top, len, "%s/sessionfs", conf.runtime_dir);
	if (me != 0)
		n += snprintf(top + n, len - (size_t)n, "-%u", (unsigned)me);
	if (i)
		snprintf(top + n, len - (size_t)n, ".%u", i);
	/* 0711 down to the sessions' directories: a shell that runs as a
	 * session's owner opens its files by name; nobody lists them. */
	if (mkdir(top, 0711) < 0 && errno != EEXIST)
		return -errno;
	fd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == me &&
	    !(st.st_mode & 022)) {
		fchmod(fd, 0711); /* one made by an older sessionfs was 0700 */
		return fd;
	}
	log_msg(LOG_WARNING,
		"%s is not a directory of uid %u that only it may write: "
		"not using it",
		top, (unsigned)me);
	if (fd >= 0)
		close(fd);
	return -EPERM;
}

int rtdir_init(void)
{
	char top[4096];
	int top_fd = -EPERM, rc;

	for (unsigned i = 0; i < 100 && top_fd == -EPERM; i++)
		top_fd = open_top(top, sizeof(top), i);
	if (top_fd < 0)
		return top_fd;
	dirtree_sweep_stale(top_fd, "", remove_spool);
	rc = -EBUSY;
	for (unsigned i = 0; i < 100 && rc == -EBUSY; i++)
		rc = make_own(top_fd, top, i);
	close(top_fd);
	if (rc == 0)
		set_budget();
	return rc;
}

void rtdir_fini(void)
{
	char *slash = strrchr(rt_path, '/');

	if (rt_fd < 0 || !slash)
		return;
	close(rt_fd);
	*slash = '\0';
	rt_fd = open(rt_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rt_fd >= 0) {
		remove_spool(rt_fd, slash + 1);
		close(rt_fd);
	}
	rt_fd = -1;
}

bool rtdir_noexec(void)
{
	struct statvfs st;

	return fstatvfs(rt_fd, &st) == 0 && (st.f_flag & ST_NOEXEC);
}

int rtdir_make(const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", rt_path, name);
	if (mkdirat(rt_fd, name, 0711) < 0)
		return -errno;
	fd = openat(rt_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void rtdir_remove(const char *name)
{
	remove_spool(rt_fd, name);
}

/* The copies of rtdir_copy: a subdirectory, made at the first. */
#define COPIES_DIR "drivers"

/* Copies the file at src to name in dirfd with mode, made anew. */
static int copy_file(const char *src, int dirfd, const char *name,
		     mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	unlinkat(dirfd, name, 0);
	out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		     0600);
	if (out < 0)
		rc = -errno;
	while (rc == 0 && (n = sendfile(out, in, NULL, 1 << 20)) != 0)
		if (n < 0)
			rc = -errno;
	if (rc == 0 && fchmod(out, mode) < 0) /* whatever the umask */
		rc = -errno;
	close(in);
	if (out >= 0)
		close(out);
	if (rc < 0)
		unlinkat(dirfd, name, 0);
	return rc;
}

int rtdir_copy(const char *src, const char *name, mode_t mode, char *path,
	       size_t len)
{
	static char dir[PATH_MAX];
	static int dirfd = -1;
	struct stat st;
	int rc = 0;

	if (dirfd < 0)
		rc = dirfd = rtdir_make(COPIES_DIR, dir, sizeof(dir));
	if (rc == -EEXIST) { /* made by a call whose open failed */
		dirfd = openat(rt_fd, COPIES_DIR,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = dirfd < 0 ? -errno : 0;
	}
	/* made once: the file of this start, whatever later replaces it */
	if (rc >= 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = copy_file(src, dirfd, name, mode);
	if (rc >= 0)
		snprintf(path, len, "%s/%s", dir, name);
	return rc < 0 ? rc : 0;
}

enum { RK_FD = 1, RK_PATH, RK_LIVE };

void rtdir_save(struct state_w *w)
{
	state_put_fd(w, RK_FD, rt_fd);
	state_put_str(w, RK_PATH, rt_path);
	state_put_fd(w, RK_LIVE, live_fd);
}

int rtdir_restore(const struct state_r *o)
{
	rt_fd = state_get_fd(o, RK_FD);
	live_fd = state_get_fd(o, RK_LIVE);
	if (rt_fd < 0 || !state_get_buf(o, RK_PATH, rt_path, sizeof(rt_path)))
		return rtdir_init(); /* a checkpoint: a directory of its own */
	set_budget();
	return 0;
}

int rtdir_put(const char *name, const void *p, size_t len)
{
	char tmp[300];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", name);
	fd = openat(rt_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				       O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return -errno;
	if (write(fd, p, len) != (ssize_t)len)
		rc = errno ? -errno : -ENOSPC;
	close(fd);
	if (rc == 0 && renameat(rt_fd, tmp, rt_fd, name) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(rt_fd, tmp, 0);
	return rc;
}

void *rtdir_get(const char *name, size_t *len)
{
	int fd = dirtree_open_plain(rt_fd, name);
	struct stat st;
	void *p = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (1LL << 30) &&
	    (p = malloc((size_t)st.st_size)) &&
	    pread(fd, p, (size_t)st.st_size, 0) != st.st_size) {
		free(p);
		p = NULL;
	}
	if (p)
		*len = (size_t)st.st_size;
	close(fd);
	return p;
}

int rtdir_reopen(const char *name, char *path, size_t len)
{
	int fd = openat(rt_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);

	if (fd >= 0)
		snprintf(path, len, "%s/%s", rt_path, name);
	return fd >= 0 ? fd : rtdir_make(name, path, len);
}
