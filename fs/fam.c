/*
 * fam.c - the open file and the replies the file families share, the
 * streams (output that waits at its end) among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "fam.h"
#include "sessions/session/fdq.h"
#include "sessions/core/ctl.h"
#include "sessions/core/log.h"
#include "sessions/session/run.h"

static struct list open_files = LIST_INIT(open_files);

void fh_set_run(struct fh *fh, struct run *r)
{
	if (r)
		run_ref(r);
	if (fh->r)
		run_unref(fh->r);
	fh->r = r;
}

void fh_unwatch(struct fh *fh)
{
	if (fh->poll_watch)
		park_cancel(fh->poll_watch);
	if (fh->ph)
		fuse_pollhandle_destroy(fh->ph);
	fh->poll_watch = NULL;
	fh->ph = NULL;
}

void fh_free(struct fh *fh)
{
	fh_unwatch(fh);
	fh_set_run(fh, NULL);
	if (fh->priv_free)
		fh->priv_free(fh->priv);
	fdq_close(fh->fd);
	fdq_close(fh->fd_out);
	fdq_close(fh->fd_err);
	free(fh->text);
	free(fh->w.p);
	free(fh->var);
	free(fh->before.val);
	list_del(&fh->link);
	objs_del(fh->id);
	free(fh);
}

void fh_opened(struct fh *fh, fuse_req_t req, const struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	fh->opener = ctx->pid;
	fh->uid = ctx->uid;
	fh->gid = ctx->gid;
	fh->flags = fi->flags;
}

struct fh *fh_next(struct fh *fh)
{
	struct list *l = fh ? fh->link.next : open_files.next;

	return l == &open_files ? NULL : list_entry(l, struct fh, link);
}

void fh_track(struct fh *fh)
{
	list_add_tail(&open_files, &fh->link);
}

void fh_free_all(void)
{
	while (!list_empty(&open_files))
		fh_free(list_entry(open_files.next, struct fh, link));
}

struct fh *fh_new(const struct node *n)
{
	struct fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->id = objs_add(OBJ_FH, fh);
	fh->fe = tree_fent(n->ft);
	fh->sid = n->s ? n->s->id : 0;
	fh->cid = n->c ? n->c->id : 0;
	fh->fd = fh->fd_out = fh->fd_err = -1;
	list_add_tail(&open_files, &fh->link);
	if (n->r && (tree_is_run_file(n->ft) || n->run_level))
		fh_set_run(fh, n->r);
	if (n->var && !(fh->var = strdup(n->var->name))) {
		fh_free(fh);
		return NULL;
	}
	return fh;
}

/* Why fh's spool could not be opened (err), in its session's error file
 * (else the log); returns the errno its read fails with: EMFILE, ENFILE
 * and ENOMEM as they are, anything else (a spool gone) EIO. */
static int spool_failed(const struct fh *fh, int err)
{
	struct sess *s = sess_get(fh->sid);
	char why[160];

	if (err == EMFILE)
		snprintf(why, sizeof(why),
			 "uid %u holds %lu descriptors for open files "
			 "(max_fds_per_user)",
			 (unsigned)fh->uid, fdq_bound());
	else if (err == ENFILE)
		snprintf(why, sizeof(why),
			 "the daemon's descriptors are at their limit "
			 "less fd_reserve");
	else
		snprintf(why, sizeof(why), "its spool file: %s", strerror(err));
	if (s)
		sess_error(s, "%s: cannot be read: %s", fh->fe->name, why);
	else
		log_msg(LOG_WARNING, "%s: cannot be read: %s", fh->fe->name,
			why);
	return err == EMFILE || err == ENFILE || err == ENOMEM ? err : EIO;
}

int fh_spool(struct fh *fh, int *slot, const char *suffix)
{
	struct sess *s;
	char name[64];
	int fd;

	if (*slot >= 0)
		return *slot;
	s = fh->r ? fh->r->sess : NULL;
	if (!s || (fh->r->state == RUN_QUEUED && strcmp(suffix, "cmd")))
		return -spool_failed(fh, ENOENT);
	run_file(fh->r, suffix, name, sizeof(name));
	fd = fdq_take(fh->uid, openat(s->dirfd, name, O_RDONLY | O_CLOEXEC));
	if (fd < 0)
		return -spool_failed(fh, -fd);
	return *slot = fd;
}

