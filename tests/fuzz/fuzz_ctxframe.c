/* fuzz_ctxframe.c - the frames of code contexts' drivers (ctxproto_parse
 * in sessions/ctx/ctxproto.c), read one after another as sessions/ctx/ctxrun.c
 * reads them, and applied to an execution's record (ctx_exec_frame),
 * whose texts (error, result.json) are then made. */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/ctx/ctxproto.h"

/* Parses len bytes copied to their own allocation, so that ASan sees a
 * read past len. */
static ssize_t parse_exact(const char *buf, size_t len,
			   struct ctxproto_frame *f)
{
	char *copy = malloc(len ? len : 1);
	ssize_t n;

	if (!copy)
		abort();
	memcpy(copy, buf, len);
	n = ctxproto_parse(copy, len, f);
	free(copy);
	return n;
}

static void check_frame(const char *buf, size_t n,
			const struct ctxproto_frame *f)
{
	struct ctxproto_frame g;
	struct strbuf b = { 0 };
	size_t tlen = strlen(f->tag);

	FUZZ_CHECK(tlen > 0 && tlen <= CTXPROTO_TAG_MAX, "tag of %zu", tlen);
	for (size_t i = 0; i < tlen; i++)
		FUZZ_CHECK(f->tag[i] >= 'a' && f->tag[i] <= 'z', "tag byte %d",
			   f->tag[i]);
	FUZZ_CHECK(f->data > buf && f->data + f->len == buf + n,
		   "payload outside the frame");
	FUZZ_CHECK(f->len <= CTXPROTO_LEN_MAX, "payload of %zu", f->len);
	/* a frame does not depend on what follows it, and every proper
	 * prefix of it is incomplete, never an error */
	FUZZ_CHECK(parse_exact(buf, n, &g) == (ssize_t)n, "frame alone");
	FUZZ_CHECK(parse_exact(buf, n - 1, &g) == 0, "prefix of %zu", n - 1);
	FUZZ_CHECK(parse_exact(buf, n / 2, &g) == 0, "prefix of %zu", n / 2);
	/* written again, it reads the same */
	ctxproto_put(&b, f->tag, f->data, f->len);
	if (b.err)
		return;
	FUZZ_CHECK(ctxproto_parse(b.p, b.len, &g) == (ssize_t)b.len,
		   "canonical frame refused");
	FUZZ_CHECK(strcmp(g.tag, f->tag) == 0 && g.len == f->len &&
			   memcmp(g.data, f->data, g.len) == 0,
		   "canonical frame differs");
	free(b.p);
}

/* The bytes a record counts as frames come are those it holds, within
 * its bounds. */
static void check_bytes(const struct ctx_exec *e)
{
	size_t n = e->ename.len + e->evalue.len, err;

	for (size_t i = 0; i < e->ntrace; i++)
		n += e->trace[i] ? strlen(e->trace[i]) : 0;
	err = n;
	for (size_t i = 0; i < e->nres; i++)
		for (int k = 0; k < CTX_NFMT; k++)
			n += e->res[i]->fmt[k].len;
	FUZZ_CHECK(ctx_exec_bytes(e) == n, "counts %zu bytes, holds %zu",
		   ctx_exec_bytes(e), n);
	FUZZ_CHECK(e->err_bytes == err && err <= CTX_ERR_MAX,
		   "error of %zu bytes", err);
	FUZZ_CHECK(e->nres <= CTX_RESULTS_MAX + 1, "%zu results", e->nres);
}

static void check_texts(const struct ctx_exec *e)
{
	size_t len;
	char *t = ctx_exec_error_json(e, &len);

	FUZZ_CHECK(t && strlen(t) == len, "error text");
	FUZZ_CHECK(e->has_error == (len > 0), "error without a name");
	free(t);
	t = ctx_exec_json(e, "out\n", 4, "", 0, &len);
	FUZZ_CHECK(t && strlen(t) == len && t[0] == '{' && t[len - 1] == '\n',
		   "result.json");
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct ctx_exec e = { 0 };
	struct ctxproto_frame f;
	ssize_t n;

	while ((n = ctxproto_parse(buf, size, &f)) > 0) {
		FUZZ_CHECK((size_t)n <= size && n >= 4, "took %zd of %zu", n,
			   size);
		check_frame(buf, (size_t)n, &f);
		if (ctx_exec_frame(&e, &f, NULL) == -ENOMEM)
			break;
		buf += n;
		size -= (size_t)n;
	}
	FUZZ_CHECK(n == 0 || n == -EINVAL, "returned %zd", n);
	FUZZ_CHECK(n != 0 || size == 0 || parse_exact(buf, size, &f) == 0,
		   "incomplete frame, then not");
	check_bytes(&e);
	check_texts(&e);
	ctx_exec_free(&e, NULL);
	return 0;
}
