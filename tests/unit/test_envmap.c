/* test_envmap.c - env variable sets and the parser of bash's export -p. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include "sessions/core/envmap.h"
#include "unit.h"

#define BASH "/bin/bash"

static void set(struct envmap *m, const char *name, const char *val)
{
	ck_assert_int_eq(envmap_set(m, name, val, strlen(val)), 0);
}

/* name holds exactly len bytes val (and a NUL after them). */
static void want(const struct envmap *m, const char *name, const char *val,
		 size_t len)
{
	struct envvar *e = envmap_get(m, name);

	ck_assert_msg(e != NULL, "%s is missing", name);
	ck_assert_msg(e->len == len, "%s: length %zu, want %zu", name, e->len,
		      len);
	ck_assert_msg(memcmp(e->value, val, len) == 0, "%s: wrong bytes", name);
	ck_assert_int_eq(e->value[len], '\0');
}

static void want_s(const struct envmap *m, const char *name, const char *val)
{
	want(m, name, val, strlen(val));
}

static void sorted(const struct envmap *m)
{
	for (size_t i = 1; i < m->n; i++)
		ck_assert_msg(strcmp(m->v[i - 1]->name, m->v[i]->name) < 0,
			      "%s before %s", m->v[i - 1]->name, m->v[i]->name);
}

static void parse(struct envmap *m, const char *text)
{
	struct guarded g;
	size_t len = strlen(text);
	const char *p = guard_copy(&g, text, len);

	ck_assert_int_eq(envmap_parse_export(m, p, len), 0);
	guard_free(&g);
	sorted(m);
}

/* The names of m, space-separated, for exact comparisons. */
static char *names(const struct envmap *m)
{
	static char buf[4096];
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < m->n; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s",
				       i ? " " : "", m->v[i]->name);
	return buf;
}

/* ---- the set ---- */

START_TEST(set_get_unset)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	ck_assert_ptr_null(envmap_get(&m, "A"));
	set(&m, "B", "2");
	set(&m, "A", "1");
	set(&m, "C", "");
	ck_assert_uint_eq(m.n, 3);
	want_s(&m, "A", "1");
	want_s(&m, "B", "2");
	want_s(&m, "C", "");
	ck_assert_str_eq(names(&m), "A B C");
	set(&m, "B", "two");
	ck_assert_uint_eq(m.n, 3);
	want_s(&m, "B", "two");
	ck_assert_int_eq(envmap_unset(&m, "B"), 0);
	ck_assert_ptr_null(envmap_get(&m, "B"));
	ck_assert_int_eq(envmap_unset(&m, "B"), -ENOENT);
	ck_assert_int_eq(envmap_unset(&m, "nope"), -ENOENT);
	ck_assert_str_eq(names(&m), "A C");
	envmap_free(&m);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_ptr_null(envmap_get(&m, "A"));
	/* usable again after free */
	set(&m, "Z", "z");
	want_s(&m, "Z", "z");
	envmap_free(&m);
}
END_TEST

/* Values are bytes: NULs inside are kept with their length. */
START_TEST(binary_values)
{
	struct envmap m;
	char all[256];

	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	envmap_init(&m, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_set(&m, "N", "a\0b", 3), 0);
	want(&m, "N", "a\0b", 3);
	ck_assert_int_eq(envmap_set(&m, "ALL", all, 256), 0);
	want(&m, "ALL", all, 256);
	ck_assert_int_eq(envmap_set(&m, "E", NULL, 0), 0);
	want(&m, "E", "", 0);
	envmap_free(&m);
}
END_TEST

/* Names whose prefixes and cases differ are distinct, and stay sorted. */
START_TEST(order)
{
	static const char *const n[] = {
		"b",  "B",  "a", "A", "AB",  "A_",  "_",  "__",
		"AA", "A0", "Z", "z", "ABC", "AB_", "a1", "_a",
	};
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	for (size_t i = 0; i < sizeof(n) / sizeof(*n); i++)
		set(&m, n[i], n[i]);
	ck_assert_uint_eq(m.n, sizeof(n) / sizeof(*n));
	sorted(&m);
	for (size_t i = 0; i < sizeof(n) / sizeof(*n); i++)
		want_s(&m, n[i], n[i]);
	ck_assert_int_eq(envmap_unset(&m, "A"), 0);
	ck_assert_ptr_nonnull(envmap_get(&m, "AB"));
	ck_assert_ptr_nonnull(envmap_get(&m, "a"));
	sorted(&m);
	envmap_free(&m);
}
END_TEST

