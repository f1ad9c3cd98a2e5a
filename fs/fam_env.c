/*
 * fam_env.c - what a command runs in: env/ directories (the root's, a
 * session's, a context's: fam_ctx.c has its variables' files) and the
 * cwd file of a session or a context. Reading env/NAME gives the value
 * and a newline, writing sets it to the bytes written less one trailing
 * newline, truncation empties it, unlink unsets it. Values are never
 * evaluated. What the shell could not apply is refused at the write: a
 * variable it has readonly, bash's own variables, a value execve would
 * not take.
 *
 * A session's variables are unknown between the end of a run and the
 * shell's report of them: requests about its env/ are held until then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fam.h"
#include "fam_ctx.h"
#include "fam_env.h"
#include "fam_runopt.h"
#include "sessions/core/log.h"
#include "sessions/session/runopts.h"

/* rc of the session layer as a handler's result */
static int done(int rc)
{
	return rc < 0 ? rc : 0;
}

static bool env_hold(const struct node *n)
{
	if (!n->s || !n->s->env_pending)
		return false;
	sess_hurry_env(n->s);
	return true;
}

static char *var_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	sb_add(&b, n->var->value, n->var->len);
	sb_add(&b, "\n", 1);
	return sb_take(&b, len);
}

/* Variables of bash's own that env/ neither sets nor unsets: readonly in
 * every bash, or changing how the session's shell itself runs (its
 * options, startup files, trace, word splitting, the read of its next
 * command). A command may still set them. */
static const char *const shell_own[] = {
	"BASHOPTS",	   "BASH_COMPAT", "BASH_ENV", "BASH_VERSINFO",
	"BASH_XTRACEFD",   "ENV",	  "EUID",     "IFS",
	"POSIXLY_CORRECT", "PPID",	  "PS4",      "SHELLOPTS",
	"TMOUT",	   "UID",
};

static bool is_shell_own(const char *name)
{
	for (size_t i = 0; i < sizeof(shell_own) / sizeof(*shell_own); i++)
		if (strcmp(shell_own[i], name) == 0)
			return true;
	return false;
}

/* The room the environment may take: half of execve's for arguments and
 * environment together, the other half left to a command's arguments. */
static size_t env_budget(void)
{
	long max = sysconf(_SC_ARG_MAX);

	return (size_t)(max > 0 ? max : ENVMAP_EXEC_STRING_MAX) / 2;
}

/* 0 when the shell of s can take name set to len bytes (unset: its
 * removal), else -EPERM or -E2BIG and a line in s's error file. */
static int sess_takes(struct sess *s, const char *name, size_t len, bool unset)
{
	const struct envvar *v = envmap_get(&s->env, name);
	size_t one = strlen(name) + len + 2, total;

	if (is_shell_own(name)) {
		sess_error(s,
			   "env/%s: bash's own variable, not set or unset "
			   "through env/",
			   name);
		return -EPERM;
	}
	if (v && v->readonly) {
		sess_error(s, "env/%s: readonly in the shell", name);
		return -EPERM;
	}
	if (unset)
		return 0;
	if (one > ENVMAP_EXEC_STRING_MAX) {
		sess_error(s,
			   "env/%s: %s=value is %zu bytes, more than execve "
			   "takes (%d)",
			   name, name, one, ENVMAP_EXEC_STRING_MAX);
		return -E2BIG;
	}
	total = envmap_exec_bytes(&s->env) + one + sizeof(char *) -
		(v ? strlen(name) + v->len + 2 + sizeof(char *) : 0);
	if (total > env_budget()) {
		sess_error(s,
			   "env/%s: the environment would be %zu bytes, more "
			   "than %zu (half of ARG_MAX)",
			   name, total, env_budget());
		return -E2BIG;
	}
	return 0;
}

/* The session's variables and the run's, with name set to len bytes,
 * within the environment's room (as sess_takes counts it). */
