/*
 * wspec.c - the parse of a watch's spec and its test of paths (see
 * wspec.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strbuf.h"
#include "wspec.h"

static const char *const kinds[] = { "create", "modify",     "delete",
				     "move",   "attrib",     "close_write" };

unsigned wspec_kind(const char *name, size_t len)
{
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == len && !memcmp(kinds[i], name, len))
			return 1u << i;
	return 0;
}

const char *wspec_kind_name(unsigned kind)
{
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kind == 1u << i)
			return kinds[i];
	return "?";
}

int wspec_default(struct wspec *s)
{
	*s = (struct wspec){ .recursive = true, .events = WEV_ALL };
	s->path = strdup("");
	s->inc = calloc(1, sizeof(char *));
	s->exc = calloc(1, sizeof(char *));
	if (s->path && s->inc && s->exc)
		return 0;
	wspec_free(s);
	return -ENOMEM;
}

void wspec_free(struct wspec *s)
{
	for (size_t i = 0; i < s->ninc; i++)
		free(s->inc[i]);
	for (size_t i = 0; i < s->nexc; i++)
		free(s->exc[i]);
	free(s->inc);
	free(s->exc);
	free(s->path);
	*s = (struct wspec){ 0 };
}

/* A path relative to files/: no empty, "." or ".." component but a
 * lone ".", never absolute. Its canonical form (no "." components nor
 * repeated or final '/') replaces it in place. */
static int norm_path(char *p, char *why, size_t whylen)
{
	char *out = p, *in = p;

	if (*p == '/') {
		snprintf(why, whylen, "path %.80s: absolute (give it "
				      "relative to files/)", p);
		return -EINVAL;
	}
	while (*in) {
		size_t n = strcspn(in, "/");

		if (n == 2 && in[0] == '.' && in[1] == '.') {
			snprintf(why, whylen, "path: a '..' component");
			return -EINVAL;
		}
		if (n && !(n == 1 && in[0] == '.')) {
			if (out != p)
				*out++ = '/';
			memmove(out, in, n);
			out += n;
		}
		in += n;
		in += *in == '/';
	}
	*out = '\0';
	/* "./ x" or "x /.": a blank the line's own trim would not keep */
	if (out > p && (strchr(" \t\r", *p) || strchr(" \t\r", out[-1]))) {
		snprintf(why, whylen, "path: begins or ends with a blank");
		return -EINVAL;
	}
	return 0;
}

static int add_glob(char ***v, size_t *n, const char *g, size_t len)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(char *));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strndup(g, len);
	if (!nv[*n])
		return -ENOMEM;
	nv[++*n] = NULL;
	return 0;
}

static int parse_events(const char *a, size_t len, unsigned *ev, char *why,
			size_t whylen)
{
	size_t i = 0;

	*ev = 0;
	while (i < len) {
		size_t n = 0;
		unsigned k;

		while (i + n < len && !strchr(" \t,", a[i + n]))
			n++;
		k = wspec_kind(a + i, n);

		if (n && !k) {
			snprintf(why, whylen, "events: '%.*s' is not one of "
					      "create modify delete move "
					      "attrib close_write",
				 (int)(n > 40 ? 40 : n), a + i);
			return -EINVAL;
		}
		*ev |= k;
		i += n + (n < len - i);
	}
	if (*ev)
		return 0;
	snprintf(why, whylen, "events: none named");
	return -EINVAL;
}

/* One line: its key (klen bytes at l) and its argument (a, alen). */
static int one(struct wspec *s, const char *l, size_t klen, const char *a,
	       size_t alen, char *why, size_t whylen)
{
#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(l, k, klen))
	if (KEY("path")) {
		char *p = strndup(a, alen);

		if (!p || norm_path(p, why, whylen) < 0) {
			free(p);
			return p ? -EINVAL : -ENOMEM;
		}
		free(s->path);
		s->path = p;
		return 0;
	}
	if (KEY("recursive") && alen == 1 && (*a == '0' || *a == '1')) {
		s->recursive = *a == '1';
		return 0;
	}
	if ((KEY("include") || KEY("exclude")) && alen) {
		if (s->ninc + s->nexc >= WSPEC_GLOBS_MAX) {
			snprintf(why, whylen, "more than %d globs",
				 WSPEC_GLOBS_MAX);
			return -EINVAL;
		}
		return *l == 'i' ? add_glob(&s->inc, &s->ninc, a, alen) :
				   add_glob(&s->exc, &s->nexc, a, alen);
	}
	if (KEY("events"))
		return parse_events(a, alen, &s->events, why, whylen);
#undef KEY
	snprintf(why, whylen, "'%.*s' is not path P, recursive 0|1, "
			      "include GLOB, exclude GLOB or events KIND...",
		 (int)(klen + (alen ? alen + 1 : 0) > 60 ?
			       60 :
			       klen + (alen ? alen + 1 : 0)),
		 l);
	return -EINVAL;
}

