/* test_termstate.c - a screen saved for an upgrade in place and made
 * again (termstate.c), in one process, through the bytes of a state
 * (state.h): screen, scrollback, cursor, title, every cell's characters,
 * width, attributes and colours, the keys' modes, the scroll region and
 * the pen are the same, and stay the same as more output comes; under
 * the alternate screen the main one comes back when the program leaves
 * it; a malformed or empty object gives a blank screen, never a crash. */
#include "sessions/core/state.h"
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "sessions/tty/termint.h"
#include "unit.h"

/* What the terminal sends the program, into the strbuf arg. */
static void out(void *arg, const char *buf, size_t len)
{
	sb_add(arg, buf, len);
}

static void feed(struct term *t, const char *s)
{
	term_feed(t, s, strlen(s));
}

/* t saved into a state's bytes (for a checkpoint: no descriptors) and
 * made again from them (as another program would), sending to *sent. */
static struct term *round_trip_as(struct term *t, struct strbuf *sent,
				  bool checkpoint)
{
	struct state_w w;
	struct state_r root, o;
	const void *p;
	size_t len;
	struct term *n;
	void *copy;

	state_w_init(&w);
	w.no_fds = checkpoint;
	state_open(&w, 0x100);
	term_save(t, &w);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	copy = malloc(len);
	memcpy(copy, p, len);
	state_w_free(&w);
	ck_assert_int_eq(state_check(copy, len, &root), 0);
	ck_assert(state_obj(&root, 0x100, &o));
	n = term_restore(&o, t->cols, t->rows, t->sb_max, out, sent);
	ck_assert_ptr_nonnull(n);
	free(copy);
	return n;
}

static struct term *round_trip(struct term *t, struct strbuf *sent)
{
	return round_trip_as(t, sent, false);
}

static void same_text(char *a, char *b)
{
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
}

/* Screen, scrollback, cursor, title, alternate screen and every cell. */
static void assert_same(struct term *a, struct term *b)
{
	int ra, ca, rb, cb;
	bool va, vb;

	same_text(term_screen(a, &(size_t){ 0 }),
		  term_screen(b, &(size_t){ 0 }));
	same_text(term_scrollback(a, &(size_t){ 0 }),
		  term_scrollback(b, &(size_t){ 0 }));
	term_cursor(a, &ra, &ca, &va);
	term_cursor(b, &rb, &cb, &vb);
	ck_assert_int_eq(ra, rb);
	ck_assert_int_eq(ca, cb);
	ck_assert_int_eq(va, vb);
	ck_assert_str_eq(term_title(a), term_title(b));
	ck_assert_int_eq(term_altscreen(a), term_altscreen(b));
	for (int r = 0; r < a->rows; r++)
		for (int c = 0; c < a->cols; c++) {
			/* libvterm leaves the chars after the last unset */
			VTermScreenCell x = { 0 }, y = { 0 };
			VTermPos pos = { r, c };

			vterm_screen_get_cell(a->scr, pos, &x);
			vterm_screen_get_cell(b->scr, pos, &y);
			ck_assert_msg(
				memcmp(x.chars, y.chars, sizeof(x.chars)) ==
						0 &&
					x.width == y.width &&
					memcmp(&x.attrs, &y.attrs,
					       sizeof(x.attrs)) == 0 &&
					vterm_color_is_equal(&x.fg, &y.fg) &&
					vterm_color_is_equal(&x.bg, &y.bg),
				"cell %d,%d differs: %x/%x w %d/%d fg %d/%d "
				"bg %d/%d",
				r, c, x.chars[0], y.chars[0], x.width, y.width,
				x.fg.type, y.fg.type, x.bg.type, y.bg.type);
		}
}

/* What the keys of seq send to each (their modes). */
static void assert_same_keys(struct term *a, struct strbuf *sa, struct term *b,
			     struct strbuf *sb, const char *keys)
{
	struct keys_item items[16];
	char text[64];
	struct keys_seq seq = { items, 0, text, 0 };
	size_t bad, blen;

