/*
 * cast.c - the asciicast v2 recording of a terminal. The output itself is
 * the terminal's output spool; the recording keeps only when each piece
 * came (and the resizes), so the text of recording.cast is made when it
 * is read. A UTF-8 character cut between two reads of the PTY is carried
 * to the next event, so that every event is valid UTF-8 and the events'
 * data put together is the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "cast.h"
#include "loop.h"
#include "run.h"
#include "strbuf.h"

struct rec {
	int64_t us;
	uint64_t off; /* in the output spool */
	uint32_t len; /* 0: a resize */
	uint16_t cols, rows;
};

static int64_t now_us(void)
{
	return loop_now_ms() * 1000;
}

int cast_open(struct cast *c, int dirfd, const char *name, int cols, int rows)
{
	c->fd = openat(dirfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0600);
	c->n = 0;
	c->start_us = now_us();
	c->wall_s = loop_wall_ms() / 1000;
	c->cols = cols;
	c->rows = rows;
	return c->fd < 0 ? -errno : 0;
}

void cast_close(struct cast *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void add(struct cast *c, const struct rec *r)
{
	if (c->fd >= 0 && pwrite(c->fd, r, sizeof(*r),
				 (off_t)(c->n * sizeof(*r))) == sizeof(*r))
		c->n++;
}

void cast_output(struct cast *c, uint64_t off, size_t len)
{
	struct rec r = { now_us(), off, (uint32_t)len, 0, 0 };

	if (len)
		add(c, &r);
}

void cast_resize(struct cast *c, int cols, int rows)
{
	struct rec r = { now_us(), 0, 0, (uint16_t)cols, (uint16_t)rows };

	add(c, &r);
}

/* How many of buf's n bytes end in whole UTF-8 characters (a cut
 * character at the end waits for the rest; invalid bytes do not). */
static size_t whole(const unsigned char *buf, size_t n)
{
	size_t i = n, back = 0;

	while (i > 0 && back < 3 && (buf[i - 1] & 0xc0) == 0x80)
		i--, back++;
	if (i == 0 || buf[i - 1] < 0xc0)
		return n;
	i--;
	back++;
	if ((buf[i] & 0xe0) == 0xc0)
		return back >= 2 ? n : i;
	if ((buf[i] & 0xf0) == 0xe0)
		return back >= 3 ? n : i;
	if ((buf[i] & 0xf8) == 0xf0)
		return back >= 4 ? n : i;
	return n;
}

/* One "o" event: the carried bytes, then the record's, up to the last
 * whole character (the rest is carried on). */
static void output_event(struct strbuf *b, const struct rec *r, double t,
			 int fd, uint64_t size, struct strbuf *carry)
{
	size_t len = r->off + r->len <= size ? r->len :
		     r->off < size	     ? (size_t)(size - r->off) :
					       0;
	size_t keep;
	ssize_t got;
	char *buf;

	if (len == 0 || !(buf = malloc(len)))
		return;
	got = pread(fd, buf, len, (off_t)r->off);
	if (got > 0)
		sb_add(carry, buf, (size_t)got);
	free(buf);
	if (carry->err || carry->len == 0)
		return;
	keep = whole((const unsigned char *)carry->p, carry->len);
	if (keep) {
		sb_addf(b, "[%.6f, \"o\", ", t);
		run_json_string(b, carry->p, keep);
		sb_add(b, "]\n", 2);
	}
	for (size_t i = keep; i < carry->len; i++)
		carry->p[i - keep] = carry->p[i];
	carry->len -= keep;
}

char *cast_text(const struct cast *c, int out_fd, uint64_t out_size,
		size_t *len)
{
	struct strbuf b = { 0 }, carry = { 0 };
	struct rec r;

	sb_addf(&b,
		"{\"version\": 2, \"width\": %d, \"height\": %d, "
		"\"timestamp\": %lld, \"env\": {\"TERM\": "
		"\"xterm-256color\"}}\n",
		c->cols, c->rows, (long long)c->wall_s);
	for (uint64_t i = 0; c->fd >= 0 && i < c->n; i++) {
		double t;

		if (pread(c->fd, &r, sizeof(r), (off_t)(i * sizeof(r))) !=
		    sizeof(r))
			break;
		t = (double)(r.us - c->start_us) / 1e6;
		if (r.len)
			output_event(&b, &r, t, out_fd, out_size, &carry);
		else
			sb_addf(&b, "[%.6f, \"r\", \"%dx%d\"]\n", t, r.cols,
				r.rows);
	}
	if (carry.len) {
		sb_addf(&b, "[%.6f, \"o\", ",
			(double)(now_us() - c->start_us) / 1e6);
		run_json_string(&b, carry.p, carry.len);
		sb_add(&b, "]\n", 2);
	}
	free(carry.p);
	return sb_take(&b, len);
}
