/*
 * ops.c - the FUSE low-level operations of the tree: each resolves its
 * inode, finds the row of its file type (fs/tree.c) and calls that row's
 * handler (fs/fam_*.c), with the defaults and the checks every file
 * shares: attributes, fixed directory entries, access modes, generated
 * text, poll watches and requests held for a session's variables.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fam.h"
#include "fam_root.h"
#include "ops.h"
#include "park.h"
#include "upgrade.h"
#include "sessions/core/log.h"

static const struct fops no_ops;

/* The handlers of n's row (every resolved node has a row). */
static const struct fops *ops_of(ft_t ft)
{
	const struct fent *fe = tree_fent(ft);

	return fe && fe->ops ? fe->ops : &no_ops;
}

/* Whether the caller of req may act on n. A session and everything in
 * it are its owner's (and root's, who could take them anyway); the
 * kernel checks the modes too (default_permissions), but it keeps a
 * dentry's verdict, so every request is checked here as well. */
static bool allowed(fuse_req_t req, const struct node *n)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	if (n->own)
		return uid == 0 || uid == n->own->uid;
	return !n->s || uid == 0 || uid == n->s->uid;
}

/* Resolves ino into *n; answers ENOENT and returns false when it names
 * nothing any more, EACCES when it is in another user's session (but a
 * session directory's attributes, asked with attr, are anybody's: ls -l
 * of sessions/ shows the owners). */
static bool resolve_for(fuse_req_t req, fuse_ino_t ino, struct node *n,
			bool attr)
{
	int err = tree_resolve(ino, n) == 0 ? 0 : ENOENT;

	if (!err && !allowed(req, n) &&
	    !(attr && tree_fent(n->ft)->home == HOME_SESS))
		err = EACCES;
	if (!err)
		return true;
	fuse_reply_err(req, err);
	return false;
}

static bool resolve(fuse_req_t req, fuse_ino_t ino, struct node *n)
{
	return resolve_for(req, ino, n, false);
}

/* Changes outside the sessions (root env/ and ctl) are the mounter's and
 * root's, but where a row lets anybody (sessions/: its family checks). */
static bool may_change(fuse_req_t req, const struct node *n)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	if (n->s || n->own || uid == 0 || uid == getuid() ||
	    (tree_fent(n->ft)->flags & FENT_ANYONE))
		return true;
	fuse_reply_err(req, EACCES);
	return false;
}

static unsigned long dir_answers;

static void fill_attr(fuse_ino_t ino, const struct node *n, struct stat *st)
{
	const struct fent *fe = tree_fent(n->ft);
	const struct fops *o = ops_of(n->ft);
	size_t len = 0;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	/* a session's (a watch's) files are its owner's alone */
	st->st_mode = n->s || n->own ? fe->mode & (S_IFMT | 0700) : fe->mode;
	st->st_nlink = S_ISDIR(fe->mode) ? 2 : 1;
	st->st_uid = n->s ? n->s->uid : n->own ? n->own->uid : getuid();
	st->st_gid = n->s ? n->s->gid : n->own ? n->own->gid : getgid();
	if (o->size) {
		st->st_size = o->size(n);
	} else if (o->text && S_ISREG(fe->mode)) {
		free(o->text(n, &len));
		st->st_size = (off_t)len;
	}
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_blksize = 4096;
	if (n->r && n->r->state != RUN_QUEUED)
		st->st_mtim.tv_sec = n->r->started_wall / 1000;
	else if (n->s)
		st->st_mtim.tv_sec = n->s->created_wall / 1000;
	else
		st->st_mtim.tv_sec = loop_wall_ms() / 1000;
	/* A directory's listing is made when it is read. A kernel told by
	 * an earlier program of the mount to send no OPENDIR (fs/dispatch.c)
	 * keeps listings, and reuses one from its start only while the
	 * directory's mtime is the one it cached with, which it asks for
	 * first (its attributes time out at once): so the nanoseconds count
	 * the answers. Not ctime's, which tar takes to be a change. */
	st->st_atim = st->st_ctim = st->st_mtim;
	if (S_ISDIR(fe->mode))
		st->st_mtim.tv_nsec = (long)(++dir_answers % 1000000000u);
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino, double ttl)
{
	struct fuse_entry_param e = { .ino = ino, .entry_timeout = ttl };
	struct node n;

	if (!resolve_for(req, ino, &n, true))
		return;
	fill_attr(ino, &n, &e.attr);
	fuse_reply_entry(req, &e);
}

