/*
 * term.c - a terminal's screen, scrollback, cursor and title, kept by
 * libvterm (no emulator of our own): vterm_input_write of what the PTY
 * printed, vterm_screen_get_text per row, sb_pushline into a bounded ring
 * of lines, settermprop for the title, the cursor's visibility and the
 * alternate screen; libvterm's output (answers to queries, encoded keys)
 * goes back to the PTY through the caller's function.
 *
 * Plain text that scrolls past the bound of the scrolled-off lines is
 * never seen: it is held (vtskip.h says which bytes are plain, and where
 * the held text may be cut) instead of fed, its front dropped as more
 * comes, and fed before anything else is, before a resize and before
 * any read of the screen, so that what is read is exactly what feeding
 * every byte would give. What libvterm 0.1.4 would not survive is not fed,
 * or replaced (vtskip.h): a CSI's separators past the 15th, a REP not
 * after ASCII, a C1 code point, a control in a string, a too wide mark. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vterm.h>
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "sessions/tty/termint.h"
#include "sessions/tty/vtskip.h"
#include "sessions/tty/vtsize.h"

static uint64_t versions; /* the latest version of any screen */

static size_t trim(const char *p, size_t n)
{
	while (n && p[n - 1] == ' ')
		n--;
	return n;
}

void term_sb_push(struct term *t, char *line)
{
	if (t->sb_n == t->sb_max) {
		free(t->sb[t->sb_first]);
		t->sb_first = (t->sb_first + 1) % t->sb_max;
		t->sb_n--;
	}
	t->sb[(t->sb_first + t->sb_n++) % t->sb_max] = line;
}

/* A line that scrolled off the top: its text goes into the ring. */
static int sb_pushline(int cols, const VTermScreenCell *cells, void *user)
{
	struct term *t = user;
	size_t n = 0;
	char *buf, *copy;

	if (t->sb_max == 0)
		return 1;
	buf = malloc((size_t)cols * VTERM_MAX_CHARS_PER_CELL * 4 + 1);
	if (!buf)
		return 0;
	for (int c = 0; c < cols; c++) {
		const VTermScreenCell *cell = &cells[c];

		if (cell->chars[0] == 0)
			buf[n++] = ' ';
		for (int i = 0;
		     i < VTERM_MAX_CHARS_PER_CELL && cell->chars[i] &&
		     cell->chars[i] != (uint32_t)-1;
		     i++)
			n += term_put_utf8(buf + n, cell->chars[i]);
		if (cell->width == 2)
			c++; /* the wide character's second half */
	}
	n = trim(buf, n);
	copy = realloc(buf, n + 1);
	copy = copy ? copy : buf;
	copy[n] = '\0';
	term_sb_push(t, copy);
	return 1;
}

static void sb_clear(struct term *t)
{
	for (size_t i = 0; i < t->sb_n; i++)
		free(t->sb[(t->sb_first + i) % t->sb_max]);
	t->sb_first = t->sb_n = 0;
}

static int settermprop(VTermProp prop, VTermValue *val, void *user)
{
	struct term *t = user;
	char *s;

	if (prop == VTERM_PROP_TITLE && val->string) {
		s = strdup(val->string);
		if (s) {
			free(t->title);
			t->title = s;
		}
	} else if (prop == VTERM_PROP_ALTSCREEN) {
		t->altscreen = val->boolean;
		if (!t->altscreen) { /* the main screen is shown again */
			free(t->main.p);
			t->main = (struct strbuf){ 0 };
		}
	} else if (prop == VTERM_PROP_CURSORVISIBLE) {
		t->hidden = !val->boolean;
	}
	return 1;
}

static const VTermScreenCallbacks callbacks = {
	.settermprop = settermprop,
	.sb_pushline = sb_pushline,
};

static void on_output(const char *s, size_t len, void *user)
{
	struct term *t = user;

	if (t->capture)
		sb_add(t->capture, s, len);
	else
		t->out(t->arg, s, len);
}

struct term *term_new(int cols, int rows, size_t sb_max, term_out_fn *out,
		      void *arg)
{
	struct term *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cols = cols;
	t->rows = rows;
	t->version = ++versions;
	t->out = out;
	t->arg = arg;
	t->sb_max = sb_max;
	t->vt = vterm_new(rows, cols);
	t->sb = sb_max ? calloc(sb_max, sizeof(*t->sb)) : NULL;
	t->line = malloc((size_t)cols * VTERM_MAX_CHARS_PER_CELL * 4 + 1);
	if (!t->vt || (sb_max && !t->sb) || !t->line) {
		term_free(t);
		return NULL;
	}
	vterm_set_utf8(t->vt, 1);
	vterm_output_set_callback(t->vt, on_output, t);
	t->scr = vterm_obtain_screen(t->vt);
	vterm_screen_set_callbacks(t->scr, &callbacks, t);
	vterm_screen_enable_altscreen(t->scr, 1);
	vterm_screen_reset(t->scr, 1);
	vtskip_init(&t->scan, cols, rows);
	t->skip = true;
	return t;
}