/* Thousands of variables in a scrambled order. */
START_TEST(many)
{
	enum { N = 5000 };
	struct envmap m;
	char name[32], val[32];

	envmap_init(&m, OBJ_NONE, NULL);
	for (unsigned i = 0; i < N; i++) {
		unsigned k = i * 2731 % N;

		snprintf(name, sizeof(name), "V%u", k);
		snprintf(val, sizeof(val), "%u", k * 3);
		set(&m, name, val);
	}
	ck_assert_uint_eq(m.n, N);
	sorted(&m);
	for (unsigned k = 0; k < N; k += 2) {
		snprintf(name, sizeof(name), "V%u", k);
		ck_assert_int_eq(envmap_unset(&m, name), 0);
	}
	ck_assert_uint_eq(m.n, N / 2);
	sorted(&m);
	for (unsigned k = 0; k < N; k++) {
		snprintf(name, sizeof(name), "V%u", k);
		snprintf(val, sizeof(val), "%u", k * 3);
		if (k % 2)
			want_s(&m, name, val);
		else
			ck_assert_ptr_null(envmap_get(&m, name));
	}
	envmap_free(&m);
}
END_TEST

/* With a kind, each variable is an object with a stable id. */
START_TEST(ids)
{
	struct envmap m;
	int owner;
	struct envvar *a, *b;
	uint64_t ida;

	envmap_init(&m, OBJ_ENVVAR, &owner);
	set(&m, "A", "1");
	set(&m, "B", "2");
	a = envmap_get(&m, "A");
	b = envmap_get(&m, "B");
	ck_assert(a->id != 0 && b->id != 0 && a->id != b->id);
	ck_assert_ptr_eq(a->owner, &owner);
	ck_assert_ptr_eq(objs_get(a->id, OBJ_ENVVAR), a);
	ck_assert_ptr_eq(objs_get(b->id, OBJ_ENVVAR), b);
	ida = a->id;
	set(&m, "A", "changed"); /* a new value keeps the id */
	ck_assert_ptr_eq(envmap_get(&m, "A"), a);
	ck_assert(a->id == ida);
	/* inserting before it moves it in the array, not in objs */
	set(&m, "0", "x");
	set(&m, "AA", "x");
	ck_assert_ptr_eq(objs_get(ida, OBJ_ENVVAR), envmap_get(&m, "A"));
	ck_assert_int_eq(envmap_unset(&m, "A"), 0);
	ck_assert_ptr_null(objs_get(ida, OBJ_ENVVAR));
	/* set again: a fresh id, never the old one */
	set(&m, "A", "again");
	ck_assert(envmap_get(&m, "A")->id > ida);
	ida = envmap_get(&m, "A")->id;
	envmap_free(&m);
	ck_assert_ptr_null(objs_get(ida, OBJ_ENVVAR));

	envmap_init(&m, OBJ_ROOTENV, NULL);
	set(&m, "R", "1");
	ck_assert_ptr_eq(objs_get(envmap_get(&m, "R")->id, OBJ_ROOTENV),
			 envmap_get(&m, "R"));
	ck_assert_ptr_null(objs_get(envmap_get(&m, "R")->id, OBJ_ENVVAR));
	envmap_free(&m);

	envmap_init(&m, OBJ_NONE, NULL);
	set(&m, "N", "1");
	ck_assert(envmap_get(&m, "N")->id == 0);
	envmap_free(&m);
}
END_TEST

