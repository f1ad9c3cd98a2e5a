/*
 * cast.h - a terminal's recording in the asciicast v2 format: one record
 * (time, offset and length in the output spool) per read of the PTY and
 * one per resize, in a file of the session's runtime directory, and the
 * text of recording.cast made from them and the output spool when read.
 */
#ifndef SFS_CAST_H
#define SFS_CAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/strbuf.h"

struct cast {
	int fd;		  /* the records, or -1 */
	uint64_t n;	  /* records written */
	int64_t start_us; /* monotonic time of the start */
	int64_t wall_s;	  /* the header's timestamp */
	int cols, rows;	  /* the size at the start */
};

/* Starts a recording into dirfd/name (made anew) of a terminal that is
 * cols x rows now. Returns 0 or -errno (nothing recorded then). */
int cast_open(struct cast *c, int dirfd, const char *name, int cols, int rows);
void cast_close(struct cast *c);
/* len output bytes at off of the spool, printed now. */
void cast_output(struct cast *c, uint64_t off, size_t len);
void cast_resize(struct cast *c, int cols, int rows);
/* Where a reader of recording.cast is: the text is made as it is read,
 * from the records and the output spool (zeroed: at the start). */
struct cast_reader {
	uint64_t next;	     /* the next record to turn into text */
	bool started;	     /* the header is made */
	struct strbuf carry; /* a UTF-8 character cut between two records */
	int64_t carry_us;    /* when the last of it was printed */
	struct strbuf text;  /* made and not yet read past, from offset at */
	uint64_t at;
};

/* The text of recording.cast at [off, off+size): the header, an "o" event
 * for each output record (read from out_fd, up to out_size bytes), an
 * "r" one for each resize. Made from where r is (from the start again
 * for an offset before it); *p gets the bytes. Returns their number (0
 * past the end) or -ENOMEM. */
ssize_t cast_read(const struct cast *c, int out_fd, uint64_t out_size,
		  struct cast_reader *r, uint64_t off, size_t size,
		  const char **p);
void cast_reader_free(struct cast_reader *r);

#endif
