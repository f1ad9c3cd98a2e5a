/*
 * jsonck.c - the check of a JSON text (jsonck.h): a descent that reads
 * each byte once, its depth bounded, so that text from a user (a
 * context's chart) is embedded in result.json only when it is JSON.
 */
#include <string.h>
#include "sessions/core/jsonck.h"

struct in {
	const char *p, *end;
};

static bool value(struct in *s, int depth);

static void blanks(struct in *s)
{
	while (s->p < s->end && strchr(" \t\r\n", *s->p) && *s->p)
		s->p++;
}

static bool take(struct in *s, char c)
{
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static bool digits(struct in *s)
{
	const char *at = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > at;
}

static bool number(struct in *s)
{
	take(s, '-');
	if (!take(s, '0') && !digits(s))
		return false;
	if (take(s, '.') && !digits(s))
		return false;
	if (take(s, 'e') || take(s, 'E')) {
		if (!take(s, '+'))
			take(s, '-');
		return digits(s);
	}
	return true;
}

static bool string(struct in *s)
{
	if (!take(s, '"'))
		return false;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p++;

		if (c == '"')
			return true;
		if (c < 0x20 || c >= 0x80)
			return false;
		if (c != '\\')
			continue;
		if (s->p >= s->end)
			return false;
		c = (unsigned char)*s->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, s->p++)
				if (s->p >= s->end ||
				    !strchr("0123456789abcdefABCDEF", *s->p) ||
				    !*s->p)
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return false;
}

/* The members of an array or an object, after its bracket, through its
 * closing one. */
static bool members(struct in *s, int depth, bool object)
{
	blanks(s);
	if (take(s, object ? '}' : ']'))
		return true;
	do {
		blanks(s);
		if (object && !(string(s) && (blanks(s), take(s, ':'))))
			return false;
		if (!value(s, depth))
			return false;
		blanks(s);
	} while (take(s, ','));
	return take(s, object ? '}' : ']');
}

static bool word(struct in *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return false;
	s->p += n;
	return true;
}

static bool value(struct in *s, int depth)
{
	blanks(s);
	if (s->p >= s->end)
		return false;
	switch (*s->p) {
	case '{':
	case '[':
		if (depth >= JSONCK_DEPTH_MAX)
			return false;
		return members(s, depth + 1, *s->p++ == '{');
	case '"':
		return string(s);
	case 't':
		return word(s, "true");
	case 'f':
		return word(s, "false");
	case 'n':
		return word(s, "null");
	default:
		return number(s);
	}
}

bool jsonck_valid(const char *p, size_t n)
{
	struct in s = { p, p + n };

	if (!value(&s, 0))
		return false;
	blanks(&s);
	return s.p == s.end;
}
