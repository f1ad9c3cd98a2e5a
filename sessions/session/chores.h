/*
 * chores.h - work of a session done in quiet moments of the loop:
 * unlinking the files of ended runs (sess_trash, in sess.h) and making
 * the fifos of its next run.
 */
#ifndef SFS_CHORES_H
#define SFS_CHORES_H

#include <stdbool.h>

struct sess;

/* The loop's quiet hook: the chores of one session. Returns whether
 * others have chores left. */
bool chores_quiet(void);
/* Makes the fifos of s's next run (s->fifo) unless they are there.
 * Returns 0 or -errno. */
int chores_make_fifos(struct sess *s);
/* Unlinks soon the fifos of generation gen. */
void chores_trash_fifos(struct sess *s, unsigned gen);
/* Drops what is left to do for s, and its fifos (s is being freed). */
void chores_forget(struct sess *s);

#endif
