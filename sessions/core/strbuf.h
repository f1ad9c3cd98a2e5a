/*
 * strbuf.h - a growable text buffer for building reports.
 */
#ifndef SFS_STRBUF_H
#define SFS_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *p;
	size_t len, cap;
	int err; /* first error (-ENOMEM), sticky */
};

void sb_add(struct strbuf *b, const void *s, size_t n);
void sb_addf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Returns the text (NUL-terminated) and its length, or NULL on error. */
char *sb_take(struct strbuf *b, size_t *len);
/* Appends s (n bytes) as a JSON string; invalid UTF-8 becomes U+FFFD.
 * Returns 0 or -ENOMEM. */
int sb_add_json(struct strbuf *b, const char *s, size_t n);

#endif
