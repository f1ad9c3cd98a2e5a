/* test_vtskip.c - what the screen may skip (vtskip.c): the escape
 * scanner's states across chunks, the margins it tracks, the cut of plain
 * text; and the proof of term.c's skipping: random streams fed with
 * skipping and without, in the same chunks, leave the same screen,
 * scrolled-off lines, cursor, title, alternate screen and answers. */
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "sessions/tty/vtskip.h"
#include "unit.h"

/* Scans s (in chunks of at most chunk bytes) from a fresh scanner. */
static void scan(struct vtskip *v, const char *s, size_t chunk)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		size_t c = n - i < chunk ? n - i : chunk;

		if (vtskip_unsafe(v, (unsigned char)s[i])) {
			char sub[2];
			size_t k = vtskip_instead(v, (unsigned char)s[i], sub);

			vtskip_scan(v, sub, k, false);
			i++; /* as term.c drops it */
		} else
			i += vtskip_scan(v, s + i, c, false);
	}
}

static bool margins_after(const char *s, int rows, size_t chunk)
{
	struct vtskip v;

	vtskip_init(&v, 80, rows);
	scan(&v, s, chunk);
	return vtskip_margins(&v);
}

START_TEST(plain_bytes)
{
	struct vtskip v;
	const char p[] = "ab c\r\n\t\xc3\xa9\xe4\xb8\xad\x85~";

	vtskip_init(&v, 80, 24);
	ck_assert_uint_eq(vtskip_plain(&v, p, sizeof(p) - 1), sizeof(p) - 1);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\033[m", 5), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\acd", 5), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\bcd", 5), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\x0e", 3), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "a\x7f", 2), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "a\0b", 3), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "a\x0b", 2), 1);
	/* in a sequence nothing is plain; the scan stops where text is */
	ck_assert_uint_eq(vtskip_scan(&v, "\033[1mabc", 7, true), 4);
	ck_assert_uint_eq(vtskip_plain(&v, "abc", 3), 3);
	ck_assert_uint_eq(vtskip_scan(&v, "\033[", 2, true), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "1m", 2), 0);
	ck_assert_uint_eq(vtskip_scan(&v, "1mx", 3, true), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "x", 1), 1);
	ck_assert_uint_eq(vtskip_scan(&v, "\a\bxy", 4, true), 2);
	/* a word at a time, then byte by byte */
	for (size_t at = 0; at < 40; at++) {
		static const char bad[] = "\033\a\b\x7f\x0e\x01";
		char buf[40];

		for (size_t k = 0; k < sizeof(bad) - 1; k++) {
			memset(buf, 'x', sizeof(buf));
			memcpy(buf + 10, "\r\n\t\xc3\xa9\xff", 6);
			buf[at] = bad[k];
			ck_assert_uint_eq(vtskip_plain(&v, buf, sizeof(buf)),
					  at);
			ck_assert_uint_eq(vtskip_plain(&v, buf, at), at);
		}
	}
}
END_TEST

/* A 0xc2 is plain only with a second byte of U+00A0-U+00BF after it in
 * the same text: 0x80-0x9f would make a C1 code point (width -1 to
 * libvterm), which the scan drops; after a lone one, nothing is plain
 * until the scan has the next byte. */
START_TEST(plain_c2)
{
	struct vtskip v;

	vtskip_init(&v, 80, 24);
	ck_assert_uint_eq(vtskip_plain(&v,
				       "a\xc2\xa9"
				       "b\xc2\xb0",
				       6),
			  6);
	ck_assert_uint_eq(vtskip_plain(&v, "abcdefgh\xc2\xa9\xc2", 11), 10);
	ck_assert_uint_eq(vtskip_plain(&v, "a\xc2\x85", 3), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "\xc2\r", 2), 0);
	ck_assert_uint_eq(vtskip_scan(&v, "\xc2", 1, true), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "\xa9", 1), 0);
	ck_assert(vtskip_unsafe(&v, 0x85));
	ck_assert(vtskip_unsafe(&v, '\r'));
	ck_assert(!vtskip_unsafe(&v, 0xa9));
	ck_assert_uint_eq(vtskip_scan(&v, "\xa9", 1, true), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "\x85", 1), 1);
}
END_TEST

