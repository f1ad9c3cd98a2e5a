/*
 * files.h - files/: the workspace directory (conf.workspace) passed
 * through with ordinary file semantics. Its inodes are FT_FILES (the
 * root, object id 0) and FT_FILE (object id of an OBJ_FILE that holds an
 * O_PATH descriptor and a lookup count); every operation works relative
 * to those descriptors (openat, fstatat, ...), so no path from a request
 * is ever resolved from "/", and nothing escapes the workspace through
 * the FUSE layer.
 */
#ifndef SFS_FILES_H
#define SFS_FILES_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "tree.h"

/* Their types (their numbers never move: fs/tree.h). */
#define FT_BLOCK_FILES 30
enum {
	FT_FILES = FT_BLOCK_FILES, /* files/, the workspace root */
	FT_FILE, /* anything below it: the id is an OBJ_FILE's */
};

/* Opens the workspace root. Returns 0 or -errno (files/ then answers
 * ENOENT below its root). */
int files_init(const char *workspace);
/* True for inodes that files_ops serves. */
bool files_is(fuse_ino_t ino);

extern const struct fuse_lowlevel_ops files_ops;
/* The row handlers of files/ (one row in the root's table): files_ops
 * serves its inodes. */
extern const struct fops files_fops;

#endif
