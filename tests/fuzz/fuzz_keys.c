/* fuzz_keys.c - the key names of tty/keys (sessions/tty/keys.c): the input is
 * what a client writes to keys. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/tty/keys.h"

/* A character a key name may be: no C0 or C1 control, no DEL. */
static bool printable(int c)
{
	return c >= 0x20 && (c < 0x7f || c >= 0xa0) && c <= 0x10ffff;
}

/* Everything found lies inside the room given; a refusal names a token
 * of the input and leaves nothing to send; a parse is the same twice. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct keys_seq a = { calloc(size + 1, sizeof(struct keys_item)), 0,
			      malloc(size + 1), 0 };
	struct keys_seq b = { calloc(size + 1, sizeof(struct keys_item)), 0,
			      malloc(size + 1), 0 };
	size_t off = 0, len = 0, off2 = 0, len2 = 0;
	int rc, rc2;

	if (!a.items || !a.text || !b.items || !b.text)
		abort();
	rc = keys_parse(s, size, &a, &off, &len);
	rc2 = keys_parse(s, size, &b, &off2, &len2);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL, "rc %d", rc);
	FUZZ_CHECK(rc == rc2 && a.n == b.n && a.tlen == b.tlen,
		   "two parses differ");
	if (rc < 0) {
		FUZZ_CHECK(a.n == 0 && a.tlen == 0, "a refusal left %zu items",
			   a.n);
		FUZZ_CHECK(off < size && len >= 1 && off + len <= size,
			   "bad token at %zu+%zu of %zu", off, len, size);
	}
	FUZZ_CHECK(a.n <= size && a.tlen <= size, "%zu items, %zu bytes", a.n,
		   a.tlen);
	for (size_t i = 0; i < a.n; i++) {
		const struct keys_item *it = &a.items[i];

		FUZZ_CHECK(memcmp(it, &b.items[i], sizeof(*it)) == 0,
			   "item %zu differs", i);
		if (it->kind == KEYS_TEXT)
			FUZZ_CHECK(it->off + it->len <= a.tlen,
				   "text %zu+%zu of %zu", it->off, it->len,
				   a.tlen);
		else
			FUZZ_CHECK(it->kind == KEYS_KEY || printable(it->code),
				   "character %d", it->code);
	}
	FUZZ_CHECK(memcmp(a.text, b.text, a.tlen) == 0, "texts differ");
	free(a.items);
	free(a.text);
	free(b.items);
	free(b.text);
	return 0;
}
