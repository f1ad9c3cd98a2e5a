/*
 * files_node.c - the nodes of files/, after libfuse's
 * example/passthrough_ll.c.
 *
 * Every inode below files/ is a struct fnode: an O_PATH|O_NOFOLLOW
 * descriptor of the real file, its (st_dev, st_ino), so that one real
 * file is one FUSE inode (hard links included), and the kernel's lookup
 * count. Its inode number is fnode_ino_of(id) with id from
 * objs_add(OBJ_FILE); the workspace root is tree_ino(0, FT_FILES) and is
 * never freed. A node goes when the kernel forgets its last lookup.
 *
 * A request of another user (a mount with allow_other) runs with that
 * user's file system credentials (fsuid, fsgid, groups), so the real
 * files' modes decide; a daemon that is not root refuses such requests.
 *
 * Every name is resolved by fnode_openat, which never crosses into
 * another mount: a mount point below the workspace (a user's own FUSE
 * mount, which she can stop; a bind mount; a sessionfs, where the daemon
 * would wait on itself) is listed by readdir but its lookup fails with
 * EXDEV, before any request reaches that filesystem. So every node is on
 * the workspace's own mount, and the system calls on a node's descriptor
 * (fstatat, readlinkat, utimensat, /proc/self/fd/N, which names the
 * node's own dentry and follows no mount) stay there too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include "sessions/session/fdq.h"
#include "files.h"
#include "files_fd.h"
#include "files_node.h"
#include "sessions/core/objs.h"
#include "sessions/core/state.h"
#include "tree.h"

#define NGROUPS_KEPT 256 /* supplementary groups taken from a caller */

/* setgroups(2) of this thread only (glibc's changes every thread) */
#ifdef SYS_setgroups32
#define SYS_SETGROUPS SYS_setgroups32 /* 32-bit gid_t on 32-bit x86 */
#else
#define SYS_SETGROUPS SYS_setgroups
#endif

struct fnode fnode_root = { .fd = -1 };
uint32_t fnode_gen;

/* Nodes whose descriptor did not survive an upgrade, chained by next:
 * not in the table, so that no lookup finds them, and kept until the
 * kernel forgets them, so that their ids are not given to other files. */
static struct fnode *lost;

/* (dev, ino) -> node, chained; hcap is a power of two. */
static struct fnode **htab;
static size_t hcap, hcount;

/* The daemon's own credentials, restored after a caller's. */
static uid_t my_uid;
static gid_t my_gid;
static gid_t *my_groups;
static int my_ngroups;
/* The daemon's capabilities (capget(2) of this thread), and the same with
 * an empty effective set: what it acts with as another user. */
static struct __user_cap_data_struct my_caps[2], no_caps[2];
static bool caps_known; /* without them no other user is served */

/* ---------------------------------------------------------------- nodes */

