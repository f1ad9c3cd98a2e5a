/* export_fmt.h - writes variables the way bash's `export -p` prints
 * them, in both of its quotings, so that the harnesses can check that
 * sessions/core/envmap.c reads back what bash would have written. */
#ifndef SFS_EXPORT_FMT_H
#define SFS_EXPORT_FMT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "sessions/core/strbuf.h"

/* How to print: which line prefix, and the quoting of values. */
struct export_style {
	unsigned prefix; /* index into export_prefixes */
	bool ansic;	 /* $'...' (bash does it for control characters) */
	bool hex;	 /* \xHH rather than \ooo for other bytes */
	bool upper_e;	 /* \E rather than \e for ESC */
};

static const char *const export_prefixes[] = {
	"declare -x ",
	"declare -rx ",
	"export ",
	"export -r ",
};

static inline void export_fmt_ansic(struct strbuf *b, const char *v, size_t len,
				    const struct export_style *st)
{
	static const char from[] = "\a\b\f\n\r\t\v\\'";
	static const char to[] = "abfnrtv\\'";

	sb_add(b, "$'", 2);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];
		const char *hit = c ? strchr(from, c) : NULL;

		if (hit)
			sb_addf(b, "\\%c", to[hit - from]);
		else if (c == 033)
			sb_add(b, st->upper_e ? "\\E" : "\\e", 2);
		else if (c < 0x20 || c >= 0x7f)
			sb_addf(b, st->hex ? "\\x%02x" : "\\%03o", c);
		else
			sb_add(b, &v[i], 1);
	}
	sb_add(b, "'", 1);
}

static inline void export_fmt_dquoted(struct strbuf *b, const char *v,
				      size_t len)
{
	sb_add(b, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		if (v[i] && strchr("\"\\$`", v[i]))
			sb_add(b, "\\", 1);
		sb_add(b, &v[i], 1);
	}
	sb_add(b, "\"", 1);
}

/* Appends one line "PREFIX NAME=QUOTED\n". */
static inline void export_fmt(struct strbuf *b, const char *name, const char *v,
			      size_t len, const struct export_style *st)
{
	unsigned np = sizeof(export_prefixes) / sizeof(*export_prefixes);

	sb_addf(b, "%s%s=", export_prefixes[st->prefix % np], name);
	if (st->ansic)
		export_fmt_ansic(b, v, len, st);
	else
		export_fmt_dquoted(b, v, len);
	sb_add(b, "\n", 1);
}

#endif
