/*
 * part.c - a session's parts: the list each part joins, and the session's
 * operations on all of them (part.h).
 */
#include <stddef.h>
#include "sessions/session/part.h"
#include "sessions/session/sess.h"

typedef void part_fn(struct sess_part *p);
typedef bool part_test(const struct sess_part *p);

/* The operation at offset off of the ops table, on every part of s that
 * has it. The next part is taken first: an operation may end its part. */
static void each(struct sess *s, size_t off)
{
	struct list *l, *n;

	list_for_each_safe(l, n, &s->parts) {
		struct sess_part *p = list_entry(l, struct sess_part, link);
		part_fn *fn = *(part_fn *const *)((const char *)p->ops + off);

		if (fn)
			fn(p);
	}
}

/* Whether the test at offset off holds for some part of s. */
static bool any(const struct sess *s, size_t off)
{
	for (const struct list *l = s->parts.next; l != &s->parts;
	     l = l->next) {
		const struct sess_part *p =
			list_entry(l, struct sess_part, link);
		part_test *t = *(part_test *const *)((const char *)p->ops + off);

		if (t && t(p))
			return true;
	}
	return false;
}

void sess_part_add(struct sess *s, struct sess_part *p,
		   const struct sess_part_ops *ops)
{
	p->ops = ops;
	list_add_tail(&s->parts, &p->link);
}

void sess_part_del(struct sess_part *p)
{
	list_del(&p->link);
}

void sess_parts_hangup(struct sess *s)
{
	each(s, offsetof(struct sess_part_ops, hangup));
}

void sess_parts_stop(struct sess *s)
{
	each(s, offsetof(struct sess_part_ops, stop));
}

void sess_parts_kill(struct sess *s)
{
	each(s, offsetof(struct sess_part_ops, kill));
}

bool sess_parts_alive(const struct sess *s)
{
	return any(s, offsetof(struct sess_part_ops, alive));
}

bool sess_parts_busy(const struct sess *s)
{
	return any(s, offsetof(struct sess_part_ops, busy));
}

/* Each part leaves the list before it is freed, oldest first. */
void sess_parts_free(struct sess *s)
{
	while (!list_empty(&s->parts)) {
		struct sess_part *p =
			list_entry(s->parts.next, struct sess_part, link);

		list_del(&p->link);
		p->ops->free(p);
	}
}

/* The kinds of parts: a terminal and a code context. */
#define KINDS_MAX 8
static const struct sess_part_kind *kinds[KINDS_MAX];
static unsigned nkinds;

void sess_part_kind_add(const struct sess_part_kind *k)
{
	for (unsigned i = 0; i < nkinds; i++)
		if (kinds[i] == k)
			return;
	if (nkinds < KINDS_MAX)
		kinds[nkinds++] = k;
}

const struct sess_part_kind *sess_part_kind_of(uint16_t key)
{
	for (unsigned i = 0; i < nkinds; i++)
		if (kinds[i]->key == key)
			return kinds[i];
	return NULL;
}

void sess_parts_save(struct sess *s, struct state_w *w)
{
	for (struct list *l = s->parts.next; l != &s->parts; l = l->next) {
		struct sess_part *p = list_entry(l, struct sess_part, link);

		if (p->ops->save)
			p->ops->save(p, w);
	}
}
