/*
 * fam_env.h - what a command runs in: env/ directories, the root's (every
 * session's variables), a session's and a context's, with one file per
 * variable; and the cwd file of a session or a context.
 */
#ifndef SFS_FAM_ENV_H
#define SFS_FAM_ENV_H

#include "tree.h"

/* The types of env/ and cwd (their numbers never move: fs/tree.h; the
 * gaps are other families' numbers). A context's env/ and cwd are its
 * family's rows (fs/fam_ctx.h). */
#define FT_BLOCK_ENV 4
enum {
	FT_ROOTENV = FT_BLOCK_ENV, /* the root's env/ */
	FT_ROOTENVVAR,		   /* a variable of it */
	FT_CWD = 17,		   /* a session's cwd */
	FT_ENVDIR,		   /* a session's env/ */
	FT_ENVVAR = 29,		   /* a variable of it */
	FT_RUNENV = 230,	   /* a named run's or a process's env/ */
	FT_RUNVAR,		   /* a variable of it */
};

extern const struct fops fam_rootenv_ops, fam_envdir_ops, fam_cwd_ops,
	fam_runenv_ops;

/* runs/NAME/env and procs/NAME/env: the run's own variables */
#define FAM_RUN_ENV_ROW                                                        \
	{                                                                      \
		"env", FT_RUNENV, FENT_DIR, &fam_runenv_ops, 0, HOME_DIR,      \
			"variables for this run alone, before its cmd "        \
			"(written empty: unset for it)"                        \
	}

/* The ops of an env/ directory, the root's, a session's or a context's
 * (beside its dyn row, the variable's file). */
fuse_ino_t fam_env_lookup(const struct node *dir, const char *name,
			  double *ttl);
void fam_env_list(struct dirbuf *d, const struct node *dir);
int fam_env_unlink(const struct node *dir, const char *name);
int fam_env_create(const struct node *dir, const char *name, fuse_ino_t *ino);
#define FAM_ENV_FOPS                                                           \
	.lookup = fam_env_lookup, .list = fam_env_list,                        \
	.unlink = fam_env_unlink, .create = fam_env_create

#endif
