/* test_ctxproto.c - the frames of code contexts (ctxproto_parse and
 * ctxproto_put) and an execution's record with its texts (error and
 * result.json). */
#include <errno.h>
#include "sessions/core/jsonck.h"
#include "sessions/ctx/ctxproto.h"
#include "unit.h"

/* Parses the first len bytes of s, copied so that a read past them
 * crashes. */
static ssize_t parse_n(const char *s, size_t len, struct ctxproto_frame *f,
		       char *data)
{
	struct guarded g;
	const char *p = guard_copy(&g, s, len);
	ssize_t n = ctxproto_parse(p, len, f);

	if (n > 0) {
		memcpy(data, f->data, f->len);
		data[f->len] = '\0';
	}
	guard_free(&g);
	return n;
}

START_TEST(parse_frames)
{
	struct ctxproto_frame f;
	char d[64];

	ck_assert_int_eq(parse_n("done 0\n", 7, &f, d), 7);
	ck_assert_str_eq(f.tag, "done");
	ck_assert_uint_eq(f.len, 0);
	ck_assert_int_eq(parse_n("text 2\n42more", 13, &f, d), 9);
	ck_assert_str_eq(f.tag, "text");
	ck_assert_str_eq(d, "42");
	/* the payload is bytes: NUL and newlines too */
	ck_assert_int_eq(parse_n("png 3\n\0\n\0", 9, &f, d), 9);
	ck_assert_uint_eq(f.len, 3);
}
END_TEST

START_TEST(parse_incomplete)
{
	const char *full = "etrace 5\nline1";
	struct ctxproto_frame f;
	char d[64];

	/* every prefix is incomplete, not an error */
	for (size_t n = 0; n < strlen(full); n++)
		ck_assert_int_eq(parse_n(full, n, &f, d), 0);
	ck_assert_int_eq(parse_n(full, strlen(full), &f, d),
			 (ssize_t)strlen(full));
}
END_TEST

