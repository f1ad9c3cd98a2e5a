/*
 * files.c - files/: the workspace directory passed through with ordinary
 * file semantics, after libfuse's example/passthrough_ll.c.
 *
 * Every inode below files/ is a struct fnode: an O_PATH|O_NOFOLLOW
 * descriptor of the real file, its (st_dev, st_ino), so that one real
 * file is one FUSE inode (hard links included), and the kernel's lookup
 * count. Its inode number is tree_ino(id, FT_FILE) with id from
 * objs_add(OBJ_FILE); the workspace root is tree_ino(0, FT_FILES) and is
 * never freed. A node goes when the kernel forgets its last lookup.
 *
 * Every operation works relative to those descriptors with the *at
 * system calls and never follows a symlink itself: a symlink's target is
 * resolved by the client's kernel against the mount, as on any
 * filesystem, and the kernel resolves "..", so nothing outside the
 * workspace is reachable through this layer. Names with '/', "." and
 * ".." are refused.
 *
 * A request of another user (a mount with allow_other) runs with that
 * user's file system credentials (fsuid, fsgid, groups), so the real
 * files' modes decide; a daemon that is not root refuses such requests.
 *
 * Entries and attributes are not cached (timeouts 0): the sessions
 * change the same files behind the kernel's back, and a cached name or
 * size would show old content. A sessionfs mount inside the workspace is
 * not entered (ELOOP): the daemon would wait on itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "files.h"
#include "sessions/log.h"
#include "sessions/objs.h"
#include "tree.h"

#define TTL	     0.0 /* entry and attribute timeouts (s) */
#define NGROUPS_KEPT 256 /* supplementary groups taken from a caller */

/* setgroups(2) of this thread only (glibc's changes every thread) */
#ifdef SYS_setgroups32
#define SYS_SETGROUPS SYS_setgroups32 /* 32-bit gid_t on 32-bit x86 */
#else
#define SYS_SETGROUPS SYS_setgroups
#endif

struct fnode {
	uint64_t id; /* OBJ_FILE id; 0 for the root */
	int fd;	     /* O_PATH|O_NOFOLLOW */
	dev_t dev;
	ino_t ino;
	mode_t type;	    /* S_IFMT bits */
	uint64_t mnt;	    /* mount id */
	uint64_t nlookup;   /* the kernel's references */
	struct fnode *next; /* hash chain */
};

/* An open directory. */
struct fdir {
	DIR *dp;
	struct dirent *de; /* read but not yet sent */
	off_t off;	   /* offset of the next entry to read */
};

static struct fnode root = { .fd = -1 };

/* (dev, ino) -> node, chained; hcap is a power of two. */
static struct fnode **htab;
static size_t hcap, hcount;

/* The daemon's own credentials, restored after a caller's. */
static uid_t my_uid;
static gid_t my_gid;
static gid_t *my_groups;
static int my_ngroups;

/* ---------------------------------------------------------------- nodes */

static size_t hslot(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static struct fnode *hfind(dev_t dev, ino_t ino)
{
	struct fnode *n;

	if (!hcap)
		return NULL;
	for (n = htab[hslot(dev, ino, hcap)]; n; n = n->next)
		if (n->dev == dev && n->ino == ino)
			return n;
	return NULL;
}

static int hgrow(void)
{
	size_t ncap = hcap ? hcap * 2 : 64;
	struct fnode **nt = calloc(ncap, sizeof(*nt));
	struct fnode *n, *next;

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < hcap; i++)
		for (n = htab[i]; n; n = next) {
			size_t s = hslot(n->dev, n->ino, ncap);

			next = n->next;
			n->next = nt[s];
			nt[s] = n;
		}
	free(htab);
	htab = nt;
	hcap = ncap;
	return 0;
}

static int hadd(struct fnode *n)
{
	size_t s;

	if (hcount >= hcap && hgrow() < 0)
		return -ENOMEM;
	s = hslot(n->dev, n->ino, hcap);
	n->next = htab[s];
	htab[s] = n;
	hcount++;
	return 0;
}

static void hdel(struct fnode *n)
{
	struct fnode **p = &htab[hslot(n->dev, n->ino, hcap)];

	while (*p && *p != n)
		p = &(*p)->next;
	if (*p) {
		*p = n->next;
		hcount--;
	}
}

static fuse_ino_t ino_of(const struct fnode *n)
{
	return n->id ? tree_ino(n->id, FT_FILE) : tree_ino(0, FT_FILES);
}