void term_free(struct term *t)
{
	if (!t)
		return;
	if (t->vt)
		vterm_free(t->vt);
	sb_clear(t);
	free(t->sb);
	free(t->title);
	free(t->line);
	free(t->held);
	free(t->main.p);
	free(t);
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

size_t term_piece(const struct term *t)
{
	size_t n = 32000 / ((size_t)t->cols * (size_t)t->rows);

	return n < 1 ? 1 : n > 16 ? 16 : n;
}

static size_t count_nl(const char *p, size_t n)
{
	const char *end = p + n;
	size_t c = 0;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		c++;
		p++;
	}
	return c;
}

/* Drops the front of the held text that can never be seen (vtskip_cut)
 * once it holds a quarter more newlines than a cut needs after it (K);
 * what is left is fed after a "\r" (the column where the dropped "\r\n"
 * left the cursor), in the place of the cut's '\n'. */
static void cut(struct term *t)
{
	size_t k = 2 * (size_t)t->rows + t->sb_max + 2, at;
	char *p = t->held + t->held_off;

	if (t->held_nl <= k + k / 4 || t->held_nl < t->next_cut)
		return;
	at = vtskip_cut(p, t->held_len, t->rows, t->sb_max);
	if (at < 2) {
		t->next_cut = t->held_nl + k; /* none: not before k more */
		return;
	}
	at--;
	t->held_nl -= count_nl(p, at + 1);
	p[at] = '\r';
	t->held_off += at;
	t->held_len -= at;
	t->skipped += at;
	t->next_cut = 0;
}

/* Appends plain text to the held text (and cuts it); false on ENOMEM. */
static bool hold(struct term *t, const char *buf, size_t n)
{
	size_t need = t->held_len + n, cap = t->held_cap;
	char *p;

	if (t->held_off + need > cap && t->held_off > 0) {
		memmove(t->held, t->held + t->held_off, t->held_len);
		t->held_off = 0;
	}
	if (need > cap / 2) { /* a move frees half of it at least */
		for (cap = cap ? cap : 65536; cap / 2 < need; cap *= 2)
			;
		p = realloc(t->held, cap);
		if (!p)
			return false;
		t->held = p;
		t->held_cap = cap;
	}
	memcpy(t->held + t->held_off + t->held_len, buf, n);
	t->held_len = need;
	t->held_nl += count_nl(buf, n);
	for (p = (char *)buf + n; p > buf && (unsigned char)p[-1] >= 0x20;)
		p--;
	t->held_run = p > buf ? (size_t)(buf + n - p) : t->held_run + n;
	cut(t);
	return true;
}

/* What of the held text may be fed: all, or (not all) up to its last
 * control. libvterm 0.1.4 decodes a run of text with one of two UTF-8
 * decoders, picked by the run's first byte in the write, and what a cut
 * character began stays in that one: its screen may change with where
 * writes cut a run of text (that a read of the screen cuts, as a read of
 * the PTY does), never with a cut after a control. */
static size_t feedable(const struct term *t, bool all)
{
	return all ? t->held_len : t->held_len - t->held_run;
}

/* Feeds the front of the held text: term_piece lines, PIECE_MAX bytes at
 * most (it holds no escape, whose cut libvterm might not take), up to
 * feedable. */
static void feed_held(struct term *t, bool all)
{
	const char *p = t->held + t->held_off, *end = p + feedable(t, all),
		   *q = p;
	size_t n;

	for (size_t i = term_piece(t); i > 0 && q && q < end; i--) {
		q = memchr(q, '\n', (size_t)(end - q));
		q = q ? q + 1 : NULL;
	}
	n = q ? (size_t)(q - p) : (size_t)(end - p);
	if (n > PIECE_MAX) { /* after a control, or not inside a character */
		size_t c = PIECE_MAX;

		while (c > 0 && (unsigned char)p[c - 1] >= 0x20)
			c--;
		for (n = PIECE_MAX;
		     c == 0 && n > PIECE_MAX - 6 && (p[n] & 0xc0) == 0x80;)
			n--;
		n = c ? c : n;
	}
	vterm_input_write(t->vt, p, n);
	t->held_nl -= count_nl(p, n);
	t->held_off += n;
	t->held_len -= n;
	t->held_run = t->held_run < t->held_len ? t->held_run : t->held_len;
	if (t->held_len == 0)
		t->held_off = 0;
}