	ck_assert_int_eq(keys_parse(keys, strlen(keys), &seq, &bad, &blen), 0);
	sa->len = sb->len = 0;
	term_keys(a, &seq);
	term_keys(b, &seq);
	ck_assert_uint_eq(sa->len, sb->len);
	ck_assert(memcmp(sa->p, sb->p, sa->len) == 0);
	sa->len = sb->len = 0; /* the keypad, which keys cannot name */
	vterm_keyboard_key(a->vt, VTERM_KEY_KP_0, VTERM_MOD_NONE);
	vterm_keyboard_key(b->vt, VTERM_KEY_KP_0, VTERM_MOD_NONE);
	ck_assert_uint_eq(sa->len, sb->len);
	ck_assert(sa->len > 0 && memcmp(sa->p, sb->p, sa->len) == 0);
}

/* A shell's lines that scroll, a title, colours, a wide and a combining
 * character, erased cells with a colour: as an editor draws. */
static const char *const shell = "\033]2;vim notes.txt\007";
static const char *const editor =
	"\033[?1h\033=\033[?2004h\033[H\033[2J"
	"\033[1;31mred bold\033[0m plain \033[4;38;2;1;2;3mrgb\033[0m\r\n"
	"wide \xe4\xb8\xad\xe6\x96\x87 e\xcc\x81 end\r\n"
	"\033[44m\033[K\033[0m\r\n"
	"\033[7mreverse\033[27m \033[3;9mits\033[0m\r\n"
	"\033[2;20r\033[5;3H\033[32;45m";

START_TEST(screen_comes_back)
{
	struct strbuf sa = { 0 }, sb = { 0 };
	struct term *a = term_new(40, 24, 100, out, &sa), *b;

	for (int i = 0; i < 60; i++) {
		char line[32];

		snprintf(line, sizeof(line), "$ echo line %d\r\n", i);
		feed(a, line);
	}
	feed(a, shell);
	feed(a, editor);
	b = round_trip(a, &sb);
	ck_assert_uint_eq(sb.len, 0); /* nothing was sent to the program */
	assert_same(a, b);
	assert_same_keys(a, &sa, b, &sb, "Up Down Enter");
	ck_assert_uint_eq(sb.len, 3); /* the keypad's 0 in application mode */
	ck_assert(memcmp(sb.p, "\033Op", 3) == 0);
	sb.len = 0;
	vterm_keyboard_key(b->vt, VTERM_KEY_UP, VTERM_MOD_NONE);
	vterm_keyboard_start_paste(b->vt);
	ck_assert_uint_eq(sb.len, 9); /* cursor keys, bracketed paste */
	ck_assert(memcmp(sb.p, "\033OA\033[200~", 9) == 0);
	/* more output: within the scroll region, with the pen it had */
	for (int i = 0; i < 30; i++) {
		feed(a, "more \xe4\xb8\xad\n");
		feed(b, "more \xe4\xb8\xad\n");
	}
	feed(a, "\033[r\033[24;1H\r\n\r\n");
	feed(b, "\033[r\033[24;1H\r\n\r\n");
	assert_same(a, b);
	term_free(a);
	term_free(b);
	free(sa.p);
	free(sb.p);
}
END_TEST

START_TEST(alternate_screen)
{
	struct strbuf sa = { 0 }, sb = { 0 };
	struct term *a = term_new(80, 24, 100, out, &sa), *b;

	for (int i = 0; i < 30; i++)
		feed(a, "$ ls\r\nfile\r\n");
	feed(a, "\033[33m$ vim\033[?25l");
	feed(a, "\033[?1049h");
	feed(a, shell);
	feed(a, editor);
	feed(a, "\033[?25h~\r\n~");
	b = round_trip(a, &sb);
	assert_same(a, b);
	/* the program leaves: the main screen and its cursor come back */
	feed(a, "\033[?1049l\r\n$ ");
	feed(b, "\033[?1049l\r\n$ ");
	assert_same(a, b);
	term_free(a);
	term_free(b);
	free(sa.p);
	free(sb.p);
}
END_TEST