/* A line without its newline: blanks around it are dropped. */
static int line(struct wspec *s, const char *l, size_t len, char *why,
		size_t whylen)
{
	size_t k, a;

	while (len && (*l == ' ' || *l == '\t'))
		l++, len--;
	while (len && (l[len - 1] == ' ' || l[len - 1] == '\t' ||
		       l[len - 1] == '\r'))
		len--;
	if (!len || *l == '#')
		return 0;
	if (memchr(l, '\0', len)) {
		snprintf(why, whylen, "a NUL byte in a line");
		return -EINVAL;
	}
	if (len > WSPEC_LINE_MAX) {
		snprintf(why, whylen, "a line over %d bytes", WSPEC_LINE_MAX);
		return -EINVAL;
	}
	for (k = 0; k < len && l[k] != ' ' && l[k] != '\t'; k++)
		;
	for (a = k; a < len && (l[a] == ' ' || l[a] == '\t'); a++)
		;
	return one(s, l, k, l + a, len - a, why, whylen);
}

int wspec_parse(const char *buf, size_t len, struct wspec *s, char *why,
		size_t whylen)
{
	int rc = wspec_default(s);

	if (whylen)
		*why = '\0';
	for (size_t i = 0, start = 0; rc == 0 && i <= len; i++) {
		if (i < len && buf[i] != '\n')
			continue;
		rc = line(s, buf + start, i - start, why, whylen);
		start = i + 1;
	}
	if (rc == -ENOMEM && whylen)
		snprintf(why, whylen, "out of memory");
	if (rc < 0)
		wspec_free(s);
	return rc;
}

/* Whether glob g (no '/') matches a component of sub. */
static bool any_component(const char *g, const char *sub)
{
	char part[WSPEC_LINE_MAX + 1];

	while (*sub) {
		size_t n = strcspn(sub, "/");

		if (n < sizeof(part)) {
			memcpy(part, sub, n);
			part[n] = '\0';
			if (fnmatch(g, part, 0) == 0)
				return true;
		}
		sub += n;
		sub += *sub == '/';
	}
	return false;
}

static bool matches(char *const *globs, const char *sub)
{
	for (; *globs; globs++)
		if (strchr(*globs, '/') ?
			    fnmatch(*globs, sub, FNM_PATHNAME) ==
				    0 :
			    any_component(*globs, sub))
			return true;
	return false;
}

bool wspec_takes(const struct wspec *s, const char *rel)
{
	size_t plen = strlen(s->path);
	const char *sub = rel;

	if (plen) {
		if (strncmp(rel, s->path, plen) || rel[plen] != '/')
			return false;
		sub = rel + plen + 1;
	}
	if (!*sub || (!s->recursive && strchr(sub, '/')))
		return false;
	if (s->ninc && !matches(s->inc, sub))
		return false;
	return !matches(s->exc, sub);
}

char *wspec_text(const struct wspec *s, size_t *len)
{
	struct strbuf b = { 0 };

	sb_addf(&b, "path %s\nrecursive %d\nevents", *s->path ? s->path : ".",
		s->recursive);
	for (unsigned k = 1; k & WEV_ALL; k <<= 1)
		if (s->events & k)
			sb_addf(&b, " %s", wspec_kind_name(k));
	sb_add(&b, "\n", 1);
	for (size_t i = 0; i < s->ninc; i++)
		sb_addf(&b, "include %s\n", s->inc[i]);
	for (size_t i = 0; i < s->nexc; i++)
		sb_addf(&b, "exclude %s\n", s->exc[i]);
	return sb_take(&b, len);
}
