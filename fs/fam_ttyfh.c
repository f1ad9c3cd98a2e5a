/*
 * fam_ttyfh.c - what an open file of tty/ keeps (struct ttyfh, for
 * expect, quiet and recording.cast): made at its first use, freed with
 * the file, saved by an upgrade in place and made again after it; and
 * recording.cast's row, the one whose reads it serves alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_tty.h"
#include "sessions/core/pattern.h"
#include "sessions/core/state.h"
#include "sessions/session/sess.h"
#include "sessions/tty/tty.h"

enum {
	K_PAT = 1,
	K_MS,
	K_DEADLINE,
	K_SEEN_AFTER,
	K_CAST_NEXT,
	K_CAST_STARTED,
	K_CAST_CARRY,
	K_CAST_CARRY_US,
	K_CAST_TEXT,
	K_CAST_AT,
};

static void ttyfh_free(void *p)
{
	struct ttyfh *x = p;

	if (x && x->has_re)
		regfree(&x->re);
	if (x) {
		cast_reader_free(&x->cast);
		free(x->pat);
	}
	free(x);
}

/* Its fields into the open file's object; the screen's version that the
 * pattern did not match is not kept (the next screen has another). */
static void ttyfh_save(const void *p, struct state_w *w)
{
	const struct ttyfh *x = p;

	if (x->has_re)
		state_put_str(w, K_PAT, x->pat);
	state_put_u64(w, K_MS, x->ms);
	state_put_i64(w, K_DEADLINE, x->deadline);
	state_put_i64(w, K_SEEN_AFTER, x->seen.after_us);
	state_put_u64(w, K_CAST_NEXT, x->cast.next);
	state_put_u64(w, K_CAST_STARTED, x->cast.started);
	state_put(w, K_CAST_CARRY, x->cast.carry.p, x->cast.carry.len);
	state_put_i64(w, K_CAST_CARRY_US, x->cast.carry_us);
	state_put(w, K_CAST_TEXT, x->cast.text.p, x->cast.text.len);
	state_put_u64(w, K_CAST_AT, x->cast.at);
}

struct ttyfh *fam_ttyfh(struct fh *fh)
{
	if (!fh->priv && (fh->priv = calloc(1, sizeof(struct ttyfh)))) {
		fh->priv_free = ttyfh_free;
		fh->priv_save = ttyfh_save;
	}
	return fh->priv;
}

/* The pattern, compiled again: it was checked and compiled at the open
 * (a pattern that does not compile now leaves the file without one:
 * its reads fail with EINVAL). */
static void restore_pattern(struct ttyfh *x, const struct state_r *o)
{
	x->pat = state_get_str(o, K_PAT);
	if (x->pat && pattern_check(x->pat, strlen(x->pat)) == 0 &&
	    regcomp(&x->re, x->pat, REG_EXTENDED | REG_NOSUB) == 0)
		x->has_re = true;
}

int fam_ttyfh_restore(struct fh *fh, const struct state_r *o)
{
	struct ttyfh *x = fam_ttyfh(fh);
	struct cast_reader *c;
	const void *p;
	size_t len;

	if (!x)
		return -ENOMEM;
	c = &x->cast;
	restore_pattern(x, o);
	x->ms = state_get_u64(o, K_MS, TTY_EXPECT_MS);
	x->deadline = state_get_i64(o, K_DEADLINE, 0);
	x->seen.after_us = state_get_i64(o, K_SEEN_AFTER, 0);
	c->next = state_get_u64(o, K_CAST_NEXT, 0);
	c->started = state_get_u64(o, K_CAST_STARTED, 0) != 0;
	if (state_get(o, K_CAST_CARRY, &p, &len))
		sb_add(&c->carry, p, len);
	c->carry_us = state_get_i64(o, K_CAST_CARRY_US, 0);
	if (state_get(o, K_CAST_TEXT, &p, &len))
		sb_add(&c->text, p, len);
	c->at = state_get_u64(o, K_CAST_AT, 0);
	return c->carry.err || c->text.err ? -ENOMEM : 0;
}

/* The recording of the terminal's output as of the open (none: a header
 * alone). */
static int cast_file_open(struct fh *fh, struct node *n,
			  struct fuse_file_info *fi)
{
	const struct tty *t = n->s->tty;

	(void)fi;
	if (!fam_ttyfh(fh))
		return -ENOMEM;
	if (t && t->out)
		fh_set_run(fh, t->out);
	return 0;
}

static void cast_file_read(fuse_req_t req, struct fh *fh, size_t size,
			   off_t off)
{
	static const struct cast none = { .fd = -1, .cols = 80, .rows = 24 };
	struct ttyfh *x = fh->priv;
	const struct sess *s = sess_get(fh->sid);
	const struct tty *t = s ? s->tty : NULL;
	const struct cast *c = t && fh->r && t->out == fh->r ? &t->cast : &none;
	int fd = c == &none || !fh->r->out.size ? -1 :
						  fh_spool(fh, &fh->fd, "out");
	const char *p = NULL;
	ssize_t n = fd < 0 && c != &none && fh->r->out.size ?
			    fd : /* output it cannot read: never empty */
			    cast_read(c, fd, fd < 0 ? 0 : fh->r->out.size,
				      &x->cast, (uint64_t)off, size, &p);

	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, p, (size_t)n);
}

/* stat size 0 (no size nor text): it is made as it is read */
const struct fops fam_ttycast_ops = { .open = cast_file_open,
				      .read = cast_file_read,
				      .priv_restore = fam_ttyfh_restore };
