/*
 * files.c - files/: the workspace directory passed through with ordinary
 * file semantics, after libfuse's example/passthrough_ll.c. Its inodes
 * are nodes of fs/files_node.c.
 *
 * Every operation works relative to those descriptors with the *at
 * system calls and never follows a symlink itself: a symlink's target is
 * resolved by the client's kernel against the mount, as on any
 * filesystem, and the kernel resolves "..", so nothing outside the
 * workspace is reachable through this layer. Names with '/', "." and
 * ".." are refused. Nor is another mount below the workspace entered: a
 * name is resolved only by fnode_openat (EXDEV for a mount point), and
 * unlink, rmdir, rename, link, mkdir, mknod and symlink act on the name
 * in its directory without entering what is mounted there (EBUSY or
 * EEXIST).
 *
 * The sessions change the same files behind the kernel's back: entries
 * (negative ones too), attributes, pages and listings are cached only
 * while fs/files_watch.c invalidates what changes (timeouts 0 else). A
 * listing the kernel cached before a crash is not known to the next
 * program, which cannot drop it: a directory open across the crash
 * reads on from that cache, and errs with ESTALE past its end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/session/fdq.h"
#include "files.h"
#include "files_dir.h"
#include "files_fh.h"
#include "files_kill.h"
#include "files_node.h"
#include "files_xattr.h"
#include "files_watch.h"
#include "tree.h"

bool files_posix_acl;

/* ---------------------------------------------------------------- checks */

/* 0 for a plain name, else the errno to refuse it with. */
static int bad_name(const char *name)
{
	if (!*name || strchr(name, '/'))
		return EINVAL;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return ENOENT;
	return 0;
}

/* The descriptor of fi's open file, or -ESTALE when its handle names
 * none (lost in an upgrade, or a crashed program's). */
static int fd_of(const struct fuse_file_info *fi)
{
	const struct fslot *s = fslot_of(fi->fh);

	return s ? s->fd : -ESTALE;
}

/* ---------------------------------------------------------- operations */

static void f_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fnode *dir = fnode_of(parent), *n = NULL;
	struct fuse_entry_param e;
	int err = bad_name(name), sw = 0;

	if (!err && !dir)
		err = fnode_err(parent);
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		n = fnode_lookup(dir, name, &e, &err);
		fnode_as_self(sw);
	}
	fwatch_lookups++;
	if (!n && err == ENOENT && dir && fwatch_on)
		fwatch_reply_negative(req);
	else
		fnode_reply_entry(req, n, &e, err);
}

static void f_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fnode_forget(ino, nlookup);
	fuse_reply_none(req);
}

/* Does not reply: fs/dispatch.c calls it per inode, then replies. */
static void f_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	(void)req;
	for (size_t i = 0; i < count; i++)
		fnode_forget(forgets[i].ino, forgets[i].nlookup);
}

static void f_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = fnode_of(ino);
	struct stat st;

	(void)fi;
	fwatch_getattrs++;
	if (!n) {
		fuse_reply_err(req, fnode_err(ino));
		return;
	}
	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	st.st_ino = ino;
	fuse_reply_attr(req, &st, FNODE_TTL);
}

static void f_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	struct fnode *n = fnode_of(ino);
	int fd = fi ? fd_of(fi) : -1;
	int rc = !n	       ? -fnode_err(ino) :
		 fd == -ESTALE ? fd :
				 fkill_setattr(req, n, attr, &to_set);
	int sw = rc < 0 ? rc : fnode_as_caller(req);

	rc = rc < 0 ? rc : sw;
	if (rc >= 0) {
		rc = fnode_set_attrs(n, attr, to_set, fd);
		fnode_as_self(sw);
	}
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		f_getattr(req, ino, fi);
}

static void f_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fnode *n = fnode_of(ino);
	char buf[PATH_MAX + 1];
	ssize_t len;

	if (!n) {
		fuse_reply_err(req, fnode_err(ino));
		return;
	}
	len = readlinkat(n->fd, "", buf, sizeof(buf));
	if (len < 0 || len == sizeof(buf)) {
		fuse_reply_err(req, len < 0 ? errno : ENAMETOOLONG);
		return;
	}
	buf[len] = '\0';
	fuse_reply_readlink(req, buf);
}

