/*
 * fhstate.c - the open files of the tree across an upgrade in place: each
 * is saved with what it has read and written so far, and made again
 * with its old id, which the kernel gives back as fi->fh. Its spool
 * descriptors are not kept (they are opened again at the next read) nor
 * its poll watch (every waiting poll is woken first, and polls again).
 */
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "sessions/core/state.h"

enum {
	K_ID = 1,
	K_FT,
	K_SID,
	K_CID,
	K_RUN,
	K_VAR,
	K_BEFORE_VAL,
	K_BEFORE_SET,
	K_CURSOR,
	K_TEXT,
	K_W,
	K_BITS, /* dirty, started, created, trunc */
	K_WERR,
	K_CTL_LINES,
	K_FLAGS,
	K_OPENER,
	K_UID,
	K_GID,
	K_PRIV, /* an object: the family's (priv_save) */
};

enum { FH_OBJ = 1 };

static unsigned bits(const struct fh *fh)
{
	return (unsigned)fh->dirty | (unsigned)fh->started << 1 |
	       (unsigned)fh->created << 2 | (unsigned)fh->trunc << 3;
}

static void save_fh(const struct fh *fh, struct state_w *w)
{
	state_open(w, FH_OBJ);
	state_put_u64(w, K_ID, fh->id);
	state_put_u64(w, K_FT, (uint64_t)fh->fe->ft);
	state_put_u64(w, K_SID, fh->sid);
	state_put_u64(w, K_CID, fh->cid);
	if (fh->r)
		state_put_u64(w, K_RUN, fh->r->id);
	state_put_str(w, K_VAR, fh->var);
	if (fh->before.val)
		state_put(w, K_BEFORE_VAL, fh->before.val, fh->before.len);
	state_put_u64(w, K_BEFORE_SET, fh->before.set);
	state_put_u64(w, K_CURSOR, fh->cursor);
	if (fh->text)
		state_put(w, K_TEXT, fh->text, fh->tlen);
	state_put(w, K_W, fh->w.p, fh->w.len);
	state_put_u64(w, K_BITS, bits(fh));
	state_put_i64(w, K_WERR, fh->werr);
	state_put_u64(w, K_CTL_LINES, fh->ctl_lines);
	state_put_i64(w, K_FLAGS, fh->flags);
	state_put_i64(w, K_OPENER, fh->opener);
	state_put_u64(w, K_UID, fh->uid);
	state_put_u64(w, K_GID, fh->gid);
	if (fh->priv && fh->priv_save) {
		state_open(w, K_PRIV);
		fh->priv_save(fh->priv, w);
		state_close(w);
	}
	state_close(w);
}

void fh_save_all(struct state_w *w, uint16_t key)
{
	state_open(w, key);
	for (struct fh *fh = fh_next(NULL); fh; fh = fh_next(fh))
		save_fh(fh, w);
	state_close(w);
}

/* A malloc'd copy of field key of o (NUL-terminated), or NULL. */
static char *bytes(const struct state_r *o, uint16_t key, size_t *len)
{
	const void *p;
	char *c;

	if (!state_get(o, key, &p, len))
		return NULL;
	c = malloc(*len + 1);
	if (c) {
		memcpy(c, p, *len);
		c[*len] = '\0';
	}
	return c;
}

static void restore_fields(struct fh *fh, const struct state_r *o)
{
	uint64_t rid = state_get_u64(o, K_RUN, 0);
	unsigned b = (unsigned)state_get_u64(o, K_BITS, 0);
	const void *p;
	size_t len;

	fh->sid = state_get_u64(o, K_SID, 0);
	fh->cid = state_get_u64(o, K_CID, 0);
	fh->var = state_get_str(o, K_VAR);
	fh->before.val = bytes(o, K_BEFORE_VAL, &fh->before.len);
	fh->before.set = state_get_u64(o, K_BEFORE_SET, 0) != 0;
	fh->cursor = state_get_u64(o, K_CURSOR, 0);
	fh->text = bytes(o, K_TEXT, &fh->tlen);
	if (state_get(o, K_W, &p, &len))
		sb_add(&fh->w, p, len);
	fh->dirty = b & 1;
	fh->started = b >> 1 & 1;
	fh->created = b >> 2 & 1;
	fh->trunc = b >> 3 & 1;
	fh->werr = (int)state_get_i64(o, K_WERR, 0);
	fh->ctl_lines = (unsigned)state_get_u64(o, K_CTL_LINES, 0);
	fh->flags = (int)state_get_i64(o, K_FLAGS, 0);
	fh->opener = (pid_t)state_get_i64(o, K_OPENER, 0);
	fh->uid = (uid_t)state_get_u64(o, K_UID, 0);
	fh->gid = (gid_t)state_get_u64(o, K_GID, 0);
	if (rid)
		fh_set_run(fh, objs_get(rid, OBJ_RUN));
}

/* An open file of o, or false when its row is gone or its family could
 * not make its state again (its next request fails with EIO). */
static bool restore_fh(const struct state_r *o)
{
	const struct fent *fe =
		tree_fent((ft_t)state_get_u64(o, K_FT, FT_NONE));
	struct state_r priv;
	struct fh *fh;

	if (!fe || !(fh = calloc(1, sizeof(*fh))))
		return false;
	objs_reuse(state_get_u64(o, K_ID, 0));
	fh->id = objs_add(OBJ_FH, fh);
	fh->fe = fe;
	fh->fd = fh->fd_out = fh->fd_err = -1;
	fh_track(fh);
	restore_fields(fh, o);
	if (fe->ops && fe->ops->priv_restore && state_obj(o, K_PRIV, &priv) &&
	    fe->ops->priv_restore(fh, &priv) < 0) {
		fh_free(fh);
		return false;
	}
	return true;
}

unsigned fh_restore_all(const struct state_r *o, uint16_t key)
{
	struct state_r all, one;
	unsigned lost = 0;
	size_t pos = 0;
	uint16_t k;

	if (!state_obj(o, key, &all))
		return 0;
	while (state_next(&all, &pos, &k, &one) == 1)
		lost += k == FH_OBJ && !restore_fh(&one);
	return lost;
}

void fh_wake_polls(void)
{
	for (struct fh *fh = fh_next(NULL); fh; fh = fh_next(fh))
		if (fh->ph) {
			fuse_lowlevel_notify_poll(fh->ph);
			fh_unwatch(fh);
		}
}