START_TEST(states)
{
	static const char *const in_seq[] = {
		"\033",	      "\033(",	     "\033[",
		"\033[?",     "\033[12;",    "\033[1 ",
		"\033]0;r r", "\033P1$r",    "\033_r",
		"\033^r",     "\033Xr",	     "\033]0;a\033",
		"\033\xc3",   "\033[1\n",    "\033]0;a\n",
		"\033(\033P", "\033]0;\x9c", "\033]0;a\033\033[",
	};
	static const char *const ground[] = {
		"\033]0;r\a",	 "\033]0;r\033\\", "\033P1$r\033\\",
		"\033_ab\033\\", "\033[1\x18",	   "\033]0;a\x1a",
		"\033(0",	 "\033c",	   "\033[1m",
		"\033[1\xc3",	 "\033[1 q",	   "\033[1 0",
		"\033D",	 "\033#8",	   "\033]0;a\033X\033\\",
	};
	struct vtskip v;

	for (size_t i = 0; i < sizeof(in_seq) / sizeof(*in_seq); i++) {
		for (size_t chunk = 1; chunk < 4; chunk++) {
			vtskip_init(&v, 80, 24);
			scan(&v, in_seq[i], chunk);
			ck_assert_msg(vtskip_plain(&v, "r", 1) == 0, "%zu", i);
		}
	}
	for (size_t i = 0; i < sizeof(ground) / sizeof(*ground); i++) {
		for (size_t chunk = 1; chunk < 4; chunk++) {
			vtskip_init(&v, 80, 24);
			scan(&v, ground[i], chunk);
			ck_assert_msg(vtskip_plain(&v, "r", 1) == 1, "%zu", i);
			ck_assert(!vtskip_margins(&v));
		}
	}
}
END_TEST

