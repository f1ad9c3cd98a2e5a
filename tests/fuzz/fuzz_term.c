/* fuzz_term.c - the screen of tty/ (sessions/term.c, vtskip.c and
 * libvterm behind them): the input's first bytes are the size (2..100
 * columns, 2..50 rows), the scrolled-off lines kept (0..100) and a seed
 * of the chunk sizes; the rest is what a program prints, fed the way
 * tty.c feeds it (PTY reads of random sizes, each in pieces of
 * term_piece lines through term_take). A hang is a finding too (run with
 * -timeout). Then the screen, scrolled-off lines and cursor are read. */
#include <string.h>
#include "fuzz.h"
#include "sessions/term.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int cols, rows;
	size_t sb_max, i = 4;
	uint32_t r;
	struct term *t;

	if (size < 4)
		return 0;
	cols = 2 + data[0] % 99;
	rows = 2 + data[1] % 49;
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
	}
	check(t, cols, rows, sb_max);
	term_free(t);
	return 0;
}
