/*
 * fam_runexp.c - expect in a session directory, runs/N and procs/NAME:
 * waiting for a line of a run's output (a server's "listening on").
 *
 * A write gives an extended regex and an optional timeout in ms
 * ("PATTERN [MS]", 10 s by default), kept by the session (for its
 * latest run) or by the run. An open for reading takes the pattern and
 * the run of that moment; its first read (or poll) starts the timeout
 * and waits for the first line of stdout or stderr, from the run's
 * start, that the pattern matches, then answers it (the reads after it
 * read that line). A run that ends without one: ENODATA; the timeout:
 * ETIMEDOUT. Lines are searched in the spools as they grow, each byte
 * once; a line without its newline is tried only once the run has ended
 * (a port printed half may still grow).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_run.h"
#include "park.h"
#include "sessions/core/loop.h"
#include "sessions/core/pattern.h"
#include "sessions/core/state.h"
#include "sessions/session/sess.h"

#define EXPECT_MS 10000 /* the timeout when the write gives none */
/* Bytes of output searched in one turn of the loop: a run's gigabytes
 * searched at once with a slow pattern (6 MB/s for "(a|aa)*b") froze the
 * daemon for every user for minutes. */
#define SCAN_STEP PATTERN_LINE_MAX

/* What an open file of expect keeps. */
struct runexp {
	regex_t re;
	bool has_re;
	char *pat;
	uint64_t ms;
	int64_t deadline; /* 0 until the first read or poll */
	struct pattern_scan out, err;
	char *found; /* a line a poll found, for the read after it */
	struct loop_timer wake;
	struct fh *fh;
};

enum {
	K_PAT = 1,
	K_MS,
	K_DEADLINE,
	K_OUT_OFF,
	K_OUT_SKIP,
	K_ERR_OFF,
	K_ERR_SKIP,
	K_FOUND
};

static void runexp_free(void *p)
{
	struct runexp *x = p;

	if (!x)
		return;
	loop_timer_del(&x->wake);
	if (x->has_re)
		regfree(&x->re);
	free(x->pat);
	free(x->found);
	free(x);
}

static void runexp_save(const void *p, struct state_w *w)
{
	const struct runexp *x = p;

	state_put_str(w, K_PAT, x->has_re ? x->pat : NULL);
	state_put_u64(w, K_MS, x->ms);
	state_put_i64(w, K_DEADLINE, x->deadline);
	state_put_u64(w, K_OUT_OFF, x->out.off);
	state_put_u64(w, K_OUT_SKIP, x->out.skip);
	state_put_u64(w, K_ERR_OFF, x->err.off);
	state_put_u64(w, K_ERR_SKIP, x->err.skip);
	state_put_str(w, K_FOUND, x->found);
}

static struct runexp *runexp_of(struct fh *fh)
{
	struct runexp *x = fh->priv;

	if (!x && (x = calloc(1, sizeof(*x)))) {
		x->fh = fh;
		fh->priv = x;
		fh->priv_free = runexp_free;
		fh->priv_save = runexp_save;
	}
	return x;
}

/* Where n's pattern is kept: its run's under runs/ and procs/, else
 * its session's (for whichever run is the latest when it is read). */
static char **pattern_slot(const struct node *n, uint64_t **ms)
{
	if (n->run_level && n->r) {
		*ms = &n->r->expect_ms;
		return &n->r->expect;
	}
	*ms = &n->s->expect_ms;
	return &n->s->expect;
}

int fam_expect_compile(struct sess *s, const char *file, const char *pat,
		       size_t len, regex_t *re)
{
	char why[160];
	int rc = pattern_compile(pat, len, re, why, sizeof(why));

	if (rc == -EINVAL)
		sess_error(s, "%s: '%.*s' %s", file, (int)(len > 80 ? 80 : len),
			   pat, why);
	return rc;
}

int fam_expect_take(struct fh *fh, struct sess *s, const char *file,
		    uint64_t ms, char **slot, uint64_t *slot_ms)
{
	size_t len = fam_value_len(&fh->w);
	char *pat = NULL;
	regex_t re;
	int rc;

	pattern_split_timeout(fh->w.p, &len, &ms);
	rc = fam_expect_compile(s, file, fh->w.p, len, &re);
	if (rc == 0) {
		regfree(&re);
		pat = strndup(fh->w.p, len);
		rc = pat ? 0 : -ENOMEM;
	}
	fh->w.len = 0;
	if (rc < 0)
		return rc;
	free(*slot);
	*slot = pat;
	*slot_ms = ms;
	state_touch();
	return 0;
}

static int runexp_write(fuse_req_t req, struct fh *fh, struct node *n,
			const char *buf, size_t size, off_t off)
{
	int rc = fam_gather(fh, n->s, buf, size);
	uint64_t *slot_ms;
	char **slot;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	slot = pattern_slot(n, &slot_ms);
	return fam_expect_take(fh, n->s, "expect", EXPECT_MS, slot, slot_ms);
}

/* An open for reading takes the pattern last written and the run of
 * now; the timeout counts from the first read or poll. */
static int runexp_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	struct runexp *x = runexp_of(fh);
	uint64_t *ms;
	char **pat;

	if (!x)
		return -ENOMEM;
	pat = pattern_slot(n, &ms);
	if ((fi->flags & O_ACCMODE) == O_WRONLY || !*pat)
		return 0;
	if (fam_expect_compile(n->s, "expect", *pat, strlen(*pat), &x->re) < 0)
		return -EINVAL;
	x->has_re = true;
	x->ms = *ms;
	if (!(x->pat = strdup(*pat)))
		return -ENOMEM;
	fh_set_run(fh, n->r);
	return 0;
}

