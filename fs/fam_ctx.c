/*
 * fam_ctx.c - contexts/ of a session: mkdir makes a code context, rmdir
 * ends its interpreter and returns once nothing of it is left; a
 * context's settings (language, cwd, timeout, env/NAME: fixed at its
 * first code but timeout), ctl (interrupt, restart, kill) and runs/N,
 * beside the files of its newest execution (fs/fam_ctxout.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_ctx.h"
#include "fam_env.h"
#include "sessions/core/ctl.h"
#include "sessions/core/objs.h"

static char *lang_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	sb_addf(&b, "%s\n", ctx_lang_name(n->c->lang));
	return sb_take(&b, len);
}

/* What a write to a setting gives: the value written so far, less one
 * trailing newline. */
static int value(struct fh *fh, struct node *n, const char *buf, size_t size,
		 size_t *len)
{
	int rc = fam_gather(fh, n->s, buf, size);

	*len = rc < 0 ? 0 : fam_value_len(&fh->w);
	return rc;
}

static int lang_write(fuse_req_t req, struct fh *fh, struct node *n,
		      const char *buf, size_t size, off_t off)
{
	size_t len;
	int rc = value(fh, n, buf, size, &len);

	(void)req;
	(void)off;
	return rc < 0 ? rc : ctx_set_language(n->c, fh->w.p, len);
}

static const struct fops lang_ops = { .text = lang_text, .write = lang_write };

static char *timeout_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	sb_addf(&b, "%llu\n", (unsigned long long)n->c->timeout_ms);
	return sb_take(&b, len);
}

static int timeout_write(fuse_req_t req, struct fh *fh, struct node *n,
			 const char *buf, size_t size, off_t off)
{
	unsigned long long ms;
	size_t len;
	int rc = value(fh, n, buf, size, &len);

	(void)req;
	(void)off;
	if (rc == 0)
		rc = name_parse_timeout(fh->w.p, fh->w.len, &ms);
	if (rc < 0) {
		sess_error(n->s,
			   "contexts/%s/timeout: '%.*s' is not a number of "
			   "milliseconds from 0 to %llu",
			   n->c->name, (int)(len > 40 ? 40 : len), fh->w.p,
			   NAME_TIMEOUT_MAX_MS);
		return rc;
	}
	ctx_set_timeout(n->c, ms);
	return 0;
}

static const struct fops timeout_ops = { .text = timeout_text,
					 .write = timeout_write };

static char *var_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	sb_add(&b, n->var->value, n->var->len);
	sb_add(&b, "\n", 1);
	return sb_take(&b, len);
}

static int var_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	size_t len;
	int rc = value(fh, n, buf, size, &len);

	(void)req;
	(void)off;
	return rc < 0 ? rc : ctx_setenv(n->c, fh->var, fh->w.p, len);
}

static int var_truncate(const struct node *n, struct fh *fh, off_t size)
{
	(void)fh;
	return size ? 0 : ctx_setenv(n->c, n->var->name, "", 0);
}

static const struct fops var_ops = {
	.text = var_text,
	.write = var_write,
	.truncate = var_truncate,
};

static const struct fent env_dyn[] = {
	{ "", FT_CTXVAR, FENT_RW, &var_ops, 0, HOME_CTXVAR,
	  "a variable: write sets, rm unsets" },
	{ 0 },
};

static const struct fops env_ops = { .dyn = env_dyn, FAM_ENV_FOPS };

/* What a context's verb answers: a dead restart is said by status and
 * error, not by the write. */
static int ctx_done(const struct ctl_args *a, int rc)
{
	const struct ctx *c = a->owner;

	if (rc == -ESRCH)
		sess_error(a->s, "contexts/%s/ctl: nothing is running",
			   c->name);
	return rc == -EIO ? 0 : rc;
}

static int ctl_interrupt(const struct ctl_args *a)
{
	return ctx_done(a, ctx_interrupt(a->owner));
}

static int ctl_restart(const struct ctl_args *a)
{
	return ctx_done(a, ctx_restart(a->owner));
}

static int ctl_kill(const struct ctl_args *a)
{
	return ctx_done(a, ctx_kill(a->owner));
}

static const struct ctl_verb ctl_verbs[] = {
	{ "interrupt", CTL_ARG_NONE, false, ctl_interrupt },
	{ "restart", CTL_ARG_NONE, false, ctl_restart },
	{ "kill", CTL_ARG_NONE, false, ctl_kill },
	{ 0 },
};