START_TEST(assign)
{
	struct envmap dst, src;
	uint64_t idk, idc;

	envmap_init(&dst, OBJ_ENVVAR, NULL);
	envmap_init(&src, OBJ_NONE, NULL);
	set(&dst, "KEEP", "old");
	set(&dst, "GONE", "x");
	set(&dst, "SAME", "s");
	idk = envmap_get(&dst, "KEEP")->id;
	idc = envmap_get(&dst, "SAME")->id;
	set(&src, "KEEP", "new");
	set(&src, "SAME", "s");
	set(&src, "ADDED", "a\nb");
	ck_assert_int_eq(envmap_assign(&dst, &src), 0);
	ck_assert_str_eq(names(&dst), "ADDED KEEP SAME");
	want_s(&dst, "KEEP", "new");
	want_s(&dst, "ADDED", "a\nb");
	ck_assert(envmap_get(&dst, "KEEP")->id == idk);
	ck_assert(envmap_get(&dst, "SAME")->id == idc);
	ck_assert(envmap_get(&dst, "ADDED")->id != 0);
	/* src is untouched */
	ck_assert_str_eq(names(&src), "ADDED KEEP SAME");
	/* to an empty set */
	envmap_free(&src);
	ck_assert_int_eq(envmap_assign(&dst, &src), 0);
	ck_assert_uint_eq(dst.n, 0);
	ck_assert_ptr_null(objs_get(idk, OBJ_ENVVAR));
	envmap_free(&dst);
}
END_TEST

/* Removing many at once (every other name goes). */
START_TEST(assign_many)
{
	struct envmap dst, src;
	char name[16];

	envmap_init(&dst, OBJ_ENVVAR, NULL);
	envmap_init(&src, OBJ_NONE, NULL);
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "V%03d", i);
		set(&dst, name, "d");
		if (i % 2)
			set(&src, name, "s");
	}
	ck_assert_int_eq(envmap_assign(&dst, &src), 0);
	ck_assert_uint_eq(dst.n, 250);
	sorted(&dst);
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "V%03d", i);
		if (i % 2)
			want_s(&dst, name, "s");
		else
			ck_assert_ptr_null(envmap_get(&dst, name));
	}
	envmap_free(&dst);
	envmap_free(&src);
}
END_TEST

START_TEST(envp)
{
	struct envmap m;
	char **e;

	envmap_init(&m, OBJ_NONE, NULL);
	e = envmap_envp(&m);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(e[0]);
	free(e);
	set(&m, "B", "x=y");
	set(&m, "A", "");
	set(&m, "C", "l1\nl2");
	e = envmap_envp(&m);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e[0], "A=");
	ck_assert_str_eq(e[1], "B=x=y");
	ck_assert_str_eq(e[2], "C=l1\nl2");
	ck_assert_ptr_null(e[3]);
	for (int i = 0; e[i]; i++)
		free(e[i]);
	free(e);
	envmap_free(&m);
}
END_TEST

/* ---- the export -p parser, on fixed text ---- */

START_TEST(parse_double_quoted)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -x A=\"plain\"\n"
		  "declare -x B=\"x\\\"y\\$z\\`w\\\\\"\n"
		  "declare -x C=\"\"\n"
		  "declare -x D=\"it's\"\n"
		  "declare -x E=\"a\\nb\\q\"\n"
		  "declare -x F=\"=a=b=\"\n"
		  "declare -x G=\"trailing\\\\\"\n");
	ck_assert_str_eq(names(&m), "A B C D E F G");
	want_s(&m, "A", "plain");
	want_s(&m, "B", "x\"y$z`w\\");
	want_s(&m, "C", "");
	want_s(&m, "D", "it's");
	/* in double quotes only \" \\ \$ \` are escapes */
	want_s(&m, "E", "a\\nb\\q");
	want_s(&m, "F", "=a=b=");
	want_s(&m, "G", "trailing\\");
	envmap_free(&m);
}
END_TEST

