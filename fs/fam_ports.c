/*
 * fam_ports.c - `ports` in a session and in procs/NAME: a read lists the
 * sockets their processes listen on (sessions/session/ports.c). A write
 * of "PORT [TIMEOUT_MS]" sets what the next open for reading waits for,
 * as tty/expect's write sets its pattern: that open's reads wait until
 * something of the session (or the process) listens on PORT, then list.
 *
 * The kernel tells nobody of a listen(2), so while a read or poll waits
 * the waiters are looked at again every PORTS_TICK_MS, and never when
 * none waits. A written wait is taken by one open only: a later listing
 * must not wait on a port asked for long ago.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_ports.h"
#include "sessions/core/names.h"
#include "sessions/core/state.h"
#include "sessions/session/errlog.h"
#include "sessions/session/ports.h"
#include "sessions/session/proc.h"

#define PORTS_WAIT_MS 10000    /* a timeout not written: tty/expect's */
#define PORTS_MS_MAX 999999999 /* nine digits, as tty/expect's */

/* What an open file of ports waits for (port 0: nothing, it lists). */
struct portsfh {
	unsigned port;
	uint64_t ms;
	int64_t deadline; /* counted from the first read or poll; 0 before */
};

/* A wait written and not yet taken by an open for reading. */
struct pending {
	struct list link;
	uint64_t sid, rid; /* rid: procs/NAME's process; 0: the session's */
	unsigned port;
	uint64_t ms;
};

static struct list pendings = LIST_INIT(pendings);
static struct list waiters = LIST_INIT(waiters);
static struct loop_timer tick;

enum { K_PORT = 1, K_MS, K_DEADLINE, K_SID, K_RID };
enum { PENDING_OBJ = 1 };

/* The processes fh's file is of, or NULL: its session is gone, or its
 * process has ended. */
static const struct contain *owner_cg(const struct fh *fh)
{
	struct sess *s = sess_get(fh->sid);

	if (!s)
		return NULL;
	if (!fh->r)
		return &s->cg;
	return fh->r->proc && fh->r->state != RUN_DONE ? &fh->r->proc->cg :
							 NULL;
}

/* The sockets of fh's processes now (none once they are gone). */
static int scan(const struct fh *fh, struct ports *l)
{
	const struct contain *c = owner_cg(fh);

	*l = (struct ports){ 0 };
	return c ? ports_of(c, l) : 0;
}

/* Replies with l's lines, kept in fh for the reads after this one. */
static void answer(fuse_req_t req, struct fh *fh, const struct ports *l,
		   size_t size, off_t off)
{
	struct strbuf b = { 0 };
	size_t len = 0;
	char *text;

	ports_format(l, &b);
	text = sb_take(&b, &len);
	if (!text) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	free(fh->text);
	fh->text = text;
	fh->tlen = len;
	fam_reply_text(req, fh->text, fh->tlen, size, off);
}

/* Whether a read of fh need wait no more: its port is listened on (or
 * the scan failed), what it is of is gone, or its time is up. */
static bool done(const struct fh *fh, const struct ports *l, int rc)
{
	const struct portsfh *x = fh->priv;

	return rc < 0 || ports_has(l, x->port) || !owner_cg(fh) ||
	       loop_now_ms() >= x->deadline;
}

static bool try_wait(struct park *p)
{
	struct fh *fh = p->fh;
	const struct portsfh *x = fh->priv;
	struct ports l;
	int rc = scan(fh, &l);

	if (!done(fh, &l, rc)) {
		ports_free(&l);
		return false;
	}
	if (rc < 0)
		fuse_reply_err(p->req, -rc);
	else if (ports_has(&l, x->port))
		answer(p->req, fh, &l, p->size, p->off);
	else
		fuse_reply_err(p->req, owner_cg(fh) ? ETIMEDOUT : ENODATA);
	ports_free(&l);
	return true;
}

/* The looks keep their cadence, the time a look takes included (a busy
 * machine's 2-3 ms would make every wait that much longer), but never
 * come back to back. */
static void on_tick(struct loop_timer *t)
{
	int64_t next = t->when + PORTS_TICK_MS, now;

	ports_batch(true); /* the waiters of one namespace read it once */
	park_wake_list(&waiters);
	ports_batch(false);
	now = loop_now_ms();
	if (next <= now)
		next = now + PORTS_TICK_MS;
	if (!list_empty(&waiters))
		loop_timer_add(&tick, next, on_tick, NULL);
}

/* Where a read or poll that must wait goes: the ticks start with it. */
static struct list *wait_list(struct fh *fh)
{
	(void)fh;
	if (!tick.armed)
		loop_timer_add(&tick, loop_now_ms() + PORTS_TICK_MS, on_tick,
			       NULL);
	return &waiters;
}

/* The timeout starts at the first read or poll (a reader may open the
 * file before it starts the server it waits for). */
static void begin(struct portsfh *x)
{
	if (x->deadline == 0)
		x->deadline = loop_now_ms() + (int64_t)x->ms;
}

/* A read at 0 lists anew (once its port is there, when it waits for
 * one); a read past 0 goes on in what the read at 0 gave. */
static void ports_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct portsfh *x = fh->priv;
	struct ports l;
	int rc;

	if (off > 0 && fh->text) {
		fam_reply_text(req, fh->text, fh->tlen, size, off);
		return;
	}
	if (x && x->port) {
		begin(x);
		fam_read_or_park(req, fh, wait_list, size, off, try_wait);
		return;
	}
	rc = scan(fh, &l);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		answer(req, fh, &l, size, off);
	ports_free(&l);
}

