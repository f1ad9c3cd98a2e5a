/*
 * term.h - a terminal's screen, kept by libvterm: what the program
 * printed goes in, and out come the screen as text, the lines that
 * scrolled off (bounded), the cursor, the title and whether the alternate
 * screen is on. What the emulator answers (a cursor position report) and
 * the keys it encodes go to the output function, that is the PTY.
 */
#ifndef SFS_TERM_H
#define SFS_TERM_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sessions/tty/keys.h"

struct term;
typedef void term_out_fn(void *arg, const char *buf, size_t len);

/* A screen of cols x rows keeping at most sb_max scrolled-off lines;
 * out(arg, ...) gets the bytes meant for the program. NULL on ENOMEM. */
struct term *term_new(int cols, int rows, size_t sb_max, term_out_fn *out,
		      void *arg);
void term_free(struct term *t);
/* Everything the program printed, in order. */
void term_feed(struct term *t, const char *buf, size_t len);
/* term_feed of a prefix of buf, whose length it returns: less than len
 * when it fed held text first (call again with the rest), so that a call
 * costs libvterm about term_piece lines of buf or of what is held. */
size_t term_take(struct term *t, const char *buf, size_t len);
/* The lines one call of term_take may feed: each newline may move the
 * whole screen (some 10 us at 80x24, 50 times that at the largest), so
 * at most 32000 cells of screen, lines times area: 16 lines at 80x24, 1
 * at the largest. */
size_t term_piece(const struct term *t);
/* Plain text that will scroll past the scrolled-off lines is held, not
 * fed, and the part of it that can never be seen dropped (never with
 * scroll margins set); whatever reads or changes the screen here feeds
 * what is held first. term_settle feeds it until until_us (monotonic)
 * and says whether none is left; term_settled whether none is. */
bool term_settle(struct term *t, int64_t until_us);
bool term_settled(const struct term *t);
/* Whether plain text may be held (on at first); off, term_feed feeds
 * every byte (what is held first). */
void term_skip(struct term *t, bool on);
/* The bytes dropped so far. */
uint64_t term_skipped(const struct term *t);
void term_resize(struct term *t, int cols, int rows);
/* Changes with what is on the screen (a feed, a resize); no two screens
 * share one, so a match need not be tried again until it changes. */
uint64_t term_version(const struct term *t);
/* Sends the keys and text of seq to the program (through out). */
void term_keys(struct term *t, const struct keys_seq *seq);
/* The screen, one line per row, trailing blanks trimmed (malloc'd). */
char *term_screen(struct term *t, size_t *len);
/* The scrolled-off lines, oldest first (malloc'd). */
char *term_scrollback(struct term *t, size_t *len);
void term_clear_scrollback(struct term *t);
/* Patterns for term_match: sessions/core/pattern.h bounds them. */
/* The lowest row of the screen that re matches, with its newline
 * (malloc'd), or NULL. */
char *term_match(struct term *t, const regex_t *re, size_t *len);
/* What a waiter of term_match_once saw last. */
struct term_seen {
	uint64_t version; /* of the screen, that its regex did not match */
	int64_t after_us; /* monotonic: no try before (zero: none yet) */
};
/* term_match, but not again on the screen that seen did not match, and
 * at most a tenth of the time (the next try waits 9 times as long as the
 * last took, as a regex on a large screen may take long): then NULL and,
 * when only the time stopped it, *retry_ms (monotonic ms) says when to
 * try again (else 0). */
char *term_match_once(struct term *t, const regex_t *re, struct term_seen *seen,
		      int64_t *retry_ms);
/* 1-based row and column of the cursor, and whether it is shown. */
void term_cursor(struct term *t, int *row, int *col, bool *visible);
/* The title the program set (OSC 0 or 2), "" when none. */
const char *term_title(const struct term *t);
bool term_altscreen(const struct term *t);

/* An upgrade in place (termstate.c). term_save writes t's screen, its
 * scrolled-off lines and title into the object open in w (what t holds
 * is fed first, as any read of the screen does; nothing is sent to the
 * program); term_restore makes a screen of cols x rows again from o
 * (what is missing or malformed: blank), as term_new. */
struct state_w;
struct state_r;
void term_save(struct term *t, struct state_w *w);
struct term *term_restore(const struct state_r *o, int cols, int rows,
			  size_t sb_max, term_out_fn *out, void *arg);

#endif
