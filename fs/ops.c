/*
 * ops.c - the FUSE low-level operations: lookup and attributes from the
 * tree tables, reads served from spool files with fuse_reply_data, and
 * blocking reads and closes parked until their run moves on.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "ops.h"
#include "park.h"
#include "readme.h"
#include "sessions/ctl.h"
#include "sessions/log.h"
#include "tree.h"

#define ENTRY_TTL 60.0 /* names that never change meaning */

/* An open file. */
struct fh {
	enum ft ft;
	uint64_t sid;  /* its session's id (0: none) */
	struct run *r; /* the run it reads, or that its cmd started */
	char *var;     /* env/NAME: the name */
	int fd;	       /* spool (or output index) read end, opened lazily */
	int fd_out, fd_err; /* for output and stream: the two spools */
	uint64_t cursor;    /* stream position */
	char *text;	    /* snapshot of a generated file */
	size_t tlen;
	struct strbuf w;	    /* bytes written since open */
	struct fuse_pollhandle *ph; /* a poll waiting for readability */
	struct park *poll_watch;    /* its record on the run */
	bool dirty;		    /* cmd bytes not yet submitted */
	int werr;		    /* sticky write error */
};

static struct fh *get_fh(const struct fuse_file_info *fi)
{
	return (struct fh *)(uintptr_t)fi->fh;
}

/* The text of a generated file (malloc'd), or NULL on ENOMEM. */
static char *gen_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };
	const struct run *r = n->r;

	switch (n->ft) {
	case FT_README:
		sb_add(&b, fsn_readme, strlen(fsn_readme));
		break;
	case FT_EXIT:
		return run_format_exit(r, len);
	case FT_STATUS:
		return run_format_status(r, len);
	case FT_RESULT:
		return run_format_json(r, n->s->dirfd, n->s->name,
				       conf.json_output_bytes, len);
	case FT_CWD:
		sb_addf(&b, "%s\n", n->s->cwd);
		break;
	case FT_TIMEOUT:
		if (!n->run_level)
			sb_addf(&b, "%llu\n",
				(unsigned long long)n->s->timeout_ms);
		else
			sb_addf(&b, "%llu\n",
				(unsigned long long)(r->state == RUN_QUEUED ?
							     r->timeout_ms :
							     r->eff_timeout_ms));
		break;
	case FT_ERROR:
		return sess_errors_text(n->s, len);
	case FT_PID:
		if (r && r->pid)
			sb_addf(&b, "%ld\n", r->pid);
		else
			sb_add(&b, "", 0);
		break;
	case FT_ENVVAR:
	case FT_ROOTENVVAR:
		sb_add(&b, n->var->value, n->var->len);
		sb_add(&b, "\n", 1);
		break;
	default:
		sb_add(&b, "", 0);
		break;
	}
	return sb_take(&b, len);
}

static uint64_t spool_size(const struct run *r, enum ft ft)
{
	if (!r)
		return 0;
	switch (ft) {
	case FT_CMD:
		return r->cmd_len;
	case FT_STDOUT:
		return r->out.size;
	case FT_STDERR:
		return r->err.size;
	case FT_OUTPUT:
		return r->all.size;
	default:
		return 0;
	}
}

static const char *spool_suffix(enum ft ft)
{
	switch (ft) {
	case FT_CMD:
		return "cmd";
	case FT_STDOUT:
		return "out";
	case FT_STDERR:
		return "err";
	default:
		return "idx";
	}
}

static bool is_spooled(enum ft ft)
{
	return ft == FT_CMD || ft == FT_STDOUT || ft == FT_STDERR ||
	       ft == FT_OUTPUT;
}

