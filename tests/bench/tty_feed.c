/*
 * tty_feed.c - the terminal's emulator alone (sessions/tty/term.c): MiB of
 * what `cat` of a text file prints through a PTY (79-character lines
 * and "\r\n"), fed in 4 KiB chunks as the daemon feeds them (pieces of
 * term_piece lines to term_take), then the screen read and its last
 * rows and the scrolled-off lines checked against what they must be.
 * Beside it, in the same run: the same feed with skipping off (every
 * byte through libvterm 0.1.4) and a memcpy of the same bytes.
 *
 * Usage: tty_feed [MIB [MIB_UNSKIPPED]]   (default 100 and 16)
 * Exits 1 when the screen is not what feeding every byte gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sessions/tty/term.h"

#define LINE  81 /* 79 characters and "\r\n" */
#define CHUNK 4096
#define COLS  80
#define ROWS  24
#define SB    1000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void no_output(void *arg, const char *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
}

/* Line i: its number and 70 characters that change with it. */
static void line(char *p, size_t i)
{
	snprintf(p, 10, "%08zu ", i % 100000000);
	for (int c = 9; c < 79; c++)
		p[c] = (char)(33 + (i * 7 + (size_t)c) % 90);
	p[79] = '\r';
	p[80] = '\n';
}

/* As tty.c's feed: pieces cut after term_piece newlines. */
static void feed_chunk(struct term *t, const char *p, size_t n)
{
	size_t done = 0, piece = term_piece(t);

	while (done < n) {
		const char *s = p + done, *end = p + n, *nl = s;

		for (size_t i = 0; i < piece && nl && nl < end; i++) {
			nl = memchr(nl, '\n', (size_t)(end - nl));
			nl = nl ? nl + 1 : NULL;
		}
		nl = nl ? nl : end;
		done += term_take(t, s, (size_t)(nl - s));
	}
}

/* The screen's rows and the scrolled-off lines are lines nlines-ROWS+1..
 * (the last row empty, the cursor under the last line). */
static int check(struct term *t, size_t nlines)
{
	char want[LINE + 1], *scr, *sbk, *p;
	size_t len, first = nlines - (ROWS - 1), row = 0;
	int bad = 0;

	scr = term_screen(t, &len);
	sbk = term_scrollback(t, &len);
	for (p = scr; p && row < ROWS - 1; row++) {
		line(want, first + row);
		want[79] = '\n';
		bad |= strncmp(p, want, 80) != 0;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	line(want, first - 1);
	want[79] = '\n';
	bad |= !sbk || len < 80 || strncmp(sbk + len - 80, want, 80) != 0;
	bad |= !sbk || len != (size_t)SB * 80;
	if (bad)
		fprintf(stderr, "tty_feed: the screen is not the last lines\n");
	free(scr);
	free(sbk);
	return bad;
}

/* MiB/s of feeding buf (n bytes, nlines lines) to a fresh terminal. */
static double run(const char *buf, size_t n, size_t nlines, bool skip, int *bad,
		  unsigned long long *skipped)
{
	struct term *t = term_new(COLS, ROWS, SB, no_output, NULL);
	double t0 = now(), el;

	if (!t) {
		*bad = 1;
		return 0;
	}
	term_skip(t, skip);
	for (size_t off = 0; off < n; off += CHUNK)
		feed_chunk(t, buf + off, n - off < CHUNK ? n - off : CHUNK);
	term_settle(t, INT64_MAX);
	*bad |= check(t, nlines);
	el = now() - t0;
	*skipped = term_skipped(t);
	term_free(t);
	return (double)n / (1 << 20) / el;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	size_t mib0 = argc > 2 ? strtoul(argv[2], NULL, 10) : 16;
	size_t nlines = (mib << 20) / LINE, n = nlines * LINE;
	size_t nlines0 = (mib0 << 20) / LINE;
	char *buf = malloc(n), *copy = malloc(n);
	unsigned long long skipped, skipped0;
	double rate, rate0, crate, t0;
	int bad = 0;

	if (!buf || !copy || nlines0 < ROWS + SB || nlines0 > nlines) {
		fprintf(stderr, "usage: tty_feed [MIB [MIB_UNSKIPPED]]\n");
		return 2;
	}
	for (size_t i = 0; i < nlines; i++)
		line(buf + i * LINE, i);
	memset(copy, 0, n); /* its pages in */
	t0 = now();
	memcpy(copy, buf, n);
	__asm__ volatile("" : : "r"(copy) : "memory"); /* kept */
	crate = (double)n / (1 << 20) / (now() - t0);
	rate = run(buf, n, nlines, true, &bad, &skipped);
	rate0 = run(buf, nlines0 * LINE, nlines0, false, &bad, &skipped0);
	printf("tty_feed: %zu MiB fed, 80x24, 1000 lines kept: %.0f MiB/s "
	       "(%.1f%% skipped) | every byte through libvterm (%zu MiB): "
	       "%.1f MiB/s | ratio %.1f | memcpy: %.0f MiB/s | screen %s\n",
	       mib, rate, 100.0 * (double)skipped / (double)n, mib0, rate0,
	       rate / rate0, crate, bad ? "WRONG" : "exact");
	free(buf);
	free(copy);
	return bad;
}
