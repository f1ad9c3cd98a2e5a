/*
 * spool.c - the output spool files of runs.
 */
#include <errno.h>
#include <fcntl.h>
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

int spool_append(struct spool *sp, const void *buf, size_t len)
{
	const char *p = buf;

	if (sp->max && sp->size + len > sp->max) {
		sp->truncated = true;
		len = sp->size >= sp->max ? 0 : (size_t)(sp->max - sp->size);
	}
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
	return 0;
}

void spool_close(struct spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}