START_TEST(margins)
{
	for (size_t c = 1; c < 5; c++) {
		ck_assert(margins_after("\033[2;10r", 24, c));
		ck_assert(margins_after("\033[2r", 24, c));
		ck_assert(margins_after("\033[;10r", 24, c));
		ck_assert(margins_after("\033[1;23r", 24, c));
		ck_assert(margins_after("\033[1;30r", 24, c)); /* bottom 24 */
		ck_assert(margins_after("\033[2:3;10r", 24, c));
		ck_assert(margins_after("\033[2\n;10r", 24, c));
		ck_assert(margins_after("\033]0;x\033[2;5r", 24, c));
		ck_assert(margins_after("\033[2;10r\033[!p", 24, c));
		ck_assert(margins_after("\033[?69h", 24, c));
		ck_assert(margins_after("\033[?69h\033[r", 24, c));
		ck_assert(margins_after("\033[99999999999;5r", 24, c));
		ck_assert(margins_after("\033[2;10r\033(c", 24, c));
		ck_assert(margins_after("\033N", 24, c)); /* SS2 */
		ck_assert(margins_after("\033O", 24, c)); /* SS3 */
		ck_assert(!margins_after("\033O\033c", 24, c));
		ck_assert(!margins_after("\033(O", 24, c));
		ck_assert(!margins_after("\033[1;24r", 24, c));
		ck_assert(!margins_after("\033[2;10r\033[r", 24, c));
		ck_assert(!margins_after("\033[2;10r\033[;r", 24, c));
		ck_assert(!margins_after("\033[2;10r\033[0;0r", 24, c));
		ck_assert(!margins_after("\033[5;3r", 24, c));	 /* invalid */
		ck_assert(!margins_after("\033[24;23r", 24, c)); /* invalid */
		ck_assert(!margins_after("\033[2;10r\033c", 24, c));
		ck_assert(!margins_after("\033[?69h\033[?69l", 24, c));
		ck_assert(!margins_after("\033[?69h\033c", 24, c));
		ck_assert(!margins_after("\033[?1;69h", 24, c)); /* 1st only */
		ck_assert(!margins_after("\033[?2;10r", 24, c));
		ck_assert(!margins_after("\033[>2;10r", 24, c));
		ck_assert(!margins_after("\033[2;10$r", 24, c));
		ck_assert(!margins_after("\033[2;10\x18r", 24, c));
		ck_assert(margins_after("\033]0;\033[2;10r\a", 24, c));
		ck_assert(!margins_after("\033P\033\\\033[2;10x", 24, c));
	}
	/* separators past the 15th never reach libvterm 0.1.4 (which would
	 * write past its 16 arguments): the rest is taken as it sees it */
	ck_assert(!margins_after("\033[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1m", 24,
				 1));
	ck_assert(margins_after("\033[2;10;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1r",
				24, 1));
	{
		struct vtskip v;
		const char *p = "\033[1;2;3;4;5;6;7;8;9;0;1;2;3;4;5;6;7r";
		size_t dropped = 0;

		vtskip_init(&v, 80, 24);
		while (*p) {
			bool unsafe = vtskip_unsafe(&v, (unsigned char)*p);

			dropped += unsafe;
			p += unsafe ? 1 : vtskip_scan(&v, p, 1, false);
		}
		ck_assert_uint_eq(dropped, 1);
		ck_assert(v.state == VTSKIP_GROUND && vtskip_margins(&v));
	}
	{
		struct vtskip v;

		vtskip_init(&v, 80, 24);
		scan(&v, "\033[1;30r", 5);
		ck_assert(vtskip_margins(&v));
		vtskip_init(&v, 80, 24);
		vtskip_size(&v, 80, 30);
		scan(&v, "\033[1;30r", 5);
		ck_assert(!vtskip_margins(&v));
		ck_assert_uint_eq(vtskip_plain(&v, "x", 1), 1);
		scan(&v, "\033[3;4r", 1);
		ck_assert_uint_eq(vtskip_plain(&v, "x", 1), 0);
	}
}
END_TEST

/* count lines "L<i>" ended by end, after head */
static char *lines(const char *head, int count, const char *end, size_t *n)
{
	struct strbuf b = { 0 };

	sb_add(&b, head, strlen(head));
	for (int i = 0; i < count; i++)
		sb_addf(&b, "L%d%s", i, end);
	return sb_take(&b, n);
}

static size_t newlines(const char *p, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += p[i] == '\n';
	return c;
}

