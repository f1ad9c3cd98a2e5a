/*
 * output.c - moving the output of a run or a background process from its
 * pipes into its spool files as it arrives, and reporting a stream cut short.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "conf/conf.h"
#include "log.h"
#include "output.h"
#include "sess.h"

static char iobuf[1 << 20];

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
	const char *what = r->is_proc ? "procs/" : "run ";

	if (!r->sess)
		return;
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

/* Keeps n bytes of stream in r's spools and in its output index. */
static void keep(struct run *r, unsigned stream, size_t n)
{
	struct spool *sp = stream == 1 ? &r->out : &r->err;
	bool was = sp->truncated;
	uint64_t at = sp->size;
	ssize_t kept;

	open_spools(r);
	kept = sp->cut == SPOOL_KEPT ? spool_append(sp, iobuf, n) : 0;
	if (kept > 0 && outidx_add(&r->all, stream, at, (uint64_t)kept) < 0 &&
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

/* Moves what the fifo holds into r's spools; closes it at EOF. Output
 * past a cut is read and dropped, so the writer never blocks on it. */
static void pipe_drain(struct run *r, struct loop_watch *w)
{
	unsigned stream = w == &r->pipe_o ? 1 : 2;

	for (int i = 0; i < 64 && w->fd >= 0; i++) {
		ssize_t n = read(w->fd, iobuf, sizeof(iobuf));

		if (n >= 65536 && i == 0)
			fcntl(w->fd, F_SETPIPE_SZ, 1 << 20); /* a big writer */
		if (n > 0) {
			keep(r, stream, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		loop_del(w);
		close(w->fd);
		w->fd = -1;
	}
}

static void on_pipe(struct loop_watch *w, uint32_t events)
{
	struct run *r = w->arg;

	(void)events;
	pipe_drain(r, w);
	if (run_changed_hook)
		run_changed_hook(r);
}

void output_close(struct run *r, struct loop_watch *w)
{
	pipe_drain(r, w);
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