static size_t hslot(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

struct fnode *fnode_find(dev_t dev, ino_t ino)
{
	struct fnode *n;

	if (!hcap)
		return NULL;
	for (n = htab[hslot(dev, ino, hcap)]; n; n = n->next)
		if (n->dev == dev && n->ino == ino)
			return n;
	return NULL;
}

void fnode_each(void (*fn)(const struct fnode *n))
{
	for (size_t i = 0; i < hcap; i++)
		for (const struct fnode *n = htab[i]; n; n = n->next)
			fn(n);
}

unsigned long fnode_count(void)
{
	return hcount;
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

int fnode_root_set(int fd, const struct stat *st)
{
	if (fnode_root.fd >= 0) {
		hdel(&fnode_root);
		close(fnode_root.fd);
		fnode_root.fd = -1;
	}
	fnode_root.dev = st->st_dev;
	fnode_root.ino = st->st_ino;
	fnode_root.type = S_IFDIR;
	if (hadd(&fnode_root) < 0)
		return -ENOMEM;
	fnode_root.fd = fd;
	fnfd_init();
	return 0;
}

/* The generation's bits of an inode number (56 - FNODE_ID_BITS). */
static uint64_t gen_bits(void)
{
	return fnode_gen & ((UINT64_C(1) << (56 - FNODE_ID_BITS)) - 1);
}

fuse_ino_t fnode_ino_of(uint64_t id)
{
	return tree_ino(gen_bits() << FNODE_ID_BITS | id, FT_FILE);
}

fuse_ino_t fnode_ino(const struct fnode *n)
{
	return n->id ? fnode_ino_of(n->id) : tree_ino(0, FT_FILES);
}

/* The node of ino, lost or not, or NULL. */
static struct fnode *node_any(fuse_ino_t ino)
{
	uint64_t id = ino >> 8;

	switch ((ft_t)(ino & 0xff)) {
	case FT_FILES:
		return id == 0 && fnode_root.fd >= 0 ? &fnode_root : NULL;
	case FT_FILE: /* another generation's is stale */
		return id >> FNODE_ID_BITS == gen_bits() ?
			       objs_get(id & FNODE_ID_MAX, OBJ_FILE) :
			       NULL;
	default:
		return NULL;
	}
}

/* A lost node has neither a descriptor nor a handle; an evicted one has
 * its handle, opened here again (fs/files_fd.c). */
struct fnode *fnode_peek(fuse_ino_t ino)
{
	struct fnode *n = node_any(ino);

	return n && (n->fd >= 0 || n->fh) ? n : NULL;
}

struct fnode *fnode_of(fuse_ino_t ino)
{
	struct fnode *n = fnode_peek(ino);

	return n && fnfd_use(n) == 0 ? n : NULL;
}

int fnode_err(fuse_ino_t ino)
{
	return (ino & 0xff) == FT_FILE ? ESTALE : ENOENT;
}

void fnode_forget(fuse_ino_t ino, uint64_t k)
{
	fnode_unref(node_any(ino), k);
}

/* A node for fd (taken over on success). Returns NULL on ENOMEM. */
static struct fnode *node_new(int fd, const struct stat *st)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	*n = (struct fnode){ .fd = fd,
			     .dev = st->st_dev,
			     .ino = st->st_ino,
			     .type = st->st_mode & S_IFMT };
	if (hadd(n) < 0) {
		free(n);
		return NULL;
	}
	n->id = objs_add(OBJ_FILE, n);
	if (n->id > FNODE_ID_MAX) { /* not in 2^36 nodes of one daemon */
		hdel(n);
		objs_del(n->id);
		free(n);
		return NULL;
	}
	fnfd_add(n);
	return n;
}

static void lost_del(struct fnode *n)
{
	struct fnode **p = &lost;

	while (*p && *p != n)
		p = &(*p)->next;
	if (*p)
		*p = n->next;
}

/* Drops k of the kernel's references; the last one frees the node. */
void fnode_unref(struct fnode *n, uint64_t k)
{
	if (!n || n == &fnode_root)
		return;
	n->nlookup = k < n->nlookup ? n->nlookup - k : 0;
	if (n->nlookup)
		return;
	if (n->fd >= 0 || n->fh) {
		hdel(n);
		fnfd_del(n);
	} else {
		lost_del(n);
	}
	objs_del(n->id);
	free(n);
}

/* n, evicted, no longer names the file of its (dev, ino): it is lost
 * (ESTALE) until the kernel forgets it. */
static void node_lose(struct fnode *n)
{
	hdel(n);
	fnfd_del(n);
	n->next = lost;
	lost = n;
}

/* -------------------------------------------------------------- upgrade */

/* Field keys of a node's object; never reused. */
enum { KN_ID = 1, KN_FD, KN_NLOOKUP, KN_HANDLE };

static void save_one(struct state_w *w, const struct fnode *n)
{
	state_open(w, FNODE_STATE_KEY);
	state_put_u64(w, KN_ID, n->id);
	state_put_fd(w, KN_FD, n->fd);
	state_put_u64(w, KN_NLOOKUP, n->nlookup);
	fnfd_save(w, KN_HANDLE, n);
	state_close(w);
}

void fnode_save(struct state_w *w)
{
	const struct fnode *n;

	for (size_t i = 0; i < hcap; i++)
		for (n = htab[i]; n; n = n->next)
			if (n != &fnode_root)
				save_one(w, n);
	for (n = lost; n; n = n->next)
		save_one(w, n);
}

/* Enters n (id set, fd -1 or its descriptor) into the table, or among
 * the lost when it has no descriptor or another node has its file. */
static void restore_at(struct fnode *n)
{
	struct stat st;

	if (n->fd >= 0 &&
	    (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ||
	     fnode_find(st.st_dev, st.st_ino))) {
		close(n->fd);
		n->fd = -1;
	}
	if (n->fd >= 0) {
		n->dev = st.st_dev;
		n->ino = st.st_ino;
		n->type = st.st_mode & S_IFMT;
	}
	if (n->fd < 0 || hadd(n) < 0) {
		if (n->fd >= 0)
			close(n->fd);
		n->fd = -1;
		n->next = lost;
		lost = n;
	} else {
		fnfd_add(n);
	}
}

int fnode_restore(const struct state_r *o)
{
	uint64_t id = state_get_u64(o, KN_ID, 0);
	uint64_t nlookup = state_get_u64(o, KN_NLOOKUP, 0);
	int fd = state_get_fd(o, KN_FD), rc = 0;
	struct fnode *n = NULL;

	if (fd < 0) /* evicted: opened again from its handle */
		fd = fnfd_restore_fd(o, KN_HANDLE);

	/* an id its inode number can hold, that nothing has yet, and a
	 * node the kernel still knows */
	if (id == 0 || id > FNODE_ID_MAX || nlookup == 0 ||
	    objs_kind(id) != OBJ_NONE)
		rc = -EINVAL;
	else if (!(n = calloc(1, sizeof(*n))))
		rc = -ENOMEM;
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	*n = (struct fnode){ .fd = fd, .nlookup = nlookup };
	restore_at(n);
	objs_reuse(id);
	n->id = objs_add(OBJ_FILE, n);
	return n->fd >= 0 || n->fh; /* evicted at once beyond the bound */
}

/* ---------------------------------------------------------------- checks */

/* True if mount mnt is a sessionfs (from /proc/self/mountinfo). */
bool fnode_is_sessionfs(uint64_t mnt)
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
int fnode_mount_of(int fd, uint64_t *mnt)
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
 * openat(2) of name in dir that stays on dir's mount: EXDEV for a mount
 * point (the kernel refuses before it enters the mount, so a stopped FUSE
 * daemon there is never asked), and nothing that leaves dir ("..", an
 * absolute symlink) or a magic link is followed. Returns the fd, or -1
 * (errno), as openat does: fdq_keep and fdq_take take that.
 */
int fnode_openat(int dir, const char *name, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)(unsigned)flags,
				.mode = mode,
				.resolve = RESOLVE_NO_XDEV | RESOLVE_BENEATH |
					   RESOLVE_NO_MAGICLINKS };

	return (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
}

