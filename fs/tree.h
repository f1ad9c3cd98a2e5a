/*
 * tree.h - the shape of the file tree. Every file and directory is a row
 * (struct fent: its name, file type, mode and the handlers that serve it,
 * after acme's dirtab and the kernel's file_operations). A family of
 * files is one module (fs/fam_*.c) that owns its rows and their
 * handlers; a directory's handlers name the table of its fixed entries
 * and the rows of the entries its lookup finds, so a new family is one
 * row in its parent's table. This module indexes the rows by file type,
 * walking from the root row, and resolves inode numbers.
 *
 * ino = object id << 8 | file type. Object ids are never reused, so an
 * inode of something deleted resolves to nothing (ENOENT).
 */
#ifndef SFS_TREE_H
#define SFS_TREE_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "sessions/ctx/ctx.h"
#include "sessions/session/sess.h"

/*
 * A row's file type, the low 8 bits of its inodes. Each family numbers
 * its own types in its header, in blocks from a base of its own
 * (FT_BLOCK_TTY in fs/fam_tty.h...), so that a new family touches no
 * list of the others. The numbers never move: an inode handed from one
 * build of the daemon to the next (upgrade in place) must name the same
 * file, and tests/unit/test_tree.c holds each type that shipped to its
 * number. A new type takes a number no row has (tree_init refuses two
 * families' rows with one type, and any type from FT_MAX on).
 */
typedef unsigned ft_t;
enum {
	FT_NONE,
	FT_MAX = 256 /* 8 bits */
};

/* What the object id of a row's inode names. */
enum tree_home {
	HOME_DIR,     /* its directory's object (the rows of most files) */
	HOME_TOP,     /* nothing: the id is 0 (the root and its fixed rows) */
	HOME_SESS,    /* a session (struct sess) */
	HOME_RUN,     /* a run of runs/ (struct run) */
	HOME_PROC,    /* a process of procs/ (struct run, is_proc) */
	HOME_ENVVAR,  /* a session's variable (struct envvar) */
	HOME_ROOTENV, /* a root env/ variable (struct envvar) */
	HOME_FILE,    /* a node of files/ */
	HOME_CTX,     /* a code context (struct ctx) */
	HOME_CTXRUN,  /* an execution of a context (struct run, ctx set) */
	HOME_CTXVAR,  /* a context's variable (struct envvar) */
	HOME_CTXRES,  /* a result of an execution (struct ctx_result) */
	HOME_WATCH,   /* a watch of the workspace (struct watch, fs/watch.h) */
	HOME_RUNVAR,  /* a variable of a run's options (struct envvar) */
};

/* The owner of an object outside the sessions (a watch): its files are
 * its owner's (and root's), as a session's are (fs/ops.c). */
struct tree_owned {
	uid_t uid;
	gid_t gid;
};

/* A run's file: at the session level it follows the newest run. */
#define FENT_RUN 1u
/* Outside a session, changes are the mounter's (fs/ops.c) but in a row
 * with this flag, whose family checks who may (sessions/). */
#define FENT_ANYONE 2u

#define FENT_DIR (S_IFDIR | 0755)
/* Anybody makes entries (the family checks who removes which): not
 * sticky, whose rmdir the kernel would refuse with EPERM, not EACCES. */
#define FENT_SHARED_DIR (S_IFDIR | 0777)
#define FENT_RO		(S_IFREG | 0444)
#define FENT_RW		(S_IFREG | 0644)
#define FENT_WO		(S_IFREG | 0200)

struct fops;

struct fent {
	const char *name; /* NULL ends a table */
	ft_t ft;
	mode_t mode;
	const struct fops *ops;
	unsigned flags;	     /* FENT_RUN */
	enum tree_home home; /* HOME_DIR unless it is an object itself */
	/* What it is, in one line: the mount's README is made of these
	 * (fs/readme.c); rows next to each other with the same doc share
	 * a line there ("stdout stderr"). */
	const char *doc;
};

/* What an inode stands for, resolved against the live objects. */
struct node {
	ft_t ft;
	uint64_t id;
	struct sess *s;		/* the session it is in, if any */
	struct run *r;		/* its run (NULL: none yet) */
	struct envvar *var;	/* for a variable */
	struct ctx *c;		/* its code context, if any */
	struct ctx_result *res; /* results/N */
	bool run_level; /* under runs/N or procs/N rather than the session */
	const struct tree_owned *own; /* a watch's, else NULL */
};

