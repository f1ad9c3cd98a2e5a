/*
 * park.h - requests whose reply waits for a run: a read of `exit` or
 * `stream`, the close of `cmd`, and poll watches on those files. They
 * cost only this record while they wait; no thread is held. Interrupted
 * requests get EINTR.
 */
#ifndef SFS_PARK_H
#define SFS_PARK_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "sessions/run.h"

struct park {
	struct list link; /* in the run's waiters, or the interrupted list */
	fuse_req_t req;
	void *fh;
	size_t size;
	off_t off;
	/* Tries to answer; returns true once it has replied. */
	bool (*retry)(struct park *p);
};

/* Parks a copy of *how on r until its retry succeeds (a poll watch has
 * no request). Returns the record, or NULL on ENOMEM. */
struct park *park_add(struct run *r, const struct park *how);
/* Drops a parked record that has no request waiting on it. */
void park_cancel(struct park *p);
/* Retries every request parked on r (run_changed_hook). */
void park_wake(struct run *r);
/* Answers interrupted requests with EINTR (called after each batch). */
void park_idle(void);

#endif
