/*
 * table.c - the sessions that exist: their list, lookups and iteration.
 */
#include <string.h>
#include "objs.h"
#include "sess.h"
#include "table.h"

static struct list sessions = LIST_INIT(sessions);
static unsigned nsess;

void table_add(struct sess *s)
{
	list_add_tail(&sessions, &s->link);
	nsess++;
}

void table_del(struct sess *s)
{
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

struct sess *sess_find(const char *name)
{
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct sess *sess_get(uint64_t id)
{
	return objs_get(id, OBJ_SESS);
}
