/*
 * vtskip.c - the escape scanner and the cut of plain text of vtskip.h.
 * The scanner's states and transitions are libvterm 0.1.4's parser's
 * (parser.c), so that its ground state is libvterm's; where they differ
 * the scanner is in a sequence while libvterm is not (SOS, PM and APC,
 * which libvterm takes as C1 controls followed by text), which only
 * makes fewer bytes skippable. What it tracks of the state is whether a
 * scroll region may be set: DECSTBM as state.c computes it, DECLRMM, and
 * RIS that resets both (DECSTR, CSI ! p, never reaches libvterm 0.1.4's
 * handler: '!' is not an intermediate it accepts). And whether the last
 * character libvterm printed is printable ASCII (of width 1 in any of its
 * character sets), which a REP may repeat: libvterm's REP advances by the
 * width of the last glyph of its last run of text, 0 before any and for
 * a lone combining character, -1 for a C1 code point in UTF-8; so after
 * anything but ASCII (a byte from 0x80), or none (the start, RIS), a REP
 * is not fed. And whether the last byte was a text 0xc2, whose next byte
 * must not make a C1 code point (of width -1: libvterm's cursor would go
 * left of the screen and write there). And (vtwide.c) how wide the last
 * character printed may be.
 */
#include <stdint.h>
#include <string.h>
#include "sessions/tty/vtskip.h"
#include "sessions/tty/vtwide.h"

#define ARG_BIG	 100000L /* larger: not checked exactly, margins assumed */
#define ARGS_MAX 16	 /* libvterm's CSI_ARGS_MAX */

void vtskip_init(struct vtskip *s, int cols, int rows)
{
	memset(s, 0, sizeof(*s));
	s->cols = cols;
	s->rows = rows;
	s->bottom = -1;
}

void vtskip_size(struct vtskip *s, int cols, int rows)
{
	s->cols = cols;
	s->rows = rows;
}

bool vtskip_margins(const struct vtskip *s)
{
	return s->tb_margins || s->lr_margins || s->shift;
}

/* Whether none of the 8 bytes at p is below 0x20, 0x7f, 0xc2 or 0xe3 (a
 * word at a time: text is most of what a terminal gets). */
static bool all_text(const char *p)
{
	const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
	uint64_t w, del, c2, e3;

	memcpy(&w, p, 8);
	del = w ^ (ones * 0x7f);
	c2 = w ^ (ones * 0xc2);
	e3 = w ^ (ones * 0xe3);
	return ((((w - ones * 0x20) & ~w) | ((del - ones) & ~del) |
		 ((c2 - ones) & ~c2) | ((e3 - ones) & ~e3)) &
		high) == 0;
}

/* Whether the 0xc2 at p[i] begins a character of U+00A0-U+00BF, whole
 * in p (no C1 code point, no 0xc2 left for a later byte). */
static bool c2_pair(const char *p, size_t i, size_t n)
{
	return i + 1 < n && (unsigned char)p[i + 1] >= 0xa0 &&
	       (unsigned char)p[i + 1] < 0xc0;
}

size_t vtskip_plain(const struct vtskip *s, const char *p, size_t n)
{
	struct vtskip m = *s; /* as it would be at p[i] */
	size_t i = 0;

	if (s->state != VTSKIP_GROUND || vtskip_margins(s) || s->c2)
		return 0;
	if (s->e3 && (i = vtwide_rest(s, p, n)) == 0)
		return 0;
	for (size_t k = 0; k < i; k++)
		vtwide_take(&m, (unsigned char)p[k]);
	while (i < n) {
		size_t end, len;

		for (; i + 8 <= n && all_text(p + i); i += 8)
			vtwide_word(&m, p + i);
		/* the word with a control in it (\r\n mostly), or the end */
		for (end = i + 8 < n ? i + 8 : n; i < end; i += len) {
			unsigned char c = (unsigned char)p[i];

			if (!vtskip_is_plain(c) ||
			    (c == 0xc2 && !c2_pair(p, i, n)) ||
			    (c == 0xe3 && !vtwide_held(&m, p, i, n)))
				return i;
			/* and its second (and third) byte */
			len = c == 0xc2 ? 2 :
			      c != 0xe3 ? 1 :
			      n - i > 2 ? 3 :
					  n - i;
			for (size_t k = i; k < i + len; k++)
				vtwide_take(&m, (unsigned char)p[k]);
		}
	}
	return n;
}

