/*
 * sess.c - sessions: the table, the queue of runs, the shell's life and
 * death, environment and cwd bookkeeping, and deletion with containment.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "conf/conf.h"
#include "log.h"
#include "objs.h"
#include "sess.h"
#include "output.h"
#include "shell.h"

extern char **environ;

/* How long a killed run may stay in the shell once its processes are
 * gone before the shell is deemed stuck in builtins and replaced. */
#define SHELL_STUCK_MS 250

static struct list sessions = LIST_INIT(sessions);
static unsigned nsess;
static int rt_fd = -1;
static char rt_path[4096];
static struct envmap base_env; /* what a new session starts with */
static struct envmap root_env; /* what root env/ lists */
static struct loop_watch timer_w, chld_w;
static int64_t timer_armed; /* the deadline timer_w is set to, 0: none */
/* Shells may be lowered to SCHED_IDLE between runs (raising them back
 * needs CAP_SYS_NICE), and then poll for the next command. */
static bool can_idle;
#define SPIN_POLL_US 4 /* about one `read -t 0` of bash */
static bool shutting_down;
static void (*shutdown_cb)(void *);
static void *shutdown_arg;

static void kick(struct sess *s);
static void rearm_timer(void);
static void env_settled(struct sess *s);
static void check_killall(void);
static bool sess_quiet(void);

/* Writers of `killall` to the root ctl, answered when nothing runs. */
struct killall_wait {
	void (*cb)(void *);
	void *arg;
	struct killall_wait *next;
};
static struct killall_wait *killall_waits;

/* Removes dirfd/name and the files in it (spool dirs are one level). */
static void rm_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		unlinkat(parent, name, 0);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			if (unlinkat(dirfd(d), e->d_name, 0) < 0)
				rm_tree(dirfd(d), e->d_name);
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* Removes spool directories of instances whose daemon is gone. */
static void clean_stale(int parent)
{
	int fd = dup(parent);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	long pid;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "%ld", &pid) == 1 &&
		    kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			rm_tree(dirfd(d), e->d_name);
	closedir(d);
}

static int make_runtime_dir(void)
{
	char top[4096];
	int top_fd;

	snprintf(top, sizeof(top), "%s/sessionfs", conf.runtime_dir);
	if (mkdir(top, 0700) < 0 && errno != EEXIST)
		return -errno;
	top_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top_fd < 0)
		return -errno;
	clean_stale(top_fd);
	snprintf(rt_path, sizeof(rt_path), "%s/%ld", top, (long)getpid());
	if (mkdir(rt_path, 0700) < 0 && errno != EEXIST) {
		close(top_fd);
		return -errno;
	}
	close(top_fd);
	rt_fd = open(rt_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return rt_fd < 0 ? -errno : 0;
}

static void on_sigchld(struct loop_watch *w, uint32_t events);
static void on_timer(struct loop_watch *w, uint32_t events);

/* Adds "NAME=value" to what every new session starts with. */
static void add_base(const char *entry)
{
	const char *eq = strchr(entry, '=');
	char name[256];

	if (!eq || eq - entry >= (long)sizeof(name))
		return;
	memcpy(name, entry, (size_t)(eq - entry));
	name[eq - entry] = '\0';
	if (name_env_valid(name))
		envmap_set(&base_env, name, eq + 1, strlen(eq + 1));
}

/* Whether this process has CAP_SYS_NICE, which raising a shell back
 * from SCHED_IDLE needs (lowering it does not). */
