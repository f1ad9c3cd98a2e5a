/*
 * park.c - parked replies and their interruption.
 *
 * libfuse calls the interrupt function from inside request processing;
 * the request is only moved to a list there and answered afterwards, so
 * no reply is sent while libfuse holds the request's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include "park.h"

static struct list interrupted = LIST_INIT(interrupted);

static void on_interrupt(fuse_req_t req, void *data)
{
	struct park *p = data;

	(void)req;
	list_del(&p->link);
	list_add_tail(&interrupted, &p->link);
}

struct park *park_add(struct run *r, const struct park *how)
{
	struct park *p = malloc(sizeof(*p));

	if (!p)
		return NULL;
	*p = *how;
	list_add_tail(&r->waiters, &p->link);
	if (p->req)
		fuse_req_interrupt_func(p->req, on_interrupt, p);
	return p;
}

void park_wake(struct run *r)
{
	struct list *l, *n;

	list_for_each_safe (l, n, &r->waiters) {
		struct park *p = list_entry(l, struct park, link);

		if (p->retry(p)) {
			list_del(&p->link);
			free(p);
		}
	}
}

void park_cancel(struct park *p)
{
	list_del(&p->link);
	free(p);
}

void park_idle(void)
{
	while (!list_empty(&interrupted)) {
		struct park *p =
			list_entry(interrupted.next, struct park, link);

		list_del(&p->link);
		fuse_reply_err(p->req, EINTR);
		free(p);
	}
}
