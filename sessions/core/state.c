/*
 * state.c - the writer and the validating reader of state.h's format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sessions/core/state.h"

#define HDR_LEN	 16 /* "SFSSTATE", version, zero */
#define ITEM_HDR 8  /* key, kind, length */

struct item {
	uint16_t key, kind;
	uint32_t len;
	const unsigned char *p;
};

static void put_hdr(struct strbuf *b, uint16_t key, uint16_t kind,
		    uint32_t len)
{
	unsigned char h[ITEM_HDR];

	memcpy(h, &key, 2);
	memcpy(h + 2, &kind, 2);
	memcpy(h + 4, &len, 4);
	sb_add(b, h, sizeof(h));
}

void state_w_init(struct state_w *w)
{
	uint32_t v[2] = { STATE_VERSION, 0 };

	memset(w, 0, sizeof(*w));
	sb_add(&w->b, "SFSSTATE", 8);
	sb_add(&w->b, v, sizeof(v));
}

void state_w_free(struct state_w *w)
{
	free(w->b.p);
	free(w->fds);
	memset(w, 0, sizeof(*w));
}

void state_open(struct state_w *w, uint16_t key)
{
	if (w->depth == STATE_DEPTH) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	w->open[w->depth++] = w->b.len;
	put_hdr(&w->b, key, STATE_OBJECT, 0);
}

void state_close(struct state_w *w)
{
	size_t at;
	uint32_t len;

	if (w->depth == 0) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	at = w->open[--w->depth];
	if (w->b.err || w->b.len - at - ITEM_HDR > UINT32_MAX)
		return;
	len = (uint32_t)(w->b.len - at - ITEM_HDR);
	memcpy(w->b.p + at + 4, &len, 4);
}

void state_put(struct state_w *w, uint16_t key, const void *p, size_t len)
{
	if (len > UINT32_MAX) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	put_hdr(&w->b, key, STATE_FIELD, (uint32_t)len);
	sb_add(&w->b, p, len);
}

void state_put_u64(struct state_w *w, uint16_t key, uint64_t v)
{
	state_put(w, key, &v, sizeof(v));
}

void state_put_i64(struct state_w *w, uint16_t key, int64_t v)
{
	state_put(w, key, &v, sizeof(v));
}

void state_put_str(struct state_w *w, uint16_t key, const char *s)
{
	if (s)
		state_put(w, key, s, strlen(s));
}

void state_put_fd(struct state_w *w, uint16_t key, int fd)
{
	if (fd < 0 || w->no_fds)
		return;
	if (w->nfds == w->fdcap) {
		size_t cap = w->fdcap ? w->fdcap * 2 : 64;
		int *n = realloc(w->fds, cap * sizeof(*n));

		if (!n) {
			w->err = w->err ? w->err : -ENOMEM;
			return;
		}
		w->fds = n;
		w->fdcap = cap;
	}
	w->fds[w->nfds++] = fd;
	state_put_u64(w, key, (uint64_t)fd);
}

/* FD_CLOEXEC is the only descriptor flag: it is set, not merged, which
 * halves the system calls of a state with thousands of descriptors (an
 * upgrade's pause grows with them). */
void state_w_keep_fds(struct state_w *w, bool keep)
{
	for (size_t i = 0; i < w->nfds; i++)
		fcntl(w->fds[i], F_SETFD, keep ? 0 : FD_CLOEXEC);
}

int state_w_bytes(struct state_w *w, const void **p, size_t *len)
{
	if (w->err || w->b.err)
		return w->err ? w->err : w->b.err;
	if (w->depth != 0)
		return -EINVAL;
	*p = w->b.p;
	*len = w->b.len;
	return 0;
}

/* The item at *pos of o, moving *pos past it: 1, 0 at the end, -EINVAL
 * when it does not fit. */
static int item_at(const struct state_r *o, size_t *pos, struct item *it)
{
	if (*pos == o->len)
		return 0;
	if (o->len - *pos < ITEM_HDR)
		return -EINVAL;
	memcpy(&it->key, o->p + *pos, 2);
	memcpy(&it->kind, o->p + *pos + 2, 2);
	memcpy(&it->len, o->p + *pos + 4, 4);
	if (it->len > o->len - *pos - ITEM_HDR ||
	    (it->kind != STATE_FIELD && it->kind != STATE_OBJECT))
		return -EINVAL;
	it->p = o->p + *pos + ITEM_HDR;
	*pos += ITEM_HDR + it->len;
	return 1;
}