/* Whether plain text may be held: on, and its most (some K + K/4 lines
 * of K = 2 rows + sb_max + 2, see cut) is cheap enough to feed at once. */
static bool may_hold(const struct term *t)
{
	size_t k = 2 * (size_t)t->rows + t->sb_max + 2;

	return t->skip && (k + k / 4 + 1) * (size_t)t->cols * (size_t)t->rows <=
				  HOLD_CELLS;
}

/* Writes p (n bytes) to libvterm in one write with what is held before
 * it (a run of text after a control, at most), as one write of both. */
static void write_after_held(struct term *t, const char *p, size_t n)
{
	char *both = t->held_len ? malloc(t->held_len + n) : NULL;

	if (both) {
		memcpy(both, t->held + t->held_off, t->held_len);
		memcpy(both + t->held_len, p, n);
		vterm_input_write(t->vt, both, t->held_len + n);
		free(both);
	} else {
		if (t->held_len) /* ENOMEM: the character may be lost */
			vterm_input_write(t->vt, t->held + t->held_off,
					  t->held_len);
		vterm_input_write(t->vt, p, n);
	}
	t->held_off = t->held_len = t->held_nl = t->held_run = 0;
}

/* Leaves out what begins p (n bytes) that libvterm would not survive
 * (vtskip_replace), feeds what goes instead; how much it left out. */
static size_t drop(struct term *t, const char *p, size_t n)
{
	char sub[3];
	size_t took, k = vtskip_replace(&t->scan, p, n, sub, &took);

	if (k > 0) {
		vtskip_scan(&t->scan, sub, k, false);
		write_after_held(t, sub, k);
	}
	return took;
}

size_t term_take(struct term *t, const char *buf, size_t len)
{
	size_t i = 0, n;

	t->version = ++versions;
	while (i < len) {
		n = may_hold(t) ? vtskip_plain(&t->scan, buf + i, len - i) : 0;
		if (n > 0 && t->held_len < HOLD_MAX && hold(t, buf + i, n)) {
			vtskip_text(&t->scan, buf + i, n);
			i += n;
			continue;
		}
		if (feedable(t, false) > 0) {
			feed_held(t, false); /* first, as much as a piece */
			return i;
		}
		if ((n = drop(t, buf + i, len - i)) > 0) {
			i += n;
			continue;
		}
		if (!t->altscreen &&
		    vtskip_alt_next(&t->scan, (unsigned char)buf[i]))
			term_keep_main(t); /* vtskip_scan stopped before */
		n = vtskip_scan(&t->scan, buf + i, len - i,
				n == 0 && may_hold(t));
		write_after_held(t, buf + i, n);
		i += n;
	}
	return len;
}

void term_feed(struct term *t, const char *buf, size_t len)
{
	for (size_t i = 0; i < len;)
		i += term_take(t, buf + i, len - i);
}

bool term_settle(struct term *t, int64_t until_us)
{
	while (feedable(t, true) > 0 && now_us() < until_us)
		feed_held(t, true);
	return feedable(t, true) == 0;
}

bool term_settled(const struct term *t)
{
	return feedable(t, true) == 0;
}

void term_skip(struct term *t, bool on)
{
	t->skip = on;
}

uint64_t term_skipped(const struct term *t)
{
	return t->skipped;
}

void term_resize(struct term *t, int cols, int rows)
{
	char *line = malloc((size_t)cols * VTERM_MAX_CHARS_PER_CELL * 4 + 1);
	char fix[VTSIZE_FIX_MAX];
	size_t n;

	if (!line)
		return;
	term_settle(t, INT64_MAX);
	/* a character cut by the resize ends while the cursor may print */
	term_feed(t, "\xc3", t->scan.c2 || t->scan.e3);
	vtskip_size(&t->scan, cols, rows);
	free(t->line);
	t->line = line;
	vterm_set_size(t->vt, rows, cols);
	n = vtsize_fix(&t->scan, t->vt, t->rows, fix);
	t->cols = cols;
	t->rows = rows;
	term_feed(t, fix, n); /* as if the program had printed it */
	t->version = ++versions;
}

uint64_t term_version(const struct term *t)
{
	return t->version;
}

/* Ctrl with a letter (or @[\]^_) is its control byte, as terminals send
 * it; libvterm would send C-i, C-j and C-m as CSI u sequences. */
static bool control_char(struct term *t, const struct keys_item *it)
{
	char b[2];
	int c = it->code;

	if (!(it->mod & VTERM_MOD_CTRL) || c < '@' || c > 'z' ||
	    (c > '_' && c < 'a'))
		return false;
	b[0] = '\033';
	b[1] = (char)(c & 0x1f);
	if (it->mod & VTERM_MOD_ALT)
		t->out(t->arg, b, 2);
	else
		t->out(t->arg, b + 1, 1);
	return true;
}