static void fill_attr(fuse_ino_t ino, const struct node *n, struct stat *st)
{
	const struct fent *fe = tree_fent(n->ft);
	size_t len = 0;
	char *text;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = fe->mode;
	st->st_nlink = S_ISDIR(fe->mode) ? 2 : 1;
	st->st_uid = n->s ? n->s->uid : getuid();
	st->st_gid = n->s ? n->s->gid : getgid();
	if (is_spooled(n->ft)) {
		st->st_size = (off_t)spool_size(n->r, n->ft);
	} else if (n->ft == FT_LATEST) {
		struct run *r = sess_latest(n->s);

		st->st_size = r ? (off_t)strlen(r->name) : 0;
	} else if (S_ISREG(fe->mode) && n->ft != FT_STREAM &&
		   n->ft != FT_CLONE) {
		text = gen_text(n, &len);
		free(text);
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
	st->st_atim = st->st_ctim = st->st_mtim;
}

/* Resolves ino into *n; answers ENOENT and returns false when it names
 * nothing any more. */
static bool resolve(fuse_req_t req, fuse_ino_t ino, struct node *n)
{
	if (tree_resolve(ino, n) == 0)
		return true;
	fuse_reply_err(req, ENOENT);
	return false;
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino, double ttl)
{
	struct fuse_entry_param e = { .ino = ino, .entry_timeout = ttl };
	struct node n;

	if (!resolve(req, ino, &n))
		return;
	fill_attr(ino, &n, &e.attr);
	fuse_reply_entry(req, &e);
}

/* Finds name in directory node dir: its inode and how long to cache it. */
static fuse_ino_t find_child(const struct node *dir, const char *name,
			     double *ttl)
{
	size_t ntab;
	const struct fent *tab = tree_table(dir->ft, &ntab);
	uint64_t id =
		dir->ft == FT_ROOT || dir->ft == FT_SESSIONS ? 0 : dir->id;
	struct envvar *v;
	struct sess *s;
	struct run *r;

	*ttl = ENTRY_TTL;
	for (size_t i = 0; i < ntab; i++)
		if (strcmp(tab[i].name, name) == 0)
			return tree_ino(id, tab[i].ft);
	switch (dir->ft) {
	case FT_SESSIONS:
		s = sess_find(name);
		return s && !s->dying ? tree_ino(s->id, FT_SESS) : 0;
	case FT_ENVDIR:
		*ttl = 0;
		v = envmap_get(&dir->s->env, name);
		return v ? tree_ino(v->id, FT_ENVVAR) : 0;
	case FT_ROOTENV:
		*ttl = 0;
		v = envmap_get(sess_root_env(), name);
		return v ? tree_ino(v->id, FT_ROOTENVVAR) : 0;
	case FT_RUNS:
		*ttl = 0;
		if (strcmp(name, "latest") == 0)
			return sess_latest(dir->s) ?
				       tree_ino(dir->s->id, FT_LATEST) :
				       0;
		r = sess_run_by_name(dir->s, name);
		return r ? tree_ino(r->id, FT_RUN) : 0;
	case FT_PROCS:
		*ttl = 0;
		r = proc_by_name(dir->s, name);
		return r ? tree_ino(r->id, FT_PROC) : 0;
	default:
		return 0;
	}
}

/* A request about a session's env/ that arrived between the end of a
 * run and the shell's report of its variables: it is answered when they
 * are known (a fraction of a millisecond later). */
enum held_op { HELD_LOOKUP, HELD_GETATTR, HELD_READDIR, HELD_OPEN, HELD_READ };

struct held {
	struct list link;
	enum held_op op;
	fuse_req_t req;
	fuse_ino_t ino;
	char *name;
	size_t size;
	off_t off;
	struct fuse_file_info fi;
};

/* True for a node whose answer depends on the session's variables. */
static bool about_env(const struct node *n)
{
	return n->s && (n->ft == FT_ENVDIR || n->ft == FT_ENVVAR);
}

/* Holds the request when n's session has its variables on the way. */
static bool hold(const struct node *n, struct held how, const char *name,
		 const struct fuse_file_info *fi)
{
	struct held *h;

	if (!about_env(n) || !n->s->env_pending)
		return false;
	h = malloc(sizeof(*h));
	if (!h)
		return false;
	*h = how;
	h->name = name ? strdup(name) : NULL;
	if (fi)
		h->fi = *fi;
	list_add_tail(&n->s->env_waiters, &h->link);
	sess_hurry_env(n->s);
	return true;
}

static void op_lookup(fuse_req_t, fuse_ino_t, const char *);
static void op_getattr(fuse_req_t, fuse_ino_t, struct fuse_file_info *);
static void op_readdir(fuse_req_t, fuse_ino_t, size_t, off_t,
		       struct fuse_file_info *);
static void op_open(fuse_req_t, fuse_ino_t, struct fuse_file_info *);
static void op_read(fuse_req_t, fuse_ino_t, size_t, off_t,
		    struct fuse_file_info *);

/* sess_env_ready_hook: answers what was held for s. */
static void release_held(struct sess *s)
{
	while (!list_empty(&s->env_waiters)) {
		struct held *h =
			list_entry(s->env_waiters.next, struct held, link);

		list_del(&h->link);
		switch (h->op) {
		case HELD_LOOKUP:
			op_lookup(h->req, h->ino, h->name);
			break;
		case HELD_GETATTR:
			op_getattr(h->req, h->ino, NULL);
			break;
		case HELD_READDIR:
			op_readdir(h->req, h->ino, h->size, h->off, &h->fi);
			break;
		case HELD_OPEN:
			op_open(h->req, h->ino, &h->fi);
			break;
		case HELD_READ:
			op_read(h->req, h->ino, h->size, h->off, &h->fi);
			break;
		}
		free(h->name);
		free(h);
	}
}

void fsn_ops_init(void)
{
	sess_env_ready_hook = release_held;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node dir;
	fuse_ino_t ino;
	double ttl;

	if (!resolve(req, parent, &dir))
		return;
	if (hold(&dir,
		 (struct held){ .op = HELD_LOOKUP, .req = req, .ino = parent },
		 name, NULL))
		return;
	ino = find_child(&dir, name, &ttl);
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
	if (!resolve(req, ino, &n))
		return;
	if (hold(&n,
		 (struct held){ .op = HELD_GETATTR, .req = req, .ino = ino },
		 NULL, NULL))
		return;
	fill_attr(ino, &n, &st);
	fuse_reply_attr(req, &st, 0);
}

/* Directory listings, built for each readdir call. */
struct dirbuf {
	char *p;
	size_t len, cap, count;
	off_t from;
	size_t max;
	fuse_req_t req;
};

static void dir_add(struct dirbuf *d, const char *name, fuse_ino_t ino,
		    mode_t mode)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t need;

	if ((off_t)d->count++ < d->from || d->len >= d->max)
		return;
	need = fuse_add_direntry(d->req, NULL, 0, name, NULL, 0);
	if (d->len + need > d->max) {
		d->max = d->len; /* full: later entries come next call */
		return;
	}
	fuse_add_direntry(d->req, d->p + d->len, need, name, &st,
			  (off_t)d->count);
	d->len += need;
}