/*
 * The umask the backing filesystem is to apply to a file req creates:
 * the caller's when the kernel left it to the daemon (with ACLs, so that
 * a default ACL of the directory wins over it, as on ext4), else 0 (the
 * kernel applied it).
 */
static bool own_umask;

static mode_t req_umask(fuse_req_t req)
{
	return own_umask ? fuse_req_ctx(req)->umask & 0777 : 0;
}

void files_conn_init(struct fuse_conn_info *conn)
{
	const unsigned acl = FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;

	own_umask = files_posix_acl && (conn->capable & acl) == acl;
	if (own_umask)
		conn->want |= acl;
}

/* Makes name in dir (with umask mask): a directory, a symlink to link,
 * or a node (a device's number rdev). */
static int make_at(struct fnode *dir, const char *name, mode_t mode,
		   mode_t mask, dev_t rdev, const char *link)
{
	mode_t old = umask(mask);
	int rc;

	if (link)
		rc = symlinkat(link, dir->fd, name);
	else if (S_ISDIR(mode))
		rc = mkdirat(dir->fd, name, mode & 07777);
	else
		rc = mknodat(dir->fd, name, mode, rdev);
	rc = rc < 0 ? -errno : 0;
	umask(old);
	return rc;
}

/* mkdir, mknod and symlink: reply with the entry. */
static void make(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode, dev_t rdev, const char *link)
{
	struct fnode *dir = fnode_of(parent), *n = NULL;
	struct fuse_entry_param e;
	int err = bad_name(name), sw = 0, rc;

	if (!err && !dir)
		err = fnode_err(parent);
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		rc = make_at(dir, name, mode, req_umask(req), rdev, link);
		if (rc < 0)
			err = -rc;
		else
			n = fnode_lookup(dir, name, &e, &err);
		fnode_as_self(sw);
	}
	fnode_reply_entry(req, n, &e, err);
}

/* Devices too (an overlayfs whiteout is the char device 0:0): the
 * backing filesystem decides with the caller's capabilities, so that
 * only root makes a device (other users, whose requests run without the
 * daemon's capabilities, get EPERM but for a whiteout, as on ext4). A
 * device is opened by the kernel, never by this daemon (f_open), and a
 * FUSE mount is nodev unless mounted with -o dev. */
static void f_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, dev_t rdev)
{
	make(req, parent, name, mode, rdev, NULL);
}

static void f_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode)
{
	make(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL);
}

static void f_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		      const char *name)
{
	make(req, parent, name, S_IFLNK | 0777, 0, link);
}

/* unlink and rmdir */
static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			int flags)
{
	struct fnode *dir = fnode_of(parent);
	int err = bad_name(name), sw = 0;

	if (!err && !dir)
		err = fnode_err(parent);
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		if (unlinkat(dir->fd, name, flags) < 0)
			err = errno;
		fnode_as_self(sw);
	}
	fuse_reply_err(req, err);
}

static void f_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

static void f_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, AT_REMOVEDIR);
}

static void f_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		     fuse_ino_t newparent, const char *newname,
		     unsigned int flags)
{
	struct fnode *from = fnode_of(parent), *to = fnode_of(newparent);
	int err = bad_name(name), sw = 0;

	if (!err)
		err = bad_name(newname);
	if (!err && (!from || !to))
		err = fnode_err(!from ? parent : newparent);
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		if (renameat2(from->fd, name, to->fd, newname, flags) < 0)
			err = errno;
		fnode_as_self(sw);
	}
	fuse_reply_err(req, err);
}

/* Links n as name in dir and fills e. Returns 0 or an errno. */
static int link_at(struct fnode *n, struct fnode *dir, const char *name,
		   struct fuse_entry_param *e)
{
	struct stat st;
	char p[64];