static int run_fits(struct sess *s, struct run *r, const char *name, size_t len)
{
	const struct envvar *v = envmap_get(runopts_env(r), name);
	size_t total = envmap_exec_bytes(&s->env) +
		       envmap_exec_bytes(runopts_env(r)) + strlen(name) + len +
		       2 + sizeof(char *) -
		       (v ? strlen(name) + v->len + 2 + sizeof(char *) : 0);

	if (total <= env_budget())
		return 0;
	sess_error(s,
		   "%s/%s/env/%s: the run's environment would be %zu bytes, "
		   "more than %zu (half of ARG_MAX)",
		   FAM_RUN_DIR(r), r->name, name, total, env_budget());
	return -E2BIG;
}

/* The same for a run's own variable (empty: unset for it), which its
 * cmd, once written, no longer takes. */
static int run_takes(struct sess *s, struct run *r, const char *name,
		     size_t len)
{
	int rc = fam_runopt_open(s, r, "env/", name);

	if (rc == 0)
		rc = sess_env_check(s, name, "", 0);
	if (rc == 0)
		rc = sess_takes(s, name, len, len == 0);
	return rc < 0 ? rc : run_fits(s, r, name, len);
}

/* The same for the root env/: every session must take it. */
static int root_takes(const char *name, size_t len, bool unset)
{
	int rc = 0;

	if (is_shell_own(name)) {
		log_msg(LOG_WARNING,
			"env/%s: bash's own variable, not set or "
			"unset through env/",
			name);
		return -EPERM;
	}
	for (struct sess *s = sess_first(); s && rc == 0; s = sess_next(s))
		rc = sess_takes(s, name, len, unset);
	if (rc < 0)
		log_msg(LOG_WARNING, "env/%s: refused: %s", name,
			strerror(-rc));
	return rc;
}

/* Whether fh's variable can take len bytes (or its removal). */
static int var_takes(const struct fh *fh, size_t len, bool unset)
{
	struct sess *s = sess_get(fh->sid);

	if (fh->fe->ft == FT_ROOTENVVAR)
		return root_takes(fh->var, len, unset);
	if (s && fh->fe->ft == FT_RUNVAR)
		return run_takes(s, fh->r, fh->var, unset ? 0 : len);
	return s ? sess_takes(s, fh->var, len, unset) : -ENOENT;
}

/* Sets a run's own variable, its value checked as any written. */
static int run_setenv(struct sess *s, struct run *r, const char *name,
		      const char *val, size_t len)
{
	int rc = sess_env_check(s, name, val, len);

	return rc < 0 ? rc : runopts_setenv(r, name, val, len);
}

/* Sets (val) or unsets (NULL) fh's variable: in its session's env/, or
 * in the root env/ (every session). */
static int var_apply(struct fh *fh, const char *val, size_t len)
{
	struct sess *s = sess_get(fh->sid);

	if (fh->fe->ft == FT_ROOTENVVAR)
		return val ? sess_root_setenv(fh->var, val, len) :
			     sess_root_unsetenv(fh->var);
	if (!s)
		return -ENOENT;
	if (fh->fe->ft == FT_RUNVAR)
		return val ? run_setenv(s, fh->r, fh->var, val, len) :
			     runopts_forget(fh->r, fh->var);
	return val ? sess_setenv(s, fh->var, val, len) :
		     sess_unsetenv(s, fh->var);
}

/* A writer keeps the value it found, to undo its writes if one of them
 * is refused; O_TRUNC empties the value at close unless a write set it. */
static int var_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	int rc;

	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	rc = var_takes(fh, 0, false);
	if (rc < 0)
		return rc;
	fh->before.val = malloc(n->var->len + 1);
	if (!fh->before.val)
		return -ENOMEM;
	memcpy(fh->before.val, n->var->value, n->var->len + 1);
	fh->before.len = n->var->len;
	fh->before.set = true;
	fh->trunc = fi->flags & O_TRUNC;
	return 0;
}

