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
#include <stdint.h>
#include "sessions/core/list.h"
#include "sessions/core/state.h"

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
	/* An upgrade in place: the part writes itself as one object of
	 * its kind's key (state_open(w, kind->key) ... state_close), its
	 * descriptors with state_put_fd, so that its kind's restore makes
	 * it again in the next program. NULL: the part is not kept. */
	void (*save)(struct sess_part *p, struct state_w *w);
};

/* A kind of part, known to the session layer by the key of its saved
 * object (a session's objects of key >= SESS_PART_KEY_MIN are parts).
 * Each kind registers itself at its start (tty_init, ctx_init). */
#define SESS_PART_KEY_MIN 0x100
struct sess_part_kind {
	uint16_t key;
	/* Makes the part saved in o again, registered with s (which is
	 * restored but for its parts). Returns 0 or -errno; on an error the
	 * part is lost and said in s's error file by the caller. */
	int (*restore)(struct sess *s, const struct state_r *o);
};

/* Called once per kind, before any restore. */
void sess_part_kind_add(const struct sess_part_kind *k);
/* Writes every part of s that has a save. */
void sess_parts_save(struct sess *s, struct state_w *w);
/* The part kind of key, or NULL. */
const struct sess_part_kind *sess_part_kind_of(uint16_t key);

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