/* The node of ino, or NULL. */
static struct fnode *node_of(fuse_ino_t ino)
{
	uint64_t id = ino >> 8;

	switch ((enum ft)(ino & 0xff)) {
	case FT_FILES:
		return id == 0 && root.fd >= 0 ? &root : NULL;
	case FT_FILE:
		return objs_get(id, OBJ_FILE);
	default:
		return NULL;
	}
}

/* A node for fd (taken over on success). Returns NULL on ENOMEM. */
static struct fnode *node_new(int fd, const struct stat *st, uint64_t mnt)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	*n = (struct fnode){ .fd = fd,
			     .dev = st->st_dev,
			     .ino = st->st_ino,
			     .type = st->st_mode & S_IFMT,
			     .mnt = mnt };
	if (hadd(n) < 0) {
		free(n);
		return NULL;
	}
	n->id = objs_add(OBJ_FILE, n);
	return n;
}

/* Drops k of the kernel's references; the last one frees the node. */
static void unref(struct fnode *n, uint64_t k)
{
	if (!n || n == &root)
		return;
	n->nlookup = k < n->nlookup ? n->nlookup - k : 0;
	if (n->nlookup)
		return;
	hdel(n);
	objs_del(n->id);
	close(n->fd);
	free(n);
}

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

/* True if mount mnt is a sessionfs (from /proc/self/mountinfo). */
static bool is_sessionfs(uint64_t mnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], type[64], src[64];
	bool found = false;
	uint64_t id;
	char *sep;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (sscanf(line, "%" SCNu64, &id) != 1 || id != mnt || !sep ||
		    sscanf(sep + 3, "%63s %63s", type, src) != 2)
			continue;
		found = !strcmp(type, "fuse.sessionfs") ||
			(!strncmp(type, "fuse", 4) &&
			 !strcmp(src, "sessionfs"));
		break;
	}
	fclose(f);
	return found;
}

/*
 * The mount id of fd, asked without syncing so that a FUSE mount root
 * (ours included) is never sent a request. Returns 0 or -errno.
 */
static int mount_of(int fd, uint64_t *mnt)
{
	struct statx sx;

	*mnt = 0; /* set on every path: gcc -O3 cannot prove -errno < 0 */
	if (statx(fd, "",
		  AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MNT_ID, &sx) < 0)
		return -errno;
	*mnt = (sx.stx_mask & STATX_MNT_ID) ? sx.stx_mnt_id : 0;
	return 0;
}

/*
 * Attributes of fd, a new entry of dir. Refuses (ELOOP) a sessionfs
 * mounted there. Returns 0 or -errno.
 */
