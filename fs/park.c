/*
 * park.c - parked replies and their interruption.
 *
 * libfuse calls the interrupt function from inside request processing;
 * the request is only moved to a list there and answered afterwards, so
 * no reply is sent while libfuse holds the request's lock. A signal to a
 * process blocked in a FUSE request (SIGINT, SIGTERM, SIGKILL: the kernel
 * sends INTERRUPT, and for a FLUSH waits for the answer whatever the
 * signal) is seen here only as that interrupt.
 *
 * Held env/ requests are kept here, in one list tagged with their
 * session's id: there are few (they wait well under a millisecond), and
 * the session layer only says when a session's variables are known.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "park.h"

static struct list interrupted = LIST_INIT(interrupted);
static struct list held = LIST_INIT(held);

static void on_interrupt(fuse_req_t req, void *data)
{
	struct park *p = data;

	(void)req;
	list_del(&p->link);
	list_add_tail(&interrupted, &p->link);
}

static void park_free(struct park *p)
{
	free(p->name);
	free((char *)p->data);
	free(p);
}

/* A copy of *how (with its data) in list l, interruptible when it has a
 * request. */
static struct park *park_in(struct list *l, const struct park *how)
{
	struct park *p = malloc(sizeof(*p));
	char *data = how->data ? malloc(how->size ? how->size : 1) : NULL;

	if (!p || (how->data && !data)) {
		free(p);
		free(data);
		return NULL;
	}
	*p = *how;
	p->name = NULL;
	if (data)
		p->data = memcpy(data, how->data, how->size);
	list_add_tail(l, &p->link);
	if (p->req)
		fuse_req_interrupt_func(p->req, on_interrupt, p);
	return p;
}

struct park *park_add(struct list *waiters, const struct park *how)
{
	return park_in(waiters, how);
}

void park_wake_list(struct list *waiters)
{
	struct list *l, *n;

	list_for_each_safe (l, n, waiters) {
		struct park *p = list_entry(l, struct park, link);

		if (p->retry(p)) {
			list_del(&p->link);
			park_free(p);
		}
	}
}

void park_wake(struct run *r)
{
	park_wake_list(&r->waiters);
}

void park_reply_write(const struct park *p, int rc)
{
	if (rc < 0)
		fuse_reply_err(p->req, -rc);
	else
		fuse_reply_write(p->req, p->size);
}

void park_cancel(struct park *p)
{
	list_del(&p->link);
	park_free(p);
}

bool park_hold(const struct park *how, const char *name)
{
	char *copy = name ? strdup(name) : NULL;
	struct park *p;

	if (name && !copy)
		return false;
	/* in the list before the interrupt function can be called */
	p = park_in(&held, how);
	if (!p) {
		free(copy);
		return false;
	}
	p->name = copy;
	return true;
}

/* Does again the held requests of session s, or (s NULL) those of
 * sessions that are gone. */
static void release(const struct sess *s)
{
	struct list ready = LIST_INIT(ready), *l, *n;

	list_for_each_safe (l, n, &held) {
		struct park *p = list_entry(l, struct park, link);

		if (s ? p->sid == s->id : !sess_get(p->sid)) {
			list_del(&p->link);
			list_add_tail(&ready, &p->link);
		}
	}
	while (!list_empty(&ready)) {
		struct park *p = list_entry(ready.next, struct park, link);

		list_del(&p->link);
		p->retry(p);
		park_free(p);
	}
}

void park_env_ready(struct sess *s)
{
	release(s);
}

void park_idle(void)
{
	while (!list_empty(&interrupted)) {
		struct park *p =
			list_entry(interrupted.next, struct park, link);

		list_del(&p->link);
		/* before the reply: p->fh lives until the release after it */
		if (p->interrupted)
			p->interrupted(p);
		fuse_reply_err(p->req, EINTR);
		park_free(p);
	}
	if (!list_empty(&held))
		release(NULL);
}