void fam_reply_text(fuse_req_t req, const char *text, size_t len, size_t size,
		    off_t off)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off,
			       len - (size_t)off < size ? len - (size_t)off :
							  size);
}

/* Replies with the bytes of the files v names, read into one buffer
 * that goes out with the reply. Spliced from the spool instead, each
 * page was taken by reference and moved on the kernel's LRU lists as it
 * was marked accessed: reading 1 GiB of stdout took 1.0-1.4 s against
 * 0.5-0.9 s so (tests/bench/RESULTS.md). A reply larger than the buffer (a
 * max_read above 1 MiB) is still spliced. */
static void reply_files(fuse_req_t req, struct fuse_bufvec *v)
{
	static char buf[1 << 20];
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(fuse_buf_size(v));
	ssize_t n;

	if (dst.buf[0].size > sizeof(buf)) {
		fuse_reply_data(req, v, FUSE_BUF_SPLICE_MOVE);
		return;
	}
	dst.buf[0].mem = buf;
	n = fuse_buf_copy(&dst, v, 0);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

void fam_reply_fd(fuse_req_t req, int fd, size_t size, uint64_t off)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = fd;
	bv.buf[0].pos = (off_t)off;
	reply_files(req, &bv);
}

void fam_reply_spool(fuse_req_t req, struct fh *fh, const char *suffix,
		     uint64_t end, size_t size, off_t off)
{
	uint64_t at = (uint64_t)off;
	int fd;

	if (at >= end) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	fd = fh_spool(fh, &fh->fd, suffix);
	if (fd < 0)
		fuse_reply_err(req, -fd);
	else
		fam_reply_fd(req, fd,
			     end - at < size ? (size_t)(end - at) : size, at);
}

#define OUTPUT_PIECES 32 /* records gathered into one reply at most */

/* Gathers into v up to size output bytes from off, starting with rec (the
 * i-th record of the index idx); returns how many, or -errno when not
 * even the first record's spool could be opened. */
static ssize_t gather_output(struct fh *fh, struct fuse_bufvec *v, int idx,
			     struct outrec rec, uint64_t i, size_t size,
			     uint64_t off)
{
	size_t sent = 0;
	uint64_t skip;

	do {
		struct fuse_buf *b = &v->buf[v->count];
		int fd = rec.stream == 1 ? fh_spool(fh, &fh->fd_out, "out") :
					   fh_spool(fh, &fh->fd_err, "err");

		if (fd < 0)
			return v->count ? (ssize_t)sent : fd;
		skip = off + sent - rec.off;
		*b = (struct fuse_buf){
			.size = rec.len - skip < size - sent ?
					(size_t)(rec.len - skip) :
					size - sent,
			.flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK,
			.fd = fd,
			.pos = (off_t)(rec.src + skip),
		};
		sent += b->size;
		v->count++;
	} while (sent < size && v->count < OUTPUT_PIECES &&
		 outidx_get(idx, ++i, &rec) == 0);
	return (ssize_t)sent;
}

size_t fam_reply_output(fuse_req_t req, struct fh *fh, size_t size,
			uint64_t off)
{
	struct fuse_bufvec *v;
	struct outrec rec;
	ssize_t sent = 0;
	uint64_t i;
	int idx;

	if (!fh->r || off >= fh->r->all.size) {
		fuse_reply_buf(req, NULL, 0);
		return 0;
	}
	v = calloc(1, sizeof(*v) + (OUTPUT_PIECES - 1) * sizeof(v->buf[0]));
	idx = v ? fh_spool(fh, &fh->fd, "idx") : -ENOMEM;
	if (idx >= 0 && outidx_find(idx, off, &rec, &i) < 0)
		idx = -spool_failed(fh, EIO); /* the index lacks off */
	if (idx >= 0)
		sent = gather_output(fh, v, idx, rec, i, size, off);
	if (idx < 0 || sent < 0)
		fuse_reply_err(req, (int)-(idx < 0 ? idx : sent));
	else
		reply_files(req, v);
	free(v);
	return sent > 0 ? (size_t)sent : 0;
}

/* Answers now if try can, else EAGAIN for a non-blocking reader that
 * may not wait, else parks the request in fh's wait list. */
