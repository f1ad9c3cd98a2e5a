/*
 * fam_procs.h - procs/: one directory per background process.
 */
#ifndef SFS_FAM_PROCS_H
#define SFS_FAM_PROCS_H

#include "tree.h"

extern const struct fops fam_procs_ops;

#endif
