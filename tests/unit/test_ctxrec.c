/* test_ctxrec.c - an execution's record as state (sessions/ctx/ctxrec.c),
 * as an upgrade in place writes and reads it: the same results with the
 * same ids, error and traceback, the same texts made from them, and a
 * record past the bounds refused. */
#include <errno.h>
#include "sessions/core/state.h"
#include "sessions/ctx/ctxproto.h"
#include "unit.h"

static uint64_t next_id;

static uint64_t fresh_id(struct ctx_result *r)
{
	(void)r;
	return ++next_id;
}

/* The restore's ids: the saved one, which the record leaves in r->id. */
static uint64_t same_id(struct ctx_result *r)
{
	return r->id;
}

static const struct ctx_ids fresh = { fresh_id, NULL };
static const struct ctx_ids same = { same_id, NULL };

static void frame(struct ctx_exec *e, const char *tag, const void *data,
		  size_t len)
{
	struct ctxproto_frame f = { .data = data, .len = len };

	snprintf(f.tag, sizeof(f.tag), "%s", tag);
	ck_assert_int_eq(ctx_exec_frame(e, &f, &fresh), 0);
}

static void frame_s(struct ctx_exec *e, const char *tag, const char *s)
{
	frame(e, tag, s, strlen(s));
}

/* A record with a binary format, a value, an error and its traceback
 * whose last line is the value (kept as a reference). */
static void make_record(struct ctx_exec *e)
{
	next_id = 1000;
	frame_s(e, "result", "");
	frame(e, "png", "\x89PNG\0\r\n", 7);
	frame_s(e, "result", "");
	frame_s(e, "text", "42");
	frame_s(e, "html", "<b>42</b>");
	frame_s(e, "main", "");
	frame_s(e, "ename", "ValueError");
	frame_s(e, "evalue", "bad\nvalue");
	frame_s(e, "etrace", "Traceback (most recent call last):");
	frame_s(e, "etrace", "");
	frame_s(e, "etrace", "ValueError: bad\nvalue");
	frame_s(e, "done", "");
	e->count = 7;
}

/* e saved into one object, as its bytes (free *buf). */
static struct state_r save(const struct ctx_exec *e, const void **buf,
			   bool full)
{
	struct state_w w;
	struct state_r root, o;
	size_t len;
	void *copy;

	state_w_init(&w);
	state_open(&w, 5);
	ctx_exec_save(e, &w, full);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, buf, &len), 0);
	copy = malloc(len);
	memcpy(copy, *buf, len);
	state_w_free(&w);
	*buf = copy;
	ck_assert_int_eq(state_check(copy, len, &root), 0);
	ck_assert(state_obj(&root, 5, &o));
	return o;
}

static void same_text(char *a, size_t alen, char *b, size_t blen)
{
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(alen, blen);
	ck_assert_mem_eq(a, b, alen);
	free(a);
	free(b);
}

START_TEST(round_trip)
{
	struct ctx_exec e = { 0 }, r;
	const void *buf;
	struct state_r o;
	size_t alen, blen;
	char *a, *b;

	make_record(&e);
	o = save(&e, &buf, true);
	ck_assert_int_eq(ctx_exec_restore(&r, &o, &same), 0);
	ck_assert_uint_eq(r.nres, 2);
	ck_assert_uint_eq(r.res[0]->id, e.res[0]->id);
	ck_assert_uint_eq(r.res[1]->id, e.res[1]->id);
	ck_assert_uint_eq(r.res[1]->no, 2);
	ck_assert_ptr_eq(ctx_exec_main(&r), r.res[1]);
	ck_assert_uint_eq(r.res[0]->fmt[4].len, 7);
	ck_assert_mem_eq(r.res[0]->fmt[4].p, "\x89PNG\0\r\n", 7);
	ck_assert(!r.res[0]->fmt[0].has);
	ck_assert_uint_eq(r.ntrace, 3);
	ck_assert_ptr_null(r.trace[2]); /* the value, by reference */
	ck_assert_str_eq(r.trace[1], "");
	/* the bounds' counts are those the frames made */
	ck_assert_uint_eq(r.bytes, e.bytes);
	ck_assert_uint_eq(r.err_bytes, e.err_bytes);
	ck_assert_uint_eq(r.count, 7);
	ck_assert(r.done && r.has_error && !r.err_cut);
	a = ctx_exec_error_json(&e, &alen);
	b = ctx_exec_error_json(&r, &blen);
	same_text(a, alen, b, blen);
	a = ctx_exec_json(&e, "out\n", 4, "", 0, &alen);
	b = ctx_exec_json(&r, "out\n", 4, "", 0, &blen);
	same_text(a, alen, b, blen);
	ctx_exec_free(&e, NULL);
	ctx_exec_free(&r, NULL);
	free((void *)buf);
}
END_TEST

/* Saved without its texts (a checkpoint's budget): what shedding the
 * record would leave of it, its results there but empty. */
