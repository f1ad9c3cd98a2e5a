/*
 * spool.h - append-only output files in the private runtime directory.
 * Output is never held in memory: it is written here as it arrives and
 * read back from here by the filesystem.
 */
#ifndef SFS_SPOOL_H
#define SFS_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool {
	int fd;	       /* write end while the run is live, else -1 */
	uint64_t size; /* bytes kept so far */
	uint64_t max;  /* bytes kept at most (0: no limit) */
	bool truncated; /* output past max was dropped */
};

/* Creates (or empties) dirfd/name, mode 0600. Returns 0 or -errno. */
int spool_open(struct spool *sp, int dirfd, const char *name, uint64_t max);
/* Appends len bytes, dropping what goes past max. Returns 0 or -errno. */
int spool_append(struct spool *sp, const void *buf, size_t len);
/* Closes the write end; size stays readable. */
void spool_close(struct spool *sp);

#endif