/* DECSTBM, as libvterm 0.1.4's state.c sets scrollregion_top/bottom:
 * margins unless the region is its default (0, -1). */
static void decstbm(struct vtskip *s)
{
	long top = s->arg[0] < 0 ? 1 : s->arg[0], bottom;

	if (s->big) {
		s->tb_margins = true;
		s->top = -1;
		return;
	}
	top -= 1;
	top = top < 0 ? 0 : top > s->rows ? s->rows : top;
	bottom = s->argc < 2 || s->arg[1] < 0 ? -1 : s->arg[1];
	if (top == 0 && bottom == s->rows)
		bottom = -1;
	else if (bottom > s->rows)
		bottom = s->rows;
	if ((bottom > -1 ? bottom : s->rows) <= top)
		top = 0, bottom = -1;
	s->tb_margins = !(top == 0 && bottom == -1);
	s->top = (int)top;
	s->bottom = (int)bottom;
}

/* A CSI's final byte: what libvterm's on_csi would do to the margins
 * (a leader other than one '?' or '>', or an intermediate, is another
 * sequence or none). */
static void csi(struct vtskip *s, unsigned char c)
{
	if (!s->leader && !s->intermed && c == 'r')
		decstbm(s);
	else if (s->qmark && !s->intermed && (c == 'h' || c == 'l') &&
		 (s->big || s->arg[0] == 69))
		s->lr_margins = c == 'h' || (s->big && s->lr_margins);
	s->state = VTSKIP_GROUND;
}

/* One argument byte (digit, ':' or ';'); false for any other. */
static bool csi_arg(struct vtskip *s, unsigned char c)
{
	long *a = s->argc < 2 ? &s->arg[s->argc] : NULL;

	if (c >= '0' && c <= '9') {
		if (a && *a < 0)
			*a = 0;
		if (a && *a <= ARG_BIG)
			*a = *a * 10 + (c - '0');
		if (a && *a > ARG_BIG)
			s->big = true;
		return true;
	}
	if (c != ':' && c != ';')
		return false;
	s->argc++;
	return true;
}

static void enter_csi(struct vtskip *s)
{
	s->state = VTSKIP_CSI_LEADER;
	s->leader = s->qmark = s->intermed = s->big = false;
	s->argc = 0;
	s->arg[0] = s->arg[1] = -1;
}

/* A byte after ESC (or after ESC in a string that is not ST). */
static void escape(struct vtskip *s, unsigned char c)
{
	/* libvterm takes DCS, CSI and OSC after intermediates too */
	if (c == 'P' || c == ']' ||
	    (!s->esc_intermed && (c == 'X' || c == '^' || c == '_'))) {
		s->sos = c != 'P' && c != ']';
		s->dcs = c == 'P';
		s->rq = s->rq_tail_n = s->rq_prev = 0;
		s->state = VTSKIP_STRING;
		return;
	}
	if (c == '[') {
		enter_csi(s);
		return;
	}
	if (c >= 0x20 && c <= 0x2f) {
		s->esc_intermed = true;
		return;
	}
	if ((c == 'N' || c == 'O') && !s->esc_intermed)
		s->shift = true; /* SS2, SS3 */
	if (c >= 0x30 && c < 0x7f) {
		if (c == 'c' && !s->esc_intermed) { /* RIS */
			s->tb_margins = s->lr_margins = s->shift = s->rep =
				false;
			s->top = 0;
			s->bottom = -1;
		}
		s->state = VTSKIP_GROUND;
	}
	/* else (from 0x80) libvterm stays in its escape state */
}

/* A byte of a CSI, from its leader on. */
static void csi_byte(struct vtskip *s, unsigned char c)
{
	if (s->state == VTSKIP_CSI_LEADER) {
		if (c >= 0x3c && c <= 0x3f) {
			s->qmark = !s->leader && c == '?';
			s->leader = true;
			return;
		}
		s->state = VTSKIP_CSI_ARGS;
	}
	if (s->state == VTSKIP_CSI_ARGS) {
		if (csi_arg(s, c))
			return;
		s->argc++;
		s->state = VTSKIP_CSI_INTERMED;
	}
	if (c >= 0x20 && c <= 0x2f)
		s->intermed = true;
	else if (c >= 0x40 && c <= 0x7e)
		csi(s, c);
	else
		s->state = VTSKIP_GROUND; /* an invalid CSI ends */
}