static bool ports_readable(const struct fh *fh)
{
	struct portsfh *x = fh->priv;
	struct ports l;
	bool ready;
	int rc;

	if (!x || !x->port)
		return true;
	begin(x);
	rc = scan(fh, &l);
	ready = done(fh, &l, rc);
	ports_free(&l);
	return ready;
}

/* The pending wait of (sid, rid), or NULL. */
static struct pending *pending_of(uint64_t sid, uint64_t rid)
{
	struct list *i, *n;

	list_for_each_safe (i, n, &pendings) {
		struct pending *q = list_entry(i, struct pending, link);

		if (q->sid == sid && q->rid == rid)
			return q;
	}
	return NULL;
}

/* Drops the waits of sessions and processes that are gone. */
static void prune(void)
{
	struct list *i, *n;

	list_for_each_safe (i, n, &pendings) {
		struct pending *q = list_entry(i, struct pending, link);

		if (!sess_get(q->sid) || (q->rid && !objs_get(q->rid, OBJ_RUN))) {
			list_del(&q->link);
			free(q);
		}
	}
}

static int pend(uint64_t sid, uint64_t rid, unsigned port, uint64_t ms)
{
	struct pending *q;

	prune();
	q = pending_of(sid, rid);
	if (!q && (q = calloc(1, sizeof(*q)))) {
		q->sid = sid;
		q->rid = rid;
		list_add_tail(&pendings, &q->link);
	}
	if (!q)
		return -ENOMEM;
	q->port = port;
	q->ms = ms;
	return 0;
}

/* "PORT [TIMEOUT_MS]", the two apart by blanks. */
static int parse(const char *p, size_t len, unsigned *port, uint64_t *ms)
{
	unsigned long long v, t = PORTS_WAIT_MS;
	size_t i = 0;

	while (i < len && strchr(" \t\n", p[i]))
		i++;
	while (i < len && !strchr(" \t\n", p[i]))
		i++;
	if (name_parse_u64(p, i, &v) < 0 || v == 0 || v > 65535 ||
	    (i < len && name_parse_u64(p + i, len - i, &t) < 0) ||
	    t > PORTS_MS_MAX)
		return -EINVAL;
	*port = (unsigned)v;
	*ms = t;
	return 0;
}

static int ports_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	int rc = fam_gather(fh, n->s, buf, size);
	size_t len = fam_value_len(&fh->w);
	unsigned port = 0;
	uint64_t ms = 0;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	rc = parse(fh->w.p, len, &port, &ms);
	if (rc < 0)
		sess_error(n->s,
			   "%s%s%sports: '%.*s' is not PORT [TIMEOUT_MS] (a "
			   "port 1 to 65535, at most %d ms)",
			   fh->r ? "procs/" : "", fh->r ? fh->r->name : "",
			   fh->r ? "/" : "", (int)(len > 80 ? 80 : len),
			   fh->w.p, PORTS_MS_MAX);
	fh->w.len = 0;
	return rc < 0 ? rc : pend(fh->sid, fh->r ? fh->r->id : 0, port, ms);
}

static void portsfh_save(const void *p, struct state_w *w)
{
	const struct portsfh *x = p;

	state_put_u64(w, K_PORT, x->port);
	state_put_u64(w, K_MS, x->ms);
	state_put_i64(w, K_DEADLINE, x->deadline);
}

static struct portsfh *portsfh(struct fh *fh)
{
	if (!fh->priv && (fh->priv = calloc(1, sizeof(struct portsfh)))) {
		fh->priv_free = free;
		fh->priv_save = portsfh_save;
	}
	return fh->priv;
}

/* An open for reading takes the wait written last, if any. */
static int ports_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	struct portsfh *x = portsfh(fh);
	struct pending *q;

	(void)n;
	if (!x)
		return -ENOMEM;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	q = pending_of(fh->sid, fh->r ? fh->r->id : 0);
	if (q) {
		x->port = q->port;
		x->ms = q->ms;
		list_del(&q->link);
		free(q);
	}
	return 0;
}

static int ports_restore(struct fh *fh, const struct state_r *o)
{
	struct portsfh *x = portsfh(fh);

	if (!x)
		return -ENOMEM;
	x->port = (unsigned)state_get_u64(o, K_PORT, 0);
	x->ms = state_get_u64(o, K_MS, PORTS_WAIT_MS);
	x->deadline = state_get_i64(o, K_DEADLINE, 0);
	return 0;
}

void fam_ports_save(struct state_w *w, uint16_t key)
{
	struct list *i, *n;

	prune();
	state_open(w, key);
	list_for_each_safe (i, n, &pendings) {
		struct pending *q = list_entry(i, struct pending, link);

		state_open(w, PENDING_OBJ);
		state_put_u64(w, K_SID, q->sid);
		state_put_u64(w, K_RID, q->rid);
		state_put_u64(w, K_PORT, q->port);
		state_put_u64(w, K_MS, q->ms);
		state_close(w);
	}
	state_close(w);
}

void fam_ports_restore(const struct state_r *root, uint16_t key)
{
	struct state_r all, one;
	size_t pos = 0;
	uint16_t k;

	if (!state_obj(root, key, &all))
		return;
	while (state_next(&all, &pos, &k, &one) == 1)
		if (k == PENDING_OBJ)
			pend(state_get_u64(&one, K_SID, 0),
			     state_get_u64(&one, K_RID, 0),
			     (unsigned)state_get_u64(&one, K_PORT, 0),
			     state_get_u64(&one, K_MS, PORTS_WAIT_MS));
}

const struct fops fam_ports_ops = { .open = ports_open,
				    .read = ports_read,
				    .write = ports_write,
				    .readable = ports_readable,
				    .waiters = wait_list,
				    .priv_restore = ports_restore };
