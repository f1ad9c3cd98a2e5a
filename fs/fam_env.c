/*
 * fam_env.c - env/NAME files: reading gives the value and a newline,
 * writing sets it to the bytes written less one trailing newline,
 * truncation empties it, unlink unsets it. Values are never evaluated.
 *
 * A session's variables are unknown between the end of a run and the
 * shell's report of them: requests about its env/ are held until then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_env.h"

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
	return val ? sess_setenv(s, fh->var, val, len) :
		     sess_unsetenv(s, fh->var);
}

/* A writer keeps the value it found, to undo its writes if one of them
 * is refused; O_TRUNC empties the value at close unless a write set it. */
static int var_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
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
	(void)fh;
	if (size != 0)
		return 0;
	return done(sess_setenv(n->s, n->var->name, "", 0));
}

static const struct fops var_ops = {
	.hold = env_hold,
	.text = var_text,
	.open = var_open,
	.write = var_write,
	.flush = var_flush,
	.truncate = var_truncate,
};

static fuse_ino_t envdir_lookup(const struct node *dir, const char *name,
				double *ttl)
{
	struct envvar *v = envmap_get(&dir->s->env, name);

	*ttl = 0;
	return v ? tree_ino(v->id, FT_ENVVAR) : 0;
}

static void envdir_list(struct dirbuf *d, const struct node *dir)
{
	for (size_t i = 0; i < dir->s->env.n; i++)
		fam_dir_add(d, dir->s->env.v[i]->name,
			    tree_ino(dir->s->env.v[i]->id, FT_ENVVAR), S_IFREG);
}

static int envdir_unlink(const struct node *dir, const char *name)
{
	return done(sess_unsetenv(dir->s, name));
}

static int envdir_create(const struct node *dir, const char *name,
			 fuse_ino_t *ino)
{
	int rc = sess_setenv(dir->s, name, "", 0);

	if (rc < 0)
		return rc;
	*ino = tree_ino(envmap_get(&dir->s->env, name)->id, FT_ENVVAR);
	return 0;
}

static const struct fent envdir_dyn[] = {
	{ "", FT_ENVVAR, FENT_RW, &var_ops, 0, HOME_ENVVAR },
	{ 0 },
};

const struct fops fam_envdir_ops = {
	.dyn = envdir_dyn,
	.lookup = envdir_lookup,
	.list = envdir_list,
	.unlink = envdir_unlink,
	.create = envdir_create,
	.hold = env_hold,
};

static int rootvar_truncate(const struct node *n, struct fh *fh, off_t size)
{
	(void)fh;
	if (size != 0)
		return 0;
	return done(sess_root_setenv(n->var->name, "", 0));
}

static const struct fops rootvar_ops = {
	.text = var_text,
	.open = var_open,
	.write = var_write,
	.flush = var_flush,
	.truncate = rootvar_truncate,
};

static fuse_ino_t rootenv_lookup(const struct node *dir, const char *name,
				 double *ttl)
{
	struct envvar *v = envmap_get(sess_root_env(), name);

	(void)dir;
	*ttl = 0;
	return v ? tree_ino(v->id, FT_ROOTENVVAR) : 0;
}

static void rootenv_list(struct dirbuf *d, const struct node *dir)
{
	const struct envmap *m = sess_root_env();

	(void)dir;
	for (size_t i = 0; i < m->n; i++)
		fam_dir_add(d, m->v[i]->name,
			    tree_ino(m->v[i]->id, FT_ROOTENVVAR), S_IFREG);
}

static int rootenv_unlink(const struct node *dir, const char *name)
{
	(void)dir;
	return done(sess_root_unsetenv(name));
}

static int rootenv_create(const struct node *dir, const char *name,
			  fuse_ino_t *ino)
{
	int rc = sess_root_setenv(name, "", 0);

	(void)dir;
	if (rc < 0)
		return rc;
	*ino = tree_ino(envmap_get(sess_root_env(), name)->id, FT_ROOTENVVAR);
	return 0;
}

static const struct fent rootenv_dyn[] = {
	{ "", FT_ROOTENVVAR, FENT_RW, &rootvar_ops, 0, HOME_ROOTENV },
	{ 0 },
};

const struct fops fam_rootenv_ops = {
	.dyn = rootenv_dyn,
	.lookup = rootenv_lookup,
	.list = rootenv_list,
	.unlink = rootenv_unlink,
	.create = rootenv_create,
};
