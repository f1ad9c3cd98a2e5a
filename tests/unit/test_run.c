/* test_run.c - runs: state machine, exit/status/result.json, JSON strings. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include "sessions/core/objs.h"
#include "sessions/session/run.h"
#include "sessions/core/strbuf.h"
#include "unit.h"

/* ---- a small JSON reader, to check what the reports produce ---- */

struct jval {
	char type; /* 's'tring, 'n'umber, 't'rue, 'f'alse, 'z' null */
	char *s;   /* decoded string (UTF-8), or the number's text */
	size_t len;
};

struct jobj {
	char *key[32];
	struct jval val[32];
	int n;
};

static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], cp, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 &&
		     (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += k + 1;
	}
	return true;
}

static void put_utf8(struct strbuf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	}
	sb_add(b, u, n);
}

static unsigned hex4(const char *p)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			ck_abort_msg("bad \\u escape");
	}
	return v;
}

/* Decodes the JSON string at *p (at its opening quote), strictly. */
static void jstring(const char **p, const char *end, struct jval *v)
{
	struct strbuf b = { 0 };
	const char *s = *p;

	ck_assert_msg(s < end && *s == '"', "string expected");
	s++;
	sb_add(&b, "", 0);
	for (;;) {
		const char *start = s;

		while (s < end && *s != '"' && *s != '\\') {
			ck_assert_msg((unsigned char)*s >= 0x20,
				      "raw control byte 0x%02x in a string",
				      (unsigned char)*s);
			s++;
		}
		ck_assert_msg(utf8_valid((const unsigned char *)start,
					 (size_t)(s - start)),
			      "invalid UTF-8 in JSON output");
		sb_add(&b, start, (size_t)(s - start));
		ck_assert_msg(s < end, "unterminated string");
		if (*s == '"')
			break;
		ck_assert(++s < end);
		switch (*s++) {
		case '"':
			sb_add(&b, "\"", 1);
			break;
		case '\\':
			sb_add(&b, "\\", 1);
			break;
		case '/':
			sb_add(&b, "/", 1);
			break;
		case 'b':
			sb_add(&b, "\b", 1);
			break;
		case 'f':
			sb_add(&b, "\f", 1);
			break;
		case 'n':
			sb_add(&b, "\n", 1);
			break;
		case 'r':
			sb_add(&b, "\r", 1);
			break;
		case 't':
			sb_add(&b, "\t", 1);
			break;
		case 'u': {
			unsigned cp;

			ck_assert(end - s >= 4);
			cp = hex4(s);
			s += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned lo;

				ck_assert_msg(end - s >= 6 && s[0] == '\\' &&
						      s[1] == 'u',
					      "lone high surrogate");
				lo = hex4(s + 2);
				ck_assert(lo >= 0xdc00 && lo <= 0xdfff);
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				s += 6;
			}
			ck_assert_msg(cp < 0xdc00 || cp > 0xdfff,
				      "lone low surrogate");
			put_utf8(&b, cp);
			break;
		}
		default:
			ck_abort_msg("bad escape \\%c", s[-1]);
		}
	}
	*p = s + 1;
	v->type = 's';
	v->s = sb_take(&b, &v->len);
	ck_assert_ptr_nonnull(v->s);
}

static void skip_ws(const char **p, const char *end)
{
	while (*p < end && strchr(" \t\r\n", **p))
		(*p)++;
}

static void jscalar(const char **p, const char *end, struct jval *v)
{
	const char *s = *p;

	v->s = NULL;
	v->len = 0;
	if (*s == '"')
		return jstring(p, end, v);
	if (end - s >= 4 && !memcmp(s, "true", 4)) {
		v->type = 't', *p += 4;
	} else if (end - s >= 5 && !memcmp(s, "false", 5)) {
		v->type = 'f', *p += 5;
	} else if (end - s >= 4 && !memcmp(s, "null", 4)) {
		v->type = 'z', *p += 4;
	} else {
		const char *t = s;

		if (t < end && *t == '-')
			t++;
		ck_assert_msg(t < end && *t >= '0' && *t <= '9',
			      "value expected at '%.10s'", s);
		if (*t == '0')
			t++;
		else
			while (t < end && *t >= '0' && *t <= '9')
				t++;
		v->type = 'n';
		v->len = (size_t)(t - s);
		v->s = strndup(s, v->len);
		*p = t;
	}
}

/* Parses text (exactly len bytes) as one flat JSON object. */
static void jparse(const char *text, size_t len, struct jobj *o)
{
	const char *p = text, *end = text + len;

	o->n = 0;
	skip_ws(&p, end);
	ck_assert_msg(p < end && *p == '{', "object expected");
	p++;
	skip_ws(&p, end);
	if (p < end && *p == '}') {
		p++;
	} else {
		for (;;) {
			struct jval k;

			ck_assert_int_lt(o->n, 32);
			skip_ws(&p, end);
			jstring(&p, end, &k);
			for (int i = 0; i < o->n; i++)
				ck_assert_msg(strcmp(o->key[i], k.s),
					      "duplicate key %s", k.s);
			o->key[o->n] = k.s;
			skip_ws(&p, end);
			ck_assert_msg(p < end && *p == ':', "':' expected");
			p++;
			skip_ws(&p, end);
			jscalar(&p, end, &o->val[o->n]);
			o->n++;
			skip_ws(&p, end);
			ck_assert(p < end);
			if (*p == '}') {
				p++;
				break;
			}
			ck_assert_msg(*p == ',', "',' expected at '%.10s'", p);
			p++;
		}
	}
	skip_ws(&p, end);
	ck_assert_msg(p == end, "bytes after the object");
}

