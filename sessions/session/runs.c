/*
 * runs.c - the queue of a session's runs, one at a time in arrival
 * order, and their history: queuing, handing the next one to the shell
 * driver, ending the active one, keeping at most conf.history.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf/conf.h"
#include "sessions/core/state.h"
#include "sessions/session/chores.h"
#include "sessions/session/driver.h"
#include "sessions/session/kill.h"
#include "sessions/session/output.h"
#include "sessions/session/runopts.h"
#include "sessions/session/runs.h"
#include "sessions/session/sess.h"

struct run *sess_latest(struct sess *s)
{
	for (struct list *l = s->runs.prev; l != &s->runs; l = l->prev) {
		struct run *r = list_entry(l, struct run, link);

		if (r->has_cmd)
			return r;
	}
	return NULL;
}

struct run *sess_run_by_name(struct sess *s, const char *name)
{
	return run_find(&s->runs, name);
}

/* Unlinks the files of r and drops it from the session. */
static void drop_run(struct sess *s, struct run *r)
{
	/* (its fifos went at its end) */
	run_forget_files(r, ~0u, sess_trash, s);
	/* readers parked on a run that never ran get their answer */
	run_finish(r, 128 + SIGTERM, SIGTERM, END_CANCELED);
	list_del(&r->link);
	if (r->no)
		s->nruns--;
	else
		s->nnamed--;
	r->sess = NULL;
	run_unref(r);
}

/* Finished named runs kept: a walk of every run, so done only when the
 * named runs kept could be too many. */
static unsigned named_done(struct sess *s)
{
	unsigned named = 0;

	if (s->nnamed <= conf.history)
		return 0; /* however many finished, not too many */
	for (struct list *p = s->runs.next; p != &s->runs; p = p->next) {
		struct run *r = list_entry(p, struct run, link);

		if (!r->no && r->state == RUN_DONE)
			named++;
	}
	return named;
}

/* Keeps at most conf.history finished numbered runs, and apart from
 * them at most conf.history finished named runs, dropping the oldest
 * first (a named run does not push numbered ones out, nor they it). It
 * runs at the end of every run, before its close is answered: the usual
 * case (nothing or the oldest run to drop) looks at one run, not at the
 * whole history. */
static void trim_history(struct sess *s)
{
	struct list *p, *n;
	unsigned named = named_done(s);

	list_for_each_safe (p, n, &s->runs) {
		struct run *r = list_entry(p, struct run, link);

		if (s->nruns <= conf.history && named <= conf.history)
			break;
		if (r->state != RUN_DONE)
			continue;
		if (r->no && s->nruns > conf.history) {
			drop_run(s, r);
		} else if (!r->no && named > conf.history) {
			named--;
			drop_run(s, r);
		}
	}
}

/* Adds a run without a command to s's history. */
static struct run *add_run(struct sess *s, const char *name, unsigned no)
{
	struct run *r = run_new_empty();

	if (!r)
		return NULL;
	r->name = strdup(name);
	if (!r->name) {
		run_unref(r);
		return NULL;
	}
	r->no = no;
	r->sess = s;
	list_add_tail(&s->runs, &r->link);
	if (no)
		s->nruns++;
	else
		s->nnamed++;
	return r;
}

/* Ends the active run with this status. Its waiters are answered before
 * the cleaning up, which is off the path of the close of cmd. */
static void finish_active(struct sess *s, int code, int sig)
{
	struct run *r = s->active;

	output_close(r, &r->pipe_o);
	output_close(r, &r->pipe_e);
	if (r->end == END_TIMEDOUT)
		code = 124;
	else if (r->end == END_KILLED)
		code = 128 + r->sig;
	kill_run_ended(s);
	s->active = NULL;
	s->kill_stage = 0;
	if (s->reset) {
		s->reset = false;
		driver_retire(s);
	}
	run_finish(r, code, r->end == END_KILLED ? r->sig : sig,
		   r->end == END_NONE ? END_EXITED : r->end);
	if (r->fifo_gen)
		chores_trash_fifos(s, r->fifo_gen);
	run_forget_files(r, RUN_F_PRE | RUN_F_OPT | RUN_F_IN, sess_trash, s);
	runopts_done(r);
	trim_history(s);
	killall_check();
	kill_arm(s);
}