START_TEST(parse_bad)
{
	static const char *const bad[] = {
		"Done 0\n",
		" done 0\n",
		"done\n",
		"done x\n",
		"done 1x\n",
		"done 0 \n",
		"done -1\n",
		"do-ne 0\n",
		"sixteenletterstag 0\n",
		"done 99999999999\n",
		"done 268435457\n",
	};
	struct ctxproto_frame f;
	char d[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(parse_n(bad[i], strlen(bad[i]), &f, d) == -EINVAL,
			      "%s", bad[i]);
}
END_TEST

START_TEST(put_reads_back)
{
	struct strbuf b = { 0 };
	struct ctxproto_frame f;
	char d[64];

	ctxproto_put(&b, "code", "/a/b", 4);
	ck_assert_int_eq(parse_n(b.p, b.len, &f, d), (ssize_t)b.len);
	ck_assert_str_eq(f.tag, "code");
	ck_assert_str_eq(d, "/a/b");
	free(b.p);
}
END_TEST

static void frame(struct ctx_exec *e, const char *tag, const char *data,
		  int want)
{
	struct ctxproto_frame f = { .data = data, .len = strlen(data) };

	snprintf(f.tag, sizeof(f.tag), "%s", tag);
	ck_assert_int_eq(ctx_exec_frame(e, &f, NULL), want);
}

START_TEST(exec_record)
{
	struct ctx_exec e = { 0 };
	size_t len;
	char *t;

	frame(&e, "text", "1", -EINVAL); /* no result yet */
	frame(&e, "main", "", -EINVAL);
	frame(&e, "result", "", 0);
	frame(&e, "png", "\x89PNG", 0);
	frame(&e, "result", "", 0);
	frame(&e, "text", "42", 0);
	frame(&e, "text", "43", -EINVAL); /* one of each format */
	frame(&e, "main", "", 0);
	frame(&e, "main", "", -EINVAL); /* one main result */
	frame(&e, "bogus", "", -EINVAL);
	ck_assert_uint_eq(e.nres, 2);
	ck_assert_ptr_eq(ctx_exec_main(&e), e.res[1]);
	ck_assert_uint_eq(e.res[1]->no, 2);
	t = ctx_exec_error_json(&e, &len);
	ck_assert_str_eq(t, "");
	free(t);
	frame(&e, "ename", "ZeroDivisionError", 0);
	frame(&e, "evalue", "division by zero", 0);
	frame(&e, "etrace", "  File \"<cell 1>\", line 1", 0);
	frame(&e, "done", "", 0);
	ck_assert(e.done);
	t = ctx_exec_error_json(&e, &len);
	ck_assert_str_eq(t, "{\"name\": \"ZeroDivisionError\", \"value\": "
			    "\"division by zero\", \"traceback\": [\"  File "
			    "\\\"<cell 1>\\\", line 1\"]}\n");
	free(t);
	ctx_exec_free(&e, NULL);
}
END_TEST

START_TEST(exec_json)
{
	struct ctx_exec e = { 0 };
	size_t len;
	char *t;

	frame(&e, "result", "", 0);
	frame(&e, "png", "abcd", 0);
	frame(&e, "result", "", 0);
	frame(&e, "text", "'a\"b'", 0);
	frame(&e, "main", "", 0);
	e.count = 3;
	t = ctx_exec_json(&e, "x\ny", 3, "", 0, &len);
	ck_assert_str_eq(t, "{\"results\": [{\"png\": \"YWJjZA==\", "
			    "\"isMainResult\": false}, {\"text\": "
			    "\"'a\\\"b'\", \"isMainResult\": true}], "
			    "\"logs\": {\"stdout\": [\"x\\n\", \"y\"], "
			    "\"stderr\": []}, \"error\": null, "
			    "\"executionCount\": 3}\n");
	ck_assert_uint_eq(len, strlen(t));
	free(t);
	ctx_exec_free(&e, NULL);
}
END_TEST

START_TEST(base64)
{
	static const char *const in[] = { "",	  "f",	   "fo",    "foo",
					  "foob", "fooba", "foobar" };
	static const char *const out[] = {
		"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"
	};

	for (size_t i = 0; i < 7; i++) {
		struct strbuf b = { 0 };
		size_t len;
		char *t;

		sb_add(&b, "", 0);
		ctx_base64(&b, in[i], strlen(in[i]));
		t = sb_take(&b, &len);
		ck_assert_str_eq(t, out[i]);
		free(t);
	}
}
END_TEST

START_TEST(formats)
{
	ck_assert_int_eq(ctx_fmt_index("text"), 0);
	ck_assert_int_eq(ctx_fmt_index("png"), 4);
	ck_assert_int_eq(ctx_fmt_index("chart"), CTX_NFMT - 1);
	ck_assert_int_eq(ctx_fmt_index("main"), -1);
	ck_assert_int_eq(ctx_fmt_index(""), -1);
}
END_TEST

START_TEST(keys)
{
	char key[CTX_KEY_LEN + 1], other[CTX_KEY_LEN + 1];
	struct ctxproto_frame f = { "text", "0123456789abcdef42", 18 };

	ctxproto_key(key);
	ctxproto_key(other);
	ck_assert_uint_eq(strlen(key), CTX_KEY_LEN);
	ck_assert_str_ne(key, other);
	ck_assert_int_eq(ctxproto_unkey(&f, "0123456789abcdef"), 0);
	ck_assert_uint_eq(f.len, 2);
	ck_assert_int_eq(memcmp(f.data, "42", 2), 0);
	/* a frame without the key, or too short to have it */
	ck_assert_int_eq(ctxproto_unkey(&f, "0123456789abcdef"), -EPERM);
	f = (struct ctxproto_frame){ "done", "", 0 };
	ck_assert_int_eq(ctxproto_unkey(&f, key), -EPERM);
}
END_TEST

START_TEST(format_cap)
{
	struct ctx_exec e = { 0 };
	struct ctxproto_frame f = { "result", "", 0 };

	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	f = (struct ctxproto_frame){ "png", "x", CTX_FMT_MAX + 1 };
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), -EFBIG);
	f = (struct ctxproto_frame){ "text", "abc", 3 };
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ck_assert_uint_eq(ctx_exec_bytes(&e), 3);
	ctx_exec_shed(&e);
	ck_assert_uint_eq(ctx_exec_bytes(&e), 0);
	ck_assert(!e.res[0]->fmt[0].has);
	ctx_exec_free(&e, NULL);
}
END_TEST

static uint64_t ids_live, ids_next;

static uint64_t id_add(struct ctx_result *r)
{
	(void)r;
	ids_live++;
	return ++ids_next;
}

static void id_del(uint64_t id)
{
	ck_assert_uint_ne(id, 0);
	ids_live--;
}

static const struct ctx_ids ids = { id_add, id_del };

/* n results with a text of one byte, the last one the value if main. */
static void results(struct ctx_exec *e, size_t n, bool main)
{
	struct ctxproto_frame f = { "result", "", 0 };

	for (size_t i = 0; i < n; i++) {
		f = (struct ctxproto_frame){ "result", "", 0 };
		ck_assert_int_eq(ctx_exec_frame(e, &f, &ids), 0);
		f = (struct ctxproto_frame){ "text", "1", 1 };
		ck_assert_int_eq(ctx_exec_frame(e, &f, &ids), 0);
	}
	f = (struct ctxproto_frame){ "main", "", 0 };
	if (main)
		ck_assert_int_eq(ctx_exec_frame(e, &f, &ids), 0);
	f = (struct ctxproto_frame){ "done", "", 0 };
	ck_assert_int_eq(ctx_exec_frame(e, &f, &ids), 0);
}

