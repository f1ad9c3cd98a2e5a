/*
 * output.c - moving the output of a run or a background process from its
 * pipes into its spool files as it arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "conf/conf.h"
#include "log.h"
#include "output.h"
#include "sess.h"

static char iobuf[1 << 20];

/* Creates r's spool files at its first output (most runs print little
 * or nothing, and creating files is a run's main cost). */
static int open_spools(struct run *r)
{
	int dirfd = r->sess->dirfd;
	char name[64];
	int rc = 0;

	if (r->all.fd >= 0)
		return 0;
	r->files |= RUN_F_SPOOLS;
	run_file(r, "out", name, sizeof(name));
	rc = spool_open(&r->out, dirfd, name, conf.max_output_bytes);
	run_file(r, "err", name, sizeof(name));
	if (rc == 0)
		rc = spool_open(&r->err, dirfd, name, conf.max_output_bytes);
	run_file(r, "idx", name, sizeof(name));
	if (rc == 0)
		rc = outidx_open(&r->all, dirfd, name);
	return rc;
}

/* Moves what the fifo holds into r's spools; closes it at EOF. */
static void pipe_drain(struct run *r, struct loop_watch *w)
{
	unsigned stream = w == &r->pipe_o ? 1 : 2;
	struct spool *sp = stream == 1 ? &r->out : &r->err;

	for (int i = 0; i < 64 && w->fd >= 0; i++) {
		ssize_t n = read(w->fd, iobuf, sizeof(iobuf));
		uint64_t at = sp->size;

		if (n >= 65536 && i == 0)
			fcntl(w->fd, F_SETPIPE_SZ, 1 << 20); /* a big writer */
		if (n > 0 && open_spools(r) < 0) {
			log_msg(LOG_ERR, "spool open: %m");
			n = 0;
		}
		if (n > 0) {
			n = spool_append(sp, iobuf, (size_t)n);
			if (n < 0 ||
			    outidx_add(&r->all, stream, at, (uint64_t)n) < 0)
				log_msg(LOG_ERR, "spool write: %m");
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