static void answer_or_park(fuse_req_t req, struct fh *fh,
			   struct list *(*waiters)(struct fh *fh), size_t size,
			   off_t off, bool (*try)(struct park *), bool may_fail)
{
	struct park now = {
		.req = req, .fh = fh, .size = size, .off = off, .retry = try
	};

	if (try(&now))
		return;
	if (may_fail && (fh->flags & O_NONBLOCK))
		fuse_reply_err(req, EAGAIN);
	else if (!park_add(waiters(fh), &now))
		fuse_reply_err(req, ENOMEM);
}

void fam_answer_or_park(fuse_req_t req, struct fh *fh,
			struct list *(*waiters)(struct fh *fh), size_t size,
			off_t off, bool (*try)(struct park *))
{
	answer_or_park(req, fh, waiters, size, off, try, false);
}

void fam_read_or_park(fuse_req_t req, struct fh *fh,
		      struct list *(*waiters)(struct fh *fh), size_t size,
		      off_t off, bool (*try)(struct park *))
{
	answer_or_park(req, fh, waiters, size, off, try, true);
}

struct list *fam_run_waiters(struct fh *fh)
{
	return &fh->r->waiters;
}

static bool try_stream(struct park *p)
{
	struct fh *fh = p->fh;
	struct run *r = fh->r;
	uint64_t off = (uint64_t)p->off;

	if (r && r->all.size > off) {
		fh->cursor = off + fam_reply_output(p->req, fh, p->size, off);
		return true;
	}
	if (r && run_active(r))
		return false;
	fh->cursor = off;
	fuse_reply_buf(p->req, NULL, 0);
	return true;
}

void fam_stream_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_read_or_park(req, fh, fam_run_waiters, size, off, try_stream);
}

/* poll knows no offset: the end of the latest read stands for it. */
bool fam_stream_readable(const struct fh *fh)
{
	return !fh->r || !run_active(fh->r) || fh->r->all.size > fh->cursor;
}

/* The thread group of thread tid, from /proc (0: unknown). */
static pid_t tgid_of(pid_t tid)
{
	char path[32], buf[512], *at;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	at = strstr(buf, "\nTgid:");
	return at ? (pid_t)strtol(at + 7, NULL, 10) : 0;
}

/* The kernel names the calling thread: a threaded program may open on
 * one thread and close on another (libuv's pool does), so threads of one
 * process are compared by their thread group. */
bool fam_by_opener(fuse_req_t req, const struct fh *fh)
{
	pid_t pid = fuse_req_ctx(req)->pid, a, b;

	if (pid == fh->opener || pid == 0 || fh->opener == 0)
		return true;
	a = tgid_of(pid);
	b = tgid_of(fh->opener);
	return a && a == (b ? b : fh->opener);
}

/* Makes w len bytes long; new bytes are NUL. */
static int grow_to(struct strbuf *w, size_t len)
{
	static const char zeros[4096];

	while (w->len < len && !w->err)
		sb_add(w, zeros,
		       len - w->len < sizeof(zeros) ? len - w->len :
						      sizeof(zeros));
	return w->err;
}

static int too_long(struct fh *fh, struct sess *s)
{
	if (s)
		sess_error(s, "command longer than max_command_bytes (%llu)",
			   (unsigned long long)conf.max_command_bytes);
	else
		log_msg(LOG_WARNING, "%s: longer than max_command_bytes",
			fh->fe->name);
	fh->werr = E2BIG;
	return -E2BIG;
}

int fam_gather(struct fh *fh, struct sess *s, const char *buf, size_t size)
{
	if (fh->w.len + size > conf.max_command_bytes)
		return too_long(fh, s);
	sb_add(&fh->w, buf, size);
	return fh->w.err ? fh->w.err : 0;
}

int fam_write_at(struct fh *fh, struct sess *s, const char *buf, size_t size,
		 off_t off)
{
	uint64_t at =
		(fh->flags & O_APPEND) || off < 0 ? fh->w.len : (uint64_t)off;
	size_t in_place;
	int rc;

	if (at + size > conf.max_command_bytes)
		return too_long(fh, s);
	rc = grow_to(&fh->w, (size_t)at);
	if (rc < 0)
		return rc;
	in_place =
		fh->w.len - (size_t)at < size ? fh->w.len - (size_t)at : size;
	if (in_place)
		memcpy(fh->w.p + at, buf, in_place);
	sb_add(&fh->w, buf + in_place, size - in_place);
	return fh->w.err;
}