static const struct jval *jget(const struct jobj *o, const char *key)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->key[i], key))
			return &o->val[i];
	ck_abort_msg("no key %s", key);
	return NULL;
}

static void jstr_is(const struct jobj *o, const char *key, const char *want,
		    size_t len)
{
	const struct jval *v = jget(o, key);

	ck_assert_msg(v->type == 's', "%s is not a string", key);
	ck_assert_msg(v->len == len && memcmp(v->s, want, len) == 0,
		      "%s is '%s'", key, v->s);
}

static void jnum_is(const struct jobj *o, const char *key, const char *want)
{
	const struct jval *v = jget(o, key);

	ck_assert_msg(v->type == 'n', "%s is not a number", key);
	ck_assert_str_eq(v->s, want);
}

static void jtype_is(const struct jobj *o, const char *key, char type)
{
	ck_assert_msg(jget(o, key)->type == type, "%s: type %c, want %c", key,
		      jget(o, key)->type, type);
}

static void jfree(struct jobj *o)
{
	for (int i = 0; i < o->n; i++) {
		free(o->key[i]);
		free(o->val[i].s);
	}
	o->n = 0;
}

/* The JSON text that sb_add_json makes of n bytes. */
static char *json_of(const char *s, size_t n, size_t *len)
{
	struct strbuf b = { 0 };

	ck_assert_int_eq(sb_add_json(&b, s, n), 0);
	return sb_take(&b, len);
}

static void json_is(const char *in, size_t n, const char *want)
{
	size_t len;
	char *got = json_of(in, n, &len);

	ck_assert_msg(len == strlen(want) && memcmp(got, want, len) == 0,
		      "got %s, want %s", got, want);
	free(got);
}

#define JSON_IS(in, want) json_is(in, sizeof(in) - 1, want)

/* ---- strbuf ---- */

START_TEST(sb_basic)
{
	struct strbuf b = { 0 };
	size_t len;
	char *p;

	sb_add(&b, "ab", 2);
	sb_addf(&b, "%d-%s", 42, "x");
	sb_add(&b, "\0z", 2);
	ck_assert_int_eq(b.err, 0);
	p = sb_take(&b, &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(p, "ab42-x\0z", 8);
	ck_assert_int_eq(p[8], '\0');
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.len, 0);
	free(p);
}
END_TEST

/* Nothing added: the text is "" (NUL-terminated), not NULL. */
START_TEST(sb_take_empty)
{
	struct strbuf b = { 0 };
	size_t len = 99;
	char *p;

	/* a freed 256-byte block first, so that the next one is not zeroed */
	free(malloc(256));
	p = sb_take(&b, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, 0);
	ck_assert_msg(p[0] == '\0', "not NUL-terminated: first byte 0x%02x",
		      (unsigned char)p[0]);
	free(p);
	/* and after a take, the buffer is empty again */
	sb_add(&b, "x", 1);
	free(sb_take(&b, &len));
	free(malloc(256));
	p = sb_take(&b, &len);
	ck_assert_uint_eq(len, 0);
	ck_assert_msg(p[0] == '\0', "not NUL-terminated: first byte 0x%02x",
		      (unsigned char)p[0]);
	free(p);
}
END_TEST

START_TEST(sb_growth)
{
	struct strbuf b = { 0 };
	char big[10000];
	size_t len;
	char *p;

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 1000; i++)
		sb_addf(&b, "%04d,", i);
	sb_addf(&b, "%s", big);
	for (int i = 0; i < 300; i++)
		sb_add(&b, "0123456789", 10);
	p = sb_take(&b, &len);
	ck_assert_uint_eq(len, 5000 + 9999 + 3000);
	ck_assert_uint_eq(strlen(p), len);
	ck_assert_mem_eq(p, "0000,0001,", 10);
	ck_assert_mem_eq(p + 4995, "0999,q", 6);
	ck_assert_mem_eq(p + 5000 + 9999, "0123456789", 10);
	free(p);
}
END_TEST

/* ---- JSON strings ---- */

START_TEST(json_escapes)
{
	JSON_IS("a\"b\\c\n\x01", "\"a\\\"b\\\\c\\n\\u0001\"");
	JSON_IS("", "\"\"");
	JSON_IS("plain text", "\"plain text\"");
	JSON_IS("tab\there", "\"tab\\there\"");
	JSON_IS("/", "\"/\"");
	JSON_IS("\0", "\"\\u0000\"");
	JSON_IS("a\0b", "\"a\\u0000b\"");
	JSON_IS("\r\b\f\x1b\x1f\x7f",
		"\"\\u000d\\u0008\\u000c\\u001b\\u001f\\u007f\"");
	JSON_IS("\x20~", "\" ~\"");
}
END_TEST

