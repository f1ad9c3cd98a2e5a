/* test_cast.c - the asciicast recording (sessions/tty/cast.c): its header,
 * an "o" event per record and an "r" per resize, and UTF-8 characters cut
 * between two records carried whole into one event. */
#include <fcntl.h>
#include "sessions/tty/cast.h"
#include "sessions/core/strbuf.h"
#include "unit.h"

static char base[] = "/tmp/sfs-cast-XXXXXX";
static int dfd = -1, out = -1;
static struct cast c;
static size_t outlen;

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-cast-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

static void setup(void)
{
	char dir[64];

	dfd = unit_new_dir(base, dir, sizeof(dir));
	out = openat(dfd, "out", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(cast_open(&c, dfd, "rec", 80, 24), 0);
	outlen = 0;
}

static void teardown(void)
{
	cast_close(&c);
	close(out);
	close(dfd);
}

/* Printed now: into the output file and the recording. */
static void printed(const char *s, size_t n)
{
	ck_assert_int_eq(pwrite(out, s, n, (off_t)outlen), (ssize_t)n);
	cast_output(&c, outlen, n);
	outlen += n;
}

/* The whole text, read as a client would: pieces of chunk bytes from
 * offset 0 on, through one reader. */
static char *read_all(struct cast_reader *r, size_t chunk)
{
	struct strbuf b = { 0 };
	const char *p;
	ssize_t n;

	sb_add(&b, "", 0);
	while ((n = cast_read(&c, out, outlen, r, b.len, chunk, &p)) > 0)
		sb_add(&b, p, (size_t)n);
	ck_assert_int_eq(n, 0);
	return sb_take(&b, &(size_t){ 0 });
}

static char *text(void)
{
	struct cast_reader r = { 0 };
	char *t = read_all(&r, 65536), *small;

	cast_reader_free(&r);
	/* 7 bytes at a time gives the same text */
	small = read_all(&r, 7);
	cast_reader_free(&r);
	ck_assert_str_eq(small, t);
	free(small);
	return t;
}

/* The lines of t after the header, each from '[' to its end. */
static const char *events(const char *t)
{
	const char *nl = strchr(t, '\n');

	ck_assert_ptr_nonnull(nl);
	return nl + 1;
}

START_TEST(header)
{
	static const char head[] = "{\"version\": 2, \"width\": 80, "
				   "\"height\": 24, \"timestamp\": ";
	char *t = text();

	ck_assert(strncmp(t, head, strlen(head)) == 0);
	ck_assert_ptr_nonnull(
		strstr(t, "\"env\": {\"TERM\": \"xterm-256color\"}}\n"));
	ck_assert_str_eq(events(t), "");
	free(t);
}
END_TEST

START_TEST(output_and_resize)
{
	char *t;

	printed("hi\n", 3);
	cast_resize(&c, 100, 30);
	printed("\"q\"\\\x01", 5);
	t = text();
	ck_assert(strstr(events(t), ", \"o\", \"hi\\n\"]\n") != NULL);
	ck_assert(strstr(events(t), ", \"r\", \"100x30\"]\n") != NULL);
	ck_assert(strstr(events(t), ", \"o\", \"\\\"q\\\"\\\\\\u0001\"]\n") !=
		  NULL);
	ck_assert(strstr(events(t), "\"hi") < strstr(events(t), "100x30"));
	ck_assert(strncmp(events(t), "[0.", 3) == 0);
	free(t);
}
END_TEST

START_TEST(utf8_carried)
{
	char *t;

	/* "é" cut after its first byte, "世" after its second */
	printed("a\xc3", 2);
	printed("\xa9z\xe4\xb8", 4);
	printed("\x96!", 2);
	t = text();
	ck_assert(strstr(t, "\"o\", \"a\"]") != NULL);
	ck_assert(strstr(t, "\"o\", \"\xc3\xa9z\"]") != NULL);
	ck_assert(strstr(t, "\"o\", \"\xe4\xb8\x96!\"]") != NULL);
	ck_assert(strstr(t, "fffd") == NULL);
	free(t);
}
END_TEST

START_TEST(invalid_bytes)
{
	char *t;

	/* a byte that no character continues is U+FFFD at once */
	printed("x\xff", 2);
	printed("\x80y", 2);
	t = text();
	ck_assert(strstr(t, "\"o\", \"x\\ufffd\"]") != NULL);
	ck_assert(strstr(t, "\"o\", \"\\ufffdy\"]") != NULL);
	free(t);
}
END_TEST

START_TEST(cut_at_the_end)
{
	char *t, *again;

	/* a character still cut when the output ends is an event of its
	 * own (U+FFFD: JSON holds text) */
	printed("ok\xe4", 3);
	t = text();
	ck_assert(strstr(t, "\"o\", \"ok\"]") != NULL);
	ck_assert(strstr(t, "\"o\", \"\\ufffd\"]") != NULL);
	/* its time is the print's, not the read's: later, the same text */
	usleep(20000);
	again = text();
	ck_assert_str_eq(again, t);
	free(again);
	free(t);
}
END_TEST

START_TEST(read_again)
{
	struct cast_reader r = { 0 };
	const char *p;
	char first[16];
	ssize_t n;

	printed("one\n", 4);
	printed("two\n", 4);
	free(read_all(&r, 5));
	/* a read before where the reader is makes the text again */
	n = cast_read(&c, out, outlen, &r, 0, 15, &p);
	ck_assert_int_eq(n, 15);
	memcpy(first, p, 15);
	first[15] = '\0';
	ck_assert_str_eq(first, "{\"version\": 2, ");
	/* past the end: nothing */
	ck_assert_int_eq(cast_read(&c, out, outlen, &r, 1 << 20, 10, &p), 0);
	cast_reader_free(&r);
}
END_TEST

START_TEST(short_spool)
{
	char *t;

	/* records past what the spool kept (a cut) give what is there */
	printed("abcdef", 6);
	outlen = 3;
	t = text();
	ck_assert(strstr(t, "\"o\", \"abc\"]") != NULL);
	ck_assert(strstr(t, "abcd") == NULL);
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cast");
	TCase *tc = tcase_create("cast");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, header);
	tcase_add_test(tc, output_and_resize);
	tcase_add_test(tc, utf8_carried);
	tcase_add_test(tc, invalid_bytes);
	tcase_add_test(tc, cut_at_the_end);
	tcase_add_test(tc, short_spool);
	tcase_add_test(tc, read_again);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
