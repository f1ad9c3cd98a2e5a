/*
 * strbuf.c - growable text buffer, and JSON strings appended to one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/strbuf.h"

static int reserve(struct strbuf *b, size_t n)
{
	size_t nc;
	char *np;

	if (b->err)
		return b->err;
	if (b->len + n + 1 <= b->cap)
		return 0;
	nc = b->cap ? b->cap : 256;
	while (nc < b->len + n + 1)
		nc *= 2;
	np = realloc(b->p, nc);
	if (!np)
		return b->err = -ENOMEM;
	b->p = np;
	b->cap = nc;
	return 0;
}

void sb_add(struct strbuf *b, const void *s, size_t n)
{
	if (reserve(b, n) < 0)
		return;
	if (n) /* s may be NULL then (an empty buffer's p) */
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sb_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *sb_take(struct strbuf *b, size_t *len)
{
	char *p;

	if (reserve(b, 0) < 0) {
		free(b->p);
		return NULL;
	}
	b->p[b->len] = '\0';
	p = b->p;
	*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

int sb_add_json(struct strbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	sb_add(b, "\"", 1);
	while (i < n) {
		size_t k = utf8_len(u + i, n - i);

		if (k == 0) {
			sb_add(b, "\\ufffd", 6);
			i++;
		} else if (u[i] == '"' || u[i] == '\\') {
			sb_add(b, "\\", 1);
			sb_add(b, s + i++, 1);
		} else if (u[i] == '\n') {
			sb_add(b, "\\n", 2), i++;
		} else if (u[i] == '\t') {
			sb_add(b, "\\t", 2), i++;
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			sb_addf(b, "\\u%04x", u[i++]);
		} else {
			sb_add(b, s + i, k);
			i += k;
		}
	}
	sb_add(b, "\"", 1);
	return b->err;
}
