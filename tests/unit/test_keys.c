/* test_keys.c - the key names of tty/keys (keys_parse) and the bytes
 * the terminal sends for them (term_keys). */
#include <errno.h>
#include <vterm.h>
#include "sessions/tty/keys.h"
#include "sessions/tty/term.h"
#include "unit.h"

static struct keys_item items[256];
static char text[256];
static struct keys_seq seq;
static size_t bad_off, bad_len;

/* Parses s, copied so that it ends where an inaccessible page begins. */
static int parse(const char *s)
{
	struct guarded g;
	size_t len = strlen(s);
	const char *p = guard_copy(&g, s, len);
	int rc;

	memset(items, 0xa5, sizeof(items));
	seq = (struct keys_seq){ items, 0, text, 0 };
	rc = keys_parse(p, len, &seq, &bad_off, &bad_len);
	guard_free(&g);
	return rc;
}

static void is_key(size_t i, int code, int mod)
{
	ck_assert_int_eq(seq.items[i].kind, KEYS_KEY);
	ck_assert_int_eq(seq.items[i].code, code);
	ck_assert_int_eq(seq.items[i].mod, mod);
}

static void is_char(size_t i, int code, int mod)
{
	ck_assert_int_eq(seq.items[i].kind, KEYS_CHAR);
	ck_assert_int_eq(seq.items[i].code, code);
	ck_assert_int_eq(seq.items[i].mod, mod);
}

static void is_text(size_t i, const char *want)
{
	ck_assert_int_eq(seq.items[i].kind, KEYS_TEXT);
	ck_assert_uint_eq(seq.items[i].len, strlen(want));
	ck_assert(memcmp(seq.text + seq.items[i].off, want, strlen(want)) == 0);
}

START_TEST(named_keys)
{
	ck_assert_int_eq(parse("Enter Tab Esc BSpace Space Up Down Left Right "
			       "Home End PgUp PgDn Delete Insert"),
			 0);
	ck_assert_uint_eq(seq.n, 15);
	is_key(0, VTERM_KEY_ENTER, 0);
	is_key(1, VTERM_KEY_TAB, 0);
	is_key(2, VTERM_KEY_ESCAPE, 0);
	is_key(3, VTERM_KEY_BACKSPACE, 0);
	is_char(4, ' ', 0);
	is_key(5, VTERM_KEY_UP, 0);
	is_key(6, VTERM_KEY_DOWN, 0);
	is_key(7, VTERM_KEY_LEFT, 0);
	is_key(8, VTERM_KEY_RIGHT, 0);
	is_key(9, VTERM_KEY_HOME, 0);
	is_key(10, VTERM_KEY_END, 0);
	is_key(11, VTERM_KEY_PAGEUP, 0);
	is_key(12, VTERM_KEY_PAGEDOWN, 0);
	is_key(13, VTERM_KEY_DEL, 0);
	is_key(14, VTERM_KEY_INS, 0);
}
END_TEST

START_TEST(function_keys)
{
	ck_assert_int_eq(parse("F1 F9 F10 F12"), 0);
	ck_assert_uint_eq(seq.n, 4);
	is_key(0, VTERM_KEY_FUNCTION(1), 0);
	is_key(1, VTERM_KEY_FUNCTION(9), 0);
	is_key(2, VTERM_KEY_FUNCTION(10), 0);
	is_key(3, VTERM_KEY_FUNCTION(12), 0);
	ck_assert_int_eq(parse("F0"), -EINVAL);
	ck_assert_int_eq(parse("F13"), -EINVAL);
	ck_assert_int_eq(parse("F01"), -EINVAL);
	ck_assert_int_eq(parse("F100"), -EINVAL);
}
END_TEST

START_TEST(modifiers)
{
	ck_assert_int_eq(parse("C-a C-z M-x C-M-b C-Up S-Tab M-Enter"), 0);
	ck_assert_uint_eq(seq.n, 7);
	is_char(0, 'a', VTERM_MOD_CTRL);
	is_char(1, 'z', VTERM_MOD_CTRL);
	is_char(2, 'x', VTERM_MOD_ALT);
	is_char(3, 'b', VTERM_MOD_CTRL | VTERM_MOD_ALT);
	is_key(4, VTERM_KEY_UP, VTERM_MOD_CTRL);
	is_key(5, VTERM_KEY_TAB, VTERM_MOD_SHIFT);
	is_key(6, VTERM_KEY_ENTER, VTERM_MOD_ALT);
	/* a bare letter C or M is a character, not a modifier */
	ck_assert_int_eq(parse("C M -"), 0);
	is_char(0, 'C', 0);
	is_char(1, 'M', 0);
	is_char(2, '-', 0);
}
END_TEST

START_TEST(characters)
{
	ck_assert_int_eq(parse("q : \xc3\xa9 \xe4\xb8\x96"), 0);
	ck_assert_uint_eq(seq.n, 4);
	is_char(0, 'q', 0);
	is_char(1, ':', 0);
	is_char(2, 0xe9, 0);
	is_char(3, 0x4e16, 0);
}
END_TEST

