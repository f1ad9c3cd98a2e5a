/*
 * loop.h - the one epoll loop of the daemon: it watches every descriptor
 * (/dev/fuse, the shells' pipes, the signalfds) and owns the timers, as
 * deadlines with callbacks on one timerfd.
 */
#ifndef SFS_LOOP_H
#define SFS_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include "sessions/core/list.h"

struct loop_watch {
	int fd;
	void (*fn)(struct loop_watch *w, uint32_t events);
	void *arg;
};

/* A deadline, embedded in whatever it is for (zeroed memory is a timer
 * that is not armed). */
struct loop_timer {
	bool armed;
	int64_t when; /* monotonic ms */
	void (*fn)(struct loop_timer *t);
	void *arg;
	struct list link;
};

int loop_init(void);
/* Watches w->fd for events (EPOLLIN...); w must live until loop_del. */
int loop_add(struct loop_watch *w, uint32_t events);
/* Like loop_add, and w's events are handled before the others of their
 * batch (one such watch: /dev/fuse, so that a request waits for no
 * pipe's turn of a writer of much output). */
int loop_add_first(struct loop_watch *w, uint32_t events);
int loop_mod(struct loop_watch *w, uint32_t events);
void loop_del(struct loop_watch *w);
/* Arms t to call fn(t) once, at when_ms (monotonic) or soon after; an
 * armed t moves to the new deadline. t must live until it fires or
 * loop_timer_del. */
void loop_timer_add(struct loop_timer *t, int64_t when_ms,
		    void (*fn)(struct loop_timer *t), void *arg);
/* Disarms t; nothing when it is not armed. */
void loop_timer_del(struct loop_timer *t);
/* Runs until loop_stop (then it may be run again); returns 0 or a
 * negative errno. */
int loop_run(void);
void loop_stop(void);
/* A function called after each batch of events (deferred work). */
void loop_set_idle(void (*fn)(void));
/* A function called when no event is waiting, for chores that must not
 * delay a request: one piece per call, returning whether more is left
 * (it is called again before the loop sleeps). */
void loop_set_quiet(bool (*fn)(void));
/* Monotonic and wall clocks in milliseconds. */
int64_t loop_now_ms(void);
int64_t loop_wall_ms(void);
/* When the loop was made (monotonic ms, as loop_now_ms). */
int64_t loop_started_ms(void);
/* An upgrade's next program: the mount's start, not its own. */
void loop_set_started_ms(int64_t ms);

#endif