START_TEST(parse_ansi_c)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -x A=$'l1\\nl2'\n"
		  "declare -x B=$'\\a\\b\\e\\E\\f\\n\\r\\t\\v'\n"
		  "declare -x C=$'\\\\ \\' \\\" \\?'\n"
		  "declare -x D=$'\\001\\177\\377\\3\\12x'\n"
		  "declare -x E=$'\\x41\\x4a\\x4Z\\xZ'\n"
		  "declare -x F=$'\\1234'\n"
		  "declare -x G=$'\\cA\\c['\n"
		  "declare -x H=$'\\q\\'end'\n"
		  "declare -x I=$'\\303\\251'\n");
	ck_assert_str_eq(names(&m), "A B C D E F G H I");
	want_s(&m, "A", "l1\nl2");
	want_s(&m, "B", "\a\b\033\033\f\n\r\t\v");
	want_s(&m, "C", "\\ ' \" ?");
	want_s(&m, "D", "\001\177\377\003\nx");
	want_s(&m, "E", "AJ\004Z\\xZ");
	want_s(&m, "F", "S4"); /* at most three octal digits */
	want_s(&m, "G", "\001\033");
	want_s(&m, "H", "\\q'end");
	want_s(&m, "I", "\xc3\xa9");
	envmap_free(&m);
}
END_TEST

/* Flags: attributes other than arrays are kept; no value: not set. */
START_TEST(parse_flags)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -ax ARR=([0]=\"1\" [1]=\"a b\")\n"
		  "declare -Ax AS=([k]=\"v\" )\n"
		  "declare -ix I=\"5\"\n"
		  "declare -x OLDPWD\n"
		  "declare -x PWD=\"/tmp\"\n"
		  "declare -rx R=\"1\"\n"
		  "declare -x SHLVL=\"1\"\n"
		  "declare -lx L=\"low\"\n"
		  "declare -ux U=\"UP\"\n"
		  "declare -x UNSET\n"
		  "declare -irx IR=\"7\"\n");
	ck_assert_str_eq(names(&m), "I IR L PWD R SHLVL U");
	want_s(&m, "I", "5");
	want_s(&m, "IR", "7");
	want_s(&m, "R", "1");
	want_s(&m, "PWD", "/tmp");
	envmap_free(&m);
}
END_TEST

/* declare -r marks a variable readonly, and assign carries the mark. */
START_TEST(parse_readonly)
{
	struct envmap m, d;

	envmap_init(&m, OBJ_NONE, NULL);
	envmap_init(&d, OBJ_NONE, NULL);
	parse(&m, "declare -rx R=\"1\"\n"
		  "declare -irx IR=\"7\"\n"
		  "declare -x W=\"2\"\n");
	ck_assert(envmap_get(&m, "R")->readonly);
	ck_assert(envmap_get(&m, "IR")->readonly);
	ck_assert(!envmap_get(&m, "W")->readonly);
	set(&d, "R", "0");
	ck_assert(!envmap_get(&d, "R")->readonly);
	ck_assert_int_eq(envmap_assign(&d, &m), 0);
	ck_assert(envmap_get(&d, "R")->readonly);
	ck_assert(!envmap_get(&d, "W")->readonly);
	/* "R=1" "IR=7" "W=2": 4 bytes each with the NUL, and 3 pointers */
	ck_assert_uint_eq(envmap_exec_bytes(&d),
			  3 * 4 + 1 + 3 * sizeof(char *));
	envmap_free(&m);
	envmap_free(&d);
}
END_TEST

/* An array element with a newline does not start a line of its own. */
START_TEST(parse_array_newline)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -ax ARR=([0]=$'x\\ndeclare -x FAKE=\"1\"' "
		  "[1]=\"y\")\n"
		  "declare -x REAL=\"1\"\n");
	ck_assert_str_eq(names(&m), "REAL");
	envmap_free(&m);
}
END_TEST

/* bash --posix prints "export NAME=..." lines. */
START_TEST(parse_posix)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "export A=\"1\"\n"
		  "export B=$'x\\ny'\n"
		  "export OLDPWD\n"
		  "export PWD=\"/tmp\"\n"
		  "export Q=\"\\\"\\$\\`\\\\\"\n");
	ck_assert_str_eq(names(&m), "A B PWD Q");
	want_s(&m, "A", "1");
	want_s(&m, "B", "x\ny");
	want_s(&m, "Q", "\"$`\\");
	envmap_free(&m);
}
END_TEST