/* Starts the next runs while the shell is free. */
static void kick(struct sess *s)
{
	if (!list_empty(&s->queue))
		sess_hurry_env(s); /* the next run waits for the variables */
	while (!s->active && !s->dying && !s->env_pending &&
	       !list_empty(&s->queue)) {
		struct run *r = list_entry(s->queue.next, struct run, qlink);
		int rc;

		list_del(&r->qlink);
		rc = driver_start(s, r);
		if (rc < 0) {
			sess_error(s, "run %s could not start: %s", r->name,
				   strerror(-rc));
			r->start_err = -rc;
			finish_active(s, 126, 0);
		}
	}
	kill_arm(s);
}

void runs_resume(struct sess *s)
{
	if (s->active && !s->pid) {
		sess_error(s,
			   "run %s: its shell was lost by a restart of "
			   "sessionfs; the next run gets a new one",
			   s->active->name);
		output_recover(s->active);
		s->active->end = END_ERROR;
		finish_active(s, RUN_EXIT_LOST, 0);
	}
	kick(s);
}

void runs_init(void)
{
	driver_init(finish_active, kick);
}

int sess_queue_run(struct sess *s, struct run *r, const char *text, size_t len)
{
	state_touch();
	int rc;

	if (r->has_cmd)
		return -EBUSY;
	if (s->dying || r->sess != s)
		return -ENOENT; /* deleted while its cmd was open */
	rc = run_set_cmd(r, s->dirfd, text, len);
	if (rc < 0)
		return rc;
	r->has_cmd = true;
	r->queued_wall = loop_wall_ms();
	list_add_tail(&s->queue, &r->qlink);
	trim_history(s);
	kick(s);
	return 0;
}

/* A run whose command could not be kept (a full spool) stays in the
 * history as the newest, ended with state error and exit 126, so that
 * the session's files never show the run before it as this one. */
static void fail_queue(struct sess *s, struct run *r, int err)
{
	sess_error(s, "run %s: cannot queue the command: %s", r->name,
		   strerror(err));
	r->has_cmd = true;
	r->start_err = err;
	r->queued_wall = r->started_wall = loop_wall_ms();
	run_finish(r, 126, 0, END_ERROR);
	trim_history(s);
}

struct run *sess_submit(struct sess *s, const char *text, size_t len, int *err)
{
	state_touch();
	struct run *r;
	char no[24];

	if (s->dying) {
		*err = -ENOENT;
		return NULL;
	}
	snprintf(no, sizeof(no), "%u", s->next_no + 1);
	r = add_run(s, no, s->next_no + 1);
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	s->next_no++;
	*err = sess_queue_run(s, r, text, len);
	if (*err < 0)
		fail_queue(s, r, -*err);
	return r;
}

int sess_new_run(struct sess *s, const char *name, struct run **out)
{
	state_touch();
	int rc = sess_child_name(s, "runs", name, sess_run_by_name(s, name));

	if (rc < 0)
		return rc;
	*out = add_run(s, name, 0);
	return *out ? 0 : -ENOMEM;
}

int sess_remove_run(struct sess *s, struct run *r)
{
	state_touch();
	if (r->state == RUN_RUNNING || (r->state == RUN_QUEUED && r->has_cmd))
		return -EBUSY;
	drop_run(s, r);
	return 0;
}

void runs_cancel_queued(struct sess *s)
{
	struct list *p, *n;

	list_for_each_safe (p, n, &s->queue) {
		struct run *r = list_entry(p, struct run, qlink);

		list_del(&r->qlink);
		run_finish(r, 128 + SIGTERM, SIGTERM, END_CANCELED);
	}
}

int sess_interrupt_run(struct sess *s, struct run *r)
{
	if (r->state == RUN_QUEUED && r->has_cmd && r->sess == s) {
		list_del(&r->qlink);
		sess_error(s, "run %s: its writer was interrupted; canceled",
			   r->name);
		run_finish(r, 128 + SIGINT, SIGINT, END_CANCELED);
		return 0;
	}
	if (r != s->active || r->state != RUN_RUNNING)
		return -ESRCH;
	sess_error(s, "run %s: its writer was interrupted; kill -%d", r->name,
		   SIGINT);
	return sess_kill_run(s, SIGINT, END_KILLED);
}

void runs_free_all(struct sess *s)
{
	struct list *p, *n;

	list_for_each_safe (p, n, &s->runs) {
		struct run *r = list_entry(p, struct run, link);

		run_finish(r, 128 + SIGTERM, SIGTERM, END_CANCELED);
		list_del(&r->link);
		r->sess = NULL;
		run_unref(r);
	}
}
