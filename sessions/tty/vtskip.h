/*
 * vtskip.h - which of what a program prints the screen (term.c) may skip:
 * an escape scanner over every byte, kept across chunks, that mirrors
 * libvterm 0.1.4's parser closely enough to say when a byte is plain
 * text in the ground state and whether scroll margins may be set; and
 * where a run of plain text may be cut so that what comes before the cut
 * can never be seen again.
 */
#ifndef SFS_VTSKIP_H
#define SFS_VTSKIP_H

#include <stdbool.h>
#include <stddef.h>

enum vtskip_state {
	VTSKIP_GROUND,
	VTSKIP_ESC,
	VTSKIP_CSI_LEADER,
	VTSKIP_CSI_ARGS,
	VTSKIP_CSI_INTERMED,
	VTSKIP_STRING,	      /* OSC, DCS, and SOS, PM, APC (here only) */
	VTSKIP_ESC_IN_STRING, /* an ESC in one: ST if '\' follows */
};

struct vtskip {
	enum vtskip_state state;
	int rows;	    /* of the screen: DECSTBM 1;rows is no margin */
	bool esc_intermed;  /* ESC then intermediates (ESC ( 0 ...) */
	bool leader, qmark; /* CSI leader bytes; exactly one, '?' */
	bool intermed;	    /* CSI intermediates */
	int argc;	    /* arguments so far, libvterm's csi_argi */
	long arg[2];	    /* the first two; -1 while missing */
	bool big;	    /* an argument past what is checked exactly */
	bool tb_margins;    /* DECSTBM other than the full screen */
	int top, bottom;    /* its region as libvterm's; top -1: unknown */
	bool lr_margins;    /* DECLRMM on (CSI ? 69 h) */
	bool shift;	    /* SS2 or SS3 came: a run may take G2, G3 */
	bool sos;	    /* the string is SOS, PM or APC: text to libvterm */
	bool rep;	    /* the last character printed is printable ASCII */
	bool c2;	    /* the last byte was text 0xc2 (a C1 may follow) */
	int cols;	    /* of the screen: no character may be wider */
	int e3;		    /* text 0xe3 (1), then 0x80 (2) or 0x82 (3) */
	int glyph;	    /* the last character's width, at most */
	int u8_need;	    /* libvterm's UTF-8 decoding: bytes still due */
	unsigned int u8_cp; /* and the code point's bits so far */
	bool dcs;	    /* the string is a DCS */
	int rq;		    /* the "$q" in it (DECRQSS): 0, 1, 2 for more */
	unsigned char rq_prev, rq_tail[2]; /* its last byte; after "$q" */
	int rq_tail_n;			   /* bytes after "$q", up to 3 */
};

void vtskip_init(struct vtskip *s, int cols, int rows);
/* The screen's size changed (libvterm keeps a set region set). */
void vtskip_size(struct vtskip *s, int cols, int rows);
/* Whether scroll margins may be in effect (when unsure: yes), or a
 * single shift (SS2, SS3) came since the last RIS: text is not held. */
bool vtskip_margins(const struct vtskip *s);
/* Plain: 0x20-0x7e, bytes from 0x80 (UTF-8), \r, \n and \t. */
static inline bool vtskip_is_plain(unsigned char c)
{
	return (c >= 0x20 && c != 0x7f) || c == '\r' || c == '\n' || c == '\t';
}
/* The length of p's longest prefix that is plain text in the ground
 * state with no margins, with a 0xc2 only as the start of U+00A0-U+00BF
 * and a 0xe3 only as the start of a character, whole or cut at p's end
 * (so that its bytes reach libvterm in one write), and no wide mark that
 * does not fit (see vtskip_unsafe: else the bytes that follow are
 * checked); it changes no state of the scanner's. */
