/*
 * fam_watch.c - watches/: mkdir makes a watch of the workspace owned by
 * its maker, rmdir ends it; in it spec (written before the first read of
 * events: EBUSY after), events (JSON lines, read at any offset, a read
 * at the end waiting for more) and error (why the latest spec was
 * refused). Another user's watches are neither listed nor opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/log.h"
#include "sessions/core/state.h"
#include "fam.h"
#include "fam_watch.h"
#include "files_watch.h"
#include "watch.h"

#define SPEC_MAX (64u << 10) /* bytes written to spec in one open */

static struct watch *watch_of(const struct node *n)
{
	return (struct watch *)n->own;
}

/* The watch an open file of it reads (NULL: ended, or lost in an
 * upgrade). */
static struct watch *fh_watch(const struct fh *fh)
{
	return fh->priv ? watch_get(*(const uint64_t *)fh->priv) : NULL;
}

#define K_WID 1 /* the watch's id, in an open file's priv object */

static void id_save(const void *priv, struct state_w *w)
{
	state_put_u64(w, K_WID, *(const uint64_t *)priv);
}

/* An open file of a watch holds its id (the watch may end first). */
static int hold_id(struct fh *fh, uint64_t wid)
{
	uint64_t *id = malloc(sizeof(*id));

	if (!id)
		return -ENOMEM;
	*id = wid;
	fh->priv = id;
	fh->priv_free = free;
	fh->priv_save = id_save;
	return 0;
}

static int keep_watch(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	(void)fi;
	return hold_id(fh, watch_of(n)->id);
}

/* An upgrade in place: the id again (its watch is restored with it). */
static int id_restore(struct fh *fh, const struct state_r *o)
{
	return hold_id(fh, state_get_u64(o, K_WID, 0));
}

static char *spec_text(const struct node *n, size_t *len)
{
	return wspec_text(&watch_of(n)->spec, len);
}

/* Applies what was written up to its last newline (all of it when
 * all): the lines of one open make the spec, each write checked. */
static int spec_apply(struct fh *fh, bool all)
{
	struct watch *w = fh_watch(fh);
	size_t len = fh->w.len;
	int rc;

	while (!all && len && fh->w.p[len - 1] != '\n')
		len--;
	if (!w)
		return -ENOENT;
	if (!len && !all)
		return 0;
	rc = watch_set_spec(w, fh->w.p ? fh->w.p : "", len);
	fh->dirty = rc == 0 && len < fh->w.len;
	if (rc < 0)
		fh->werr = -rc;
	return rc;
}

static int spec_write(fuse_req_t req, struct fh *fh, struct node *n,
		      const char *buf, size_t size, off_t off)
{
	(void)req;
	(void)off;
	if (watch_of(n)->started)
		return -EBUSY;
	if (fh->w.len + size > SPEC_MAX) {
		log_msg(LOG_WARNING, "watches/%s/spec: over %u bytes",
			watch_of(n)->name, SPEC_MAX);
		return -EFBIG;
	}
	sb_add(&fh->w, buf, size);
	if (fh->w.err)
		return fh->w.err;
	fh->dirty = true;
	return spec_apply(fh, false);
}

static int spec_flush(fuse_req_t req, struct fh *fh)
{
	(void)req;
	if (fh->werr)
		return -fh->werr;
	return fh->dirty ? spec_apply(fh, true) : 0;
}

static int spec_truncate(const struct node *n, struct fh *fh, off_t size)
{
	(void)fh;
	(void)size;
	return watch_of(n)->started ? -EBUSY : 0;
}

static const struct fops spec_ops = { .text = spec_text,
				      .open = keep_watch,
				      .write = spec_write,
				      .flush = spec_flush,
				      .truncate = spec_truncate,
				      .priv_restore = id_restore };

static off_t events_size(const struct node *n)
{
	return (off_t)watch_of(n)->size;
}

static bool try_events(struct park *p)
{
	struct fh *fh = p->fh;
	struct watch *w = fh_watch(fh);
	uint64_t off = (uint64_t)p->off;

	if (w && w->size > off) {
		size_t n = w->size - off < p->size ? w->size - off : p->size;

		fam_reply_fd(p->req, w->fd, n, off);
		fh->cursor = off + n;
		return true;
	}
	if (w)
		return false;
	fh->cursor = off;
	fuse_reply_buf(p->req, NULL, 0); /* ended: the end of the file */
	return true;
}

