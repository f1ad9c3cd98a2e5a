/*
 * ctxrec.c - what one execution produced (struct ctx_exec) as state
 * (sessions/core/state.h), written by an upgrade in place and read by
 * the next program: its results with their ids, its error and its
 * traceback. Pure, as ctxproto.c, so that it is tested on its own.
 *
 * The byte counts (bytes, err_bytes) are not saved but counted again
 * from the texts read, and a record past the bounds that the frames keep
 * (CTX_RESULTS_MAX, CTX_FMT_MAX, CTX_ERR_MAX, CTX_KEEP_MAX) is refused:
 * the arithmetic of those bounds must never wrap.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/ctx/ctxproto.h"

enum {
	R_DROPPED = 1,
	R_ERR_CUT,
	R_HAS_ERROR,
	R_ENAME,
	R_EVALUE,
	R_VLEN,
	R_VHASH,
	R_TRACE, /* each line: 'L', its text and a NUL; or "R\0", the value */
	R_COUNT,
	R_DONE,
	R_RES, /* objects, one a result, in order */
};

enum { E_ID = 1, E_MAIN, E_FMT = 16 /* + the format's index */ };

/* What a record saved without its texts keeps of its error's name (as
 * ctx_exec_shed). */
#define SAVE_NAME_MAX 256

static void save_result(const struct ctx_result *r, struct state_w *w,
			bool full)
{
	state_open(w, R_RES);
	state_put_u64(w, E_ID, r->id);
	state_put_u64(w, E_MAIN, r->main);
	for (int k = 0; full && k < CTX_NFMT; k++)
		if (r->fmt[k].has)
			state_put(w, (uint16_t)(E_FMT + k),
				  r->fmt[k].p ? r->fmt[k].p : "",
				  r->fmt[k].len);
	state_close(w);
}

static void save_trace(const struct ctx_exec *e, struct state_w *w)
{
	struct strbuf b = { 0 };

	for (size_t i = 0; i < e->ntrace; i++) {
		sb_add(&b, e->trace[i] ? "L" : "R", 1);
		if (e->trace[i])
			sb_add(&b, e->trace[i], strlen(e->trace[i]));
		sb_add(&b, "", 1);
	}
	if (b.err)
		w->err = w->err ? w->err : b.err;
	else if (e->ntrace)
		state_put(w, R_TRACE, b.p, b.len);
	free(b.p);
}

void ctx_exec_save(const struct ctx_exec *e, struct state_w *w, bool full)
{
	size_t n = e->ename.len;

	state_put_u64(w, R_DROPPED, e->dropped);
	state_put_u64(w, R_ERR_CUT, e->err_cut);
	state_put_u64(w, R_HAS_ERROR, e->has_error);
	if (e->ename.p)
		state_put(w, R_ENAME, e->ename.p,
			  full || n < SAVE_NAME_MAX ? n : SAVE_NAME_MAX);
	if (e->evalue.p && full)
		state_put(w, R_EVALUE, e->evalue.p, e->evalue.len);
	state_put_u64(w, R_VLEN, full ? e->vlen : 0);
	state_put_u64(w, R_VHASH, e->vhash);
	if (full)
		save_trace(e, w);
	state_put_u64(w, R_COUNT, e->count);
	state_put_u64(w, R_DONE, e->done);
	for (size_t i = 0; i < e->nres; i++)
		save_result(e->res[i], w, full);
}

/* A result of o into r (which e holds already, so that freeing e frees
 * it on any error). */
static int restore_formats(struct ctx_exec *e, struct ctx_result *r,
			   const struct state_r *o)
{
	const void *p;
	size_t len;

	for (int k = 0; k < CTX_NFMT; k++) {
		if (!state_get(o, (uint16_t)(E_FMT + k), &p, &len))
			continue;
		if (len > CTX_FMT_MAX || len > CTX_KEEP_MAX - e->bytes)
			return -EINVAL;
		r->fmt[k].p = malloc(len + 1);
		if (!r->fmt[k].p)
			return -ENOMEM;
		memcpy(r->fmt[k].p, p, len);
		r->fmt[k].p[len] = '\0';
		r->fmt[k].len = len;
		r->fmt[k].has = true;
		e->bytes += len;
	}
	return 0;
}