/* A byte of text (from 0x20, not 0x7f) that libvterm prints. */
static void text(struct vtskip *s, unsigned char c)
{
	s->rep = c < 0x7f;
	/* libvterm's decoder ignores 0xfe and 0xff: the 0xc2 waits on */
	s->c2 = c == 0xc2 || (s->c2 && c >= 0xfe);
	vtwide_text(s, c);
}

/* A byte of a string: where "$q" came in it, and what followed. */
static void request(struct vtskip *s, unsigned char c)
{
	if (s->rq_prev == '$' && c == 'q') {
		s->rq += s->rq < 2;
		s->rq_tail_n = 0;
	} else if (s->rq > 0) {
		if (s->rq_tail_n < 2)
			s->rq_tail[s->rq_tail_n] = c;
		s->rq_tail_n += s->rq_tail_n < 3;
	}
	s->rq_prev = c;
}

/* One byte, as libvterm's vterm_input_write takes it. */
static void step(struct vtskip *s, unsigned char c)
{
	if (c < 0x20 || c == 0x7f)
		s->glyph = 0; /* libvterm's run of text ends */
	if (c == 0x00 || c == 0x7f)
		return;
	if (c == 0x18 || c == 0x1a) {
		s->state = VTSKIP_GROUND;
		return;
	}
	if (c == 0x1b) {
		s->esc_intermed = false;
		s->state = s->state == VTSKIP_STRING ? VTSKIP_ESC_IN_STRING :
						       VTSKIP_ESC;
		return;
	}
	if (c == 0x07 && s->state == VTSKIP_STRING) {
		s->state = VTSKIP_GROUND;
		return;
	}
	if (c < 0x20)
		return; /* executed in any state, which it keeps */
	switch (s->state) {
	case VTSKIP_STRING:
		if (s->sos) /* libvterm prints it */
			text(s, c);
		request(s, c);
		return;
	case VTSKIP_GROUND:
		text(s, c);
		return;
	case VTSKIP_ESC_IN_STRING:
		if (c == '\\') {
			s->state = VTSKIP_GROUND;
			return;
		}
		s->state = VTSKIP_ESC;
		escape(s, c);
		return;
	case VTSKIP_ESC:
		escape(s, c);
		return;
	default:
		csi_byte(s, c);
	}
}

/* Whether c would end a CSI as a REP that libvterm may not survive. */
static bool bad_rep(const struct vtskip *s, unsigned char c)
{
	return c == 'b' && !s->rep && !s->leader && !s->intermed &&
	       (s->state == VTSKIP_CSI_LEADER || s->state == VTSKIP_CSI_ARGS ||
		s->state == VTSKIP_CSI_INTERMED);
}

/* Whether c, in an OSC or DCS, is a control (or NUL, DEL) that libvterm
 * 0.1.4 takes as a new start of the string's text: then at its ST (ESC
 * '\\') in the same write right after an ESC, or with the ESC at the end
 * of a write and the '\\' at the start of the next, it takes the text's
 * length for -1 and reads past the write. Safe: ESC, CAN and SUB, and
 * BEL that ends the string (not right after an ESC). */
static bool bad_string_control(const struct vtskip *s, unsigned char c)
{
	bool in = s->state == VTSKIP_STRING || s->state == VTSKIP_ESC_IN_STRING;

	return in && !s->sos &&
	       (c == 0x7f || (c < 0x20 && c != 0x1b && c != 0x18 && c != 0x1a &&
			      !(c == 0x07 && s->state == VTSKIP_STRING)));
}

/* Whether c ends a DCS (BEL, or '\\' after ESC) with a DECRQSS that
 * libvterm 0.1.4 may not answer right: it answers SGR, DECSTBM, DECSLRM,
 * DECSCUSR and DECSCA ("$q" then m, r, s, " q", "\"q"), one "$q" only. */
