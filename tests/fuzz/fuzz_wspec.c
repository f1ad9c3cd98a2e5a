/* fuzz_wspec.c - the spec of a watch (sessions/core/wspec.c), written to
 * watches/NAME/spec: any bytes. An accepted spec has a canonical path
 * inside the workspace, known kinds, bounded non-empty globs, and
 * written again (as spec reads back) it parses to the same spec; a
 * refusal has its reason in one line. The path test runs on paths made
 * of the input. */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/core/wspec.h"

static void check_path(const char *p)
{
	FUZZ_CHECK(p[0] != '/', "'%s' is absolute", p);
	FUZZ_CHECK(!strstr(p, "//"), "'%s' has an empty component", p);
	FUZZ_CHECK(!*p || p[strlen(p) - 1] != '/', "'%s' ends with /", p);
	for (const char *c = p; *c; c += strcspn(c, "/"), c += *c == '/') {
		size_t n = strcspn(c, "/");

		FUZZ_CHECK(!(n == 1 && c[0] == '.'), "'%s': a . component", p);
		FUZZ_CHECK(!(n == 2 && c[0] == '.' && c[1] == '.'),
			   "'%s': a .. component", p);
	}
}

static void check_globs(char *const *g, size_t n)
{
	size_t i = 0;

	for (; g[i]; i++)
		FUZZ_CHECK(*g[i] && !strchr(g[i], '\n'), "glob %zu", i);
	FUZZ_CHECK(i == n, "%zu globs, %zu counted", i, n);
}

static bool same(const struct wspec *a, const struct wspec *b)
{
	if (strcmp(a->path, b->path) || a->recursive != b->recursive ||
	    a->events != b->events || a->ninc != b->ninc || a->nexc != b->nexc)
		return false;
	for (size_t i = 0; i < a->ninc; i++)
		if (strcmp(a->inc[i], b->inc[i]))
			return false;
	for (size_t i = 0; i < a->nexc; i++)
		if (strcmp(a->exc[i], b->exc[i]))
			return false;
	return true;
}

static void check_accepted(const struct wspec *s, const char *data,
			   size_t size)
{
	struct wspec again;
	char why[200], path[256];
	size_t len, n = size < 200 ? size : 200;
	char *text;

	check_path(s->path);
	FUZZ_CHECK(s->events && !(s->events & ~WEV_ALL), "events %#x",
		   s->events);
	FUZZ_CHECK(s->ninc + s->nexc <= WSPEC_GLOBS_MAX, "%zu globs",
		   s->ninc + s->nexc);
	check_globs(s->inc, s->ninc);
	check_globs(s->exc, s->nexc);
	text = wspec_text(s, &len);
	if (!text)
		return;
	FUZZ_CHECK(wspec_parse(text, len, &again, why, sizeof(why)) == 0,
		   "its own text is refused: %s", why);
	FUZZ_CHECK(same(s, &again), "read back, it is another spec:\n%s",
		   text);
	wspec_free(&again);
	free(text);
	/* paths of the input's bytes: the test ends, and a path outside
	 * the watch's is never taken */
	snprintf(path, sizeof(path), "%.*s", (int)n, data);
	wspec_takes(s, path);
	if (*s->path && strncmp(path, s->path, strlen(s->path)))
		FUZZ_CHECK(!wspec_takes(s, path), "'%s' is outside '%s'", path,
			   s->path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wspec s;
	char why[200];
	int rc = wspec_parse((const char *)data, size, &s, why, sizeof(why));

	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM, "rc %d", rc);
	if (rc == 0) {
		check_accepted(&s, (const char *)data, size);
		wspec_free(&s);
	} else if (rc == -EINVAL) {
		FUZZ_CHECK(*why, "a refusal without a reason");
		FUZZ_CHECK(strlen(why) < sizeof(why), "reason unterminated");
	}
	return 0;
}