/* In POSIX mode arrays print as "export -a NAME=(...)": skipped too. */
START_TEST(parse_posix_arrays)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "export -a ARR=([0]=\"1\" [1]=\"2\")\n"
		  "export -A AS=([k]=\"v\" )\n"
		  "export I=\"3\"\n");
	ck_assert_msg(strcmp(names(&m), "I") == 0, "parsed names: '%s'",
		      names(&m));
	envmap_free(&m);
}
END_TEST

/* Old bash kept a newline raw inside double quotes. */
START_TEST(parse_multiline)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -x A=\"l1\n"
		  "declare -x FAKE=\\\"1\\\"\n"
		  "l3\"\n"
		  "declare -x B=\"2\"\n");
	ck_assert_str_eq(names(&m), "A B");
	want_s(&m, "A", "l1\ndeclare -x FAKE=\"1\"\nl3");
	want_s(&m, "B", "2");
	envmap_free(&m);
}
END_TEST

/* Lines it does not understand are skipped; text need not end in \n. */
START_TEST(parse_junk)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "\n"
		  "garbage line\n"
		  "declare -f fn\n"
		  "  declare -x INDENTED=\"1\"\n"
		  "declare -x A=\"1\"\n"
		  "declare\n"
		  "export\n"
		  "declare -x LAST=\"end\"");
	ck_assert_str_eq(names(&m), "A LAST");
	want_s(&m, "LAST", "end");
	envmap_free(&m);
}
END_TEST

/* Text cut anywhere: no read past its end, no crash, earlier lines kept. */
START_TEST(parse_cut)
{
	static const char text[] = "declare -x A=\"1\"\n"
				   "declare -x B=$'\\x41\\101\\cA\\n\\'\\\\'\n"
				   "declare -x C=\"q\\\"\\\\\"\n"
				   "export D=$'\\x'\n";
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	for (size_t len = 0; len <= sizeof(text) - 1; len++) {
		struct guarded g;
		const char *p = guard_copy(&g, text, len);

		ck_assert_int_eq(envmap_parse_export(&m, p, len), 0);
		guard_free(&g);
		if (len >= 17)
			want_s(&m, "A", "1");
		else
			ck_assert_ptr_null(envmap_get(&m, "B"));
	}
	want_s(&m, "B", "AA\001\n'\\");
	want_s(&m, "C", "q\"\\");
	want_s(&m, "D", "\\x");
	envmap_free(&m);
}
END_TEST

/* Text that is not bash's (a user may overwrite the file "env" from an
 * EXIT trap): names that are not variable names and values with a NUL
 * stay out, or env/ could not list them (found by tests/fuzz). */
START_TEST(parse_invalid_names)
{
	struct envmap m;

	envmap_init(&m, OBJ_NONE, NULL);
	parse(&m, "declare -x a/b=\"1\"\n"
		  "declare -x =\"2\"\n"
		  "declare -x ..=\"3\"\n"
		  "declare -x 9X=\"4\"\n"
		  "declare -x A B=\"5\"\n"
		  "declare -x Z=$'x\\0y'\n"
		  "declare -x C=$'\\c@'\n"
		  "export OK=\"6\"\n");
	ck_assert_str_eq(names(&m), "OK");
	want_s(&m, "OK", "6");
	envmap_free(&m);
}
END_TEST

/* Parsing empties the set first, and keeps nothing from before. */
START_TEST(parse_replaces)
{
	struct envmap m;

	envmap_init(&m, OBJ_ENVVAR, NULL);
	set(&m, "OLD", "1");
	parse(&m, "declare -x NEW=\"2\"\n");
	ck_assert_str_eq(names(&m), "NEW");
	parse(&m, "");
	ck_assert_uint_eq(m.n, 0);
	envmap_free(&m);
}
END_TEST

/* ---- round trips through a real bash ---- */

/*
 * Runs bash with exactly envp and args, returns what it printed
 * (malloc'd, *len bytes).
 */
static char *run_bash(char *const envp[], const char *script, bool posix,
		      size_t *len)
{
	char *argv[] = { "bash",	 "--norc", "--noprofile", "-c",
			 (char *)script, NULL,	   NULL };
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int p[2], st;
	pid_t pid;

	if (posix) {
		argv[5] = argv[4];
		argv[4] = argv[3];
		argv[3] = "--posix";
	}
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execve(BASH, argv, envp);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		r = read(p[0], buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bash failed (%d)",
		      st);
	*len = n;
	return buf;
}