/* A refused write changes nothing: the variable is as before the open
 * (gone, if the open created it), and the open file refuses from now. */
static int var_refuse(struct fh *fh, int rc)
{
	if (fh->created)
		var_apply(fh, NULL, 0);
	else if (fh->before.set)
		var_apply(fh, fh->before.val, fh->before.len);
	fh->trunc = false;
	fh->werr = -rc;
	return rc;
}

static int var_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	int rc = fam_gather(fh, n->s, buf, size);

	(void)off;
	(void)req;
	if (rc == 0)
		rc = var_takes(fh, fam_value_len(&fh->w), false);
	if (rc == 0)
		rc = var_apply(fh, fh->w.p, fam_value_len(&fh->w));
	if (rc < 0)
		return var_refuse(fh, rc);
	fh->trunc = false;
	return 0;
}

static int var_flush(fuse_req_t req, struct fh *fh)
{
	(void)req;
	if (fh->trunc) {
		fh->trunc = false;
		return done(var_apply(fh, "", 0));
	}
	return -fh->werr;
}

/* Only a truncation to 0 changes a value. */
static int var_truncate(const struct node *n, struct fh *fh, off_t size)
{
	int rc;

	(void)fh;
	if (size != 0)
		return 0;
	rc = sess_takes(n->s, n->var->name, 0, false);
	return rc < 0 ? rc : done(sess_setenv(n->s, n->var->name, "", 0));
}

static const struct fops var_ops = {
	.hold = env_hold,
	.text = var_text,
	.open = var_open,
	.write = var_write,
	.flush = var_flush,
	.truncate = var_truncate,
};

/* Whose env/ dir is: a context's, else a session's, else (neither) the
 * root's; its variables, and the file type of their files. */
static bool is_run_env(const struct node *dir)
{
	return dir->ft == FT_RUNENV && dir->r;
}

static const struct envmap *env_map(const struct node *dir)
{
	return is_run_env(dir) ? runopts_env(dir->r) :
	       dir->c	       ? &dir->c->env :
	       dir->s	       ? &dir->s->env :
				 sess_root_env();
}

static ft_t env_var_ft(const struct node *dir)
{
	return is_run_env(dir) ? FT_RUNVAR :
	       dir->c	       ? FT_CTXVAR :
	       dir->s	       ? FT_ENVVAR :
				 FT_ROOTENVVAR;
}

/* Whether the shells of dir's owner take name set empty (or unset); a
 * context's variables are its interpreter's, which takes any. */
static int env_takes(const struct node *dir, const char *name, bool unset)
{
	if (is_run_env(dir))
		return run_takes(dir->s, dir->r, name, 0);
	if (dir->c)
		return 0;
	return dir->s ? sess_takes(dir->s, name, 0, unset) :
			root_takes(name, 0, unset);
}

fuse_ino_t fam_env_lookup(const struct node *dir, const char *name, double *ttl)
{
	struct envvar *v = envmap_get(env_map(dir), name);

	*ttl = 0;
	return v ? tree_ino(v->id, env_var_ft(dir)) : 0;
}

void fam_env_list(struct dirbuf *d, const struct node *dir)
{
	const struct envmap *m = env_map(dir);

	for (size_t i = 0; i < m->n; i++)
		fam_dir_add(d, m->v[i]->name,
			    tree_ino(m->v[i]->id, env_var_ft(dir)), S_IFREG);
}

int fam_env_unlink(const struct node *dir, const char *name)
{
	int rc =
		envmap_get(env_map(dir), name) ? env_takes(dir, name, true) : 0;

	if (rc < 0)
		return rc;
	rc = is_run_env(dir) ? runopts_forget(dir->r, name) :
	     dir->c	     ? ctx_unsetenv(dir->c, name) :
	     dir->s	     ? sess_unsetenv(dir->s, name) :
			       sess_root_unsetenv(name);
	return done(rc);
}

