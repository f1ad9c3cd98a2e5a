/*
 * fam_procs.h - procs/: one directory per background process.
 */
#ifndef SFS_FAM_PROCS_H
#define SFS_FAM_PROCS_H

#include "tree.h"

/* The types of procs/ (their numbers never move: fs/tree.h; the gap is
 * other families' numbers). */
#define FT_BLOCK_PROCS 25
enum {
	FT_PROCS = FT_BLOCK_PROCS,
	FT_PROC, /* procs/NAME */
	FT_PID,
	FT_STDIN,
	FT_PROCCMD = 32, /* procs/NAME/cmd */
	FT_PROCCTL,	 /* procs/NAME/ctl */
};

extern const struct fops fam_procs_ops;

#endif