struct var {
	const char *name;
	const char *val;
	size_t len;
};

/* Exports vars (plus LC_ALL=locale if given) to bash and checks that the
 * parsed export -p holds each one byte for byte. */
static void round_trip(const struct var *v, size_t nv, const char *locale,
		       bool posix)
{
	char **envp = calloc(nv + 2, sizeof(*envp));
	struct envmap m;
	struct guarded g;
	size_t len, k = 0;
	char *out;

	ck_assert_ptr_nonnull(envp);
	for (size_t i = 0; i < nv; i++) {
		size_t nl = strlen(v[i].name);

		envp[k] = malloc(nl + v[i].len + 2);
		memcpy(envp[k], v[i].name, nl);
		envp[k][nl] = '=';
		memcpy(envp[k] + nl + 1, v[i].val, v[i].len);
		envp[k][nl + 1 + v[i].len] = '\0';
		k++;
	}
	if (locale) {
		envp[k] = malloc(strlen(locale) + 8);
		sprintf(envp[k], "LC_ALL=%s", locale);
		k++;
	}
	out = run_bash(envp, "export -p", posix, &len);
	envmap_init(&m, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_parse_export(&m, guard_copy(&g, out, len), len),
			 0);
	guard_free(&g);
	sorted(&m);
	for (size_t i = 0; i < nv; i++)
		want(&m, v[i].name, v[i].val, v[i].len);
	if (locale)
		want_s(&m, "LC_ALL", locale);
	/* what bash adds: PWD and SHLVL set, OLDPWD exported but unset */
	ck_assert_ptr_nonnull(envmap_get(&m, "PWD"));
	want_s(&m, "SHLVL", "1");
	ck_assert_ptr_null(envmap_get(&m, "OLDPWD"));
	ck_assert_uint_eq(m.n, nv + (locale ? 1 : 0) + 2);
	envmap_free(&m);
	for (size_t i = 0; i < k; i++)
		free(envp[i]);
	free(envp);
	free(out);
}

#define V(n, s)                                                                \
	{                                                                      \
		n, s, sizeof(s) - 1                                            \
	}

static char all_bytes[255];
static char long_val[100000]; /* under MAX_ARG_STRLEN (128 KiB) */

static const struct var tricky[] = {
	V("A", "x\"y$z`w\\"),
	V("B", "l1\nl2"),
	V("C", "t\tab\001\177\xc3\xa9\xff"),
	V("D", ""),
	V("E", "it's"),
	V("F", "$(whoami)"),
	V("G", "`date`"),
	V("H", "\\"),
	V("I", "$'x'"),
	V("J", "\\n\\t\\x41\\101"),
	V("K", "trailing newline\n"),
	V("L", "\n\n"),
	V("M", "'\"'\"'"),
	V("N", "!#%&*;<>?[]{}|~ ^"),
	V("O", "  spaces  "),
	V("P", "\r\n"),
	V("Q", "\033[31mred\033[0m"),
	V("R", "=start=end="),
	V("S", "\xe2\x82\xac \xf0\x9d\x84\x9e \xed\xa0\x80 \xc0\xaf"),
	V("T", "declare -x EVIL=\"1\"\ndeclare -x EVIL2=$'2'"),
	V("_x", "underscore"),
	V("lower_Mixed9", "name"),
};

static void fill_specials(void)
{
	for (int i = 0; i < 255; i++)
		all_bytes[i] = (char)(i + 1);
	for (size_t i = 0; i < sizeof(long_val); i++)
		long_val[i] = "ab\"$`\\\n'c"[i % 9];
}

static void round_trip_all(const char *locale, bool posix)
{
	struct var more[] = {
		{ "ALL", all_bytes, sizeof(all_bytes) },
		{ "LONG", long_val, sizeof(long_val) },
	};

	round_trip(tricky, sizeof(tricky) / sizeof(*tricky), locale, posix);
	round_trip(more, 2, locale, posix);
}