static bool may_raise(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

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

int sess_init(void)
{
	sigset_t set;
	int rc;

	rc = make_runtime_dir();
	if (rc < 0) {
		log_msg(LOG_ERR, "runtime directory under %s: %s",
			conf.runtime_dir, strerror(-rc));
		return rc;
	}
	if (contain_setup())
		contain_watchdog();
	can_idle = conf.shell_spin_us && may_raise();
	raise_nofile();
	loop_set_quiet(sess_quiet);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	envmap_init(&base_env, OBJ_NONE, NULL);
	envmap_init(&root_env, OBJ_ROOTENV, NULL);
	for (char **e = environ; *e; e++)
		add_base(*e);
	for (size_t i = 0; i < conf.nenv; i++)
		add_base(conf.env[i]);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	chld_w.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	chld_w.fn = on_sigchld;
	timer_w.fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	timer_w.fn = on_timer;
	if (chld_w.fd < 0 || timer_w.fd < 0)
		return -errno;
	rc = loop_add(&chld_w, EPOLLIN);
	return rc < 0 ? rc : loop_add(&timer_w, EPOLLIN);
}

void sess_fini(void)
{
	char *slash = strrchr(rt_path, '/');

	contain_teardown();
	if (rt_fd < 0 || !slash)
		return;
	close(rt_fd);
	rt_fd = -1;
	*slash = '\0';
	rt_fd = open(rt_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rt_fd >= 0)
		rm_tree(rt_fd, slash + 1);
	if (rt_fd >= 0)
		close(rt_fd);
	rt_fd = -1;
}

struct sess *sess_first(void)
{
	return list_empty(&sessions) ?
		       NULL :
		       list_entry(sessions.next, struct sess, link);
}

struct sess *sess_next(struct sess *s)
{
	return s->link.next == &sessions ?
		       NULL :
		       list_entry(s->link.next, struct sess, link);
}

unsigned sess_count(void)
{
	return nsess;
}

struct sess *sess_find(const char *name)
{
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct sess *sess_get(uint64_t id)
{
	return objs_get(id, OBJ_SESS);
}

void sess_error(struct sess *s, const char *fmt, ...)
{
	char raw[1024], msg[1024], line[1200], when[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;
	unsigned slot;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	name_escape(msg, sizeof(msg), raw); /* one refusal, one line */
	log_msg(LOG_WARNING, "session %s: %s", s->name, msg);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(line, sizeof(line), "%s %s\n", when, msg);
	if (s->err_n == SESS_ERRORS_KEPT) {
		free(s->errors[s->err_first]);
		s->err_first = (s->err_first + 1) % SESS_ERRORS_KEPT;
		s->err_n--;
	}
	slot = (s->err_first + s->err_n) % SESS_ERRORS_KEPT;
	s->errors[slot] = strdup(line);
	if (s->errors[slot])
		s->err_n++;
}

char *sess_errors_text(struct sess *s, size_t *len)
{
	struct strbuf b = { 0 };

	sb_add(&b, "", 0);
	for (unsigned i = 0; i < s->err_n; i++) {
		const char *l =
			s->errors[(s->err_first + i) % SESS_ERRORS_KEPT];

		sb_add(&b, l, strlen(l));
	}
	return sb_take(&b, len);
}

int sess_create(const char *name, uid_t uid, gid_t gid, struct sess **out)
{
	struct sess *s;
	char dname[32];
	int rc;

	if (!name_valid(name))
		return -EINVAL;
	if (sess_find(name))
		return -EEXIST;
	if (nsess >= conf.max_sessions || shutting_down)
		return -ENOSPC;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->id = objs_add(OBJ_SESS, s);
	s->uid = uid;
	s->gid = gid;
	s->ctl_fd = s->res.fd = s->fifo.o = s->fifo.e = -1;
	s->created_wall = loop_wall_ms();
	list_init(&s->queue);
	list_init(&s->runs);
	list_init(&s->procs);
	list_init(&s->env_waiters);
	envmap_init(&s->env, OBJ_ENVVAR, s);
	envmap_init(&s->pend_set, OBJ_NONE, NULL);
	envmap_init(&s->pend_unset, OBJ_NONE, NULL);
	snprintf(dname, sizeof(dname), "s%llu", (unsigned long long)s->id);
	snprintf(s->dir, sizeof(s->dir), "%s/%s", rt_path, dname);
	rc = mkdirat(rt_fd, dname, 0700) < 0 ? -errno : 0;
	if (rc == 0 &&
	    (s->dirfd = openat(rt_fd, dname,
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = contain_new(&s->cg, dname);
	s->cwd = strdup(conf.workspace);
	if (rc == 0 && (!s->cwd || envmap_assign(&s->env, &base_env) < 0))
		rc = -ENOMEM;
	if (rc < 0) {
		log_msg(LOG_ERR, "session %s: cannot create: %s", name,
			strerror(-rc));
		objs_del(s->id);
		envmap_free(&s->env);
		free(s->cwd);
		free(s);
		return rc;
	}
	list_add_tail(&sessions, &s->link);
	nsess++;
	log_msg(LOG_INFO, "session %s: created", name);
	*out = s;
	return 0;
}

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
	r->sess = NULL;
	run_unref(r);
}

/* Keeps at most conf.history finished runs. */
static void trim_history(struct sess *s)
{
	struct list *p, *n;

	list_for_each_safe (p, n, &s->runs) {
		struct run *r = list_entry(p, struct run, link);

		if (s->nruns <= conf.history)
			break;
		if (r->state == RUN_DONE && r->no)
			drop_run(s, r);
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
	return r;
}

int sess_queue_run(struct sess *s, struct run *r, const char *text, size_t len)
{
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

struct run *sess_submit(struct sess *s, const char *text, size_t len, int *err)
{
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
	if (*err < 0) {
		drop_run(s, r);
		return NULL;
	}
	return r;
}

int sess_new_run(struct sess *s, const char *name, struct run **out)
{
	unsigned long long n;

	if (!name_valid(name) || strcmp(name, "latest") == 0 ||
	    name_parse_u64(name, strlen(name), &n) == 0) {
		sess_error(s,
			   "runs/%.64s: a run name is 1-64 of "
			   "[A-Za-z0-9._-], not all digits, not 'latest'",
			   name);
		return -EINVAL;
	}
	if (sess_run_by_name(s, name))
		return -EEXIST;
	if (s->dying)
		return -ENOENT;
	*out = add_run(s, name, 0);
	return *out ? 0 : -ENOMEM;
}

int sess_remove_run(struct sess *s, struct run *r)
{
	if (r->state == RUN_RUNNING || (r->state == RUN_QUEUED && r->has_cmd))
		return -EBUSY;
	drop_run(s, r);
	return 0;
}

/* Parses the `export -p` that the shell left in the file "env". */
static int read_env_file(struct sess *s, struct envmap *m)
{
	struct strbuf b = { 0 };
	char buf[65536];
	ssize_t n;
	int fd = openat(s->dirfd, "env", O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sb_add(&b, buf, (size_t)n);
	close(fd);
	rc = b.err ? b.err : envmap_parse_export(m, b.p ? b.p : "", b.len);
	free(b.p);
	return rc;
}

/* Takes the cwd from a shell's report. */
static void apply_pwd(struct sess *s, const struct shell_frame *f)
{
	char *cwd;

	if (f->pwd[0] != '/' || !(cwd = strdup(f->pwd)))
		return;
	free(s->cwd);
	s->cwd = cwd;
}

void (*sess_env_ready_hook)(struct sess *s);

/* The 'E' of the last run will not come (its shell is gone, maybe in the
 * middle of writing "env"): the variables known before it stand. */
static void env_settled(struct sess *s)
{
	if (!s->env_pending)
		return;
	s->env_pending = false;
	if (sess_env_ready_hook)
		sess_env_ready_hook(s);
}

/* Takes the exported variables the shell reported, and lets the requests
 * that waited for them go. */
static void apply_env(struct sess *s, const struct shell_frame *f)
{
	struct envmap fresh;

	envmap_init(&fresh, OBJ_NONE, NULL);
	if (f->kind == 'E') {
		if (envmap_parse_export(&fresh, f->env, f->env_len) == 0)
			envmap_assign(&s->env, &fresh);
	} else if (read_env_file(s, &fresh) == 0) {
		envmap_assign(&s->env, &fresh);
	}
	envmap_free(&fresh);
	/* Writes made while the run was active still apply. */
	for (size_t i = 0; i < s->pend_unset.n; i++)
		envmap_unset(&s->env, s->pend_unset.v[i]->name);
	for (size_t i = 0; i < s->pend_set.n; i++)
		envmap_set(&s->env, s->pend_set.v[i]->name,
			   s->pend_set.v[i]->value, s->pend_set.v[i]->len);
	s->env_pending = false;
	if (sess_env_ready_hook)
		sess_env_ready_hook(s);
}

/* Lowers s's shell to SCHED_IDLE (idle) or raises it back. A shell that
 * has reported its run only reports its variables, then polls for the
 * next command: as SCHED_IDLE it gives its CPU up at once to a task woken
 * there (the client of the run, say), and takes only idle time. It is
 * raised before anything waits for it. */
static void shell_sched(struct sess *s, bool idle)
{
	struct sched_param sp = { 0 };

	if (!s->pid || s->shell_idle == idle || (idle && !can_idle))
		return;
	if (sched_setscheduler(s->pid, idle ? SCHED_IDLE : SCHED_OTHER, &sp) ==
		    0 ||
	    errno == ESRCH) {
		s->shell_idle = idle;
		return;
	}
	/* Not allowed here (no CAP_SYS_NICE): shells stop polling. */
	log_msg(idle ? LOG_NOTICE : LOG_ERR,
		"session %s: cannot make the shell %s: %m; shells will "
		"sleep between runs",
		s->name, idle ? "SCHED_IDLE" : "SCHED_OTHER again");
	can_idle = false;
}

void sess_hurry_env(struct sess *s)
{
	if (s->env_pending)
		shell_sched(s, false);
}

/* Lets go of the idle shell: the next run starts a new one from the
 * cwd and variables of the last report. */
static void retire_shell(struct sess *s)
{
	if (!s->pid)
		return;
	shell_sched(s, false); /* an idle-class shell may wait long to die */
	kill(s->pid, SIGKILL);
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	if (s->res.fd >= 0) {
		loop_del(&s->res);
		close(s->res.fd);
	}
	s->res.fd = -1;
	s->rbuf.len = 0;
	s->pid = 0;
	s->cg.leader = 0;
	env_settled(s);
}

/* The sessions with chores, done one per quiet moment of the loop. */
static struct list chores = LIST_INIT(chores);

static void add_chores(struct sess *s)
{
	if (s->has_chores)
		return;
	s->has_chores = true;
	list_add_tail(&chores, &s->chores_link);
}

void sess_trash(void *arg, const char *name)
{
	struct sess *s = arg;

	sb_add(&s->trash, name, strlen(name) + 1);
	add_chores(s);
}

/* The fifo f<gen>.<which>. */
static void fifo_name(char *buf, size_t len, unsigned gen, char which)
{
	snprintf(buf, len, "f%u.%c", gen, which);
}

/* Makes the fifo f<gen>.<which> and opens its read end. Returns the fd
 * or -errno. */
static int make_fifo(struct sess *s, unsigned gen, char which)
{
	char name[32];
	int fd;

	fifo_name(name, sizeof(name), gen, which);
	if (mkfifoat(s->dirfd, name, 0600) < 0)
		return -errno;
	fd = openat(s->dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		unlinkat(s->dirfd, name, 0);
	}
	return fd;
}

/* Makes the fifos of the next run unless they are there. A run's start
 * is on the path of the close of cmd, so they are normally made ahead,
 * in a quiet moment after the run before. */
static int make_fifos(struct sess *s)
{
	char name[32];
	int o, e;

	if (s->fifo.o >= 0)
		return 0;
	s->fifo.gen++;
	o = make_fifo(s, s->fifo.gen, 'o');
	e = o < 0 ? o : make_fifo(s, s->fifo.gen, 'e');
	if (e < 0) {
		if (o >= 0) {
			close(o);
			fifo_name(name, sizeof(name), s->fifo.gen, 'o');
			unlinkat(s->dirfd, name, 0);
		}
		return e;
	}
	s->fifo.o = o;
	s->fifo.e = e;
	return 0;
}

/* loop quiet hook: the files of ended runs go, the next fifos come, for
 * one session. Returns whether others have chores left. */
static bool sess_quiet(void)
{
	struct sess *s;

	if (list_empty(&chores))
		return false;
	s = list_entry(chores.next, struct sess, chores_link);
	list_del(&s->chores_link);
	s->has_chores = false;
	for (size_t at = 0; at < s->trash.len;
	     at += strlen(s->trash.p + at) + 1)
		unlinkat(s->dirfd, s->trash.p + at, 0);
	s->trash.len = 0;
	if (s->pid && !s->dying)
		make_fifos(s);
	return !list_empty(&chores);
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
	s->active = NULL;
	s->kill_stage = 0;
	if (s->reset) {
		s->reset = false;
		retire_shell(s);
	}
	run_finish(r, code, r->end == END_KILLED ? r->sig : sig,
		   r->end == END_NONE ? END_EXITED : r->end);
	if (r->fifo_gen) {
		char name[32];

		fifo_name(name, sizeof(name), r->fifo_gen, 'o');
		sess_trash(s, name);
		fifo_name(name, sizeof(name), r->fifo_gen, 'e');
		sess_trash(s, name);
	}
	run_forget_files(r, RUN_F_PRE, sess_trash, s);
	trim_history(s);
	check_killall();
	rearm_timer();
}

static void handle_frames(struct sess *s)
{
	struct shell_frame f;
	ssize_t n;

	while ((n = shell_parse_frame(s->rbuf.p, s->rbuf.len, &f)) > 0) {
		char kind = f.kind;
		int status = f.status;

		/* f points into rbuf: use it, then drop the frame, then act
		 * (finishing a run may retire the shell and empty rbuf). */
		if (kind == 'R' && s->active)
			apply_pwd(s, &f);
		else if (kind == 'E')
			apply_env(s, &f);
		memmove(s->rbuf.p, s->rbuf.p + n, s->rbuf.len - (size_t)n);
		s->rbuf.len -= (size_t)n;
		if (kind == 'R' && s->active) {
			if (!s->dying)
				shell_sched(s,
					    true); /* before its client wakes */
			s->env_pending = true;
			finish_active(s, status, 0);
		}
	}
	if (n < 0) {
		sess_error(s, "garbled report from the shell; restarting it");
		s->rbuf.len = 0;
		if (s->pid)
			kill(s->pid, SIGKILL);
	}
}

static void read_results(struct sess *s)
{
	char buf[65536];
	ssize_t n;

	while (s->res.fd >= 0 && (n = read(s->res.fd, buf, sizeof(buf))) > 0)
		sb_add(&s->rbuf, buf, (size_t)n);
	handle_frames(s);
}

static void on_results(struct loop_watch *w, uint32_t events)
{
	struct sess *s = w->arg;

	read_results(s);
	if ((events & EPOLLHUP) && s->res.fd >= 0) {
		/* The shell is gone; its exit is handled on SIGCHLD. */
		loop_del(&s->res);
		close(s->res.fd);
		s->res.fd = -1;
	}
	kick(s);
}

static int start_shell(struct sess *s)
{
	char **envp = envmap_envp(&s->env);
	pid_t pid;

	if (!envp)
		return -ENOMEM;
	pid = shell_spawn(conf.shell, s->dir, s->cwd, envp, &s->cg, &s->ctl_fd,
			  &s->res.fd);
	for (char **e = envp; *e; e++)
		free(*e);
	free(envp);
	if (pid < 0)
		return (int)pid;
	s->pid = pid;
	s->shell_idle = false;
	s->cg.leader = s->cg.sid = pid; /* the shell calls setsid() */
	s->res.fn = on_results;
	s->res.arg = s;
	envmap_free(&s->pend_set);
	envmap_free(&s->pend_unset);
	s->pend_cwd = false;
	log_msg(LOG_DEBUG, "session %s: shell %ld started", s->name, (long)pid);
	return loop_add(&s->res, EPOLLIN);
}

/* Gives r the fifos made for the next run. */
static int take_fifos(struct sess *s, struct run *r)
{
	int rc = make_fifos(s);

	if (rc < 0)
		return rc;
	r->fifo_gen = s->fifo.gen;
	rc = output_watch(r, &r->pipe_o, s->fifo.o);
	if (rc == 0)
		rc = output_watch(r, &r->pipe_e, s->fifo.e);
	else
		close(s->fifo.e);
	s->fifo.o = s->fifo.e = -1;
	return rc;
}

/* Hands r to the shell: spools, fifos, prelude, then the line. */
static int start_run(struct sess *s, struct run *r)
{
	char name[64], line[64];
	bool pre = s->pend_set.n || s->pend_unset.n || s->pend_cwd;
	int rc = 0;

	shell_sched(s, false);
	if (s->shell_idle)
		retire_shell(s); /* it cannot be raised: never run in it */
	if (!s->pid)
		rc = start_shell(s);
	if (rc == 0)
		rc = take_fifos(s, r);
	run_file(r, "pre", name, sizeof(name));
	if (rc == 0 && pre) {
		r->files |= RUN_F_PRE;
		rc = shell_write_prelude(s->dirfd, name, &s->pend_set,
					 &s->pend_unset,
					 s->pend_cwd ? s->cwd : NULL);
	}
	s->active = r;
	r->pid = s->pid;
	r->state = RUN_RUNNING;
	r->started_wall = loop_wall_ms();
	r->started_mono = loop_now_ms();
	r->eff_timeout_ms = r->has_timeout ? r->timeout_ms :
			    s->timeout_ms  ? s->timeout_ms :
					     conf.default_timeout_ms;
	r->deadline = r->eff_timeout_ms ?
			      r->started_mono + (int64_t)r->eff_timeout_ms :
			      0;
	if (rc == 0) {
		snprintf(line, sizeof(line), "%llu %u %c %llu\n",
			 (unsigned long long)r->id, r->fifo_gen,
			 pre ? 'p' : '-',
			 can_idle ? (unsigned long long)conf.shell_spin_us /
					    SPIN_POLL_US :
				    0ULL);
		if (write(s->ctl_fd, line, strlen(line)) < 0)
			rc = -errno;
	}
	if (rc == 0 && pre) {
		envmap_free(&s->pend_set);
		envmap_free(&s->pend_unset);
		s->pend_cwd = false;
	}
	if (run_changed_hook)
		run_changed_hook(r);
	return rc;
}

static void kick(struct sess *s)
{
	if (!list_empty(&s->queue))
		sess_hurry_env(s); /* the next run waits for the variables */
	while (!s->active && !s->dying && !s->env_pending &&
	       !list_empty(&s->queue)) {
		struct run *r = list_entry(s->queue.next, struct run, qlink);
		int rc;

		list_del(&r->qlink);
		rc = start_run(s, r);
		if (rc < 0) {
			sess_error(s, "run %s could not start: %s", r->name,
				   strerror(-rc));
			finish_active(s, 126, 0);
		}
	}
	rearm_timer();
}

/* The shell of s ended (wstatus from waitpid). */
static void shell_gone(struct sess *s, int wstatus)
{
	int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
					128 + WTERMSIG(wstatus);
	int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	char buf[1 << 16];
	struct shell_frame f;
	ssize_t n;
	int fd;

	s->pid = 0; /* reaped: nothing may signal that pid any more */
	s->cg.leader = 0;
	read_results(s);
	if (s->res.fd >= 0) {
		loop_del(&s->res);
		close(s->res.fd);
		s->res.fd = -1;
	}
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	s->rbuf.len = 0;
	s->pid = 0;
	fd = openat(s->dirfd, "state", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	unlinkat(s->dirfd, "state", 0);
	if (n > 0 && shell_parse_frame(buf, (size_t)n, &f) > 0) {
		apply_pwd(s, &f);
		apply_env(s, &f);
	} else {
		env_settled(s);
	}
	if (s->kill_stage)
		contain_signal(&s->cg, SIGKILL, 0); /* forked during the kill */
	if (s->active) {
		if (!s->dying)
			log_msg(LOG_NOTICE,
				"session %s: the shell ended (status %d) "
				"during run %s; the next run gets a new one",
				s->name, code, s->active->name);
		finish_active(s, code, sig);
	}
	kick(s);
}

static void on_sigchld(struct loop_watch *w, uint32_t events)
{
	struct signalfd_siginfo si;
	int st;
	pid_t pid;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si))
		;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (struct sess *s = sess_first(); s; s = sess_next(s)) {
			if (s->pid == pid) {
				shell_gone(s, st);
				break;
			}
			if (proc_reaped(s, pid, st))
				break;
		}
	}
	check_killall();
	rearm_timer();
}

int sess_setenv(struct sess *s, const char *name, const char *val, size_t len)
{
	int rc;

	if (!name_env_valid(name)) {
		sess_error(s, "invalid variable name '%.64s'", name);
		return -EINVAL;
	}
	if (!name_env_value_valid(val, len)) {
		sess_error(s, "value of %s holds a NUL byte", name);
		return -EINVAL;
	}
	rc = envmap_set(&s->env, name, val, len);
	if (rc == 0)
		rc = envmap_set(&s->pend_set, name, val, len);
	envmap_unset(&s->pend_unset, name);
	return rc;
}

int sess_unsetenv(struct sess *s, const char *name)
{
	if (envmap_unset(&s->env, name) < 0)
		return -ENOENT;
	envmap_unset(&s->pend_set, name);
	return envmap_set(&s->pend_unset, name, "", 0);
}

int sess_chdir(struct sess *s, const char *path)
{
	struct stat st;
	char *abs;

	if (path[0] != '/') {
		if (asprintf(&abs, "%s/%s", s->cwd, path) < 0)
			return -ENOMEM;
	} else if (!(abs = strdup(path))) {
		return -ENOMEM;
	}
	if (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
		int rc = stat(abs, &st) < 0 ? -errno : -ENOTDIR;

		sess_error(s, "cwd: %s: %s", abs, strerror(-rc));
		free(abs);
		return rc;
	}
	free(s->cwd);
	s->cwd = abs;
	s->pend_cwd = true;
	return 0;
}

int sess_kill_run(struct sess *s, int sig, enum run_end end)
{
	struct run *r = s->active;

	if (!r || r->state != RUN_RUNNING)
		return -ESRCH;
	if (r->end == END_NONE) {
		r->end = end;
		r->sig = sig;
	}
	if (s->pid)
		kill(s->pid, SHELL_ABORT_SIG);
	contain_signal(&s->cg, sig, s->pid);
	if (s->kill_stage == 0)
		s->kill_began = loop_now_ms();
	if (s->kill_stage == 0 || sig == SIGKILL) {
		s->kill_stage = sig == SIGKILL ? 2 : 1;
		s->kill_at = loop_now_ms() + (int64_t)conf.kill_grace_ms;
	}
	rearm_timer();
	return 0;
}

void sess_reset(struct sess *s)
{
	if (s->active && s->active->state == RUN_RUNNING) {
		s->reset = true;
		sess_kill_run(s, SIGTERM, END_KILLED);
		return;
	}
	retire_shell(s);
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
		sess_error(s, "run %s outlived SIGTERM by %llu ms: SIGKILL",
			   r->name, (unsigned long long)conf.kill_grace_ms);
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

bool sess_anything_running(void)
{
	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		if (s->active && s->active->state == RUN_RUNNING)
			return true;
		for (struct list *l = s->procs.next; l != &s->procs;
		     l = l->next)
			if (list_entry(l, struct run, link)->state ==
			    RUN_RUNNING)
				return true;
	}
	return false;
}

/* Answers killall requests once nothing runs any more. */
static void check_killall(void)
{
	struct killall_wait *k;

	while (killall_waits && !sess_anything_running()) {
		k = killall_waits;
		killall_waits = k->next;
		k->cb(k->arg);
		free(k);
	}
}

void sess_killall(void (*cb)(void *), void *arg)
{
	struct killall_wait *k = malloc(sizeof(*k));

	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		sess_kill_run(s, SIGTERM, END_KILLED);
		for (struct list *l = s->procs.next; l != &s->procs;
		     l = l->next)
			sess_signal_proc(list_entry(l, struct run, link),
					 SIGTERM);
	}
	if (!k) {
		cb(arg);
		return;
	}
	*k = (struct killall_wait){ cb, arg, killall_waits };
	killall_waits = k;
	check_killall();
}

const struct envmap *sess_root_env(void)
{
	return &root_env;
}

int sess_root_setenv(const char *name, const char *val, size_t len)
{
	int rc;

	if (!name_env_valid(name) || !name_env_value_valid(val, len)) {
		log_msg(LOG_WARNING, "env/%.64s: invalid name or value", name);
		return -EINVAL;
	}
	rc = envmap_set(&root_env, name, val, len);
	if (rc == 0)
		rc = envmap_set(&base_env, name, val, len);
	for (struct sess *s = sess_first(); s && rc == 0; s = sess_next(s))
		rc = sess_setenv(s, name, val, len);
	return rc;
}

int sess_root_unsetenv(const char *name)
{
	if (envmap_unset(&root_env, name) < 0)
		return -ENOENT;
	envmap_unset(&base_env, name);
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		sess_unsetenv(s, name);
	return 0;
}

/* Frees s once its processes are gone. */
static void finalize(struct sess *s)
{
	void (*cb)(void *) = s->gone_cb;
	void *arg = s->gone_arg;
	char dname[32];
	struct list *p, *n;

	list_for_each_safe (p, n, &s->runs) {
		struct run *r = list_entry(p, struct run, link);

		run_finish(r, 128 + SIGTERM, SIGTERM, END_CANCELED);
		list_del(&r->link);
		r->sess = NULL;
		run_unref(r);
	}
	s->env_pending = false;
	if (!list_empty(&s->env_waiters) && sess_env_ready_hook)
		sess_env_ready_hook(s);
	proc_free_all(s);
	if (s->fifo.o >= 0) {
		close(s->fifo.o);
		close(s->fifo.e);
	}
	close(s->dirfd);
	snprintf(dname, sizeof(dname), "s%llu", (unsigned long long)s->id);
	rm_tree(rt_fd, dname);
	contain_free(&s->cg);
	list_del(&s->link);
	nsess--;
	objs_del(s->id);
	envmap_free(&s->env);
	envmap_free(&s->pend_set);
	envmap_free(&s->pend_unset);
	for (unsigned i = 0; i < s->err_n; i++)
		free(s->errors[(s->err_first + i) % SESS_ERRORS_KEPT]);
	free(s->rbuf.p);
	if (s->has_chores)
		list_del(&s->chores_link);
	free(s->trash.p);
	log_msg(LOG_INFO, "session %s: deleted", s->name);
	free(s->cwd);
	free(s);
	if (cb)
		cb(arg);
	if (shutting_down && nsess == 0 && shutdown_cb) {
		void (*done)(void *) = shutdown_cb;

		shutdown_cb = NULL;
		done(shutdown_arg);
	}
}

/* Finalizes s when nothing of it runs any more. Returns true if freed. */
static bool try_finalize(struct sess *s)
{
	if (s->pid || !contain_empty(&s->cg))
		return false;
	finalize(s);
	return true;
}

int sess_delete(struct sess *s, void (*cb)(void *), void *arg)
{
	struct list *p, *n;

	if (s->is_default)
		return -EBUSY;
	if (s->dying)
		return -EBUSY;
	s->dying = true;
	s->gone_cb = cb;
	s->gone_arg = arg;
	list_for_each_safe (p, n, &s->queue) {
		struct run *r = list_entry(p, struct run, qlink);

		list_del(&r->qlink);
		run_finish(r, 128 + SIGTERM, SIGTERM, END_CANCELED);
	}
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	contain_signal(&s->cg, SIGTERM, 0);
	for (struct list *l = s->procs.next; l != &s->procs; l = l->next)
		contain_signal(&list_entry(l, struct run, link)->cg, SIGTERM,
			       0);
	if (s->pid) {
		shell_sched(s, false);
		kill(s->pid, SIGTERM);
	}
	s->kill_deadline = loop_now_ms() + (int64_t)conf.kill_grace_ms;
	if (!try_finalize(s))
		rearm_timer();
	return 0;
}

void sess_shutdown(void (*cb)(void *), void *arg)
{
	struct sess *s, *next;

	shutting_down = true;
	shutdown_cb = cb;
	shutdown_arg = arg;
	if (nsess == 0) {
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

/* Escalates kills that passed their grace and frees what is done. */
static void on_timer(struct loop_watch *w, uint32_t events)
{
	uint64_t ticks;
	int64_t now = loop_now_ms();
	struct sess *s, *next;

	(void)events;
	if (read(w->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_msg(LOG_DEBUG, "timerfd: %m");
	timer_armed = 0; /* it fired, so it is disarmed */
	for (s = sess_first(); s; s = next) {
		next = sess_next(s);
		run_timers(s, now);
		proc_timers(s, now);
		if (!s->dying || try_finalize(s))
			continue;
		if (!s->hard_killed && now >= s->kill_deadline) {
			log_msg(LOG_NOTICE,
				"session %s: processes outlived "
				"TERM; sending KILL",
				s->name);
			contain_kill(&s->cg);
			if (s->pid)
				kill(s->pid, SIGKILL);
			s->hard_killed = true;
		}
	}
	rearm_timer();
}

/* The earliest moment something of s needs the timer, or 0. */
static int64_t next_deadline(const struct sess *s)
{
	int64_t t = 0, p;

	if (s->dying)
		return loop_now_ms() + 10; /* cgroup emptiness is polled */
	if (s->kill_stage == 1 || s->kill_stage == 2)
		t = s->kill_at < loop_now_ms() + 50 ? s->kill_at :
						      loop_now_ms() + 50;
	else if (s->active && s->active->state == RUN_RUNNING)
		t = s->active->deadline;
	p = proc_next_deadline(s);
	return p && (!t || p < t) ? p : t;
}

void sess_rearm_timer(void)
{
	rearm_timer();
}

/* Arms the timer for the nearest deadline of any session. */
static void rearm_timer(void)
{
	struct itimerspec its = { 0 };
	int64_t t = 0;

	for (struct sess *s = sess_first(); s; s = sess_next(s)) {
		int64_t d = next_deadline(s);

		if (d && (!t || d < t))
			t = d;
	}
	if (t == timer_armed || timer_w.fd < 0)
		return; /* a system call per event adds up */
	if (t) {
		its.it_value.tv_sec = t / 1000;
		its.it_value.tv_nsec = (t % 1000) * 1000000 + 1;
	}
	if (timerfd_settime(timer_w.fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		timer_armed = t;
}

void sess_set_timeout(struct sess *s, uint64_t ms)
{
	s->timeout_ms = ms;
}