/* Any other character but Shift-Space: Shift makes a letter upper-case,
 * Alt is ESC before the character's UTF-8 (libvterm keeps the low byte
 * of a character after ESC and drops the Shift). */
static bool plain_char(struct term *t, const struct keys_item *it)
{
	char b[5] = "\033";
	uint32_t c = (uint32_t)it->code;
	size_t n;

	if ((it->mod & VTERM_MOD_CTRL) ||
	    (c == ' ' && (it->mod & VTERM_MOD_SHIFT)))
		return false;
	if ((it->mod & VTERM_MOD_SHIFT) && c >= 'a' && c <= 'z')
		c -= 'a' - 'A';
	n = term_put_utf8(b + 1, c);
	if (it->mod & VTERM_MOD_ALT)
		t->out(t->arg, b, n + 1);
	else
		t->out(t->arg, b + 1, n);
	return true;
}

void term_keys(struct term *t, const struct keys_seq *seq)
{
	for (size_t i = 0; i < seq->n; i++) {
		const struct keys_item *it = &seq->items[i];

		if (it->kind == KEYS_TEXT)
			t->out(t->arg, seq->text + it->off, it->len);
		else if (it->kind == KEYS_KEY)
			vterm_keyboard_key(t->vt, (VTermKey)it->code,
					   (VTermModifier)it->mod);
		else if (!control_char(t, it) && !plain_char(t, it))
			vterm_keyboard_unichar(t->vt, (uint32_t)it->code,
					       (VTermModifier)it->mod);
	}
}

/* Row row's text into t->line, trailing blanks trimmed; its length. */
static size_t row_text(struct term *t, int row)
{
	VTermRect r = { .start_row = row,
			.end_row = row + 1,
			.start_col = 0,
			.end_col = t->cols };
	size_t n = vterm_screen_get_text(
		t->scr, t->line, (size_t)t->cols * VTERM_MAX_CHARS_PER_CELL * 4,
		r);

	return trim(t->line, n);
}

char *term_screen(struct term *t, size_t *len)
{
	struct strbuf b = { 0 };

	term_settle(t, INT64_MAX);
	for (int row = 0; row < t->rows; row++) {
		sb_add(&b, t->line, row_text(t, row));
		sb_add(&b, "\n", 1);
	}
	return sb_take(&b, len);
}

char *term_scrollback(struct term *t, size_t *len)
{
	struct strbuf b = { 0 };

	term_settle(t, INT64_MAX);
	sb_add(&b, "", 0);
	for (size_t i = 0; i < t->sb_n; i++) {
		const char *l = t->sb[(t->sb_first + i) % t->sb_max];

		sb_add(&b, l, strlen(l));
		sb_add(&b, "\n", 1);
	}
	return sb_take(&b, len);
}

void term_clear_scrollback(struct term *t)
{
	term_settle(t, INT64_MAX);
	sb_clear(t);
}

char *term_match(struct term *t, const regex_t *re, size_t *len)
{
	struct strbuf b = { 0 };

	term_settle(t, INT64_MAX);
	for (int row = t->rows - 1; row >= 0; row--) {
		size_t n = row_text(t, row);

		t->line[n] = '\0';
		if (regexec(re, t->line, 0, NULL, 0) != 0)
			continue;
		sb_add(&b, t->line, n);
		sb_add(&b, "\n", 1);
		return sb_take(&b, len);
	}
	return NULL;
}

char *term_match_once(struct term *t, const regex_t *re, struct term_seen *seen,
		      int64_t *retry_ms)
{
	int64_t start = now_us(), end;
	char *line;

	*retry_ms = 0;
	if (t->version == seen->version)
		return NULL;
	if (start < seen->after_us) {
		*retry_ms = (seen->after_us + 999) / 1000;
		return NULL;
	}
	line = term_match(t, re, &(size_t){ 0 });
	end = now_us();
	seen->after_us = end + 9 * (end - start);
	if (!line)
		seen->version = t->version;
	return line;
}

void term_cursor(struct term *t, int *row, int *col, bool *visible)
{
	VTermPos pos;

	term_settle(t, INT64_MAX);
	vterm_state_get_cursorpos(vterm_obtain_state(t->vt), &pos);
	*row = pos.row + 1;
	*col = pos.col + 1;
	*visible = !t->hidden;
}

const char *term_title(const struct term *t)
{
	return t->title ? t->title : "";
}

bool term_altscreen(const struct term *t)
{
	return t->altscreen;
}
