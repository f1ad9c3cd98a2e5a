/*
 * files_settle.c - a run's end is told once files/ shows what it changed.
 *
 * A session writes the workspace directly, and fanotify reports its
 * changes asynchronously: a client reading files/ as soon as the close
 * of cmd (or a read of exit) returned could see a name, a size or a page
 * from before the run. So when a run ends, the loop first reads what
 * fanotify has queued (the run's changes are in it: fanotify queues an
 * event inside the system call that makes the change, before the run's
 * shell reports its end), and what is parked on the run is woken once
 * the notifier thread has sent every invalidation queued. The thread is
 * polled each millisecond, for SETTLE_MAX_MS at most: a notification
 * that waits for a lock some process holds must not hold the run's end
 * forever; the change is then seen within the window sessionfs(7)
 * states. The cost when nothing was queued is one read of fanotify's
 * descriptor at each end of a run.
 */
#include <stdlib.h>
#include "sessions/core/list.h"
#include "sessions/core/loop.h"
#include "files_inval.h"
#include "files_settle.h"
#include "files_watch.h"
#include "park.h"

#define SETTLE_MAX_MS  100
#define SETTLE_POLL_MS 1

struct waiting {
	struct list link;
	struct run *r; /* a reference */
	int64_t until;
};

static struct list waiting = LIST_INIT(waiting);
static struct loop_timer tick;

/* Wakes what is parked on w's run, and forgets w. */
static void wake(struct waiting *w)
{
	list_del(&w->link);
	park_wake(w->r);
	run_unref(w->r);
	free(w);
}

static void on_tick(struct loop_timer *t)
{
	bool idle = finval_idle();
	int64_t now = loop_now_ms();
	struct list *l, *n;

	(void)t;
	list_for_each_safe (l, n, &waiting) {
		struct waiting *w = list_entry(l, struct waiting, link);

		if (idle || now >= w->until)
			wake(w);
	}
	if (!list_empty(&waiting))
		loop_timer_add(&tick, now + SETTLE_POLL_MS, on_tick, NULL);
}

void fsettle_run_changed(struct run *r)
{
	struct waiting *w;

	if (run_active(r) || !fwatch_on) {
		park_wake(r);
		return;
	}
	fwatch_drain();
	if (finval_idle() || !(w = malloc(sizeof(*w)))) {
		park_wake(r);
		return;
	}
	run_ref(r);
	w->r = r;
	w->until = loop_now_ms() + SETTLE_MAX_MS;
	list_add_tail(&waiting, &w->link);
	if (!tick.armed)
		loop_timer_add(&tick, loop_now_ms() + SETTLE_POLL_MS, on_tick,
			       NULL);
}

void fsettle_fini(void)
{
	loop_timer_del(&tick);
	while (!list_empty(&waiting))
		wake(list_entry(waiting.next, struct waiting, link));
}
