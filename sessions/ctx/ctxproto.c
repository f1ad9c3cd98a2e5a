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
#include "sessions/core/jsonck.h"
#include "sessions/ctx/ctxproto.h"

const char *const ctx_fmt_names[CTX_NFMT] = {
	"text", "html",	 "markdown", "svg",	   "png",   "jpeg",
	"pdf",	"latex", "json",     "javascript", "chart",
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

#define SHED_NAME_MAX 256 /* what a shed record keeps of its error's name */

/* Frees r's formats. */
static void clear_result(struct ctx_exec *e, struct ctx_result *r)
{
	for (int k = 0; k < CTX_NFMT; k++) {
		free(r->fmt[k].p);
		e->bytes -= r->fmt[k].len;
		r->fmt[k].p = NULL;
		r->fmt[k].len = 0;
		r->fmt[k].has = false;
	}
}

/* The results past the bound share one slot, the latest, which a new
 * one empties and takes with an id of its own (its files are new). */
static int reuse_last(struct ctx_exec *e, const struct ctx_ids *ids)
{
	struct ctx_result *r = e->res[e->nres - 1];

	clear_result(e, r);
	r->main = false;
	e->dropped++;
	if (ids && r->id)
		ids->del(r->id);
	r->id = ids ? ids->add(r) : 0;
	return 0;
}

struct ctx_result *ctx_exec_add_result(struct ctx_exec *e)
{
	struct ctx_result *r;

	if (e->nres == e->cap) {
		size_t n = e->cap ? e->cap * 2 : 8;
		struct ctx_result **v = realloc(e->res, n * sizeof(*v));

		if (!v)
			return NULL;
		e->res = v;
		e->cap = n;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->no = (unsigned)e->nres + 1;
	e->res[e->nres++] = r;
	return r;
}

static int new_result(struct ctx_exec *e, const struct ctx_ids *ids)
{
	struct ctx_result *r;

	if (e->nres > CTX_RESULTS_MAX)
		return reuse_last(e, ids);
	r = ctx_exec_add_result(e);
	if (!r)
		return -ENOMEM;
	r->id = ids ? ids->add(r) : 0;
	return 0;
}

/* The latest result past the bound is dropped unless it is the value. */
static void end_results(struct ctx_exec *e, const struct ctx_ids *ids)
{
	struct ctx_result *r = e->nres ? e->res[e->nres - 1] : NULL;

	if (e->nres <= CTX_RESULTS_MAX || r->main)
		return;
	clear_result(e, r);
	if (ids && r->id)
		ids->del(r->id);
	free(r);
	e->nres--;
	e->dropped++;
}

static int set_fmt(struct ctx_exec *e, int i, const struct ctxproto_frame *f)
{
	struct ctx_result *r = e->nres ? e->res[e->nres - 1] : NULL;
	char *p;

	if (!r || r->fmt[i].has)
		return -EINVAL;
	if (f->len > CTX_FMT_MAX || f->len > CTX_KEEP_MAX - e->bytes)
		return -EFBIG;
	p = malloc(f->len + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, f->data, f->len);
	p[f->len] = '\0';
	r->fmt[i].p = p;
	r->fmt[i].len = f->len;
	r->fmt[i].has = true;
	e->bytes += f->len;
	return 0;
}

/* What of n bytes of error text e keeps: its error at most CTX_ERR_MAX,
 * all it keeps at most CTX_KEEP_MAX. */
static size_t err_room(const struct ctx_exec *e, size_t n)
{
	size_t room = CTX_ERR_MAX - e->err_bytes;

	if (CTX_KEEP_MAX - e->bytes < room)
		room = CTX_KEEP_MAX - e->bytes;
	return n < room ? n : room;
}

static void count_err(struct ctx_exec *e, size_t kept, size_t n)
{
	e->bytes += kept;
	e->err_bytes += kept;
	e->err_cut |= kept < n;
}

/* A hash of s, eight bytes a step: a message of 100 MiB is hashed in
 * tens of ms, not the 150 ms of one byte a step, while the loop waits. */
static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* ename or evalue (again: the new text replaces the old). */
static int set_err_text(struct ctx_exec *e, struct strbuf *b,
			const struct ctxproto_frame *f)
{
	size_t n;

	e->has_error = true;
	e->bytes -= b->len;
	e->err_bytes -= b->len;
	b->len = 0;
	n = err_room(e, f->len);
	if (b == &e->evalue && n > CTX_ERR_MAX / 2) {
		/* the traceback keeps room for its lines */
		n = CTX_ERR_MAX / 2;
		e->err_cut = true;
	}
	sb_add(b, f->data, n);
	if (b->err)
		return b->err;
	count_err(e, n, f->len);
	if (b == &e->evalue) {
		e->vlen = f->len;
		e->vhash = fnv(f->data, f->len);
	}
	return 0;
}

/* Whether line is "ename: evalue" (the value as it came). */
static bool is_value_line(const struct ctx_exec *e, const char *s, size_t n)
{
	size_t k = e->ename.len;

	return e->evalue.p && n == k + 2 + e->vlen &&
	       (k == 0 || memcmp(s, e->ename.p, k) == 0) && s[k] == ':' &&
	       s[k + 1] == ' ' && fnv(s + k + 2, e->vlen) == e->vhash;
}

static int add_trace(struct ctx_exec *e, const char *s, size_t n)
{
	bool ref = is_value_line(e, s, n);
	size_t kept = ref ? 0 : err_room(e, n);
	char **v;

	e->has_error = true;
	if (!ref && kept == 0 && n)
		return count_err(e, 0, n), 0; /* no room: the line is dropped */
	v = realloc(e->trace, (e->ntrace + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->trace = v;
	v[e->ntrace] = ref ? NULL : strndup(s, kept);
	if (!ref && !v[e->ntrace])
		return -ENOMEM;
	e->ntrace++;
	if (!ref) { /* a line is a string: what follows a NUL is not kept */
		count_err(e, strlen(v[e->ntrace - 1]), 0);
		e->err_cut |= kept < n;
	}
	return 0;
}

size_t ctx_exec_room(const struct ctx_exec *e, const struct ctxproto_frame *f)
{
	if (ctx_fmt_index(f->tag) >= 0)
		return f->len > CTX_FMT_MAX || f->len > CTX_KEEP_MAX - e->bytes ?
			       0 :
			       f->len;
	if (strcmp(f->tag, "ename") == 0 || strcmp(f->tag, "evalue") == 0 ||
	    strcmp(f->tag, "etrace") == 0)
		return err_room(e, f->len); /* at most: a line may be kept once */
	return 0;
}

int ctx_exec_frame(struct ctx_exec *e, const struct ctxproto_frame *f,
		   const struct ctx_ids *ids)
{
	int i = ctx_fmt_index(f->tag);

	if (i >= 0)
		return set_fmt(e, i, f);
	if (strcmp(f->tag, "result") == 0)
		return new_result(e, ids);
	if (strcmp(f->tag, "main") == 0) {
		if (!e->nres || ctx_exec_main(e))
			return -EINVAL;
		e->res[e->nres - 1]->main = true;
		return 0;
	}
	if (strcmp(f->tag, "ename") == 0)
		return set_err_text(e, &e->ename, f);
	if (strcmp(f->tag, "evalue") == 0)
		return set_err_text(e, &e->evalue, f);
	if (strcmp(f->tag, "etrace") == 0)
		return add_trace(e, f->data, f->len);
	if (strcmp(f->tag, "done") == 0) {
		end_results(e, ids);
		e->done = true;
		return 0;
	}
	return -EINVAL;
}

int ctx_exec_fail(struct ctx_exec *e, const char *name, const char *value)
{
	struct ctxproto_frame f = { "ename", name, strlen(name) };
	int rc = ctx_exec_frame(e, &f, NULL);

	f = (struct ctxproto_frame){ "evalue", value, strlen(value) };
	return rc < 0 ? rc : ctx_exec_frame(e, &f, NULL);
}

static void free_trace(struct ctx_exec *e)
{
	for (size_t i = 0; i < e->ntrace; i++)
		free(e->trace[i]);
	free(e->trace);
	e->trace = NULL;
	e->ntrace = 0;
}

/* Readers of result.json keep their copy; new ones make another. */
static void detach_json(struct ctx_exec *e)
{
	if (e->json)
		e->json->owner = NULL;
	e->json = NULL;
}

void ctx_exec_free(struct ctx_exec *e, void (*del_id)(uint64_t id))
{
	detach_json(e);
	for (size_t i = 0; i < e->nres; i++) {
		for (int k = 0; k < CTX_NFMT; k++)
			free(e->res[i]->fmt[k].p);
		if (del_id && e->res[i]->id)
			del_id(e->res[i]->id);
		free(e->res[i]);
	}
	free_trace(e);
	free(e->res);
	free(e->ename.p);
	free(e->evalue.p);
	memset(e, 0, sizeof(*e));
}

size_t ctx_exec_bytes(const struct ctx_exec *e)
{
	return e->bytes;
}

void ctx_exec_shed(struct ctx_exec *e)
{
	detach_json(e);
	for (size_t i = 0; i < e->nres; i++)
		clear_result(e, e->res[i]);
	free_trace(e);
	free(e->evalue.p);
	e->evalue = (struct strbuf){ 0 };
	e->vlen = 0;
	if (e->ename.len > SHED_NAME_MAX) {
		/* what stays of a shed record is small: a name, not 1 MiB */
		struct strbuf name = { 0 };

		sb_add(&name, e->ename.p, SHED_NAME_MAX);
		free(e->ename.p);
		e->ename = name.err ? (struct strbuf){ 0 } : name;
	}
	e->bytes = e->err_bytes = e->ename.len;
}

const struct ctx_result *ctx_exec_main(const struct ctx_exec *e)
{
	for (size_t i = 0; i < e->nres; i++)
		if (e->res[i]->main)
			return e->res[i];
	return NULL;
}

/* The traceback's line that is the name and the value, kept once. */
static void value_line(struct strbuf *b, const struct ctx_exec *e)
{
	struct strbuf line = { 0 };

	sb_add(&line, e->ename.p ? e->ename.p : "", e->ename.len);
	sb_add(&line, ": ", 2);
	sb_add(&line, e->evalue.p ? e->evalue.p : "", e->evalue.len);
	if (line.err)
		b->err = line.err;
	else
		sb_add_json(b, line.p, line.len);
	free(line.p);
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
		if (e->trace[i])
			sb_add_json(b, e->trace[i], strlen(e->trace[i]));
		else
			value_line(b, e);
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

/* A chart as it is when it is JSON: its frame comes from the user's
 * interpreter, which may send anything. */
static void chart_value(struct strbuf *b, const char *p, size_t len)
{
	if (jsonck_valid(p, len))
		sb_add(b, p, len);
	else
		sb_add(b, "{\"type\": \"unknown\"}", 19);
}

/* One result, its formats while *room (bytes of formats) lasts; the
 * others are named in "omittedFormats". */
static void result_object(struct strbuf *b, const struct ctx_result *r,
			  size_t *room)
{
	bool left[CTX_NFMT] = { false }, any = false;

	sb_add(b, "{", 1);
	for (int i = 0; i < CTX_NFMT; i++) {
		if (!r->fmt[i].has)
			continue;
		if (r->fmt[i].len > *room) {
			left[i] = any = true;
			continue;
		}
		*room -= r->fmt[i].len;
		sb_addf(b, "\"%s\": ", ctx_fmt_names[i]);
		if (fmt_binary(i)) {
			sb_add(b, "\"", 1);
			ctx_base64(b, r->fmt[i].p, r->fmt[i].len);
			sb_add(b, "\"", 1);
		} else if (i == CTX_FMT_CHART) {
			chart_value(b, r->fmt[i].p, r->fmt[i].len);
		} else {
			sb_add_json(b, r->fmt[i].p, r->fmt[i].len);
		}
		sb_add(b, ", ", 2);
	}
	if (any) {
		sb_add(b, "\"omittedFormats\": [", 19);
		for (int i = 0, n = 0; i < CTX_NFMT; i++)
			if (left[i])
				sb_addf(b, "%s\"%s\"", n++ ? ", " : "",
					ctx_fmt_names[i]);
		sb_add(b, "], ", 3);
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
	size_t room = CTX_JSON_MAX;

	sb_add(&b, "{\"results\": [", 13);
	for (size_t i = 0; i < e->nres; i++) {
		if (i)
			sb_add(&b, ", ", 2);
		result_object(&b, e->res[i], &room);
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