/* The timeout ran out: the reads waiting on the run try again. */
static void on_wake(struct loop_timer *t)
{
	struct runexp *x = t->arg;

	if (x->fh->r)
		park_wake(x->fh->r);
}

static void begin(struct runexp *x)
{
	if (x->deadline == 0)
		x->deadline = loop_now_ms() + (int64_t)x->ms;
}

/* Searches one stream (its spool opened at the first byte to read: the
 * spools are made at a run's first output), SCAN_STEP bytes of it at
 * most: *more is set when some are left for the next turn. */
static char *scan_stream(struct fh *fh, int *slot, const char *suffix,
			 struct pattern_scan *sc, uint64_t size,
			 const regex_t *re, int *err, bool *more)
{
	bool done = !run_active(fh->r);
	uint64_t end = size;
	int fd;

	if (sc->off >= size && !done)
		return NULL;
	if (size == 0)
		return NULL;
	if (sc->off < size && size - sc->off > SCAN_STEP) {
		end = sc->off + SCAN_STEP;
		*more = true;
	}
	fd = fh_spool(fh, slot, suffix);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	return pattern_scan_fd(sc, fd, end, done && end == size, re, err);
}

/* The first line of fh's run that matches, searched from where the last
 * search stopped; NULL with *err set on a spool that cannot be read, or
 * with *more set while output is left to search. */
static char *new_match(struct fh *fh, struct runexp *x, int *err, bool *more)
{
	struct run *r = fh->r;
	char *line;

	*err = 0;
	*more = false;
	if (x->found || r->state == RUN_QUEUED)
		return x->found;
	line = scan_stream(fh, &fh->fd_out, "out", &x->out, r->out.size, &x->re,
			   err, more);
	if (!line && *err == 0 && !*more)
		line = scan_stream(fh, &fh->fd_err, "err", &x->err, r->err.size,
				   &x->re, err, more);
	return x->found = line;
}

/* The reads and polls on the run try again: at once while output is
 * left to search (after the requests that came meanwhile), else at the
 * timeout. */
static void rearm(struct runexp *x, bool more)
{
	if (more)
		loop_timer_add(&x->wake, loop_now_ms(), on_wake, x);
	else if (!x->wake.armed)
		loop_timer_add(&x->wake, x->deadline, on_wake, x);
}

/* Answers a match, an error, the end of the run or the timeout; else
 * waits (a timer for the timeout). */
static bool try_expect(struct park *p)
{
	struct fh *fh = p->fh;
	struct runexp *x = fh->priv;
	bool more, ended;
	int err;
	char *line = new_match(fh, x, &err, &more);

	if (line) {
		free(fh->text);
		fh->text = line;
		fh->tlen = strlen(line);
		x->found = NULL;
		fam_reply_text(p->req, fh->text, fh->tlen, p->size, p->off);
		return true;
	}
	ended = !more && !run_active(fh->r);
	if (err < 0 || ended || loop_now_ms() >= x->deadline) {
		fuse_reply_err(p->req, err < 0 ? -err :
				       ended   ? ENODATA :
						 ETIMEDOUT);
		return true;
	}
	rearm(x, more);
	return false;
}

/* With no pattern written before the open: EINVAL (and no error line:
 * a reader such as grep -r changes nothing); with no run: ENODATA. */
static void runexp_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct runexp *x = fh->priv;

	if (fh->text)
		fam_reply_text(req, fh->text, fh->tlen, size, off);
	else if (!x || !x->has_re)
		fuse_reply_err(req, EINVAL);
	else if (!fh->r)
		fuse_reply_err(req, ENODATA);
	else {
		begin(x);
		fam_read_or_park(req, fh, fam_run_waiters, size, off,
				 try_expect);
	}
}

/* poll: a match, the end of the run or the timeout. */
static bool runexp_readable(const struct fh *cfh)
{
	struct fh *fh = (struct fh *)cfh; /* a match found is kept */
	struct runexp *x = fh->priv;
	bool more;
	int err;

	if (fh->text || !x || !x->has_re || !fh->r || !run_active(fh->r))
		return true;
	begin(x);
	if (new_match(fh, x, &err, &more) || err < 0 ||
	    loop_now_ms() >= x->deadline)
		return true;
	rearm(x, more);
	return false;
}

static struct list *runexp_waiters(struct fh *fh)
{
	return fh->r ? &fh->r->waiters : NULL;
}

/* The pattern, compiled again (one that does not compile now leaves the
 * file without one: its reads fail with EINVAL). */
static int runexp_restore(struct fh *fh, const struct state_r *o)
{
	struct runexp *x = runexp_of(fh);

	if (!x)
		return -ENOMEM;
	x->pat = state_get_str(o, K_PAT);
	if (x->pat && pattern_check(x->pat, strlen(x->pat)) == 0 &&
	    regcomp(&x->re, x->pat, REG_EXTENDED | REG_NOSUB) == 0)
		x->has_re = true;
	x->ms = state_get_u64(o, K_MS, EXPECT_MS);
	x->deadline = state_get_i64(o, K_DEADLINE, 0);
	x->out.off = state_get_u64(o, K_OUT_OFF, 0);
	x->out.skip = state_get_u64(o, K_OUT_SKIP, 0) != 0;
	x->err.off = state_get_u64(o, K_ERR_OFF, 0);
	x->err.skip = state_get_u64(o, K_ERR_SKIP, 0) != 0;
	x->found = state_get_str(o, K_FOUND);
	return 0;
}

const struct fops fam_runexp_ops = { .write = runexp_write,
				     .open = runexp_open,
				     .read = runexp_read,
				     .readable = runexp_readable,
				     .waiters = runexp_waiters,
				     .priv_restore = runexp_restore };
