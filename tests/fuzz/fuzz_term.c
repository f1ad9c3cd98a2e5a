/* fuzz_term.c - the screen of tty/ (sessions/tty/term.c, vtskip.c and
 * libvterm behind them): the input's first bytes are the size (any that
 * tty/size accepts, 2..5 columns or rows half of the time: libvterm's
 * bounds are nearest there), the scrolled-off lines kept (0..100) and a
 * seed of the chunk sizes; the rest is what a program prints, fed the
 * way tty.c feeds it (PTY reads of random sizes, each in pieces of
 * term_piece lines through term_take), with a resize between some reads.
 * A hang is a finding too (run with -timeout). Then the screen,
 * scrolled-off lines and cursor are read. */
#include <string.h>
#include "fuzz.h"
#include "sessions/tty/term.h"

static void out(void *arg, const char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
}

/* The next chunk size, 1..512 (xorshift). */
static size_t chunk_size(uint32_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 17;
	*r ^= *r << 5;
	return 1 + (*r % 512);
}

/* One read of the PTY, as tty.c's feed: pieces cut after term_piece
 * newlines, each taken until term_take has it all. */
static void feed(struct term *t, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *nl = p;

		for (size_t i = term_piece(t); i > 0 && nl && nl < end; i--) {
			nl = memchr(nl, '\n', (size_t)(end - nl));
			nl = nl ? nl + 1 : NULL;
		}
		nl = nl ? nl : end;
		p += term_take(t, p, (size_t)(nl - p));
	}
}

/* The screen has one line per row, the scrolled-off lines are at most
 * sb_max, the cursor is on the screen. */
static void check(struct term *t, int cols, int rows, size_t sb_max)
{
	size_t len, lines = 0;
	char *s = term_screen(t, &len);
	int row, col;
	bool visible;

	FUZZ_CHECK(s != NULL, "no screen");
	for (size_t i = 0; i < len; i++)
		lines += s[i] == '\n';
	FUZZ_CHECK(lines == (size_t)rows, "%zu lines of %d rows", lines, rows);
	free(s);
	s = term_scrollback(t, &len);
	FUZZ_CHECK(s != NULL, "no scrollback");
	for (size_t i = lines = 0; i < len; i++)
		lines += s[i] == '\n';
	FUZZ_CHECK(lines <= sb_max, "%zu lines scrolled off of %zu", lines,
		   sb_max);
	free(s);
	term_cursor(t, &row, &col, &visible);
	FUZZ_CHECK(row >= 1 && row <= rows && col >= 1 && col <= cols,
		   "cursor %d,%d on %dx%d", row, col, cols, rows);
}

/* A width or height from one byte: below 99 as the seeds kept from
 * before sizes varied more (2..100), then 2..5 for half of the rest, then
 * some large ones up to tty/size's 1000. */
static int side(uint8_t b)
{
	static const int large[] = { 101, 132, 200, 316, 500, 1000 };

	if (b < 99)
		return 2 + b;
	if (b < 227)
		return 2 + (b - 99) % 4;
	return large[(b - 227) % 6];
}

/* cols x rows from two bytes, the rows cut to tty/size's 100,000 cells. */
static void size_of(uint8_t c, uint8_t r, int *cols, int *rows)
{
	*cols = side(c);
	*rows = side(r);
	if (*cols * *rows > 100000)
		*rows = 100000 / *cols;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int cols, rows;
	size_t sb_max, i = 4;
	uint32_t r;
	struct term *t;

	if (size < 4)
		return 0;
	size_of(data[0], data[1], &cols, &rows);
	sb_max = data[2] % 101;
	r = 0x9e3779b9u ^ data[3];
	t = term_new(cols, rows, sb_max, out, NULL);
	FUZZ_CHECK(t != NULL, "term_new %dx%d", cols, rows);
	while (i < size) {
		size_t n = chunk_size(&r);

		n = n < size - i ? n : size - i;
		feed(t, (const char *)data + i, n);
		i += n;
		if (r % 16 == 0) /* a read of the screen between reads */
			check(t, cols, rows, sb_max);
		if (r % 16 == 1) { /* a resize, as a write of tty/size */
			size_of((uint8_t)(r >> 8), (uint8_t)(r >> 16), &cols,
				&rows);
			term_resize(t, cols, rows);
		}
	}
	check(t, cols, rows, sb_max);
	term_free(t);
	return 0;
}