static int check_obj(const struct state_r *o, int depth)
{
	struct item it;
	size_t pos = 0;
	int rc;

	if (depth > STATE_DEPTH)
		return -EINVAL;
	while ((rc = item_at(o, &pos, &it)) == 1) {
		struct state_r sub = { it.p, it.len };

		if (it.kind == STATE_OBJECT && check_obj(&sub, depth + 1) < 0)
			return -EINVAL;
	}
	return rc;
}

int state_check(const void *buf, size_t len, struct state_r *root)
{
	uint32_t v;

	if (len < HDR_LEN || memcmp(buf, "SFSSTATE", 8) != 0)
		return -EINVAL;
	memcpy(&v, (const char *)buf + 8, 4);
	if (v != STATE_VERSION)
		return -EPROTO;
	root->p = (const unsigned char *)buf + HDR_LEN;
	root->len = len - HDR_LEN;
	return check_obj(root, 0);
}

int state_next(const struct state_r *o, size_t *pos, uint16_t *key,
	       struct state_r *body)
{
	struct item it;

	while (item_at(o, pos, &it) == 1) {
		if (it.kind != STATE_OBJECT)
			continue;
		*key = it.key;
		body->p = it.p;
		body->len = it.len;
		return 1;
	}
	return 0;
}

bool state_obj(const struct state_r *o, uint16_t key, struct state_r *body)
{
	size_t pos = 0;
	uint16_t k;

	while (state_next(o, &pos, &k, body) == 1)
		if (k == key)
			return true;
	return false;
}

bool state_get(const struct state_r *o, uint16_t key, const void **p,
	       size_t *len)
{
	struct item it;
	size_t pos = 0;

	while (item_at(o, &pos, &it) == 1)
		if (it.kind == STATE_FIELD && it.key == key) {
			*p = it.p;
			*len = it.len;
			return true;
		}
	return false;
}

uint64_t state_get_u64(const struct state_r *o, uint16_t key, uint64_t dflt)
{
	const void *p;
	size_t len;
	uint64_t v;

	if (!state_get(o, key, &p, &len) || len != sizeof(v))
		return dflt;
	memcpy(&v, p, sizeof(v));
	return v;
}

int64_t state_get_i64(const struct state_r *o, uint16_t key, int64_t dflt)
{
	return (int64_t)state_get_u64(o, key, (uint64_t)dflt);
}

char *state_get_str(const struct state_r *o, uint16_t key)
{
	const void *p;
	size_t len;
	char *s;

	if (!state_get(o, key, &p, &len) || memchr(p, 0, len))
		return NULL;
	s = malloc(len + 1);
	if (s) {
		memcpy(s, p, len);
		s[len] = 0;
	}
	return s;
}

bool state_get_buf(const struct state_r *o, uint16_t key, char *buf,
		   size_t size)
{
	const void *p = NULL;
	size_t len = 0;
	bool ok = state_get(o, key, &p, &len) && !memchr(p, 0, len);

	if (size == 0)
		return ok;
	if (!ok)
		len = 0;
	if (len >= size)
		len = size - 1;
	if (len)
		memcpy(buf, p, len);
	buf[len] = '\0';
	return ok;
}

int state_get_fd(const struct state_r *o, uint16_t key)
{
	uint64_t v = state_get_u64(o, key, UINT64_MAX);

	/* never a standard stream; one call both checks that it is open and
	 * sets the only flag */
	if (v > INT32_MAX || v <= 2 || fcntl((int)v, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return (int)v;
}

static unsigned long generation;

void state_touch(void)
{
	generation++;
}

unsigned long state_generation(void)
{
	return generation;
}

/* A memfd of the state: what an upgrade hands the next program, and the
 * keeper's note. */
int state_w_memfd(struct state_w *w, const char *name, unsigned flags)
{
	const void *p;
	size_t len;
	int fd, rc = state_w_bytes(w, &p, &len);

	if (rc < 0)
		return rc;
	fd = memfd_create(name, flags | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (write(fd, p, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) < 0) {
		rc = errno ? -errno : -EIO;
		close(fd);
		return rc;
	}
	fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK);
	return fd;
}
