/*
 * fam_sessions.h - sessions/: clone and one directory per session.
 */
#ifndef SFS_FAM_SESSIONS_H
#define SFS_FAM_SESSIONS_H

#include "tree.h"

/* The types of sessions/ (their numbers never move: fs/tree.h). */
#define FT_BLOCK_SESSIONS 6
enum {
	FT_SESSIONS = FT_BLOCK_SESSIONS,
	FT_CLONE,
};

extern const struct fops fam_sessions_ops;

#endif
