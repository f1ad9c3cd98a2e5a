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
	bool lr_margins;    /* DECLRMM on (CSI ? 69 h) */
	bool shift;	    /* SS2 or SS3 came: a run may take G2, G3 */
	bool sos;	    /* the string is SOS, PM or APC: text to libvterm */
	bool rep;	    /* the last character printed is printable ASCII */
	bool c2;	    /* the last byte was text 0xc2 (a C1 may follow) */
	bool dcs;	    /* the string is a DCS */
	int rq;		    /* the "$q" in it (DECRQSS): 0, 1, 2 for more */
	unsigned char rq_prev, rq_tail[2]; /* its last byte; after "$q" */
	int rq_tail_n;			   /* bytes after "$q", up to 3 */
};

void vtskip_init(struct vtskip *s, int rows);
/* The screen's height changed (libvterm keeps a set region set). */
void vtskip_rows(struct vtskip *s, int rows);
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
 * (else its next byte is checked: see vtskip_unsafe); it changes no
 * state of the scanner's. */
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
 * else below leaves the 0xc2 in a decoder for later. */
bool vtskip_unsafe(const struct vtskip *s, unsigned char c);
/* What goes to libvterm instead of the unsafe byte c (through
 * vtskip_scan too), into out (2 bytes); its length. Nothing for a
 * separator and for a C1 code point's second byte; CAN for a REP's final
 * byte and a DECRQSS's end, which ends the sequence (whose start
 * libvterm may have) unperformed; after a 0xc2 that a byte below 0x80
 * breaks, 0xc3 and that byte: the 0xc3 takes the place of the 0xc2 in
 * whichever decoder has it (and makes a printable character with any
 * second byte). */
size_t vtskip_instead(const struct vtskip *s, unsigned char c, char *out);
/* The plain text p (n bytes) went to libvterm without vtskip_scan (it
 * was held): what a REP would repeat. */
void vtskip_text(struct vtskip *s, const char *p, size_t n);
/* Takes the bytes of p, in order, and returns how many: all n, or (when
 * stop) the first byte and those after it up to the first that
 * vtskip_plain would take; never an unsafe byte (it stops before). */
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
