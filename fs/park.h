/*
 * park.h - requests whose reply waits for a run: a read of `exit` or
 * `stream`, the close of `cmd`. They cost only this record while they
 * wait; no thread is held. Interrupted ones get EINTR.
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

/* Parks req on r until retry succeeds. Returns 0 or -ENOMEM. */
int park_add(struct run *r, const struct park *how);
/* Retries every request parked on r (run_changed_hook). */
void park_wake(struct run *r);
/* Answers interrupted requests with EINTR (called after each batch). */
void park_idle(void);

#endif
