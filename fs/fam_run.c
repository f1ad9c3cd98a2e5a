/*
 * fam_run.c - a run's files, at the session level (the newest run) and
 * in runs/N, and runs/ itself. Reads of output are spliced from the
 * spool files; reads of exit and stream, and the close of cmd, are
 * parked until the run moves on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "conf/conf.h"
#include "fam.h"
#include "fam_run.h"
#include "fam_runopt.h"
#include "sessions/core/names.h"

static bool try_flush(struct park *p)
{
	struct fh *fh = p->fh;
	struct sess *s = sess_get(fh->sid);

	if (run_active(fh->r))
		return false;
	/* canceled, or ended by the deletion of its session; a command that
	 * could not be stored fails with why */
	if (fh->r->start_err)
		fuse_reply_err(p->req, fh->r->start_err);
	else
		fuse_reply_err(p->req,
			       fh->r->end == END_CANCELED || !s || s->dying ?
				       ECANCELED :
				       0);
	return true;
}

/* Ctrl-C on the writer: its run goes (canceled, or killed with INT). */
static void flush_interrupted(struct park *p)
{
	struct fh *fh = p->fh;
	struct sess *s = sess_get(fh->sid);

	if (s)
		sess_interrupt_run(s, fh->r);
}

/* Queues what was written as a run; returns 0 or -errno. */
static int cmd_start(struct fh *fh)
{
	struct sess *s = sess_get(fh->sid);
	struct run *r;
	int rc;

	if (!s)
		return -ENOENT;
	if (fh->r) {
		/* runs/NAME/cmd: the run exists, it gets its command */
		rc = sess_queue_run(s, fh->r, fh->w.p, fh->w.len);
		r = rc < 0 ? NULL : fh->r;
	} else {
		r = sess_submit(s, fh->w.p, fh->w.len, &rc);
	}
	fh->w.len = 0;
	if (!r) {
		sess_error(s, "cannot queue the command: %s", strerror(-rc));
		return rc;
	}
	if (fh->r != r)
		fh_set_run(fh, r);
	return 0;
}

/* The command is every byte written through the open file, also by
 * processes that inherited it: only its opener's close queues the run,
 * and returns once it has ended. A close before anything was written
 * (bash's dup2 of a redirection) does nothing. */
static int cmd_flush(fuse_req_t req, struct fh *fh)
{
	return fam_cmd_flush(req, fh, cmd_start, try_flush, flush_interrupted);
}

/* Written after the opener's last close: the run starts now, and no
 * close waits for it. */
static void cmd_release(struct fh *fh)
{
	if (fam_cmd_starts(NULL, fh))
		cmd_start(fh);
}

const struct fops fam_cmd_ops = {
	FAM_CMD_FOPS,
	.open = fam_cmd_open,
	.flush = cmd_flush,
	.release = cmd_release,
};

static off_t stdout_size(const struct node *n)
{
	return n->r ? (off_t)n->r->out.size : 0;
}

static void stdout_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_spool(req, fh, "out", fh->r ? fh->r->out.size : 0, size, off);
}

const struct fops fam_stdout_ops = { .size = stdout_size, .read = stdout_read };

static off_t stderr_size(const struct node *n)
{
	return n->r ? (off_t)n->r->err.size : 0;
}

static void stderr_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_spool(req, fh, "err", fh->r ? fh->r->err.size : 0, size, off);
}

const struct fops fam_stderr_ops = { .size = stderr_size, .read = stderr_read };

static off_t output_size(const struct node *n)
{
	return n->r ? (off_t)n->r->all.size : 0;
}

static void output_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_output(req, fh, size, (uint64_t)off);
}

const struct fops fam_output_ops = { .size = output_size, .read = output_read };

/* The output so far: stream is output that waits at its end. */
static off_t stream_size(const struct node *n)
{
	return n->r ? (off_t)n->r->all.size : 0;
}

const struct fops fam_stream_ops = {
	.size = stream_size,
	.read = fam_stream_read,
	.readable = fam_stream_readable,
	.waiters = fam_run_waiters,
};

static char *exit_text(const struct node *n, size_t *len)
{
	return run_format_exit(n->r, len);
}

static bool try_exit(struct park *p)
{
	struct fh *fh = p->fh;
	size_t len;

	if (fh->r && run_active(fh->r))
		return false;
	free(fh->text);
	fh->text = run_format_exit(fh->r, &len);
	fh->tlen = fh->text ? len : 0;
	fam_reply_text(p->req, fh->text, fh->tlen, p->size, p->off);
	return true;
}

static void exit_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_read_or_park(req, fh, fam_run_waiters, size, off, try_exit);
}

static bool exit_readable(const struct fh *fh)
{
	return !fh->r || !run_active(fh->r);
}

const struct fops fam_exit_ops = {
	.text = exit_text,
	.read = exit_read,
	.readable = exit_readable,
	.waiters = fam_run_waiters,
};

static char *status_text(const struct node *n, size_t *len)
{
	return run_format_status(n->r, len);
}

