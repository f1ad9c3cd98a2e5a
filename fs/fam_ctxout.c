/*
 * fam_ctxout.c - the files of a context's execution, in contexts/NAME
 * (the newest one) and in runs/N: code (written, it runs at the close,
 * which returns when it has ended), result, results/N/FORMAT, error,
 * result.json and status. stdout, stderr, output and stream are a run's
 * rows (fs/fam_run.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_ctx.h"
#include "sessions/core/objs.h"

static struct ctx *ctx_of(const struct fh *fh)
{
	return fh->cid ? objs_get(fh->cid, OBJ_CTX) : NULL;
}

static int code_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	if (n->run_level) {
		sess_error(n->s, "contexts/%s/runs/%s/code: it ran already",
			   n->c->name, n->r->name);
		return -EBUSY;
	}
	fh_set_run(fh, NULL); /* a writer makes an execution of its own */
	return 0;
}

static bool try_flush(struct park *p)
{
	struct fh *fh = p->fh;

	if (run_active(fh->r))
		return false;
	fuse_reply_err(p->req, fh->r->start_err		  ? fh->r->start_err :
			       fh->r->end == END_CANCELED ? ECANCELED :
							    0);
	return true;
}

static void flush_interrupted(struct park *p)
{
	struct fh *fh = p->fh;
	struct ctx *c = ctx_of(fh);

	if (c && fh->r->ctx == c)
		ctx_interrupt_exec(c, fh->r);
}

static int code_start(struct fh *fh)
{
	struct ctx *c = ctx_of(fh);
	struct run *r;
	int rc;

	if (!c)
		return -ENOENT;
	r = ctx_submit(c, fh->w.p, fh->w.len, &rc);
	fh->w.len = 0;
	if (!r) {
		sess_error(c->sess, "contexts/%s: cannot queue the code: %s",
			   c->name, strerror(-rc));
		return rc;
	}
	fh_set_run(fh, r);
	return 0;
}

/* As a run's cmd: the opener's close queues the execution and returns
 * once it has ended. */
static int code_flush(fuse_req_t req, struct fh *fh)
{
	return fam_cmd_flush(req, fh, code_start, try_flush, flush_interrupted);
}

static void code_release(struct fh *fh)
{
	if (fam_cmd_starts(NULL, fh))
		code_start(fh);
}

const struct fops fam_code_ops = {
	FAM_CMD_FOPS,
	.open = code_open,
	.flush = code_flush,
	.release = code_release,
};

/* An execution's record: empty before the first one. */
static const struct ctx_exec none;

static const struct ctx_exec *exec_of(const struct node *n)
{
	return n->r && n->r->cx ? n->r->cx : &none;
}

static char *result_text(const struct node *n, size_t *len)
{
	const struct ctx_result *m = ctx_exec_main(exec_of(n));
	struct strbuf b = { 0 };

	sb_add(&b, "", 0);
	if (m && m->fmt[0].has && m->fmt[0].len) {
		sb_add(&b, m->fmt[0].p, m->fmt[0].len);
		sb_add(&b, "\n", 1);
	}
	return sb_take(&b, len);
}

const struct fops fam_ctxresult_ops = { .text = result_text };

/* The context's error: its newest execution's, else why it is dead. */
static char *error_text(const struct node *n, size_t *len)
{
	struct ctx_exec dead = { 0 };
	char *text;

	if (n->run_level || !n->c || n->c->state != CTX_DEAD ||
	    exec_of(n)->has_error)
		return ctx_exec_error_json(exec_of(n), len);
	ctx_exec_fail(&dead, "ContextDead",
		      n->c->why ? n->c->why : "the interpreter is gone");
	text = ctx_exec_error_json(&dead, len);
	ctx_exec_free(&dead, NULL);
	return text;
}

const struct fops fam_ctxerror_ops = { .text = error_text };

/* result.json: the readers of an execution share one copy of it (a
 * 40 MiB png is 53 MiB of base64), taken at the read at 0. */
static off_t json_size(const struct node *n)
{
	struct ctx_json *j;
	size_t len = 0;

	if (!n->r || !n->r->cx) {
		free(ctx_exec_json(&none, "", 0, "", 0, &len));
		return (off_t)len;
	}
	j = ctx_json_get(n->r);
	len = j ? j->len : 0;
	ctx_json_put(j);
	return (off_t)len;
}

/* An upgrade in place: a reader's copy stays the same bytes. */
static void json_save(const void *priv, struct state_w *w)
{
	ctx_json_save(priv, w);
}

static int json_restore(struct fh *fh, const struct state_r *o)
{
	fh->priv = fh->r && fh->r->cx ? ctx_json_restore(fh->r, o) : NULL;
	fh->priv_free = ctx_json_put;
	fh->priv_save = json_save;
	return 0;
}

static void json_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct ctx_json *j = fh->priv;
	size_t len = 0;

	if (!fh->r || !fh->r->cx) { /* before the first execution */
		if (off == 0 || !fh->text) {
			free(fh->text);
			fh->text = ctx_exec_json(&none, "", 0, "", 0, &len);
			fh->tlen = fh->text ? len : 0;
		}
		fam_reply_text(req, fh->text, fh->tlen, size, off);
		return;
	}
	if (off == 0 || !j) {
		ctx_json_put(j);
		fh->priv = j = ctx_json_get(fh->r);
		fh->priv_free = ctx_json_put;
		fh->priv_save = json_save;
	}
	if (j)
		fam_reply_text(req, j->p, j->len, size, off);
	else
		fuse_reply_err(req, ENOMEM);
}