int fam_resize(struct fh *fh, struct sess *s, off_t size)
{
	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > conf.max_command_bytes)
		return too_long(fh, s);
	if ((size_t)size <= fh->w.len) {
		fh->w.len = (size_t)size;
		return 0;
	}
	return grow_to(&fh->w, (size_t)size);
}

off_t fam_cmd_size(const struct node *n)
{
	return n->r ? (off_t)n->r->cmd_len : 0;
}

void fam_cmd_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_spool(req, fh, "cmd", fh->r ? fh->r->cmd_len : 0, size, off);
}

int fam_cmd_write(fuse_req_t req, struct fh *fh, struct node *n,
		  const char *buf, size_t size, off_t off)
{
	int rc;

	(void)req;
	if (fh->started) {
		sess_error(n->s, "%s: written after its opener's close started "
			   "it", fh->fe->name);
		return -EBUSY;
	}
	rc = fam_write_at(fh, n->s, buf, size, off);
	if (rc == 0)
		fh->dirty = true;
	return rc;
}

int fam_cmd_truncate(const struct node *n, struct fh *fh, off_t size)
{
	if (!fh || fh->started)
		return 0;
	fh->dirty = true;
	return fam_resize(fh, n->s, size);
}

int fam_cmd_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	if (n->run_level && n->r->has_cmd) {
		sess_error(n->s, "%s/%s/cmd: it has its command already",
			   FAM_RUN_DIR(n->r), n->r->name);
		return -EBUSY;
	}
	if (!n->run_level)
		fh_set_run(fh, NULL); /* a writer starts a run of its own */
	return 0;
}

bool fam_cmd_starts(fuse_req_t req, struct fh *fh)
{
	if (!fh->dirty || fh->werr || (req && !fam_by_opener(req, fh)))
		return false;
	fh->dirty = false;
	/* an opener the daemon cannot see: every close starts what came */
	fh->started = fh->opener != 0;
	return true;
}

/* An opener's close after the one that started fh's run waits for it
 * as that one does: the kernel sends a close that was waiting again after
 * an upgrade in place, whose parked reply is gone. */
static bool waits_again(fuse_req_t req, const struct fh *fh)
{
	return !fh->werr && fh->started && fh->r && run_active(fh->r) &&
	       fam_by_opener(req, fh);
}

int fam_cmd_flush(fuse_req_t req, struct fh *fh, int (*start)(struct fh *),
		  bool (*retry)(struct park *),
		  void (*interrupted)(struct park *))
{
	struct park how;
	int rc;

	if (fam_cmd_starts(req, fh)) {
		rc = start(fh);
		if (rc < 0)
			return rc;
	} else if (!waits_again(req, fh)) {
		return -fh->werr;
	}
	how = (struct park){
		.req = req, .fh = fh, .retry = retry, .interrupted = interrupted
	};
	if (!retry(&how) && !park_add(fam_run_waiters(fh), &how))
		fuse_reply_err(req, ENOMEM);
	return FOPS_LATER;
}

size_t fam_value_len(const struct strbuf *w)
{
	return w->len && w->p[w->len - 1] == '\n' ? w->len - 1 : w->len;
}

/* Calls line on each line of w's first end bytes; stops at an error. */
static int each_line(struct fh *fh, struct sess *s, size_t end, bool apply,
		     int (*line)(struct fh *fh, struct sess *s, const char *l,
				 size_t len, bool apply))
{
	const char *p = fh->w.p;
	size_t start = 0;
	int rc = 0;

	for (size_t i = 0; i <= end && rc == 0; i++) {
		if (i < end && p[i] != '\n')
			continue;
		if (i > start)
			rc = line(fh, s, p + start, i - start, apply);
		start = i + 1;
	}
	return rc;
}

int fam_lines(struct fh *fh, struct sess *s, bool all, fam_line_fn *line)
{
	struct strbuf *w = &fh->w;
	size_t end = w->len;
	int rc;

	while (!all && end && w->p[end - 1] != '\n')
		end--;
	if (end == 0)
		return 0;
	rc = each_line(fh, s, end, false, line);
	if (rc == 0) {
		rc = each_line(fh, s, end, true, line);
	} else {
		end = w->len; /* refused: nothing of it is kept */
		fh->werr = -rc;
	}
	memmove(w->p, w->p + end, w->len - end);
	w->len -= end;
	return rc;
}

