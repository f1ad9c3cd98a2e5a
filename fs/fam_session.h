/*
 * fam_session.h - a session's directory: its run files (fs/fam_run.c),
 * cwd, error, ctl, and the rows of env/, runs/ and procs/.
 */
#ifndef SFS_FAM_SESSION_H
#define SFS_FAM_SESSION_H

#include "tree.h"

/* The types of a session's directory of its own (their numbers never
 * move: fs/tree.h; the gaps are other families' numbers). */
#define FT_BLOCK_SESSION 8
enum {
	FT_SESS = FT_BLOCK_SESSION, /* sessions/NAME */
	FT_ERROR = 20,
	FT_CTL,
};

extern const struct fops fam_session_ops;

#endif