START_TEST(results_bound)
{
	struct ctx_exec e = { 0 };

	ids_live = 0;
	results(&e, CTX_RESULTS_MAX + 5, false);
	ck_assert_uint_eq(e.nres, CTX_RESULTS_MAX);
	ck_assert_uint_eq(e.dropped, 5);
	ck_assert_uint_eq(ctx_exec_bytes(&e), CTX_RESULTS_MAX);
	ck_assert_uint_eq(ids_live, CTX_RESULTS_MAX);
	ck_assert_ptr_null(ctx_exec_main(&e));
	ctx_exec_free(&e, id_del);
	ck_assert_uint_eq(ids_live, 0);

	/* the value, the last result, is kept past the bound */
	results(&e, CTX_RESULTS_MAX + 5, true);
	ck_assert_uint_eq(e.nres, CTX_RESULTS_MAX + 1);
	ck_assert_uint_eq(e.dropped, 4);
	ck_assert_ptr_eq(ctx_exec_main(&e), e.res[CTX_RESULTS_MAX]);
	ck_assert_uint_eq(e.res[CTX_RESULTS_MAX]->no, CTX_RESULTS_MAX + 1);
	ck_assert_uint_eq(ctx_exec_bytes(&e), CTX_RESULTS_MAX + 1);
	ck_assert_uint_eq(ids_live, CTX_RESULTS_MAX + 1);
	ctx_exec_free(&e, id_del);
	ck_assert_uint_eq(ids_live, 0);
}
END_TEST

START_TEST(error_bound)
{
	struct ctx_exec e = { 0 };
	size_t big = 2u << 20, len;
	char *v = malloc(big + 16), *line = malloc(big + 16), *t;
	struct ctxproto_frame f = { "ename", "ValueError", 10 };

	memset(v, 'x', big);
	memcpy(line, "ValueError: ", 12);
	memset(line + 12, 'x', big);
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	f = (struct ctxproto_frame){ "evalue", v, big };
	ck_assert_uint_eq(ctx_exec_room(&e, &f), CTX_ERR_MAX - 10);
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ck_assert(e.err_cut);
	ck_assert_uint_eq(e.evalue.len, CTX_ERR_MAX / 2);
	f = (struct ctxproto_frame){ "etrace", "  File \"<cell 1>\"", 17 };
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	/* the line that is the name and the value is not kept again */
	f = (struct ctxproto_frame){ "etrace", line, big + 12 };
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ck_assert_uint_eq(ctx_exec_bytes(&e), 10 + CTX_ERR_MAX / 2 + 17);
	ck_assert_ptr_null(e.trace[1]);
	/* another line of that size is cut at what is left */
	line[0] = 'W';
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ck_assert_uint_eq(ctx_exec_bytes(&e), CTX_ERR_MAX);
	ck_assert_uint_eq(strlen(e.trace[2]), CTX_ERR_MAX / 2 - 27);
	t = ctx_exec_error_json(&e, &len);
	ck_assert_ptr_nonnull(strstr(t, "\"  File \\\"<cell 1>\\\"\", \"ValueError: xxx"));
	ck_assert_ptr_nonnull(strstr(t, "xxx\", \"WalueError: xxx"));
	ck_assert_uint_eq(len, strlen(t));
	ck_assert_uint_gt(len, 2 * CTX_ERR_MAX / 2 + CTX_ERR_MAX / 2 - 27);
	free(t);
	/* its texts are freed with the results, its name stays (256 bytes
	 * of it at most) */
	ctx_exec_shed(&e);
	ck_assert_uint_eq(ctx_exec_bytes(&e), 10);
	t = ctx_exec_error_json(&e, &len);
	ck_assert_str_eq(t, "{\"name\": \"ValueError\", \"value\": \"\", "
			    "\"traceback\": []}\n");
	free(t);
	f = (struct ctxproto_frame){ "ename", v, 1000 };
	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ctx_exec_shed(&e);
	ck_assert_uint_eq(ctx_exec_bytes(&e), 256);
	ck_assert_uint_eq(e.ename.len, 256);
	ctx_exec_free(&e, NULL);
	free(v);
	free(line);
}
END_TEST

/* A traceback line is a string: a NUL ends it, and what it keeps is
 * what it counts (the fuzzer found a count of bytes not kept). */
START_TEST(trace_nul)
{
	struct ctx_exec e = { 0 };
	struct ctxproto_frame f = { "etrace", "ab\0cd", 5 };

	ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	ck_assert_str_eq(e.trace[0], "ab");
	ck_assert_uint_eq(ctx_exec_bytes(&e), 2);
	ck_assert(!e.err_cut);
	ctx_exec_free(&e, NULL);
}
END_TEST

