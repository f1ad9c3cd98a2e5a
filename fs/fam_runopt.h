/*
 * fam_runopt.h - a named run's or a process's own cwd, and a named run's
 * stdin, written before its cmd (its env/ is fs/fam_env.c's).
 */
#ifndef SFS_FAM_RUNOPT_H
#define SFS_FAM_RUNOPT_H

#include "fam_env.h"
#include "tree.h"

/* Their types: a block past the others (fs/tree.h). */
#define FT_BLOCK_RUNOPT 232
enum {
	FT_RUNCWD = FT_BLOCK_RUNOPT, /* runs/NAME/cwd, procs/NAME/cwd */
	FT_RUNSTDIN,		     /* runs/NAME/stdin */
};

extern const struct fops fam_runcwd_ops, fam_runstdin_ops;

/* 0 while r takes options (its cmd is not written yet), else -EBUSY and
 * a line in s's error naming FILE NAME (env/ and a variable, or cwd and
 * ""). */
int fam_runopt_open(struct sess *s, struct run *r, const char *file,
		    const char *name);

/* The options of runs/NAME (FAM_RUN_OPT_ROWS) and procs/NAME (env/ and
 * cwd: its stdin is a pipe of its own). */
#define FAM_RUN_CWD_ROW                                                        \
	{                                                                      \
		"cwd", FT_RUNCWD, FENT_RW, &fam_runcwd_ops, 0, HOME_DIR,       \
			"the directory for this run alone, before its cmd"     \
	}
#define FAM_RUN_OPT_ROWS                                                       \
	FAM_RUN_ENV_ROW, FAM_RUN_CWD_ROW,                                      \
	{                                                                      \
		"stdin", FT_RUNSTDIN, FENT_WO, &fam_runstdin_ops, 0, HOME_DIR, \
			"bytes for the run's stdin, then EOF (at most 16 "     \
			"MiB), "                                               \
			"before its cmd"                                       \
	}

#endif