/* ---------------------------------------------------------- credentials */

/* capset(2) of this thread's capabilities (glibc has no wrapper). */
static int set_caps(struct __user_cap_data_struct *caps)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return (int)syscall(SYS_capset, &h, caps);
}

/*
 * Takes on the file system credentials of req's caller when that is
 * another user, and empties the effective capabilities: a new fsuid
 * drops only the file system ones (CAP_CHOWN, CAP_FOWNER, CAP_MKNOD,
 * ...), and the daemon's CAP_SYS_ADMIN (trusted.* xattrs), CAP_SETFCAP
 * (security.capability) or CAP_LINUX_IMMUTABLE (chattr +i) must not
 * act for her. Returns 0 (nothing to do), 1 (switched: call
 * fnode_as_self) or -EACCES.
 */
bool fnode_is_self(fuse_req_t req)
{
	return fuse_req_ctx(req)->uid == my_uid;
}

int fnode_as_caller(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	gid_t groups[NGROUPS_KEPT];
	int n;

	if (c->uid == my_uid)
		return 0;
	if (my_uid != 0)
		return -EACCES;
	n = fuse_req_getgroups(req, NGROUPS_KEPT, groups);
	return fnode_as_creds(c->uid, c->gid, groups, n < 0 ? 0 : n);
}

int fnode_as_creds(uid_t uid, gid_t gid, const gid_t *groups, int n)
{
	if (uid == my_uid)
		return 0;
	if (my_uid != 0)
		return -EACCES;
	if (n > NGROUPS_KEPT)
		n = NGROUPS_KEPT;
	if (syscall(SYS_SETGROUPS, (size_t)n, groups) < 0)
		return -EACCES;
	setfsgid(gid);
	setfsuid(uid);
	if (!caps_known || set_caps(no_caps) < 0) {
		fnode_as_self(1);
		return -EACCES;
	}
	return 1;
}

/* The capabilities first: setgroups needs CAP_SETGID. */
void fnode_as_self(int switched)
{
	if (switched != 1)
		return;
	if (caps_known)
		set_caps(my_caps);
	setfsuid(my_uid);
	setfsgid(my_gid);
	syscall(SYS_SETGROUPS, (size_t)my_ngroups, my_groups);
}

void fnode_save_creds(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
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
	caps_known = syscall(SYS_capget, &h, my_caps) == 0;
	memcpy(no_caps, my_caps, sizeof(no_caps));
	no_caps[0].effective = no_caps[1].effective = 0;
}

/* ---------------------------------------------------------------- replies */