/* Checks one line written to a ctl file against its table, or carries it
 * out through its row. */
static int ctl_line(struct fh *fh, struct sess *s, const char *l, size_t len,
		    bool apply)
{
	const struct fam_ctl *t = fh->fe->ops->ctl;
	const char *name = NULL;
	void *owner = t->owner(fh, s, &name);
	const struct ctl_verb *v;
	struct ctl_args a;
	char usage[160];

	if (!owner)
		return -t->gone;
	v = ctl_lookup(t->verbs, l, len, &a);
	a.s = s;
	a.owner = owner;
	a.uid = fh->uid;
	a.gid = fh->gid;
	if (v)
		return apply ? v->fn(&a) : 0;
	ctl_usage(t->verbs, usage, sizeof(usage));
	sess_error(s, "%s%s%sctl: '%.*s' is not %s; nothing of this write was "
		   "done", t->dir, name ? name : "", name ? "/" : "",
		   (int)(len > 80 ? 80 : len), l, usage);
	return -EINVAL;
}

/* The lines an open ctl file may carry out: each can signal every
 * process of a tree, so a request costs its lines times those
 * processes, and a 16 MiB write of "CONT" lines held the loop for tens
 * of seconds. A write (or the close, with its last line) past them is
 * refused whole, as a bad line is. */
#define CTL_LINES_MAX 64

/* Counts the n lines a write or the close would carry out against
 * CTL_LINES_MAX: 0, or -EINVAL with a line in error and nothing of it
 * done. */
static int ctl_count(struct fh *fh, struct sess *s, size_t n)
{
	if (fh->ctl_lines + n <= CTL_LINES_MAX) {
		fh->ctl_lines += (unsigned)n;
		return 0;
	}
	sess_error(s, "%sctl: more than %d lines in one open file; nothing of "
		   "this write was done", fh->fe->ops->ctl->dir, CTL_LINES_MAX);
	fh->w.len = 0;
	fh->werr = EINVAL;
	return -EINVAL;
}

/* The lines of buf: its newlines, at most CTL_LINES_MAX + 1 counted. */
static size_t newlines(const char *buf, size_t size)
{
	size_t n = 0;

	for (const char *p = buf; n <= CTL_LINES_MAX &&
				  (p = memchr(p, '\n', size - (size_t)(p - buf)));
	     p++)
		n++;
	return n;
}

int fam_ctl_write(fuse_req_t req, struct fh *fh, struct node *n,
		  const char *buf, size_t size, off_t off)
{
	int rc = ctl_count(fh, n->s, newlines(buf, size));

	(void)req;
	(void)off;
	if (rc == 0)
		rc = fam_gather(fh, n->s, buf, size);
	return rc < 0 ? rc : fam_lines(fh, n->s, false, ctl_line);
}

int fam_ctl_flush(fuse_req_t req, struct fh *fh)
{
	struct sess *s = sess_get(fh->sid);

	(void)req;
	/* the last line, without its newline */
	if (s && fh->w.len && ctl_count(fh, s, 1) == 0)
		return fam_lines(fh, s, true, ctl_line);
	return -fh->werr;
}

int fam_made_run(int rc, const struct run *r, ft_t ft, fuse_ino_t *ino,
		 double *ttl)
{
	*ttl = 0;
	if (rc == 0)
		*ino = tree_ino(r->id, ft);
	return rc;
}

void fam_list_runs(struct dirbuf *d, const struct list *runs, ft_t ft)
{
	for (const struct list *l = runs->next; l != runs; l = l->next) {
		const struct run *r = list_entry(l, struct run, link);

		fam_dir_add(d, r->name, tree_ino(r->id, ft), S_IFDIR);
	}
}

void fam_dir_add(struct dirbuf *d, const char *name, fuse_ino_t ino,
		 mode_t mode)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t need;

	if ((off_t)d->count++ < d->from || d->len >= d->max)
		return;
	need = fuse_add_direntry(d->req, NULL, 0, name, NULL, 0);
	if (d->len + need > d->max) {
		d->max = d->len; /* full: later entries come next call */
		return;
	}
	fuse_add_direntry(d->req, d->p + d->len, need, name, &st,
			  (off_t)d->count);
	d->len += need;
}
