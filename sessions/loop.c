/*
 * loop.c - the epoll loop. One thread owns all state, so nothing locks.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "loop.h"

static int64_t loop_now_us(void);
static int epfd = -1;
static bool stopping;
static void (*idle_fn)(void);
static bool (*quiet_fn)(void);
/* The batch being dispatched, so that loop_del can drop pending events of
 * a watch that is going away (its memory may be freed right after). */
#define LOOP_SPIN_US 1000

static struct epoll_event batch[64];
static int batch_pos, batch_len;

int loop_init(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -errno : 0;
}

static int ctl(int op, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(epfd, op, w->fd, &ev) < 0 ? -errno : 0;
}

int loop_add(struct loop_watch *w, uint32_t events)
{
	return ctl(EPOLL_CTL_ADD, w, events);
}

int loop_mod(struct loop_watch *w, uint32_t events)
{
	return ctl(EPOLL_CTL_MOD, w, events);
}

void loop_del(struct loop_watch *w)
{
	if (w->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	for (int i = batch_pos + 1; i < batch_len; i++)
		if (batch[i].data.ptr == w)
			batch[i].data.ptr = NULL;
}

void loop_set_idle(void (*fn)(void))
{
	idle_fn = fn;
}

void loop_set_quiet(bool (*fn)(void))
{
	quiet_fn = fn;
}

void loop_stop(void)
{
	stopping = true;
}

int loop_run(void)
{
	int64_t busy_until = 0;

	while (!stopping) {
		/* Poll without sleeping for a short while after work: on VMs
		 * a wakeup from epoll_wait costs hundreds of microseconds,
		 * and a command round trip is a chain of such wakeups. */
		bool spin = loop_now_us() < busy_until;
		int n;

		while (!spin && quiet_fn && quiet_fn())
			; /* all of them before sleeping */
		n = epoll_wait(epfd, batch, 64, spin ? 0 : -1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && quiet_fn)
			quiet_fn();
		batch_len = n;
		for (batch_pos = 0; batch_pos < n; batch_pos++) {
			struct loop_watch *w = batch[batch_pos].data.ptr;

			if (w)
				w->fn(w, batch[batch_pos].events);
		}
		batch_len = 0;
		if (idle_fn)
			idle_fn();
		if (n > 0)
			busy_until = loop_now_us() + LOOP_SPIN_US;
	}
	return 0;
}

static int64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t loop_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t loop_now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int64_t loop_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}
