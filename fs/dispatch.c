/*
 * dispatch.c - the operations table handed to libfuse: each request goes
 * to the operations of a passthrough family when its inode's (or its
 * parent's) row has them (files/), else to tree_ops. An operation one
 * side does not have answers ENOSYS, but the extended attributes and
 * ioctl, which the tree answers as a file system without them: after one
 * ENOSYS the kernel asks no inode of the mount for extended attributes
 * again, files/ included.
 */
#include <errno.h>
#include <poll.h>
#include <sys/statvfs.h>
#include "files.h"
#include "files_watch.h"
#include "ops.h"
#include "tree.h"

/* The table for ino; NULL entries mean "not supported". */
static const struct fuse_lowlevel_ops *side(fuse_ino_t ino)
{
	const struct fent *fe = tree_fent((ft_t)(ino & 0xff));

	return fe && fe->ops && fe->ops->ll ? fe->ops->ll : &tree_ops;
}

#define ROUTE(ino, op, ...)                                                    \
	do {                                                                   \
		const struct fuse_lowlevel_ops *o = side(ino);                 \
		if (o->op)                                                     \
			o->op(__VA_ARGS__);                                    \
		else                                                           \
			fuse_reply_err(req, ENOSYS);                           \
	} while (0)

/* With default_permissions the kernel checks ACLs too when asked to:
 * it then reads them from files/ (the tree has none). */
static void d_init(void *userdata, struct fuse_conn_info *conn)
{
	tree_ops.init(userdata, conn);
	files_conn_init(conn);
}

static void d_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	ROUTE(parent, lookup, req, parent, name);
}

static void d_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->forget)
		o->forget(req, ino, nlookup);
	else
		fuse_reply_none(req);
}

static void d_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++) {
		const struct fuse_lowlevel_ops *o = side(forgets[i].ino);

		if (o->forget_multi)
			o->forget_multi(req, 1, &forgets[i]);
	}
	fuse_reply_none(req);
}

static void d_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	ROUTE(ino, getattr, req, ino, fi);
}

static void d_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	ROUTE(ino, setattr, req, ino, attr, to_set, fi);
}

static void d_readlink(fuse_req_t req, fuse_ino_t ino)
{
	ROUTE(ino, readlink, req, ino);
}

static void d_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, dev_t rdev)
{
	ROUTE(parent, mknod, req, parent, name, mode, rdev);
}

static void d_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode)
{
	ROUTE(parent, mkdir, req, parent, name, mode);
}

static void d_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	ROUTE(parent, unlink, req, parent, name);
}

static void d_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	ROUTE(parent, rmdir, req, parent, name);
}

static void d_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		      const char *name)
{
	ROUTE(parent, symlink, req, link, parent, name);
}

static void d_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		     fuse_ino_t newparent, const char *newname,
		     unsigned int flags)
{
	if (side(parent) != side(newparent)) {
		fuse_reply_err(req, EXDEV);
		return;
	}
	ROUTE(parent, rename, req, parent, name, newparent, newname, flags);
}

static void d_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		   const char *newname)
{
	if (side(ino) != side(newparent)) {
		fuse_reply_err(req, EXDEV);
		return;
	}
	ROUTE(ino, link, req, ino, newparent, newname);
}

static void d_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	ROUTE(ino, open, req, ino, fi);
}

static void d_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	ROUTE(ino, read, req, ino, size, off, fi);
}

static void d_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	ROUTE(ino, write, req, ino, buf, size, off, fi);
}

static void d_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	ROUTE(ino, flush, req, ino, fi);
}

static void d_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	ROUTE(ino, release, req, ino, fi);
}

static void d_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	ROUTE(ino, fsync, req, ino, datasync, fi);
}

/*
 * Directories of the tree need no open state: libfuse's default. Every
 * OPENDIR is answered, never ENOSYS, though that would save a round trip
 * per directory: the kernel would then skip OPENDIR for the whole
 * connection and keep every listing, the tree's too, and serve one read
 * at an offset past 0 from a listing made for another user (watches/ is
 * listed per user) or before a change; and the right to list a files/
 * directory would be only the kernel's check, on attributes that learn
 * of a chmod behind its back asynchronously.
 */
static void d_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	fwatch_opendirs++;
	if (o->opendir)
		o->opendir(req, ino, fi);
	else
		fuse_reply_open(req, fi);
}

static void d_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	ROUTE(ino, readdir, req, ino, size, off, fi);
}

static void d_releasedir(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->releasedir)
		o->releasedir(req, ino, fi);
	else
		fuse_reply_err(req, 0);
}

static void d_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	ROUTE(parent, create, req, parent, name, mode, fi);
}

static void d_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (!o->poll) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLOUT);
		return;
	}
	o->poll(req, ino, fi, ph);
}

static void d_statfs(fuse_req_t req, fuse_ino_t ino)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->statfs)
		o->statfs(req, ino);
	else
		fuse_reply_statfs(req, &(struct statvfs){ .f_bsize = 4096,
							  .f_namemax = 255 });
}

static void d_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			off_t length, struct fuse_file_info *fi)
{
	ROUTE(ino, fallocate, req, ino, mode, offset, length, fi);
}

static void d_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		       size_t size)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->getxattr)
		o->getxattr(req, ino, name, size);
	else
		fuse_reply_err(req, ENODATA);
}

static void d_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->listxattr)
		o->listxattr(req, ino, size);
	else if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
}

static void d_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		       const char *value, size_t size, int flags)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->setxattr)
		o->setxattr(req, ino, name, value, size, flags);
	else
		fuse_reply_err(req, EOPNOTSUPP);
}

static void d_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->removexattr)
		o->removexattr(req, ino, name);
	else
		fuse_reply_err(req, ENODATA);
}

static void d_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd,
		    void *arg, struct fuse_file_info *fi, unsigned flags,
		    const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	const struct fuse_lowlevel_ops *o = side(ino);

	if (o->ioctl)
		o->ioctl(req, ino, cmd, arg, fi, flags, in_buf, in_bufsz,
			 out_bufsz);
	else
		fuse_reply_err(req, ENOTTY);
}

const struct fuse_lowlevel_ops fsn_ops = {
	.init = d_init,
	.lookup = d_lookup,
	.forget = d_forget,
	.forget_multi = d_forget_multi,
	.getattr = d_getattr,
	.setattr = d_setattr,
	.readlink = d_readlink,
	.mknod = d_mknod,
	.mkdir = d_mkdir,
	.unlink = d_unlink,
	.rmdir = d_rmdir,
	.symlink = d_symlink,
	.rename = d_rename,
	.link = d_link,
	.open = d_open,
	.read = d_read,
	.write = d_write,
	.flush = d_flush,
	.release = d_release,
	.fsync = d_fsync,
	.opendir = d_opendir,
	.readdir = d_readdir,
	.releasedir = d_releasedir,
	.create = d_create,
	.poll = d_poll,
	.fallocate = d_fallocate,
	.statfs = d_statfs,
	.getxattr = d_getxattr,
	.listxattr = d_listxattr,
	.setxattr = d_setxattr,
	.removexattr = d_removexattr,
	.ioctl = d_ioctl,
};