static int stat_entry(const struct fnode *dir, int fd, struct stat *st,
		      uint64_t *mnt)
{
	int rc = mount_of(fd, mnt);

	if (rc < 0)
		return rc;
	if (*mnt != dir->mnt && is_sessionfs(*mnt)) {
		log_msg(LOG_WARNING, "files/: a sessionfs is mounted in the "
				     "workspace; not entered");
		return -ELOOP;
	}
	if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

/* ---------------------------------------------------------- credentials */

/*
 * Takes on the file system credentials of req's caller when that is
 * another user. Returns 0 (nothing to do), 1 (switched: call as_self)
 * or -EACCES.
 */
static int as_caller(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	gid_t groups[NGROUPS_KEPT];
	int n;

	if (c->uid == my_uid)
		return 0;
	if (my_uid != 0)
		return -EACCES;
	n = fuse_req_getgroups(req, NGROUPS_KEPT, groups);
	if (n < 0)
		n = 0;
	if (n > NGROUPS_KEPT)
		n = NGROUPS_KEPT;
	if (syscall(SYS_SETGROUPS, (size_t)n, groups) < 0)
		return -EACCES;
	setfsgid(c->gid);
	setfsuid(c->uid);
	return 1;
}

static void as_self(int switched)
{
	if (switched != 1)
		return;
	setfsuid(my_uid);
	setfsgid(my_gid);
	syscall(SYS_SETGROUPS, (size_t)my_ngroups, my_groups);
}

static void save_creds(void)
{
	int n = getgroups(0, NULL);

	my_uid = geteuid();
	my_gid = getegid();
	free(my_groups);
	my_groups = NULL;
	my_ngroups = 0;
	if (n > 0 && (my_groups = calloc((size_t)n, sizeof(gid_t))))
		my_ngroups = getgroups(n, my_groups);
	if (my_ngroups < 0)
		my_ngroups = 0;
}

/* ---------------------------------------------------------------- replies */

static void proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* Counts one lookup of n and fills e with its entry. */
static void entry_of(struct fnode *n, struct stat *st,
		     struct fuse_entry_param *e)
{
	*e = (struct fuse_entry_param){ .ino = ino_of(n),
					.attr = *st,
					.attr_timeout = TTL,
					.entry_timeout = TTL };
	e->attr.st_ino = e->ino;
	n->nlookup++;
}

/*
 * Finds or makes the node of name in dir, counts one lookup and fills e.
 * Returns the node, or NULL with *err set.
 */
static struct fnode *lookup_at(struct fnode *dir, const char *name,
			       struct fuse_entry_param *e, int *err)
{
	int fd = openat(dir->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct fnode *n;
	struct stat st;
	uint64_t mnt;
	int rc;

	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	rc = stat_entry(dir, fd, &st, &mnt);
	n = rc < 0 ? NULL : hfind(st.st_dev, st.st_ino);
	if (rc == 0 && n)
		close(fd);
	else if (rc == 0 && !(n = node_new(fd, &st, mnt)))
		rc = -ENOMEM;
	if (rc < 0) {
		close(fd);
		*err = -rc;
		return NULL;
	}
	entry_of(n, &st, e);
	return n;
}

/* Replies with n's entry, or err; a reply that fails undoes the lookup. */
static void reply_entry(fuse_req_t req, struct fnode *n,
			const struct fuse_entry_param *e, int err)
{
	if (!n)
		fuse_reply_err(req, err);
	else if (fuse_reply_entry(req, e) != 0)
		unref(n, 1);
}

/* ---------------------------------------------------------- operations */

static void f_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fnode *dir = node_of(parent), *n = NULL;
	struct fuse_entry_param e;
	int err = bad_name(name), sw = 0;

	if (!err && !dir)
		err = ENOENT;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		n = lookup_at(dir, name, &e, &err);
		as_self(sw);
	}
	reply_entry(req, n, &e, err);
}

static void f_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	unref(node_of(ino), nlookup);
	fuse_reply_none(req);
}

/* Does not reply: fs/dispatch.c calls it per inode, then replies. */
static void f_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	(void)req;
	for (size_t i = 0; i < count; i++)
		unref(node_of(forgets[i].ino), forgets[i].nlookup);
}

static void f_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = node_of(ino);
	struct stat st;

	(void)fi;
	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	st.st_ino = ino;
	fuse_reply_attr(req, &st, TTL);
}

static int set_size(const struct fnode *n, off_t size,
		    const struct fuse_file_info *fi)
{
	char p[64];

	if (fi && S_ISREG(n->type))
		return ftruncate((int)fi->fh, size);
	proc_path(p, sizeof(p), n->fd);
	return truncate(p, size);
}

static int set_times(const struct fnode *n, const struct stat *a, int set)
{
	struct timespec tv[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };

	if (set & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (set & FUSE_SET_ATTR_ATIME)
		tv[0] = a->st_atim;
	if (set & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (set & FUSE_SET_ATTR_MTIME)
		tv[1] = a->st_mtim;
	return utimensat(n->fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
}

/* Applies a setattr to n. Returns 0 or -errno. */
static int set_attrs(const struct fnode *n, const struct stat *a, int set,
		     const struct fuse_file_info *fi)
{
	uid_t uid = (set & FUSE_SET_ATTR_UID) ? a->st_uid : (uid_t)-1;
	gid_t gid = (set & FUSE_SET_ATTR_GID) ? a->st_gid : (gid_t)-1;
	char p[64];

	proc_path(p, sizeof(p), n->fd);
	if ((set & FUSE_SET_ATTR_MODE) && chmod(p, a->st_mode & 07777) < 0)
		return -errno;
	if ((set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	    fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) <
		    0)
		return -errno;
	if ((set & FUSE_SET_ATTR_SIZE) && set_size(n, a->st_size, fi) < 0)
		return -errno;
	if ((set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
		    FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) &&
	    set_times(n, a, set) < 0)
		return -errno;
	return 0;
}

static void f_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	struct fnode *n = node_of(ino);
	int rc = n ? as_caller(req) : -ENOENT;
	int sw = rc;

	if (rc >= 0) {
		rc = set_attrs(n, attr, to_set, fi);
		as_self(sw);
	}
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		f_getattr(req, ino, fi);
}

static void f_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fnode *n = node_of(ino);
	char buf[PATH_MAX + 1];
	ssize_t len;

	if (!n) {
		fuse_reply_err(req, ENOENT);
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

/* Makes name in dir: a directory, a symlink to link, or a node. */
static int make_at(struct fnode *dir, const char *name, mode_t mode,
		   const char *link)
{
	mode_t old = umask(0); /* the kernel applied the caller's */
	int rc;

	if (link)
		rc = symlinkat(link, dir->fd, name);
	else if (S_ISDIR(mode))
		rc = mkdirat(dir->fd, name, mode & 07777);
	else
		rc = mknodat(dir->fd, name, mode, 0);
	rc = rc < 0 ? -errno : 0;
	umask(old);
	return rc;
}

/* mkdir, mknod (files, fifos, sockets) and symlink: reply with the entry. */
static void make(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode, const char *link)
{
	struct fnode *dir = node_of(parent), *n = NULL;
	struct fuse_entry_param e;
	int err = bad_name(name), sw = 0, rc;

	if (!err && !dir)
		err = ENOENT;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		rc = make_at(dir, name, mode, link);
		if (rc < 0)
			err = -rc;
		else
			n = lookup_at(dir, name, &e, &err);
		as_self(sw);
	}
	reply_entry(req, n, &e, err);
}

static void f_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, dev_t rdev)
{
	(void)rdev;
	if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	make(req, parent, name, mode, NULL);
}

static void f_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode)
{
	make(req, parent, name, S_IFDIR | (mode & 07777), NULL);
}