const struct fops fam_ctxjson_ops = { .size = json_size,
				       .read = json_read,
				       .priv_restore = json_restore };

static char *status_text(const struct node *n, size_t *len)
{
	return ctx_format_status(n->c, n->run_level ? n->r : NULL, len);
}

const struct fops fam_ctxstatus_ops = { .text = status_text };

/* results/N/FORMAT: the bytes of that format. */
static int fmt_of(const struct node *n)
{
	return (int)n->ft - FT_CTXFMT;
}

static off_t fmt_size(const struct node *n)
{
	return (off_t)n->res->fmt[fmt_of(n)].len;
}

static char *fmt_text(const struct node *n, size_t *len)
{
	const struct ctx_result *res = n->res;
	char *p = malloc(res->fmt[fmt_of(n)].len + 1);

	if (!p)
		return NULL;
	if (res->fmt[fmt_of(n)].len) /* shed (CTX_KEEP_MAX): empty */
		memcpy(p, res->fmt[fmt_of(n)].p, res->fmt[fmt_of(n)].len);
	*len = res->fmt[fmt_of(n)].len;
	return p;
}

static const struct fops fmt_ops = { .size = fmt_size, .text = fmt_text };

static char *main_text(const struct node *n, size_t *len)
{
	(void)n;
	*len = 0;
	return strdup("");
}

static const struct fops main_ops = { .text = main_text };

#define FMT_ROW_DOC(i, name, doc)                                              \
	{                                                                      \
		name, FT_CTXFMT + (i), FENT_RO, &fmt_ops, 0, HOME_DIR, doc     \
	}
#define FMT_ROW(i, name) FMT_ROW_DOC(i, name, "its formats, one file each")

static const struct fent res_dyn[] = {
	FMT_ROW(0, "text"),
	FMT_ROW(1, "html"),
	FMT_ROW(2, "markdown"),
	FMT_ROW(3, "svg"),
	FMT_ROW(4, "png"),
	FMT_ROW(5, "jpeg"),
	FMT_ROW(6, "pdf"),
	FMT_ROW(7, "latex"),
	FMT_ROW(8, "json"),
	FMT_ROW(9, "javascript"),
	FMT_ROW_DOC(10, "chart.json",
		    "a matplotlib figure's data (type, title, axes, series)"),
	{ "main", FT_CTXMAIN, FENT_RO, &main_ops, 0, HOME_DIR,
	  "the value's own format" },
	{ 0 },
};

_Static_assert(sizeof(res_dyn) / sizeof(res_dyn[0]) == CTX_NFMT + 2,
	       "a row per format, then main");

/* The index of the format whose file is name (res_dyn's rows name the
 * files: chart's is chart.json), or -1. */
static int fmt_file_index(const char *name)
{
	for (int i = 0; i < CTX_NFMT; i++)
		if (strcmp(res_dyn[i].name, name) == 0)
			return i;
	return -1;
}

static fuse_ino_t res_lookup(const struct node *dir, const char *name,
			     double *ttl)
{
	int i = fmt_file_index(name);

	*ttl = FAM_ENTRY_TTL; /* a result never changes */
	if (strcmp(name, "main") == 0)
		return dir->res->main ? tree_ino(dir->res->id, FT_CTXMAIN) : 0;
	return i >= 0 && dir->res->fmt[i].has ?
		       tree_ino(dir->res->id, (ft_t)(FT_CTXFMT + i)) :
		       0;
}

static void res_list(struct dirbuf *d, const struct node *dir)
{
	for (int i = 0; i < CTX_NFMT; i++)
		if (dir->res->fmt[i].has)
			fam_dir_add(
				d, res_dyn[i].name,
				tree_ino(dir->res->id, (ft_t)(FT_CTXFMT + i)),
				S_IFREG);
	if (dir->res->main)
		fam_dir_add(d, "main", tree_ino(dir->res->id, FT_CTXMAIN),
			    S_IFREG);
}

static const struct fops res_ops = { .dyn = res_dyn,
				     .lookup = res_lookup,
				     .list = res_list };

static fuse_ino_t results_lookup(const struct node *dir, const char *name,
				 double *ttl)
{
	const struct ctx_exec *e = exec_of(dir);
	unsigned long long no;

	*ttl = 0;
	if (name_parse_u64(name, strlen(name), &no) < 0 || no == 0 ||
	    no > e->nres)
		return 0;
	return tree_ino(e->res[no - 1]->id, FT_CTXRES);
}

static void results_list(struct dirbuf *d, const struct node *dir)
{
	const struct ctx_exec *e = exec_of(dir);
	char name[24];

	for (size_t i = 0; i < e->nres; i++) {
		snprintf(name, sizeof(name), "%zu", i + 1);
		fam_dir_add(d, name, tree_ino(e->res[i]->id, FT_CTXRES),
			    S_IFDIR);
	}
}

static const struct fent results_dyn[] = {
	{ "", FT_CTXRES, FENT_DIR, &res_ops, 0, HOME_CTXRES, "one output" },
	{ 0 },
};

const struct fops fam_ctxresults_ops = {
	.dyn = results_dyn,
	.lookup = results_lookup,
	.list = results_list,
};
