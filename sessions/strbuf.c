/*
 * strbuf.c - growable text buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strbuf.h"

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
