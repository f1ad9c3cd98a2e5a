/*
 * mountpoint.c - what is on the mount point before sessionfs mounts: a
 * second sessionfs would hide the live one's sessions, a regular file
 * would mount and then give EIO on every access, and a sessionfs that
 * died leaves a mount that fails with ENOTCONN until someone unmounts it,
 * so that a supervisor's restart would fail. Only the topmost mount at
 * the path counts, and only a fuse.sessionfs whose root answers ENOTCONN
 * is ever unmounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mountpoint.h"
#include "sessions/core/log.h"

/* A live daemon answers a stat of its root at once; a stopped one never. */
#define PROBE_MS 5000
/* Mounts stacked on one path that are looked at (and dead ones cleaned). */
#define MAX_AT 16

struct mount_at {
	unsigned id, parent;
	bool sfs;
};

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && is_octal(s[1]) && is_octal(s[2]) &&
		    is_octal(s[3])) {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* Reads the mounts at path from one mountinfo line into at[*n]. */
static void add_line(const char *line, const char *path, struct mount_at *at,
		     size_t *n)
{
	const char *sep = strstr(line, " - ");
	unsigned id, parent;
	char *mp = NULL;

	if (sep && sscanf(line, "%u %u %*s %*s %ms", &id, &parent, &mp) == 3) {
		unescape(mp);
		if (strcmp(mp, path) == 0) {
			at[*n].id = id;
			at[*n].parent = parent;
			at[*n].sfs =
				strncmp(sep + 3, "fuse.sessionfs ", 15) == 0;
			(*n)++;
		}
	}
	free(mp);
}

/* Whether the topmost mount at path (the one no other mount at path is
 * stacked on) is a sessionfs: 1, else 0 (no mount there counts as 0). */
static int top_is_sessionfs(const char *path)
{
	struct mount_at at[MAX_AT];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return 0;
	while (n < MAX_AT && getline(&line, &cap, f) > 0)
		add_line(line, path, at, &n);
	free(line);
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		bool covered = false;

		for (size_t j = 0; j < n; j++)
			covered |= j != i && at[j].parent == at[i].id;
		if (!covered)
			return at[i].sfs;
	}
	return 0;
}

struct probe_res {
	int err;
	mode_t mode;
};

/* stat(path) in a child, so that a mount whose daemon hangs cannot hang
 * this one too: 0 and *mode, a negative errno, or -ETIMEDOUT. */
static int probe(const char *path, mode_t *mode)
{
	struct probe_res r = { 0 };
	struct pollfd pfd = { .events = POLLIN };
	int p[2], rc = -ETIMEDOUT;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		struct stat st;

		r.err = stat(path, &st) < 0 ? errno : 0;
		r.mode = r.err ? 0 : st.st_mode;
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	if (pid < 0)
		rc = -errno;
	close(p[1]);
	pfd.fd = p[0];
	if (pid > 0 && poll(&pfd, 1, PROBE_MS) == 1 &&
	    read(p[0], &r, sizeof(r)) == sizeof(r)) {
		rc = -r.err;
		*mode = r.mode;
	}
	if (pid > 0 && rc == -ETIMEDOUT)
		kill(pid, SIGKILL);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(p[0]);
	return rc;
}

/* Lazily unmounts path: umount2 when allowed (root), else fusermount3. */
static int unmount_dead(const char *path)
{
	pid_t pid;
	int st;

	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", "-z", "--", path,
		       (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

/* What stands at path, once no dead sessionfs is left there. */
static int verdict(const char *path, int top, int rc, mode_t mode)
{
	if (top == 1 && rc == 0) {
		fprintf(stderr,
			"sessionfs: %s: a sessionfs is already mounted there; "
			"a second one would hide its sessions\n",
			path);
		return -EBUSY;
	}
	if (rc == -ETIMEDOUT) {
		fprintf(stderr,
			"sessionfs: %s: the file system mounted there does "
			"not answer\n",
			path);
		return rc;
	}
	if (rc == 0 && !S_ISDIR(mode)) {
		fprintf(stderr, "sessionfs: cannot mount on %s: %s\n", path,
			strerror(ENOTDIR));
		return -ENOTDIR;
	}
	return 0; /* libfuse reports any other error of path */
}

int mountpoint_prepare(const char *path)
{
	mode_t mode = 0;
	int top, rc;

	/* mount.fuse3 may pass /dev/fuse already opened and mounted */
	if (strncmp(path, "/dev/fd/", 8) == 0)
		return 0;
	for (int i = 0;; i++) {
		top = top_is_sessionfs(path);
		rc = probe(path, &mode);
		if (top != 1 || rc != -ENOTCONN || i == MAX_AT)
			break;
		rc = unmount_dead(path);
		if (rc < 0) {
			fprintf(stderr,
				"sessionfs: %s: a sessionfs that died is "
				"mounted there and cannot be unmounted: %s\n",
				path, strerror(-rc));
			return rc;
		}
		log_msg(LOG_WARNING,
			"%s: unmounted a dead sessionfs (its daemon had ended)",
			path);
	}
	return verdict(path, top, rc, mode);
}
