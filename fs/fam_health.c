/*
 * fam_health.c - the root's health and metrics files. Both are counts
 * made when read, of every session: no names, no values, nothing that
 * says whose a session is, so anyone may read them under allow_other.
 */
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_health.h"
#include "files_fd.h"
#include "files_node.h"
#include "files_inval.h"
#include "files_watch.h"
#include "keeper.h"
#include "upgrade.h"
#include "sessions/session/fdq.h"
#include "sessions/core/cpulat.h"
#include "sessions/session/driver.h"
#include "sessions/session/sess.h"
#include "sessions/session/spool.h"

#ifndef SFS_VERSION
#define SFS_VERSION "0"
#endif

/* The states a kept run may be in (run_state_name's words). */
static const char *const states[] = {
	"created",   "queued", "running",  "completed", "failed",
	"timed-out", "killed", "canceled", "error",
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

struct counts {
	unsigned long sessions, procs, running;
	unsigned long by_state[NSTATES];
};

static void count_run(struct counts *c, const struct run *r)
{
	const char *name = run_state_name(r);

	for (size_t i = 0; i < NSTATES; i++)
		if (!strcmp(states[i], name))
			c->by_state[i]++;
	c->running += r->state == RUN_RUNNING;
}

static void count(struct counts *c)
{
	*c = (struct counts){ 0 };
	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		c->sessions++;
		c->procs += s->nprocs;
		for (struct list *l = s->runs.next; l != &s->runs; l = l->next)
			count_run(c, list_entry(l, struct run, link));
	}
}

static char *health_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };
	struct counts c;

	(void)n;
	count(&c);
	sb_addf(&b, "ok\nversion %s\nuptime_s %lld\nsessions %lu\n",
		SFS_VERSION,
		(long long)((loop_now_ms() - loop_started_ms()) / 1000),
		c.sessions);
	sb_addf(&b, "runs_active %lu\n", c.running);
	sb_addf(&b, "pid %ld\nupgrades %lu\nrecoveries %lu\n", (long)getpid(),
		upgrade_count(), keeper_recoveries());
	return sb_take(&b, len);
}

/* One metric with its HELP and TYPE lines and a single value. */
static void metric(struct strbuf *b, const char *name, const char *type,
		   const char *help, unsigned long long v)
{
	sb_addf(b, "# HELP sessionfs_%s %s\n# TYPE sessionfs_%s %s\n", name,
		help, name, type);
	sb_addf(b, "sessionfs_%s %llu\n", name, v);
}

/* files/' caching (fs/files_watch.c): its requests show what it saves. */
static void files_metrics(struct strbuf *b)
{
	metric(b, "files_nodes", "gauge",
	       "Inodes of files/ the kernel remembers.", fnode_count());
	metric(b, "files_node_fds", "gauge",
	       "Descriptors files/'s inodes hold (the others keep a handle).",
	       fnfd_open_count());
	metric(b, "files_node_fds_bound", "gauge",
	       "Descriptors files/'s inodes may hold at most.", fnfd_bound());
	metric(b, "files_handle_opens_total", "counter",
	       "Opens of files/ inodes without a descriptor straight from "
	       "their handles (the daemon's own user's).",
	       fnfd_handle_opens());
	metric(b, "files_cache", "gauge",
	       "Whether files/ caches, kept true by fanotify (1) or not (0).",
	       fwatch_on);
	metric(b, "files_lookups_total", "counter",
	       "Lookups of names in files/ the kernel sent.", fwatch_lookups);
	metric(b, "files_getattrs_total", "counter",
	       "Attribute requests of files/ the kernel sent.",
	       fwatch_getattrs);
	metric(b, "files_readdirs_total", "counter",
	       "Listing requests of files/ the kernel sent.", fwatch_readdirs);
	metric(b, "opendirs_total", "counter",
	       "OPENDIR requests of any directory the kernel sent.",
	       fwatch_opendirs);
	metric(b, "files_invalidations_total", "counter",
	       "Invalidations of files/ sent to the kernel.", finval_sent());
}

static char *metrics_text(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };
	struct counts c;

	(void)n;
	count(&c);
	metric(&b, "uptime_seconds", "gauge", "Seconds since the mount.",
	       (unsigned long long)(loop_now_ms() - loop_started_ms()) / 1000);
	metric(&b, "sessions", "gauge", "Sessions, the default one included.",
	       c.sessions);
	sb_addf(&b, "# HELP sessionfs_runs Runs kept in the sessions' "
		    "histories, by state.\n# TYPE sessionfs_runs gauge\n");
	for (size_t i = 0; i < NSTATES; i++)
		sb_addf(&b, "sessionfs_runs{state=\"%s\"} %lu\n", states[i],
			c.by_state[i]);
	metric(&b, "procs", "gauge", "Background processes kept in procs/.",
	       c.procs);
	metric(&b, "spool_bytes", "gauge", "Output bytes spooled now.",
	       spool_used());
	metric(&b, "spool_budget_bytes", "gauge",
	       "The budget of spooled output bytes (0: no limit).",
	       spool_budget());
	metric(&b, "upgrades_total", "counter",
	       "Upgrades in place this mount has had.", upgrade_count());
	metric(&b, "recoveries_total", "counter",
	       "Restarts of the server after a crash, by the keeper.",
	       keeper_recoveries());
	metric(&b, "shells_restarted_total", "counter",
	       "Shells that died during or between runs, to be started anew.",
	       driver_shells_restarted());
	metric(&b, "refusals_total", "counter",
	       "Refusals recorded in the sessions' error files.",
	       sess_errors_total());
	metric(&b, "fds_held", "gauge",
	       "Descriptors held for users' open files.", fdq_held());
	metric(&b, "fds_per_user", "gauge",
	       "Descriptors one user's open files may hold (max_fds_per_user).",
	       fdq_bound());
	metric(&b, "fds_cut", "gauge",
	       "Descriptor numbers open files may use: the limit less "
	       "fd_reserve.",
	       fdq_cut());
	metric(&b, "fd_refusals_total", "counter",
	       "Opens and reads refused for the descriptor bounds.",
	       fdq_refused());
	metric(&b, "cpu_poll_holds_total", "counter",
	       "Times idle CPUs were asked to poll (cpu_poll_ms).",
	       cpulat_holds());
	files_metrics(&b);
	return sb_take(&b, len);
}

const struct fops fam_health_ops = { .text = health_text };
const struct fops fam_metrics_ops = { .text = metrics_text };
