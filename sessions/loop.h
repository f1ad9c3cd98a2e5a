/*
 * loop.h - the one epoll loop that owns every descriptor of the daemon:
 * /dev/fuse, the shells' pipes, child exits and timers.
 */
#ifndef SFS_LOOP_H
#define SFS_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop_watch {
	int fd;
	void (*fn)(struct loop_watch *w, uint32_t events);
	void *arg;
};

int loop_init(void);
/* Watches w->fd for events (EPOLLIN...); w must live until loop_del. */
int loop_add(struct loop_watch *w, uint32_t events);
int loop_mod(struct loop_watch *w, uint32_t events);
void loop_del(struct loop_watch *w);
/* Runs until loop_stop; returns 0 or a negative errno. */
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

#endif