/* The main screen kept when the alternate one came on in a later write
 * than its start, and after a resize while it is on. */
START_TEST(alternate_cut_and_resized)
{
	struct strbuf sa = { 0 }, sb = { 0 };
	struct term *a = term_new(50, 20, 10, out, &sa), *b;

	feed(a, "top\r\n\033[1mbold$ \033[?104");
	feed(a, "9");
	feed(a, "h");
	feed(a, "alt text");
	term_resize(a, 60, 22);
	b = round_trip(a, &sb);
	assert_same(a, b);
	feed(a, "\033[?1049l");
	feed(b, "\033[?1049l");
	assert_same(a, b);
	term_free(a);
	term_free(b);
	free(sa.p);
	free(sb.p);
}
END_TEST

/* A flood of plain text is held (not fed yet) when a checkpoint saves
 * the screen: it is saved as it is, not fed (which would cost what
 * skipping saves), and fed after the drawing it follows. */
START_TEST(held_flood)
{
	struct strbuf sa = { 0 }, sb = { 0 };
	struct term *a = term_new(80, 24, 50, out, &sa), *b;
	char line[64];

	feed(a, "\033[1;33mheld\033[0m\r\n");
	for (int i = 0; i < 3000; i++) {
		int n = snprintf(line, sizeof(line), "flood line %d\r\n", i);

		term_take(a, line, (size_t)n);
	}
	ck_assert(!term_settled(a)); /* some of it is held */
	b = round_trip_as(a, &sb, true);
	ck_assert(!term_settled(a)); /* the save fed none of it */
	assert_same(a, b);
	ck_assert_uint_eq(term_skipped(a), term_skipped(b));
	term_free(a);
	term_free(b);
	free(sa.p);
	free(sb.p);
}
END_TEST

/* A drawing of garbage is fed as any output is (vtskip.h keeps libvterm
 * safe); missing fields give a blank screen. */
START_TEST(malformed)
{
	struct state_w w;
	struct state_r root, o;
	const void *p;
	size_t len;
	char junk[4096];
	struct term *t;
	char *s;

	srand(7);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(rand() % 4 ? rand() % 256 :
					      "\033[;?0123h"[rand() % 9]);
	state_w_init(&w);
	state_open(&w, 0x100);
	state_put(&w, 1, junk, sizeof(junk)); /* the drawing */
	state_put(&w, 3, junk, sizeof(junk)); /* the scrollback */
	state_put_u64(&w, 5, 1);	      /* alternate screen on */
	state_put(&w, 6, junk, sizeof(junk));
	state_put_u64(&w, 7, 1u << 30);
	state_put_u64(&w, 8, 3);
	state_close(&w);
	state_open(&w, 0x101);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	ck_assert_int_eq(state_check(p, len, &root), 0);
	ck_assert(state_obj(&root, 0x100, &o));
	t = term_restore(&o, 30, 10, 5, out, &(struct strbuf){ 0 });
	ck_assert_ptr_nonnull(t);
	free(term_screen(t, &len));
	free(term_scrollback(t, &len));
	term_free(t);
	ck_assert(state_obj(&root, 0x101, &o));
	t = term_restore(&o, 30, 10, 5, out, NULL);
	s = term_screen(t, &len);
	ck_assert_str_eq(s, "\n\n\n\n\n\n\n\n\n\n");
	free(s);
	term_free(t);
	state_w_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("termstate");
	TCase *tc = tcase_create("termstate");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, screen_comes_back);
	tcase_add_test(tc, alternate_screen);
	tcase_add_test(tc, alternate_cut_and_resized);
	tcase_add_test(tc, held_flood);
	tcase_add_test(tc, malformed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
