/*
 * termstate.c - a screen saved by an upgrade in place and made again in
 * the next program (term_save, term_restore in term.h).
 *
 * How: libvterm 0.1.4 has no way to save its state, and replaying the
 * output kept so far is neither bounded (a spool keeps up to
 * max_output_bytes, 4 GiB by default) nor exact once a spool was cut.
 * So what is saved is a drawing: bytes that, fed to a fresh screen of
 * the same size, put every cell back (its characters, width, attributes
 * and colours; an erased cell with its pen, by ECH), then the pen, the
 * scroll region, the modes the keys depend on (cursor keys, keypad,
 * newline, bracketed paste, read by asking libvterm what a key would
 * send), the cursor's place and visibility, with the alternate screen
 * on if it was. It is some 40 bytes a cell at most (TTY_AREA_MAX cells),
 * and it is fed like any output (vtskip.h keeps libvterm safe from
 * crafted bytes). The scrolled-off lines and the title are ours, and
 * saved as they are. Lost: the main screen under the alternate one
 * (libvterm shows only the screen in use: once the program leaves the
 * alternate screen, the main one is blank), the cursor saved by DECSC,
 * the character sets, a wrap pending at the last column, double-width
 * lines, and a sequence the program was in the middle of printing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/state.h"
#include "sessions/tty/termint.h"

enum { K_DRAW = 1, K_TITLE, K_SB, K_SKIPPED };

#define SGR_MAX 96 /* the longest sgr() writes */

/* The SGR sequences that set a pen from its reset: attributes, then
 * colours (two sequences: libvterm takes 16 arguments at most). */
static void sgr(const VTermScreenCellAttrs *a, const VTermColor *fg,
		const VTermColor *bg, char *out)
{
	static const char *const ul[] = { "", ";4", ";21", ";4:3" };
	const VTermColor *col[2] = { fg, bg };
	int n = snprintf(out, SGR_MAX, "\033[0%s%s%s%s%s%s", a->bold ? ";1" : "",
			 ul[a->underline & 3], a->italic ? ";3" : "",
			 a->blink ? ";5" : "", a->reverse ? ";7" : "",
			 a->strike ? ";9" : "");

	if (a->font)
		n += snprintf(out + n, SGR_MAX - (size_t)n, ";%u", 10 + a->font);
	n += snprintf(out + n, SGR_MAX - (size_t)n, "m");
	for (int i = 0; i < 2; i++) {
		const VTermColor *c = col[i];

		if (c->type & (i ? VTERM_COLOR_DEFAULT_BG : VTERM_COLOR_DEFAULT_FG))
			continue;
		if (VTERM_COLOR_IS_INDEXED(c))
			n += snprintf(out + n, SGR_MAX - (size_t)n,
				      "\033[%d;5;%dm", i ? 48 : 38,
				      c->indexed.idx);
		else
			n += snprintf(out + n, SGR_MAX - (size_t)n,
				      "\033[%d;2;%d;%d;%dm", i ? 48 : 38,
				      c->rgb.red, c->rgb.green, c->rgb.blue);
	}
}

/* The characters of a cell, a blank for an erased one. */
static size_t cell_text(const VTermScreenCell *c, char *out)
{
	size_t n = 0;

	for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && c->chars[i] &&
			c->chars[i] != (uint32_t)-1;
	     i++)
		n += term_put_utf8(out + n, c->chars[i]);
	if (n == 0)
		out[n++] = ' ';
	return n;
}

/* Draws row's cells: a cursor move before a cell that does not follow
 * the last one drawn, a pen only when it changes (last). An erased cell
 * of the reset pen is left as the fresh screen has it. */
static void draw_row(struct term *t, struct strbuf *d, int row, char *last)
{
	static const char reset[] = "\033[0m";
	char pen[SGR_MAX], text[VTERM_MAX_CHARS_PER_CELL * 4 + 1];
	bool at = false; /* the cursor is where the cell goes */

	for (int col = 0; col < t->cols; col++) {
		VTermScreenCell c;

		if (!vterm_screen_get_cell(t->scr, (VTermPos){ row, col }, &c) ||
		    c.chars[0] == (uint32_t)-1) {
			at = false;
			continue;
		}
		sgr(&c.attrs, &c.fg, &c.bg, pen);
		if (c.chars[0] == 0 && strcmp(pen, reset) == 0) {
			at = false;
			continue;
		}
		if (!at)
			sb_addf(d, "\033[%d;%dH", row + 1, col + 1);
		if (strcmp(pen, last) != 0)
			sb_addf(d, "%s", pen);
		strcpy(last, pen);
		if (c.chars[0] == 0) { /* erased with this pen: ECH */
			sb_add(d, "\033[X", 3);
			at = false;
			continue;
		}
		sb_add(d, text, cell_text(&c, text));
		at = true;
		col += c.width == 2; /* its second half */
	}
}

