/*
 * ops.h - the FUSE low-level operations of sessionfs.
 */
#ifndef SFS_OPS_H
#define SFS_OPS_H

#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops fsn_ops;

#endif
