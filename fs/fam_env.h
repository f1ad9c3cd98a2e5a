/*
 * fam_env.h - env/ directories: the root's (every session's variables)
 * and a session's, with one file per variable.
 */
#ifndef SFS_FAM_ENV_H
#define SFS_FAM_ENV_H

#include "tree.h"

extern const struct fops fam_rootenv_ops, fam_envdir_ops;

#endif
