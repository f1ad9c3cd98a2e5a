/*
 * fam_sessions.c - sessions/: mkdir makes a session, rmdir ends one,
 * opening clone for writing makes one named by the smallest free
 * number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "fam.h"
#include "fam_session.h"
#include "fam_sessions.h"
#include "sessions/core/log.h"

/* Opened for writing (`read id <> clone`), clone makes a session named
 * by the smallest free number, and reads give "ID\n"; opened only to be
 * read (grep -r, tar, backups) it makes nothing and reads are empty. */
static int clone_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	char name[24];
	struct sess *s;
	int rc;

	(void)n;
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		return 0;
	rc = sess_may_create(fh->uid);
	if (rc == 0)
		rc = -EEXIST;
	for (unsigned i = 1; rc == -EEXIST; i++) {
		snprintf(name, sizeof(name), "%u", i);
		rc = sess_create(name, fh->uid, fh->gid, &s);
	}
	if (rc < 0) {
		log_msg(LOG_WARNING, "sessions/clone: %s", strerror(-rc));
		return rc;
	}
	sess_make_ahead(s);
	if (asprintf(&fh->text, "%s\n", name) < 0) {
		fh->text = NULL;
		return -ENOMEM;
	}
	fh->tlen = strlen(fh->text);
	return 0;
}

static void clone_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_text(req, fh->text, fh->tlen, size, off);
}

/* What is written to clone means nothing. */
static int clone_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	(void)req;
	(void)fh;
	(void)n;
	(void)buf;
	(void)size;
	(void)off;
	return 0;
}

static const struct fops clone_ops = { .open = clone_open,
				       .read = clone_read,
				       .write = clone_write };

static fuse_ino_t sessions_lookup(const struct node *dir, const char *name,
				  double *ttl)
{
	struct sess *s = sess_find(name);

	(void)dir;
	(void)ttl;
	return s && !s->dying ? tree_ino(s->id, FT_SESS) : 0;
}

static void sessions_list(struct dirbuf *d, const struct node *dir)
{
	(void)dir;
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		if (!s->dying)
			fam_dir_add(d, s->name, tree_ino(s->id, FT_SESS),
				    S_IFDIR);
}

static int sessions_mkdir(fuse_req_t req, const struct node *dir,
			  const char *name, fuse_ino_t *ino, double *ttl)
{
	struct fuse_ctx const *ctx = fuse_req_ctx(req);
	struct sess *s;
	int rc = sess_may_create(ctx->uid);

	if (rc == 0)
		rc = sess_create(name, ctx->uid, ctx->gid, &s);
	(void)dir;
	(void)ttl;
	if (rc < 0) {
		log_msg(LOG_WARNING, "mkdir sessions/%.80s: %s", name,
			strerror(-rc));
		return rc;
	}
	*ino = tree_ino(s->id, FT_SESS);
	sess_make_ahead(s); /* the next mkdir's */
	return 0;
}

static void rmdir_done(void *arg)
{
	fuse_reply_err((fuse_req_t)arg, 0);
}

static int sessions_rmdir(fuse_req_t req, const struct node *dir,
			  const char *name)
{
	struct sess *s = sess_find(name);
	uid_t uid;
	int rc;

	(void)dir;
	if (!s || s->dying)
		return -ENOENT;
	uid = fuse_req_ctx(req)->uid;
	if (uid != 0 && uid != s->uid)
		return -EACCES; /* another user's */
	rc = sess_delete(s, rmdir_done, req);
	if (rc < 0) {
		sess_error(s, "rmdir: %s", strerror(-rc));
		return rc;
	}
	return FOPS_LATER;
}

static const struct fent sessions_tab[] = {
	{ "clone", FT_CLONE, S_IFREG | 0666, &clone_ops, FENT_ANYONE, HOME_DIR,
	  "`read id <> sessions/clone`: opened for writing it creates a "
	  "session and reads its id" },
	{ 0 },
};

static const struct fent sessions_dyn[] = {
	{ "", FT_SESS, FENT_DIR, &fam_session_ops, 0, HOME_SESS,
	  "a session: mkdir creates it, rmdir deletes it" },
	{ 0 },
};

const struct fops fam_sessions_ops = {
	.tab = sessions_tab,
	.dyn = sessions_dyn,
	.lookup = sessions_lookup,
	.list = sessions_list,
	.mkdir = sessions_mkdir,
	.rmdir = sessions_rmdir,
};
