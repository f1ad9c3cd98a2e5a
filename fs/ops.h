/*
 * ops.h - the FUSE low-level operations of sessionfs.
 */
#ifndef SFS_OPS_H
#define SFS_OPS_H

#include <fuse_lowlevel.h>

/* The operations libfuse calls: each goes to files_ops for inodes under
 * files/ (fs/files.c) and to tree_ops for the rest (fs/ops.c). */
extern const struct fuse_lowlevel_ops fsn_ops;
extern const struct fuse_lowlevel_ops tree_ops;

/* The largest read request (the max_read mount option, which init must
 * repeat to the kernel); sessionfs's default is FSN_MAX_READ. */
#define FSN_MAX_READ 524288
extern unsigned fsn_max_read;

/* Connects the operations to the session layer's hooks. */
void fsn_ops_init(void);
/* Frees what open files are left when the loop has ended. */
void fsn_ops_fini(void);

#endif
