/*
 * fam_root.h - the root directory: README, ctl, and the rows of env/,
 * files/ and sessions/, whose families serve them.
 */
#ifndef SFS_FAM_ROOT_H
#define SFS_FAM_ROOT_H

#include "tree.h"

/* The root's file types (their numbers never move: fs/tree.h). */
#define FT_BLOCK_ROOT 1
enum {
	FT_ROOT = FT_BLOCK_ROOT, /* ino 1, FUSE_ROOT_ID */
	FT_README,
	FT_ROOTCTL,
};

/* The root row: fs/tree.c indexes every row from it. */
extern const struct fent fam_root;

#endif
