/*
 * tree.c - the index of the rows by file type, and inode resolution.
 *
 * A file type may have rows in several tables (runs/N/stdout,
 * procs/N/stdout and the session's stdout are one type): they must be
 * the same row, and the type records every kind of object (home) whose
 * directory holds it, which is what an inode's id may name.
 */
#include <errno.h>
#include <string.h>
#include "tree.h"
#include "sessions/core/log.h"

static struct {
	const struct fent *fe;
	unsigned homes; /* bit per enum tree_home */
} idx[FT_MAX];

#define BIT(h) (1u << (h))

static bool same_row(const struct fent *a, const struct fent *b)
{
	return !strcmp(a->name, b->name) && a->mode == b->mode &&
	       a->ops == b->ops && a->flags == b->flags && a->home == b->home;
}

static int add_tab(const struct fent *tab, enum tree_home home);

/* A row's name in the log ("" is the entries a lookup finds). */
static const char *row_name(const struct fent *fe)
{
	return *fe->name ? fe->name : fe->home == HOME_TOP ? "/" : "*";
}

/* A row is refused with a line in the log, and the start aborts (a
 * build whose families disagree would serve one file as another). */
static int add(const struct fent *fe, enum tree_home home)
{
	const struct fent *had = fe->ft < FT_MAX ? idx[fe->ft].fe : NULL;
	int rc;

	if (fe->ft <= FT_NONE || fe->ft >= FT_MAX) {
		log_msg(LOG_ERR, "tree: the row %s has the type %u, not 1-%d",
			row_name(fe), fe->ft, FT_MAX - 1);
		return -EINVAL;
	}
	if (had && !same_row(had, fe)) {
		log_msg(LOG_ERR,
			"tree: the rows %s and %s have one type, %u: a family "
			"took another's number (fs/tree.h)",
			row_name(had), row_name(fe), fe->ft);
		return -EINVAL;
	}
	if (fe->ops && !fe->ops->readable != !fe->ops->waiters) {
		log_msg(LOG_ERR,
			"tree: the row %s has one of readable and "
			"waiters: a poll needs both",
			row_name(fe));
		return -EINVAL;
	}
	if (fe->home != HOME_DIR)
		home = fe->home;
	if (idx[fe->ft].homes & BIT(home))
		return 0; /* walked from this kind of object already */
	idx[fe->ft].fe = fe;
	idx[fe->ft].homes |= BIT(home);
	if (!fe->ops)
		return 0;
	rc = add_tab(fe->ops->tab, home);
	return rc < 0 ? rc : add_tab(fe->ops->dyn, home);
}

static int add_tab(const struct fent *tab, enum tree_home home)
{
	int rc = 0;

	for (; tab && tab->name && rc == 0; tab++)
		rc = add(tab, home);
	return rc;
}

int tree_init(const struct fent *root)
{
	memset(idx, 0, sizeof(idx));
	return add(root, HOME_TOP);
}

const struct fent *tree_fent(ft_t ft)
{
	return ft > FT_NONE && ft < FT_MAX ? idx[ft].fe : NULL;
}

const struct fent *tree_table(ft_t dir, size_t *n)
{
	const struct fent *fe = tree_fent(dir);
	const struct fent *tab = fe && fe->ops ? fe->ops->tab : NULL;

	*n = 0;
	while (tab && tab[*n].name)
		(*n)++;
	return tab;
}

bool tree_is_run_file(ft_t ft)
{
	const struct fent *fe = tree_fent(ft);

	return fe && (fe->flags & FENT_RUN);
}

/* Resolves a file of a session dir, runs/N or procs/N. */
static int resolve_in_run(struct node *n, unsigned homes)
{
	enum obj_kind k = objs_kind(n->id);
	struct run *r;

	if (k == OBJ_SESS && (homes & BIT(HOME_SESS))) {
		n->s = sess_get(n->id);
		n->r = tree_is_run_file(n->ft) ? sess_latest(n->s) : NULL;
		return 0;
	}
	if (k == OBJ_CTX && (homes & BIT(HOME_CTX))) {
		n->c = objs_get(n->id, OBJ_CTX);
		n->s = n->c->sess;
		n->r = tree_is_run_file(n->ft) ? ctx_latest(n->c) : NULL;
		return 0;
	}
	if (k != OBJ_RUN)
		return -ENOENT;
	r = objs_get(n->id, OBJ_RUN);
	if (!(homes & BIT(r->ctx     ? HOME_CTXRUN :
			  r->is_proc ? HOME_PROC :
				       HOME_RUN)))
		return -ENOENT;
	n->r = r;
	n->s = r->sess;
	n->c = r->ctx;
	n->run_level = true;
	return n->s ? 0 : -ENOENT;
}

int tree_resolve(fuse_ino_t ino, struct node *n)
{
	unsigned homes;

	*n = (struct node){ .ft = (ft_t)(ino & 0xff), .id = ino >> 8 };
	if (!tree_fent(n->ft))
		return -ENOENT;
	homes = idx[n->ft].homes;
	if (homes & BIT(HOME_TOP))
		return n->id == 0 ? 0 : -ENOENT;
	if (homes & BIT(HOME_ROOTENV)) {
		n->var = objs_get(n->id, OBJ_ROOTENV);
		return n->var ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_ENVVAR)) {
		n->var = objs_get(n->id, OBJ_ENVVAR);
		n->s = n->var ? n->var->owner : NULL;
		return n->var ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_CTXVAR)) {
		n->var = objs_get(n->id, OBJ_CTXVAR);
		n->c = n->var ? n->var->owner : NULL;
		n->s = n->c ? n->c->sess : NULL;
		return n->var ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_RUNVAR)) {
		n->var = objs_get(n->id, OBJ_RUNVAR);
		n->r = n->var ? n->var->owner : NULL;
		n->s = n->r ? n->r->sess : NULL;
		n->run_level = true;
		return n->s ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_CTXRES)) {
		n->res = objs_get(n->id, OBJ_CTXRES);
		n->r = n->res ? n->res->owner : NULL;
		n->c = n->r ? n->r->ctx : NULL;
		n->s = n->r ? n->r->sess : NULL;
		n->run_level = true;
		return n->s && n->c ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_WATCH)) {
		n->own = objs_get(n->id, OBJ_WATCH); /* its first member */
		return n->own ? 0 : -ENOENT;
	}
	if (homes & BIT(HOME_FILE))
		return objs_get(n->id, OBJ_FILE) ? 0 : -ENOENT;
	return resolve_in_run(n, homes);
}