static bool bad_request(const struct vtskip *s, unsigned char c)
{
	const unsigned char *t = s->rq_tail;
	bool end = (s->state == VTSKIP_STRING && c == 0x07) ||
		   (s->state == VTSKIP_ESC_IN_STRING && c == '\\');

	if (!end || !s->dcs || s->rq == 0)
		return false;
	if (s->rq > 1)
		return true;
	if (s->rq_tail_n == 1)
		return t[0] != 'm' && t[0] != 'r' && t[0] != 's';
	return s->rq_tail_n != 2 || t[1] != 'q' || (t[0] != ' ' && t[0] != '"');
}

size_t vtskip_replace(const struct vtskip *s, const char *p, size_t n,
		      char *out, size_t *took)
{
	*took = 0;
	if (n == 0)
		return 0;
	if (vtwide_bad_at(s, p, 0, n)) { /* as vtskip_instead at its end */
		size_t k = p[0] == (char)0xe3; /* else the 0xe3 came before */

		out[0] = p[0];
		out[1] = p[1];
		out[k + 1] = vtwide_instead((unsigned char)p[k],
					    (unsigned char)p[k + 1]);
		*took = k + 2;
		return k + 2;
	}
	if (!vtskip_unsafe(s, (unsigned char)p[0]))
		return 0;
	*took = 1;
	return vtskip_instead(s, (unsigned char)p[0], out);
}

bool vtskip_unsafe(const struct vtskip *s, unsigned char c)
{
	return (s->state == VTSKIP_CSI_ARGS && (c == ';' || c == ':') &&
		s->argc >= ARGS_MAX - 1) ||
	       bad_rep(s, c) || bad_string_control(s, c) || bad_request(s, c) ||
	       (s->c2 && c < 0xa0) || (s->e3 && c < 0x80) ||
	       vtwide_bad_end(s, c);
}

size_t vtskip_instead(const struct vtskip *s, unsigned char c, char *out)
{
	if (bad_rep(s, c) || bad_request(s, c)) {
		out[0] = 0x18;
		return 1;
	}
	if ((s->c2 || s->e3) && c < 0x80) {
		out[0] = (char)0xc3;
		out[1] = (char)c;
		return 2;
	}
	if (vtwide_bad_end(s, c)) {
		out[0] = vtwide_instead(s->e3 == 3 ? 0x82 : 0x80, c);
		return 1;
	}
	return 0;
}

void vtskip_text(struct vtskip *s, const char *p, size_t n)
{
	size_t last = n, from = n;

	/* from its last printable ASCII (which leaves libvterm's decoder
	 * clean), as the scan would take it */
	while (from > 0 && ((unsigned char)p[from - 1] < 0x20 ||
			    (unsigned char)p[from - 1] >= 0x7f))
		from--;
	for (from = from > 0 ? from - 1 : 0; from < n; from++)
		vtwide_take(s, (unsigned char)p[from]);
	/* its last byte that is printed (controls are not) */
	while (last > 0 &&
	       ((unsigned char)p[last - 1] < 0x20 || p[last - 1] == 0x7f))
		last--;
	if (last > 0) {
		s->rep = (unsigned char)p[last - 1] < 0x7f;
		s->c2 = p[last - 1] == (char)0xc2 ||
			(s->c2 && (unsigned char)p[last - 1] >= 0xfe);
	}
}

/* Where the ground state's run from p[i] ends: at an ESC (the only byte
 * that changes the state), a 0xc2 or a 0xe3 (whose next bytes are
 * checked). */
static size_t ground_end(const char *p, size_t i, size_t n)
{
	const char *esc = memchr(p + i, 0x1b, n - i);
	size_t end = esc ? (size_t)(esc - p) : n;
	const char *c2 = memchr(p + i, 0xc2, end - i);
	const char *e3;

	end = c2 ? (size_t)(c2 - p) : end;
	e3 = memchr(p + i, 0xe3, end - i);
	return e3 ? (size_t)(e3 - p) : end;
}

bool vtskip_alt_next(const struct vtskip *s, unsigned char c)
{
	return c == 'h' && s->state == VTSKIP_CSI_ARGS && s->qmark && !s->big &&
	       (s->arg[0] == 47 || s->arg[0] == 1047 || s->arg[0] == 1049 ||
		s->arg[1] == 47 || s->arg[1] == 1047 || s->arg[1] == 1049);
}

