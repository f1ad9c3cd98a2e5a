/*
 * kill.c - ending a session's active run (kill, timeout): the abort
 * signal to the shell, the signal to the session's other processes, KILL
 * after the grace, a stuck shell replaced; the processes a run or a dead
 * shell left behind (sweeps); and killall over every session.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include "conf/conf.h"
#include "sessions/session/kill.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"

/* How long a killed run may stay in the shell once its processes are
 * gone before the shell is deemed stuck in builtins and replaced. */
#define SHELL_STUCK_MS 250
/* How often a kill looks whether only the shell is left. */
#define KILL_POLL_MS 50

/* Writers of `killall` to the root ctl, answered when nothing runs. */
struct killall_wait {
	void (*cb)(void *);
	void *arg;
	struct killall_wait *next;
};
static struct killall_wait *killall_waits;
/* Looks again whether killall is done: a leftover that is the idle
 * shell's child is reaped by the shell, and its exit never reaches us. */
static struct loop_timer killall_timer;

/* Processes of a session signalled at one moment, KILLed at `at` if they
 * are still in the session then. Only those: a run started meanwhile is
 * not theirs to end. */
struct sweep {
	struct list link;
	struct loop_timer timer;
	uint64_t sid;
	struct contain_pids pids;
};
static struct list sweeps = LIST_INIT(sweeps);

static void sweep_free(struct sweep *w)
{
	loop_timer_del(&w->timer);
	list_del(&w->link);
	free(w->pids.pid);
	free(w);
}

static bool listed(const struct contain_pids *l, pid_t pid)
{
	for (int i = 0; i < l->n; i++)
		if (l->pid[i] == pid)
			return true;
	return false;
}

/* KILL to the listed processes that are still in their session. */
static void sweep_end(struct sweep *w)
{
	struct sess *s = sess_get(w->sid);
	struct contain_pids now = { 0 };

	/* (a session that is gone took its processes along) */
	if (s)
		contain_pids(&s->cg, s->pid, &now);
	for (int i = 0; i < now.n; i++)
		if (listed(&w->pids, now.pid[i]))
			kill(now.pid[i], SIGKILL);
	free(now.pid);
	sweep_free(w);
}

static void on_sweep(struct loop_timer *t)
{
	sweep_end(t->arg);
}

/* Sends sig to every process of s but its shell; those still there at
 * `at` get KILL (at once when at is now or past, or sig is KILL).
 * Returns how many were signalled. */
static int sweep(struct sess *s, int sig, int64_t at)
{
	struct sweep *w = calloc(1, sizeof(*w));
	int n;

	if (!w || contain_pids(&s->cg, s->pid, &w->pids) == 0) {
		if (w)
			free(w->pids.pid);
		free(w);
		return 0;
	}
	n = 0;
	for (int i = 0; i < w->pids.n; i++)
		n += kill(w->pids.pid[i], sig) == 0;
	w->sid = s->id;
	list_add_tail(&sweeps, &w->link);
	if (sig == SIGKILL || at <= loop_now_ms())
		sweep_end(w);
	else
		loop_timer_add(&w->timer, at, on_sweep, w);
	return n;
}

int kill_leftovers(struct sess *s, int sig)
{
	return sweep(s, sig, loop_now_ms() + (int64_t)conf.kill_grace_ms);
}

void kill_run_ended(struct sess *s)
{
	/* what outlived the kill's signal gets KILL when it was due */
	if (s->kill_stage == 1)
		sweep(s, 0, s->kill_at);
	else if (s->kill_stage)
		sweep(s, SIGKILL, 0);
}

void kill_fini(void)
{
	while (!list_empty(&sweeps))
		sweep_free(list_entry(sweeps.next, struct sweep, link));
}

