/*
 * pattern.c - the patterns of expect files: bounded extended regexes
 * and their timeouts (pattern_check, pattern_compile), and the search of
 * a growing file's lines for the first one that matches (a run's or a
 * process's output, read from its spool as it grows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pattern.h"

/* The index of the ']' that closes the bracket expression at p[i]. */
static size_t bracket_end(const char *p, size_t len, size_t i)
{
	size_t j = i + 1;

	if (j < len && p[j] == '^')
		j++;
	if (j < len && p[j] == ']')
		j++;
	for (; j < len && p[j] != ']'; j++) {
		char *close = NULL;

		if (p[j] == '[' && j + 1 < len && strchr(":.=", p[j + 1]))
			close = memmem(p + j + 2, len - j - 2,
				       (char[]){ p[j + 1], ']' }, 2);
		if (close)
			j = (size_t)(close - p) + 1;
	}
	return j < len ? j : len - 1;
}

/* The number an interval {m,n} repeats its atom (the larger bound) at
 * p[*i] (the '{'), *i moved to its '}'; 0 when it is not an interval. */
static long interval(const char *p, size_t len, size_t *i)
{
	long m = 0, n = -1;
	size_t j = *i + 1;

	for (; j < len && p[j] >= '0' && p[j] <= '9' && m <= PATTERN_COST_MAX; j++)
		m = m * 10 + (p[j] - '0');
	if (j < len && p[j] == ',')
		for (n = 0, j++; j < len && p[j] >= '0' && p[j] <= '9' &&
				 n <= PATTERN_COST_MAX;
		     j++)
			n = n * 10 + (p[j] - '0');
	if (j >= len || p[j] != '}' || j == *i + 1)
		return 0;
	*i = j;
	return n > m ? n : n == 0 && j > 2 && p[j - 1] == ',' ? m + 1 : m;
}

int pattern_check(const char *p, size_t len)
{
	long stack[64], cur = 0, last = 0, plain = 0, k;
	int depth = 0;

	if (len > PATTERN_MAX)
		return -E2BIG;
	for (size_t i = 0; i < len && cur - plain <= PATTERN_COST_MAX; i++) {
		if (p[i] == '\\' && i + 1 < len && p[i + 1] >= '1' &&
		    p[i + 1] <= '9')
			return -ENOTSUP;
		if (p[i] == '(' && depth < 64) {
			stack[depth++] = cur;
			cur = 0;
		} else if (p[i] == ')' && depth > 0) {
			last = cur;
			cur = stack[--depth] + last;
		} else if (p[i] == '{' && (k = interval(p, len, &i)) > 0) {
			cur += last * (k - 1);
			last *= k;
		} else if (!strchr("*+?|^$", p[i])) {
			i = p[i] == '[' ? bracket_end(p, len, i) :
					  i + (p[i] == '\\');
			last = 1;
			cur++;
			plain++;
		}
	}
	return cur - plain > PATTERN_COST_MAX || depth >= 64 ? -E2BIG : 0;
}

void pattern_split_timeout(const char *p, size_t *len, uint64_t *ms)
{
	size_t i = *len;
	uint64_t v = 0;

	while (i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9')
		i--;
	if (i == *len || i < 2 || p[i - 1] != ' ' || *len - i > 9)
		return;
	for (size_t j = i; j < *len; j++)
		v = v * 10 + (uint64_t)(p[j] - '0');
	*ms = v;
	*len = i - 1;
}

int pattern_compile(const char *pat, size_t len, regex_t *re, char *why,
		    size_t wlen)
{
	int cost = pattern_check(pat, len);
	char *z = cost ? NULL : strndup(pat, len), msg[96];
	int rc = z ? regcomp(re, z, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;

	free(z);
	if (cost < 0) {
		snprintf(why, wlen, "is refused: %s",
			 cost == -ENOTSUP ? "a back-reference" :
					    "too long or too large");
		return -EINVAL;
	}
	if (rc == REG_ESPACE)
		return -ENOMEM;
	if (rc != 0) {
		regerror(rc, re, msg, sizeof(msg));
		snprintf(why, wlen, "is not an extended regex: %s", msg);
		return -EINVAL;
	}
	return 0;
}

/* Tries line (n bytes, buf[n] writable) against re. */
static bool line_matches(char *line, size_t n, const regex_t *re)
{
	char keep = line[n];
	bool yes;

	line[n] = '\0';
	yes = regexec(re, line, 0, NULL, 0) == 0;
	line[n] = keep;
	return yes;
}

/* Searches the n bytes of buf (read at s->off): the matching line, or
 * NULL with s->off moved past the complete lines (and a long line's
 * start). */
static char *scan_buf(struct pattern_scan *s, char *buf, size_t n, bool last,
		      const regex_t *re)
{
	size_t at = 0;

	while (at < n) {
		char *nl = memchr(buf + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (buf + at)) + 1 : n - at;
		bool whole = nl || last || len >= PATTERN_LINE_MAX;

		if (!whole)
			break;
		if (!s->skip && line_matches(buf + at, len - (nl != NULL), re)) {
			s->off += len;
			s->skip = !nl && !last;
			return strndup(buf + at, len);
		}
		s->skip = !nl && !last;
		s->off += len;
		at += len;
	}
	return NULL;
}

char *pattern_scan_fd(struct pattern_scan *s, int fd, uint64_t end, bool final,
		      const regex_t *re, int *err)
{
	char *buf = malloc(PATTERN_LINE_MAX + 1), *line = NULL;
	ssize_t n = 0;

	*err = buf ? 0 : -ENOMEM;
	while (buf && !line && s->off < end) {
		size_t want = end - s->off < PATTERN_LINE_MAX ?
				      (size_t)(end - s->off) :
				      PATTERN_LINE_MAX;
		uint64_t before = s->off;

		n = pread(fd, buf, want, (off_t)s->off);
		if (n <= 0) {
			*err = n < 0 ? -errno : 0;
			break;
		}
		line = scan_buf(s, buf, (size_t)n,
				final && s->off + (uint64_t)n >= end, re);
		if (!line && s->off == before)
			break; /* an unfinished line: wait for the rest */
	}
	free(buf);
	return line;
}
