/*
 * objs.c - an open-addressing hash table from object id to object.
 * Ids only grow, so deletion uses tombstones and the table is rebuilt
 * when they pile up.
 */
#include <stdlib.h>
#include "sessions/core/objs.h"

struct slot {
	uint64_t id; /* 0: empty; ~0: tombstone */
	enum obj_kind kind;
	void *ptr;
};

#define TOMB (~(uint64_t)0)

static struct slot *tab;
static size_t cap, used, live;
static uint64_t next_id = 1;
static uint64_t high_id; /* above every id reused (objs_reuse) */

static size_t hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id;
}

static void put(struct slot *t, size_t c, uint64_t id, enum obj_kind k, void *p)
{
	size_t i = hash(id) & (c - 1);

	while (t[i].id != 0)
		i = (i + 1) & (c - 1);
	t[i] = (struct slot){ id, k, p };
}

/* A table for at least want live objects (and the live ones). */
static void grow_to(size_t want)
{
	size_t ncap = cap ? cap : 256;
	struct slot *nt;

	if (want < live)
		want = live;
	while (want * 2 + 2 > ncap)
		ncap *= 2;
	nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		abort();
	for (size_t i = 0; i < cap; i++)
		if (tab[i].id != 0 && tab[i].id != TOMB)
			put(nt, ncap, tab[i].id, tab[i].kind, tab[i].ptr);
	free(tab);
	tab = nt;
	cap = ncap;
	used = live;
}

static void grow(void)
{
	grow_to(live);
}

void objs_reserve(size_t n)
{
	/* a table grows as it fills: made at once for what comes, it is
	 * not rehashed a dozen times in an upgrade's pause */
	if ((live + n + 1) * 4 >= cap * 3)
		grow_to(live + n);
}

size_t objs_live(void)
{
	return live;
}

uint64_t objs_add(enum obj_kind kind, void *ptr)
{
	uint64_t id = next_id++;

	/* after a reused id, the next fresh one is above all reused */
	if (high_id > next_id)
		next_id = high_id;

	if ((used + 1) * 4 >= cap * 3)
		grow();
	put(tab, cap, id, kind, ptr);
	used++;
	live++;
	return id;
}


uint64_t objs_next(void)
{
	return next_id > high_id ? next_id : high_id;
}

void objs_floor(uint64_t id)
{
	if (id > high_id)
		high_id = id;
	if (id > next_id)
		next_id = id;
}

static struct slot *find(uint64_t id)
{
	size_t i;

	if (!cap || id == 0 || id == TOMB)
		return NULL;
	for (i = hash(id) & (cap - 1); tab[i].id != 0; i = (i + 1) & (cap - 1))
		if (tab[i].id == id)
			return &tab[i];
	return NULL;
}

void objs_reuse(uint64_t id)
{
	/* an id in use (a crafted state) is not given twice: the object
	 * made next gets a fresh one */
	if (id == 0 || id == TOMB || find(id))
		return;
	if (next_id > high_id)
		high_id = next_id;
	next_id = id;
	if (id >= high_id)
		high_id = id + 1;
}

void objs_del(uint64_t id)
{
	struct slot *s = find(id);

	if (s) {
		s->id = TOMB;
		s->ptr = NULL;
		live--;
	}
}

void objs_set(uint64_t id, enum obj_kind kind, void *ptr)
{
	struct slot *s = find(id);

	if (s) {
		s->kind = kind;
		s->ptr = ptr;
	}
}

void *objs_get(uint64_t id, enum obj_kind kind)
{
	struct slot *s = find(id);

	return s && s->kind == kind ? s->ptr : NULL;
}

enum obj_kind objs_kind(uint64_t id)
{
	struct slot *s = find(id);

	return s ? s->kind : OBJ_NONE;
}