START_TEST(bash_c_locale)
{
	round_trip_all(NULL, false);
	round_trip_all("C", false);
}
END_TEST

START_TEST(bash_utf8_locale)
{
	round_trip_all("C.UTF-8", false);
}
END_TEST

START_TEST(bash_posix)
{
	round_trip_all(NULL, true);
	round_trip_all("C.UTF-8", true);
}
END_TEST

/* Random values of every byte but NUL, many at once. */
START_TEST(bash_random)
{
	enum { NV = 300 };
	static struct var v[NV];
	static char names_buf[NV][16], vals[NV][600];
	unsigned seed = 0x5eed;

	for (int i = 0; i < NV; i++) {
		size_t len;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 8) % sizeof(vals[i]);
		for (size_t k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			/* half printable ASCII, half any byte */
			vals[i][k] = (char)((seed >> 20) & 1 ?
						    32 + (seed >> 8) % 95 :
						    1 + (seed >> 8) % 255);
		}
		snprintf(names_buf[i], sizeof(names_buf[i]), "R%d", i);
		v[i] = (struct var){ names_buf[i], vals[i], len };
	}
	round_trip(v, NV, NULL, false);
	round_trip(v, NV, "C.UTF-8", false);
}
END_TEST

/* Variables that bash itself makes, with attributes, in both modes. */
static void attrs(bool posix)
{
	static const char script[] =
		"declare -rx R=1; declare -ix I=2+3; declare -lx L=LoW;"
		"declare -ux U=uP; export UNSET; declare -ax ARR=(1 'a b');"
		"declare -Ax AS=([k]=v); f() { :; }; export -f f;"
		"declare -x NL=$'a\\nb'; export -p";
	char *envp[] = { NULL };
	struct envmap m;
	struct guarded g;
	size_t len;
	char *out = run_bash(envp, script, posix, &len);

	envmap_init(&m, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_parse_export(&m, guard_copy(&g, out, len), len),
			 0);
	guard_free(&g);
	ck_assert_msg(strcmp(names(&m), "I L NL PWD R SHLVL U") == 0,
		      "posix %d: parsed '%s' from:\n%.*s", posix, names(&m),
		      (int)len, out);
	want_s(&m, "R", "1");
	want_s(&m, "I", "5");
	want_s(&m, "L", "low");
	want_s(&m, "U", "UP");
	want_s(&m, "NL", "a\nb");
	envmap_free(&m);
	free(out);
}

START_TEST(bash_attrs)
{
	attrs(false);
}
END_TEST

START_TEST(bash_attrs_posix)
{
	attrs(true);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("envmap");
	TCase *tc = tcase_create("set");

	tcase_add_test(tc, set_get_unset);
	tcase_add_test(tc, binary_values);
	tcase_add_test(tc, order);
	tcase_add_test(tc, many);
	tcase_add_test(tc, ids);
	tcase_add_test(tc, assign);
	tcase_add_test(tc, assign_many);
	tcase_add_test(tc, envp);
	suite_add_tcase(s, tc);
	tc = tcase_create("parse");
	tcase_add_test(tc, parse_double_quoted);
	tcase_add_test(tc, parse_ansi_c);
	tcase_add_test(tc, parse_flags);
	tcase_add_test(tc, parse_readonly);
	tcase_add_test(tc, parse_array_newline);
	tcase_add_test(tc, parse_posix);
	tcase_add_test(tc, parse_posix_arrays);
	tcase_add_test(tc, parse_multiline);
	tcase_add_test(tc, parse_junk);
	tcase_add_test(tc, parse_cut);
	tcase_add_test(tc, parse_invalid_names);
	tcase_add_test(tc, parse_replaces);
	suite_add_tcase(s, tc);
	tc = tcase_create("bash");
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, fill_specials, NULL);
	tcase_add_test(tc, bash_c_locale);
	tcase_add_test(tc, bash_utf8_locale);
	tcase_add_test(tc, bash_posix);
	tcase_add_test(tc, bash_random);
	tcase_add_test(tc, bash_attrs);
	tcase_add_test(tc, bash_attrs_posix);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
