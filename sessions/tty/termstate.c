/*
 * termstate.c - a screen saved by an upgrade in place and made again in
 * the next program (term_save, term_restore in term.h).
 *
 * How: libvterm 0.1.4 has no way to save its state, and replaying the
 * output kept so far is neither bounded (a spool keeps up to
 * max_output_bytes, 4 GiB by default) nor exact once a spool was cut.
 * So what is saved is a drawing (termdraw.c): bytes that, fed to a fresh
 * screen of the same size, put every cell back (its characters, width,
 * attributes and colours; erased cells with their pen, by ECH), then the
 * pen, the scroll region, the cursor's place and visibility and the
 * modes the keys depend on (cursor keys, keypad, newline, bracketed
 * paste, read by asking libvterm what a key would send). With the
 * alternate screen on, the main screen is drawn first, from the drawing
 * term.c kept of it when the alternate screen came on (libvterm shows
 * only the screen in use), then the alternate screen is switched on,
 * which saves the cursor where the main screen had it, as it was. A
 * drawing is some 40 bytes a cell at most (TTY_AREA_MAX cells), and it
 * is fed like any output (vtskip.h keeps libvterm safe from crafted
 * bytes). The scrolled-off lines and the title are ours, and saved as
 * they are.
 *
 * Lost: a change of the main screen while the alternate one is on (a
 * resize: libvterm resizes both; redone once, at the size now), the
 * cursor saved by DECSC, the character sets, a wrap pending at the last
 * column, double-width lines, and a sequence the program was in the
 * middle of printing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/state.h"
#include "sessions/tty/termint.h"

enum {
	K_DRAW = 1,
	K_TITLE,
	K_SB,
	K_SKIPPED,
	K_ALT,
	K_MAIN,
	K_MAIN_COLS,
	K_MAIN_ROWS,
	K_HELD,
};

void term_save(struct term *t, struct state_w *w)
{
	struct strbuf d = { 0 }, sb = { 0 };

	/* an upgrade (once) feeds what is held first, as a read does; a
	 * checkpoint, written every 100 ms during a flood, keeps it as it
	 * is, to be fed after the drawing (settling a flood's held text took
	 * some 10 ms at 80x24: the skipping it would undo) */
	if (!w->no_fds)
		term_settle(t, INT64_MAX);
	term_draw(t, &d);
	sb_add(&sb, "", 0);
	for (size_t i = 0; i < t->sb_n; i++)
		sb_addf(&sb, "%s\n", t->sb[(t->sb_first + i) % t->sb_max]);
	if ((d.err || sb.err) && !w->err)
		w->err = -ENOMEM; /* the upgrade is refused */
	state_put_u64(w, K_ALT, t->altscreen);
	if (t->altscreen && t->main.len && !t->main.err) {
		state_put(w, K_MAIN, t->main.p, t->main.len);
		state_put_u64(w, K_MAIN_COLS, (uint64_t)t->main_cols);
		state_put_u64(w, K_MAIN_ROWS, (uint64_t)t->main_rows);
	}
	if (!d.err && !sb.err) {
		state_put(w, K_DRAW, d.p, d.len);
		state_put(w, K_SB, sb.p, sb.len);
	}
	state_put_str(w, K_TITLE, t->title);
	state_put(w, K_HELD, t->held ? t->held + t->held_off : "", t->held_len);
	state_put_u64(w, K_SKIPPED, t->skipped);
	free(d.p);
	free(sb.p);
}

/* The scrolled-off lines of p (len bytes, each ended by a newline), the
 * last sb_max of them. */
static void restore_sb(struct term *t, const char *p, size_t len)
{
	const char *end = p + len, *nl;

	while (t->sb_max > 0 && p < end &&
	       (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		char *line = strndup(p, (size_t)(nl - p));

		if (!line)
			return;
		term_sb_push(t, line);
		p = nl + 1;
	}
}

/* The main screen under the alternate one, drawn at the size it had
 * (then the screen takes its size now, as libvterm resized both), and
 * the alternate screen on. */
static void restore_alt(struct term *t, const struct state_r *o)
{
	int cols = t->cols, rows = t->rows;
	uint64_t mc = state_get_u64(o, K_MAIN_COLS, 0),
		 mr = state_get_u64(o, K_MAIN_ROWS, 0);
	bool sized = mc >= 2 && mc <= 1000 && mr >= 2 && mr <= 1000 &&
		     mc * mr <= 100000;
	const void *p;
	size_t len;

	if (sized && state_get(o, K_MAIN, &p, &len)) {
		if ((int)mc != cols || (int)mr != rows)
			term_resize(t, (int)mc, (int)mr);
		term_feed(t, p, len);
	}
	term_feed(t, "\033[?1049h", 8);
	if (t->cols != cols || t->rows != rows)
		term_resize(t, cols, rows);
}

struct term *term_restore(const struct state_r *o, int cols, int rows,
			  size_t sb_max, term_out_fn *out, void *arg)
{
	struct term *t = term_new(cols, rows, sb_max, out, arg);
	struct strbuf drop = { 0 };
	const void *p;
	size_t len;

	if (!t)
		return NULL;
	t->capture = &drop; /* a drawing asks nothing, but never answer */
	if (state_get_u64(o, K_ALT, 0))
		restore_alt(t, o);
	if (state_get(o, K_DRAW, &p, &len))
		term_feed(t, p, len);
	term_settle(t, INT64_MAX);
	t->capture = NULL;
	free(drop.p);
	/* a resize may have pushed lines: the saved ones are the lines */
	term_clear_scrollback(t);
	t->title = state_get_str(o, K_TITLE);
	if (state_get(o, K_SB, &p, &len))
		restore_sb(t, p, len);
	/* plain text printed after what is drawn (it scrolls lines on) */
	if (state_get(o, K_HELD, &p, &len))
		term_feed(t, p, len);
	t->skipped += state_get_u64(o, K_SKIPPED, 0);
	return t;
}
