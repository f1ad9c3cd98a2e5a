/* fuzz_frame.c - the shell's report frames (shell_parse_frame in
 * sessions/session/shell.c), read one after another from the result pipe's bytes
 * as sessions/session/sess.c reads them. */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/session/shell.h"
#include "sessions/core/strbuf.h"

/* Parses len bytes copied to their own allocation, so that ASan sees a
 * read past len. */
static ssize_t parse_exact(const char *buf, size_t len, struct shell_frame *f)
{
	char *copy = malloc(len ? len : 1);
	ssize_t n;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	n = shell_parse_frame(copy, len, f);
	free(copy);
	return n;
}

/* The frame spelled as the shell spells it means the same. */
static void check_canonical(const struct shell_frame *f)
{
	struct strbuf b = { 0 };
	struct shell_frame g;
	size_t len;
	char *p;

	sb_addf(&b, "%c%d", f->kind, f->status);
	if (f->keyed)
		sb_addf(&b, " %0*llx", SHELL_KEY_LEN,
			(unsigned long long)f->key);
	sb_add(&b, "", 1);
	sb_add(&b, f->pwd, strlen(f->pwd) + 1);
	sb_add(&b, f->env, f->env_len);
	sb_add(&b, "", 1);
	p = sb_take(&b, &len);
	if (!p)
		return;
	FUZZ_CHECK(shell_parse_frame(p, len, &g) == (ssize_t)len,
		   "canonical frame refused");
	FUZZ_CHECK(g.kind == f->kind && g.status == f->status &&
			   g.keyed == f->keyed && g.key == f->key &&
			   strcmp(g.pwd, f->pwd) == 0 &&
			   g.env_len == f->env_len &&
			   memcmp(g.env, f->env, g.env_len) == 0,
		   "canonical frame differs");
	free(p);
}

static void check_frame(const char *buf, size_t n, const struct shell_frame *f)
{
	struct shell_frame g;

	FUZZ_CHECK(f->kind == 'R' || f->kind == 'E' || f->kind == 'X',
		   "kind %d", f->kind);
	FUZZ_CHECK(f->status >= 0 && f->status <= 255, "status %d", f->status);
	FUZZ_CHECK(f->pwd > buf && f->pwd < buf + n, "pwd outside the frame");
	FUZZ_CHECK(f->env == f->pwd + strlen(f->pwd) + 1,
		   "env not just after pwd");
	FUZZ_CHECK(f->env + f->env_len == buf + n - 1 && buf[n - 1] == '\0',
		   "env does not end the frame");
	/* a frame does not depend on what follows it, and every proper
	 * prefix of it is incomplete, never an error */
	FUZZ_CHECK(parse_exact(buf, n, &g) == (ssize_t)n, "frame alone");
	FUZZ_CHECK(parse_exact(buf, n - 1, &g) == 0, "prefix of %zu", n - 1);
	FUZZ_CHECK(parse_exact(buf, n / 2, &g) == 0, "prefix of %zu", n / 2);
	FUZZ_CHECK(parse_exact(buf, 1, &g) == 0, "prefix of 1");
	check_canonical(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct shell_frame f;
	ssize_t n;

	while ((n = shell_parse_frame(buf, size, &f)) > 0) {
		FUZZ_CHECK((size_t)n <= size && n >= 5, "took %zd of %zu", n,
			   size);
		check_frame(buf, (size_t)n, &f);
		buf += n;
		size -= (size_t)n;
	}
	FUZZ_CHECK(n == 0 || n == -EINVAL, "returned %zd", n);
	FUZZ_CHECK(n != 0 || size == 0 || parse_exact(buf, size, &f) == 0,
		   "incomplete frame, then not");
	return 0;
}
