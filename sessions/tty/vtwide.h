/*
 * vtwide.h - how wide the last character libvterm printed may be, and
 * the wide marks (combining characters libvterm counts two columns wide)
 * that would make it wider than the screen: the escape scanner's
 * (vtskip.h) fields glyph, e3, u8_need and u8_cp, kept by these.
 */
#ifndef SFS_VTWIDE_H
#define SFS_VTWIDE_H

#include <stdbool.h>
#include <stddef.h>
#include "sessions/tty/vtskip.h"

/* A byte of text (from 0x20, not 0x7f) that libvterm prints. */
void vtwide_text(struct vtskip *s, unsigned char c);
/* A byte of plain text (vtskip_is_plain): a control ends the run. */
void vtwide_take(struct vtskip *s, unsigned char c);
/* The 8 bytes at p, plain and none of them a control, 0xc2 or 0xe3 (a
 * word of ASCII at once). */
void vtwide_word(struct vtskip *s, const char *p);
/* Whether the 0xe3 at p[i] (of n), after m, may be held: the start of a
 * character, or at p's end of what the next bytes may complete (held
 * too, so that they reach libvterm in one write), a wide mark only if
 * it fits. */
bool vtwide_held(const struct vtskip *m, const char *p, size_t i, size_t n);
/* After an 0xe3 (s->e3): where the character ends in p, if it may be
 * held (as vtwide_held); 0 if not, n while it is not whole. */
size_t vtwide_rest(const struct vtskip *s, const char *p, size_t n);
/* Whether text byte c would end a wide mark that does not fit. */
bool vtwide_bad_end(const struct vtskip *s, unsigned char c);
/* Whether p[i] (of n) begins a wide mark whole in p that does not fit,
 * or continues one whose 0xe3 came before, in text. */
bool vtwide_bad_at(const struct vtskip *s, const char *p, size_t i, size_t n);
/* The last byte of what replaces the wide mark 0xe3 a b: its spacing
 * form (U+309B, U+309C) or an ideographic space (U+3000). */
char vtwide_instead(unsigned char a, unsigned char b);

#endif
