/*
 * spool.c - the output spool files of runs, the limits on what they keep
 * (per stream, and the budget of all of them together), and the index that
 * interleaves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessions/session/spool.h"

static uint64_t budget; /* 0: no limit */
static uint64_t used;

void spool_set_budget(uint64_t bytes)
{
	budget = bytes;
}

uint64_t spool_budget(void)
{
	return budget;
}

uint64_t spool_used(void)
{
	return used;
}

void spool_release(const struct spool *sp)
{
	used -= sp->size < used ? sp->size : used;
}

void spool_charge(const struct spool *sp)
{
	used += sp->size;
}

const char *spool_cut_name(enum spool_cut cut)
{
	static const char *const names[] = { "-", "limit", "budget", "nospace",
					     "ioerr" };

	return names[cut];
}

int spool_open(struct spool *sp, int dirfd, const char *name, uint64_t max)
{
	sp->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);
	sp->size = 0;
	sp->max = max;
	sp->truncated = false;
	sp->cut = SPOOL_KEPT;
	sp->err = 0;
	return sp->fd < 0 ? -errno : 0;
}

static void cut(struct spool *sp, enum spool_cut why, int err)
{
	sp->truncated = true;
	sp->cut = why;
	sp->err = err;
}

/* How much of len bytes sp may keep; records the cut if not all. */
static size_t room(struct spool *sp, size_t len)
{
	uint64_t n = len;

	if (sp->max && sp->size + n > sp->max) {
		n = sp->size >= sp->max ? 0 : sp->max - sp->size;
		cut(sp, SPOOL_LIMIT, 0);
	}
	if (budget && used + n > budget) {
		uint64_t b = used >= budget ? 0 : budget - used;

		if (sp->size + b < SPOOL_FREE_BYTES)
			b = SPOOL_FREE_BYTES - sp->size;
		if (b < n) {
			n = b;
			cut(sp, SPOOL_BUDGET, 0);
		}
	}
	return (size_t)n;
}

/* A write that failed with e (ENOSPC for one that wrote nothing):
 * records the cut; returns -e for an error, 0 when the room ran out. */
static int write_failed(struct spool *sp, int e)
{
	if (e == ENOSPC || e == EDQUOT || e == EFBIG) {
		cut(sp, SPOOL_NOSPACE, e);
		return 0;
	}
	cut(sp, SPOOL_IOERR, e);
	return -e;
}

ssize_t spool_append(struct spool *sp, const void *buf, size_t len)
{
	const char *p = buf;
	size_t kept = 0;

	if (sp->cut != SPOOL_KEPT)
		return 0;
	len = room(sp, len);
	while (kept < len) {
		ssize_t n =
			pwrite(sp->fd, p + kept, len - kept, (off_t)sp->size);
		int e = n < 0 ? errno : ENOSPC;

		if (n < 0 && e == EINTR)
			continue;
		if (n <= 0) {
			int rc = write_failed(sp, e);

			if (rc < 0)
				return rc;
			break;
		}
		kept += (size_t)n;
		sp->size += (uint64_t)n;
		used += (uint64_t)n;
	}
	return (ssize_t)kept;
}

/* The daemon's relay pipe (one thread owns the spools): output moves from
 * a run's pipe into it by reference, and from it into the spool. Spliced
 * straight into the file, the run's pipe stayed locked while its bytes
 * were copied into the file, and the writer waited on it: a third slower
 * than reading and writing. Empty between calls. */
static int relay[2] = { -1, -1 };

static int relay_open(void)
{
	if (relay[0] >= 0)
		return 0;
	if (pipe2(relay, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	/* as big as a writer's pipe grows (output.c); smaller if refused,
	 * which only moves less per call */
	fcntl(relay[1], F_SETPIPE_SZ, 1 << 20);
	return 0;
}

static bool relay_refused; /* the spools' filesystem takes no splice */

/* What the relay holds goes to sp by copy (keep), or is dropped. */
static void relay_empty(struct spool *sp, bool keep)
{
	static char buf[65536];
	ssize_t n;

	while ((n = read(relay[0], buf, sizeof(buf))) > 0)
		if (keep)
			spool_append(sp, buf, (size_t)n);
}

/* Writes the n bytes the relay holds at sp's end, and empties it; returns
 * how many sp kept, and in *err the -errno of a write error. */
static size_t relay_out(struct spool *sp, size_t n, int *err)
{
	uint64_t start = sp->size;

	while (sp->size - start < n) {
		loff_t at = (loff_t)sp->size;
		ssize_t m = splice(relay[0], NULL, sp->fd, &at,
				   n - (size_t)(sp->size - start), 0);
		int e = m < 0 ? errno : ENOSPC;

		if (m < 0 && e == EINTR)
			continue;
		if (m < 0 && e == EINVAL) {
			relay_refused = true;
			relay_empty(sp, true);
			break;
		}
		if (m <= 0) {
			*err = write_failed(sp, e);
			relay_empty(sp, false);
			break;
		}
		sp->size += (uint64_t)m;
		used += (uint64_t)m;
	}
	return (size_t)(sp->size - start);
}

ssize_t spool_splice(struct spool *sp, int pipe_fd, size_t avail)
{
	size_t len, kept = 0;
	int err = 0;

	if (sp->cut != SPOOL_KEPT || relay_refused || relay_open() < 0)
		return 0;
	len = room(sp, avail);
	while (kept < len) {
		ssize_t n = splice(pipe_fd, NULL, relay[1], NULL, len - kept,
				   SPLICE_F_NONBLOCK);
		size_t m;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the pipe held less than FIONREAD said */
		m = relay_out(sp, (size_t)n, &err);
		kept += m;
		if (m < (size_t)n)
			break;
	}
	return err < 0 ? err : (ssize_t)kept;
}

void spool_close(struct spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

int spool_write_file(int dirfd, const char *name, const void *buf, size_t len)
{
	const char *p = buf;
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);
	int rc = fd < 0 ? -errno : 0;

	while (rc == 0 && len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -ENOSPC;
		else
			p += n, len -= (size_t)n;
	}
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (fd >= 0 && rc < 0)
		unlinkat(dirfd, name, 0); /* a part of it would take room */
	return rc;
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
