/*
 * files_node.h - the nodes of files/ (fs/files.c): one per real file
 * the kernel has looked up, found by (st_dev, st_ino); the checks that
 * keep a lookup inside the workspace; a caller's credentials.
 */
#ifndef SFS_FILES_NODE_H
#define SFS_FILES_NODE_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "files_watch.h"

#define FNODE_TTL fwatch_ttl /* entry and attribute timeouts (s) */

struct fnode {
	uint64_t id; /* OBJ_FILE id; 0 for the root */
	int fd;	     /* O_PATH|O_NOFOLLOW; -1 when evicted or lost */
	dev_t dev;
	ino_t ino;
	mode_t type;	    /* S_IFMT bits */
	uint64_t nlookup;   /* the kernel's references */
	struct fnode *next; /* hash chain */
	/* fs/files_fd.c: the file's handle (NULL: none, the fd is kept),
	 * its hash chain, and the LRU list of nodes with an open fd */
	struct file_handle *fh;
	struct fnode *fh_next, *newer, *older;
	/* fs/files_watch.c: changed from outside files/ since the last open
	 * through it (its data, attributes or a directory's entries), and
	 * when one of its names last went (loop_now_ms; 0: never), and the
	 * numbers of the events that told each */
	bool changed;
	int64_t unnamed_ms;
	uint64_t changed_ev, unnamed_ev;
};

/* The workspace root (fd -1 until files_init). */
extern struct fnode fnode_root;
/* The generation of this program's entries and handles (never 0, below
 * 2^32: the kernel keeps 32 bits): kept by an upgrade in place, a new
 * one at any other start, so that the kernel never takes a node or a
 * handle of a crashed program for one of the next (it marks an inode
 * whose generation changed bad). */
extern uint32_t fnode_gen;

struct fnode *fnode_find(dev_t dev, ino_t ino);
/* Calls fn for every node the kernel knows, the root included. */
void fnode_each(void (*fn)(const struct fnode *n));
/* How many nodes the table holds (the root included). */
unsigned long fnode_count(void);
/* Makes fd (the workspace, st its stat; taken over on success) the
 * root, in place of the root before if any. 0 or -ENOMEM. */
int fnode_root_set(int fd, const struct stat *st);
fuse_ino_t fnode_ino(const struct fnode *n);
/* The inode number of the node of id below the root: the generation's
 * low bits above the id's FNODE_ID_BITS, so that no inode a crashed
 * program gave out names a node of the next one (whose ids may be the
 * same), and an upgrade, which keeps the generation, keeps them all. */
#define FNODE_ID_BITS 36
#define FNODE_ID_MAX  ((UINT64_C(1) << FNODE_ID_BITS) - 1)
fuse_ino_t fnode_ino_of(uint64_t id);
/* The node of ino, or NULL: see fnode_err. */
struct fnode *fnode_of(fuse_ino_t ino);
/* The same, but an evicted node's descriptor stays closed (n->fd may
 * be -1): for a caller that may not need it (fnfd_open_evicted). */
struct fnode *fnode_peek(fuse_ino_t ino);
/* The errno for an ino that has no node: ESTALE below the root (a node
 * forgotten, or lost in an upgrade), ENOENT for a root that never
 * opened. */
int fnode_err(fuse_ino_t ino);
/* Drops k of the kernel's references; the last one frees the node. */
void fnode_unref(struct fnode *n, uint64_t k);
/* The kernel forgets k lookups of ino (lost nodes included). */
void fnode_forget(fuse_ino_t ino, uint64_t k);

/* An upgrade in place: one object of key FNODE_STATE_KEY per node (id,
 * descriptor, lookup count) but the root, into the object open in w. */
#define FNODE_STATE_KEY 0x10
struct state_w;
struct state_r;
void fnode_save(struct state_w *w);
/* Makes the node saved in o again with its id; one whose descriptor is
 * missing is lost (ESTALE until the kernel forgets it). Returns 1
 * (live), 0 (lost) or -errno (refused). */
int fnode_restore(const struct state_r *o);

/* True if mount mnt is a sessionfs (from /proc/self/mountinfo). */
bool fnode_is_sessionfs(uint64_t mnt);
/* The mount id of fd, asked without syncing. 0 or -errno. */
int fnode_mount_of(int fd, uint64_t *mnt);
/* openat(2) of name in dir that never crosses into another mount (EXDEV),
 * nor follows a magic link or leaves dir. Returns the fd, or -1 (errno). */
int fnode_openat(int dir, const char *name, int flags, mode_t mode);

/* Takes on the file system credentials of req's caller when that is
 * another user: 0 (nothing to do), 1 (switched: call fnode_as_self) or
 * -EACCES. */
int fnode_as_caller(fuse_req_t req);
/* Whether req's caller is the daemon's own user (fnode_as_caller has
 * nothing to do). */
bool fnode_is_self(fuse_req_t req);
/* The same for explicit credentials (a watch's owner: fs/watch.c); at
 * most FNODE_GROUPS of the groups count. */
#define FNODE_GROUPS 64
int fnode_as_creds(uid_t uid, gid_t gid, const gid_t *groups, int n);
void fnode_as_self(int switched);
/* Remembers the daemon's own credentials. */
void fnode_save_creds(void);

/* /proc/self/fd/FD into buf. */
void fnode_proc_path(char *buf, size_t len, int fd);
/* A new O_RDONLY descriptor of directory n, opened by the node's own
 * dentry with the credentials in force (reading needs the right to
 * read, not to search "." in it, as on ext4), counted as uid's
 * (sessions/session/fdq.h). Returns it, or -errno. */
int fnode_dir_fd(const struct fnode *n, uid_t uid);
/* Opens n's file (a node of fnode_peek: its descriptor is made again
 * if need be) with flags as req's caller. Returns the fd, or -1 with
 * errno set. */
int fnode_open_as_caller(fuse_req_t req, struct fnode *n, int flags);
/* Counts one lookup of n and fills e with its entry. */
void fnode_entry(struct fnode *n, struct stat *st, struct fuse_entry_param *e);
/* Finds or makes the node of name in dir, counts one lookup and fills e.
 * Returns the node, or NULL with *err set. */
struct fnode *fnode_lookup(struct fnode *dir, const char *name,
			   struct fuse_entry_param *e, int *err);
/* Replies with n's entry, or err; a reply that fails undoes the lookup. */
void fnode_reply_entry(fuse_req_t req, struct fnode *n,
		       const struct fuse_entry_param *e, int err);
/* Applies a setattr to n, a truncation through open file fd (-1: by
 * name). Returns 0 or -errno. */
int fnode_set_attrs(const struct fnode *n, const struct stat *a, int set,
		    int fd);

#endif