static void list_dir(struct dirbuf *d, const struct node *n, fuse_ino_t ino)
{
	size_t ntab;
	const struct fent *tab = tree_table(n->ft, &ntab);
	uint64_t id = n->ft == FT_ROOT || n->ft == FT_SESSIONS ? 0 : n->id;
	struct list *l, *next;

	dir_add(d, ".", ino, S_IFDIR);
	dir_add(d, "..", FUSE_ROOT_ID, S_IFDIR);
	for (size_t i = 0; i < ntab; i++)
		dir_add(d, tab[i].name, tree_ino(id, tab[i].ft), tab[i].mode);
	if (n->ft == FT_SESSIONS)
		for (struct sess *s = sess_first(); s; s = sess_next(s))
			if (!s->dying)
				dir_add(d, s->name, tree_ino(s->id, FT_SESS),
					S_IFDIR);
	if (n->ft == FT_ENVDIR)
		for (size_t i = 0; i < n->s->env.n; i++)
			dir_add(d, n->s->env.v[i]->name,
				tree_ino(n->s->env.v[i]->id, FT_ENVVAR),
				S_IFREG);
	if (n->ft == FT_ROOTENV)
		for (size_t i = 0; i < sess_root_env()->n; i++)
			dir_add(d, sess_root_env()->v[i]->name,
				tree_ino(sess_root_env()->v[i]->id,
					 FT_ROOTENVVAR),
				S_IFREG);
	if (n->ft == FT_PROCS)
		for (l = n->s->procs.next; l != &n->s->procs; l = l->next)
			dir_add(d, list_entry(l, struct run, link)->name,
				tree_ino(list_entry(l, struct run, link)->id,
					 FT_PROC),
				S_IFDIR);
	if (n->ft == FT_RUNS) {
		if (sess_latest(n->s))
			dir_add(d, "latest", tree_ino(n->s->id, FT_LATEST),
				S_IFLNK);
		list_for_each_safe (l, next, &n->s->runs) {
			struct run *r = list_entry(l, struct run, link);

			dir_add(d, r->name, tree_ino(r->id, FT_RUN), S_IFDIR);
		}
	}
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dirbuf d = { .from = off, .max = size, .req = req };
	struct node n;

	if (!resolve(req, ino, &n))
		return;
	if (hold(&n,
		 (struct held){ .op = HELD_READDIR,
				.req = req,
				.ino = ino,
				.size = size,
				.off = off },
		 NULL, fi))
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
	list_dir(&d, &n, ino);
	fuse_reply_buf(req, d.p, d.len);
	free(d.p);
}

