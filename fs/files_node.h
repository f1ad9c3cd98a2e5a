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

#define FNODE_TTL 0.0 /* entry and attribute timeouts (s) */

struct fnode {
	uint64_t id; /* OBJ_FILE id; 0 for the root */
	int fd;	     /* O_PATH|O_NOFOLLOW */
	dev_t dev;
	ino_t ino;
	mode_t type;	    /* S_IFMT bits */
	uint64_t nlookup;   /* the kernel's references */
	struct fnode *next; /* hash chain */
};

/* The workspace root (fd -1 until files_init). */
extern struct fnode fnode_root;

struct fnode *fnode_find(dev_t dev, ino_t ino);
/* Enters the root (fd, dev, ino set) into the table. 0 or -ENOMEM. */
int fnode_hadd_root(void);
fuse_ino_t fnode_ino(const struct fnode *n);
/* The node of ino, or NULL. */
struct fnode *fnode_of(fuse_ino_t ino);
/* Drops k of the kernel's references; the last one frees the node. */
void fnode_unref(struct fnode *n, uint64_t k);

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
void fnode_as_self(int switched);
/* Remembers the daemon's own credentials. */
void fnode_save_creds(void);

/* /proc/self/fd/FD into buf. */
void fnode_proc_path(char *buf, size_t len, int fd);
/* Counts one lookup of n and fills e with its entry. */
void fnode_entry(struct fnode *n, struct stat *st, struct fuse_entry_param *e);
/* Finds or makes the node of name in dir, counts one lookup and fills e.
 * Returns the node, or NULL with *err set. */
struct fnode *fnode_lookup(struct fnode *dir, const char *name,
			   struct fuse_entry_param *e, int *err);
/* Replies with n's entry, or err; a reply that fails undoes the lookup. */
void fnode_reply_entry(fuse_req_t req, struct fnode *n,
		       const struct fuse_entry_param *e, int err);
/* Applies a setattr to n. Returns 0 or -errno. */
int fnode_set_attrs(const struct fnode *n, const struct stat *a, int set,
		    const struct fuse_file_info *fi);

#endif
