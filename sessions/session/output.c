/*
 * output.c - moving the output of a run or a background process from its
 * pipes into its spool files as it arrives, ordering in its output index
 * what both pipes held at one wakeup, and reporting a stream cut short;
 * after a crash, counting what the spools hold beyond the checkpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/session/output.h"
#include "sessions/session/sess.h"

/* A run that printed at least REST_BYTES at one wakeup is a writer of
 * much output: its pipes are left alone for REST_MS to fill. A sleeping
 * reader is woken at each write into an empty pipe (8 KiB for head -c),
 * and waking that often cut throughput to a quarter; polling instead held
 * off whoever was woken on the daemon's CPU, the writer too. */
#define REST_BYTES 16384
#define REST_MS	   1
/* A wakeup takes at most this much of one pipe (some 0.2 ms of work): a
 * writer faster than the daemon kept it draining for up to 64 MiB (45 ms)
 * while other sessions' requests waited (a listing took 7-27 ms, median,
 * while one session printed flat out). Its pipe, still readable, has its
 * next turn after them, with no rest. */
#define DRAIN_BYTES (256 * 1024)
/* The end of a run takes what its pipes still hold, up to this much
 * (a background process may still be writing). */
#define CLOSE_BYTES (64 * 1024 * 1024)

static char iobuf[1 << 20];
static char iobuf2[1 << 20]; /* the other pipe, in drain_both */

/* Creates r's spool files at its first output (most runs print little
 * or nothing, and creating files is a run's main cost). A spool that
 * cannot be made drops its stream, as a full one does. */
static void open_spools(struct run *r)
{
	int dirfd = r->sess ? r->sess->dirfd : -1;
	char name[64];
	int rc;

	if (r->files & RUN_F_SPOOLS)
		return;
	r->files |= RUN_F_SPOOLS;
	run_file(r, "out", name, sizeof(name));
	rc = spool_open(&r->out, dirfd, name, conf.max_output_bytes);
	run_file(r, "err", name, sizeof(name));
	if (rc == 0)
		rc = spool_open(&r->err, dirfd, name, conf.max_output_bytes);
	run_file(r, "idx", name, sizeof(name));
	if (rc == 0)
		rc = outidx_open(&r->all, dirfd, name);
	if (rc < 0) {
		r->out.truncated = r->err.truncated = true;
		r->out.cut = r->err.cut = rc == -ENOSPC || rc == -EDQUOT ?
						  SPOOL_NOSPACE :
						  SPOOL_IOERR;
		r->out.err = r->err.err = -rc;
	}
}

/* One line in the session's error file (and the log) when a stream of r
 * starts to lose output. */
static void report_cut(struct run *r, const char *stream,
		       const struct spool *sp)
{
	const char *what = r->is_proc ? "procs/" : r->is_tty ? "" : "run ";

	if (!r->sess)
		return;
	if (r->is_tty)
		stream = "output";
	if (sp->cut == SPOOL_LIMIT)
		sess_error(r->sess,
			   "%s%s: %s cut at %llu bytes: max_output_bytes", what,
			   r->name, stream, (unsigned long long)sp->size);
	else if (sp->cut == SPOOL_BUDGET)
		sess_error(r->sess,
			   "%s%s: %s cut at %llu bytes: the spool budget "
			   "(max_spool_bytes, %llu) is spent",
			   what, r->name, stream, (unsigned long long)sp->size,
			   (unsigned long long)spool_budget());
	else
		sess_error(r->sess, "%s%s: %s cut at %llu bytes: %s", what,
			   r->name, stream, (unsigned long long)sp->size,
			   strerror(sp->err));
}

/* Records len bytes of stream, at offset at of its spool, in r's output
 * index. */
static void index_add(struct run *r, unsigned stream, uint64_t at, uint64_t len)
{
	struct spool *sp = stream == 1 ? &r->out : &r->err;
	bool was = sp->truncated;

	if (len > 0 && outidx_add(&r->all, stream, at, len) < 0 &&
	    !sp->truncated) {
		/* output would miss what stdout or stderr has: stop both
		 * where the index stops */
		sp->truncated = true;
		sp->cut = errno == ENOSPC ? SPOOL_NOSPACE : SPOOL_IOERR;
		sp->err = errno;
	}
	if (!was && sp->truncated)
		report_cut(r, stream == 1 ? "stdout" : "stderr", sp);
}

/* Appends n bytes of buf to stream's spool; returns how many it kept and
 * where they start (in *at). */
