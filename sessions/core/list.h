/*
 * list.h - a minimal intrusive doubly linked list (kernel style).
 * Owns nothing: the structures that embed a struct list own their memory.
 */
#ifndef SFS_LIST_H
#define SFS_LIST_H

#include <stddef.h>
#include <stdbool.h>

struct list {
	struct list *prev, *next;
};

#define LIST_INIT(name)                                                        \
	{                                                                      \
		&(name), &(name)                                               \
	}
#define list_entry(ptr, type, member)                                          \
	((type *)((char *)(ptr)-offsetof(type, member)))
#define list_for_each_safe(pos, n, head)                                       \
	for (pos = (head)->next, n = pos->next; pos != (head);                 \
	     pos = n, n = pos->next)

static inline void list_init(struct list *l)
{
	l->prev = l->next = l;
}

static inline bool list_empty(const struct list *l)
{
	return l->next == l;
}

static inline void list_add_tail(struct list *head, struct list *e)
{
	e->prev = head->prev;
	e->next = head;
	head->prev->next = e;
	head->prev = e;
}

static inline void list_del(struct list *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	list_init(e);
}

#endif
