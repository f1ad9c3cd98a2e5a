/* pump.h - driving the daemon's loop in a unit test that links it: run
 * it until a condition holds or a time is up. One run at a time. */
#ifndef SFS_UNIT_PUMP_H
#define SFS_UNIT_PUMP_H

#include <check.h>
#include <stdbool.h>
#include "sessions/core/loop.h"

static bool (*pump_until)(void *);
static void *pump_arg;
static bool pump_timed_out;
static struct loop_timer pump_guard;

static void pump_on_guard(struct loop_timer *t)
{
	(void)t;
	pump_timed_out = true;
}

static void pump_on_idle(void)
{
	if (pump_timed_out || pump_until(pump_arg))
		loop_stop();
}

/* Runs the loop until cond(arg) holds or ms pass; returns cond(arg). */
static inline bool pump(bool (*cond)(void *), void *arg, int ms)
{
	if (cond(arg))
		return true;
	pump_until = cond;
	pump_arg = arg;
	pump_timed_out = false;
	loop_timer_add(&pump_guard, loop_now_ms() + ms, pump_on_guard, NULL);
	loop_set_idle(pump_on_idle);
	ck_assert_int_eq(loop_run(), 0);
	loop_timer_del(&pump_guard);
	return cond(arg);
}

#endif
