/*
 * files_xattr.c - what files/ has beyond stat: extended attributes (ACLs
 * among them) and the inode flags of lsattr and chattr.
 *
 * Each works on the node's own file through /proc/self/fd/N of its
 * O_PATH descriptor (fgetxattr does not take an O_PATH descriptor; the
 * magic link names the node itself, a symlink too, never what it points
 * to), with the caller's credentials and without the daemon's
 * capabilities (fnode_as_caller): another user may not read or set
 * trusted.* or security.capability through the daemon, as on ext4.
 *
 * The kernel stops asking for any extended attribute of the whole mount
 * after one ENOSYS, so the rest of the tree answers without them
 * (fs/dispatch.c), never ENOSYS.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include "sessions/session/fdq.h"
#include "files_node.h"
#include "files_fh.h"
#include "files_xattr.h"

#define VALUE_MAX 65536 /* XATTR_SIZE_MAX, and XATTR_LIST_MAX */

/* The node of ino with the caller's credentials taken on (*sw) and the
 * path of its file in p; NULL after replying with the error. */
static struct fnode *begin(fuse_req_t req, fuse_ino_t ino, int *sw, char *p,
			   size_t len)
{
	struct fnode *n = fnode_of(ino);

	*sw = n ? fnode_as_caller(req) : -fnode_err(ino);
	if (*sw < 0) {
		fuse_reply_err(req, -*sw);
		return NULL;
	}
	fnode_proc_path(p, len, n->fd);
	return n;
}

/* Replies to a get or a list: the size asked for (size 0), the bytes,
 * or the error (len < 0). */
static void reply_value(fuse_req_t req, size_t size, const char *buf,
			ssize_t len)
{
	if (len < 0)
		fuse_reply_err(req, errno);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)len);
	else
		fuse_reply_buf(req, buf, (size_t)len);
}

/* getxattr of name, or listxattr when name is NULL, as the caller, into
 * a buffer of size bytes (0: the size it needs), then the reply. */
static void query(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char p[64], *buf = NULL;
	ssize_t len = -1;
	int sw;

	if (!begin(req, ino, &sw, p, sizeof(p)))
		return;
	if (size > VALUE_MAX)
		size = VALUE_MAX;
	if (size && !(buf = malloc(size)))
		errno = ENOMEM;
	else
		len = name ? getxattr(p, name, buf, size) :
			     listxattr(p, buf, size);
	fnode_as_self(sw);
	reply_value(req, size, buf, len);
	free(buf);
}

void fxattr_get(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	query(req, ino, name, size);
}

void fxattr_list(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	query(req, ino, NULL, size);
}

void fxattr_set(fuse_req_t req, fuse_ino_t ino, const char *name,
		const char *value, size_t size, int flags)
{
	char p[64];
	int sw, rc;

	if (!begin(req, ino, &sw, p, sizeof(p)))
		return;
	rc = setxattr(p, name, value, size, flags) < 0 ? errno : 0;
	fnode_as_self(sw);
	fuse_reply_err(req, rc);
}

void fxattr_remove(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	char p[64];
	int sw, rc;

	if (!begin(req, ino, &sw, p, sizeof(p)))
		return;
	rc = removexattr(p, name) < 0 ? errno : 0;
	fnode_as_self(sw);
	fuse_reply_err(req, rc);
}

/* The size of cmd's argument (it goes in when in, else out), or 0 for an
 * ioctl files/ does not pass on. FS_IOC_GETFLAGS and FS_IOC_SETFLAGS
 * take an int, whatever their numbers say. */
static size_t arg_size(unsigned int cmd, bool *in)
{
	*in = cmd == FS_IOC_SETFLAGS || cmd == FS_IOC_FSSETXATTR;
	switch (cmd) {
	case FS_IOC_GETFLAGS:
	case FS_IOC_SETFLAGS:
		return sizeof(int);
	case FS_IOC_FSGETXATTR:
	case FS_IOC_FSSETXATTR:
		return sizeof(struct fsxattr);
	default:
		return 0;
	}
}

/*
 * lsattr and chattr: the inode flags (FS_IOC_GETFLAGS, FS_IOC_SETFLAGS)
 * and the extended ones (FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR, which the
 * kernel reads before it sets flags), sent on a file the kernel opened
 * for the purpose, a directory's included. On the open file's
 * descriptor, or on a new one of the directory when the kernel sent no
 * OPENDIR (an earlier program of the mount told it to send none: see
 * fs/files_dir.c), with the caller's credentials: chattr +i needs
 * her own CAP_LINUX_IMMUTABLE. Every other ioctl is ENOTTY.
 */
void fxattr_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz)
{
	const struct fslot *s = fslot_of(fi->fh);
	const struct fnode *n = fi->fh ? NULL : fnode_of(ino);
	union {
		int flags;
		struct fsxattr fx;
	} v = { 0 };
	bool in;
	size_t len = arg_size(cmd, &in);
	int sw = 0, rc = 0, fd = s ? s->fd : -ESTALE;

	(void)arg;
	(void)flags;
	if (!len || (in ? in_bufsz : out_bufsz) < len)
		rc = ENOTTY;
	else if (n)
		fd = fnode_dir_fd(n, fuse_req_ctx(req)->uid);
	if (!rc && fd < 0)
		rc = -fd;
	else if (!rc && (sw = fnode_as_caller(req)) < 0)
		rc = -sw;
	if (!rc) {
		if (in)
			memcpy(&v, in_buf, len);
		rc = ioctl(fd, cmd, &v) < 0 ? errno : 0;
		fnode_as_self(sw);
	}
	if (n && fd >= 0)
		fdq_close(fd);
	if (rc)
		fuse_reply_err(req, rc);
	else
		fuse_reply_ioctl(req, 0, in ? NULL : &v, in ? 0 : len);
}
