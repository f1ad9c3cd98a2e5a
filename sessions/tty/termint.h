/*
 * termint.h - the inside of a screen (struct term), shared by term.c,
 * which keeps it, and termstate.c, which saves it for an upgrade in
 * place and makes it again; nothing else includes it.
 */
#ifndef SFS_TERMINT_H
#define SFS_TERMINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vterm.h>
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "sessions/tty/vtskip.h"

/* what is held at most (some 60 ms of libvterm); past it, held text is
 * fed as more comes */
#define HOLD_MAX (1u << 20)
/* what feeding all that is held may move at most, lines times area
 * (some 5 ns a cell: 80 ms); a larger screen holds nothing */
#define HOLD_CELLS (1u << 24)
/* the most of held text fed at once, as much as one read of the PTY */
#define PIECE_MAX 4096u

struct term {
	VTerm *vt;
	VTermScreen *scr;
	int cols, rows;
	term_out_fn *out;
	void *arg;
	char *title;
	bool altscreen, hidden;
	char **sb; /* ring of sb_max lines: sb_n of them from sb_first */
	size_t sb_max, sb_first, sb_n;
	char *line;	  /* one row's text, room for cols cells */
	uint64_t version; /* of the screen, unique among terminals */
	struct vtskip scan;
	bool skip;  /* plain text may be held */
	char *held; /* plain text not fed yet: held_len from held_off */
	size_t held_off, held_len, held_cap;
	size_t held_nl;	 /* its newlines */
	size_t held_run; /* its last bytes after a control (\r, \n, \t) */
	size_t next_cut; /* the newlines before the next look for a cut */
	uint64_t skipped;
	/* while set, what libvterm sends goes here, not to out (a look at
	 * what a key would send, a screen drawn again) */
	struct strbuf *capture;
	/* While the alternate screen is on, the main screen's drawing as it
	 * was when it came on, at main_cols x main_rows: libvterm shows
	 * only the screen in use, and an upgrade puts both back. */
	struct strbuf main;
	int main_cols, main_rows;
};

/* Appends line (malloc'd, taken) to the scrolled-off lines (sb_max > 0),
 * dropping the oldest when they are sb_max. */
void term_sb_push(struct term *t, char *line);
/* termdraw.c: term_draw appends the drawing of t's screen in use, its
 * pen, scroll region, cursor and the modes of its keys to d;
 * term_keep_main keeps the screen's drawing (but the modes) in t->main,
 * right before the alternate screen comes on. */
void term_draw(struct term *t, struct strbuf *d);
void term_keep_main(struct term *t);

/* Appends code point c as UTF-8; its length. */
static inline size_t term_put_utf8(char *p, uint32_t c)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		p[0] = (char)(0xe0 | c >> 12);
		p[1] = (char)(0x80 | (c >> 6 & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | c >> 18);
	p[1] = (char)(0x80 | (c >> 12 & 0x3f));
	p[2] = (char)(0x80 | (c >> 6 & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

#endif