START_TEST(quoted_text)
{
	ck_assert_int_eq(parse("\"echo hi\" Enter \"a \\\"b\\\" \\\\ c\" \"\""),
			 0);
	ck_assert_uint_eq(seq.n, 4);
	is_text(0, "echo hi");
	is_key(1, VTERM_KEY_ENTER, 0);
	is_text(2, "a \"b\" \\ c");
	is_text(3, "");
	/* a backslash before another byte stays */
	ck_assert_int_eq(parse("\"a\\nb\""), 0);
	is_text(0, "a\\nb");
}
END_TEST

START_TEST(blanks)
{
	ck_assert_int_eq(parse(""), 0);
	ck_assert_uint_eq(seq.n, 0);
	ck_assert_int_eq(parse("  \n\t "), 0);
	ck_assert_uint_eq(seq.n, 0);
	ck_assert_int_eq(parse("  Enter\n"), 0);
	ck_assert_uint_eq(seq.n, 1);
	is_key(0, VTERM_KEY_ENTER, 0);
}
END_TEST

START_TEST(unknown_names)
{
	ck_assert_int_eq(parse("Enter Bogus Tab"), -EINVAL);
	ck_assert_uint_eq(bad_off, 6);
	ck_assert_uint_eq(bad_len, 5);
	ck_assert_uint_eq(seq.n, 0); /* nothing to send */
	ck_assert_int_eq(parse("enter"), -EINVAL);
	ck_assert_int_eq(parse("C-"), -EINVAL);
	ck_assert_int_eq(parse("C-Bogus"), -EINVAL);
	ck_assert_int_eq(parse("X-a"), -EINVAL);
	ck_assert_int_eq(parse("ab"), -EINVAL);
	ck_assert_int_eq(parse("\x7f"), -EINVAL);
	ck_assert_int_eq(parse("\x01"), -EINVAL);
	ck_assert_int_eq(parse("\xc3"), -EINVAL);	  /* a cut character */
	ck_assert_int_eq(parse("\xc3\x28"), -EINVAL);	  /* not UTF-8 */
	ck_assert_int_eq(parse("\xc1\xa1"), -EINVAL);	  /* overlong 'a' */
	ck_assert_int_eq(parse("\xed\xa0\x80"), -EINVAL); /* a surrogate */
	ck_assert_int_eq(parse("\xf4\x90\x80\x80"), -EINVAL); /* > U+10FFFF */
	ck_assert_int_eq(parse("\xc2\x85"), -EINVAL);	      /* C1 control */
}
END_TEST

START_TEST(bad_quotes)
{
	ck_assert_int_eq(parse("Enter \"no end"), -EINVAL);
	ck_assert_uint_eq(bad_off, 6);
	ck_assert_uint_eq(seq.n, 0);
	ck_assert_uint_eq(seq.tlen, 0);
	ck_assert_int_eq(parse("\"ab\"cd"), -EINVAL); /* text then a word */
	ck_assert_int_eq(parse("\"\\\""), -EINVAL);   /* the quote escaped */
}
END_TEST

static char sent[64];
static size_t nsent;

static void collect(void *arg, const char *buf, size_t len)
{
	(void)arg;
	ck_assert_uint_le(nsent + len, sizeof(sent));
	memcpy(sent + nsent, buf, len);
	nsent += len;
}

/* The bytes that the keys s send to the program. */
static void sends(const char *s, const char *want)
{
	struct term *t = term_new(80, 24, 0, collect, NULL);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(parse(s), 0);
	nsent = 0;
	term_keys(t, &seq);
	term_free(t);
	ck_assert_uint_eq(nsent, strlen(want));
	ck_assert(memcmp(sent, want, nsent) == 0);
}

START_TEST(bytes_sent)
{
	sends("a", "a");
	sends("\xc3\xa9 \xe4\xb8\xad", "\xc3\xa9\xe4\xb8\xad");
	sends("M-x", "\033x");
	sends("M-\xc3\xa9", "\033\xc3\xa9");
	sends("M-\xe4\xb8\xad", "\033\xe4\xb8\xad");
	sends("S-a S-z", "AZ");
	sends("M-S-a", "\033A");
	sends("S-1 S-\xc3\xa9", "1\xc3\xa9");
	sends("C-c C-M-a", "\003\033\001");
	sends("S-Space", "\033[32;2u");
	sends("Space", " ");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, named_keys);
	tcase_add_test(tc, function_keys);
	tcase_add_test(tc, modifiers);
	tcase_add_test(tc, characters);
	tcase_add_test(tc, bytes_sent);
	suite_add_tcase(s, tc);
	tc = tcase_create("text");
	tcase_add_test(tc, quoted_text);
	tcase_add_test(tc, blanks);
	suite_add_tcase(s, tc);
	tc = tcase_create("refused");
	tcase_add_test(tc, unknown_names);
	tcase_add_test(tc, bad_quotes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
