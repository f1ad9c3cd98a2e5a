/*
 * ctxproto.c - the frames between the daemon and a context's driver, and
 * the record of one execution with its texts (error, result.json).
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include "ctxproto.h"

const char *const ctx_fmt_names[CTX_NFMT] = {
	"text", "html", "markdown", "svg",  "png",
	"jpeg", "pdf",	"latex",    "json", "javascript",
};

int ctx_fmt_index(const char *name)
{
	for (int i = 0; i < CTX_NFMT; i++)
		if (strcmp(ctx_fmt_names[i], name) == 0)
			return i;
	return -1;
}

ssize_t ctxproto_parse(const char *buf, size_t len, struct ctxproto_frame *f)
{
	size_t i = 0, n = 0, digits = 0;

	while (i < len && buf[i] >= 'a' && buf[i] <= 'z')
		i++;
	if (i == len)
		return i > CTXPROTO_TAG_MAX ? -EINVAL : 0;
	if (i == 0 || i > CTXPROTO_TAG_MAX || buf[i] != ' ')
		return -EINVAL;
	memcpy(f->tag, buf, i);
	f->tag[i] = '\0';
	for (i++; i < len && buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
		n = n * 10 + (size_t)(buf[i] - '0');
		if (n > CTXPROTO_LEN_MAX || digits >= 10)
			return -EINVAL;
	}
	if (i == len)
		return 0;
	if (digits == 0 || buf[i] != '\n')
		return -EINVAL;
	i++;
	if (len - i < n)
		return 0;
	f->data = buf + i;
	f->len = n;
	return (ssize_t)(i + n);
}

void ctxproto_key(char *buf)
{
	static uint64_t state;
	uint64_t k;

	/* without entropy yet (early boot), still nothing code can know */
	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != sizeof(k))
		k = (state += 0x9e3779b97f4a7c15ULL ^ (uint64_t)clock()) *
		    0xbf58476d1ce4e5b9ULL;
	snprintf(buf, CTX_KEY_LEN + 1, "%016llx", (unsigned long long)k);
}

int ctxproto_unkey(struct ctxproto_frame *f, const char *key)
{
	size_t n = strlen(key);

	if (f->len < n || memcmp(f->data, key, n) != 0)
		return -EPERM;
	f->data += n;
	f->len -= n;
	return 0;
}

void ctxproto_put(struct strbuf *b, const char *tag, const void *data,
		  size_t len)
{
	sb_addf(b, "%s %zu\n", tag, len);
	sb_add(b, data, len);
}

static int new_result(struct ctx_exec *e,
		      uint64_t (*new_id)(struct ctx_result *r))
{
	struct ctx_result **v = realloc(e->res, (e->nres + 1) * sizeof(*v));
	struct ctx_result *r;

	if (!v)
		return -ENOMEM;
	e->res = v;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->no = (unsigned)e->nres + 1;
	e->res[e->nres++] = r;
	r->id = new_id ? new_id(r) : 0;
	return 0;
}

static int set_fmt(struct ctx_exec *e, int i, const struct ctxproto_frame *f)
{
	struct ctx_result *r = e->nres ? e->res[e->nres - 1] : NULL;
	char *p;

	if (!r || r->fmt[i].has)
		return -EINVAL;
	if (f->len > CTX_FMT_MAX)
		return -EFBIG;
	p = malloc(f->len + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, f->data, f->len);
	p[f->len] = '\0';
	r->fmt[i].p = p;
	r->fmt[i].len = f->len;
	r->fmt[i].has = true;
	return 0;
}