int sess_kill_run(struct sess *s, int sig, enum run_end end)
{
	struct run *r = s->active;
	int n;

	if (!r || r->state != RUN_RUNNING) {
		/* background jobs of earlier runs are the session's too */
		n = kill_leftovers(s, sig);
		if (n > 0)
			sess_error(s,
				   "kill -%d of %d processes left by "
				   "earlier runs",
				   sig, n);
		return -ESRCH;
	}
	if (r->end == END_NONE) {
		r->end = end;
		r->sig = sig;
	}
	if (s->pid) /* the run named: it may not have begun in the shell */
		sigqueue(s->pid, SHELL_ABORT_SIG,
			 (union sigval){ .sival_ptr =
						 (void *)(uintptr_t)r->id });
	contain_signal(&s->cg, sig, s->pid);
	if (s->kill_stage == 0)
		s->kill_began = loop_now_ms();
	if (s->kill_stage == 0 || sig == SIGKILL) {
		s->kill_stage = sig == SIGKILL ? 2 : 1;
		s->kill_at = loop_now_ms() + (int64_t)conf.kill_grace_ms;
	}
	kill_arm(s);
	return 0;
}

/* Timeouts and the escalation of kills of the active run. */
static void run_timers(struct sess *s, int64_t now)
{
	struct run *r = s->active;

	if (!r || r->state != RUN_RUNNING)
		return;
	if (r->deadline && now >= r->deadline && s->kill_stage == 0) {
		sess_error(s, "run %s timed out after %llu ms", r->name,
			   (unsigned long long)r->eff_timeout_ms);
		sess_kill_run(s, SIGTERM, END_TIMEDOUT);
	} else if (s->kill_stage == 1 && now >= s->kill_at) {
		sess_error(s, "run %s outlived signal %d by %llu ms: SIGKILL",
			   r->name, r->sig,
			   (unsigned long long)conf.kill_grace_ms);
		sess_kill_run(s, SIGKILL, r->end);
	} else if ((s->kill_stage == 1 || s->kill_stage == 2) && s->pid &&
		   (now >= s->kill_at ||
		    (now - s->kill_began >= SHELL_STUCK_MS &&
		     contain_signal(&s->cg, 0, s->pid) == 0))) {
		/* Only the shell is left and it is still in the command:
		 * a loop of builtins inside a function does not notice
		 * the abort trap. */
		sess_error(s,
			   "run %s: the shell does not let go; restarting "
			   "it",
			   r->name);
		kill(s->pid, SIGKILL);
		s->kill_stage = 3;
	}
}

static void on_run_timer(struct loop_timer *t)
{
	struct sess *s = t->arg;

	run_timers(s, loop_now_ms());
	kill_arm(s);
}

void kill_arm(struct sess *s)
{
	int64_t t = 0, poll = loop_now_ms() + KILL_POLL_MS;

	if (s->kill_stage == 1 || s->kill_stage == 2)
		t = s->kill_at < poll ? s->kill_at : poll;
	else if (s->active && s->active->state == RUN_RUNNING)
		t = s->active->deadline;
	if (!t)
		loop_timer_del(&s->run_timer);
	else if (!s->run_timer.armed || s->run_timer.when != t)
		loop_timer_add(&s->run_timer, t, on_run_timer, s);
}

static bool anything_running(void)
{
	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		if (s->active && s->active->state == RUN_RUNNING)
			return true;
		if (contain_signal(&s->cg, 0, s->pid) > 0 || sess_parts_busy(s))
			return true;
		for (struct list *l = s->procs.next; l != &s->procs;
		     l = l->next)
			if (list_entry(l, struct run, link)->state ==
			    RUN_RUNNING)
				return true;
	}
	return false;
}

static void on_killall_timer(struct loop_timer *t)
{
	(void)t;
	killall_check();
}

void killall_check(void)
{
	struct killall_wait *k;

	while (killall_waits && !anything_running()) {
		k = killall_waits;
		killall_waits = k->next;
		k->cb(k->arg);
		free(k);
	}
	if (killall_waits)
		loop_timer_add(&killall_timer, loop_now_ms() + KILL_POLL_MS,
			       on_killall_timer, NULL);
	else
		loop_timer_del(&killall_timer);
}

void sess_killall(void (*cb)(void *), void *arg)
{
	struct killall_wait *k = malloc(sizeof(*k));

	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		sess_kill_run(s, SIGTERM, END_KILLED);
		for (struct list *l = s->procs.next; l != &s->procs;
		     l = l->next)
			proc_signal(list_entry(l, struct run, link), SIGTERM);
		sess_parts_stop(s);
	}
	if (!k) {
		cb(arg);
		return;
	}
	*k = (struct killall_wait){ cb, arg, killall_waits };
	killall_waits = k;
	killall_check();
}
