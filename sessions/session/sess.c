/*
 * sess.c - the life of a session: the session layer's start and end,
 * creating a session, and deleting it (its processes ended with TERM,
 * then KILL after the grace, then everything of it freed).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/session/chores.h"
#include "sessions/session/driver.h"
#include "sessions/session/env.h"
#include "sessions/session/kill.h"
#include "sessions/core/log.h"
#include "sessions/core/objs.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/runs.h"
#include "sessions/session/sess.h"
#include "sessions/core/state.h"
#include "sessions/session/table.h"
#include "sessions/session/tmpl.h"

/* How often a dying session looks whether its processes are gone. */
#define DYING_POLL_MS 10

static bool shutting_down;
static void (*shutdown_cb)(void *);
static void *shutdown_arg;

/* Every session holds a few descriptors (its directory, the shell's
 * pipes, the next run's fifos): take the whole hard limit. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void on_dying_timer(struct loop_timer *t);
static bool sess_quiet(void);

static bool try_finalize(struct sess *s);

/* After a batch of child exits: the killall requests may be answered,
 * and a dying session whose processes are all gone is freed at once
 * (its rmdir answered), else it looks again DYING_POLL_MS later. While
 * the daemon shuts down it looks only 10 ms after the last exit, so that
 * the clients whose requests the exits answered (the close of a cmd)
 * have closed their files when the last session goes and the daemon may
 * stop. */
static void after_exits(void)
{
	int64_t at = loop_now_ms() + DYING_POLL_MS;
	struct sess *s, *next;

	killall_check();
	for (s = sess_first(); s; s = next) {
		next = sess_next(s);
		if (!s->dying_timer.armed)
			continue;
		if (shutting_down || !try_finalize(s))
			loop_timer_add(&s->dying_timer, at, on_dying_timer, s);
	}
}

bool (*sess_quiet_hook)(void);

int sess_init(bool restoring)
{
	int rc = restoring ? 0 : rtdir_init();

	if (rc < 0) {
		log_msg(LOG_ERR, "runtime directory under %s: %s",
			conf.runtime_dir, strerror(-rc));
		return rc;
	}
	/* restoring: sstate_restore_dirs took both over */
	if (!restoring && contain_setup())
		contain_watchdog();
	runs_init();
	raise_nofile();
	loop_set_quiet(sess_quiet);
	env_init();
	reap_batch_hook = after_exits;
	return reap_init();
}

void sess_fini(void)
{
	tmpl_fini();
	kill_fini();
	contain_teardown();
	rtdir_fini();
}

/* Gives a new session its directory, cgroup, cwd and variables. */
static int sess_setup(struct sess *s)
{
	char dname[32];
	int rc;

	snprintf(dname, sizeof(dname), "s%llu", (unsigned long long)s->id);
	s->dirfd = rtdir_make(dname, s->dir, sizeof(s->dir));
	rc = s->dirfd < 0 ? s->dirfd : contain_new(&s->cg, dname);
	s->cwd = strdup(conf.workspace);
	if (rc == 0 && (!s->cwd || env_new(s) < 0))
		rc = -ENOMEM;
	return rc;
}

struct sess *sess_blank(enum obj_kind kind)
{
	struct sess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = objs_add(kind, s);
	s->ctl_fd = s->res.fd = s->fifo.o = s->fifo.e = -1;
	list_init(&s->queue);
	list_init(&s->runs);
	list_init(&s->procs);
	list_init(&s->ctxs);
	list_init(&s->parts);
	return s;
}

/* A session with its directory, cgroup, cwd and variables, known by id
 * but to nobody by name (OBJ_NONE) until sess_create names it. */
static struct sess *sess_alloc(uid_t uid, gid_t gid, int *rc)
{
	struct sess *s = sess_blank(OBJ_NONE);

	*rc = -ENOMEM;
	if (!s)
		return NULL;
	s->uid = uid;
	s->gid = gid;
	*rc = sess_setup(s);
	if (*rc == 0)
		return s;
	objs_del(s->id);
	env_free(s);
	free(s->cwd);
	free(s);
	return NULL;
}