int fam_env_create(const struct node *dir, const char *name, fuse_ino_t *ino)
{
	int rc = env_takes(dir, name, false);

	if (rc == 0)
		rc = is_run_env(dir) ? run_setenv(dir->s, dir->r, name, "", 0) :
		     dir->c	     ? ctx_setenv(dir->c, name, "", 0) :
		     dir->s	     ? sess_setenv(dir->s, name, "", 0) :
				       sess_root_setenv(name, "", 0);
	if (rc < 0)
		return rc;
	*ino = tree_ino(envmap_get(env_map(dir), name)->id, env_var_ft(dir));
	return 0;
}

static const struct fent envdir_dyn[] = {
	{ "", FT_ENVVAR, FENT_RW, &var_ops, 0, HOME_ENVVAR,
	  "a variable: write sets, rm unsets" },
	{ 0 },
};

const struct fops fam_envdir_ops = {
	.dyn = envdir_dyn,
	FAM_ENV_FOPS,
	.hold = env_hold,
};

static int rootvar_truncate(const struct node *n, struct fh *fh, off_t size)
{
	int rc;

	(void)fh;
	if (size != 0)
		return 0;
	rc = root_takes(n->var->name, 0, false);
	return rc < 0 ? rc : done(sess_root_setenv(n->var->name, "", 0));
}

static const struct fops rootvar_ops = {
	.text = var_text,
	.open = var_open,
	.write = var_write,
	.flush = var_flush,
	.truncate = rootvar_truncate,
};

static const struct fent rootenv_dyn[] = {
	{ "", FT_ROOTENVVAR, FENT_RW, &rootvar_ops, 0, HOME_ROOTENV,
	  "a variable: write sets, rm unsets" },
	{ 0 },
};

const struct fops fam_rootenv_ops = { .dyn = rootenv_dyn, FAM_ENV_FOPS };

/* Only a truncation to 0 changes a value: empty, unset for the run. */
static int runvar_truncate(const struct node *n, struct fh *fh, off_t size)
{
	int rc;

	(void)fh;
	if (size != 0)
		return 0;
	rc = run_takes(n->s, n->r, n->var->name, 0);
	return rc < 0 ? rc : done(runopts_setenv(n->r, n->var->name, "", 0));
}

static const struct fops runvar_ops = {
	.hold = env_hold,
	.text = var_text,
	.open = var_open,
	.write = var_write,
	.flush = var_flush,
	.truncate = runvar_truncate,
};

static const struct fent runenv_dyn[] = {
	{ "", FT_RUNVAR, FENT_RW, &runvar_ops, 0, HOME_RUNVAR,
	  "a variable for the run: write sets (empty: unset for it), rm "
	  "forgets it" },
	{ 0 },
};

const struct fops fam_runenv_ops = {
	.dyn = runenv_dyn,
	FAM_ENV_FOPS,
	.hold = env_hold,
};

/* The cwd of a node's owner: its context's, else its session's. */
static char *cwd_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	sb_addf(&b, "%s\n", n->c ? n->c->cwd : n->s->cwd);
	return sb_take(&b, len);
}

static int cwd_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	size_t len;
	char *path;
	int rc = fam_gather(fh, n->s, buf, size);

	(void)off;
	(void)req;
	if (rc < 0)
		return rc;
	len = fam_value_len(&fh->w);
	if (memchr(fh->w.p, '\0', len) || len == 0) {
		sess_error(n->s, "%s%s%scwd: not a path",
			   n->c ? "contexts/" : "", n->c ? n->c->name : "",
			   n->c ? "/" : "");
		return -EINVAL;
	}
	path = strndup(fh->w.p, len);
	rc = !path ? -ENOMEM :
	     n->c  ? ctx_set_cwd(n->c, path) :
		     sess_chdir(n->s, path);
	free(path);
	return rc;
}

const struct fops fam_cwd_ops = { .text = cwd_text, .write = cwd_write };
