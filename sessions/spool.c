/*
 * spool.c - the output spool files of runs and the index that
 * interleaves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spool.h"

int spool_open(struct spool *sp, int dirfd, const char *name, uint64_t max)
{
	sp->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);
	sp->size = 0;
	sp->max = max;
	sp->truncated = false;
	return sp->fd < 0 ? -errno : 0;
}

ssize_t spool_append(struct spool *sp, const void *buf, size_t len)
{
	const char *p = buf;
	size_t kept;

	if (sp->max && sp->size + len > sp->max) {
		sp->truncated = true;
		len = sp->size >= sp->max ? 0 : (size_t)(sp->max - sp->size);
	}
	kept = len;
	while (len > 0) {
		ssize_t n = pwrite(sp->fd, p, len, (off_t)sp->size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		sp->size += (uint64_t)n;
	}
	return (ssize_t)kept;
}

void spool_close(struct spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

int outidx_open(struct outidx *x, int dirfd, const char *name)
{
	x->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0600);
	x->size = x->nrec = 0;
	return x->fd < 0 ? -errno : 0;
}

int outidx_add(struct outidx *x, unsigned stream, uint64_t src, uint64_t len)
{
	struct outrec *l = &x->last;
	uint64_t slot;

	if (len == 0)
		return 0;
	if (x->nrec && l->stream == stream && l->src + l->len == src) {
		l->len += len;
		slot = x->nrec - 1;
	} else {
		*l = (struct outrec){ x->size, src, len, stream };
		slot = x->nrec++;
	}
	x->size += len;
	if (pwrite(x->fd, l, sizeof(*l), (off_t)(slot * sizeof(*l))) !=
	    (ssize_t)sizeof(*l))
		return -errno;
	return 0;
}

void outidx_close(struct outidx *x)
{
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

int outidx_get(int fd, uint64_t i, struct outrec *rec)
{
	ssize_t n = pread(fd, rec, sizeof(*rec), (off_t)(i * sizeof(*rec)));

	return n == (ssize_t)sizeof(*rec) ? 0 : n < 0 ? -errno : -EIO;
}

int outidx_find(int fd, uint64_t off, struct outrec *rec, uint64_t *i)
{
	struct stat st;
	uint64_t lo = 0, hi;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	hi = (uint64_t)st.st_size / sizeof(*rec);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		rc = outidx_get(fd, mid, rec);
		if (rc < 0)
			return rc;
		if (off < rec->off)
			hi = mid;
		else if (off >= rec->off + rec->len)
			lo = mid + 1;
		else
			return *i = mid, 0;
	}
	return -ENOENT;
}
