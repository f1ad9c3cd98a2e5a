/*
 * fam_tty.h - a session's tty/: its terminal as files.
 */
#ifndef SFS_FAM_TTY_H
#define SFS_FAM_TTY_H

#include "tree.h"

/* The types of tty/ (their numbers never move: fs/tree.h). */
#define FT_BLOCK_TTY 36
enum {
	FT_TTY = FT_BLOCK_TTY,
	FT_TTYINPUT,
	FT_TTYKEYS,
	FT_TTYOUTPUT,
	FT_TTYSTREAM,
	FT_TTYSCREEN,
	FT_TTYSCROLLBACK,
	FT_TTYCURSOR,
	FT_TTYSIZE,
	FT_TTYTITLE,
	FT_TTYSTATUS,
	FT_TTYCTL,
	FT_TTYEXPECT,
	FT_TTYQUIET,
	FT_TTYCAST,
};

extern const struct fops fam_tty_ops;
/* The views (fs/fam_ttyview.c), rows of fam_tty_ops's table. */
extern const struct fops fam_ttyscreen_ops, fam_ttyscrollback_ops,
	fam_ttycursor_ops, fam_ttytitle_ops, fam_ttystatus_ops;

#endif
