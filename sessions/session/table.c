/*
 * table.c - the sessions that exist: their list, lookups (by id, and by
 * name through a hash of the names: a walk of the list compared every
 * name, most of the daemon's time with 1,000 sessions) and iteration.
 */
#include <stdint.h>
#include <string.h>
#include "sessions/core/objs.h"
#include "sessions/session/sess.h"
#include "sessions/session/table.h"

#define NBUCKETS 4096 /* a power of two */

static struct list sessions = LIST_INIT(sessions);
static unsigned nsess;
static struct sess *bucket[NBUCKETS];

/* FNV-1a of the name. */
static struct sess **bucket_of(const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return &bucket[h & (NBUCKETS - 1)];
}

void table_add(struct sess *s)
{
	struct sess **b = bucket_of(s->name);

	list_add_tail(&sessions, &s->link);
	s->name_next = *b;
	*b = s;
	nsess++;
}

void table_del(struct sess *s)
{
	struct sess **p = bucket_of(s->name);

	while (*p && *p != s)
		p = &(*p)->name_next;
	if (*p)
		*p = s->name_next;
	list_del(&s->link);
	nsess--;
}

struct sess *sess_first(void)
{
	return list_empty(&sessions) ?
		       NULL :
		       list_entry(sessions.next, struct sess, link);
}

struct sess *sess_next(struct sess *s)
{
	return s->link.next == &sessions ?
		       NULL :
		       list_entry(s->link.next, struct sess, link);
}

unsigned sess_count(void)
{
	return nsess;
}

/* Names are unique in the table: sess_create refuses a name that is
 * there, even a dying session's. */
struct sess *sess_find(const char *name)
{
	for (struct sess *s = *bucket_of(name); s; s = s->name_next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct sess *sess_get(uint64_t id)
{
	return objs_get(id, OBJ_SESS);
}