START_TEST(cuts)
{
	size_t n, at;
	char *p = lines("", 100, "\r\n", &n);

	/* 24 rows, 10 lines kept: 24 + 10 + 1 after the sync point, 25
	 * newlines before it, the sync point's own */
	at = vtskip_cut(p, n, 24, 10);
	ck_assert_uint_gt(at, 0);
	ck_assert(at >= 2 && p[at - 1] == '\n' && p[at - 2] == '\r');
	ck_assert_uint_eq(newlines(p + at, n - at), 24 + 10 + 1 + 24);
	ck_assert_uint_eq(vtskip_cut(p, n, 60, 40), 0); /* too few lines */
	ck_assert_uint_gt(vtskip_cut(p, n, 2, 0), at);
	free(p);
	p = lines("", 100, "\n", &n); /* stty -onlcr: no "\r\n" */
	ck_assert_uint_eq(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	p = lines("", 100, "\xc3\xa9\r\n", &n); /* no printable before */
	ck_assert_uint_eq(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	p = lines("", 100, "\r\n\r\n", &n); /* no printable after */
	ck_assert_uint_eq(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	/* runs that begin from 0x80 (libvterm's other decoder) dropped: only
	 * when the kept text has one that begins a character and ends in
	 * ASCII (which cleans that decoder) */
	p = lines("", 100, "\r\nM\r\n\xc3\xa9x\r\n", &n);
	ck_assert_uint_gt(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	p = lines("", 100, "\r\nM\r\n\xa9x\r\n", &n);
	ck_assert_uint_eq(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	p = lines("\xa9x\r\n", 100, "\r\n", &n);
	ck_assert_uint_eq(vtskip_cut(p, n, 2, 0), 0);
	free(p);
	p = lines("\xa9x\r\n", 100, "\r\nM\r\n\xc3\xa9x\r\n", &n);
	ck_assert_uint_gt(vtskip_cut(p, n, 2, 0), 0);
	free(p);
}
END_TEST

/* ---- the differential test ---- */

struct rng {
	unsigned s;
};

static unsigned rnd(struct rng *r, unsigned n)
{
	r->s = r->s * 1103515245u + 12345u;
	return (r->s >> 8) % n;
}

static void out(void *arg, const char *buf, size_t len)
{
	sb_add(arg, buf, len);
}

static void random_prefix(struct rng *r, struct strbuf *b, int cols, int rows)
{
	static const char *const esc[] = {
		"\033[31;1m", "\033[4h",  "\033[?7l",	  "\033[?1049h",
		"\033(0",     "\033[44m", "\033]0;t%u\a", "\033[%u;%uH",
		"\033#6",     "\033[20h", "\033[?25l",	  "\033[7m",
	};

	for (unsigned i = 0, k = rnd(r, 5); i < k; i++)
		sb_addf(b, esc[rnd(r, sizeof(esc) / sizeof(*esc))],
			rnd(r, (unsigned)rows) + 1, rnd(r, (unsigned)cols) + 1);
}

/* A line of random length (some longer than cols): text, wide and
 * accented characters, tabs, a progress bar's \r. */
static void random_line(struct rng *r, struct strbuf *b, int cols)
{
	static const char *const bits[] = {
		"a",	    "Z",  " ",	"\t", "\xe4\xb8\xad",
		"\xc3\xa9", "\r", "12", "~",  "\xf0\x9f\x98\x80"
	};
	/* wide marks and a character that begins as they do */
	static const char *const marks[] = { "\xe3\x80\xaa", "\xe3\x82\x99",
					     "\xe3\x80\x81" };
	unsigned len = rnd(r, 4) == 0 ? rnd(r, (unsigned)cols * 3 + 3) :
					rnd(r, (unsigned)cols + 1);

	for (unsigned i = 0; i < len; i++) {
		unsigned k = rnd(r, 43);
		const char *s = k < 30 ? "x" :
				k < 40 ? bits[k - 30] :
					 marks[k - 40];

		sb_add(b, s, strlen(s));
	}
	if (rnd(r, 10) == 0)
		sb_add(b, "\n", 1);
	else
		sb_add(b, "\r\n", 2);
}

static void random_between(struct rng *r, struct strbuf *b, int rows,
			   bool no_margins)
{
	switch (rnd(r, 8) + (no_margins ? 1 : 0)) {
	case 0:
		sb_addf(b, "\033[2;%ur", (unsigned)rows);
		break;
	case 1:
		sb_add(b, "\033[r", 3);
		break;
	case 2:
		sb_addf(b, "\033]2;title %u\033\\", rnd(r, 1000));
		break;
	case 3:
		sb_add(b, "\033[6n", 4);
		break;
	case 4:
		sb_addf(b, "\033[%um", 30 + rnd(r, 8));
		break;
	case 5:
		sb_add(b, "\033[?1049l", 8);
		break;
	default:
		break;
	}
}

static char *random_stream(struct rng *r, int cols, int rows, size_t sb_max,
			   bool no_margins, size_t *n)
{
	struct strbuf b = { 0 };
	unsigned k = 2 * (unsigned)rows + (unsigned)sb_max + 2;

	random_prefix(r, &b, cols, rows);
	for (unsigned burst = 0, bursts = 1 + rnd(r, 4); burst < bursts;
	     burst++) {
		for (unsigned i = 0, nl = rnd(r, 4 * k) + 1; i < nl; i++)
			random_line(r, &b, cols);
		random_between(r, &b, rows, no_margins);
	}
	return sb_take(&b, n);
}

static void compare(struct term *a, struct term *b, unsigned seed)
{
	size_t la, lb;
	char *sa = term_screen(a, &la), *sbk = term_screen(b, &lb);
	int ra, ca, rb, cb;
	bool va, vb;

	ck_assert_msg(la == lb && (!la || memcmp(sa, sbk, la) == 0),
		      "seed %u: screens differ:\n%s---\n%s", seed, sa, sbk);
	free(sa);
	free(sbk);
	sa = term_scrollback(a, &la);
	sbk = term_scrollback(b, &lb);
	ck_assert_msg(la == lb && (!la || memcmp(sa, sbk, la) == 0),
		      "seed %u: scrollback differs", seed);
	free(sa);
	free(sbk);
	term_cursor(a, &ra, &ca, &va);
	term_cursor(b, &rb, &cb, &vb);
	ck_assert_msg(ra == rb && ca == cb && va == vb,
		      "seed %u: cursor %d,%d vs %d,%d", seed, ra, ca, rb, cb);
	ck_assert_str_eq(term_title(a), term_title(b));
	ck_assert(term_altscreen(a) == term_altscreen(b));
}

/* Where a stream may be cut between two writes. libvterm 0.1.4's
 * screen depends on where its writes are cut inside text (a character
 * whose UTF-8 is cut is lost; after a wide character, ASCII is no longer
 * taken through G0) and inside an OSC (its title is lost), which skipping
 * does not change (it cuts what it holds after newlines only). anywhere:
 * any cut outside a string (where text is held, cut or not, as a whole),
 * else only cuts inside escape sequences or after controls. */
static bool *cut_points(const char *s, size_t n, bool anywhere)
{
	bool *ok = calloc(n + 1, sizeof(*ok));
	struct vtskip v;

	vtskip_init(&v, 80, 24);
	for (size_t j = 0; j < n; j++) {
		enum vtskip_state before = v.state;
		unsigned char c = (unsigned char)s[j];

		vtskip_scan(&v, s + j, 1, false);
		ok[j + 1] = v.state != VTSKIP_STRING &&
			    v.state != VTSKIP_ESC_IN_STRING &&
			    (anywhere || before != VTSKIP_GROUND || c < 0x20 ||
			     c == 0x7f);
	}
	ok[n] = true;
	return ok;
}

/* One stream (without margins when whole), in random chunks (some of a
 * few bytes, which cut sequences and, when whole, characters), fed with
 * skipping; without it in the same chunks, or (whole) in one write.
 * Compared at a few random points and at the end. The bytes dropped. */
static uint64_t differ_stream(struct rng r, int cols, int rows, size_t sb_max,
			      bool whole, char *s, size_t n)
{
	unsigned seed = r.s;
	struct strbuf oa = { 0 }, ob = { 0 };
	struct term *a = term_new(cols, rows, sb_max, out, &oa);
	struct term *b = term_new(cols, rows, sb_max, out, &ob);
	size_t i = 0;
	bool *ok = cut_points(s, n, whole);
	uint64_t skipped;

	term_skip(a, false);
	if (whole)
		term_feed(a, s, n);
	while (i < n) {
		size_t c = rnd(&r, 3) == 0 ? rnd(&r, 8) + 1 : rnd(&r, 8192) + 1;

		c = c > n - i ? n - i : c;
		while (!ok[i + c])
			c++;
		if (!whole)
			term_feed(a, s + i, c);
		for (size_t j = 0; j < c;)
			j += term_take(b, s + i + j, c - j);
		i += c;
		if (!whole && rnd(&r, 200) == 0)
			compare(a, b, seed);
	}
	compare(a, b, seed);
	ck_assert_msg(oa.len == ob.len &&
			      (!oa.len || memcmp(oa.p, ob.p, oa.len) == 0),
		      "seed %u: answers differ", seed);
	skipped = term_skipped(b);
	term_free(a);
	term_free(b);
	free(s);
	free(ok);
	free(oa.p);
	free(ob.p);
	return skipped;
}

static uint64_t differ(unsigned seed, int cols, int rows, size_t sb_max,
		       bool whole)
{
	struct rng r = { seed };
	size_t n;
	char *s = random_stream(&r, cols, rows, sb_max, whole, &n);

	return differ_stream(r, cols, rows, sb_max, whole, s, n);
}

/* libvterm 0.1.4 writes past its 16 arguments of a CSI: the separators
 * past the 15th are dropped, and the terminal lives on. */
START_TEST(many_arguments)
{
	struct strbuf b = { 0 };
	struct term *t = term_new(80, 24, 10, out, &b);
	char seq[300] = "\033[";
	size_t len;
	char *scr;

	for (int i = 0; i < 100; i++)
		strcat(seq, "1;");
	strcat(seq, "mhello\r\n");
	term_feed(t, seq, strlen(seq));
	term_feed(t, seq, 5);
	term_feed(t, seq + 5, strlen(seq) - 5);
	scr = term_screen(t, &len);
	ck_assert(strncmp(scr, "hello\nhello\n", 12) == 0);
	free(scr);
	term_free(t);
	free(b.p);
}
END_TEST

/* Wide marks (0xe3 0x80 0xaa-0xaf, 0xe3 0x82 0x99-0x9a): never held; one
 * that would make its character wider than the screen is unsafe at its
 * last byte, or replaced whole; a byte below 0x80 after a mark's first
 * bytes gets a 0xc3 before it. */
START_TEST(wide_marks)
{
	struct vtskip v;
	char sub[3];
	size_t took;

	vtskip_init(&v, 80, 24);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x81\x8bz", 6), 6);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x80\x81", 5), 5);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x80\xaa", 5), 5); /* fits */
	/* a character cut at the end: held, and the rest with it */
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x81", 4), 4);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3x", 4), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x80\n", 5), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe4\xb8\xe3\x81\x81", 7), 7);
	vtskip_init(&v, 3, 24);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x80\xaa", 5), 2);
	ck_assert_uint_eq(vtskip_plain(&v, "ab\xe3\x82\x9a", 5), 2);
	vtskip_text(&v, "ab\xe3", 3); /* held: the rest is checked */
	ck_assert_uint_eq(vtskip_plain(&v, "\x82", 1), 1);
	ck_assert_uint_eq(vtskip_plain(&v, "\x82\x99", 2), 0);
	ck_assert_uint_eq(vtskip_plain(&v, "\x82\x9b", 2), 2);
	/* a letter and a mark fit in 4 columns, not in 3 (counted loosely) */
	vtskip_init(&v, 4, 2);
	ck_assert_uint_eq(vtskip_scan(&v, "a\xe3\x80", 3, false), 3);
	ck_assert(!vtskip_unsafe(&v, 0xaa));
	ck_assert_uint_eq(vtskip_scan(&v, "\xaa", 1, false), 1);
	ck_assert(vtskip_unsafe(&v, 0x1b) == false);
	ck_assert_uint_eq(vtskip_scan(&v, "\xe3\x80", 2, false), 2);
	ck_assert(vtskip_unsafe(&v, 0xab)); /* a fifth column */
	ck_assert_uint_eq(vtskip_instead(&v, 0xab, sub), 1);
	ck_assert_int_eq(sub[0], (char)0x80); /* U+3000 */
	ck_assert(vtskip_unsafe(&v, '\n'));
	ck_assert_uint_eq(vtskip_instead(&v, '\n', sub), 2);
	ck_assert(sub[0] == (char)0xc3 && sub[1] == '\n');
	vtskip_init(&v, 3, 2);
	ck_assert_uint_eq(vtskip_scan(&v, "a", 1, false), 1);
	ck_assert_uint_eq(vtskip_scan(&v, "\xe3\x82\x99z", 4, false), 0);
	ck_assert_uint_eq(vtskip_replace(&v, "\xe3\x82\x99z", 4, sub, &took),
			  3);
	ck_assert_uint_eq(took, 3);
	ck_assert(memcmp(sub, "\xe3\x82\x9b", 3) == 0); /* U+309B */
	ck_assert_uint_eq(vtskip_replace(&v, "z", 1, sub, &took), 0);
	ck_assert_uint_eq(took, 0);
	/* a control ends libvterm's run: a mark alone is 2 wide */
	vtskip_init(&v, 4, 2);
	ck_assert_uint_eq(vtskip_scan(&v, "ab\r\xe3\x80", 5, false), 5);
	ck_assert(!vtskip_unsafe(&v, 0xaa));
	/* 0xfe and 0xff leave the first bytes waiting in the decoder */
	ck_assert_uint_eq(vtskip_scan(&v, "\xfe", 1, false), 1);
	ck_assert(vtskip_unsafe(&v, 'x'));
	ck_assert_uint_eq(vtskip_plain(&v, "\xaa", 1), 1); /* it fits */
	/* an OSC's text is not printed: no mark there */
	vtskip_init(&v, 2, 2);
	ck_assert_uint_eq(vtskip_scan(&v, "a\033]0;\xe3\x80\xaa\a", 9, false),
			  9);
}
END_TEST

