/*
 * termdraw.c - a drawing of a screen (termint.h): the bytes that, fed to
 * a fresh screen of the same size, make it again (termstate.c says what
 * they hold and what they cannot). Read from libvterm only, sent to the
 * program never (what a key would send is captured).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/tty/termint.h"

#define SGR_MAX 96 /* the longest sgr() writes */

/* The SGR sequences that set a pen from its reset: attributes, then
 * colours (two sequences: libvterm takes 16 arguments at most). */
static void sgr(const VTermScreenCellAttrs *a, const VTermColor *fg,
		const VTermColor *bg, char *out)
{
	static const char *const ul[] = { "", ";4", ";21", ";4:3" };
	const VTermColor *col[2] = { fg, bg };
	int n = snprintf(out, SGR_MAX, "\033[0%s%s%s%s%s%s",
			 a->bold ? ";1" : "", ul[a->underline & 3],
			 a->italic ? ";3" : "", a->blink ? ";5" : "",
			 a->reverse ? ";7" : "", a->strike ? ";9" : "");

	if (a->font)
		n += snprintf(out + n, SGR_MAX - (size_t)n, ";%u",
			      10 + a->font);
	n += snprintf(out + n, SGR_MAX - (size_t)n, "m");
	for (int i = 0; i < 2; i++) {
		const VTermColor *c = col[i];

		if (c->type &
		    (i ? VTERM_COLOR_DEFAULT_BG : VTERM_COLOR_DEFAULT_FG))
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

static const char reset_pen[] = "\033[0m";

/* Draws cell c at row, col: a cursor move first unless *at (the cursor
 * is there), its pen unless it is last's. An erased cell of the reset
 * pen is left as the fresh screen has it; another erased one is erased
 * with its pen (ECH), with the n - 1 after it. */
static void put_cell(struct strbuf *d, int row, int col,
		     const VTermScreenCell *c, int n, char *last, bool *at)
{
	char pen[SGR_MAX], text[VTERM_MAX_CHARS_PER_CELL * 4 + 1];

	sgr(&c->attrs, &c->fg, &c->bg, pen);
	if (c->chars[0] == 0 && strcmp(pen, reset_pen) == 0) {
		*at = false;
		return;
	}
	if (!*at)
		sb_addf(d, "\033[%d;%dH", row + 1, col + 1);
	if (strcmp(pen, last) != 0)
		sb_addf(d, "%s", pen);
	strcpy(last, pen);
	if (c->chars[0] == 0) {
		sb_addf(d, "\033[%dX", n);
		*at = false;
		return;
	}
	sb_add(d, text, cell_text(c, text));
	*at = true;
}

/* Whether two cells have the same pen. */
static bool same_pen(const VTermScreenCell *a, const VTermScreenCell *b)
{
	return memcmp(&a->attrs, &b->attrs, sizeof(a->attrs)) == 0 &&
	       vterm_color_is_equal(&a->fg, &b->fg) &&
	       vterm_color_is_equal(&a->bg, &b->bg);
}

/* How many erased cells of c's pen are at col of row and after it. */
static int erased_run(struct term *t, int row, int col,
		      const VTermScreenCell *c)
{
	int n = 1;
	VTermScreenCell x = { 0 };

	while (c->chars[0] == 0 && col + n < t->cols &&
	       vterm_screen_get_cell(t->scr, (VTermPos){ row, col + n }, &x) &&
	       x.chars[0] == 0 && same_pen(c, &x))
		n++;
	return n;
}

/* Draws row's cells (last: the pen drawn last). A wide character's
 * second half keeps the pen it had (libvterm prints over its characters
 * only): it is erased with that pen before the character is drawn. */
static void draw_row(struct term *t, struct strbuf *d, int row, char *last)
{
	bool at = false;

	for (int col = 0; col < t->cols; col++) {
		/* libvterm leaves the chars after the last unset */
		VTermScreenCell c = { 0 }, half = { 0 };
		int n;

		if (!vterm_screen_get_cell(t->scr, (VTermPos){ row, col },
					   &c) ||
		    c.chars[0] == (uint32_t)-1) {
			at = false;
			continue;
		}
		if (c.width == 2 && col + 1 < t->cols &&
		    vterm_screen_get_cell(t->scr, (VTermPos){ row, col + 1 },
					  &half)) {
			half.chars[0] = 0;
			at = false;
			put_cell(d, row, col + 1, &half, 1, last, &at);
		}
		n = erased_run(t, row, col, &c);
		put_cell(d, row, col, &c, n, last, &at);
		col += c.width == 2 ? 1 : n - 1;
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
	a.italic =
		vterm_state_get_penattr(st, VTERM_ATTR_ITALIC, &v) && v.boolean;
	a.blink =
		vterm_state_get_penattr(st, VTERM_ATTR_BLINK, &v) && v.boolean;
	a.reverse = vterm_state_get_penattr(st, VTERM_ATTR_REVERSE, &v) &&
		    v.boolean;
	a.strike =
		vterm_state_get_penattr(st, VTERM_ATTR_STRIKE, &v) && v.boolean;
	if (vterm_state_get_penattr(st, VTERM_ATTR_FONT, &v))
		a.font = (unsigned)v.number & 15;
	vterm_state_get_penattr(st, VTERM_ATTR_FOREGROUND, &v);
	fg = v.color;
	vterm_state_get_penattr(st, VTERM_ATTR_BACKGROUND, &v);
	bg = v.color;
	sgr(&a, &fg, &bg, pen);
	sb_addf(d, "%s", pen);
}

/* The drawing of the screen in use: its cells, the pen, the scroll
 * region, the cursor. */
static void draw_screen(struct term *t, struct strbuf *d)
{
	char last[SGR_MAX] = "\033[0m";
	VTermPos pos;

	for (int row = 0; row < t->rows; row++)
		draw_row(t, d, row, last);
	draw_pen(t, d);
	/* each of these set, as another drawing may come before */
	if (t->scan.tb_margins && t->scan.top >= 0)
		sb_addf(d, "\033[%d;%dr", t->scan.top + 1,
			t->scan.bottom < 0 ? t->rows : t->scan.bottom);
	else
		sb_addf(d, "\033[r");
	vterm_state_get_cursorpos(vterm_obtain_state(t->vt), &pos);
	sb_addf(d, "\033[%d;%dH\033[?25%c", pos.row + 1, pos.col + 1,
		t->hidden ? 'l' : 'h');
}

void term_draw(struct term *t, struct strbuf *d)
{
	/* the alternate screen comes on erased with the main one's pen */
	sb_addf(d, "\033[0m\033[2J");
	draw_screen(t, d);
	if (sends(t, VTERM_KEY_UP, "\033OA"))
		sb_addf(d, "\033[?1h");
	if (sends(t, VTERM_KEY_KP_0, "\033Op"))
		sb_addf(d, "\033=");
	if (sends(t, VTERM_KEY_ENTER, "\r\n"))
		sb_addf(d, "\033[20h");
	if (sends(t, VTERM_KEY_NONE, "\033[200~"))
		sb_addf(d, "\033[?2004h");
}

void term_keep_main(struct term *t)
{
	t->main.len = 0;
	t->main.err = 0;
	draw_screen(t, &t->main);
	t->main_cols = t->cols;
	t->main_rows = t->rows;
}
