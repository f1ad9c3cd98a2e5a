/*
 * fam_session.c - the session directory's own files: cwd, error and ctl
 * (kill [SIGNAL], reset, timeout MS).
 */
#include <errno.h>
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

static const struct ctl_verb ctl_verbs[] = {
	{ "kill", CTL_ARG_SIGNAL, false, ctl_kill },
	{ "SIGNAL", CTL_ARG_BARE, true, ctl_kill },
	{ "reset", CTL_ARG_NONE, false, ctl_reset },
	{ "timeout", CTL_ARG_MS, false, ctl_timeout },
	{ 0 },
};

/* A session's ctl is its own. */
static void *ctl_owner(struct fh *fh, struct sess *s, const char **name)
{
	(void)fh;
	(void)name;
	return s;
}

static const struct fam_ctl ctl_tab = { "", ctl_verbs, ctl_owner, ENOENT };
static const struct fops ctl_ops = FAM_CTL_OPS(ctl_tab);

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
	  "write kill [SIGNAL], SIGNAL, reset or timeout MS" },
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