static size_t spool_keep(struct run *r, unsigned stream, const char *buf,
			 size_t n, uint64_t *at)
{
	struct spool *sp = stream == 1 ? &r->out : &r->err;
	bool was = sp->truncated;
	ssize_t kept;

	open_spools(r);
	*at = sp->size;
	kept = sp->cut == SPOOL_KEPT ? spool_append(sp, buf, n) : 0;
	if (!was && sp->truncated)
		report_cut(r, stream == 1 ? "stdout" : "stderr", sp);
	return kept > 0 ? (size_t)kept : 0;
}

/* Keeps n bytes of stream in r's spools and in its output index. */
static void keep(struct run *r, unsigned stream, size_t n)
{
	uint64_t at;
	size_t kept = spool_keep(r, stream, iobuf, n, &at);

	index_add(r, stream, at, kept);
}

void output_keep(struct run *r, const char *buf, size_t n)
{
	uint64_t at;
	size_t kept = spool_keep(r, 1, buf, n, &at);

	index_add(r, 1, at, kept);
}

/* Where the next slice of buf (len bytes, pos of them done) ends: near
 * share, extended to the end of its line. */
static size_t slice_end(const char *buf, size_t len, size_t pos, size_t share)
{
	size_t end = pos + share < len ? pos + share : len;
	const char *nl = end < len ? memchr(buf + end, '\n', len - end) : NULL;

	return nl ? (size_t)(nl - buf) + 1 : len;
}

/* Both pipes of r held data at one wakeup (a bytes in w, b in sib): how
 * their writes interleaved is lost. Each stream's bytes go to its spool
 * in one piece, and the index interleaves them in up to SLICES slices
 * each, cut at line ends, in proportion to their sizes: what two streams
 * written in turn most likely were. */
#define SLICES 1024
static void drain_both(struct run *r, struct loop_watch *w,
		       struct loop_watch *sib, size_t a, size_t b)
{
	unsigned sw = w == &r->pipe_o ? 1 : 2, ss = 3 - sw;
	ssize_t na = read(w->fd, iobuf, a < sizeof(iobuf) ? a : sizeof(iobuf));
	ssize_t nb =
		read(sib->fd, iobuf2, b < sizeof(iobuf2) ? b : sizeof(iobuf2));
	uint64_t at_a = 0, at_b = 0;
	size_t ka, kb, pa = 0, pb = 0;

	/* a failed read keeps nothing of its stream; its next turn sees */
	ka = na > 0 ? spool_keep(r, sw, iobuf, (size_t)na, &at_a) : 0;
	kb = nb > 0 ? spool_keep(r, ss, iobuf2, (size_t)nb, &at_b) : 0;
	while (pa < ka || pb < kb) {
		/* the stream less far through its bytes goes next */
		if (pb >= kb || (pa < ka && pa * kb <= pb * ka)) {
			size_t e = slice_end(iobuf, ka, pa, ka / SLICES + 1);

			index_add(r, sw, at_a + pa, e - pa);
			pa = e;
		} else {
			size_t e = slice_end(iobuf2, kb, pb, kb / SLICES + 1);

			index_add(r, ss, at_b + pb, e - pb);
			pb = e;
		}
	}
}

/* Splices what w's pipe holds into stream's spool while that keeps all
 * output: a pipe read and a spool write copied every byte twice, and
 * for a writer of much output the daemon's copies were the bottleneck.
 * Returns the bytes kept; 0 when the pipe looked empty or the spool keeps
 * no more (the read after it sees EOF, or drops what is past the cut). */
static size_t splice_keep(struct run *r, struct loop_watch *w, unsigned stream,
			  size_t max)
{
	struct spool *sp = stream == 1 ? &r->out : &r->err;
	bool was = sp->truncated;
	int avail = 0;
	uint64_t at;
	ssize_t kept;

	if (ioctl(w->fd, FIONREAD, &avail) < 0 || avail <= 0)
		return 0;
	open_spools(r);
	at = sp->size;
	kept = spool_splice(sp, w->fd,
			    (size_t)avail < max ? (size_t)avail : max);
	if (!was && sp->truncated)
		report_cut(r, stream == 1 ? "stdout" : "stderr", sp);
	if (kept <= 0)
		return 0;
	index_add(r, stream, at, (uint64_t)kept);
	return (size_t)kept;
}

/* Moves what the fifo holds, up to limit bytes, into r's spools; closes
 * it at EOF. Output past a cut is read and dropped, so the writer never
 * blocks on it. Returns the bytes taken. */