START_TEST(differential)
{
	uint64_t skipped = 0;

	for (unsigned seed = 1; seed <= 300; seed++) {
		struct rng r = { seed * 7919u };
		int cols = 2 + (int)rnd(&r, 119), rows = 2 + (int)rnd(&r, 39);

		skipped += differ(seed, cols, rows, rnd(&r, 61), seed % 2);
	}
	ck_assert_uint_gt(skipped, 0);
}
END_TEST

START_TEST(differential_sizes)
{
	uint64_t skipped = 0;

	for (unsigned seed = 1; seed <= 10; seed++) {
		skipped += differ(1000 + seed, 80, 24, 1000, seed % 2);
		skipped += differ(2000 + seed, 2, 2, 0, seed % 2);
		skipped += differ(3000 + seed, 1000, 3, 5, seed % 2);
		skipped += differ(4000 + seed, 40, 10, 0, seed % 2);
	}
	ck_assert_uint_gt(skipped, 0);
}
END_TEST

/* A line of more than what is held at most (1 MiB), then lines: held
 * text fed in pieces, none cut inside a character. */
START_TEST(long_line)
{
	for (unsigned seed = 1; seed <= 2; seed++) {
		struct rng r = { seed };
		struct strbuf b = { 0 };
		size_t n;
		char *s;

		while (b.len < (1300u << 10)) {
			const char *bit =
				rnd(&r, 5) ? "ab \xe4\xb8\xad" : "\xc3\xa9\t";

			sb_add(&b, bit, strlen(bit));
		}
		for (int i = 0; i < 3000; i++)
			random_line(&r, &b, 80);
		s = sb_take(&b, &n);
		differ_stream(r, 80, 24, 100, seed == 2, s, n);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vtskip");
	TCase *tc = tcase_create("vtskip");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, plain_bytes);
	tcase_add_test(tc, plain_c2);
	tcase_add_test(tc, wide_marks);
	tcase_add_test(tc, states);
	tcase_add_test(tc, margins);
	tcase_add_test(tc, many_arguments);
	tcase_add_test(tc, cuts);
	tcase_add_test(tc, differential);
	tcase_add_test(tc, differential_sizes);
	tcase_add_test(tc, long_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
