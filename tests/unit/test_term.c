/* test_term.c - the screen of tty/ (term.c): the screen's version, a match (once per version, a tenth of the
 * time at most), 2 columns with wide characters (1 crashes libvterm
 * 0.1.4, hence the minimum), and REP, which libvterm 0.1.4 repeats
 * forever unless the last character is of width 1 (each under a short
 * timeout: a hang fails it); wide marks (combining characters libvterm
 * counts two columns wide) that would make a character wider than the
 * screen (libvterm 0.1.4 writes past its row) are replaced, at every size
 * and cut of the writes, and kept where they fit; what libvterm leaves
 * wrong after a resize to fewer rows (the cursor above the screen, a
 * scroll region past its end) is set right. */
#include <errno.h>
#include <regex.h>
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "unit.h"

static void drop(void *arg, const char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
}

/* What the terminal answers, into the strbuf arg. */
static void out(void *arg, const char *buf, size_t len)
{
	sb_add(arg, buf, len);
}

START_TEST(versions_and_match)
{
	struct term *a = term_new(80, 24, 10, drop, NULL);
	struct term *b = term_new(80, 24, 10, drop, NULL);
	uint64_t va = term_version(a);
	regex_t re;
	size_t len;
	char *line;

	ck_assert_uint_ne(va, term_version(b));
	ck_assert_int_eq(regcomp(&re, "^h.$", REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_ptr_null(term_match(a, &re, &len));
	term_feed(a, "hi\r\n", 4);
	ck_assert_uint_gt(term_version(a), va);
	line = term_match(a, &re, &len);
	ck_assert_str_eq(line, "hi\n");
	free(line);
	va = term_version(a);
	term_resize(a, 40, 10);
	ck_assert_uint_gt(term_version(a), va);
	regfree(&re);
	ck_assert_int_eq(regcomp(&re, "^never$", REG_EXTENDED | REG_NOSUB), 0);
	{
		struct term_seen seen = { 0 };
		int64_t retry;

		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_uint_eq(seen.version, term_version(a));
		seen.after_us = INT64_MAX - 1000; /* the last try was costly */
		term_feed(a, "x", 1);
		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_int_gt(retry, 0);
		ck_assert_uint_ne(seen.version, term_version(a));
		seen.after_us = 0;
		ck_assert_ptr_null(term_match_once(a, &re, &seen, &retry));
		ck_assert_int_eq(retry, 0);
		ck_assert_uint_eq(seen.version, term_version(a));
	}
	regfree(&re);
	term_free(a);
	term_free(b);
}
END_TEST

START_TEST(two_columns_wide)
{
	struct term *t = term_new(80, 24, 10, drop, NULL);
	const char wide[] = "\xe4\xb8\xad\xe4\xb8\xad x\xe4\xb8\xad\r\n";
	size_t len;
	char *s;

	for (int i = 0; i < 30; i++)
		term_feed(t, wide, sizeof(wide) - 1);
	term_resize(t, 2, 5);
	for (int i = 0; i < 30; i++)
		term_feed(t, wide, sizeof(wide) - 1);
	term_resize(t, 3, 5);
	term_resize(t, 2, 2);
	term_feed(t, "\xe4\xb8\xad\033[1;2H\xe4\xb8\xad\033[@\033[P", 15);
	s = term_screen(t, &len);
	ck_assert_ptr_nonnull(s);
	free(s);
	s = term_scrollback(t, &len);
	ck_assert_ptr_nonnull(s);
	free(s);
	term_free(t);
}
END_TEST

/* The screen after feeding s (10 x rows, sb_max) in chunks of at most
 * chunk bytes, as tty.c feeds, and the cursor's column. */
static char *screen_after(const char *s, int rows, size_t sb_max, size_t chunk,
			  int *col)
{
	struct term *t = term_new(10, rows, sb_max, drop, NULL);
	size_t n = strlen(s), len;
	char *scr;
	int row;
	bool visible;

	for (size_t i = 0; i < n;) {
		size_t c = n - i < chunk ? n - i : chunk;

		i += term_take(t, s + i, c);
	}
	term_cursor(t, &row, col, &visible);
	scr = term_screen(t, &len);
	term_free(t);
	return scr;
}

/* s leaves want on the first row and the cursor in column col (1-based),
 * whole and one byte at a time. */
static void row_is(const char *s, const char *want, int col)
{
	for (size_t chunk = 1; chunk <= 1000; chunk += 999) {
		int at;
		char *row = screen_after(s, 5, 10, chunk, &at);

		*strchr(row, '\n') = '\0'; /* the first row */

		ck_assert_msg(strcmp(row, want) == 0, "%s: \"%s\"", s, row);
		ck_assert_int_eq(at, col);
		free(row);
	}
}

START_TEST(rep_dropped)
{
	row_is("\033[b", "", 1);
	row_is("\033[5b", "", 1);
	row_is("\033[bok", "ok", 3);
	/* a combining character: merged into the 'e' or alone */
	row_is("e\xcc\x81\033[3b", "e\xcc\x81", 2);
	row_is("\xcc\x81\033[3bx", "x", 2);
	row_is("a\033c\033[3b", "", 1);		  /* RIS */
	row_is("\xc3\xa9\033[3b", "\xc3\xa9", 2); /* UTF-8 */
	row_is("\xe4\xb8\xad\033[3b", "\xe4\xb8\xad", 3);
	/* SOS's text is printed by libvterm */
	row_is("a\033X\xcc\x81\033\\\033[3b", "a\xcc\x81", 2);
}
END_TEST

START_TEST(rep_repeats)
{
	row_is("a\033[5b", "aaaaaa", 7);
	row_is("a\033[b", "aa", 3);
	row_is("ab\r\033[2b", "bb", 3); /* from column 1 */
	row_is("\xc3\xa9x\033[2b", "\xc3\xa9xxx", 5);
	row_is("\033(0q\033[3b",
	       "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80"
	       "\xe2\x94\x80",
	       5); /* DEC line drawing */
	row_is("a\033[31m\033[2b", "aaa", 4);
	row_is("a\033[?5b\033[>5b\033[5 b", "a", 2); /* not REP */
	row_is("a\033[20b", "aaaaaaaaaa", 10);
}
END_TEST

/* A C1 code point in UTF-8 (0xc2 0x80-0x9f) is of width -1 to libvterm
 * 0.1.4: its cursor would go left of the screen; its second byte is not
 * fed, nor is the 0xc2 left for a later one. */
START_TEST(c1_dropped)
{
	struct strbuf b = { 0 };
	char *s;

	row_is("\xc2\x85x", "\xef\xbf\xbd\xef\xbf\xbdx", 4);
	row_is("\xc2\r\x85x", "\xc3\x85x", 3);
	row_is("\xc2\033[31m\x85x", "\xef\xbf\xbd\xc3\x85x", 4);
	/* 0xfe and 0xff leave the 0xc2 waiting in libvterm's decoder */
	row_is("\xc2\xff\033[r\x85x", "\xc3\x85x", 3);
	row_is("\xc2\xfe\x85x", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx", 5);
	row_is("\xc2\xc2\xa9", "\xef\xbf\xbd\xc2\xa9", 3);
	row_is("\xc3\xa9\xe2\x80\x94", "\xc3\xa9\xe2\x80\x94", 3);
	for (int i = 0; i < 4; i++) /* the 0xc2 broken by the next */
		sb_add(&b, "\xc2\x85", 2);
	sb_add(&b, "ok", 2);
	s = sb_take(&b, &(size_t){ 0 });
	row_is(s,
	       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdok",
	       8);
	free(s);
}
END_TEST

/* A control in a DCS or OSC, then ST (in the same write or ESC and '\\'
 * in two): libvterm 0.1.4 would read past the write; the control is not
 * fed (nor NUL, DEL). */
START_TEST(string_control)
{
	struct term *t = term_new(10, 3, 0, drop, NULL);
	char *scr;
	size_t len;

	term_feed(t, "\033P1\nab\033", 7);
	term_feed(t, "\\ok", 3);
	term_feed(t, "\033]0;a\0\033", 7);
	term_feed(t, "\\!", 2);
	scr = term_screen(t, &len);
	ck_assert_str_eq(scr, "ok!\n\n\n");
	free(scr);
	term_free(t);
	row_is("\033P1\n\033\\ok", "ok", 3);
	row_is("\033]0;\ra\033\\ok", "ok", 3);
	row_is("\033P\033\n\\ok", "ok", 3);
	row_is("\033]0;x\033\r\\ok", "ok", 3);
	row_is("\033P\033\a\\ok", "ok", 3);
	row_is("\033P\033\x7f\\ok", "ok", 3);
	row_is("\033Xa\033\n\\ok", "a", 4); /* SOS: text, \n moves */
}
END_TEST

/* A DECRQSS (DCS $ q) that libvterm 0.1.4 does not know crashes it
 * (sprintf of an int for a string): it is ended by CAN instead; a known
 * one is answered. */
START_TEST(unknown_request)
{
	struct strbuf b = { 0 };
	struct term *t = term_new(10, 3, 0, out, &b);
	const char *req[] = { "\033P$q1\033\\",	       "\033P$qmm\007",
			      "\033P$q\xc3\xa9\033\\", "\033P$q\033\\",
			      "\033Px$qn\033\\",       "\033P$q$qm\033\\" };

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		term_feed(t, req[i], strlen(req[i]));
	/* the request of the DCS's last write: its other writes are lost */
	term_feed(t, "\033PP", 3);
	term_feed(t, "$qn\033\\", 5);
	ck_assert_uint_eq(b.len, 0);
	term_feed(t, "\033P$qr\033\\ok", 10);
	ck_assert_uint_gt(b.len, 0); /* DECSTBM's answer */
	term_free(t);
	free(b.p);
	row_is("\033P$q1\033\\ok", "ok", 3);
}
END_TEST

/* Plain text that scrolls off is held, not scanned: what REP follows. */
START_TEST(rep_after_held)
{
	struct strbuf b = { 0 };
	int col;
	char *row, *s;

	for (int i = 0; i < 50; i++)
		sb_add(&b, "line\r\n", 6);
	sb_add(&b, "x\xc3\xa9\033[3b", 7);
	s = sb_take(&b, &(size_t){ 0 });
	row = screen_after(s, 2, 0, 4096, &col);
	ck_assert_str_eq(row, "line\nx\xc3\xa9\n");
	free(row);
	strcpy(s + 50 * 6, "xy\033[3b");
	row = screen_after(s, 2, 0, 4096, &col);
	ck_assert_str_eq(row, "line\nxyyyy\n");
	ck_assert_int_eq(col, 6);
	free(row);
	free(s);
	/* U+00A0-U+00BF are held too, a C1 code point is not fed */
	for (int i = 0; i < 50; i++)
		sb_add(&b,
		       "20\xc2\xb0"
		       "C\r\n",
		       7);
	sb_add(&b,
	       "\xc2\x85"
	       "C\xc2",
	       4);
	s = sb_take(&b, &(size_t){ 0 });
	row = screen_after(s, 2, 0, 4096, &col);
	ck_assert_str_eq(row, "20\xc2\xb0"
			      "C\n\xef\xbf\xbd\xef\xbf\xbd"
			      "C\n");
	ck_assert_int_eq(col, 4);
	free(row);
	free(s);
}
END_TEST

/* The screen of cols x rows after s, fed whole (with skipping on). */
static char *screen_of(int cols, int rows, const char *s)
{
	struct term *t = term_new(cols, rows, 10, drop, NULL);
	size_t len;
	char *scr;

	term_feed(t, s, strlen(s));
	scr = term_screen(t, &len);
	term_free(t);
	return scr;
}

static void screen_is(int cols, int rows, const char *s, const char *want)
{
	char *scr = screen_of(cols, rows, s);

	ck_assert_msg(strcmp(scr, want) == 0, "%dx%d %s: \"%s\"", cols, rows, s,
		      scr);
	free(scr);
}

/* A wide mark that does not fit becomes a character of its own (the
 * spacing mark, an ideographic space); one that fits is kept. */
START_TEST(wide_marks_replaced)
{
	char many[1 + 40 * 3 + 1] = "a", nfd[60 * 6 + 1], *scr;
	int kept = 0;

	screen_is(2, 2, "a\xe3\x80\xaa", "a\n\xe3\x80\x80\n");
	screen_is(2, 2, "\xe3\x81\x8b\xe3\x82\x99",
		  "\xe3\x81\x8b\n\xe3\x82\x9b\n");
	screen_is(3, 2, "\xe4\xb8\xad\xe3\x82\x9a",
		  "\xe4\xb8\xad\n\xe3\x82\x9c\n");
	screen_is(4, 2, "a\xe3\x80\xaa", "a\xe3\x80\xaa\n\n");
	screen_is(5, 2, "\xe4\xb8\xad\xe3\x82\x99\xe3\x82\x9a",
		  "\xe4\xb8\xad\xe3\x82\x99\n\xe3\x82\x9c\n");
	screen_is(80, 2, "\xe3\x81\x8b\xe3\x82\x99 a\xe3\x80\xaf",
		  "\xe3\x81\x8b\xe3\x82\x99 a\xe3\x80\xaf\n\n");
	/* NFD kana: each kana begins a character, no mark is replaced */
	for (int i = 0; i < 60; i++)
		memcpy(nfd + 6 * i, "\xe3\x81\x8b\xe3\x82\x99", 6);
	nfd[sizeof(nfd) - 1] = '\0';
	scr = screen_of(80, 4, nfd);
	ck_assert_ptr_null(strstr(scr, "\xe3\x82\x9b"));
	for (char *q = scr; (q = strstr(q, "\xe3\x82\x99")) != NULL; q += 3)
		kept++;
	ck_assert_int_eq(kept, 60);
	free(scr);
	/* 40 marks after a letter are 81 columns: the 40th is replaced */
	for (int i = 0; i < 40; i++)
		memcpy(many + 1 + 3 * i, "\xe3\x80\xaa", 3);
	many[sizeof(many) - 1] = '\0';
	free(screen_of(80, 24, many));
	free(screen_of(3, 2, many));
}
END_TEST

/* What crashed libvterm, at sizes 2..6 x 2..4, in writes cut at every
 * byte and more, held or not: the screen is read, the cursor on it. */
START_TEST(wide_marks_any_size)
{
	static const char *const crash[] = {
		"a\xe3\x80\xaa",
		"\xe4\xb8\xad\xe3\x80\xab\xe3\x82\x99",
		"\r\n\xe3\x80\xaa\xe3\x80\xab\xe3\x80\xac",
		"x\xe3\x80\n\xaa\xe3\x80\xad",
		"\xc3\xa9\xe3\x80\x1b[m\xaa",
		("ab\xe4\xb8\xad\xe4\xb8\xad\xe3\x82\x9a\xe3\x82\x9a\033[1;2H"
		 "\xe3\x82\x99\033#6\xe4\xb8\xad\xe3\x80\xae\033[4h\xe3\x80\xaf"),
	};
	static const size_t chunks[] = { 1, 2, 3, 5, 4096 };

	for (int cols = 2; cols <= 6; cols++)
		for (int rows = 2; rows <= 4; rows++)
			for (size_t c = 0; c < 5 * 2; c++) {
				struct term *t =
					term_new(cols, rows, 5, drop, NULL);
				int row, col;
				bool visible;

				term_skip(t, c % 2);
				for (size_t k = 0; k < 6; k++)
					for (size_t i = 0, n = strlen(crash[k]);
					     i < n;)
						i += term_take(
							t, crash[k] + i,
							n - i < chunks[c / 2] ?
								n - i :
								chunks[c / 2]);
				free(term_screen(t, &(size_t){ 0 }));
				term_cursor(t, &row, &col, &visible);
				ck_assert(row >= 1 && row <= rows);
				ck_assert(col >= 1 && col <= cols);
				term_free(t);
			}
}
END_TEST

/* t (cols x rows after s) resized to cols2 x rows2, then fed s2: the
 * cursor stays on the screen, and its row is returned. */
static int after_resize(int cols, int rows, const char *s, int cols2, int rows2,
			const char *s2)
{
	struct term *t = term_new(cols, rows, 10, drop, NULL);
	int row, col;
	bool visible;

	term_feed(t, s, strlen(s));
	term_resize(t, cols2, rows2);
	term_cursor(t, &row, &col, &visible);
	ck_assert_msg(row >= 1 && row <= rows2 && col >= 1 && col <= cols2,
		      "%s: cursor %d,%d on %dx%d", s, row, col, cols2, rows2);
	term_feed(t, s2, strlen(s2));
	free(term_screen(t, &(size_t){ 0 }));
	term_cursor(t, &row, &col, &visible);
	ck_assert(row >= 1 && row <= rows2 && col >= 1 && col <= cols2);
	term_free(t);
	return row;
}

START_TEST(resize_fewer)
{
	const char *edit = "\n\n\033[Mhello\033[L\033M\033D\033[2P\033[3@x";
	char *scr;

	/* a line below the cursor: libvterm took the cursor above the
	 * screen with the lines it pushed off */
	ck_assert_int_eq(after_resize(80, 24, "\033[24Hx\033[H", 80, 10, edit),
			 3);
	ck_assert_int_eq(
		after_resize(80, 24, "\033[24Hx\033[H\033[3", 80, 10, "1mab"),
		1); /* a CSI cut by the resize ends */
	ck_assert_int_eq(
		after_resize(10, 10, "\033[6H2\033[?1049l", 10, 5, "hello"), 1);
	/* and a character cut by the resize (its end was printed there) */
	after_resize(80, 24, "\033[24Hx\033[H\xe3", 80, 10, "abc");
	after_resize(80, 24, "\033[24Hx\033[H\xc2", 80, 10,
		     "\x85"
		     "abc");
	/* a scroll region below the new height */
	after_resize(80, 24, "\033[20;24r\033[24H", 80, 10, edit);
	after_resize(80, 24, "\033[3;5r\033[5H", 80, 4, edit);
	after_resize(80, 24, "\033[24Hx\033[1;1H", 2, 2, edit);
	/* a region that still fits is kept: the cursor's line scrolls in it */
	{
		struct term *t = term_new(10, 6, 10, drop, NULL);
		const char *s = "\033[1;3r\033[3Ha\r\nb\033[6Hz";

		term_feed(t, s, strlen(s));
		term_resize(t, 10, 5);
		term_feed(t, "\033[3H\nc", 6);
		scr = term_screen(t, &(size_t){ 0 });
		ck_assert_str_eq(scr, "b\n\nc\n\nz\n");
		free(scr);
		term_free(t);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("term");
	TCase *tc = tcase_create("term");
	TCase *rep = tcase_create("rep");

	tcase_add_test(tc, versions_and_match);
	tcase_add_test(tc, two_columns_wide);
	suite_add_tcase(s, tc);
	tcase_set_timeout(rep, 5);
	tcase_add_test(rep, rep_dropped);
	tcase_add_test(rep, rep_repeats);
	tcase_add_test(rep, rep_after_held);
	tcase_add_test(rep, c1_dropped);
	tcase_add_test(rep, string_control);
	tcase_add_test(rep, unknown_request);
	tcase_add_test(rep, wide_marks_replaced);
	tcase_add_test(rep, wide_marks_any_size);
	tcase_add_test(rep, resize_fewer);
	suite_add_tcase(s, rep);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
