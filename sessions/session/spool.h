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

/* Why a spool stopped keeping output (its later output is dropped too,
 * so what is kept is always a prefix of what was written). */
enum spool_cut {
	SPOOL_KEPT,    /* nothing dropped */
	SPOOL_LIMIT,   /* the stream reached its max */
	SPOOL_BUDGET,  /* all spools together reached the budget */
	SPOOL_NOSPACE, /* the runtime filesystem is full (ENOSPC, EDQUOT) */
	SPOOL_IOERR,   /* another write error */
};

struct spool {
	int fd;		    /* write end while the run is live, else -1 */
	uint64_t size;	    /* bytes kept so far */
	uint64_t max;	    /* bytes kept at most (0: no limit) */
	bool truncated;	    /* output was dropped */
	enum spool_cut cut; /* why */
	int err;	    /* the errno of SPOOL_NOSPACE or SPOOL_IOERR */
};

/* Each stream may keep this much even when the budget is spent, so that
 * the few lines of an error message that follow a runaway are kept. */
#define SPOOL_FREE_BYTES 65536

/* The total of output bytes all spools may keep (0: no limit). */
void spool_set_budget(uint64_t bytes);
uint64_t spool_budget(void);
/* Output bytes kept now, by spools not yet released. */
uint64_t spool_used(void);
/* A spool's bytes are gone (its run is freed). */
void spool_release(const struct spool *sp);
/* Counts a spool made again by an upgrade in the budget, as its bytes
 * were counted before. */
void spool_charge(const struct spool *sp);
/* Short name of a cut ("limit", "budget", "nospace", "ioerr"). */
const char *spool_cut_name(enum spool_cut cut);

/* Creates (or empties) dirfd/name, mode 0600. Returns 0 or -errno. */
int spool_open(struct spool *sp, int dirfd, const char *name, uint64_t max);
/* Appends len bytes, dropping what goes past max, the budget or the
 * filesystem's room (and everything after that). Returns the bytes kept
 * (sp->cut says why fewer) or -errno of a write error other than a full
 * filesystem. */
ssize_t spool_append(struct spool *sp, const void *buf, size_t len);
/* Moves up to avail bytes (what FIONREAD counted) from the pipe pipe_fd
 * into the spool without copying them through the daemon, with the
 * limits of spool_append. Returns the bytes kept (fewer when sp->cut says
 * why: the caller reads and drops what is past the cut; 0 also when no
 * relay pipe can be made: the caller reads instead) or -errno as
 * spool_append does. */
ssize_t spool_splice(struct spool *sp, int pipe_fd, size_t avail);
/* Closes the write end; size stays readable. */
void spool_close(struct spool *sp);
/* Writes the whole file dirfd/name (a command's text, not output, so it
 * is not counted in the budget). Returns 0, or -errno with no file
 * left. */
int spool_write_file(int dirfd, const char *name, const void *buf, size_t len);

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
