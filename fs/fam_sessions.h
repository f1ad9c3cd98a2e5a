/*
 * fam_sessions.h - sessions/: clone and one directory per session.
 */
#ifndef SFS_FAM_SESSIONS_H
#define SFS_FAM_SESSIONS_H

#include "tree.h"

extern const struct fops fam_sessions_ops;

#endif
