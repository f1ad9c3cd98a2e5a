/*
 * files_dir.c - the listings of files/' directories. OPENDIR opens the
 * directory as the caller and makes a slot (fs/files_fh.c) whose stream
 * READDIR reads on. A READDIR without a handle comes only on a mount
 * whose kernel was told by an earlier program (before an upgrade in
 * place) to send no OPENDIR: it opens the directory afresh, as the
 * caller, at the backing filesystem's offset.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "sessions/session/fdq.h"
#include "files.h"
#include "files_dir.h"
#include "files_fh.h"
#include "files_node.h"
#include "files_watch.h"

/* A directory's open is checked here, as the caller: the kernel's own
 * check (default_permissions) is on attributes it may have cached before
 * a chmod made behind its back. Its changes are read first
 * (fwatch_opening). */
void fdir_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = fnode_peek(ino);
	uid_t uid = fuse_req_ctx(req)->uid;
	int err = n ? 0 : fnode_err(ino), fresh = 0, fd;

	if (!err && !S_ISDIR(n->type))
		err = ENOTDIR;
	if (!err && (fresh = fwatch_opening(n, req)) < 0)
		err = -fresh;
	if (!err) {
		fd = fnode_open_as_caller(req, n,
					  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = -fslot_opendir(fdq_take(uid, fd), uid, &fi->fh);
	}
	/* The kernel keeps the listing in the directory's pages, which
	 * fs/files_watch.c drops with its times when an entry changes. A
	 * directory changed since its last open is listed from the daemon
	 * and its pages dropped: the kernel's own check of its mtime could
	 * take an answer that the notifier's invalidation, landing at that
	 * moment, makes it throw away, and keep the old listing. */
	fi->cache_readdir = fresh > 0;
	fi->keep_cache = fresh > 0;
	if (err)
		fuse_reply_err(req, err);
	else if (fuse_reply_open(req, fi) != 0)
		fslot_close(fi->fh);
}

/*
 * The inode number shown for an entry of dir: the FUSE inode when the
 * file has a node, the mount root for the workspace's "..", else the
 * real one (the kernel looks names up for real inodes anyway).
 */
static ino_t entry_ino(const struct fnode *dir, const struct dirent *de)
{
	const struct fnode *n;

	if (!strcmp(de->d_name, "."))
		return fnode_ino(dir);
	if (!strcmp(de->d_name, ".."))
		return dir == &fnode_root ? FUSE_ROOT_ID : de->d_ino;
	n = fnode_find(dir->dev, de->d_ino);
	return n ? fnode_ino(n) : de->d_ino;
}

/* Fills buf with entries from d. Returns the length, or -errno. */
static ssize_t fill_dir(fuse_req_t req, const struct fnode *dir,
			struct fslot *d, char *buf, size_t size)
{
	size_t used = 0, len;
	struct stat st;

	for (;;) {
		if (!d->de) {
			errno = 0;
			d->de = readdir(d->dp);
			if (!d->de)
				return used || !errno ? (ssize_t)used : -errno;
		}
		st = (struct stat){ .st_ino = entry_ino(dir, d->de),
				    .st_mode = (mode_t)d->de->d_type << 12 };
		len = fuse_add_direntry(req, buf + used, size - used,
					d->de->d_name, &st, d->de->d_off);
		if (len > size - used)
			return (ssize_t)used;
		used += len;
		d->off = d->de->d_off;
		d->de = NULL;
	}
}

/* Replies to a READDIR of dir from d at off, in a buffer of size. */
static void reply_dir(fuse_req_t req, const struct fnode *dir, struct fslot *d,
		      size_t size, off_t off)
{
	char *buf = malloc(size ? size : 1);
	ssize_t len = buf ? 0 : -ENOMEM;

	if (buf && off != d->off) {
		seekdir(d->dp, off);
		d->de = NULL;
		d->off = off;
	}
	if (buf)
		len = fill_dir(req, dir, d, buf, size);
	if (len < 0)
		fuse_reply_err(req, (int)-len);
	else
		fuse_reply_buf(req, buf, (size_t)len);
	free(buf);
}

/*
 * Without a handle (an earlier program told the kernel to send no
 * OPENDIR), each READDIR opens the directory for itself, as the caller,
 * and seeks to off: the offsets are the backing filesystem's own, which
 * it keeps valid across opens (as NFS needs).
 */
static void readdir_afresh(fuse_req_t req, const struct fnode *dir, size_t size,
			   off_t off)
{
	uid_t uid = fuse_req_ctx(req)->uid;
	int sw = S_ISDIR(dir->type) ? fnode_as_caller(req) : -ENOTDIR;
	int fd = sw < 0 ? sw : fnode_dir_fd(dir, uid);
	struct fslot d = { .fd = fd, .uid = uid };

	if (sw >= 0)
		fnode_as_self(sw);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	d.dp = fdopendir(fd);
	if (!d.dp) {
		fuse_reply_err(req, errno);
		fdq_close(fd);
		return;
	}
	reply_dir(req, dir, &d, size, off);
	fdq_release(fd);
	closedir(d.dp);
}

void fdir_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct fnode *dir = fnode_of(ino);
	struct fslot *d = fslot_of(fi->fh);

	fwatch_readdirs++;
	if (!dir)
		fuse_reply_err(req, fnode_err(ino));
	else if (!fi->fh)
		readdir_afresh(req, dir, size, off);
	else if (!d || !d->dp)
		fuse_reply_err(req, ESTALE);
	else
		reply_dir(req, dir, d, size, off);
}

void fdir_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fslot_close(fi->fh);
	fuse_reply_err(req, 0);
}