/* The next session, made ahead (sess_make_ahead): a shell takes a few
 * milliseconds of CPU to start, and the mkdir that takes this one finds
 * it started, or starting. One, for the owner of the last mkdir; it is
 * what a mkdir at that moment would have made (the directory, cgroup,
 * cwd and variables of a new session, the shell started at once). It is
 * made while the daemon would wait anyway: once the first run of the
 * session just made is in its shell's hands, or AHEAD_MS later (the
 * client's next request is not held up by it). */
#define AHEAD_MS 2

static struct sess *ahead;
static uid_t ahead_uid;
static gid_t ahead_gid;
static unsigned long ahead_gen; /* env_base_gen() when it was made */
static bool ahead_wanted;
static uint64_t ahead_after; /* the session whose first run it waits for */
static struct loop_timer ahead_timer;

/* Ends a session made ahead that nobody took, as rmdir would. */
static void drop_ahead(void)
{
	struct sess *s = ahead;

	ahead = NULL;
	ahead_wanted = false;
	loop_timer_del(&ahead_timer);
	if (!s)
		return;
	table_add(s); /* finalize takes it out; its name "" is nobody's */
	sess_delete(s, NULL, NULL);
}

static void make_ahead(void)
{
	struct sess *s;
	int rc;

	ahead_wanted = false;
	loop_timer_del(&ahead_timer);
	if (ahead || shutting_down || sess_count() + 1 >= conf.max_sessions)
		return;
	s = sess_alloc(ahead_uid, ahead_gid, &rc);
	if (!s)
		return;
	ahead = s;
	ahead_gen = env_base_gen();
	rc = driver_spawn(s, true);
	if (rc < 0) {
		log_msg(LOG_NOTICE, "a shell made ahead did not start: %s",
			strerror(-rc));
		drop_ahead();
	}
}

static void on_ahead_timer(struct loop_timer *t)
{
	(void)t;
	make_ahead();
}

/* The loop's quiet time: the session made ahead once its turn has come,
 * then the chores. */
static bool sess_quiet(void)
{
	struct sess *after;

	if (ahead_wanted) {
		after = sess_get(ahead_after);
		if (!after || after->active) {
			make_ahead();
			return true;
		}
	}
	return chores_quiet() || (sess_quiet_hook && sess_quiet_hook());
}

void sess_make_ahead(const struct sess *made)
{
	if (ahead && (ahead_uid != made->uid || ahead_gid != made->gid))
		drop_ahead();
	ahead_uid = made->uid;
	ahead_gid = made->gid;
	if (ahead || shutting_down)
		return;
	ahead_wanted = true;
	ahead_after = made->id;
	loop_timer_add(&ahead_timer, loop_now_ms() + AHEAD_MS, on_ahead_timer,
		       NULL);
}

uint64_t sess_ahead_id(void)
{
	return ahead ? ahead->id : 0;
}

/* The session made ahead, if it is uid:gid's and root env/ has not
 * changed since (one out of date is ended). */
static struct sess *take_ahead(uid_t uid, gid_t gid)
{
	struct sess *s = ahead;

	if (s && ahead_gen != env_base_gen()) {
		drop_ahead();
		return NULL;
	}
	if (!s || s->uid != uid || s->gid != gid)
		return NULL;
	ahead = NULL;
	return s;
}

/* The mounter and root always (max_sessions bounds everything), another
 * user up to its share; but only a daemon that runs as root can run
 * commands as somebody else. */
int sess_may_create(uid_t uid)
{
	uint64_t n = 0;

	if (uid == getuid())
		return 0;
	if (geteuid() != 0)
		return -EACCES;
	if (uid == 0)
		return 0;
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		n += s->uid == uid && !s->dying;
	return n < conf.max_sessions_per_user ? 0 : -EDQUOT;
}

