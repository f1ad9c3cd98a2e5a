/*
 * park.h - requests whose reply waits: a read of `exit` or `stream`, the
 * close of `cmd` and poll watches on those files wait for their run; a
 * write to a terminal's full input queue waits for room; a
 * request about a session's env/ made between the end of a run and the
 * shell's report of its variables is held until they are known (a
 * fraction of a millisecond later), then done again. They cost only this
 * record while they wait; no thread is held. Interrupted requests get
 * EINTR, after what their `interrupted` says is done.
 */
#ifndef SFS_PARK_H
#define SFS_PARK_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "sessions/session/run.h"
#include "sessions/session/sess.h"

struct park {
	struct list link; /* in its list, or the interrupted list */
	fuse_req_t req;
	void *fh;
	size_t size;
	off_t off;
	/* A parked write's size bytes: park_add keeps a copy (libfuse's
	 * buffer is the request's only until its handler returns). */
	const char *data;
	/* Tries to answer; returns true once it has replied. A held request
	 * is done again: its retry always answers. */
	bool (*retry)(struct park *p);
	/* What an interrupt does besides the EINTR reply, or NULL (the
	 * close of cmd cancels or kills its run). */
	void (*interrupted)(struct park *p);
	/* A held request: its session, and what to do again. */
	uint64_t sid;
	fuse_ino_t ino;
	int op;
	char *name; /* a copy, owned by the record */
	struct fuse_file_info fi;
};

/* Parks a copy of *how (and of its data, if any) in waiters (a run's,
 * or any list a family keeps for what its readers and writers wait on)
 * until its retry succeeds (a poll watch has no request). Returns the
 * record, or NULL on ENOMEM. */
struct park *park_add(struct list *waiters, const struct park *how);
/* Answers the parked write p: its size when rc is 0, else -rc. */
void park_reply_write(const struct park *p, int rc);
/* Drops a parked record that has no request waiting on it. */
void park_cancel(struct park *p);
/* Retries every request parked in waiters. */
void park_wake_list(struct list *waiters);
/* Retries every request parked on r (run_changed_hook). */
void park_wake(struct run *r);
/* Holds a copy of *how (and of name, if any) until the variables of
 * session how->sid are known. Returns false on ENOMEM. */
bool park_hold(const struct park *how, const char *name);
/* Does again what was held for s (sess_env_ready_hook). */
void park_env_ready(struct sess *s);
/* Does what interrupted requests ask, answers them with EINTR, and lets requests held for a
 * session that is gone go (called after each batch). */
void park_idle(void);

#endif
