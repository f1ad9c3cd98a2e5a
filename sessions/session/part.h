/*
 * part.h - the parts of a session (its terminal, its code contexts): each
 * registers with its session through one table of operations, so that
 * the session's core (sess.c, kill.c) ends them, waits for them and
 * frees them without naming them, and knows nothing of their kinds. A
 * part is a struct sess_part in its owner's structure, registered when
 * the owner is made and unregistered when the owner goes.
 */
#ifndef SFS_PART_H
#define SFS_PART_H

#include <stdbool.h>
#include "sessions/core/list.h"

struct sess;
struct sess_part;

/* What a session asks of its parts. An operation a kind does not need
 * is NULL: nothing to do, or false. */
struct sess_part_ops {
	/* The session is deleted (its processes get TERM): the part ends
	 * what it runs and cancels what it has queued. */
	void (*hangup)(struct sess_part *p);
	/* killall: what the part runs now is ended; the part stays. */
	void (*stop)(struct sess_part *p);
	/* A deleted session's grace is over: KILL what the part runs. */
	void (*kill)(struct sess_part *p);
	/* A process of the part is not reaped yet: the session is not
	 * freed before it is. */
	bool (*alive)(const struct sess_part *p);
	/* The part runs something that killall waits for. */
	bool (*busy)(const struct sess_part *p);
	/* The session is freed: so is the part, which has left the
	 * session's parts already. */
	void (*free)(struct sess_part *p);
	/* The durability issue adds save and restore here. */
};

struct sess_part {
	const struct sess_part_ops *ops;
	struct list link; /* in its session's parts, oldest first */
};

/* p joins s's parts. */
void sess_part_add(struct sess *s, struct sess_part *p,
		   const struct sess_part_ops *ops);
/* p leaves its session's parts (once more changes nothing). */
void sess_part_del(struct sess_part *p);

/* Each operation, on every part of s. */
void sess_parts_hangup(struct sess *s);
void sess_parts_stop(struct sess *s);
void sess_parts_kill(struct sess *s);
bool sess_parts_alive(const struct sess *s);
bool sess_parts_busy(const struct sess *s);
void sess_parts_free(struct sess *s);

#endif
