/*
 * fam_procs.c - procs/ and procs/NAME: cmd (its close starts the
 * process), the run's output and status files, pid, stdin (a pipe when
 * opened for writing before the start) and ctl (kill [SIGNAL], a bare
 * signal name, eof). rmdir ends the process and returns once it is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include "fam.h"
#include "fam_ports.h"
#include "fam_procs.h"
#include "fam_runopt.h"
#include "fam_run.h"
#include "sessions/core/ctl.h"

static int cmd_start(struct fh *fh)
{
	struct sess *s = sess_get(fh->sid);
	int rc;

	if (!s)
		return -ENOENT;
	rc = proc_start(s, fh->r, fh->w.p, fh->w.len);
	fh->w.len = 0;
	return rc;
}

/* The opener's close starts the process (as for a session's cmd) and
 * returns once it has started. */
static int cmd_flush(fuse_req_t req, struct fh *fh)
{
	return fam_cmd_starts(req, fh) ? cmd_start(fh) : -fh->werr;
}

static void cmd_release(struct fh *fh)
{
	if (fam_cmd_starts(NULL, fh))
		cmd_start(fh);
}

static const struct fops cmd_ops = {
	FAM_CMD_FOPS,
	.open = fam_cmd_open,
	.flush = cmd_flush,
	.release = cmd_release,
};

static char *pid_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	if (n->r->pid)
		sb_addf(&b, "%ld\n", n->r->pid);
	else
		sb_add(&b, "", 0);
	return sb_take(&b, len);
}

static const struct fops pid_ops = { .text = pid_text };

static int stdin_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	(void)fh;
	(void)fi;
	if (n->r->state == RUN_QUEUED)
		proc_want_stdin(n->r); /* the process will get a pipe */
	return 0;
}

static int stdin_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	int rc = proc_write(fh->r, buf, size);

	(void)off;
	(void)req;
	(void)n;
	return rc < 0 ? rc : 0;
}

static const struct fops stdin_ops = { .open = stdin_open,
				       .write = stdin_write };

static int ctl_kill(const struct ctl_args *a)
{
	struct run *p = a->owner;

	if (proc_signal(p, a->sig) == 0)
		sess_error(a->s, "procs/%s: signal %d", p->name, a->sig);
	return 0;
}

static int ctl_eof(const struct ctl_args *a)
{
	proc_eof(a->owner);
	return 0;
}

static const struct ctl_verb ctl_verbs[] = {
	{ "kill", CTL_ARG_SIGNAL, false, ctl_kill },
	{ "SIGNAL", CTL_ARG_BARE, false, ctl_kill },
	{ "eof", CTL_ARG_NONE, false, ctl_eof },
	{ 0 },
};

/* procs/NAME/ctl is the process's. */
static void *ctl_owner(struct fh *fh, struct sess *s, const char **name)
{
	(void)s;
	*name = fh->r->name;
	return fh->r;
}

static const struct fam_ctl ctl_tab = { "procs/", ctl_verbs, ctl_owner,
					ENOENT };
static const struct fops ctl_ops = FAM_CTL_OPS(ctl_tab);

static const struct fent proc_tab[] = {
	{ "cmd", FT_PROCCMD, FENT_RW, &cmd_ops, FENT_RUN, HOME_DIR,
	  "write a command: it starts at the close, which returns once it has "
	  "started" },
	FAM_RUN_OUT_ROWS,
	{ "pid", FT_PID, FENT_RO, &pid_ops, FENT_RUN, HOME_DIR,
	  "its process id" },
	{ "stdin", FT_STDIN, FENT_WO, &stdin_ops, FENT_RUN, HOME_DIR,
	  "write its input" },
	{ "ctl", FT_PROCCTL, FENT_WO, &ctl_ops, 0, HOME_DIR,
	  "write kill [SIGNAL], SIGNAL or eof" },
	{ "ports", FT_PROCPORTS, FENT_RW, &fam_ports_ops, 0, HOME_DIR,
	  "the sockets its processes listen on, as the session's ports" },
	FAM_RUN_ENV_ROW,
	FAM_RUN_CWD_ROW,
	{ 0 },
};

static const struct fops proc_ops = { .tab = proc_tab };

static fuse_ino_t procs_lookup(const struct node *dir, const char *name,
			       double *ttl)
{
	struct run *r = proc_by_name(dir->s, name);

	*ttl = 0;
	return r ? tree_ino(r->id, FT_PROC) : 0;
}

static void procs_list(struct dirbuf *d, const struct node *dir)
{
	fam_list_runs(d, &dir->s->procs, FT_PROC);
}

static int procs_mkdir(fuse_req_t req, const struct node *dir, const char *name,
		       fuse_ino_t *ino, double *ttl)
{
	struct run *r = NULL;
	int rc = proc_new(dir->s, name, &r);

	(void)req;
	return fam_made_run(rc, r, FT_PROC, ino, ttl);
}

static void rmdir_done(void *arg)
{
	fuse_reply_err((fuse_req_t)arg, 0);
}

static int procs_rmdir(fuse_req_t req, const struct node *dir, const char *name)
{
	struct run *p = proc_by_name(dir->s, name);
	int rc = p ? proc_remove(dir->s, p, rmdir_done, req) : -ENOENT;

	return rc < 0 ? rc : FOPS_LATER;
}

static const struct fent procs_dyn[] = {
	{ "", FT_PROC, FENT_DIR, &proc_ops, 0, HOME_PROC,
	  "a process: mkdir, then write cmd to start it; its output, exit and "
	  "status as a run's" },
	{ 0 },
};

const struct fops fam_procs_ops = {
	.dyn = procs_dyn,
	.lookup = procs_lookup,
	.list = procs_list,
	.mkdir = procs_mkdir,
	.rmdir = procs_rmdir,
};