static void f_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		      const char *name)
{
	make(req, parent, name, S_IFLNK | 0777, link);
}

/* unlink and rmdir */
static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			int flags)
{
	struct fnode *dir = node_of(parent);
	int err = bad_name(name), sw = 0;

	if (!err && !dir)
		err = ENOENT;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		if (unlinkat(dir->fd, name, flags) < 0)
			err = errno;
		as_self(sw);
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
	struct fnode *from = node_of(parent), *to = node_of(newparent);
	int err = bad_name(name), sw = 0;

	if (!err)
		err = bad_name(newname);
	if (!err && (!from || !to))
		err = ENOENT;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		if (renameat2(from->fd, name, to->fd, newname, flags) < 0)
			err = errno;
		as_self(sw);
	}
	fuse_reply_err(req, err);
}

/* Links n as name in dir and fills e. Returns 0 or an errno. */
static int link_at(struct fnode *n, struct fnode *dir, const char *name,
		   struct fuse_entry_param *e)
{
	struct stat st;
	char p[64];

	proc_path(p, sizeof(p), n->fd);
	if (linkat(AT_FDCWD, p, dir->fd, name, AT_SYMLINK_FOLLOW) < 0 ||
	    fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return errno;
	entry_of(n, &st, e);
	return 0;
}

static void f_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		   const char *newname)
{
	struct fnode *n = node_of(ino), *dir = node_of(newparent);
	struct fuse_entry_param e;
	int err = bad_name(newname), sw = 0;

	if (!err && (!n || !dir || n == &root))
		err = !n || !dir ? ENOENT : EPERM;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		err = link_at(n, dir, newname, &e);
		as_self(sw);
	}
	reply_entry(req, err ? NULL : n, &e, err);
}

/* Flags of a real open(2) for a FUSE open's flags. */
static int open_flags(int flags)
{
	flags &= ~(O_NOFOLLOW | O_DIRECT | O_CREAT | O_EXCL | O_NOCTTY);
	return flags | O_CLOEXEC;
}

static void f_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = node_of(ino);
	int fd = -1, err = n ? 0 : ENOENT, sw = 0;
	char p[64];

	if (!err && !S_ISREG(n->type))
		err = S_ISDIR(n->type) ? EISDIR : EACCES;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		proc_path(p, sizeof(p), n->fd);
		fd = open(p, open_flags(fi->flags));
		err = fd < 0 ? errno : 0;
		as_self(sw);
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 0;
	fi->direct_io = 0;
	if (fuse_reply_open(req, fi) != 0)
		close(fd);
}

/* Creates and opens name in dir. Returns the fd, or -errno. */
static int create_at(struct fnode *dir, const char *name, mode_t mode,
		     int flags)
{
	mode_t old = umask(0); /* the kernel applied the caller's */
	int fd;

	flags = (open_flags(flags) | O_CREAT | O_NOFOLLOW) | (flags & O_EXCL);
	fd = openat(dir->fd, name, flags, mode & 07777);
	if (fd < 0)
		fd = -errno;
	umask(old);
	return fd;
}