/* The requests that wait for a session's variables, done again then. */
enum held_op { HELD_LOOKUP, HELD_GETATTR, HELD_READDIR, HELD_OPEN, HELD_READ };

static bool redo(struct park *p);

/* Holds the request when n's row says its answer must wait. */
static bool hold(const struct node *n, struct park how, const char *name,
		 const struct fuse_file_info *fi)
{
	const struct fops *o = ops_of(n->ft);

	if (!o->hold || !o->hold(n))
		return false;
	how.sid = n->s->id;
	how.retry = redo;
	if (fi)
		how.fi = *fi;
	return park_hold(&how, name);
}

/* Resolves ino for a request of size bytes at off (a readdir, a read),
 * and holds it while its node's answer must wait: true when it goes on
 * now, false when it was answered or held. */
static bool resolve_io(fuse_req_t req, fuse_ino_t ino, struct node *n,
		       enum held_op op, size_t size, off_t off,
		       const struct fuse_file_info *fi)
{
	struct park how = {
		.op = op, .req = req, .ino = ino, .size = size, .off = off
	};

	return resolve(req, ino, n) && !hold(n, how, NULL, fi);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node dir;
	const struct fops *o;
	fuse_ino_t ino = 0;
	double ttl = FAM_ENTRY_TTL;

	if (!resolve(req, parent, &dir))
		return;
	if (hold(&dir,
		 (struct park){ .op = HELD_LOOKUP, .req = req, .ino = parent },
		 name, NULL))
		return;
	o = ops_of(dir.ft);
	for (const struct fent *t = o->tab; t && t->name && !ino; t++)
		if (strcmp(t->name, name) == 0)
			ino = tree_ino(dir.id, t->ft);
	if (!ino && o->lookup)
		ino = o->lookup(&dir, name, &ttl);
	if (!ino)
		fuse_reply_err(req, ENOENT);
	else
		reply_entry(req, ino, ttl);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct node n;
	struct stat st;

	(void)fi;
	if (!resolve_for(req, ino, &n, true))
		return;
	if (hold(&n,
		 (struct park){ .op = HELD_GETATTR, .req = req, .ino = ino },
		 NULL, NULL))
		return;
	fill_attr(ino, &n, &st);
	fuse_reply_attr(req, &st, 0);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dirbuf d = { .from = off, .max = size, .req = req };
	const struct fops *o;
	struct node n;

	if (!resolve_io(req, ino, &n, HELD_READDIR, size, off, fi))
		return;
	if (!S_ISDIR(tree_fent(n.ft)->mode)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	d.p = malloc(size);
	if (!d.p) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	o = ops_of(n.ft);
	fam_dir_add(&d, ".", ino, S_IFDIR);
	fam_dir_add(&d, "..", FUSE_ROOT_ID, S_IFDIR);
	for (const struct fent *t = o->tab; t && t->name; t++)
		fam_dir_add(&d, t->name, tree_ino(n.id, t->ft), t->mode);
	if (o->list)
		o->list(&d, &n);
	fuse_reply_buf(req, d.p, d.len);
	free(d.p);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int acc = fi->flags & O_ACCMODE, rc = 0;
	const struct fent *fe;
	struct node n;
	struct fh *fh;

	if (!resolve(req, ino, &n))
		return;
	if (hold(&n, (struct park){ .op = HELD_OPEN, .req = req, .ino = ino },
		 NULL, fi))
		return;
	fe = tree_fent(n.ft);
	if (S_ISDIR(fe->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (acc != O_RDONLY && !(fe->mode & 0200)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (acc != O_RDONLY && !may_change(req, &n))
		return;
	fh = fh_new(&n);
	if (fh)
		fh_opened(fh, req, fi);
	if (fh && ops_of(n.ft)->open)
		rc = ops_of(n.ft)->open(fh, &n, fi);
	if (!fh || rc < 0) {
		if (fh)
			fh_free(fh);
		fuse_reply_err(req, fh ? -rc : ENOMEM);
		return;
	}
	fi->fh = fh->id;
	fi->direct_io = 1;
	/* Only writers act on close: spare readers the FLUSH round trip. */
	fi->noflush = acc == O_RDONLY;
	fuse_reply_open(req, fi);
}

/* After a crash (the keeper's restart) the open files of the mount are
 * not known: one is made again from its inode, as an open with its
 * flags would make it, keeping its id (what it had read or written is
 * lost). A reader of exit or stream that waited is answered then. */
static struct fh *adopt(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	const struct fops *o;
	struct node n;
	struct fh *fh;

	if (!upgrade_recovering() || tree_resolve(ino, &n) < 0)
		return NULL;
	o = ops_of(n.ft);
	objs_reuse(fi->fh);
	fh = fh_new(&n);
	if (!fh)
		return NULL;
	fh_opened(fh, req, fi);
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		/* its writes, its close: EIO, so that the loss is known */
		fh->lost = true;
		fh->werr = EIO;
	} else if (o->open && o->open(fh, &n, fi) < 0) {
		fh_free(fh);
		return NULL;
	}
	return fh;
}

/* The open file of fi, or NULL once answered: a handle the daemon does
 * not have and cannot make again fails with EIO, and its release
 * succeeds, so that the client can close it. */
static struct fh *fh_or_fail(fuse_req_t req, fuse_ino_t ino,
			     struct fuse_file_info *fi, bool release)
{
	struct fh *fh = fh_of(fi);

	if (!fh && !release)
		fh = adopt(req, ino, fi);
	if (!fh)
		fuse_reply_err(req, release ? 0 : EIO);
	return fh;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fh *fh = fh_or_fail(req, ino, fi, false);
	const struct fops *o;
	struct node n;
	size_t len = 0;

	if (!fh)
		return;
	o = ops_of(fh->fe->ft);
	fh->flags = fi->flags;
	if (o->read) {
		o->read(req, fh, size, off);
		return;
	}
	if (off == 0 || !fh->text) {
		if (!resolve_io(req, ino, &n, HELD_READ, size, off, fi))
			return;
		free(fh->text);
		errno = ENOMEM;
		fh->text = o->text ? o->text(&n, &len) : NULL;
		fh->tlen = fh->text ? len : 0;
		if (o->text && !fh->text) { /* an error, never empty text */
			fuse_reply_err(req, errno ? errno : ENOMEM);
			return;
		}
	}
	fam_reply_text(req, fh->text, fh->tlen, size, off);
}

/* Does a held request again, now that its session's variables are known
 * (or the session is gone). */
static bool redo(struct park *p)
{
	switch ((enum held_op)p->op) {
	case HELD_LOOKUP:
		op_lookup(p->req, p->ino, p->name);
		break;
	case HELD_GETATTR:
		op_getattr(p->req, p->ino, NULL);
		break;
	case HELD_READDIR:
		op_readdir(p->req, p->ino, p->size, p->off, &p->fi);
		break;
	case HELD_OPEN:
		op_open(p->req, p->ino, &p->fi);
		break;
	case HELD_READ:
		op_read(p->req, p->ino, p->size, p->off, &p->fi);
		break;
	}
	return true;
}

/* Answers a handler's result: rc < 0 an error, 0 done (ok answers it),
 * FOPS_LATER the handler answers. */
static void answer(fuse_req_t req, int rc, void (*ok)(fuse_req_t, void *),
		   void *arg)
{
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else if (rc == 0)
		ok(req, arg);
}

static void ok_err0(fuse_req_t req, void *arg)
{
	(void)arg;
	fuse_reply_err(req, 0);
}

static void ok_write(fuse_req_t req, void *arg)
{
	fuse_reply_write(req, *(size_t *)arg);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *fh = fh_or_fail(req, ino, fi, false);
	const struct fops *o;
	struct node n;

	if (!fh)
		return;
	o = ops_of(fh->fe->ft);
	fh->flags = fi->flags;
	if (!resolve(req, ino, &n))
		return;
	if (fh->werr) {
		fuse_reply_err(req, fh->werr);
		return;
	}
	answer(req, o->write ? o->write(req, fh, &n, buf, size, off) : -EACCES,
	       ok_write, &size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* a FLUSH carries no open flags (adopt would take it for a
	 * reader's) and comes only for writers, a reader being opened
	 * noflush: one unknown after a crash lost what it wrote */
	struct fh *fh = fh_of(fi);
	const struct fops *o;

	if (!fh) {
		log_msg(LOG_WARNING, "recovery: the close of a file open for "
				     "writing before the crash (inode %llu): "
				     "what was written is lost: EIO",
			(unsigned long long)ino);
		fuse_reply_err(req, EIO);
		return;
	}
	o = ops_of(fh->fe->ft);
	if (fh->lost) {
		fuse_reply_err(req, EIO);
		return;
	}
	answer(req, o->flush ? o->flush(req, fh) : -fh->werr, ok_err0, NULL);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fh *fh = fh_or_fail(req, ino, fi, true);
	const struct fops *o;

	(void)ino;
	if (!fh)
		return;
	o = ops_of(fh->fe->ft);
	if (o->release)
		o->release(fh);
	fh_free(fh);
	fuse_reply_err(req, 0);
}

static bool try_notify_poll(struct park *p)
{
	struct fh *fh = p->fh;

	if (!ops_of(fh->fe->ft)->readable(fh))
		return false;
	fuse_lowlevel_notify_poll(fh->ph);
	fuse_pollhandle_destroy(fh->ph);
	fh->ph = NULL;
	fh->poll_watch = NULL; /* park_wake_list frees the record */
	return true;
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct fh *fh = fh_of(fi);
	const struct fops *o;
	struct park watch = { .fh = fh, .retry = try_notify_poll };

	(void)ino;
	if (!fh) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_err(req, EIO);
		return;
	}
	o = ops_of(fh->fe->ft);
	if (!o->readable || o->readable(fh)) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLRDNORM);
		return;
	}
	if (ph) {
		fh_unwatch(fh);
		fh->ph = ph;
		fh->poll_watch = park_add(o->waiters(fh), &watch);
	}
	fuse_reply_poll(req, 0);
}

struct entry {
	fuse_ino_t ino;
	double ttl;
};

static void ok_entry(fuse_req_t req, void *arg)
{
	struct entry *e = arg;

	reply_entry(req, e->ino, e->ttl);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct entry e = { 0, FAM_ENTRY_TTL };
	const struct fops *o;
	struct node dir;

	(void)mode;
	if (!resolve(req, parent, &dir) || !may_change(req, &dir))
		return;
	o = ops_of(dir.ft);
	answer(req,
	       o->mkdir ? o->mkdir(req, &dir, name, &e.ino, &e.ttl) : -EACCES,
	       ok_entry, &e);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct fops *o;
	struct node dir;

	if (!resolve(req, parent, &dir) || !may_change(req, &dir))
		return;
	o = ops_of(dir.ft);
	answer(req, o->rmdir ? o->rmdir(req, &dir, name) : -EACCES, ok_err0,
	       NULL);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct fops *o;
	struct node dir;

	if (!resolve(req, parent, &dir) || !may_change(req, &dir))
		return;
	o = ops_of(dir.ft);
	answer(req, o->unlink ? o->unlink(&dir, name) : -EACCES, ok_err0, NULL);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e = { 0 };
	const struct fops *o;
	struct node dir, n;
	struct fh *fh;
	int rc;

	(void)mode;
	if (!resolve(req, parent, &dir) || !may_change(req, &dir))
		return;
	o = ops_of(dir.ft);
	rc = o->create ? o->create(&dir, name, &e.ino) : -EACCES;
	if (rc == 0 && tree_resolve(e.ino, &n) < 0)
		rc = -ENOENT;
	fh = rc == 0 ? fh_new(&n) : NULL;
	if (!fh) {
		fuse_reply_err(req, rc < 0 ? -rc : ENOMEM);
		return;
	}
	fh_opened(fh, req, fi);
	fh->created = true;
	fill_attr(e.ino, &n, &e.attr);
	fi->fh = fh->id;
	fi->direct_io = 1;
	fuse_reply_create(req, &e, fi);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	const struct fops *o;
	struct node n;
	int rc = 0;

	if (!resolve(req, ino, &n) || !may_change(req, &n))
		return;
	if (to_set &
	    (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) && !(tree_fent(n.ft)->mode & 0200)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	o = ops_of(n.ft);
	if ((to_set & FUSE_SET_ATTR_SIZE) && o->truncate)
		rc = o->truncate(&n, fi && fi->fh ? fh_of(fi) : NULL,
				 attr->st_size);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		op_getattr(req, ino, fi);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	const char *target = NULL;
	struct node n;

	if (tree_resolve(ino, &n) == 0 && allowed(req, &n) &&
	    ops_of(n.ft)->link)
		target = ops_of(n.ft)->link(&n);
	if (target)
		fuse_reply_readlink(req, target);
	else
		fuse_reply_err(req, ENOENT);
}

unsigned fsn_max_read = FSN_MAX_READ;

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_read = fsn_max_read;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

void fsn_ops_init(void)
{
	/* The tables are constant: a disagreement is a bug of the build,
	 * which the unit tests catch. */
	if (tree_init(&fam_root) < 0) {
		log_msg(LOG_ERR, "the file tables disagree");
		abort();
	}
	sess_env_ready_hook = park_env_ready;
}

void fsn_ops_fini(void)
{
	fh_free_all();
}

const struct fuse_lowlevel_ops tree_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.readdir = op_readdir,
	.create = op_create,
	.poll = op_poll,
};