void fnode_proc_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* The daemon's own user's open of an evicted node goes straight from
 * its handle: one system call where n's descriptor again, another
 * node's closed for it and the reopen through /proc/self/fd would be
 * three (a grep -r or a du over a tree larger than the bound pays them
 * per file). Anyone else's open is checked as hers, through /proc. */
int fnode_open_as_caller(fuse_req_t req, struct fnode *n, int flags)
{
	int fd = -1, sw, err;
	char p[64];

	if (fnode_is_self(req) && fnfd_open_evicted(n, flags, &fd))
		return fd;
	if ((sw = fnfd_use(n)) == 0 && (sw = fnode_as_caller(req)) >= 0) {
		fnode_proc_path(p, sizeof(p), n->fd);
		fd = open(p, flags);
		err = errno;
		fnode_as_self(sw);
		errno = err;
		return fd;
	}
	errno = -sw;
	return -1;
}

int fnode_dir_fd(const struct fnode *n, uid_t uid)
{
	char p[64];

	fnode_proc_path(p, sizeof(p), n->fd);
	return fdq_take(uid, open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* Counts one lookup of n and fills e with its entry. */
void fnode_entry(struct fnode *n, struct stat *st, struct fuse_entry_param *e)
{
	*e = (struct fuse_entry_param){ .ino = fnode_ino(n),
					.generation = fnode_gen,
					.attr = *st,
					.attr_timeout = FNODE_TTL,
					.entry_timeout = FNODE_TTL };
	e->attr.st_ino = e->ino;
	n->nlookup++;
}

/*
 * Finds or makes the node of name in dir, counts one lookup and fills e.
 * Returns the node, or NULL with *err set.
 */
struct fnode *fnode_lookup(struct fnode *dir, const char *name,
			   struct fuse_entry_param *e, int *err)
{
	/* ENFILE past the cut: however many nodes the kernel keeps (a du,
	 * files held open), they leave the daemon its reserve */
	int fd = fdq_keep(fnode_openat(dir->fd, name,
				       O_PATH | O_NOFOLLOW | O_CLOEXEC, 0));
	struct fnode *n;
	struct stat st;
	int rc;

	if (fd < 0) {
		*err = -fd;
		return NULL;
	}
	rc = fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0
		     ? -errno
		     : 0;
	n = rc < 0 ? NULL : fnode_find(st.st_dev, st.st_ino);
	if (n && n->fd < 0 && !fnfd_same(n, fd)) {
		node_lose(n); /* its inode number names another file now */
		n = NULL;
	}
	if (rc == 0 && n)
		close(fd);
	else if (rc == 0 && !(n = node_new(fd, &st)))
		rc = -ENOMEM;
	if (rc < 0) {
		close(fd);
		*err = -rc;
		return NULL;
	}
	fnode_entry(n, &st, e);
	return n;
}

/* Replies with n's entry, or err; a reply that fails undoes the lookup. */
void fnode_reply_entry(fuse_req_t req, struct fnode *n,
		       const struct fuse_entry_param *e, int err)
{
	if (!n)
		fuse_reply_err(req, err);
	else if (fuse_reply_entry(req, e) != 0)
		fnode_unref(n, 1);
}

/* ----------------------------------------------------------- attributes */

/* By path, through an open of its own: truncate(2) would wait for the
 * break of another process's lease on the file (fs/files.c, open_flags),
 * the open fails with EWOULDBLOCK instead. */
static int set_size(const struct fnode *n, off_t size, int fd)
{
	char p[64];
	int rc, err;

	if (fd >= 0 && S_ISREG(n->type))
		return ftruncate(fd, size);
	fnode_proc_path(p, sizeof(p), n->fd);
	if ((fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -1;
	rc = ftruncate(fd, size);
	err = errno;
	close(fd);
	errno = err;
	return rc;
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
int fnode_set_attrs(const struct fnode *n, const struct stat *a, int set,
		    int fd)
{
	uid_t uid = (set & FUSE_SET_ATTR_UID) ? a->st_uid : (uid_t)-1;
	gid_t gid = (set & FUSE_SET_ATTR_GID) ? a->st_gid : (gid_t)-1;
	char p[64];

	fnode_proc_path(p, sizeof(p), n->fd);
	if ((set & FUSE_SET_ATTR_MODE) && chmod(p, a->st_mode & 07777) < 0)
		return -errno;
	if ((set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	    fchownat(n->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) <
		    0)
		return -errno;
	if ((set & FUSE_SET_ATTR_SIZE) && set_size(n, a->st_size, fd) < 0)
		return -errno;
	if ((set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
		    FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)) &&
	    set_times(n, a, set) < 0)
		return -errno;
	return 0;
}
