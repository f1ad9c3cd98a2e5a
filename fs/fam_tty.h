/*
 * fam_tty.h - a session's tty/: its terminal as files.
 */
#ifndef SFS_FAM_TTY_H
#define SFS_FAM_TTY_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include "sessions/tty/cast.h"
#include "sessions/tty/term.h"
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
	/* past the block, which contexts/ follows at once */
	FT_TTYREADY = 110,
};

extern const struct fops fam_tty_ops;
/* The views (fs/fam_ttyview.c), rows of fam_tty_ops's table. */
extern const struct fops fam_ttyscreen_ops, fam_ttyscrollback_ops,
	fam_ttycursor_ops, fam_ttytitle_ops, fam_ttystatus_ops;

/* What an open file of tty/ keeps (fh->priv, fs/fam_ttyfh.c): the
 * pattern and deadline of its expect (0: from its first read or poll),
 * where its read of recording.cast is. */
struct ttyfh {
	regex_t re;
	bool has_re;
	char *pat; /* re's text, for an upgrade to compile again */
	uint64_t ms;
	int64_t deadline;
	struct term_seen seen;	 /* what re last saw of the screen */
	struct cast_reader cast; /* recording.cast's */
};

/* fh's, made at its first use; NULL on ENOMEM. */
struct ttyfh *fam_ttyfh(struct fh *fh);
/* The rows' priv_restore (tree.h) of what an upgrade saved of one. */
int fam_ttyfh_restore(struct fh *fh, const struct state_r *o);
/* recording.cast's row, and ready's (fs/fam_ttyready.c). */
extern const struct fops fam_ttycast_ops, fam_ttyready_ops;

/* For the rows that wait (fs/fam_tty.c): the list a poll of fh waits
 * in; fh's terminal when a read of it waits there (it runs and fh
 * follows its output); the answer of a parked read with text (kept in
 * fh for the reads after it). */
struct park;
struct tty;
struct list *fam_tty_poll_waiters(struct fh *fh);
struct tty *fam_tty_waits_on(const struct fh *fh);
void fam_tty_answer(struct park *p, char *text, size_t len);
/* A write of milliseconds to quiet or ready (file: its name): 0 with
 * *ms, or -EINVAL with an error line. */
int fam_tty_ms_write(struct fh *fh, struct sess *s, const char *buf,
		     size_t size, const char *file, uint64_t *ms);

#endif
