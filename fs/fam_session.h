/*
 * fam_session.h - a session's directory: its run files (fs/fam_run.c),
 * cwd, error, ctl, and the rows of env/, runs/ and procs/.
 */
#ifndef SFS_FAM_SESSION_H
#define SFS_FAM_SESSION_H

#include "tree.h"

extern const struct fops fam_session_ops;

#endif