static void fh_unwatch(struct fh *fh)
{
	if (fh->poll_watch)
		park_cancel(fh->poll_watch);
	if (fh->ph)
		fuse_pollhandle_destroy(fh->ph);
	fh->poll_watch = NULL;
	fh->ph = NULL;
}

static void fh_free(struct fh *fh)
{
	fh_unwatch(fh);
	if (fh->r)
		run_unref(fh->r);
	if (fh->fd >= 0)
		close(fh->fd);
	if (fh->fd_out >= 0)
		close(fh->fd_out);
	if (fh->fd_err >= 0)
		close(fh->fd_err);
	free(fh->text);
	free(fh->w.p);
	free(fh->var);
	free(fh);
}

static struct fh *fh_new(const struct node *n)
{
	struct fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->ft = n->ft;
	fh->sid = n->s ? n->s->id : 0;
	fh->fd = fh->fd_out = fh->fd_err = -1;
	if (n->r && (tree_is_run_file(n->ft) || n->run_level)) {
		fh->r = n->r;
		run_ref(fh->r);
	}
	if (n->var && !(fh->var = strdup(n->var->name))) {
		fh_free(fh);
		return NULL;
	}
	return fh;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int acc = fi->flags & O_ACCMODE;
	const struct fent *fe;
	struct node n;
	struct fh *fh;

	if (!resolve(req, ino, &n))
		return;
	if (hold(&n, (struct held){ .op = HELD_OPEN, .req = req, .ino = ino },
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
	if (acc != O_RDONLY && n.run_level && n.ft == FT_CMD && n.r->has_cmd) {
		sess_error(n.s, "%s/%s/cmd: it has its command already",
			   n.r->is_proc ? "procs" : "runs", n.r->name);
		fuse_reply_err(req, EBUSY);
		return;
	}
	if (n.ft == FT_CMD && acc != O_RDONLY && !n.run_level)
		n.r = NULL; /* a writer starts a run of its own */
	fh = fh_new(&n);
	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (n.ft == FT_ENVVAR && (fi->flags & O_TRUNC))
		sess_setenv(n.s, fh->var, "", 0);
	if (n.ft == FT_ROOTENVVAR && (fi->flags & O_TRUNC))
		sess_root_setenv(fh->var, "", 0);
	if (n.ft == FT_STDIN && n.r->state == RUN_QUEUED)
		n.r->want_stdin = true; /* the process will get a pipe */
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	fi->nonseekable = n.ft == FT_STREAM;
	/* Only writers act on close: spare readers the FLUSH round trip. */
	fi->noflush = acc == O_RDONLY;
	fuse_reply_open(req, fi);
}

/* Opens (once) fh's run's spool file with that suffix into *slot. */
static int fh_open(struct fh *fh, int *slot, const char *suffix)
{
	struct sess *s;
	char name[64];

	if (*slot >= 0 || !fh->r)
		return *slot;
	s = fh->r->sess;
	if (!s || (fh->r->state == RUN_QUEUED && strcmp(suffix, "cmd")))
		return -1;
	run_file(fh->r, suffix, name, sizeof(name));
	*slot = openat(s->dirfd, name, O_RDONLY | O_CLOEXEC);
	return *slot;
}

/* Replies with size bytes of fd at off, zero copy (spliced). */
static void reply_fd(fuse_req_t req, int fd, size_t size, uint64_t off)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = fd;
	bv.buf[0].pos = (off_t)off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
}

/* Replies with up to size bytes of a spooled file at off. */
static void reply_spool(fuse_req_t req, struct fh *fh, enum ft ft, size_t size,
			uint64_t off)
{
	uint64_t end = spool_size(fh->r, ft);
	int fd = fh_open(fh, &fh->fd, spool_suffix(ft));

	if (off >= end || fd < 0)
		fuse_reply_buf(req, NULL, 0);
	else
		reply_fd(req, fd, end - off < size ? (size_t)(end - off) : size,
			 off);
}

#define OUTPUT_PIECES 32 /* records gathered into one reply at most */

/* Replies with up to size output bytes from off, gathered from the
 * records that hold them; returns how many it sent. */
static size_t reply_output(fuse_req_t req, struct fh *fh, size_t size,
			   uint64_t off)
{
	struct fuse_bufvec *v =
		calloc(1, sizeof(*v) + (OUTPUT_PIECES - 1) * sizeof(v->buf[0]));
	int idx = fh_open(fh, &fh->fd, "idx");
	struct outrec rec;
	uint64_t i, skip;
	size_t sent = 0;

	if (!v || !fh->r || off >= fh->r->all.size || idx < 0 ||
	    outidx_find(idx, off, &rec, &i) < 0) {
		fuse_reply_buf(req, NULL, 0);
		free(v);
		return 0;
	}
	do {
		struct fuse_buf *b = &v->buf[v->count];
		int fd = rec.stream == 1 ? fh_open(fh, &fh->fd_out, "out") :
					   fh_open(fh, &fh->fd_err, "err");

		if (fd < 0)
			break;
		skip = off + sent - rec.off;
		*b = (struct fuse_buf){
			.size = rec.len - skip < size - sent ?
					(size_t)(rec.len - skip) :
					size - sent,
			.flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK,
			.fd = fd,
			.pos = (off_t)(rec.src + skip),
		};
		sent += b->size;
		v->count++;
	} while (sent < size && v->count < OUTPUT_PIECES &&
		 outidx_get(idx, ++i, &rec) == 0);
	if (v->count == 0)
		fuse_reply_err(req, EIO);
	else
		fuse_reply_data(req, v, FUSE_BUF_SPLICE_MOVE);
	free(v);
	return sent;
}

static void reply_text(fuse_req_t req, const char *text, size_t len,
		       size_t size, off_t off)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off,
			       len - (size_t)off < size ? len - (size_t)off :
							  size);
}

