/* fuzz_env.c - environment names and values (sessions/core/names.c) through
 * `export -p` (sessions/core/envmap.c): every name and value the validators
 * accept, printed as bash prints it, reads back as the same bytes.
 * Input: one style byte, then NAME=VALUE (the value may hold any byte). */
#include <string.h>
#include "fuzz.h"
#include "export_fmt.h"
#include "sessions/core/envmap.h"
#include "sessions/core/names.h"

/* A variable after the fuzzed one: the value must end where it ends. */
#define END_NAME  "SFS_FUZZ_END"
#define END_VALUE "end"

static void want(const struct envmap *m, const char *name, const char *v,
		 size_t len, const char *text)
{
	const struct envvar *e = envmap_get(m, name);

	FUZZ_CHECK(e, "%s missing from:\n%s", name, text);
	FUZZ_CHECK(e->len == len && memcmp(e->value, v, len) == 0,
		   "%s: %zu bytes instead of %zu, from:\n%s", name, e->len, len,
		   text);
	FUZZ_CHECK(e->value[len] == '\0', "%s: no NUL after the value", name);
}

static void round_trip(const char *name, const char *v, size_t len,
		       const struct export_style *st)
{
	struct strbuf b = { 0 };
	struct envmap m;
	size_t tlen;
	char *text;

	export_fmt(&b, name, v, len, st);
	export_fmt(&b, END_NAME, END_VALUE, strlen(END_VALUE), st);
	text = sb_take(&b, &tlen);
	if (!text)
		return;
	envmap_init(&m, OBJ_NONE, NULL);
	FUZZ_CHECK(envmap_parse_export(&m, text, tlen) == 0, "parse failed");
	if (strcmp(name, END_NAME) == 0) {
		want(&m, END_NAME, END_VALUE, strlen(END_VALUE), text);
	} else {
		want(&m, name, v, len, text);
		want(&m, END_NAME, END_VALUE, strlen(END_VALUE), text);
		FUZZ_CHECK(m.n == 2, "%zu variables from:\n%s", m.n, text);
	}
	envmap_free(&m);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1, *eq;
	struct export_style st;
	char *name;

	if (size < 1)
		return 0;
	st = (struct export_style){ data[0] >> 3, data[0] & 1, data[0] & 2,
				    data[0] & 4 };
	size--;
	eq = memchr(in, '=', size);
	if (!eq || !(name = strndup(in, (size_t)(eq - in))))
		return 0;
	/* strndup stops at a NUL: such a name must not pass either */
	if ((size_t)(eq - in) == strlen(name) && name_env_valid(name) &&
	    name_env_value_valid(eq + 1, size - (size_t)(eq + 1 - in)))
		round_trip(name, eq + 1, size - (size_t)(eq + 1 - in), &st);
	free(name);
	return 0;
}