static int add_trace(struct ctx_exec *e, const char *s, size_t n)
{
	char **v = realloc(e->trace, (e->ntrace + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	e->trace = v;
	v[e->ntrace] = strndup(s, n);
	if (!v[e->ntrace])
		return -ENOMEM;
	e->ntrace++;
	return 0;
}

int ctx_exec_frame(struct ctx_exec *e, const struct ctxproto_frame *f,
		   uint64_t (*new_id)(struct ctx_result *r))
{
	int i = ctx_fmt_index(f->tag);

	if (i >= 0)
		return set_fmt(e, i, f);
	if (strcmp(f->tag, "result") == 0)
		return new_result(e, new_id);
	if (strcmp(f->tag, "main") == 0) {
		if (!e->nres || ctx_exec_main(e))
			return -EINVAL;
		e->res[e->nres - 1]->main = true;
		return 0;
	}
	if (strcmp(f->tag, "ename") == 0 || strcmp(f->tag, "evalue") == 0) {
		struct strbuf *b = f->tag[1] == 'n' ? &e->ename : &e->evalue;

		e->has_error = true;
		b->len = 0;
		sb_add(b, f->data, f->len);
		return b->err;
	}
	if (strcmp(f->tag, "etrace") == 0)
		return e->has_error = true, add_trace(e, f->data, f->len);
	if (strcmp(f->tag, "done") == 0)
		return e->done = true, 0;
	return -EINVAL;
}

int ctx_exec_fail(struct ctx_exec *e, const char *name, const char *value)
{
	struct ctxproto_frame f = { "ename", name, strlen(name) };
	int rc = ctx_exec_frame(e, &f, NULL);

	f = (struct ctxproto_frame){ "evalue", value, strlen(value) };
	return rc < 0 ? rc : ctx_exec_frame(e, &f, NULL);
}

void ctx_exec_free(struct ctx_exec *e, void (*del_id)(uint64_t id))
{
	for (size_t i = 0; i < e->nres; i++) {
		for (int k = 0; k < CTX_NFMT; k++)
			free(e->res[i]->fmt[k].p);
		if (del_id && e->res[i]->id)
			del_id(e->res[i]->id);
		free(e->res[i]);
	}
	for (size_t i = 0; i < e->ntrace; i++)
		free(e->trace[i]);
	free(e->trace);
	free(e->res);
	free(e->ename.p);
	free(e->evalue.p);
	memset(e, 0, sizeof(*e));
}

size_t ctx_exec_bytes(const struct ctx_exec *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->nres; i++)
		for (int k = 0; k < CTX_NFMT; k++)
			n += e->res[i]->fmt[k].len;
	return n;
}

void ctx_exec_shed(struct ctx_exec *e)
{
	for (size_t i = 0; i < e->nres; i++)
		for (int k = 0; k < CTX_NFMT; k++) {
			free(e->res[i]->fmt[k].p);
			e->res[i]->fmt[k].p = NULL;
			e->res[i]->fmt[k].len = 0;
			e->res[i]->fmt[k].has = false;
		}
}

const struct ctx_result *ctx_exec_main(const struct ctx_exec *e)
{
	for (size_t i = 0; i < e->nres; i++)
		if (e->res[i]->main)
			return e->res[i];
	return NULL;
}

static void error_object(struct strbuf *b, const struct ctx_exec *e)
{
	sb_add(b, "{\"name\": ", 9);
	sb_add_json(b, e->ename.p ? e->ename.p : "", e->ename.len);
	sb_add(b, ", \"value\": ", 11);
	sb_add_json(b, e->evalue.p ? e->evalue.p : "", e->evalue.len);
	sb_add(b, ", \"traceback\": [", 16);
	for (size_t i = 0; i < e->ntrace; i++) {
		if (i)
			sb_add(b, ", ", 2);
		sb_add_json(b, e->trace[i], strlen(e->trace[i]));
	}
	sb_add(b, "]}", 2);
}

char *ctx_exec_error_json(const struct ctx_exec *e, size_t *len)
{
	struct strbuf b = { 0 };

	sb_add(&b, "", 0);
	if (e->has_error) {
		error_object(&b, e);
		sb_add(&b, "\n", 1);
	}
	return sb_take(&b, len);
}

void ctx_base64(struct strbuf *b, const char *data, size_t len)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = (const unsigned char *)data;
	char q[4];

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = s[i] << 16 | (i + 1 < len ? s[i + 1] << 8 : 0) |
			     (i + 2 < len ? s[i + 2] : 0);

		q[0] = abc[v >> 18 & 63];
		q[1] = abc[v >> 12 & 63];
		q[2] = i + 1 < len ? abc[v >> 6 & 63] : '=';
		q[3] = i + 2 < len ? abc[v & 63] : '=';
		sb_add(b, q, 4);
	}
}

static bool fmt_binary(int i)
{
	return i == 4 || i == 5 || i == 6; /* png, jpeg, pdf */
}

static void result_object(struct strbuf *b, const struct ctx_result *r)
{
	sb_add(b, "{", 1);
	for (int i = 0; i < CTX_NFMT; i++) {
		if (!r->fmt[i].has)
			continue;
		sb_addf(b, "\"%s\": ", ctx_fmt_names[i]);
		if (fmt_binary(i)) {
			sb_add(b, "\"", 1);
			ctx_base64(b, r->fmt[i].p, r->fmt[i].len);
			sb_add(b, "\"", 1);
		} else {
			sb_add_json(b, r->fmt[i].p, r->fmt[i].len);
		}
		sb_add(b, ", ", 2);
	}
	sb_addf(b, "\"isMainResult\": %s}", r->main ? "true" : "false");
}

/* A JSON array of the lines of s (each with its newline). */
static void lines_array(struct strbuf *b, const char *s, size_t n)
{
	size_t i = 0;

	sb_add(b, "[", 1);
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) + 1 : n;

		if (i)
			sb_add(b, ", ", 2);
		sb_add_json(b, s + i, end - i);
		i = end;
	}
	sb_add(b, "]", 1);
}

char *ctx_exec_json(const struct ctx_exec *e, const char *out, size_t olen,
		    const char *err, size_t elen, size_t *len)
{
	struct strbuf b = { 0 };

	sb_add(&b, "{\"results\": [", 13);
	for (size_t i = 0; i < e->nres; i++) {
		if (i)
			sb_add(&b, ", ", 2);
		result_object(&b, e->res[i]);
	}
	sb_add(&b, "], \"logs\": {\"stdout\": ", 22);
	lines_array(&b, out, olen);
	sb_add(&b, ", \"stderr\": ", 12);
	lines_array(&b, err, elen);
	sb_add(&b, "}, \"error\": ", 12);
	if (e->has_error)
		error_object(&b, e);
	else
		sb_add(&b, "null", 4);
	sb_addf(&b, ", \"executionCount\": %u}\n", e->count);
	return sb_take(&b, len);
}