static bool try_stream(struct park *p)
{
	struct fh *fh = p->fh;
	struct run *r = fh->r;

	if (r && r->all.size > fh->cursor) {
		fh->cursor += reply_output(p->req, fh, p->size, fh->cursor);
		return true;
	}
	if (r && run_active(r))
		return false;
	fuse_reply_buf(p->req, NULL, 0);
	return true;
}

static bool try_exit(struct park *p)
{
	struct fh *fh = p->fh;
	size_t len;

	if (fh->r && run_active(fh->r))
		return false;
	free(fh->text);
	fh->text = run_format_exit(fh->r, &len);
	fh->tlen = fh->text ? len : 0;
	reply_text(p->req, fh->text, fh->tlen, p->size, p->off);
	return true;
}

static bool try_flush(struct park *p)
{
	struct fh *fh = p->fh;

	if (run_active(fh->r))
		return false;
	fuse_reply_err(p->req, 0);
	return true;
}

/* Answers now if it can, else parks the request on fh's run. */
static void answer_or_park(fuse_req_t req, struct fh *fh, size_t size,
			   off_t off, bool (*try)(struct park *))
{
	struct park now = {
		.req = req, .fh = fh, .size = size, .off = off, .retry = try
	};

	if (try(&now))
		return;
	if (!park_add(fh->r, &now))
		fuse_reply_err(req, ENOMEM);
}

/* True when a read of fh would not block. */
static bool readable(const struct fh *fh)
{
	if (!fh->r || !run_active(fh->r))
		return true;
	return fh->ft == FT_STREAM && fh->r->all.size > fh->cursor;
}

static bool try_notify_poll(struct park *p)
{
	struct fh *fh = p->fh;

	if (!readable(fh))
		return false;
	fuse_lowlevel_notify_poll(fh->ph);
	fuse_pollhandle_destroy(fh->ph);
	fh->ph = NULL;
	fh->poll_watch = NULL; /* park_wake frees the record */
	return true;
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct fh *fh = get_fh(fi);
	struct park watch = { .fh = fh, .retry = try_notify_poll };
	bool blocking = fh->ft == FT_STREAM || fh->ft == FT_EXIT;

	(void)ino;
	if (!blocking || readable(fh)) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLRDNORM);
		return;
	}
	if (ph) {
		fh_unwatch(fh);
		fh->ph = ph;
		fh->poll_watch = park_add(fh->r, &watch);
	}
	fuse_reply_poll(req, 0);
}