static struct list *events_waiters(struct fh *fh)
{
	return &fh_watch(fh)->waiters;
}

static void events_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct watch *w = fh_watch(fh);

	if (w)
		w->started = true;
	fam_read_or_park(req, fh, events_waiters, size, off, try_events);
}

/* poll knows no offset: the end of the latest read stands for it. */
static bool events_readable(const struct fh *fh)
{
	struct watch *w = fh_watch(fh);

	return !w || w->size > fh->cursor;
}

static const struct fops events_ops = { .size = events_size,
					.open = keep_watch,
					.read = events_read,
					.readable = events_readable,
					.waiters = events_waiters,
					.priv_restore = id_restore };

static char *error_text(const struct node *n, size_t *len)
{
	const char *e = watch_of(n)->error;

	*len = e ? strlen(e) : 0;
	return strdup(e ? e : "");
}

static const struct fops error_ops = { .text = error_text };

static const struct fent watch_tab[] = {
	{ "spec", FT_WSPEC, FENT_RW, &spec_ops, 0, HOME_DIR,
	  "write path P, recursive 0|1, include GLOB, exclude GLOB, events "
	  "KIND... (before the first read of events)" },
	{ "events", FT_WEVENTS, FENT_RO, &events_ops, 0, HOME_DIR,
	  "JSON lines of the changes, read at any offset; a read at the end "
	  "waits" },
	{ "error", FT_WERROR, FENT_RO, &error_ops, 0, HOME_DIR,
	  "why the latest spec was refused" },
	{ 0 },
};

static const struct fops watch_ops = { .tab = watch_tab };

/* Whether uid sees w: its owner and root. */
static bool sees(uid_t uid, const struct watch *w)
{
	return uid == 0 || uid == w->own.uid;
}

static fuse_ino_t watches_lookup(const struct node *dir, const char *name,
				 double *ttl)
{
	struct watch *w = watch_find(name);

	(void)dir;
	*ttl = 0;
	return w ? tree_ino(w->id, FT_WATCH) : 0;
}

static void watches_list(struct dirbuf *d, const struct node *dir)
{
	uid_t uid = fuse_req_ctx(d->req)->uid;

	(void)dir;
	for (struct watch *w = watch_first(); w; w = watch_next(w))
		if (sees(uid, w))
			fam_dir_add(d, w->name, tree_ino(w->id, FT_WATCH),
				    S_IFDIR);
}

static int watches_mkdir(fuse_req_t req, const struct node *dir,
			 const char *name, fuse_ino_t *ino, double *ttl)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	gid_t groups[FNODE_GROUPS];
	int n = fuse_req_getgroups(req, FNODE_GROUPS, groups);
	struct watch *w = NULL;
	int rc = fwatch_fd() >= 0 ? 0 : -EOPNOTSUPP;

	(void)dir;
	if (rc == 0)
		rc = watch_new(name, c->uid, c->gid, groups, n, &w);
	if (rc < 0) {
		log_msg(LOG_WARNING, "mkdir watches/%.80s: %s%s", name,
			strerror(-rc),
			rc == -EOPNOTSUPP ? " (files/ has no fanotify group)" :
					    "");
		return rc;
	}
	*ino = tree_ino(w->id, FT_WATCH);
	*ttl = 0;
	return 0;
}

static int watches_rmdir(fuse_req_t req, const struct node *dir,
			 const char *name)
{
	struct watch *w = watch_find(name);

	(void)dir;
	if (!w)
		return -ENOENT;
	if (!sees(fuse_req_ctx(req)->uid, w))
		return -EACCES;
	watch_del(w);
	return 0;
}

static const struct fent watches_dyn[] = {
	{ "", FT_WATCH, FENT_DIR, &watch_ops, 0, HOME_WATCH,
	  "a watch of the workspace: mkdir makes it (its maker's), rmdir "
	  "ends it" },
	{ 0 },
};

const struct fops fam_watches_ops = {
	.dyn = watches_dyn,
	.lookup = watches_lookup,
	.list = watches_list,
	.mkdir = watches_mkdir,
	.rmdir = watches_rmdir,
};
