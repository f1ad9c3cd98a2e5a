/*
 * loop.c - the epoll loop and its timers. One thread owns all state, so
 * nothing locks.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/loop.h"

static int epfd = -1;
static bool stopping;
static void (*idle_fn)(void);
static bool (*quiet_fn)(void);
/* The batch being dispatched, so that loop_del can drop pending events of
 * a watch that is going away (its memory may be freed right after). */
static struct epoll_event batch[64];
static int batch_pos, batch_len;
/* Handled before the other events of its batch (loop_add_first). */
static struct loop_watch *first_w;

/* Armed timers, soonest first, and the deadline the timerfd is set to
 * (0: none): it is set again only when that moves, since a system call
 * per event adds up. */
static struct list timers = LIST_INIT(timers);
static struct loop_watch timer_w = { .fd = -1 };
static int64_t timer_armed;
static bool in_timers; /* dispatching: set the timerfd once, after */

static void on_timer(struct loop_watch *w, uint32_t events);

/* When loop_init ran (monotonic ms): the health files' uptime. */
static int64_t started_ms;

int64_t loop_started_ms(void)
{
	return started_ms;
}

void loop_set_started_ms(int64_t ms)
{
	if (ms > 0 && ms <= loop_now_ms())
		started_ms = ms;
}

int loop_init(void)
{
	started_ms = loop_now_ms();
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	timer_w.fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	timer_w.fn = on_timer;
	return timer_w.fd < 0 ? -errno : loop_add(&timer_w, EPOLLIN);
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

int loop_add_first(struct loop_watch *w, uint32_t events)
{
	first_w = w;
	return loop_add(w, events);
}

int loop_mod(struct loop_watch *w, uint32_t events)
{
	return ctl(EPOLL_CTL_MOD, w, events);
}

void loop_del(struct loop_watch *w)
{
	if (w == first_w)
		first_w = NULL;
	if (w->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	/* the whole batch: an event before batch_pos may wait for the
	 * second pass of dispatch */
	for (int i = 0; i < batch_len; i++)
		if (batch[i].data.ptr == w)
			batch[i].data.ptr = NULL;
}

/* Sets the timerfd for the soonest timer. */
static void timer_arm(void)
{
	struct itimerspec its = { 0 };
	int64_t t =
		list_empty(&timers) ?
			0 :
			list_entry(timers.next, struct loop_timer, link)->when;

	if (in_timers || t == timer_armed || timer_w.fd < 0)
		return;
	if (t) {
		its.it_value.tv_sec = t / 1000;
		its.it_value.tv_nsec = (t % 1000) * 1000000 + 1;
	}
	if (timerfd_settime(timer_w.fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		timer_armed = t;
}

void loop_timer_add(struct loop_timer *t, int64_t when_ms,
		    void (*fn)(struct loop_timer *t), void *arg)
{
	struct list *l;

	if (t->armed)
		list_del(&t->link);
	l = timers.next;
	while (l != &timers &&
	       list_entry(l, struct loop_timer, link)->when <= when_ms)
		l = l->next;
	t->armed = true;
	t->when = when_ms;
	t->fn = fn;
	t->arg = arg;
	list_add_tail(l, &t->link); /* before l */
	timer_arm();
}

void loop_timer_del(struct loop_timer *t)
{
	if (!t->armed)
		return;
	t->armed = false;
	list_del(&t->link);
	timer_arm();
}

/* Calls every timer that is due. Those due are set apart first, so that
 * one that arms itself again for a moment already past waits for the
 * next round instead of spinning here. */
static void on_timer(struct loop_watch *w, uint32_t events)
{
	struct list due = LIST_INIT(due);
	int64_t now = loop_now_ms();
	uint64_t ticks;

	(void)events;
	if (read(w->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_msg(LOG_DEBUG, "timerfd: %m");
	timer_armed = 0; /* it fired, so it is disarmed */
	while (!list_empty(&timers) &&
	       list_entry(timers.next, struct loop_timer, link)->when <= now) {
		struct list *l = timers.next;

		list_del(l);
		list_add_tail(&due, l);
	}
	in_timers = true;
	while (!list_empty(&due)) {
		struct loop_timer *t =
			list_entry(due.next, struct loop_timer, link);

		t->armed = false;
		list_del(&t->link);
		t->fn(t);
	}
	in_timers = false;
	timer_arm();
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

/* Calls the handler of the batch's event of the first watch, or those of
 * the others. */
static void dispatch(bool first)
{
	for (batch_pos = 0; batch_pos < batch_len; batch_pos++) {
		struct loop_watch *w = batch[batch_pos].data.ptr;

		if (w && (w == first_w) == first)
			w->fn(w, batch[batch_pos].events);
	}
}

/* Sleeps only when the quiet hook has nothing left: its chores go one
 * piece at a time, each after a look for events, so that a request that
 * comes meanwhile waits for one piece at most. It never polls without
 * sleeping: on a machine with few CPUs, a process that polls holds off
 * whoever is woken on its CPU (a pipe's write puts the woken reader
 * there) for as long as it polls, which cost ~1 ms per run after idle
 * time when the loop polled for 1 ms after every event (tests/bench/RESULTS.md). */
int loop_run(void)
{
	bool chores = true;

	while (!stopping) {
		int n = epoll_wait(epfd, batch, 64, chores ? 0 : -1);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0) {
			chores = chores && quiet_fn && quiet_fn();
			continue;
		}
		batch_len = n;
		dispatch(true);
		dispatch(false);
		batch_len = 0;
		if (idle_fn)
			idle_fn();
		chores = true;
	}
	stopping = false; /* loop_stop ends this loop_run only (unit tests
			   * run the loop again and again) */
	return 0;
}

static int64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t loop_now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int64_t loop_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}
