/* fuzz_export.c - the `export -p` reader (sessions/core/envmap.c) on any text:
 * what it reads is a well-formed set of variables that bash could hold,
 * and printing that set the way bash does reads back as the same set. */
#include <string.h>
#include "fuzz.h"
#include "export_fmt.h"
#include "sessions/core/envmap.h"
#include "sessions/core/names.h"

static void well_formed(const struct envmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct envvar *e = m->v[i];

		FUZZ_CHECK(i == 0 || strcmp(m->v[i - 1]->name, e->name) < 0,
			   "'%s' before '%s'", m->v[i - 1]->name, e->name);
		FUZZ_CHECK(envmap_get(m, e->name) == e, "'%s' not found",
			   e->name);
		FUZZ_CHECK(e->value[e->len] == '\0', "'%s': no NUL after it",
			   e->name);
		/* env/NAME is a file and NAME=VALUE goes to execve */
		FUZZ_CHECK(name_env_valid(e->name),
			   "'%s' is not a variable name", e->name);
		FUZZ_CHECK(name_env_value_valid(e->value, e->len),
			   "'%s': a NUL inside its value of %zu bytes", e->name,
			   e->len);
	}
}

/* What a shell started from the set gets: NAME=VALUE, in order. */
static void check_envp(const struct envmap *m)
{
	char **envp = envmap_envp(m);
	size_t i = 0;

	if (!envp)
		return;
	for (; envp[i]; i++) {
		const struct envvar *e = m->v[i];
		size_t nl = strlen(e->name);

		FUZZ_CHECK(i < m->n && strncmp(envp[i], e->name, nl) == 0 &&
				   envp[i][nl] == '=' &&
				   strcmp(envp[i] + nl + 1, e->value) == 0,
			   "envp[%zu] is '%s'", i, envp[i]);
		free(envp[i]);
	}
	FUZZ_CHECK(i == m->n, "envp has %zu of %zu", i, m->n);
	free(envp);
}

/* The set printed with style st and read back. */
static void reprint(const struct envmap *m, const struct export_style *st)
{
	struct strbuf b = { 0 };
	struct envmap again;
	size_t len;
	char *text;

	for (size_t i = 0; i < m->n; i++)
		export_fmt(&b, m->v[i]->name, m->v[i]->value, m->v[i]->len, st);
	text = sb_take(&b, &len);
	if (!text)
		return;
	envmap_init(&again, OBJ_NONE, NULL);
	FUZZ_CHECK(envmap_parse_export(&again, text, len) == 0,
		   "reprint refused");
	FUZZ_CHECK(again.n == m->n, "%zu variables, then %zu", m->n, again.n);
	for (size_t i = 0; i < m->n; i++) {
		const struct envvar *e = envmap_get(&again, m->v[i]->name);

		FUZZ_CHECK(e && e->len == m->v[i]->len &&
				   memcmp(e->value, m->v[i]->value, e->len) ==
					   0,
			   "'%s' changed when printed again", m->v[i]->name);
	}
	envmap_free(&again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct envmap m, dst;
	struct export_style st = { size, size & 1, size & 2, size & 4 };

	envmap_init(&m, OBJ_NONE, NULL);
	FUZZ_CHECK(envmap_parse_export(&m, (const char *)data, size) == 0,
		   "parse failed");
	well_formed(&m);
	check_envp(&m);
	reprint(&m, &st);
	/* what a session does with it: ids kept for names that stay */
	envmap_init(&dst, OBJ_ENVVAR, NULL);
	envmap_set(&dst, "PATH", "/bin", 4);
	FUZZ_CHECK(envmap_assign(&dst, &m) == 0, "assign failed");
	FUZZ_CHECK(dst.n == m.n, "assigned %zu of %zu", dst.n, m.n);
	envmap_free(&dst);
	envmap_free(&m);
	return 0;
}
