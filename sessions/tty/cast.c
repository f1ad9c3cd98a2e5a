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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sessions/tty/cast.h"
#include "sessions/core/loop.h"
#include "sessions/session/run.h"
#include "sessions/core/strbuf.h"

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
		sb_add_json(b, carry->p, keep);
		sb_add(b, "]\n", 2);
	}
	memmove(carry->p, carry->p + keep, carry->len - keep);
	carry->len -= keep;
}

/* Makes the next piece of text: the header, an event, or at the end what
 * is still carried. Returns false when there is no more. */
static bool step(const struct cast *c, int out_fd, uint64_t out_size,
		 struct cast_reader *r)
{
	struct rec e;
	double t;

	if (!r->started) {
		r->started = true;
		sb_addf(&r->text,
			"{\"version\": 2, \"width\": %d, \"height\": %d, "
			"\"timestamp\": %lld, \"env\": {\"TERM\": "
			"\"xterm-256color\"}}\n",
			c->cols, c->rows, (long long)c->wall_s);
		return true;
	}
	if (c->fd < 0 || r->next >= c->n ||
	    pread(c->fd, &e, sizeof(e), (off_t)(r->next * sizeof(e))) !=
		    sizeof(e)) {
		if (r->carry.len == 0)
			return false;
		/* at the time it was printed: the same text at every read */
		sb_addf(&r->text, "[%.6f, \"o\", ",
			(double)(r->carry_us - c->start_us) / 1e6);
		sb_add_json(&r->text, r->carry.p, r->carry.len);
		sb_add(&r->text, "]\n", 2);
		r->carry.len = 0;
		return true;
	}
	r->next++;
	r->carry_us = e.us;
	t = (double)(e.us - c->start_us) / 1e6;
	if (e.len)
		output_event(&r->text, &e, t, out_fd, out_size, &r->carry);
	else
		sb_addf(&r->text, "[%.6f, \"r\", \"%dx%d\"]\n", t, e.cols,
			e.rows);
	return true;
}

static void reader_reset(struct cast_reader *r)
{
	r->next = r->at = 0;
	r->started = false;
	r->carry.len = r->text.len = 0;
	r->carry.err = r->text.err = 0;
}

ssize_t cast_read(const struct cast *c, int out_fd, uint64_t out_size,
		  struct cast_reader *r, uint64_t off, size_t size,
		  const char **p)
{
	size_t drop;

	if (off < r->at)
		reader_reset(r); /* a read before: made again from the start */
	while (r->at + r->text.len < off + size && !r->text.err &&
	       step(c, out_fd, out_size, r))
		;
	if (r->text.err || r->carry.err)
		return -ENOMEM;
	drop = off - r->at < r->text.len ? (size_t)(off - r->at) : r->text.len;
	memmove(r->text.p, r->text.p + drop, r->text.len - drop);
	r->text.len -= drop;
	r->at += drop;
	*p = r->text.p;
	return off > r->at ? 0 :
			     (ssize_t)(r->text.len < size ? r->text.len : size);
}

void cast_reader_free(struct cast_reader *r)
{
	free(r->carry.p);
	free(r->text.p);
	*r = (struct cast_reader){ 0 };
}
