/*
 * keys.c - parsing key names (tty/keys) into keys and text to send. Pure:
 * no state, no I/O; term.c sends what it finds.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <vterm.h>
#include "sessions/tty/keys.h"

static const struct {
	const char *name;
	int key; /* a VTermKey, or 0 for a character */
	int ch;	 /* that character */
} names[] = {
	{ "Enter", VTERM_KEY_ENTER, 0 },
	{ "Tab", VTERM_KEY_TAB, 0 },
	{ "Esc", VTERM_KEY_ESCAPE, 0 },
	{ "Escape", VTERM_KEY_ESCAPE, 0 },
	{ "BSpace", VTERM_KEY_BACKSPACE, 0 },
	{ "Space", 0, ' ' },
	{ "Up", VTERM_KEY_UP, 0 },
	{ "Down", VTERM_KEY_DOWN, 0 },
	{ "Left", VTERM_KEY_LEFT, 0 },
	{ "Right", VTERM_KEY_RIGHT, 0 },
	{ "Home", VTERM_KEY_HOME, 0 },
	{ "End", VTERM_KEY_END, 0 },
	{ "PgUp", VTERM_KEY_PAGEUP, 0 },
	{ "PPage", VTERM_KEY_PAGEUP, 0 },
	{ "PgDn", VTERM_KEY_PAGEDOWN, 0 },
	{ "NPage", VTERM_KEY_PAGEDOWN, 0 },
	{ "Delete", VTERM_KEY_DEL, 0 },
	{ "DC", VTERM_KEY_DEL, 0 },
	{ "Insert", VTERM_KEY_INS, 0 },
	{ "IC", VTERM_KEY_INS, 0 },
};

/* The length of the UTF-8 character at s (at most len bytes), or 0 when
 * it is not one whole character. */
static size_t utf8_char(const unsigned char *s, size_t len, int *cp)
{
	size_t n = s[0] < 0x80		 ? 1 :
		   (s[0] & 0xe0) == 0xc0 ? 2 :
		   (s[0] & 0xf0) == 0xe0 ? 3 :
		   (s[0] & 0xf8) == 0xf0 ? 4 :
					   0;
	int v = n == 1 ? s[0] : s[0] & (0x7f >> n);

	if (n == 0 || n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	/* the shortest form of a code point of Unicode, not a surrogate */
	if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000) || v > 0x10ffff ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* F1..F12 */
static int function_key(const char *t, size_t len)
{
	int n = 0;

	if (len < 2 || len > 3 || t[0] != 'F')
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (t[i] < '0' || t[i] > '9')
			return 0;
		n = n * 10 + (t[i] - '0');
	}
	return n >= 1 && n <= 12 && t[1] != '0' ? VTERM_KEY_FUNCTION(n) : 0;
}

/* One unquoted token: modifiers, then a name or one character. */
static int parse_key(const char *t, size_t len, struct keys_item *it)
{
	int cp = 0;

	*it = (struct keys_item){ .kind = KEYS_KEY };
	while (len > 2 && t[1] == '-' && strchr("CMS", t[0])) {
		it->mod |= t[0] == 'C' ? VTERM_MOD_CTRL :
			   t[0] == 'M' ? VTERM_MOD_ALT :
					 VTERM_MOD_SHIFT;
		t += 2;
		len -= 2;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		if (strlen(names[i].name) != len ||
		    memcmp(names[i].name, t, len) != 0)
			continue;
		it->kind = names[i].key ? KEYS_KEY : KEYS_CHAR;
		it->code = names[i].key ? names[i].key : names[i].ch;
		return 0;
	}
	if ((it->code = function_key(t, len)))
		return 0;
	if (utf8_char((const unsigned char *)t, len, &cp) != len || cp < 0x20 ||
	    (cp >= 0x7f && cp < 0xa0))
		return -EINVAL;
	it->kind = KEYS_CHAR;
	it->code = cp;
	return 0;
}

/* A quoted token at s[*i] (the opening quote); unquotes it into seq's
 * text and moves *i past the closing quote. */
static int parse_text(const char *s, size_t len, size_t *i,
		      struct keys_seq *seq)
{
	struct keys_item *it = &seq->items[seq->n];

	*it = (struct keys_item){ .kind = KEYS_TEXT, .off = seq->tlen };
	for (size_t j = *i + 1; j < len; j++) {
		if (s[j] == '"') {
			it->len = seq->tlen - it->off;
			*i = j + 1;
			return *i == len || s[*i] == ' ' || s[*i] == '\t' ||
					       s[*i] == '\n' ?
				       0 :
				       -EINVAL;
		}
		if (s[j] == '\\' && j + 1 < len &&
		    (s[j + 1] == '"' || s[j + 1] == '\\'))
			j++;
		seq->text[seq->tlen++] = s[j];
	}
	return -EINVAL; /* no closing quote */
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int keys_parse(const char *s, size_t len, struct keys_seq *seq, size_t *bad_off,
	       size_t *bad_len)
{
	size_t i = 0, start;
	int rc = 0;

	seq->n = seq->tlen = 0;
	while (rc == 0) {
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			return 0;
		start = i;
		if (s[i] == '"') {
			rc = parse_text(s, len, &i, seq);
		} else {
			while (i < len && !is_space(s[i]))
				i++;
			rc = parse_key(s + start, i - start,
				       &seq->items[seq->n]);
		}
		if (rc == 0)
			seq->n++;
	}
	while (i < len && !is_space(s[i]))
		i++;
	*bad_off = start;
	*bad_len = i - start;
	seq->n = seq->tlen = 0;
	return rc;
}