/* contexts/NAME/ctl is the context's, while it is there. */
static void *ctl_owner(struct fh *fh, struct sess *s, const char **name)
{
	struct ctx *c = objs_get(fh->cid, OBJ_CTX);

	(void)s;
	*name = c ? c->name : NULL;
	return c;
}

static const struct fam_ctl ctl_tab = { "contexts/", ctl_verbs, ctl_owner,
					ENOENT };
static const struct fops ctl_ops = FAM_CTL_OPS(ctl_tab);

static const struct fent run_tab[] = {
	FAM_CTX_EXEC_ROWS,
	{ 0 },
};

static const struct fops run_ops = { .tab = run_tab };

static fuse_ino_t runs_lookup(const struct node *dir, const char *name,
			      double *ttl)
{
	struct run *r = ctx_exec_by_name(dir->c, name);

	*ttl = 0;
	return r ? tree_ino(r->id, FT_CTXRUN) : 0;
}

static void runs_list(struct dirbuf *d, const struct node *dir)
{
	fam_list_runs(d, &dir->c->execs, FT_CTXRUN);
}

static const struct fent runs_dyn[] = {
	{ "", FT_CTXRUN, FENT_DIR, &run_ops, 0, HOME_CTXRUN,
	  "an execution: code, its output, result, results/, error, "
	  "result.json, status" },
	{ 0 },
};

static const struct fops runs_ops = {
	.dyn = runs_dyn,
	.lookup = runs_lookup,
	.list = runs_list,
};

static const struct fent ctx_tab[] = {
	{ "language", FT_CTXLANG, FENT_RW, &lang_ops, 0, HOME_DIR,
	  "python (default), javascript or typescript, until the first "
	  "code" },
	{ "cwd", FT_CTXCWD, FENT_RW, &fam_cwd_ops, 0, HOME_DIR,
	  "the interpreter's cwd (default: the session's), until the first "
	  "code" },
	{ "timeout", FT_CTXTIMEOUT, FENT_RW, &timeout_ops, 0, HOME_DIR,
	  "ms per execution (default: the session's timeout)" },
	{ "env", FT_CTXENV, FENT_DIR, &env_ops, 0, HOME_DIR,
	  "its variables (default: the session's), until the first code" },
	FAM_CTX_EXEC_ROWS,
	{ "ctl", FT_CTXCTL, FENT_WO, &ctl_ops, 0, HOME_DIR,
	  "write interrupt, restart or kill" },
	{ "runs", FT_CTXRUNS, FENT_DIR, &runs_ops, 0, HOME_DIR,
	  "every execution" },
	{ 0 },
};

static const struct fops ctx_ops = { .tab = ctx_tab };

static fuse_ino_t ctxs_lookup(const struct node *dir, const char *name,
			      double *ttl)
{
	struct ctx *c = ctx_find(dir->s, name);

	*ttl = 0;
	return c ? tree_ino(c->id, FT_CTX) : 0;
}

static void ctxs_list(struct dirbuf *d, const struct node *dir)
{
	for (struct list *l = dir->s->ctxs.next; l != &dir->s->ctxs;
	     l = l->next) {
		struct ctx *c = list_entry(l, struct ctx, link);

		fam_dir_add(d, c->name, tree_ino(c->id, FT_CTX), S_IFDIR);
	}
}

static int ctxs_mkdir(fuse_req_t req, const struct node *dir, const char *name,
		      fuse_ino_t *ino, double *ttl)
{
	struct ctx *c = NULL;
	int rc = ctx_new(dir->s, name, &c);

	(void)req;
	*ttl = 0;
	if (rc == 0)
		*ino = tree_ino(c->id, FT_CTX);
	return rc;
}

static void rmdir_done(void *arg)
{
	fuse_reply_err((fuse_req_t)arg, 0);
}

static int ctxs_rmdir(fuse_req_t req, const struct node *dir, const char *name)
{
	struct ctx *c = ctx_find(dir->s, name);
	int rc = c ? ctx_remove(c, rmdir_done, req) : -ENOENT;

	return rc < 0 ? rc : FOPS_LATER;
}

static const struct fent ctxs_dyn[] = {
	{ "", FT_CTX, FENT_DIR, &ctx_ops, 0, HOME_CTX,
	  "a context: mkdir makes it, rmdir ends it" },
	{ 0 },
};

const struct fops fam_ctxs_ops = {
	.dyn = ctxs_dyn,
	.lookup = ctxs_lookup,
	.list = ctxs_list,
	.mkdir = ctxs_mkdir,
	.rmdir = ctxs_rmdir,
};