size_t vtskip_plain(const struct vtskip *s, const char *p, size_t n);
/* Whether c must not reach libvterm 0.1.4: a 16th separator of a CSI's
 * arguments, which it would write past their array (and crash); what
 * follows it is taken as if it had not come. Or the final byte of a REP
 * (CSI Ps b) when the last character printed is not known to be of width
 * 1: libvterm repeats it by advancing its width, and loops without end
 * when that is 0 (none printed yet, a combining character) or less. Or
 * a control (but BEL that ends it), NUL or DEL in an OSC or DCS: libvterm
 * would read past the write at its ST. Or the end (BEL, ST's '\\') of
 * a DCS with a DECRQSS ("$q") that libvterm 0.1.4 does not know, whose
 * answer it formats with an int for a string pointer; as it takes for the
 * DCS what came in the write of its end, any "$q" in it must begin a
 * known request that ends the DCS. Or a byte below 0xa0 after a text
 * 0xc2: 0x80-0x9f makes a C1 code point, of width -1 to libvterm, whose
 * cursor then leaves the screen to its left (and writes there); anything
 * else below leaves the 0xc2 in a decoder for later. Or the last byte of
 * a wide mark (U+302A-U+302F, U+3099, U+309A: combining characters that
 * libvterm counts two columns wide, and adds to the width of the
 * character they follow) that would make its character wider than the
 * screen: libvterm writes such a character past the end of its row (and
 * crashes). Or a byte below 0x80 after a text 0xe3, or 0xe3 and 0x80 or
 * 0x82 (a wide mark's start), which would leave them in a decoder for
 * a later byte to complete. */
bool vtskip_unsafe(const struct vtskip *s, unsigned char c);
/* What goes to libvterm instead of the unsafe byte c (through
 * vtskip_scan too), into out (2 bytes); its length. Nothing for a
 * separator and for a C1 code point's second byte; CAN for a REP's final
 * byte and a DECRQSS's end, which ends the sequence (whose start
 * libvterm may have) unperformed; after a 0xc2 or the start of a wide
 * mark that a byte below 0x80 breaks, 0xc3 and that byte: the 0xc3 takes
 * the place of the 0xc2 (or ends the mark) in whichever decoder has it
 * (and makes a printable character with any second byte). For the last
 * byte of a wide mark that does not fit, the last byte of its spacing
 * form (U+309B, U+309C) or of an ideographic space (U+3000): a character
 * of its own, two columns wide. */
size_t vtskip_instead(const struct vtskip *s, unsigned char c, char *out);
/* What of p's start (n bytes) must not reach libvterm, into *took (0:
 * nothing), and what goes instead into out (3 bytes); its length. An
 * unsafe byte and vtskip_instead's; or a wide mark whole in p that
 * vtskip_unsafe would take as unsafe at its last byte, and the whole
 * character of vtskip_instead's, so that it reaches the decoder that the
 * mark's first bytes would have reached (a mark cut between writes gets
 * the replacement of its last byte only, and may show as U+FFFD). */
size_t vtskip_replace(const struct vtskip *s, const char *p, size_t n,
		      char *out, size_t *took);
/* The plain text p (n bytes) went to libvterm without vtskip_scan (it
 * was held): what a REP would repeat, how wide its last character is. */
void vtskip_text(struct vtskip *s, const char *p, size_t n);
/* Whether c is the final byte of a switch to the alternate screen (CSI
 * ? 47 h, ? 1047 h or ? 1049 h, in its first two arguments): the screen
 * keeps the main one's drawing before (termstate.c). */
bool vtskip_alt_next(const struct vtskip *s, unsigned char c);
/* Takes the bytes of p, in order, and returns how many: all n, or (when
 * stop) the first byte and those after it up to the first that
 * vtskip_plain would take; never an unsafe byte, nor the start of what
 * vtskip_replace replaces, nor but as its first byte the end of a switch
 * to the alternate screen (it stops before). */
size_t vtskip_scan(struct vtskip *s, const char *p, size_t n, bool stop);
/*
 * Where the plain text p (n bytes, written in the ground state with no
 * margins) may be cut: the offset just after a "\r\n" such that feeding
 * "\r" and what follows the cut leaves the screen (rows high), the last
 * sb_max scrolled-off lines and the cursor exactly as feeding all of p
 * would; 0 when there is none. The text after the cut must hold, after
 * rows more newlines, a line of printable ASCII, "\r\n" and a printable
 * byte (from there both feeds are in the same state but for the cells,
 * libvterm's decoders too: see vtskip.c), then rows + sb_max more
 * newlines (which push every differing row off the
 * screen and out of the scrolled-off lines). The latest such cut.
 */
size_t vtskip_cut(const char *p, size_t n, int rows, size_t sb_max);

#endif