int sess_create(const char *name, uid_t uid, gid_t gid, struct sess **out)
{
	state_touch();
	struct sess *s;
	int rc;

	if (!name_valid(name))
		return -EINVAL;
	if (sess_find(name))
		return -EEXIST;
	if (sess_count() >= conf.max_sessions || shutting_down)
		return -ENOSPC;
	s = take_ahead(uid, gid);
	if (!s)
		s = sess_alloc(uid, gid, &rc);
	if (!s) {
		log_msg(LOG_ERR, "session %s: cannot create: %s", name,
			strerror(-rc));
		return rc;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->created_wall = loop_wall_ms();
	objs_set(s->id, OBJ_SESS, s);
	table_add(s);
	log_msg(LOG_INFO, "session %s: created", name);
	*out = s;
	return 0;
}

/* Frees s once its processes are gone. */
static void finalize(struct sess *s)
{
	state_touch();
	void (*cb)(void *) = s->gone_cb;
	void *arg = s->gone_arg;
	char dname[32];

	runs_free_all(s);
	s->env_pending = false;
	if (sess_env_ready_hook) /* no variables will come: answer what waits */
		sess_env_ready_hook(s);
	proc_free_all(s);
	sess_parts_free(s);
	chores_forget(s);
	loop_timer_del(&s->run_timer);
	loop_timer_del(&s->dying_timer);
	close(s->dirfd);
	snprintf(dname, sizeof(dname), "s%llu", (unsigned long long)s->id);
	rtdir_remove(dname);
	contain_free(&s->cg);
	table_del(s);
	objs_del(s->id);
	env_free(s);
	errlog_free(&s->errs);
	free(s->rbuf.p);
	if (s->name[0]) /* not a session made ahead that nobody took */
		log_msg(LOG_INFO, "session %s: deleted", s->name);
	free(s->cwd);
	free(s->expect);
	free(s);
	if (cb)
		cb(arg);
	if (shutting_down && sess_count() == 0 && shutdown_cb) {
		void (*done)(void *) = shutdown_cb;

		shutdown_cb = NULL;
		done(shutdown_arg);
	}
}

/* Finalizes s when nothing of it runs any more. Returns true if freed. */
static bool try_finalize(struct sess *s)
{
	if (s->pid || sess_parts_alive(s) || !contain_empty(&s->cg))
		return false;
	finalize(s);
	return true;
}

/* Frees a dying session once it is empty, with KILL for what outlived
 * TERM by the grace. */
static void on_dying_timer(struct loop_timer *t)
{
	struct sess *s = t->arg;
	int64_t now = loop_now_ms();

	if (try_finalize(s))
		return;
	if (!s->hard_killed && now >= s->kill_deadline) {
		log_msg(LOG_NOTICE,
			"session %s: processes outlived "
			"TERM; sending KILL",
			s->name);
		contain_kill(&s->cg);
		if (s->pid)
			kill(s->pid, SIGKILL);
		sess_parts_kill(s);
		s->hard_killed = true;
	}
	loop_timer_add(t, now + DYING_POLL_MS, on_dying_timer, s);
}

int sess_delete(struct sess *s, void (*cb)(void *), void *arg)
{
	if (s->is_default)
		return -EBUSY;
	if (s->dying)
		return -EBUSY;
	s->dying = true;
	s->gone_cb = cb;
	s->gone_arg = arg;
	runs_cancel_queued(s);
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	contain_signal(&s->cg, SIGTERM, 0);
	for (struct list *l = s->procs.next; l != &s->procs; l = l->next)
		contain_signal(&list_entry(l, struct run, link)->proc->cg,
			       SIGTERM, 0);
	sess_parts_hangup(s);
	if (s->pid) {
		driver_sched(s, false);
		kill(s->pid, SIGTERM);
	}
	s->kill_deadline = loop_now_ms() + (int64_t)conf.kill_grace_ms;
	if (!try_finalize(s))
		loop_timer_add(&s->dying_timer, loop_now_ms() + DYING_POLL_MS,
			       on_dying_timer, s);
	return 0;
}

void sess_shutdown(void (*cb)(void *), void *arg)
{
	struct sess *s, *next;

	shutting_down = true;
	drop_ahead();
	tmpl_stop();
	shutdown_cb = cb;
	shutdown_arg = arg;
	if (sess_count() == 0) {
		shutdown_cb = NULL;
		cb(arg);
		return;
	}
	for (s = sess_first(); s; s = next) {
		next = sess_next(s);
		s->is_default = false;
		if (!s->dying)
			sess_delete(s, NULL, NULL);
	}
}

void sess_set_timeout(struct sess *s, uint64_t ms)
{
	state_touch();
	s->timeout_ms = ms;
}

void sess_set_default(struct sess *s)
{
	s->is_default = true;
}