/* Whether libvterm sends want for key k now: the modes of the keys are
 * not readable otherwise, and a key changes none of its state. */
static bool sends(struct term *t, VTermKey k, const char *want)
{
	struct strbuf got = { 0 };
	bool same;

	t->capture = &got;
	if (k == VTERM_KEY_NONE)
		vterm_keyboard_start_paste(t->vt);
	else
		vterm_keyboard_key(t->vt, k, VTERM_MOD_NONE);
	t->capture = NULL;
	same = got.len == strlen(want) && memcmp(got.p, want, got.len) == 0;
	free(got.p);
	return same;
}

/* The pen that the program's next characters get. */
static void draw_pen(struct term *t, struct strbuf *d)
{
	VTermState *st = vterm_obtain_state(t->vt);
	VTermScreenCellAttrs a = { 0 };
	VTermValue v = { 0 };
	VTermColor fg, bg;
	char pen[SGR_MAX];

	a.bold = vterm_state_get_penattr(st, VTERM_ATTR_BOLD, &v) && v.boolean;
	if (vterm_state_get_penattr(st, VTERM_ATTR_UNDERLINE, &v))
		a.underline = (unsigned)v.number & 3;
	a.italic = vterm_state_get_penattr(st, VTERM_ATTR_ITALIC, &v) &&
		   v.boolean;
	a.blink = vterm_state_get_penattr(st, VTERM_ATTR_BLINK, &v) &&
		  v.boolean;
	a.reverse = vterm_state_get_penattr(st, VTERM_ATTR_REVERSE, &v) &&
		    v.boolean;
	a.strike = vterm_state_get_penattr(st, VTERM_ATTR_STRIKE, &v) &&
		   v.boolean;
	if (vterm_state_get_penattr(st, VTERM_ATTR_FONT, &v))
		a.font = (unsigned)v.number & 15;
	vterm_state_get_penattr(st, VTERM_ATTR_FOREGROUND, &v);
	fg = v.color;
	vterm_state_get_penattr(st, VTERM_ATTR_BACKGROUND, &v);
	bg = v.color;
	sgr(&a, &fg, &bg, pen);
	sb_addf(d, "%s", pen);
}

/* The drawing of t (see the top of this file). */
static void draw(struct term *t, struct strbuf *d)
{
	char last[SGR_MAX] = "\033[0m";
	VTermPos pos;

	if (t->altscreen)
		sb_addf(d, "\033[?1049h");
	for (int row = 0; row < t->rows; row++)
		draw_row(t, d, row, last);
	draw_pen(t, d);
	if (t->scan.tb_margins && t->scan.top >= 0)
		sb_addf(d, "\033[%d;%dr", t->scan.top + 1,
			t->scan.bottom < 0 ? t->rows : t->scan.bottom);
	if (sends(t, VTERM_KEY_UP, "\033OA"))
		sb_addf(d, "\033[?1h");
	if (sends(t, VTERM_KEY_KP_0, "\033Op"))
		sb_addf(d, "\033=");
	if (sends(t, VTERM_KEY_ENTER, "\r\n"))
		sb_addf(d, "\033[20h");
	if (sends(t, VTERM_KEY_NONE, "\033[200~"))
		sb_addf(d, "\033[?2004h");
	vterm_state_get_cursorpos(vterm_obtain_state(t->vt), &pos);
	sb_addf(d, "\033[%d;%dH%s", pos.row + 1, pos.col + 1,
		t->hidden ? "\033[?25l" : "");
}

void term_save(struct term *t, struct state_w *w)
{
	struct strbuf d = { 0 }, sb = { 0 };

	term_settle(t, INT64_MAX);
	draw(t, &d);
	sb_add(&sb, "", 0);
	for (size_t i = 0; i < t->sb_n; i++)
		sb_addf(&sb, "%s\n", t->sb[(t->sb_first + i) % t->sb_max]);
	if ((d.err || sb.err) && !w->err)
		w->err = d.err ? d.err : sb.err; /* the upgrade is refused */
	state_put(w, K_DRAW, d.p, d.len);
	state_put_str(w, K_TITLE, t->title);
	state_put(w, K_SB, sb.p, sb.len);
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
	if (state_get(o, K_DRAW, &p, &len))
		term_feed(t, p, len);
	term_settle(t, INT64_MAX);
	t->capture = NULL;
	free(drop.p);
	t->title = state_get_str(o, K_TITLE);
	if (state_get(o, K_SB, &p, &len))
		restore_sb(t, p, len);
	t->skipped = state_get_u64(o, K_SKIPPED, 0);
	return t;
}
