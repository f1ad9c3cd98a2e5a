/*
 * vtwide.c - how wide the last character libvterm 0.1.4 printed may be,
 * for the escape scanner (vtskip.c). libvterm adds the width of each
 * combining character to the character before it and counts six marks
 * two columns wide (U+302A-U+302F, U+3099, U+309A: 0xe3 then two bytes),
 * so that a character with such marks may be wider than the screen,
 * which libvterm writes past the end of its row (a segfault: at 2
 * columns one mark after a letter, at 80 columns 40). The width kept is
 * never less than libvterm's: a control ends libvterm's run of text (a
 * combining character after it joins the character before with that
 * character's own width, or is one of its own), as does the end of a
 * write; in a run, a character of its own counts 2 (whatever its width)
 * and each mark 2 more, and a code point that is not surely a character
 * of its own counts as combining. The scanner decodes UTF-8 as libvterm
 * does, but libvterm has several decoders, and which takes a run depends
 * on where writes cut it: their states agree with the scanner's but for
 * the first continuation bytes of a run, where a character begins anew
 * and is 2 wide at most. That a mark the scanner sees is one libvterm
 * decodes comes from leaving no mark's first bytes in a decoder: a byte
 * below 0x80 after them (which may begin a run that another decoder
 * takes) gets a 0xc3 before it, and held text keeps them with the bytes
 * that follow (a mark that does not fit is replaced whole where it is
 * seen whole).
 */
#include <stdint.h>
#include <string.h>
#include "sessions/tty/vtwide.h"

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* Whether 0xe3, a then b is a wide mark (U+302A-U+302F, U+3099, U+309A). */
static bool wide_mark(unsigned char a, unsigned char b)
{
	return (a == 0x80 && b >= 0xaa && b <= 0xaf) ||
	       (a == 0x82 && (b == 0x99 || b == 0x9a));
}

/* Whether c, after the first bytes of a wide mark, is its last. */
static bool mark_end(const struct vtskip *s, unsigned char c)
{
	return (s->e3 == 2 && wide_mark(0x80, c)) ||
	       (s->e3 == 3 && wide_mark(0x82, c));
}

/* Whether libvterm 0.1.4 never takes code point c for a combining
 * character (each range checked against it; what is not in one may be
 * one, and is counted so). */
static bool spacing(unsigned int c)
{
	return (c >= 0xa0 && c < 0x300) || (c >= 0x370 && c < 0x483) ||
	       (c >= 0x1100 && c < 0x1160) || (c >= 0x20f0 && c < 0x302a) ||
	       (c >= 0x3030 && c < 0x3099) || (c >= 0x309b && c < 0xa806) ||
	       (c >= 0xa827 && c < 0xfb1e) || (c >= 0xff00 && c < 0xfff9) ||
	       (c >= 0x1f000 && c < 0xe0000);
}

/* Any byte from 0x80 but a mark's last makes the width 2 at least, as
 * it may end a character (of any width) or a combining one; a character
 * of its own begins (2 at most) only where one that is surely no
 * combining character is whole. */
void vtwide_text(struct vtskip *s, unsigned char c)
{
	if (c < 0x80) {
		s->glyph = 1;
		s->u8_need = 0;
	} else if (mark_end(s, c)) {
		s->glyph += 2; /* it fits: see vtskip_unsafe */
		s->u8_need = 0;
	} else if (c < 0xc0 && s->u8_need > 0) {
		s->u8_cp = s->u8_cp << 6 | (c & 0x3fu);
		if (--s->u8_need == 0 && spacing(s->u8_cp))
			s->glyph = 2;
	} else if (c < 0xfe) { /* libvterm's decoder ignores 0xfe, 0xff */
		s->u8_need = c < 0xc0 ? 0 :
			     c < 0xe0 ? 1 :
			     c < 0xf0 ? 2 :
			     c < 0xf8 ? 3 :
			     c < 0xfc ? 4 :
					5;
		s->u8_cp = c & (0x3fu >> s->u8_need);
	}
	if (s->glyph < 2 && c >= 0x80)
		s->glyph = 2;
	if (c == 0xe3)
		s->e3 = 1;
	else if (s->e3 == 1 && (c == 0x80 || c == 0x82))
		s->e3 = c == 0x80 ? 2 : 3;
	else if (c < 0xfe)
		s->e3 = 0;
}

void vtwide_take(struct vtskip *s, unsigned char c)
{
	if (c < 0x20 || c == 0x7f)
		s->glyph = 0;
	else
		vtwide_text(s, c);
}

/* Whether a wide mark fits after m and the bytes of p[from, to) that
 * come before its last byte. */
static bool mark_fits(struct vtskip m, const char *p, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		vtwide_take(&m, (unsigned char)p[k]);
	return m.glyph + 2 <= m.cols;
}

bool vtwide_held(const struct vtskip *m, const char *p, size_t i, size_t n)
{
	for (size_t k = i + 1; k < n && k < i + 3; k++)
		if (!continuation((unsigned char)p[k]))
			return false;
	return i + 2 >= n ||
	       !wide_mark((unsigned char)p[i + 1], (unsigned char)p[i + 2]) ||
	       mark_fits(*m, p, i, i + 2);
}

size_t vtwide_rest(const struct vtskip *s, const char *p, size_t n)
{
	size_t need = s->e3 == 1 ? 2 : 1, k;
	bool mark;

	for (k = 0; k < need && k < n; k++)
		if (!continuation((unsigned char)p[k]))
			return 0;
	if (k < need)
		return n;
	mark = s->e3 == 1 ?
		       wide_mark((unsigned char)p[0], (unsigned char)p[1]) :
		       mark_end(s, (unsigned char)p[0]);
	return mark && !mark_fits(*s, p, 0, need - 1) ? 0 : need;
}

void vtwide_word(struct vtskip *m, const char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	if ((w & 0x8080808080808080u) == 0) {
		m->glyph = 1;
		m->u8_need = 0;
		m->e3 = 0;
		return;
	}
	for (int k = 0; k < 8; k++)
		vtwide_text(m, (unsigned char)p[k]);
}

bool vtwide_bad_end(const struct vtskip *s, unsigned char c)
{
	return mark_end(s, c) && s->glyph + 2 > s->cols;
}

bool vtwide_bad_at(const struct vtskip *s, const char *p, size_t i, size_t n)
{
	bool in_text = s->state == VTSKIP_GROUND ||
		       (s->state == VTSKIP_STRING && s->sos);

	if (!in_text)
		return false;
	if (p[i] == (char)0xe3)
		return i + 2 < n &&
		       wide_mark((unsigned char)p[i + 1],
				 (unsigned char)p[i + 2]) &&
		       !mark_fits(*s, p, i, i + 2);
	return s->e3 == 1 && i + 1 < n &&
	       wide_mark((unsigned char)p[i], (unsigned char)p[i + 1]) &&
	       !mark_fits(*s, p, i, i + 1);
}

char vtwide_instead(unsigned char a, unsigned char b)
{
	return (char)(a == 0x82 ? b + 2 : 0x80); /* U+309B, U+309C, U+3000 */
}