START_TEST(without_texts)
{
	struct ctx_exec e = { 0 }, shed = { 0 }, r;
	const void *buf;
	struct state_r o;
	size_t alen, blen;
	char *a, *b;

	make_record(&e);
	make_record(&shed);
	ctx_exec_shed(&shed);
	o = save(&e, &buf, false);
	ck_assert_int_eq(ctx_exec_restore(&r, &o, &same), 0);
	ck_assert_uint_eq(r.nres, 2);
	ck_assert_uint_eq(r.res[1]->id, e.res[1]->id);
	ck_assert_ptr_eq(ctx_exec_main(&r), r.res[1]);
	for (int k = 0; k < CTX_NFMT; k++)
		ck_assert(!r.res[0]->fmt[k].has && !r.res[1]->fmt[k].has);
	ck_assert_uint_eq(r.bytes, shed.bytes);
	ck_assert(r.done && r.has_error);
	a = ctx_exec_error_json(&shed, &alen);
	b = ctx_exec_error_json(&r, &blen);
	same_text(a, alen, b, blen);
	ctx_exec_free(&e, NULL);
	ctx_exec_free(&shed, NULL);
	ctx_exec_free(&r, NULL);
	free((void *)buf);
}
END_TEST

START_TEST(empty_and_missing)
{
	struct ctx_exec e = { 0 }, r;
	struct state_r none = { 0 };
	const void *buf;
	struct state_r o;

	/* an execution that has not answered yet */
	o = save(&e, &buf, true);
	ck_assert_int_eq(ctx_exec_restore(&r, &o, &same), 0);
	ck_assert(!r.done && !r.has_error && r.nres == 0 && r.bytes == 0);
	ctx_exec_free(&r, NULL);
	free((void *)buf);
	/* no object at all: every field its default */
	ck_assert_int_eq(ctx_exec_restore(&r, &none, NULL), 0);
	ck_assert(!r.done && r.ename.p == NULL);
	ctx_exec_free(&r, NULL);
}
END_TEST

/* An object of key 5 with a trace field of these bytes. */
static int restore_trace_bytes(const char *t, size_t len)
{
	struct state_w w;
	struct state_r root, o;
	struct ctx_exec r;
	const void *p;
	size_t n;
	int rc;

	state_w_init(&w);
	state_open(&w, 5);
	state_put(&w, 8 /* R_TRACE */, t, len);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &n), 0);
	ck_assert_int_eq(state_check(p, n, &root), 0);
	ck_assert(state_obj(&root, 5, &o));
	rc = ctx_exec_restore(&r, &o, NULL);
	ctx_exec_free(&r, NULL);
	state_w_free(&w);
	return rc;
}

START_TEST(bad_trace)
{
	ck_assert_int_eq(restore_trace_bytes("Lline\0R\0", 8), 0);
	ck_assert_int_eq(restore_trace_bytes("Lline", 5), -EINVAL); /* no NUL */
	ck_assert_int_eq(restore_trace_bytes("Xline\0", 6), -EINVAL);
	ck_assert_int_eq(restore_trace_bytes("Rx\0", 3), -EINVAL);
}
END_TEST

/* More results than the frames ever keep: refused, and freed. */
START_TEST(too_many_results)
{
	struct state_w w;
	struct state_r root, o;
	struct ctx_exec r;
	const void *p;
	size_t n;

	state_w_init(&w);
	state_open(&w, 5);
	for (unsigned i = 0; i < CTX_RESULTS_MAX + 2; i++) {
		state_open(&w, 11 /* R_RES */);
		state_put(&w, 16, "x", 1);
		state_close(&w);
	}
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &n), 0);
	ck_assert_int_eq(state_check(p, n, &root), 0);
	ck_assert(state_obj(&root, 5, &o));
	ck_assert_int_eq(ctx_exec_restore(&r, &o, NULL), -EINVAL);
	ck_assert_uint_eq(r.nres, CTX_RESULTS_MAX + 1);
	ctx_exec_free(&r, NULL);
	state_w_free(&w);
}
END_TEST

/* An error text past CTX_ERR_MAX would wrap the room the frames count. */
START_TEST(error_too_big)
{
	size_t big = CTX_ERR_MAX + 1;
	char *t = calloc(1, big);
	struct state_w w;
	struct state_r root, o;
	struct ctx_exec r;
	const void *p;
	size_t n;

	state_w_init(&w);
	state_open(&w, 5);
	state_put(&w, 5 /* R_EVALUE */, t, big);
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &n), 0);
	ck_assert_int_eq(state_check(p, n, &root), 0);
	ck_assert(state_obj(&root, 5, &o));
	ck_assert_int_eq(ctx_exec_restore(&r, &o, NULL), -EINVAL);
	ctx_exec_free(&r, NULL);
	state_w_free(&w);
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ctxrec");
	TCase *tc = tcase_create("record");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, without_texts);
	tcase_add_test(tc, empty_and_missing);
	tcase_add_test(tc, bad_trace);
	tcase_add_test(tc, too_many_results);
	tcase_add_test(tc, error_too_big);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