const struct fops fam_status_ops = { .text = status_text };

/* A stream it cannot read makes result.json fail (errno), never claim
 * "" for it. */
static char *result_text(const struct node *n, size_t *len)
{
	char *p = run_format_json(n->r, n->s->dirfd, n->s->name,
				  conf.json_output_bytes, len);
	int err = errno;

	if (!p && err != ENOMEM)
		sess_error(n->s, "result.json: a spool file cannot be read: %s",
			   strerror(err));
	errno = err;
	return p;
}

const struct fops fam_result_ops = { .text = result_text };

static char *timeout_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };
	const struct run *r = n->r;

	if (!n->run_level)
		sb_addf(&b, "%llu\n", (unsigned long long)n->s->timeout_ms);
	else
		sb_addf(&b, "%llu\n",
			(unsigned long long)(r->state == RUN_QUEUED ?
						     r->timeout_ms :
						     r->eff_timeout_ms));
	return sb_take(&b, len);
}

/* The session's timeout, or (runs/N) a queued run's own. */
static int timeout_write(fuse_req_t req, struct fh *fh, struct node *n,
			 const char *buf, size_t size, off_t off)
{
	unsigned long long ms;
	int rc = fam_gather(fh, n->s, buf, size);

	(void)off;
	(void)req;
	if (rc < 0)
		return rc;
	rc = name_parse_timeout(fh->w.p, fh->w.len, &ms);
	if (rc < 0) {
		sess_error(n->s,
			   "timeout: '%.*s' is not a number of milliseconds "
			   "from 0 to %llu",
			   (int)fam_value_len(&fh->w), fh->w.p,
			   NAME_TIMEOUT_MAX_MS);
		return rc;
	}
	if (!n->run_level) {
		sess_set_timeout(n->s, ms);
	} else if (n->r->state == RUN_QUEUED) {
		run_set_timeout(n->r, ms);
	} else {
		sess_error(n->s, "runs/%s/timeout: the run has started",
			   n->r->name);
		return -EBUSY;
	}
	return 0;
}

const struct fops fam_timeout_ops = { .text = timeout_text,
				      .write = timeout_write };

static off_t latest_size(const struct node *n)
{
	struct run *r = sess_latest(n->s);

	return r ? (off_t)strlen(r->name) : 0;
}

static const char *latest_link(const struct node *n)
{
	struct run *r = sess_latest(n->s);

	return r ? r->name : NULL;
}

static const struct fops latest_ops = { .size = latest_size,
					.link = latest_link };

static const struct fent run_tab[] = {
	FAM_RUN_CMD_ROW,     FAM_RUN_OUT_ROWS, FAM_RUN_RESULT_ROW,
	FAM_RUN_TIMEOUT_ROW, FAM_RUN_OPT_ROWS, { 0 },
};

static const struct fops run_ops = { .tab = run_tab };

static fuse_ino_t runs_lookup(const struct node *dir, const char *name,
			      double *ttl)
{
	struct run *r;

	*ttl = 0;
	if (strcmp(name, "latest") == 0)
		return sess_latest(dir->s) ? tree_ino(dir->s->id, FT_LATEST) :
					     0;
	r = sess_run_by_name(dir->s, name);
	return r ? tree_ino(r->id, FT_RUN) : 0;
}

static void runs_list(struct dirbuf *d, const struct node *dir)
{
	if (sess_latest(dir->s))
		fam_dir_add(d, "latest", tree_ino(dir->s->id, FT_LATEST),
			    S_IFLNK);
	fam_list_runs(d, &dir->s->runs, FT_RUN);
}

static int runs_mkdir(fuse_req_t req, const struct node *dir, const char *name,
		      fuse_ino_t *ino, double *ttl)
{
	struct run *r = NULL;
	int rc = sess_new_run(dir->s, name, &r);

	(void)req;
	return fam_made_run(rc, r, FT_RUN, ino, ttl);
}

static int runs_rmdir(fuse_req_t req, const struct node *dir, const char *name)
{
	struct run *r = sess_run_by_name(dir->s, name);
	int rc = r ? sess_remove_run(dir->s, r) : -ENOENT;

	(void)req;
	if (rc == -EBUSY)
		sess_error(dir->s, "rmdir runs/%s: it is queued or running",
			   name);
	return rc;
}

static const struct fent runs_dyn[] = {
	{ "", FT_RUN, FENT_DIR, &run_ops, 0, HOME_RUN,
	  "a run (mkdir names one): cmd, its output, exit, status, "
	  "result.json, timeout, its options env/, cwd, stdin" },
	{ "latest", FT_LATEST, S_IFLNK | 0777, &latest_ops, 0, HOME_DIR,
	  "a symlink to the newest run" },
	{ 0 },
};

const struct fops fam_runs_ops = {
	.dyn = runs_dyn,
	.lookup = runs_lookup,
	.list = runs_list,
	.mkdir = runs_mkdir,
	.rmdir = runs_rmdir,
};
