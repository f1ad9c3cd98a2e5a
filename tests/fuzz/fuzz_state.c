/* fuzz_state.c - the reader of the state an upgrade in place hands over
 * (sessions/core/state.c): any bytes go to state_check, and a state it
 * accepts is walked whole, every object and every field through each
 * getter. What state_check accepts lies inside the buffer, each getter
 * finds the first item of its key, and written again with the writer
 * the tree is the same bytes. Input: the state itself. */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "sessions/core/state.h"

#define HDR_LEN	 16 /* "SFSSTATE", version, zero (state.h) */
#define ITEM_HDR 8  /* key, kind, length */

static const unsigned char *buf_lo, *buf_hi; /* the input's bounds */

struct item {
	uint16_t key, kind;
	uint32_t len;
	const unsigned char *p;
};

static void inside(const void *p, size_t len, const char *what)
{
	const unsigned char *c = p;

	FUZZ_CHECK(len == 0 || (c >= buf_lo && c <= buf_hi &&
				len <= (size_t)(buf_hi - c)),
		   "%s: %zu bytes out of the input", what, len);
}

/* The item at *pos of o as the format says (state_check validated it). */
static int item_at(const struct state_r *o, size_t *pos, struct item *it)
{
	if (*pos == o->len)
		return 0;
	FUZZ_CHECK(o->len - *pos >= ITEM_HDR, "a cut item header accepted");
	memcpy(&it->key, o->p + *pos, 2);
	memcpy(&it->kind, o->p + *pos + 2, 2);
	memcpy(&it->len, o->p + *pos + 4, 4);
	FUZZ_CHECK(it->len <= o->len - *pos - ITEM_HDR, "an item past its object");
	FUZZ_CHECK(it->kind == STATE_FIELD || it->kind == STATE_OBJECT,
		   "kind %u accepted", it->kind);
	it->p = o->p + *pos + ITEM_HDR;
	*pos += ITEM_HDR + it->len;
	return 1;
}

/* The first item of o with key and kind, as the getters must find it. */
static bool first_of(const struct state_r *o, uint16_t key, uint16_t kind,
		     struct item *want)
{
	size_t pos = 0;

	while (item_at(o, &pos, want) == 1)
		if (want->key == key && want->kind == kind)
			return true;
	return false;
}

static void field(const struct state_r *o, const struct item *it)
{
	struct item first;
	const void *p;
	size_t len;
	uint64_t u;
	char *s;

	FUZZ_CHECK(first_of(o, it->key, STATE_FIELD, &first), "lost a field");
	FUZZ_CHECK(state_get(o, it->key, &p, &len), "field %u not found",
		   it->key);
	FUZZ_CHECK(p == first.p && len == first.len,
		   "field %u: not the first of its key", it->key);
	inside(p, len, "a field");
	u = state_get_u64(o, it->key, 7);
	if (len == 8)
		FUZZ_CHECK(memcmp(&u, p, 8) == 0, "u64 of field %u", it->key);
	else
		FUZZ_CHECK(u == 7, "a %zu-byte field read as a u64", len);
	FUZZ_CHECK((uint64_t)state_get_i64(o, it->key, 7) == u, "i64 != u64");
	s = state_get_str(o, it->key);
	FUZZ_CHECK(!s || (strlen(s) == len && memcmp(s, p, len) == 0),
		   "field %u: the string is not its bytes", it->key);
	free(s);
	/* a number that is no descriptor of this process reads as -1 */
	if (u > 1024 && u != 7)
		FUZZ_CHECK(state_get_fd(o, it->key) == -1, "fd %llu",
			   (unsigned long long)u);
}

static void walk(const struct state_r *o, int depth, struct state_w *w);

static void object(const struct state_r *o, const struct item *it, int depth,
		   struct state_w *w)
{
	struct state_r body, sub = { it->p, it->len };
	struct item first;

	FUZZ_CHECK(depth < STATE_DEPTH, "objects %d deep accepted", depth + 1);
	FUZZ_CHECK(first_of(o, it->key, STATE_OBJECT, &first), "lost an object");
	FUZZ_CHECK(state_obj(o, it->key, &body), "object %u not found",
		   it->key);
	FUZZ_CHECK(body.p == first.p && body.len == first.len,
		   "object %u: not the first of its key", it->key);
	inside(body.p, body.len, "an object");
	state_open(w, it->key);
	walk(&sub, depth + 1, w);
	state_close(w);
}

/* Every item of o, in order, and the same tree into w. */
static void walk(const struct state_r *o, int depth, struct state_w *w)
{
	struct state_r body;
	struct item it;
	size_t pos = 0, npos = 0;
	uint16_t key;

	while (item_at(o, &pos, &it) == 1) {
		if (it.kind == STATE_FIELD) {
			field(o, &it);
			state_put(w, it.key, it.p, it.len);
			continue;
		}
		/* state_next stops at this object, skipping the fields */
		FUZZ_CHECK(state_next(o, &npos, &key, &body) == 1 &&
				   key == it.key && body.p == it.p &&
				   body.len == it.len,
			   "state_next missed object %u", it.key);
		object(o, &it, depth, w);
	}
	FUZZ_CHECK(state_next(o, &npos, &key, &body) == 0,
		   "state_next gave an object past the end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_r root;
	struct state_w w;
	const void *out;
	size_t len;
	int rc;

	buf_lo = data;
	buf_hi = data + size;
	rc = state_check(data, size, &root);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EPROTO, "rc %d", rc);
	if (rc < 0)
		return 0;
	FUZZ_CHECK(size >= HDR_LEN && root.p == data + HDR_LEN &&
			   root.len == size - HDR_LEN,
		   "the root is not the input after its header");
	state_w_init(&w);
	walk(&root, 0, &w);
	rc = state_w_bytes(&w, &out, &len);
	FUZZ_CHECK(rc == 0, "the writer refused what the reader took: %d", rc);
	/* the header's second u32 is not checked; the writer puts 0 */
	FUZZ_CHECK(len == size && memcmp(out, data, 12) == 0 &&
			   memcmp((const char *)out + HDR_LEN, data + HDR_LEN,
				  size - HDR_LEN) == 0,
		   "written again, %zu bytes instead of %zu", len, size);
	state_w_free(&w);
	return 0;
}
