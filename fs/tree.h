/*
 * tree.h - the shape of the file tree: which file types exist, their
 * names, kinds and modes (one table per directory, after acme's dirtab),
 * and how an inode number names an object and a file type.
 *
 * ino = object id << 8 | file type. Object ids are never reused, so an
 * inode of something deleted resolves to nothing (ENOENT).
 */
#ifndef SFS_TREE_H
#define SFS_TREE_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "sessions/sess.h"

enum ft {
	FT_NONE,
	FT_ROOT, /* ino 1 */
	FT_README,
	FT_ROOTCTL,
	FT_ROOTENV,
	FT_ROOTENVVAR,
	FT_SESSIONS,
	FT_CLONE,
	FT_SESS,
	FT_CMD,
	FT_STDOUT,
	FT_STDERR,
	FT_OUTPUT,
	FT_STREAM,
	FT_EXIT,
	FT_STATUS,
	FT_RESULT,
	FT_CWD,
	FT_ENVDIR,
	FT_TIMEOUT,
	FT_ERROR,
	FT_CTL,
	FT_RUNS,
	FT_LATEST,
	FT_RUN,
	FT_PROCS,
	FT_PROC,
	FT_PID,
	FT_STDIN,
	FT_ENVVAR,
	FT_FILES, /* files/, the workspace root (fs/files.c) */
	FT_FILE,  /* anything below files/: id is an OBJ_FILE (fs/files.c) */
	FT_MAX
};

struct fent {
	const char *name;
	enum ft ft;
	mode_t mode;
};

/* What an inode stands for, resolved against the live objects. */
struct node {
	enum ft ft;
	uint64_t id;
	struct sess *s;	    /* the session it is in, if any */
	struct run *r;	    /* its run (NULL: none yet) */
	struct envvar *var; /* for FT_ENVVAR */
	bool run_level;	    /* under runs/N rather than the session */
};

static inline fuse_ino_t tree_ino(uint64_t id, enum ft ft)
{
	return (fuse_ino_t)(id << 8 | ft);
}

/* Resolves ino. Returns 0 or -ENOENT. */
int tree_resolve(fuse_ino_t ino, struct node *n);
/* The table of a fixed directory (NULL for others) and its length. */
const struct fent *tree_table(enum ft dir, size_t *n);
/* The entry of a file type (its name and mode). */
const struct fent *tree_fent(enum ft ft);
/* True for files that belong to a run (session-level or runs/N). */
bool tree_is_run_file(enum ft ft);

#endif
