/*
 * fam_runopt.c - the cwd of a named run or a process, and a named run's
 * stdin: options for that run alone, taken until its cmd is written
 * (EBUSY after, with a line in error). The cwd is checked for its form
 * only, and entered by the shell as the owner; stdin goes to the run's
 * file r<id>.in as it is written, at most RUNOPTS_STDIN_MAX bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_runopt.h"
#include "sessions/session/runopts.h"

int fam_runopt_open(struct sess *s, struct run *r, const char *file,
		    const char *name)
{
	if (runopts_open(r))
		return 0;
	sess_error(s, "%s/%s/%s%s: its cmd is written", FAM_RUN_DIR(r),
		   r->name, file, name);
	return -EBUSY;
}

static char *cwd_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	if (n->r->opts && n->r->opts->cwd)
		sb_addf(&b, "%s\n", n->r->opts->cwd);
	return sb_take(&b, len);
}

static int cwd_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	size_t len;
	char *path = NULL, *abs = NULL, what[96];
	int rc = fam_runopt_open(n->s, n->r, "cwd", "");

	(void)off;
	(void)req;
	if (rc == 0)
		rc = fam_gather(fh, n->s, buf, size);
	if (rc < 0)
		return rc;
	len = fam_value_len(&fh->w);
	/* a newline would make a line of its own in status */
	if (memchr(fh->w.p, '\0', len) || memchr(fh->w.p, '\n', len) ||
	    len == 0) {
		sess_error(n->s,
			   "%s/%s/cwd: not a path (empty, or a NUL or "
			   "newline in it)",
			   FAM_RUN_DIR(n->r), n->r->name);
		return -EINVAL;
	}
	path = strndup(fh->w.p, len);
	if (path)
		snprintf(what, sizeof(what), "%s/%.64s/cwd", FAM_RUN_DIR(n->r),
			 n->r->name);
	rc = path ? sess_cwd_abs(n->s, path, what, &abs) : -ENOMEM;
	if (rc == 0)
		rc = runopts_set_cwd(n->r, abs);
	free(path);
	free(abs);
	return rc;
}

const struct fops fam_runcwd_ops = { .text = cwd_text, .write = cwd_write };

static off_t stdin_size(const struct node *n)
{
	return n->r->opts ? (off_t)n->r->opts->stdin_len : 0;
}

static int stdin_failed(const struct node *n, int rc)
{
	if (rc == -EFBIG)
		sess_error(n->s, "runs/%s/stdin: more than %u bytes",
			   n->r->name, RUNOPTS_STDIN_MAX);
	else if (rc < 0 && rc != -EBUSY)
		sess_error(n->s, "runs/%s/stdin: %s", n->r->name,
			   strerror(-rc));
	return rc;
}

static int stdin_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	int rc = fam_runopt_open(n->s, n->r, "stdin", "");

	(void)req;
	if (rc == 0)
		rc = runopts_write_stdin(n->r, n->s->dirfd, n->s->uid,
					 n->s->gid, buf, size,
					 fh->flags & O_APPEND ? -1 : off);
	return stdin_failed(n, rc);
}

static int stdin_truncate(const struct node *n, struct fh *fh, off_t size)
{
	int rc = fam_runopt_open(n->s, n->r, "stdin", "");

	(void)fh;
	if (rc == 0)
		rc = runopts_truncate_stdin(n->r, n->s->dirfd, n->s->uid,
					    n->s->gid, (uint64_t)size);
	return stdin_failed(n, rc);
}

const struct fops fam_runstdin_ops = {
	.size = stdin_size,
	.write = stdin_write,
	.truncate = stdin_truncate,
};
