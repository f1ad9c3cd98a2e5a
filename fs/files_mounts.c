/*
 * files_mounts.c - the mounts of the daemon's namespace, watched for
 * files/ (see files_mounts.h).
 *
 * At each mount (FAN_MNT_ATTACH), the names of every mount point below
 * the workspace (from /proc/self/mountinfo, so a bind mount of a file
 * too) are invalidated in their directories, when the kernel knows the
 * directory: the next lookup answers EXDEV. An unmount needs nothing: a
 * lookup that answered EXDEV left no entry in the kernel, and an entry
 * cached before the mount still names the file under it, which is what
 * is there again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "files_inval.h"
#include "files_mounts.h"
#include "files_node.h"
#include "files_watch.h"

/* Mount notifications (Linux 6.15); the headers here are older. */
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#define FAN_REPORT_MNT 0x00004000
#define FAN_MNT_ATTACH 0x01000000
#endif

static struct loop_watch mounts = { .fd = -1 };
static char ws[PATH_MAX]; /* the workspace's path in this namespace */
static size_t ws_len;

/* mountinfo's escapes (\040 for a space...) undone in place. */
static void unescape(char *s)
{
	char *o = s;
	unsigned v;

	for (; *s; s++) {
		if (s[0] == '\\' && sscanf(s + 1, "%3o", &v) == 1 && v < 256) {
			*o++ = (char)v;
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The entry of mount point mp, when it is below the workspace and the
 * kernel knows its directory through files/. */
static void drop_entry(char *mp)
{
	char *name = strrchr(mp, '/'), *dir = mp + ws_len + 1;
	struct fnode *n = &fnode_root;
	struct stat st;
	int fd;

	if (strncmp(mp, ws, ws_len) || mp[ws_len] != '/' || !name[1])
		return;
	*name++ = '\0';
	if (name - 1 > mp + ws_len) { /* below a subdirectory */
		fd = fnode_openat(fnode_root.fd, dir,
				  O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		n = fd >= 0 && fstat(fd, &st) == 0 ?
			    fnode_find(st.st_dev, st.st_ino) :
			    NULL;
		if (fd >= 0)
			close(fd);
	}
	if (n)
		finval_entry(fnode_ino(n), name, strlen(name));
}

/* Every mount point of mountinfo below the workspace. */
static void drop_all(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * PATH_MAX], mp[PATH_MAX];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1) {
			unescape(mp);
			drop_entry(mp);
		}
	fclose(f);
}

static void on_mounts(struct loop_watch *w, uint32_t events)
{
	char buf[4096] __attribute__((aligned(8)));
	bool any = false;

	(void)events;
	while (read(w->fd, buf, sizeof(buf)) > 0)
		any = true;
	if (any)
		drop_all();
}

/* The group and its mark on the namespace: 0 or -errno. */
static int mark(void)
{
	int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	int rc = ns < 0 ? -errno : 0;

	mounts.fd = rc ? -1 :
			 fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC |
					       FAN_NONBLOCK | FAN_REPORT_MNT,
				       O_RDONLY | O_CLOEXEC);
	if (rc == 0 && mounts.fd < 0)
		rc = -errno;
	if (rc == 0 && fanotify_mark(mounts.fd, FAN_MARK_ADD | FAN_MARK_MNTNS,
				     FAN_MNT_ATTACH, ns, NULL) < 0)
		rc = -errno;
	if (rc == 0)
		rc = loop_add(&mounts, EPOLLIN);
	if (ns >= 0)
		close(ns);
	return rc;
}

void fmounts_start(void)
{
	char p[64];
	ssize_t len;
	int rc;

	fnode_proc_path(p, sizeof(p), fnode_root.fd);
	len = readlink(p, ws, sizeof(ws) - 1);
	rc = len <= 0 || len == sizeof(ws) - 1 ? -ENAMETOOLONG : 0;
	if (rc == 0) {
		ws[len] = '\0';
		ws_len = strcmp(ws, "/") ? (size_t)len : 0;
		mounts.fn = on_mounts;
		rc = mark();
	}
	if (rc < 0) {
		log_msg(LOG_NOTICE,
			"files/: no mount notifications (%s, Linux 6.15): a "
			"mount below the workspace is seen after %.0f s",
			strerror(-rc), FWATCH_TTL);
		if (mounts.fd >= 0)
			close(mounts.fd);
		mounts.fd = -1;
	}
}