	fnode_proc_path(p, sizeof(p), n->fd);
	if (linkat(AT_FDCWD, p, dir->fd, name, AT_SYMLINK_FOLLOW) < 0 ||
	    fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return errno;
	fnode_entry(n, &st, e);
	return 0;
}

static void f_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		   const char *newname)
{
	struct fnode *n = fnode_of(ino), *dir = fnode_of(newparent);
	struct fuse_entry_param e;
	int err = bad_name(newname), sw = 0;

	if (!err && (!n || !dir))
		err = fnode_err(!n ? ino : newparent);
	if (!err && n == &fnode_root)
		err = EPERM;
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		err = link_at(n, dir, newname, &e);
		fnode_as_self(sw);
	}
	fnode_reply_entry(req, err ? NULL : n, &e, err);
}

/* Flags of a real open(2) for a FUSE open's flags. O_NONBLOCK: a lease
 * another process holds on the file (fcntl F_SETLEASE, in the workspace)
 * would make the open wait for its break, up to lease-break-time (45 s),
 * and every request with it; the open fails with EWOULDBLOCK instead,
 * the break begun. On a regular file the flag changes nothing else. */
static int open_flags(int flags)
{
	flags &= ~(O_NOFOLLOW | O_DIRECT | O_CREAT | O_EXCL | O_NOCTTY);
	return flags | O_CLOEXEC | O_NONBLOCK;
}

/* err for an open: a lease's break is not waited for, and said in the
 * log (a line per 10 s at most: whoever holds leases may repeat it). */
static int lease_said(int err)
{
	static int64_t said_ms;
	static unsigned long since;
	int64_t now = loop_now_ms();

	if (err != EWOULDBLOCK)
		return err;
	since++;
	if (!said_ms || now - said_ms >= 10000) {
		log_msg(LOG_WARNING,
			"files/: an open met another process's lease on the "
			"file: EAGAIN, its break not waited for (%lu so)",
			since);
		said_ms = now;
		since = 0;
	}
	return EAGAIN;
}

/* fi's handle for fd, uid's open file (taken over), whose cached pages
 * the kernel keeps when keep. Returns 0, or ENOMEM with fd closed. */
static int set_handle(struct fuse_file_info *fi, int fd, uid_t uid, bool keep)
{
	fi->fh = fslot_add(fd, uid, NULL);
	if (!fi->fh) {
		fdq_close(fd);
		return ENOMEM;
	}
	fi->keep_cache = keep; /* fs/files_watch.c drops what changes */
	fi->direct_io = 0;
	/* A FLUSH would be a round trip for nothing (f_flush): the kernel
	 * keeps the locks of files/ itself, the daemon offering no lock
	 * operations. A writer's stays, for the pages it may have dirtied
	 * through a mapping, which the kernel writes out before it. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	return 0;
}

/* An open file's descriptor is its opener's (sessions/session/fdq.c): her bound is
 * looked at before the open, which may truncate or create. Only regular
 * files are opened here: the kernel opens fifos, sockets and devices
 * itself (and refuses devices on a nodev mount), and a device opened
 * through /proc/self/fd would be the host's, by the daemon: EACCES. */
static void f_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = fnode_peek(ino);
	uid_t uid = fuse_req_ctx(req)->uid;
	int fd = -1, err = n ? -fdq_check(uid) : fnode_err(ino);
	int keep = 0;

	if (!err && !S_ISREG(n->type))
		err = S_ISDIR(n->type) ? EISDIR : EACCES;
	if (!err && (keep = fwatch_opening(n, req)) < 0)
		err = -keep;
	if (!err) {
		fd = fdq_take(uid, fnode_open_as_caller(req, n,
							open_flags(fi->flags)));
		err = fd < 0 ? lease_said(-fd) :
			       set_handle(fi, fd, uid, keep > 0);
	}
	if (err)
		fuse_reply_err(req, err);
	else if (fuse_reply_open(req, fi) != 0)
		fslot_close(fi->fh);
}

/* Creates (with umask mask) and opens name in dir. Returns the fd, or
 * -errno. */
static int create_at(struct fnode *dir, const char *name, mode_t mode,
		     mode_t mask, int flags)
{
	mode_t old = umask(mask);
	int fd;

	flags = (open_flags(flags) | O_CREAT | O_NOFOLLOW) | (flags & O_EXCL);
	fd = fnode_openat(dir->fd, name, flags, mode & 07777);
	if (fd < 0)
		fd = -errno;
	umask(old);
	return fd;
}