static void f_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	struct fnode *dir = node_of(parent), *n = NULL;
	struct fuse_entry_param e;
	int err = bad_name(name), fd = -1, sw = 0;

	if (!err && !dir)
		err = ENOENT;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		fd = create_at(dir, name, mode, fi->flags);
		if (fd < 0)
			err = -fd;
		else
			n = lookup_at(dir, name, &e, &err);
		as_self(sw);
	}
	if (!n) {
		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 0;
	fi->direct_io = 0;
	if (fuse_reply_create(req, &e, fi) != 0) {
		close(fd);
		unref(n, 1);
	}
}

static void f_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

	(void)ino;
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = (int)fi->fh;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, 0);
}

static void f_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = pwrite((int)fi->fh, buf, size, off);

	(void)ino;
	if (n < 0)
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
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void f_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	int fd = (int)fi->fh;
	int rc = datasync ? fdatasync(fd) : fsync(fd);

	(void)ino;
	fuse_reply_err(req, rc < 0 ? errno : 0);
}

static void f_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			off_t length, struct fuse_file_info *fi)
{
	(void)ino;
	if (fallocate((int)fi->fh, mode, offset, length) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_err(req, 0);
}

static struct fdir *get_dir(const struct fuse_file_info *fi)
{
	return (struct fdir *)(uintptr_t)fi->fh;
}

/* Opens directory n for reading. Returns the stream, or NULL (errno). */
static struct fdir *dir_open(const struct fnode *n)
{
	struct fdir *d = calloc(1, sizeof(*d));
	int fd;

	if (!d)
		return NULL;
	fd = openat(n->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && (d->dp = fdopendir(fd)))
		return d;
	if (fd >= 0)
		close(fd);
	free(d);
	return NULL;
}

static void f_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fnode *n = node_of(ino);
	struct fdir *d = NULL;
	int err = n ? 0 : ENOENT, sw = 0;

	if (!err && !S_ISDIR(n->type))
		err = ENOTDIR;
	if (!err && (sw = as_caller(req)) < 0)
		err = -sw;
	if (!err) {
		d = dir_open(n);
		err = d ? 0 : errno;
		as_self(sw);
	}
	if (!d) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0) {
		closedir(d->dp);
		free(d);
	}
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
		return ino_of(dir);
	if (!strcmp(de->d_name, ".."))
		return dir == &root ? FUSE_ROOT_ID : de->d_ino;
	n = hfind(dir->dev, de->d_ino);
	return n ? ino_of(n) : de->d_ino;
}

/* Fills buf with entries from d. Returns the length, or -errno. */
static ssize_t fill_dir(fuse_req_t req, const struct fnode *dir, struct fdir *d,
			char *buf, size_t size)
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

static void f_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct fnode *dir = node_of(ino);
	struct fdir *d = get_dir(fi);
	char *buf = malloc(size ? size : 1);
	ssize_t len;

	if (!dir || !buf) {
		fuse_reply_err(req, !dir ? ENOENT : ENOMEM);
		free(buf);
		return;
	}
	if (off != d->off) {
		seekdir(d->dp, off);
		d->de = NULL;
		d->off = off;
	}
	len = fill_dir(req, dir, d, buf, size);
	if (len < 0)
		fuse_reply_err(req, (int)-len);
	else
		fuse_reply_buf(req, buf, (size_t)len);
	free(buf);
}

static void f_releasedir(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct fdir *d = get_dir(fi);

	(void)ino;
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void f_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fnode *n = node_of(ino);
	struct statvfs sv;

	if (!n)
		n = &root;
	if (n->fd < 0 || fstatvfs(n->fd, &sv) < 0)
		fuse_reply_err(req, n->fd < 0 ? ENOENT : errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---------------------------------------------------------------- setup */

int files_init(const char *workspace)
{
	int fd = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int rc;

	save_creds();
	if (fd < 0)
		return -errno;
	if (root.fd >= 0) {
		close(fd);
		return -EALREADY;
	}
	rc = mount_of(fd, &root.mnt);
	if (rc == 0 && is_sessionfs(root.mnt))
		rc = -ELOOP;
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = -errno;
	if (rc == 0) {
		root.dev = st.st_dev;
		root.ino = st.st_ino;
		root.type = S_IFDIR;
		rc = hadd(&root);
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	root.fd = fd;
	return 0;
}

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
	.opendir = f_opendir,
	.readdir = f_readdir,
	.releasedir = f_releasedir,
	.create = f_create,
	.fallocate = f_fallocate,
	.statfs = f_statfs,
};