/* Reading clone makes a session named by the smallest free number. */
static void read_clone(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct fuse_ctx const *ctx = fuse_req_ctx(req);
	char name[24];
	struct sess *s;
	int rc = -EEXIST;

	for (unsigned i = 1; !fh->text && rc == -EEXIST; i++) {
		snprintf(name, sizeof(name), "%u", i);
		rc = sess_create(name, ctx->uid, ctx->gid, &s);
		if (rc == 0 && asprintf(&fh->text, "%s\n", name) > 0)
			fh->tlen = strlen(fh->text);
	}
	if (!fh->text && rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	reply_text(req, fh->text, fh->tlen, size, off);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fh *fh = get_fh(fi);
	struct node n;
	size_t len;

	if (fh->ft == FT_OUTPUT) {
		reply_output(req, fh, size, (uint64_t)off);
		return;
	}
	if (is_spooled(fh->ft)) {
		reply_spool(req, fh, fh->ft, size, (uint64_t)off);
		return;
	}
	switch (fh->ft) {
	case FT_STREAM:
		answer_or_park(req, fh, size, off, try_stream);
		return;
	case FT_EXIT:
		answer_or_park(req, fh, size, off, try_exit);
		return;
	case FT_CLONE:
		read_clone(req, fh, size, off);
		return;
	default:
		break;
	}
	if (off == 0 || !fh->text) {
		if (!resolve(req, ino, &n))
			return;
		if (hold(&n,
			 (struct held){ .op = HELD_READ,
					.req = req,
					.ino = ino,
					.size = size,
					.off = off },
			 NULL, fi))
			return;
		free(fh->text);
		fh->text = gen_text(&n, &len);
		fh->tlen = fh->text ? len : 0;
	}
	reply_text(req, fh->text, fh->tlen, size, off);
}

struct write_wait {
	fuse_req_t req;
	size_t size;
};

static void killall_done(void *arg)
{
	struct write_wait *w = arg;

	fuse_reply_write(w->req, w->size);
	free(w);
}

/* The root ctl: `killall` (one per line) ends every run and process of
 * every session; the write returns once they are gone. */
static void root_ctl(fuse_req_t req, const char *buf, size_t size)
{
	struct write_wait *w;
	struct ctl_cmd c;
	size_t start = 0;
	bool killall = false;

	for (size_t i = 0; i <= size; i++) {
		if (i < size && buf[i] != '\n')
			continue;
		if (i > start && (ctl_parse(buf + start, i - start, &c) < 0 ||
				  c.op != CTL_KILLALL)) {
			log_msg(LOG_WARNING, "ctl: '%.*s' is not killall",
				(int)(i - start > 80 ? 80 : i - start),
				buf + start);
			fuse_reply_err(req, EINVAL);
			return;
		}
		killall |= i > start;
		start = i + 1;
	}
	w = malloc(sizeof(*w));
	if (!killall || !w) {
		free(w);
		fuse_reply_write(req, size);
		return;
	}
	*w = (struct write_wait){ req, size };
	log_msg(LOG_NOTICE, "ctl: killall");
	sess_killall(killall_done, w);
}

/* The value written to a small file, less one trailing newline. */
static size_t value_len(const struct strbuf *w)
{
	return w->len && w->p[w->len - 1] == '\n' ? w->len - 1 : w->len;
}

/* Carries out one line written to a session's ctl. */
static int ctl_line(struct sess *s, const char *line, size_t len)
{
	struct ctl_cmd c;

	if (ctl_parse(line, len, &c) < 0 ||
	    (c.op != CTL_KILL && c.op != CTL_RESET && c.op != CTL_TIMEOUT)) {
		sess_error(s,
			   "ctl: '%.*s' is not kill [SIGNAL], reset or "
			   "timeout MS",
			   (int)(len > 80 ? 80 : len), line);
		return -EINVAL;
	}
	if (c.op == CTL_KILL) {
		if (sess_kill_run(s, c.sig, END_KILLED) == 0)
			sess_error(s, "ctl: kill -%d of run %s", c.sig,
				   s->active->name);
	} else if (c.op == CTL_RESET) {
		sess_reset(s);
	} else {
		s->timeout_ms = c.ms;
	}
	return 0;
}

/* Carries out one line written to procs/NAME/ctl. */
static int proc_ctl_line(struct sess *s, struct run *p, const char *line,
			 size_t len)
{
	struct ctl_cmd c;

	if (ctl_parse(line, len, &c) < 0 ||
	    (c.op != CTL_KILL && c.op != CTL_EOF)) {
		sess_error(s,
			   "procs/%s/ctl: '%.*s' is not kill [SIGNAL], "
			   "SIGNAL or eof",
			   p->name, (int)(len > 80 ? 80 : len), line);
		return -EINVAL;
	}
	if (c.op == CTL_EOF)
		proc_eof(p);
	else if (proc_signal(p, c.sig) == 0)
		sess_error(s, "procs/%s: signal %d", p->name, c.sig);
	return 0;
}

/* Carries out the complete lines written to ctl (all of them at close). */
static int ctl_apply(struct fh *fh, struct sess *s, bool all)
{
	struct strbuf *w = &fh->w;
	size_t start = 0;
	int rc = 0;

	for (size_t i = 0; i <= w->len && rc == 0; i++) {
		if (i < w->len ? w->p[i] != '\n' : !all || i == start)
			continue;
		if (i > start && fh->r && fh->r->is_proc)
			rc = proc_ctl_line(s, fh->r, w->p + start, i - start);
		else if (i > start)
			rc = ctl_line(s, w->p + start, i - start);
		start = i + 1;
	}
	if (start > w->len)
		start = w->len;
	memmove(w->p, w->p + start, w->len - start);
	w->len -= start;
	return rc;
}

/* Applies what was written to env/NAME, cwd or timeout. */
static int apply_small_write(struct fh *fh, struct node *n)
{
	unsigned long long ms;
	size_t len = value_len(&fh->w);
	char *path;
	int rc;

	switch (fh->ft) {
	case FT_ENVVAR:
		return sess_setenv(n->s, fh->var, fh->w.p, len);
	case FT_ROOTENVVAR:
		return sess_root_setenv(fh->var, fh->w.p, len);
	case FT_CWD:
		if (memchr(fh->w.p, '\0', len) || len == 0) {
			sess_error(n->s, "cwd: not a path");
			return -EINVAL;
		}
		path = strndup(fh->w.p, len);
		rc = path ? sess_chdir(n->s, path) : -ENOMEM;
		free(path);
		return rc;
	case FT_TIMEOUT:
		rc = name_parse_u64(fh->w.p, fh->w.len, &ms);
		if (rc < 0) {
			sess_error(n->s,
				   "timeout: '%.*s' is not a number of "
				   "milliseconds",
				   (int)len, fh->w.p);
			return rc;
		}
		if (!n->run_level) {
			n->s->timeout_ms = ms;
		} else if (n->r->state == RUN_QUEUED) {
			n->r->timeout_ms = ms;
			n->r->has_timeout = true;
		} else {
			sess_error(n->s, "runs/%s/timeout: the run has started",
				   n->r->name);
			return -EBUSY;
		}
		return 0;
	default:
		return -EACCES;
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *fh = get_fh(fi);
	struct node n;
	int rc = 0;

	(void)off;
	if (!resolve(req, ino, &n))
		return;
	if (fh->werr) {
		fuse_reply_err(req, fh->werr);
		return;
	}
	if (fh->ft == FT_ROOTCTL) {
		root_ctl(req, buf, size);
		return;
	}
	if (fh->ft == FT_STDIN) {
		rc = proc_write(fh->r, buf, size);
		if (rc < 0)
			fuse_reply_err(req, -rc);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (fh->w.len + size > conf.max_command_bytes) {
		sess_error(n.s, "command longer than max_command_bytes (%llu)",
			   (unsigned long long)conf.max_command_bytes);
		fh->werr = E2BIG;
		fuse_reply_err(req, E2BIG);
		return;
	}
	sb_add(&fh->w, buf, size);
	if (fh->w.err)
		rc = fh->w.err;
	else if (fh->ft == FT_CMD)
		fh->dirty = true;
	else if (fh->ft == FT_CTL)
		rc = ctl_apply(fh, n.s, false);
	else
		rc = apply_small_write(fh, &n);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fh *fh = get_fh(fi);
	struct sess *s = sess_get(fh->sid);
	struct run *r;
	int rc;

	(void)ino;
	if (fh->ft == FT_CTL && s && fh->w.len) {
		fuse_reply_err(req, -ctl_apply(fh, s, true));
		return;
	}
	if (fh->ft != FT_CMD || !fh->dirty || fh->werr) {
		fuse_reply_err(req, fh->werr);
		return;
	}
	fh->dirty = false;
	if (!s) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (fh->r && fh->r->is_proc) {
		/* procs/NAME/cmd: close returns once it has started */
		rc = proc_start(s, fh->r, fh->w.p, fh->w.len);
		fh->w.len = 0;
		fuse_reply_err(req, -rc);
		return;
	}
	if (fh->r) {
		/* runs/NAME/cmd: the run exists, it gets its command */
		rc = sess_queue_run(s, fh->r, fh->w.p, fh->w.len);
		r = rc < 0 ? NULL : fh->r;
	} else {
		r = sess_submit(s, fh->w.p, fh->w.len, &rc);
	}
	fh->w.len = 0;
	if (!r) {
		sess_error(s, "cannot queue the command: %s", strerror(-rc));
		fuse_reply_err(req, -rc);
		return;
	}
	if (fh->r != r) {
		if (fh->r)
			run_unref(fh->r);
		fh->r = r;
		run_ref(r);
	}
	answer_or_park(req, fh, 0, 0, try_flush);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	fh_free(get_fh(fi));
	fuse_reply_err(req, 0);
}

static void mkdir_run(fuse_req_t req, const struct node *dir, const char *name)
{
	bool proc = dir->ft == FT_PROCS;
	struct run *r;
	int rc = proc ? proc_new(dir->s, name, &r) :
			sess_new_run(dir->s, name, &r);

	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		reply_entry(req, tree_ino(r->id, proc ? FT_PROC : FT_RUN), 0);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct fuse_ctx const *ctx = fuse_req_ctx(req);
	struct node dir;
	struct sess *s;
	int rc;

	(void)mode;
	if (!resolve(req, parent, &dir))
		return;
	if (dir.ft == FT_RUNS || dir.ft == FT_PROCS) {
		mkdir_run(req, &dir, name);
		return;
	}
	if (dir.ft != FT_SESSIONS) {
		fuse_reply_err(req, EACCES);
		return;
	}
	rc = sess_create(name, ctx->uid, ctx->gid, &s);
	if (rc < 0) {
		log_msg(LOG_WARNING, "mkdir sessions/%.80s: %s", name,
			strerror(-rc));
		fuse_reply_err(req, -rc);
		return;
	}
	reply_entry(req, tree_ino(s->id, FT_SESS), ENTRY_TTL);
}

static void rmdir_done(void *arg)
{
	fuse_reply_err((fuse_req_t)arg, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node dir;
	struct sess *s;
	int rc;

	if (!resolve(req, parent, &dir))
		return;
	if (dir.ft == FT_RUNS) {
		struct run *r = sess_run_by_name(dir.s, name);

		rc = r ? sess_remove_run(dir.s, r) : -ENOENT;
		if (rc == -EBUSY)
			sess_error(dir.s,
				   "rmdir runs/%s: it is queued or "
				   "running",
				   name);
		fuse_reply_err(req, -rc);
		return;
	}
	if (dir.ft == FT_PROCS) {
		struct run *p = proc_by_name(dir.s, name);

		rc = p ? proc_remove(dir.s, p, rmdir_done, req) : -ENOENT;
		if (rc < 0)
			fuse_reply_err(req, -rc);
		return;
	}
	if (dir.ft != FT_SESSIONS) {
		fuse_reply_err(req, EACCES);
		return;
	}
	s = sess_find(name);
	if (!s || s->dying) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	rc = sess_delete(s, rmdir_done, req);
	if (rc < 0) {
		sess_error(s, "rmdir: %s", strerror(-rc));
		fuse_reply_err(req, -rc);
	}
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node dir;

	if (!resolve(req, parent, &dir))
		return;
	if (dir.ft == FT_ROOTENV)
		fuse_reply_err(req, -sess_root_unsetenv(name));
	else if (dir.ft == FT_ENVDIR)
		fuse_reply_err(req, -sess_unsetenv(dir.s, name));
	else
		fuse_reply_err(req, EACCES);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e = { 0 };
	struct node dir, n;
	struct fh *fh;
	int rc;

	(void)mode;
	if (!resolve(req, parent, &dir))
		return;
	if (dir.ft != FT_ENVDIR && dir.ft != FT_ROOTENV) {
		fuse_reply_err(req, EACCES);
		return;
	}
	rc = dir.ft == FT_ROOTENV ? sess_root_setenv(name, "", 0) :
				    sess_setenv(dir.s, name, "", 0);
	if (rc < 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	e.ino = dir.ft == FT_ROOTENV ?
			tree_ino(envmap_get(sess_root_env(), name)->id,
				 FT_ROOTENVVAR) :
			tree_ino(envmap_get(&dir.s->env, name)->id, FT_ENVVAR);
	tree_resolve(e.ino, &n);
	fill_attr(e.ino, &n, &e.attr);
	fh = fh_new(&n);
	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	fuse_reply_create(req, &e, fi);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct node n;

	(void)attr;
	if (!resolve(req, ino, &n))
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
	if ((to_set & FUSE_SET_ATTR_SIZE) && n.ft == FT_ENVVAR &&
	    attr->st_size == 0)
		sess_setenv(n.s, n.var->name, "", 0);
	if ((to_set & FUSE_SET_ATTR_SIZE) && n.ft == FT_ROOTENVVAR &&
	    attr->st_size == 0)
		sess_root_setenv(n.var->name, "", 0);
	op_getattr(req, ino, fi);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct node n;
	struct run *r;

	if (tree_resolve(ino, &n) < 0 || n.ft != FT_LATEST ||
	    !(r = sess_latest(n.s))) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fuse_reply_readlink(req, r->name);
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