static void f_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	struct fnode *dir = fnode_of(parent), *n = NULL;
	uid_t uid = fuse_req_ctx(req)->uid;
	struct fuse_entry_param e;
	int err = bad_name(name), fd = -1, sw = 0;

	if (!err && !dir)
		err = fnode_err(parent);
	if (!err)
		err = -fdq_check(uid);
	if (!err && (sw = fnode_as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		fd = create_at(dir, name, mode, req_umask(req), fi->flags);
		if (fd >= 0)
			fd = fdq_take(uid, fd);
		if (fd < 0)
			err = lease_said(-fd);
		else
			n = fnode_lookup(dir, name, &e, &err);
		fnode_as_self(sw);
	}
	if (n && (err = set_handle(fi, fd, uid, fwatch_on)) != 0) {
		fnode_unref(n, 1); /* set_handle closed fd */
		n = NULL;
		fd = -1;
	}
	if (!n) {
		fdq_close(fd);
		fuse_reply_err(req, err);
	} else if (fuse_reply_create(req, &e, fi) != 0) {
		fslot_close(fi->fh);
		fnode_unref(n, 1);
	}
}

static void f_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	int fd = fd_of(fi);

	(void)ino;
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, 0);
}

static void f_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	int fd = fd_of(fi);
	ssize_t n = fd < 0 ? -1 : pwrite(fd, buf, size, off);

	(void)ino;
	if (fd < 0)
		fuse_reply_err(req, -fd);
	else if (n < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_write(req, (size_t)n);
}

static void f_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void f_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fslot_close(fi->fh);
	fuse_reply_err(req, 0);
}

static void f_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	int fd = fd_of(fi);
	int rc = fd < 0 ? fd : datasync ? fdatasync(fd) : fsync(fd);

	(void)ino;
	fuse_reply_err(req, fd < 0 ? -fd : rc < 0 ? errno : 0);
}

static void f_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			off_t length, struct fuse_file_info *fi)
{
	int fd = fd_of(fi);

	(void)ino;
	if (fd < 0)
		fuse_reply_err(req, -fd);
	else if (fallocate(fd, mode, offset, length) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_err(req, 0);
}

static void f_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fnode *n = fnode_of(ino);
	struct statvfs sv;

	if (!n)
		n = &fnode_root;
	if (n->fd < 0 || fstatvfs(n->fd, &sv) < 0)
		fuse_reply_err(req, n->fd < 0 ? ENOENT : errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---------------------------------------------------------------- setup */

bool files_is(fuse_ino_t ino)
{
	return (ino & 0xff) == FT_FILES || (ino & 0xff) == FT_FILE;
}

const struct fuse_lowlevel_ops files_ops = {
	.lookup = f_lookup,
	.forget = f_forget,
	.forget_multi = f_forget_multi,
	.getattr = f_getattr,
	.setattr = f_setattr,
	.readlink = f_readlink,
	.mknod = f_mknod,
	.mkdir = f_mkdir,
	.unlink = f_unlink,
	.rmdir = f_rmdir,
	.symlink = f_symlink,
	.rename = f_rename,
	.link = f_link,
	.open = f_open,
	.read = f_read,
	.write = f_write,
	.flush = f_flush,
	.release = f_release,
	.fsync = f_fsync,
	.opendir = fdir_opendir,
	.readdir = fdir_readdir,
	.releasedir = fdir_releasedir,
	.create = f_create,
	.fallocate = f_fallocate,
	.statfs = f_statfs,
	.getxattr = fxattr_get,
	.listxattr = fxattr_list,
	.setxattr = fxattr_set,
	.removexattr = fxattr_remove,
	.ioctl = fxattr_ioctl,
};

/* files/ and what is below it: their own operations serve every request
 * (fs/dispatch.c). */
static const struct fops file_fops = { .ll = &files_ops };

static const struct fent files_dyn[] = {
	/* its real mode comes from the file */
	{ "", FT_FILE, FENT_RW, &file_fops, 0, HOME_FILE,
	  "its files and directories" },
	{ 0 },
};

const struct fops files_fops = { .dyn = files_dyn, .ll = &files_ops };
