/*
 * fam_watch.h - watches/ and watches/NAME: spec, events and error (the
 * watches themselves are fs/watch.c's).
 */
#ifndef SFS_FAM_WATCH_H
#define SFS_FAM_WATCH_H

#include "tree.h"

/* Its file types (their numbers never move: fs/tree.h). */
#define FT_BLOCK_WATCH 210
enum {
	FT_WATCHES = FT_BLOCK_WATCH, /* watches/ */
	FT_WATCH,		     /* watches/NAME */
	FT_WSPEC,
	FT_WEVENTS,
	FT_WERROR,
};

extern const struct fops fam_watches_ops;

#endif