size_t vtskip_scan(struct vtskip *s, const char *p, size_t n, bool stop)
{
	size_t i = 0;

	while (i < n) {
		if (vtskip_unsafe(s, (unsigned char)p[i]) ||
		    vtwide_bad_at(s, p, i, n) ||
		    (i > 0 && vtskip_alt_next(s, (unsigned char)p[i])))
			return i;
		/* in the ground state only ESC changes the state */
		if (s->state == VTSKIP_GROUND && !s->c2 && !s->e3 &&
		    (!stop || vtskip_margins(s))) {
			size_t end = ground_end(p, i, n);

			vtskip_text(s, p + i, end - i);
			if (end == n)
				return n;
			if (end > i) { /* and the byte there is checked */
				i = end;
				continue;
			}
		} else if (stop && i > 0 && vtskip_plain(s, p + i, 1)) {
			return i;
		}
		step(s, (unsigned char)p[i++]);
	}
	return n;
}

static bool printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* The position of the newline that is the count-th before end (count
 * from 1), or -1 when p has fewer. */
static long nth_newline_back(const char *p, long end, size_t count)
{
	const char *q = p + end;

	while (count > 0) {
		q = q > p ? memrchr(p, '\n', (size_t)(q - p)) : NULL;
		if (!q)
			return -1;
		count--;
	}
	return q - p;
}

static bool control(unsigned char c)
{
	return c < 0x20;
}

/* At the newline at i: a run of text of printable ASCII only (from a
 * control or p's start), "\r\n" and a printable byte. libvterm 0.1.4
 * decodes a run that begins with ASCII with G0's decoder (UTF-8 too,
 * with its own state), which such a run leaves clean. */
static bool sync_at(const char *p, size_t n, long i)
{
	long j = i - 2;

	if (i < 2 || p[i - 1] != '\r' || (size_t)i + 1 >= n ||
	    !printable((unsigned char)p[i + 1]))
		return false;
	while (j >= 0 && printable((unsigned char)p[j]))
		j--;
	return j < i - 2 && (j < 0 || control((unsigned char)p[j]));
}

/* Whether p[from, to) has text that libvterm 0.1.4 may decode with its
 * second UTF-8 decoder (a byte from 0x80 after a control or ASCII: G0's
 * decoder, when G0 is a table, stops there), whose state a drop would
 * change unless it drops none or the kept text cleans it in both feeds
 * before the sync point. */
static bool other_text(const char *p, long from, long to)
{
	for (long i = from; i < to; i++)
		if ((unsigned char)p[i] >= 0x80 &&
		    (i == from || (unsigned char)p[i - 1] < 0x80))
			return true;
	return false;
}

/* Whether p[from, to) has a run of text that cleans that decoder: from a
 * control, a byte that begins a character, to ASCII before a control. */
static bool cleaning_run(const char *p, long from, long to)
{
	for (long i = from; i < to; i++) {
		unsigned char c = (unsigned char)p[i];
		long e = i;

		if (c < 0xc0 || c >= 0xfe ||
		    (i > from && !control((unsigned char)p[i - 1])))
			continue;
		while (e + 1 < to && !control((unsigned char)p[e + 1]))
			e++;
		if (e + 1 < to && printable((unsigned char)p[e]))
			return true;
	}
	return false;
}

size_t vtskip_cut(const char *p, size_t n, int rows, size_t sb_max)
{
	long s = nth_newline_back(p, (long)n, (size_t)rows + sb_max + 1), c;

	/* the latest sync point that many newlines before the end */
	while (s >= 0 && !sync_at(p, n, s))
		s = nth_newline_back(p, s, 1);
	if (s < 0)
		return 0;
	/* rows newlines before it, the latest "\r\n" */
	c = nth_newline_back(p, s, (size_t)rows + 1);
	while (c >= 0 && !(c >= 1 && p[c - 1] == '\r'))
		c = nth_newline_back(p, c, 1);
	if (c < 0)
		return 0;
	if (other_text(p, 0, c + 1) && !cleaning_run(p, c + 1, s))
		return 0;
	return (size_t)c + 1;
}
