/*
 * fam_root.h - the root directory: README, ctl, and the rows of env/,
 * files/ and sessions/, whose families serve them.
 */
#ifndef SFS_FAM_ROOT_H
#define SFS_FAM_ROOT_H

#include "tree.h"

/* The root row: fs/tree.c indexes every row from it. */
extern const struct fent fam_root;

#endif
