/*
 * safepath.c - whether a user's path names a directory, found without
 * looking anything up in this daemon's own mount: the daemon is the only
 * thread that answers that mount's requests, so a stat(2) of a path in
 * it (a cwd written as MOUNT/files/sub), or a child it waits for in one
 * system call (clone3 CLONE_VFORK) doing its chdir there, would wait for
 * itself. The path is walked one name at a time with O_PATH, symbolic
 * links followed by hand, and each step is checked with statx's
 * AT_STATX_DONT_SYNC, which FUSE answers from its cache; the walk stops
 * at the first step on the mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "safepath.h"

#define MAX_LINKS 40

static dev_t mount_dev;
static bool have_mount;

/* The type and device of dirfd/path (AT_EMPTY_PATH: dirfd's file), from
 * the attributes the kernel has (FUSE asks nothing for them). */
static int look_at(int dirfd, const char *path, int flags, mode_t *mode,
		   dev_t *dev)
{
	struct statx stx;

	if (statx(dirfd, path, flags | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) <
	    0)
		return -errno;
	*mode = stx.stx_mode;
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	return 0;
}

int safepath_set_mount(const char *mountpoint)
{
	mode_t mode;
	int rc = mountpoint ?
			 look_at(AT_FDCWD, mountpoint, 0, &mode, &mount_dev) :
			 0;

	have_mount = mountpoint && rc == 0;
	return rc;
}

/* The type of fd's file and whether it is on the mount. */
static int look(int fd, mode_t *mode, bool *on_mount)
{
	dev_t dev = 0; /* gcc -O3 cannot tell look_at sets it */
	int rc = look_at(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mode,
			 &dev);

	*on_mount = rc == 0 && have_mount && dev == mount_dev;
	return rc;
}

/* Puts the link fd names before the rest of the path in buf. */
static int expand(int fd, char *buf, const char *rest)
{
	char target[PATH_MAX], tail[PATH_MAX];
	ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	snprintf(tail, sizeof(tail), "%s", rest);
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", target, tail) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* One step from *dir by name: *dir moves on to a directory; for a link,
 * its target's names come first in buf (*rest), from *dir when relative,
 * from "/" when absolute. */
static int step(int *dir, const char *name, char *buf, const char **rest,
		int *links, bool *on_mount)
{
	int fd = openat(*dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	mode_t mode;
	int rc = fd < 0 ? -errno : look(fd, &mode, on_mount);

	if (rc == 0 && !*on_mount && S_ISLNK(mode)) {
		rc = ++*links > MAX_LINKS ? -ELOOP : expand(fd, buf, *rest);
		*rest = buf;
		close(fd);
		fd = -1;
		if (rc == 0 && buf[0] == '/') {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			rc = fd < 0 ? -errno : 0;
		}
	} else if (rc == 0 && !*on_mount && !S_ISDIR(mode)) {
		rc = -ENOTDIR;
	}
	if (rc == 0 && fd >= 0) {
		close(*dir);
		*dir = fd;
	} else if (fd >= 0) {
		close(fd);
	}
	return rc;
}

int safepath_dir(const char *path, bool *on_mount)
{
	char buf[PATH_MAX], name[NAME_MAX + 1];
	const char *rest = path;
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), links = 0, rc;

	*on_mount = false;
	if (dir < 0)
		return -errno;
	rc = path[0] == '/' ? 0 : -EINVAL;
	while (rc == 0 && !*on_mount) {
		size_t n;

		rest += strspn(rest, "/");
		n = strcspn(rest, "/");
		if (n == 0)
			break;
		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(name, rest, n);
		name[n] = '\0';
		rest += n;
		rc = step(&dir, name, buf, &rest, &links, on_mount);
	}
	close(dir);
	return rc;
}