START_TEST(json_bound)
{
	struct ctx_exec e = { 0 };
	size_t half = CTX_JSON_MAX / 2 + 1, len;
	char *png = calloc(1, half), *t;
	struct ctxproto_frame f;

	for (int i = 0; i < 2; i++) {
		f = (struct ctxproto_frame){ "result", "", 0 };
		ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
		f = (struct ctxproto_frame){ "text", "p", 1 };
		ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
		f = (struct ctxproto_frame){ "png", png, half };
		ck_assert_int_eq(ctx_exec_frame(&e, &f, NULL), 0);
	}
	t = ctx_exec_json(&e, "", 0, "", 0, &len);
	/* the first png is there, the second is named */
	ck_assert_ptr_nonnull(strstr(t, "{\"text\": \"p\", \"png\": \"AAAA"));
	ck_assert_ptr_nonnull(strstr(t, "}, {\"text\": \"p\", \"omittedFormats\": "
				       "[\"png\"], \"isMainResult\": false}]"));
	ck_assert_uint_lt(len, (half + 2) / 3 * 4 + 300);
	free(t);
	ctx_exec_free(&e, NULL);
	free(png);
}
END_TEST

/* A chart is embedded in result.json as the object it is, or
 * {"type": "unknown"} when its text is not JSON. */
START_TEST(chart_json)
{
	struct ctx_exec e = { 0 };
	size_t len;
	char *t;

	frame(&e, "result", "", 0);
	frame(&e, "chart", "{\"type\": \"line\", \"elements\": [1, -2.5e3]}",
	      0);
	frame(&e, "result", "", 0);
	frame(&e, "chart", "{\"type\": \"line\"}, \"x\": 1}", 0);
	t = ctx_exec_json(&e, "", 0, "", 0, &len);
	ck_assert_str_eq(t, "{\"results\": [{\"chart\": {\"type\": \"line\", "
			    "\"elements\": [1, -2.5e3]}, \"isMainResult\": "
			    "false}, {\"chart\": {\"type\": \"unknown\"}, "
			    "\"isMainResult\": false}], \"logs\": {\"stdout\": "
			    "[], \"stderr\": []}, \"error\": null, "
			    "\"executionCount\": 0}\n");
	free(t);
	ctx_exec_free(&e, NULL);
}
END_TEST

/* jsonck_valid: JSON values and not quite, depth bounded. */
START_TEST(json_check)
{
	static const char *const good[] = {
		"0",
		"-0.5e+7",
		" [1, 2 ]\n",
		"{}",
		"[]",
		"\"a\\u00e9\\n\"",
		"{\"a\": {\"b\": [true, false, null]}}",
		"1E5",
	};
	static const char *const bad[] = {
		"",
		" ",
		"01",
		"1.",
		"-",
		".5",
		"[1,]",
		"{\"a\" 1}",
		"{a: 1}",
		"[1] [2]",
		"\"\\x\"",
		"\"\\u12g4\"",
		"\"\t\"",
		"\"\xc3\xa9\"",
		"tru",
		"nulls",
		"[",
		"\"open",
		"{\"a\": 1,}",
		"1e",
	};
	char deep[2 * JSONCK_DEPTH_MAX + 4];

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		ck_assert_msg(jsonck_valid(good[i], strlen(good[i])), "%s",
			      good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(!jsonck_valid(bad[i], strlen(bad[i])), "%s",
			      bad[i]);
	ck_assert(!jsonck_valid("[1]\0", 4)); /* a NUL is no blank */
	memset(deep, '[', JSONCK_DEPTH_MAX);
	memset(deep + JSONCK_DEPTH_MAX, ']', JSONCK_DEPTH_MAX);
	ck_assert(jsonck_valid(deep, 2 * JSONCK_DEPTH_MAX));
	memset(deep, '[', JSONCK_DEPTH_MAX + 1);
	memset(deep + JSONCK_DEPTH_MAX + 1, ']', JSONCK_DEPTH_MAX + 1);
	ck_assert(!jsonck_valid(deep, 2 * JSONCK_DEPTH_MAX + 2));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ctxproto");
	TCase *tc = tcase_create("frames");

	tcase_add_test(tc, parse_frames);
	tcase_add_test(tc, parse_incomplete);
	tcase_add_test(tc, parse_bad);
	tcase_add_test(tc, put_reads_back);
	suite_add_tcase(s, tc);
	tc = tcase_create("exec");
	tcase_add_test(tc, exec_record);
	tcase_add_test(tc, exec_json);
	tcase_add_test(tc, base64);
	tcase_add_test(tc, formats);
	tcase_add_test(tc, keys);
	tcase_add_test(tc, format_cap);
	tcase_add_test(tc, results_bound);
	tcase_add_test(tc, error_bound);
	tcase_add_test(tc, trace_nul);
	tcase_add_test(tc, json_bound);
	tcase_add_test(tc, chart_json);
	tcase_add_test(tc, json_check);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
