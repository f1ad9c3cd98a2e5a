/*
 * fam_session.c - the session directory's own files: cwd, error and ctl
 * (kill [SIGNAL], reset, timeout MS, fork NAME).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_ctx.h"
#include "fam_env.h"
#include "fam_ports.h"
#include "fam_procs.h"
#include "fam_run.h"
#include "fam_session.h"
#include "fam_tty.h"
#include "sessions/core/ctl.h"

static char *error_text(const struct node *n, size_t *len)
{
	return sess_errors_text(n->s, len);
}

static const struct fops error_ops = { .text = error_text };

static int ctl_kill(const struct ctl_args *a)
{
	if (sess_kill_run(a->s, a->sig, END_KILLED) == 0)
		sess_error(a->s, "ctl: kill -%d of run %s", a->sig,
			   a->s->active->name);
	return 0;
}

static int ctl_reset(const struct ctl_args *a)
{
	sess_reset(a->s);
	return 0;
}

static int ctl_timeout(const struct ctl_args *a)
{
	sess_set_timeout(a->s, a->ms);
	return 0;
}

/* fork NAME: session NAME, the writer's, a fork of this one. */
static int ctl_fork(const struct ctl_args *a)
{
	char name[NAME_MAX_LEN + 1];
	struct sess *n;

	if (a->plen >= sizeof(name)) { /* as mkdir's name_valid */
		sess_error(a->s, "ctl: fork: a name of %zu bytes (at most %d)",
			   a->plen, NAME_MAX_LEN);
		return -EINVAL;
	}
	memcpy(name, a->path, a->plen);
	name[a->plen] = '\0';
	return sess_fork(a->s, name, a->uid, a->gid, &n);
}

static const struct ctl_verb ctl_verbs[] = {
	{ "kill", CTL_ARG_SIGNAL, false, ctl_kill },
	{ "SIGNAL", CTL_ARG_BARE, true, ctl_kill },
	{ "reset", CTL_ARG_NONE, false, ctl_reset },
	{ "timeout", CTL_ARG_MS, false, ctl_timeout },
	{ "fork", CTL_ARG_NAME, false, ctl_fork },
	{ 0 },
};

/* The run a fork waits for: the one running, else the next (a queued
 * run waits a moment for the latest one's variables); NULL when the
 * session is between runs. */
static struct run *busy_with(struct sess *s)
{
	if (s->active)
		return s->active;
	return list_empty(&s->queue) ?
		       NULL :
		       list_entry(s->queue.next, struct run, qlink);
}

/* Whether every complete line of buf is a fork: such a write waits for
 * the session's runs (any other line is carried out at once, and a kill
 * among them must not wait for the run it ends). */
static bool forks_only(const char *buf, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < size; i = n + 1) {
		const char *nl = memchr(buf + i, '\n', size - i);

		if (!nl)
			break;
		n = (size_t)(nl - buf);
		if (n - i < 5 || memcmp(buf + i, "fork ", 5) != 0)
			return false;
	}
	return n > 0;
}

/* Parks (a copy of) the write p on the run r. */
static bool park_on(struct park *p, struct run *r)
{
	fh_set_run(p->fh, r);
	return park_add(&r->waiters, p) != NULL;
}

/* A parked fork: done once the session is between runs (re-parked on
 * the next run when one follows), failed once it is gone. */
static bool try_fork(struct park *p)
{
	struct fh *fh = p->fh;
	struct node n = { .s = sess_get(fh->sid) };
	struct run *r = n.s ? busy_with(n.s) : NULL;
	int rc;

	if (r && r == fh->r)
		return false;
	if (r) { /* the next run: wait for it now */
		if (!park_on(p, r))
			fuse_reply_err(p->req, ENOMEM);
		return true;
	}
	fh_set_run(fh, NULL);
	rc = n.s ? fam_ctl_write(p->req, fh, &n, p->data, p->size, p->off) :
		   -ENOENT;
	park_reply_write(p, rc);
	return true;
}

/* A write of forks to a busy session's ctl waits for its runs (EBUSY at
 * once with O_NONBLOCK; Ctrl-C: EINTR). */
static int ctl_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	struct park how = { .req = req,
			    .fh = fh,
			    .size = size,
			    .off = off,
			    .data = buf,
			    .retry = try_fork };
	struct run *r = busy_with(n->s);

	if (!r || !forks_only(buf, size) || (fh->flags & O_NONBLOCK))
		return fam_ctl_write(req, fh, n, buf, size, off);
	return park_on(&how, r) ? FOPS_LATER : -ENOMEM;
}

/* A session's ctl is its own. */
static void *ctl_owner(struct fh *fh, struct sess *s, const char **name)
{
	(void)fh;
	(void)name;
	return s;
}

static const struct fam_ctl ctl_tab = { "", ctl_verbs, ctl_owner, ENOENT };
static const struct fops ctl_ops = { .write = ctl_write,
				     .flush = fam_ctl_flush,
				     .ctl = &ctl_tab };

static const struct fent session_tab[] = {
	FAM_RUN_CMD_ROW,
	FAM_RUN_OUT_ROWS,
	FAM_RUN_RESULT_ROW,
	{ "cwd", FT_CWD, FENT_RW, &fam_cwd_ops, 0, HOME_DIR,
	  "the working directory (write to change)" },
	{ "env", FT_ENVDIR, FENT_DIR, &fam_envdir_ops, 0, HOME_DIR,
	  "exported variables" },
	FAM_RUN_TIMEOUT_ROW,
	{ "error", FT_ERROR, FENT_RO, &error_ops, 0, HOME_DIR,
	  "recent refusals, one line each" },
	{ "ctl", FT_CTL, FENT_WO, &ctl_ops, 0, HOME_DIR,
	  "write kill [SIGNAL], SIGNAL, reset, timeout MS or fork NAME" },
	{ "runs", FT_RUNS, FENT_DIR, &fam_runs_ops, 0, HOME_DIR,
	  "the history of runs" },
	/* before procs/: of the rows a family shares (stdout...), the one
	 * indexed is the last walked, procs/NAME's */
	{ "contexts", FT_CTXS, FENT_DIR, &fam_ctxs_ops, 0, HOME_DIR,
	  "code interpreter contexts (python, javascript)" },
	{ "procs", FT_PROCS, FENT_DIR, &fam_procs_ops, 0, HOME_DIR,
	  "background processes" },
	{ "ports", FT_PORTS, FENT_RW, &fam_ports_ops, 0, HOME_DIR,
	  "PROTO ADDRESS PORT PID of each socket its processes listen on; "
	  "write PORT [TIMEOUT_MS]: the next open's reads wait for it" },
	{ "tty", FT_TTY, FENT_DIR, &fam_tty_ops, 0, HOME_DIR,
	  "the session's terminal: an interactive bash on a PTY" },
	{ 0 },
};

const struct fops fam_session_ops = { .tab = session_tab };
