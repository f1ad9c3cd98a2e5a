/*
 * fam_tty.h - a session's tty/: its terminal as files.
 */
#ifndef SFS_FAM_TTY_H
#define SFS_FAM_TTY_H

#include "tree.h"

extern const struct fops fam_tty_ops;
/* The views (fs/fam_ttyview.c), rows of fam_tty_ops's table. */
extern const struct fops fam_ttyscreen_ops, fam_ttyscrollback_ops,
	fam_ttycursor_ops, fam_ttytitle_ops, fam_ttystatus_ops;

#endif