struct fh;
struct dirbuf;
struct fam_ctl;
struct state_r;

/*
 * The behaviour of a row (fs/ops.c calls these; NULL means the default
 * given). Handlers that return int return 0 or -errno for ops.c to
 * answer, or FOPS_LATER when they have answered or will answer later.
 */
#define FOPS_LATER 1

struct fops {
	/* A directory: its fixed entries, and the rows of the entries its
	 * lookup finds (each table ends with a row whose name is NULL). */
	const struct fent *tab;
	const struct fent *dyn;
	/* A passthrough family that serves its inodes' requests itself. */
	const struct fuse_lowlevel_ops *ll;

	/* Directories. lookup: the inode of name (0: ENOENT) and how long
	 * the kernel may keep it; list: the entries after the fixed ones;
	 * mkdir and create: the new inode in *ino (default EACCES). */
	fuse_ino_t (*lookup)(const struct node *dir, const char *name,
			     double *ttl);
	void (*list)(struct dirbuf *d, const struct node *dir);
	int (*mkdir)(fuse_req_t req, const struct node *dir, const char *name,
		     fuse_ino_t *ino, double *ttl);
	int (*rmdir)(fuse_req_t req, const struct node *dir, const char *name);
	int (*unlink)(const struct node *dir, const char *name);
	int (*create)(const struct node *dir, const char *name,
		      fuse_ino_t *ino);

	/* True while the answer about n must wait for its session's
	 * variables (fs/park.c holds the request until they are known). */
	bool (*hold)(const struct node *n);
	/* Attributes: the size (default: the length of text). */
	off_t (*size)(const struct node *n);
	/* A generated file's text, malloc'd (NULL on ENOMEM). */
	char *(*text)(const struct node *n, size_t *len);
	/* Checks and side effects of an open (fh is made). */
	int (*open)(struct fh *fh, struct node *n, struct fuse_file_info *fi);
	/* A read that is not of text: answers it (or parks it). */
	void (*read)(fuse_req_t req, struct fh *fh, size_t size, off_t off);
	/* A write of size bytes at off (the file offset the kernel gives;
	 * the end of the file with O_APPEND). */
	int (*write)(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off);
	/* Every close(2) of a descriptor of fh, by any process (FLUSH). */
	int (*flush)(fuse_req_t req, struct fh *fh);
	/* The last descriptor is gone (RELEASE); fh is freed after it. */
	void (*release)(struct fh *fh);
	/* poll(2): true when a read would not block (default: always),
	 * and the list a poll watch waits in until it is (fs/park.c); a
	 * family that changes what is readable calls park_wake_list on it.
	 * Both or neither. */
	bool (*readable)(const struct fh *fh);
	struct list *(*waiters)(struct fh *fh);
	/* Truncation to size (setattr), through the open file fh when the
	 * caller gave one (ftruncate), else NULL; the default changes
	 * nothing. */
	int (*truncate)(const struct node *n, struct fh *fh, off_t size);
	/* A symlink's target. */
	const char *(*link)(const struct node *n);
	/* A ctl file (FAM_CTL_OPS): the table of its verbs. */
	const struct fam_ctl *ctl;
	/* An upgrade in place: makes the family's state of an open file
	 * (fh->priv) again from what its priv_save wrote (fam.h); fh is
	 * restored but for priv. Returns 0 or -errno (the open file is then
	 * lost: its next request fails with EIO). */
	int (*priv_restore)(struct fh *fh, const struct state_r *o);
};

static inline fuse_ino_t tree_ino(uint64_t id, ft_t ft)
{
	return (fuse_ino_t)(id << 8 | ft);
}

/* Indexes the rows below root. Returns 0, or -EINVAL (with a line in
 * the log) when two rows of one file type disagree (two families took
 * one number), a type is not below FT_MAX, or a row has one of readable
 * and waiters without the other. */
int tree_init(const struct fent *root);
/* Resolves ino. Returns 0 or -ENOENT. */
int tree_resolve(fuse_ino_t ino, struct node *n);
/* The fixed entries of a directory (NULL for others) and their number. */
const struct fent *tree_table(ft_t dir, size_t *n);
/* The row of a file type (its name, mode and handlers), or NULL. */
const struct fent *tree_fent(ft_t ft);
/* True for files that belong to a run (session-level or runs/N). */
bool tree_is_run_file(ft_t ft);

#endif
