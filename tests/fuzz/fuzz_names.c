/* fuzz_names.c - the validators of sessions/core/names.c: session, run and
 * process names, environment names and values, and decimal numbers.
 * Each accepted input is checked against what the name is used for. */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/core/names.h"

static bool in(char c, const char *set)
{
	return c && strchr(set, c);
}

static void check_name(const char *s, size_t n)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
				 "QRSTUVWXYZ0123456789._-";

	if (!name_valid(s))
		return;
	/* it becomes a directory entry: one component, never . or .. */
	FUZZ_CHECK(n >= 1 && n <= NAME_MAX_LEN, "length %zu", n);
	FUZZ_CHECK(s[0] != '.', "'%s' starts with a dot", s);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(in(s[i], ok), "'%s': byte %zu", s, i);
}

static void check_env_name(const char *s, size_t n)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
				 "QRSTUVWXYZ0123456789_";

	if (!name_env_valid(s))
		return;
	/* bash accepts it in `export NAME=...` and it is a file name */
	FUZZ_CHECK(n >= 1 && n <= 255, "length %zu", n);
	FUZZ_CHECK(!(s[0] >= '0' && s[0] <= '9'), "'%s' starts with a digit",
		   s);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(in(s[i], ok), "'%s': byte %zu", s, i);
}

/* An accepted number means what strtoull means, and its canonical
 * spelling parses to the same value. */
static void check_u64(const char *s, size_t len)
{
	unsigned long long v, again;
	char canon[32], *end;
	int rc = name_parse_u64(s, len, &v);

	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE, "rc %d", rc);
	if (rc != 0)
		return;
	FUZZ_CHECK(!memchr(s, '\0', len), "a NUL in an accepted number");
	FUZZ_CHECK(strtoull(s, &end, 10) == v, "'%.*s' is not %llu", (int)len,
		   s, v);
	FUZZ_CHECK(s[strspn(s, " \t\n\r")] != '-', "'%.*s' is negative",
		   (int)len, s);
	snprintf(canon, sizeof(canon), "%llu", v);
	FUZZ_CHECK(name_parse_u64(canon, strlen(canon), &again) == 0 &&
			   again == v,
		   "'%s' does not parse back", canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	size_t n;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);
	check_name(s, n);
	check_env_name(s, n);
	FUZZ_CHECK(name_env_value_valid(s, size) == (n == size),
		   "value of %zu bytes, NUL at %zu", size, n);
	check_u64(s, size);
	free(s);
	return 0;
}
