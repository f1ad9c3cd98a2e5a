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
#include <sys/types.h>

struct spool {
	int fd;		/* write end while the run is live, else -1 */
	uint64_t size;	/* bytes kept so far */
	uint64_t max;	/* bytes kept at most (0: no limit) */
	bool truncated; /* output past max was dropped */
};

/* Creates (or empties) dirfd/name, mode 0600. Returns 0 or -errno. */
int spool_open(struct spool *sp, int dirfd, const char *name, uint64_t max);
/* Appends len bytes, dropping what goes past max. Returns the bytes
 * kept or -errno. */
ssize_t spool_append(struct spool *sp, const void *buf, size_t len);
/* Closes the write end; size stays readable. */
void spool_close(struct spool *sp);

/* The interleaving of stdout (stream 1) and stderr (stream 2) in arrival
 * order, kept as records that map ranges of `output` onto the two spools,
 * so that output is stored once. Consecutive pieces of one stream share a
 * record. */
struct outrec {
	uint64_t off; /* where the range starts in output */
	uint64_t src; /* where it starts in its stream's spool */
	uint64_t len;
	uint64_t stream;
};

struct outidx {
	int fd;
	uint64_t size; /* bytes of output */
	uint64_t nrec;
	struct outrec last;
};

int outidx_open(struct outidx *x, int dirfd, const char *name);
/* Records len bytes of stream that start at src in its spool. */
int outidx_add(struct outidx *x, unsigned stream, uint64_t src, uint64_t len);
void outidx_close(struct outidx *x);
/* Finds the record of index file fd that holds output offset off, and
 * its number. Returns 0, -ENOENT when off is past the end, or -errno. */
int outidx_find(int fd, uint64_t off, struct outrec *rec, uint64_t *i);
/* Reads record number i. Returns 0, -EIO past the end, or -errno. */
int outidx_get(int fd, uint64_t i, struct outrec *rec);

#endif