/* Every byte below 0x20 is escaped, and decodes back to itself. */
START_TEST(json_controls)
{
	for (int c = 0; c < 0x20; c++) {
		char in = (char)c;
		struct jval v;
		size_t len;
		char *out = json_of(&in, 1, &len);
		const char *p = out;

		ck_assert_msg(out[1] == '\\', "0x%02x not escaped", c);
		jstring(&p, out + len, &v);
		ck_assert_uint_eq(v.len, 1);
		ck_assert_int_eq(v.s[0], c);
		free(v.s);
		free(out);
	}
}
END_TEST

START_TEST(json_valid_utf8)
{
	/* 2, 3 and 4 bytes, the smallest and largest of each */
	JSON_IS("\xc3\xa9", "\"\xc3\xa9\"");
	JSON_IS("\xc2\x80", "\"\xc2\x80\"");
	JSON_IS("\xdf\xbf", "\"\xdf\xbf\"");
	JSON_IS("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");
	JSON_IS("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	JSON_IS("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");
	JSON_IS("\xee\x80\x80", "\"\xee\x80\x80\"");
	JSON_IS("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");
	JSON_IS("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"");
	JSON_IS("\xf0\x9d\x84\x9e", "\"\xf0\x9d\x84\x9e\"");
	JSON_IS("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
	JSON_IS("a\xc3\xa9z", "\"a\xc3\xa9z\"");
}
END_TEST

START_TEST(json_invalid_utf8)
{
	/* lone continuation bytes and bytes never valid */
	JSON_IS("\x80", "\"\\ufffd\"");
	JSON_IS("\xbf", "\"\\ufffd\"");
	JSON_IS("\xff", "\"\\ufffd\"");
	JSON_IS("\xfe", "\"\\ufffd\"");
	JSON_IS("\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* overlong forms */
	JSON_IS("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	JSON_IS("\xc1\xbf", "\"\\ufffd\\ufffd\"");
	JSON_IS("\xe0\x80\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xe0\x9f\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xf0\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xf0\x8f\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* surrogates, and past U+10FFFF */
	JSON_IS("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* cut short, at the end and before ASCII */
	JSON_IS("\xe2\x82", "\"\\ufffd\\ufffd\"");
	JSON_IS("\xe2\x82z", "\"\\ufffd\\ufffdz\"");
	JSON_IS("\xf0\x9d\x84", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xc3", "\"\\ufffd\"");
	JSON_IS("\xc3\"", "\"\\ufffd\\\"\"");
	/* valid text on both sides survives */
	JSON_IS("a\xffz\xc3\xa9", "\"a\\ufffdz\xc3\xa9\"");
	JSON_IS("\xff\xc3\xa9", "\"\\ufffd\xc3\xa9\"");
}
END_TEST

/* It appends to what the buffer holds. */
START_TEST(json_appends)
{
	struct strbuf b = { 0 };
	size_t len;
	char *p;

	sb_add(&b, "x:", 2);
	ck_assert_int_eq(sb_add_json(&b, "1", 1), 0);
	sb_add(&b, ",", 1);
	ck_assert_int_eq(sb_add_json(&b, "\n", 1), 0);
	p = sb_take(&b, &len);
	ck_assert_str_eq(p, "x:\"1\",\"\\n\"");
	free(p);
}
END_TEST

static unsigned lcg(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* Random valid UTF-8 text decodes back to itself, byte for byte. */
START_TEST(json_round_trip)
{
	unsigned seed = 77;

	for (int iter = 0; iter < 2000; iter++) {
		struct strbuf in = { 0 };
		int nchars = (int)(lcg(&seed) % 40);
		size_t inlen, outlen;
		char *text, *out;
		const char *p;
		struct jval v;

		sb_add(&in, "", 0);
		for (int k = 0; k < nchars; k++) {
			unsigned r = lcg(&seed), cp;

			switch (r % 5) {
			case 0:
				cp = r % 0x80;
				break;
			case 1:
				cp = 0x80 + r % 0x780;
				break;
			case 2:
				cp = 0x800 + r % 0xd000;
				break;
			case 3:
				cp = 0xe000 + r % 0x2000;
				break;
			default:
				cp = 0x10000 + r % 0x100000;
				break;
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 'S';
			put_utf8(&in, cp);
		}
		text = sb_take(&in, &inlen);
		out = json_of(text, inlen, &outlen);
		p = out;
		jstring(&p, out + outlen, &v);
		ck_assert(p == out + outlen);
		ck_assert_uint_eq(v.len, inlen);
		ck_assert(memcmp(v.s, text, inlen) == 0);
		free(v.s);
		free(out);
		free(text);
	}
}
END_TEST

/* Arbitrary bytes always give one valid JSON string whose valid UTF-8
 * parts are kept, and one U+FFFD per byte that is not. */
START_TEST(json_random_bytes)
{
	unsigned seed = 99;

	for (int iter = 0; iter < 3000; iter++) {
		char in[64];
		size_t n = lcg(&seed) % sizeof(in), outlen;
		size_t ascii = 0, got_ascii = 0;
		char *out;
		const char *p;
		struct jval v;

		for (size_t k = 0; k < n; k++) {
			unsigned r = lcg(&seed);

			in[k] = (char)(r % 3 ? r & 0xff : 0x80 | (r & 0x3f));
			ascii += (unsigned char)in[k] < 0x80;
		}
		out = json_of(in, n, &outlen);
		p = out;
		jstring(&p, out + outlen, &v);
		ck_assert(p == out + outlen);
		ck_assert(utf8_valid((unsigned char *)v.s, v.len));
		for (size_t k = 0; k < v.len; k++)
			got_ascii += (unsigned char)v.s[k] < 0x80;
		/* ASCII is never eaten by a bad sequence before it */
		ck_assert_uint_eq(got_ascii, ascii);
		free(v.s);
		free(out);
	}
}
END_TEST

/* ---- runs ---- */

static char base[] = "/tmp/sfs-run-XXXXXX";
static int dfd = -1;
static int hook_calls;
static struct run *hook_run;

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-run-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

static void setup(void)
{
	char dir[64];

	dfd = unit_new_dir(base, dir, sizeof(dir));
	hook_calls = 0;
	hook_run = NULL;
	run_changed_hook = NULL;
}

static void teardown(void)
{
	close(dfd);
	run_changed_hook = NULL;
}

static void hook(struct run *r)
{
	hook_calls++;
	hook_run = r;
}

START_TEST(file_names)
{
	struct run r = { .id = 42 };
	char buf[64], small[6];

	run_file(&r, "cmd", buf, sizeof(buf));
	ck_assert_str_eq(buf, "r42.cmd");
	run_file(&r, "out", buf, sizeof(buf));
	ck_assert_str_eq(buf, "r42.out");
	r.id = 18446744073709551615ULL;
	run_file(&r, "err", buf, sizeof(buf));
	ck_assert_str_eq(buf, "r18446744073709551615.err");
	run_file(&r, "err", small, sizeof(small));
	ck_assert_str_eq(small, "r1844"); /* cut, still terminated */
}
END_TEST

START_TEST(new_writes_cmd)
{
	static const char text[] = "echo 'hi'\0\nbinary\xff";
	struct run *r;
	char name[64];
	size_t len;
	char *got;
	int err = 1;

	r = run_new(dfd, text, sizeof(text) - 1, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(err, 0);
	ck_assert(r->id != 0);
	ck_assert_ptr_eq(objs_get(r->id, OBJ_RUN), r);
	ck_assert_int_eq(r->state, RUN_QUEUED);
	ck_assert(run_active(r));
	ck_assert_int_eq(r->refs, 1);
	ck_assert_uint_eq(r->cmd_len, sizeof(text) - 1);
	ck_assert_int_eq(r->out.fd, -1);
	ck_assert_int_eq(r->err.fd, -1);
	ck_assert(list_empty(&r->link) && list_empty(&r->waiters));
	run_file(r, "cmd", name, sizeof(name));
	got = unit_slurp_at(dfd, name, &len);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(len, sizeof(text) - 1);
	ck_assert_mem_eq(got, text, len);
	free(got);
	run_unref(r);
}
END_TEST

/* A 1 MiB command is kept whole. */
START_TEST(new_large_cmd)
{
	size_t n = 1 << 20, len;
	char *text = malloc(n), name[64], *got;
	struct run *r;
	int err;

	for (size_t i = 0; i < n; i++)
		text[i] = (char)("echo x\n"[i % 7]);
	r = run_new(dfd, text, n, &err);
	ck_assert_ptr_nonnull(r);
	run_file(r, "cmd", name, sizeof(name));
	got = unit_slurp_at(dfd, name, &len);
	ck_assert_uint_eq(len, n);
	ck_assert(memcmp(got, text, n) == 0);
	free(got);
	free(text);
	run_unref(r);
}
END_TEST

START_TEST(new_fails)
{
	struct run *r = run_new_empty();
	uint64_t before = r->id;
	int err = 0;

	run_unref(r);
	r = run_new(-1, "x", 1, &err);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(err, -EBADF);
	/* the id it took is not left behind */
	for (uint64_t id = before; id < before + 4; id++)
		ck_assert_int_eq(objs_kind(id), OBJ_NONE);
}
END_TEST

START_TEST(empty_then_cmd)
{
	struct run *r = run_new_empty();
	char name[64];
	size_t len;
	char *got;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->state, RUN_QUEUED);
	ck_assert_uint_eq(r->cmd_len, 0);
	run_file(r, "cmd", name, sizeof(name));
	ck_assert_ptr_null(unit_slurp_at(dfd, name, &len));
	ck_assert_int_eq(run_set_cmd(r, dfd, "make\n", 5), 0);
	ck_assert_uint_eq(r->cmd_len, 5);
	got = unit_slurp_at(dfd, name, &len);
	ck_assert_uint_eq(len, 5);
	ck_assert_mem_eq(got, "make\n", 5);
	free(got);
	/* written again: replaced, not appended */
	ck_assert_int_eq(run_set_cmd(r, dfd, "ls", 2), 0);
	got = unit_slurp_at(dfd, name, &len);
	ck_assert_uint_eq(len, 2);
	ck_assert_uint_eq(r->cmd_len, 2);
	free(got);
	ck_assert_int_eq(run_set_cmd(r, -1, "ls", 2), -EBADF);
	run_unref(r);
}
END_TEST

START_TEST(refs)
{
	struct run *r = run_new_empty();
	uint64_t id = r->id;

	run_ref(r);
	run_ref(r);
	ck_assert_int_eq(r->refs, 3);
	run_unref(r);
	run_unref(r);
	ck_assert_ptr_eq(objs_get(id, OBJ_RUN), r);
	run_unref(r);
	ck_assert_ptr_null(objs_get(id, OBJ_RUN));
}
END_TEST

START_TEST(state_names)
{
	struct run r = { .state = RUN_QUEUED };

	ck_assert_str_eq(run_state_name(&r), "created"); /* no cmd yet */
	r.has_cmd = true;
	ck_assert_str_eq(run_state_name(&r), "queued");
	r.state = RUN_RUNNING;
	ck_assert_str_eq(run_state_name(&r), "running");
	ck_assert(run_active(&r));
	r.state = RUN_DONE;
	ck_assert(!run_active(&r));
	r.end = END_EXITED, r.exit_code = 0;
	ck_assert_str_eq(run_state_name(&r), "completed");
	r.exit_code = 1;
	ck_assert_str_eq(run_state_name(&r), "failed");
	r.exit_code = 127;
	ck_assert_str_eq(run_state_name(&r), "failed");
	r.end = END_NONE, r.exit_code = 0;
	ck_assert_str_eq(run_state_name(&r), "completed");
	r.end = END_TIMEDOUT, r.exit_code = 124;
	ck_assert_str_eq(run_state_name(&r), "timed-out");
	r.end = END_KILLED, r.exit_code = 137;
	ck_assert_str_eq(run_state_name(&r), "killed");
	r.end = END_CANCELED;
	ck_assert_str_eq(run_state_name(&r), "canceled");
	/* the cause wins over the code */
	r.end = END_TIMEDOUT, r.exit_code = 0;
	ck_assert_str_eq(run_state_name(&r), "timed-out");
}
END_TEST

START_TEST(finish_running)
{
	struct run *r = run_new_empty();
	char name[64];

	run_changed_hook = hook;
	r->state = RUN_RUNNING;
	r->started_mono = loop_now_ms() - 250;
	run_file(r, "out", name, sizeof(name));
	ck_assert_int_eq(spool_open(&r->out, dfd, name, 0), 0);
	run_file(r, "err", name, sizeof(name));
	ck_assert_int_eq(spool_open(&r->err, dfd, name, 0), 0);
	run_file(r, "idx", name, sizeof(name));
	ck_assert_int_eq(outidx_open(&r->all, dfd, name), 0);
	ck_assert_int_ge(run_duration_ms(r), 250);

	run_finish(r, 3, 0, END_EXITED);
	ck_assert_int_eq(hook_calls, 1);
	ck_assert_ptr_eq(hook_run, r);
	ck_assert_int_eq(r->state, RUN_DONE);
	ck_assert(!run_active(r));
	ck_assert_int_eq(r->exit_code, 3);
	ck_assert_int_eq(r->sig, 0);
	ck_assert_int_eq(r->end, END_EXITED);
	ck_assert_int_eq(r->out.fd, -1);
	ck_assert_int_eq(r->err.fd, -1);
	ck_assert_int_eq(r->all.fd, -1);
	ck_assert_int_ge(r->ended_mono, r->started_mono + 250);
	ck_assert_uint_eq(run_duration_ms(r),
			  (uint64_t)(r->ended_mono - r->started_mono));
	ck_assert_str_eq(run_state_name(r), "failed");

	/* finishing twice changes nothing and does not notify again */
	run_finish(r, 0, 9, END_KILLED);
	ck_assert_int_eq(hook_calls, 1);
	ck_assert_int_eq(r->exit_code, 3);
	ck_assert_int_eq(r->sig, 0);
	ck_assert_int_eq(r->end, END_EXITED);
	run_unref(r);
}
END_TEST

/* A queued run that is canceled: done, with a zero duration. */
START_TEST(finish_queued)
{
	struct run *r = run_new_empty();

	run_changed_hook = hook;
	ck_assert_uint_eq(run_duration_ms(r), 0);
	run_finish(r, 130, 2, END_CANCELED);
	ck_assert_int_eq(hook_calls, 1);
	ck_assert_int_eq(r->state, RUN_DONE);
	ck_assert_int_eq(r->sig, 2);
	ck_assert_str_eq(run_state_name(r), "canceled");
	ck_assert_uint_le(run_duration_ms(r), 5);
	run_unref(r);
}
END_TEST

/* No hook set: finishing still works. */
START_TEST(finish_no_hook)
{
	struct run *r = run_new_empty();

	r->state = RUN_RUNNING;
	r->started_mono = loop_now_ms();
	run_finish(r, 0, 0, END_EXITED);
	ck_assert_str_eq(run_state_name(r), "completed");
	run_unref(r);
}
END_TEST

START_TEST(duration)
{
	struct run r = { .state = RUN_RUNNING };
	uint64_t d;

	r.started_mono = loop_now_ms() - 1500;
	d = run_duration_ms(&r);
	ck_assert_uint_ge(d, 1500);
	ck_assert_uint_lt(d, 6500);
	r.state = RUN_DONE;
	r.started_mono = 1000;
	r.ended_mono = 3500;
	ck_assert_uint_eq(run_duration_ms(&r), 2500);
	r.ended_mono = 900; /* never negative */
	ck_assert_uint_eq(run_duration_ms(&r), 0);
	r.state = RUN_QUEUED;
	ck_assert_uint_eq(run_duration_ms(&r), 0);
}
END_TEST

START_TEST(format_exit)
{
	struct run r = { .state = RUN_QUEUED };
	size_t len = 99;
	char *p;

	p = run_format_exit(NULL, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, 0);
	free(p);
	p = run_format_exit(&r, &len);
	ck_assert_uint_eq(len, 0);
	free(p);
	r.state = RUN_RUNNING;
	p = run_format_exit(&r, &len);
	ck_assert_uint_eq(len, 0);
	free(p);
	r.state = RUN_DONE;
	p = run_format_exit(&r, &len);
	ck_assert_str_eq(p, "0\n");
	ck_assert_uint_eq(len, 2);
	free(p);
	r.exit_code = 124;
	p = run_format_exit(&r, &len);
	ck_assert_str_eq(p, "124\n");
	ck_assert_uint_eq(len, 4);
	free(p);
	r.exit_code = 255;
	p = run_format_exit(&r, &len);
	ck_assert_str_eq(p, "255\n");
	free(p);
}
END_TEST

/* The value of key in "key value" lines; every line must be one. */
static const char *status_get(const char *text, size_t len, const char *key)
{
	static char val[256];
	const char *p = text, *end = text + len;

	ck_assert_msg(len > 0 && text[len - 1] == '\n', "no final newline");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp = memchr(p, ' ', (size_t)(nl - p));

		ck_assert_msg(sp && sp > p && sp + 1 < nl,
			      "line '%.*s' is not 'key value'", (int)(nl - p),
			      p);
		if ((size_t)(sp - p) == strlen(key) &&
		    !memcmp(p, key, strlen(key))) {
			snprintf(val, sizeof(val), "%.*s", (int)(nl - sp - 1),
				 sp + 1);
			return val;
		}
		p = nl + 1;
	}
	ck_abort_msg("no key %s in status", key);
	return NULL;
}

/* The keys that the design promises in status. */
static const char *const status_keys[] = { "state",   "run",	     "pid",
					   "started", "duration_ms", "exit",
					   "signal",  "timeout_ms" };

START_TEST(format_status_done)
{
	struct run r = {
		.state = RUN_DONE,
		.end = END_TIMEDOUT,
		.exit_code = 124,
		.sig = 9,
		.name = "7",
		.started_wall = 1700000000123LL,
		.started_mono = 5000,
		.ended_mono = 6042,
		.timeout_ms = 1,
		.eff_timeout_ms = 1000,
		.out = { .fd = -1, .size = 11 },
		.err = { .fd = -1, .size = 3, .truncated = true },
	};
	size_t len;
	char *p = run_format_status(&r, &len);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(strlen(p), len);
	for (size_t i = 0; i < sizeof(status_keys) / sizeof(*status_keys); i++)
		status_get(p, len, status_keys[i]);
	ck_assert_str_eq(status_get(p, len, "state"), "timed-out");
	ck_assert_str_eq(status_get(p, len, "run"), "7");
	ck_assert_str_eq(status_get(p, len, "started"),
			 "2023-11-14T22:13:20.123Z");
	ck_assert_str_eq(status_get(p, len, "duration_ms"), "1042");
	ck_assert_str_eq(status_get(p, len, "exit"), "124");
	ck_assert_str_eq(status_get(p, len, "signal"), "9");
	ck_assert_str_eq(status_get(p, len, "timeout_ms"), "1000");
	ck_assert_str_eq(status_get(p, len, "stdout_bytes"), "11");
	ck_assert_str_eq(status_get(p, len, "stderr_bytes"), "3");
	ck_assert_str_eq(status_get(p, len, "truncated"), "1");
	free(p);
}
END_TEST

START_TEST(format_status_queued)
{
	struct run r = {
		.state = RUN_QUEUED,
		.has_cmd = true,
		.name = "mine",
		.timeout_ms = 2500,
		.eff_timeout_ms = 7,
		.out = { .fd = -1 },
		.err = { .fd = -1 },
	};
	size_t len;
	char *p = run_format_status(&r, &len);

	ck_assert_str_eq(status_get(p, len, "state"), "queued");
	ck_assert_str_eq(status_get(p, len, "run"), "mine");
	ck_assert_str_eq(status_get(p, len, "started"), "-");
	ck_assert_str_eq(status_get(p, len, "duration_ms"), "0");
	ck_assert_str_eq(status_get(p, len, "exit"), "-");
	ck_assert_str_eq(status_get(p, len, "signal"), "-");
	ck_assert_str_eq(status_get(p, len, "timeout_ms"), "2500");
	ck_assert_str_eq(status_get(p, len, "truncated"), "0");
	free(p);
	p = run_format_status(NULL, &len);
	ck_assert_str_eq(status_get(p, len, "state"), "none");
	free(p);
}
END_TEST

START_TEST(format_status_running)
{
	struct run r = {
		.state = RUN_RUNNING,
		.name = "3",
		.pid = 4242,
		.started_wall = 86400000LL + 5,
		.eff_timeout_ms = 0,
		.out = { .fd = -1, .size = 1, .truncated = true },
		.err = { .fd = -1 },
	};
	size_t len;
	char *p;

	r.started_mono = loop_now_ms() - 20;
	p = run_format_status(&r, &len);
	ck_assert_str_eq(status_get(p, len, "state"), "running");
	ck_assert_str_eq(status_get(p, len, "pid"), "4242");
	ck_assert_str_eq(status_get(p, len, "started"),
			 "1970-01-02T00:00:00.005Z");
	ck_assert_int_ge(atoi(status_get(p, len, "duration_ms")), 20);
	ck_assert_str_eq(status_get(p, len, "exit"), "-");
	ck_assert_str_eq(status_get(p, len, "timeout_ms"), "0");
	ck_assert_str_eq(status_get(p, len, "truncated"), "1");
	free(p);
}
END_TEST

/* A finished run with its spools written as a shell would leave them. */
static struct run *done_run(const char *cmd, const char *out, size_t olen,
			    const char *err, size_t elen, int code)
{
	char name[64];
	int e;
	struct run *r = run_new(dfd, cmd, strlen(cmd), &e);

	ck_assert_ptr_nonnull(r);
	r->name = strdup("1");
	run_file(r, "out", name, sizeof(name));
	unit_put_at(dfd, name, out, olen);
	run_file(r, "err", name, sizeof(name));
	unit_put_at(dfd, name, err, elen);
	r->out.size = olen;
	r->err.size = elen;
	r->state = RUN_DONE;
	r->end = END_EXITED;
	r->exit_code = code;
	r->started_wall = 1700000000123LL;
	r->started_mono = 100;
	r->ended_mono = 1334;
	return r;
}

START_TEST(json_result)
{
	static const char out[] = "line \"1\"\n\ttab\\ \x01\x7f\0nul\xff";
	static const char want_out[] =
		"line \"1\"\n\ttab\\ \x01\x7f\0nul\xef\xbf\xbd";
	static const char cmd[] = "printf 'x'\necho \"$HOME\"";
	struct run *r = done_run(cmd, out, sizeof(out) - 1, "warn\n", 5, 0);
	struct jobj o;
	size_t len;
	char *p = run_format_json(r, dfd, "build", 1 << 20, &len);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(strlen(p), len);
	jparse(p, len, &o);
	jstr_is(&o, "command", cmd, sizeof(cmd) - 1);
	jnum_is(&o, "exitCode", "0");
	jtype_is(&o, "success", 't');
	jstr_is(&o, "stdout", want_out, sizeof(want_out) - 1);
	jstr_is(&o, "stderr", "warn\n", 5);
	jnum_is(&o, "duration", "1234");
	jstr_is(&o, "timestamp", "2023-11-14T22:13:20.123Z", 24);
	jstr_is(&o, "sessionId", "build", 5);
	jfree(&o);
	free(p);
	run_unref(r);
}
END_TEST

START_TEST(json_failed)
{
	struct run *r = done_run("false", "", 0, "", 0, 1);
	struct jobj o;
	size_t len;
	char *p;

	p = run_format_json(r, dfd, "default", 100, &len);
	jparse(p, len, &o);
	jnum_is(&o, "exitCode", "1");
	jtype_is(&o, "success", 'f');
	jstr_is(&o, "stdout", "", 0);
	jstr_is(&o, "stderr", "", 0);
	jfree(&o);
	free(p);
	run_unref(r);
}
END_TEST

/* Output past cap is cut, and the cut is said. */
START_TEST(json_cap)
{
	char big[5000];
	struct run *r;
	struct jobj o;
	size_t len;
	char *p;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	r = done_run("yes", big, sizeof(big), "e", 1, 0);
	p = run_format_json(r, dfd, "s", 1000, &len);
	jparse(p, len, &o);
	jstr_is(&o, "stdout", big, 1000);
	jstr_is(&o, "stderr", "e", 1);
	jtype_is(&o, "stdoutTruncated", 't');
	jtype_is(&o, "stderrTruncated", 'f');
	jfree(&o);
	free(p);
	/* a spool that dropped output is truncated even under cap */
	r->err.truncated = true;
	p = run_format_json(r, dfd, "s", 1 << 20, &len);
	jparse(p, len, &o);
	jstr_is(&o, "stdout", big, sizeof(big));
	jtype_is(&o, "stdoutTruncated", 'f');
	jtype_is(&o, "stderrTruncated", 't');
	jfree(&o);
	free(p);
	run_unref(r);
}
END_TEST

/* Before it ends: no exit code yet, and the queue time as timestamp. */
START_TEST(json_queued)
{
	int e;
	struct run *r = run_new(dfd, "sleep 1", 7, &e);
	struct jobj o;
	size_t len;
	char *p;

	r->name = strdup("mine");
	r->queued_wall = 0;
	p = run_format_json(r, dfd, "a\"b", 100, &len);
	jparse(p, len, &o);
	jstr_is(&o, "command", "sleep 1", 7);
	jtype_is(&o, "exitCode", 'z');
	jtype_is(&o, "success", 'z');
	jstr_is(&o, "stdout", "", 0);
	jnum_is(&o, "duration", "0");
	jstr_is(&o, "timestamp", "1970-01-01T00:00:00.000Z", 24);
	jstr_is(&o, "sessionId", "a\"b", 3);
	jfree(&o);
	free(p);
	run_unref(r);
	p = run_format_json(NULL, dfd, "x", 100, &len);
	jparse(p, len, &o);
	ck_assert_int_eq(o.n, 0);
	free(p);
}
END_TEST

/* A multibyte character cut by cap does not leave invalid JSON. */
START_TEST(json_cap_mid_char)
{
	static const char out[] = "ab\xe2\x82\xac";
	struct run *r = done_run("x", out, 5, "", 0, 0);
	struct jobj o;
	size_t len;
	char *p = run_format_json(r, dfd, "s", 4, &len);

	jparse(p, len, &o);
	ck_assert(utf8_valid((unsigned char *)jget(&o, "stdout")->s,
			     jget(&o, "stdout")->len));
	jtype_is(&o, "stdoutTruncated", 't');
	jfree(&o);
	free(p);
	run_unref(r);
}
END_TEST

/* A spool file that cannot be read makes result.json an error (EIO),
 * never "stdout": ""; an empty stream needs no file. */
START_TEST(json_spool_gone)
{
	struct run *r = done_run("echo hi", "hi\n", 3, "", 0, 0);
	char name[64];
	size_t len;
	char *p;

	run_file(r, "err", name, sizeof(name));
	ck_assert_int_eq(unlinkat(dfd, name, 0), 0);
	p = run_format_json(r, dfd, "s", 100, &len);
	ck_assert_ptr_nonnull(p); /* stderr is 0 bytes: nothing to open */
	free(p);
	run_file(r, "out", name, sizeof(name));
	ck_assert_int_eq(unlinkat(dfd, name, 0), 0);
	errno = 0;
	ck_assert_ptr_null(run_format_json(r, dfd, "s", 100, &len));
	ck_assert_int_eq(errno, EIO);
	run_unref(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("strbuf");

	tcase_add_test(tc, sb_basic);
	tcase_add_test(tc, sb_take_empty);
	tcase_add_test(tc, sb_growth);
	suite_add_tcase(s, tc);
	tc = tcase_create("json");
	tcase_add_test(tc, json_escapes);
	tcase_add_test(tc, json_controls);
	tcase_add_test(tc, json_valid_utf8);
	tcase_add_test(tc, json_invalid_utf8);
	tcase_add_test(tc, json_appends);
	tcase_add_test(tc, json_round_trip);
	tcase_add_test(tc, json_random_bytes);
	/* 3,000 random strings take about a second under ASan; Check's
	 * default of 4 s was missed on a loaded machine */
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, file_names);
	tcase_add_test(tc, new_writes_cmd);
	tcase_add_test(tc, new_large_cmd);
	tcase_add_test(tc, new_fails);
	tcase_add_test(tc, empty_then_cmd);
	tcase_add_test(tc, refs);
	tcase_add_test(tc, state_names);
	tcase_add_test(tc, finish_running);
	tcase_add_test(tc, finish_queued);
	tcase_add_test(tc, finish_no_hook);
	tcase_add_test(tc, duration);
	tcase_add_test(tc, format_exit);
	tcase_add_test(tc, format_status_done);
	tcase_add_test(tc, format_status_queued);
	tcase_add_test(tc, format_status_running);
	tcase_add_test(tc, json_result);
	tcase_add_test(tc, json_failed);
	tcase_add_test(tc, json_cap);
	tcase_add_test(tc, json_queued);
	tcase_add_test(tc, json_cap_mid_char);
	tcase_add_test(tc, json_spool_gone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