static size_t pipe_drain(struct run *r, struct loop_watch *w, size_t limit)
{
	unsigned stream = w == &r->pipe_o ? 1 : 2;
	struct loop_watch *sib = stream == 1 ? &r->pipe_e : &r->pipe_o;
	int a = 0, b = 0;
	size_t got = 0;

	if (w->fd >= 0 && sib->fd >= 0 && ioctl(sib->fd, FIONREAD, &b) == 0 &&
	    b > 0 && ioctl(w->fd, FIONREAD, &a) == 0 && a > 0)
		drain_both(r, w, sib, (size_t)a, (size_t)b);
	while (w->fd >= 0 && got < limit) {
		size_t max = limit - got < sizeof(iobuf) ? limit - got :
							   sizeof(iobuf);
		size_t spliced = splice_keep(r, w, stream, max);
		ssize_t n =
			spliced ? (ssize_t)spliced : read(w->fd, iobuf, max);

		if (n >= 65536 && got == 0)
			fcntl(w->fd, F_SETPIPE_SZ, 1 << 20); /* a big writer */
		if (spliced) {
			got += spliced;
			continue;
		}
		if (n > 0) {
			keep(r, stream, (size_t)n);
			got += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		loop_del(w);
		close(w->fd);
		w->fd = -1;
	}
	return got;
}

/* Watches r's open pipes again after a rest. */
static void rested(struct loop_timer *t)
{
	struct run *r = t->arg;

	if (r->pipe_o.fd >= 0)
		loop_mod(&r->pipe_o, EPOLLIN);
	if (r->pipe_e.fd >= 0)
		loop_mod(&r->pipe_e, EPOLLIN);
}

/* Stops watching r's pipes for REST_MS. */
static void rest(struct run *r)
{
	if (r->rest.armed)
		return;
	if (r->pipe_o.fd >= 0)
		loop_mod(&r->pipe_o, 0);
	if (r->pipe_e.fd >= 0)
		loop_mod(&r->pipe_e, 0);
	loop_timer_add(&r->rest, loop_now_ms() + REST_MS, rested, r);
}

static void on_pipe(struct loop_watch *w, uint32_t events)
{
	struct run *r = w->arg;
	size_t got = pipe_drain(r, w, DRAIN_BYTES);

	(void)events;
	if (got >= REST_BYTES && got < DRAIN_BYTES)
		rest(r);
	if (run_changed_hook)
		run_changed_hook(r);
}

void output_close(struct run *r, struct loop_watch *w)
{
	pipe_drain(r, w, CLOSE_BYTES);
	loop_timer_del(&r->rest);
	if (w->fd >= 0) {
		loop_del(w);
		close(w->fd);
		w->fd = -1;
	}
}

int output_watch(struct run *r, struct loop_watch *w, int fd)
{
	w->fd = fd;
	w->fn = on_pipe;
	w->arg = r;
	return loop_add(w, EPOLLIN);
}

/* Takes sp's size from its file, and records in r's index the bytes
 * from covered on (what the index has of that stream). */
static void recover_stream(struct run *r, struct spool *sp, const char *sfx,
			   unsigned stream, uint64_t covered)
{
	struct spool more = { .fd = -1 };
	struct stat st;
	char name[64];

	run_file(r, sfx, name, sizeof(name));
	if (fstatat(r->sess->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (uint64_t)st.st_size > sp->size) {
		more.size = (uint64_t)st.st_size - sp->size;
		spool_charge(&more); /* the budget counts what is kept */
		sp->size = (uint64_t)st.st_size;
	}
	if (sp->size > covered && r->all.fd >= 0 &&
	    outidx_add(&r->all, stream, covered, sp->size - covered) < 0)
		log_msg(LOG_WARNING, "run %s: output index: %s", r->name,
			strerror(errno));
}

void output_recover(struct run *r)
{
	uint64_t covered[3] = { 0 };
	struct outrec rec;
	char name[64];
	int fd;

	if (!r->sess)
		return;
	/* made after the checkpoint, perhaps: the files say */
	run_file(r, "idx", name, sizeof(name));
	fd = openat(r->sess->dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	r->files |= RUN_F_SPOOLS;
	outidx_close(&r->all);
	r->all = (struct outidx){ .fd = fd };
	/* the crashed server's records, in order and each after the last */
	for (uint64_t i = 0; outidx_get(fd, i, &rec) == 0; i++) {
		if (rec.stream < 1 || rec.stream > 2 ||
		    rec.off != r->all.size || rec.src != covered[rec.stream])
			break;
		r->all.nrec = i + 1;
		r->all.size += rec.len;
		r->all.last = rec;
		covered[rec.stream] += rec.len;
	}
	recover_stream(r, &r->out, "out", 1, covered[1]);
	recover_stream(r, &r->err, "err", 2, covered[2]);
	outidx_close(&r->all);
}