/* The next result; its id is the saved one, given again by ids->add
 * (which finds it in r->id). */
static int restore_result(struct ctx_exec *e, const struct state_r *o,
			  const struct ctx_ids *ids)
{
	struct ctx_result *r;

	if (e->nres > CTX_RESULTS_MAX)
		return -EINVAL; /* past the bound only the latest is kept */
	r = ctx_exec_add_result(e);
	if (!r)
		return -ENOMEM;
	/* one value at most, as the "main" frame allows */
	r->main = state_get_u64(o, E_MAIN, 0) && !ctx_exec_main(e);
	r->id = state_get_u64(o, E_ID, 0);
	r->id = ids ? ids->add(r) : 0;
	return restore_formats(e, r, o);
}

/* One error text into b, counted. */
static int restore_text(struct ctx_exec *e, const struct state_r *o,
			uint16_t key, struct strbuf *b)
{
	const void *p;
	size_t len;

	if (!state_get(o, key, &p, &len))
		return 0;
	if (len > CTX_ERR_MAX - e->err_bytes)
		return -EINVAL;
	sb_add(b, "", 0); /* present, even when empty */
	sb_add(b, p, len);
	e->bytes += len;
	e->err_bytes += len;
	return b->err;
}

static int add_line(struct ctx_exec *e, const char *s, bool ref)
{
	size_t n = ref ? 0 : strlen(s);
	char **v;

	if (n > CTX_ERR_MAX - e->err_bytes)
		return -EINVAL;
	v = realloc(e->trace, (e->ntrace + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->trace = v;
	v[e->ntrace] = ref ? NULL : strdup(s);
	if (!ref && !v[e->ntrace])
		return -ENOMEM;
	e->ntrace++;
	e->bytes += n;
	e->err_bytes += n;
	return 0;
}

static int restore_trace(struct ctx_exec *e, const struct state_r *o)
{
	const void *p;
	const char *s, *end, *nul;
	size_t len;
	int rc = 0;

	if (!state_get(o, R_TRACE, &p, &len))
		return 0;
	s = p;
	end = s + len;
	while (rc == 0 && s < end) {
		nul = memchr(s, '\0', (size_t)(end - s));
		if (!nul || (*s != 'L' && *s != 'R') ||
		    (*s == 'R' && nul != s + 1))
			return -EINVAL;
		rc = add_line(e, s + 1, *s == 'R');
		s = nul + 1;
	}
	return rc;
}

static int restore_results(struct ctx_exec *e, const struct state_r *o,
			   const struct ctx_ids *ids)
{
	struct state_r body;
	size_t pos = 0;
	uint16_t key;
	int rc = 0;

	while (rc == 0 && state_next(o, &pos, &key, &body) == 1)
		if (key == R_RES)
			rc = restore_result(e, &body, ids);
	return rc;
}

int ctx_exec_restore(struct ctx_exec *e, const struct state_r *o,
		     const struct ctx_ids *ids)
{
	int rc;

	memset(e, 0, sizeof(*e));
	e->dropped = state_get_u64(o, R_DROPPED, 0);
	e->err_cut = state_get_u64(o, R_ERR_CUT, 0) != 0;
	e->has_error = state_get_u64(o, R_HAS_ERROR, 0) != 0;
	e->vlen = state_get_u64(o, R_VLEN, 0);
	e->vhash = state_get_u64(o, R_VHASH, 0);
	e->count = (unsigned)state_get_u64(o, R_COUNT, 0);
	e->done = state_get_u64(o, R_DONE, 0) != 0;
	rc = restore_text(e, o, R_ENAME, &e->ename);
	if (rc == 0)
		rc = restore_text(e, o, R_EVALUE, &e->evalue);
	if (rc == 0)
		rc = restore_trace(e, o);
	if (rc == 0)
		rc = restore_results(e, o, ids);
	return rc;
}
