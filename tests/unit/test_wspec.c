/* test_wspec.c - a watch's spec (sessions/core/wspec.c): the default,
 * what each line sets, the refusals and their reasons, a parse that
 * never reads past its bytes, and which paths a spec takes (below its
 * path, recursive 0, globs with and without '/', include and exclude). */
#include <errno.h>
#include "sessions/core/wspec.h"
#include "unit.h"

/* wspec_parse of s, copied so that it ends at an inaccessible page. */
static int parse(const char *s, struct wspec *w, char *why)
{
	struct guarded g;
	size_t len = strlen(s);
	const char *p = guard_copy(&g, s, len);
	int rc = wspec_parse(p, len, w, why, 200);

	guard_free(&g);
	return rc;
}

START_TEST(lines)
{
	struct wspec w;
	char why[200];

	ck_assert_int_eq(parse("", &w, why), 0);
	ck_assert_str_eq(w.path, "");
	ck_assert(w.recursive);
	ck_assert_uint_eq(w.events, WEV_ALL);
	wspec_free(&w);
	ck_assert_int_eq(parse("# c\n\n path ./a//b/./ \nrecursive 0\n"
			       "include *.c\nexclude .git\nevents create,move\t"
			       "delete",
			       &w, why),
			 0);
	ck_assert_str_eq(w.path, "a/b");
	ck_assert(!w.recursive);
	ck_assert_uint_eq(w.events, WEV_CREATE | WEV_MOVE | WEV_DELETE);
	ck_assert_uint_eq(w.ninc, 1);
	ck_assert_str_eq(w.inc[0], "*.c");
	ck_assert_str_eq(w.exc[0], ".git");
	wspec_free(&w);
	ck_assert_int_eq(parse("path .\n", &w, why), 0);
	ck_assert_str_eq(w.path, "");
	wspec_free(&w);
}
END_TEST

START_TEST(refusals)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "path /etc", "absolute" },
		{ "path a/../b", "'..'" },
		{ "path ..", "'..'" },
		{ "recursive 2", "is not path P" },
		{ "recursive", "is not path P" },
		{ "include", "is not path P" },
		{ "events", "none named" },
		{ "events create bang", "'bang' is not one of" },
		{ "colour blue", "'colour blue'" },
		{ "path ./ x", "blank" },
	};
	struct wspec w;
	char why[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i].text, &w, why) == -EINVAL, "%s",
			      bad[i].text);
		ck_assert_msg(strstr(why, bad[i].why) && !strchr(why, '\n'),
			      "%s: %s", bad[i].text, why);
	}
}
END_TEST

static bool takes(const char *spec, const char *path)
{
	struct wspec w;
	char why[200];
	bool t;

	ck_assert_int_eq(parse(spec, &w, why), 0);
	t = wspec_takes(&w, path);
	wspec_free(&w);
	return t;
}

START_TEST(paths)
{
	ck_assert(takes("", "a"));
	ck_assert(takes("", "a/b/c"));
	ck_assert(!takes("", ""));
	ck_assert(takes("path sub", "sub/x"));
	ck_assert(!takes("path sub", "sub"));
	ck_assert(!takes("path sub", "subway/x"));
	ck_assert(!takes("path sub\nrecursive 0", "sub/d/x"));
	ck_assert(takes("path sub\nrecursive 0", "sub/x"));
	ck_assert(takes("include *.c", "d/x.c"));
	ck_assert(!takes("include *.c", "d/x.h"));
	ck_assert(!takes("exclude .git", ".git/objects/ab"));
	ck_assert(takes("exclude .git", "src/git"));
	ck_assert(takes("include src/*.c", "src/a.c"));
	ck_assert(!takes("include src/*.c", "src/d/a.c"));
	ck_assert(!takes("include *.c\nexclude skip*", "skip.c"));
	ck_assert(takes("path a\ninclude b/*", "a/b/x"));
}
END_TEST

START_TEST(text)
{
	struct wspec w, again;
	char why[200], *t;
	size_t len;

	ck_assert_int_eq(parse("path a b\nrecursive 0\nevents attrib\n"
			       "include x*\nexclude y",
			       &w, why),
			 0);
	t = wspec_text(&w, &len);
	ck_assert_str_eq(t, "path a b\nrecursive 0\nevents attrib\n"
			    "include x*\nexclude y\n");
	ck_assert_int_eq(parse(t, &again, why), 0);
	ck_assert_str_eq(again.path, "a b");
	ck_assert_uint_eq(again.events, WEV_ATTRIB);
	free(t);
	wspec_free(&w);
	wspec_free(&again);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wspec");
	TCase *tc = tcase_create("basic");

	tcase_add_test(tc, lines);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, text);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
