/*
 * keys.h - the key names written to a terminal's tty/keys: a pure parser
 * from "C-c Up \"text\"" to the keys and text to send, which the terminal
 * (term.c) turns into bytes as its mode asks (cursor keys in application
 * mode, say).
 */
#ifndef SFS_KEYS_H
#define SFS_KEYS_H

#include <stddef.h>
#include <vterm_keycodes.h>

enum keys_kind {
	KEYS_KEY,  /* a named key: code is a VTermKey */
	KEYS_CHAR, /* a character with modifiers: code is its code point */
	KEYS_TEXT, /* text typed as it is: text[off..off+len) */
};

struct keys_item {
	enum keys_kind kind;
	int code;
	int mod; /* VTermModifier bits */
	size_t off, len;
};

/* What keys_parse found. items and text hold at most as many entries and
 * bytes as the input had bytes (so len + 1 of each is always enough). */
struct keys_seq {
	struct keys_item *items;
	size_t n;
	char *text; /* the bytes of KEYS_TEXT items, unquoted */
	size_t tlen;
};

/* Parses len bytes of space-separated key names: Enter Tab Esc BSpace
 * Space Up Down Left Right Home End PgUp PgDn Delete Insert F1..F12, a
 * single character, each optionally after C-, M- and S- (C-c, M-x,
 * C-Up), and "quoted text" (\" and \\ inside) typed literally. seq's
 * items and text must have room for len + 1 entries and bytes. Returns 0,
 * or -EINVAL with the offending token at s[*bad_off..*bad_off+*bad_len)
 * and nothing in seq to send. */
int keys_parse(const char *s, size_t len, struct keys_seq *seq, size_t *bad_off,
	       size_t *bad_len);

#endif
