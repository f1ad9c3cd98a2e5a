/*
 * state.h - the daemon's state as bytes, handed from one program to the
 * next by an upgrade in place (a memfd) or kept for a restart after a
 * crash (a file): a tree of objects whose fields are numbered.
 *
 * Layout: the 8 bytes "SFSSTATE", a u32 version (STATE_VERSION), a u32
 * of zero, then the root object's items. An item is a u16 key, a u16
 * kind (STATE_FIELD or STATE_OBJECT), a u32 length and that many bytes;
 * an object's bytes are items again. Numbers are the host's byte order:
 * the state never leaves the machine.
 *
 * Invariants: each module numbers the keys of its own objects and never
 * reuses a number; a reader takes what it knows and skips the rest, and
 * a field that is missing reads as its default, so that a newer program
 * reads an older state of the same version. A change that an older
 * reader would misread raises STATE_VERSION, which the reader refuses.
 * state_check validates every length before any getter runs, so a
 * crafted or truncated state is refused, never read past its end.
 *
 * Descriptors: state_put_fd writes a descriptor's number and notes it;
 * state_w_keep_fds clears (or sets back) close-on-exec on the noted
 * ones around the execve. The reader's state_get_fd sets it again.
 */
#ifndef SFS_STATE_H
#define SFS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sessions/core/strbuf.h"

#define STATE_VERSION 1
#define STATE_DEPTH   16 /* objects nest at most this deep */

enum { STATE_FIELD = 0, STATE_OBJECT = 1 };

struct state_w {
	struct strbuf b;
	size_t open[STATE_DEPTH]; /* offsets of the open objects' headers */
	int depth;
	int *fds; /* descriptors to keep across the execve */
	size_t nfds, fdcap;
	int err;     /* first error (-ENOMEM, -EINVAL), sticky */
	bool no_fds; /* a checkpoint: state_put_fd writes nothing */
};

/* A validated object: its items. */
struct state_r {
	const unsigned char *p;
	size_t len;
};

void state_w_init(struct state_w *w);
void state_w_free(struct state_w *w);
/* Opens an object (key: its kind, the module's number); close it with
 * state_close. */
void state_open(struct state_w *w, uint16_t key);
void state_close(struct state_w *w);
void state_put(struct state_w *w, uint16_t key, const void *p, size_t len);
void state_put_u64(struct state_w *w, uint16_t key, uint64_t v);
void state_put_i64(struct state_w *w, uint16_t key, int64_t v);
/* A string without its NUL; NULL writes nothing (reads as absent). */
void state_put_str(struct state_w *w, uint16_t key, const char *s);
/* fd < 0 (or a checkpoint) writes nothing. */
void state_put_fd(struct state_w *w, uint16_t key, int fd);
/* Clears (keep) or sets close-on-exec on every descriptor put. */
void state_w_keep_fds(struct state_w *w, bool keep);
/* The bytes written: 0 and *p, *len, or the sticky error. */
int state_w_bytes(struct state_w *w, const void **p, size_t *len);
/* The bytes of w in a new memfd (flags as memfd_create's), sealed
 * against changes and read from its start: the descriptor, or -errno. */
int state_w_memfd(struct state_w *w, const char *name, unsigned flags);

/* Checks the header and every item's bounds; root gets the top object.
 * Returns 0, -EPROTO for another version, or -EINVAL. */
int state_check(const void *buf, size_t len, struct state_r *root);
/* The next object after *pos within o: 1 with its key and body, 0 at
 * the end. Start with *pos = 0. */
int state_next(const struct state_r *o, size_t *pos, uint16_t *key,
	       struct state_r *body);
/* The first object of o with that key: true and its body. */
bool state_obj(const struct state_r *o, uint16_t key, struct state_r *body);
/* Fields of o; a missing or malformed one gives the default. */
bool state_get(const struct state_r *o, uint16_t key, const void **p,
	       size_t *len);
uint64_t state_get_u64(const struct state_r *o, uint16_t key, uint64_t dflt);
int64_t state_get_i64(const struct state_r *o, uint16_t key, int64_t dflt);
/* A malloc'd copy with a NUL, or NULL when absent (or on ENOMEM). */
char *state_get_str(const struct state_r *o, uint16_t key);
/* The same into buf (size bytes, cut to fit as snprintf cuts), "" when
 * absent: returns whether it was there. */
bool state_get_buf(const struct state_r *o, uint16_t key, char *buf,
		   size_t size);
/* A descriptor handed over, close-on-exec again, or -1 when absent, not
 * open or one of 0, 1, 2. */
int state_get_fd(const struct state_r *o, uint16_t key);

/* Something a checkpoint keeps changed (a run ended, a session or a
 * variable came or went): the count of such changes. */
void state_touch(void);
unsigned long state_generation(void);

#endif
