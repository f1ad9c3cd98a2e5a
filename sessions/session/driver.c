/*
 * driver.c - the life of a session's shell: its start, the control line
 * of each run, its scheduling class between runs, its reports (frames on
 * the result pipe) and its death.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/session/chores.h"
#include "sessions/core/dirtree.h"
#include "sessions/session/driver.h"
#include "sessions/session/env.h"
#include "sessions/session/kill.h"
#include "sessions/core/log.h"
#include "sessions/session/output.h"
#include "sessions/session/runopts.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "sessions/session/tmpl.h"

#define SPIN_POLL_US 4 /* about one `read -t 0` of bash */

/* Shells may be lowered to SCHED_IDLE between runs (raising them back
 * needs CAP_SYS_NICE), and then poll for the next command. */
static bool can_idle;
static void (*ended_fn)(struct sess *s, int code, int sig);
static void (*ready_fn)(struct sess *s);

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

void driver_init(void (*ended)(struct sess *s, int code, int sig),
		 void (*ready)(struct sess *s))
{
	can_idle = conf.shell_spin_us && may_raise();
	ended_fn = ended;
	ready_fn = ready;
}

/* A shell that has reported its run only reports its variables, then
 * polls for the next command: as SCHED_IDLE it gives its CPU up at once
 * to a task woken there (the client of the run, say), and takes only
 * idle time. It is raised before anything waits for it. */
void driver_sched(struct sess *s, bool idle)
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
		driver_sched(s, false);
}

/* Forgets the shell's pipes (it is gone or going). */
static void drop_pipes(struct sess *s)
{
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
}

void driver_retire(struct sess *s)
{
	if (!s->pid)
		return;
	driver_sched(s, false); /* an idle-class shell may wait long to die */
	kill(s->pid, SIGKILL);
	reap_del(&s->shell_reap); /* its exit is nobody's business now */
	drop_pipes(s);
	s->cg.leader = 0;
	env_settled(s);
}

/* Whether f is the driver's: a frame of the run's key. Whatever else
 * reached the result pipe (a root command can open it through /proc) is
 * dropped, and said. */
static bool from_driver(struct sess *s, const struct shell_frame *f)
{
	if ((f->kind == 'R' || f->kind == 'F' || f->kind == 'E') && f->keyed &&
	    f->key == s->run_key) {
		s->spoke = true;
		return true;
	}
	sess_error(s, "a report that is not the shell driver's was dropped");
	return false;
}

/* The driver could not start the active run (its cwd could not be
 * entered): the run ends as an error, and error says why. The cwd stays
 * the session's, tried again at the next run, as a new shell would be
 * started there: no run goes elsewhere until a cwd that can be entered
 * is written. A run's own options that failed leave the session's cwd
 * alone. */
static void run_not_started(struct sess *s, const struct shell_frame *f)
{
	size_t n = sizeof(SHELL_OPT_WHY) - 1;

	s->active->end = END_ERROR;
	if (f->env_len < n || memcmp(f->env, SHELL_OPT_WHY, n) != 0)
		s->pend_cwd = true;
	sess_error(s, "run %s: %.*s", s->active->name,
		   (int)strnlen(f->env, f->env_len < 512 ? f->env_len : 512),
		   f->env);
}

static void handle_frames(struct sess *s)
{
	struct shell_frame f;
	ssize_t n;

	while ((n = shell_parse_frame(s->rbuf.p, s->rbuf.len, &f)) > 0) {
		char kind = f.kind;
		int status = f.status;

		if (!from_driver(s, &f))
			kind = 0; /* dropped below */
		/* f points into rbuf: use it, then drop the frame, then act
		 * (finishing a run may retire the shell and empty rbuf). */
		if (kind == 'F' && s->active)
			run_not_started(s, &f);
		else if (kind == 'R' && s->active)
			env_apply_pwd(s, &f);
		else if (kind == 'E')
			env_apply(s, &f);
		memmove(s->rbuf.p, s->rbuf.p + n, s->rbuf.len - (size_t)n);
		s->rbuf.len -= (size_t)n;
		if ((kind == 'R' || kind == 'F') && s->active) {
			if (!s->dying)
				driver_sched(
					s, true); /* before its client wakes */
			s->env_pending = true;
			ended_fn(s, status, 0);
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
	ready_fn(s);
}

/* Reads at most cap bytes of the shell's file name (a plain file: what a
 * command left there is not trusted). Returns the count or -1. */
static ssize_t read_small(struct sess *s, const char *name, char *buf,
			  size_t cap)
{
	int fd = dirtree_open_plain(s->dirfd, name);
	ssize_t n = fd >= 0 ? read(fd, buf, cap) : -1;

	if (fd >= 0)
		close(fd);
	return n;
}

/* Takes the cwd and variables the EXIT trap of a dead shell left. */
static void read_state(struct sess *s)
{
	char buf[1 << 16];
	struct shell_frame f;
	ssize_t n = read_small(s, "state", buf, sizeof(buf));

	unlinkat(s->dirfd, "state", 0);
	if (n > 0 && shell_parse_frame(buf, (size_t)n, &f) > 0) {
		env_apply_pwd(s, &f);
		env_apply(s, &f);
	} else {
		env_settled(s);
	}
}

/* A shell that ended before its driver ever reported: what bash or the
 * driver said on its way (SHELL_BOOT_ERR), the first line, if anything.
 * Returns whether it said something. */
static bool read_boot_err(struct sess *s)
{
	char buf[512], *nl;
	ssize_t n = read_small(s, SHELL_BOOT_ERR, buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	/* shell.c's child: the cwd it could not enter */
	if (s->active && strncmp(buf, "cwd ", 4) == 0)
		sess_error(s, "run %s: %s", s->active->name, buf);
	else
		sess_error(s, "the shell could not start its driver: %s", buf);
	return true;
}

/* The shell died in the middle of a run: what the run started ends
 * with it (TERM, then KILL after the grace), as a kill would end it. */
static void leftovers_of_run(struct sess *s)
{
	int n = kill_leftovers(s, SIGTERM);

	if (n > 0)
		sess_error(s,
			   "run %s: the shell died; TERM to the %d processes "
			   "it left",
			   s->active->name, n);
}

/* Shells that died on their own (not retired, not with their session):
 * the next run of each starts a new one (the health files count them). */
static unsigned long shells_restarted;

unsigned long driver_shells_restarted(void)
{
	return shells_restarted;
}

/* The shell of s ended (wstatus from waitpid). */
static void shell_gone(struct reap_watch *w, int wstatus)
{
	struct sess *s = w->arg;
	int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
					128 + WTERMSIG(wstatus);
	int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;

	s->pid = 0; /* reaped: nothing may signal that pid any more */
	s->cg.leader = 0;
	shells_restarted += !s->dying;
	read_results(s);
	drop_pipes(s);
	read_state(s);
	/* a run that never began in it is an error, not the command's */
	if (!s->spoke && read_boot_err(s) && code == 126 && s->active)
		s->active->end = END_ERROR;
	if (s->kill_stage)
		contain_signal(&s->cg, SIGKILL, 0); /* forked during the kill */
	else if (s->active && !s->dying)
		leftovers_of_run(s);
	if (s->active) {
		if (!s->dying)
			log_msg(LOG_NOTICE,
				"session %s: the shell ended (status %d) "
				"during run %s; the next run gets a new one",
				s->name, code, s->active->name);
		ended_fn(s, code, sig);
	}
	ready_fn(s);
}

/* The shell was stopped (`kill -STOP $$` in a command): nothing could
 * ever resume it, and its session would hang, so it goes on. */
static void shell_stopped(struct reap_watch *w, int sig)
{
	struct sess *s = w->arg;

	if (!s->pid)
		return;
	kill(s->pid, SIGCONT);
	sess_error(s, "the shell was stopped by signal %d; continued it", sig);
}

/* The shell's directory, first cwd and owner (sessions/session/shell.h). */
#define SHELL_WHO(s)                                                           \
	((struct shell_who){ (s)->dir, (s)->cwd, (s)->uid, (s)->gid })

int driver_spawn(struct sess *s, bool fresh)
{
	char **envp;
	pid_t pid;

	env_fit_exec(s);
	envp = envmap_envp(&s->env);
	if (!envp)
		return -ENOMEM;
	pid = tmpl_spawn(conf.shell, &SHELL_WHO(s), envp, &s->cg, fresh,
			 &s->ctl_fd, &s->res.fd);
	if (pid < 0)
		pid = shell_spawn(conf.shell, &SHELL_WHO(s), envp, &s->cg,
				  &s->ctl_fd, &s->res.fd);
	envmap_envp_free(envp);
	return pid < 0 ? (int)pid : driver_take(s, pid);
}

int driver_take(struct sess *s, pid_t pid)
{
	s->pid = pid;
	s->spoke = false;
	reap_add(&s->shell_reap, pid, shell_gone, s);
	s->shell_reap.stopped = shell_stopped;
	s->shell_idle = false;
	s->cg.leader = s->cg.sid = pid; /* the shell calls setsid() */
	s->res.fn = on_results;
	s->res.arg = s;
	env_sent(s);
	log_msg(LOG_DEBUG, "session %s: shell %ld started", s->name, (long)pid);
	return loop_add(&s->res, EPOLLIN);
}

void driver_read(struct sess *s)
{
	read_results(s);
}

void driver_adopt(struct sess *s)
{
	if (s->pid <= 0)
		return;
	reap_add(&s->shell_reap, s->pid, shell_gone, s);
	s->shell_reap.stopped = shell_stopped;
	s->res.fn = on_results;
	s->res.arg = s;
	if (s->res.fd >= 0 && loop_add(&s->res, EPOLLIN) < 0)
		log_msg(LOG_ERR, "session %s: its shell's reports: %m",
			s->name);
}

/* Gives r the fifos made for the next run. */
static int take_fifos(struct sess *s, struct run *r)
{
	int rc = chores_make_fifos(s);

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

/* r is running from now on, with the timeout in force now. */
static void mark_running(struct sess *s, struct run *r)
{
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
}

/* A new key for each run: what only the driver can know. */
static uint64_t new_key(void)
{
	static uint64_t state;
	struct timespec ts;
	uint64_t k;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) == sizeof(k))
		return k;
	/* no entropy yet (early boot): still nothing a command can know */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	state += 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_nsec;
	return state * 0xbf58476d1ce4e5b9ULL;
}

/* The control line "ID GEN FLAG SPIN KEY OPTS" that starts r in the
 * shell (OPTS: runopts_flags). */
static int send_line(struct sess *s, struct run *r, bool pre)
{
	char line[104];

	s->run_key = new_key();
	snprintf(line, sizeof(line), "%llu %u %c %llu %0*llx %s\n",
		 (unsigned long long)r->id, r->fifo_gen, pre ? 'p' : '-',
		 can_idle ?
			 (unsigned long long)conf.shell_spin_us / SPIN_POLL_US :
			 0ULL,
		 SHELL_KEY_LEN, (unsigned long long)s->run_key,
		 runopts_flags(r));
	return write(s->ctl_fd, line, strlen(line)) < 0 ? -errno : 0;
}

/* Spools, fifos, prelude, then the line. */
int driver_start(struct sess *s, struct run *r)
{
	char name[64];
	bool pre = s->pend_set.n || s->pend_unset.n || s->pend_cwd;
	int rc = 0;

	driver_sched(s, false);
	if (s->shell_idle)
		driver_retire(s); /* it cannot be raised: never run in it */
	if (!s->pid)
		rc = driver_spawn(s, false);
	if (rc == 0)
		rc = take_fifos(s, r);
	run_file(r, "pre", name, sizeof(name));
	if (rc == 0 && pre) {
		r->files |= RUN_F_PRE;
		rc = shell_write_prelude(s->dirfd, name, &SHELL_WHO(s),
					 &s->pend_set, &s->pend_unset,
					 s->pend_cwd ? s->cwd : NULL);
	}
	if (rc == 0)
		rc = runopts_write_file(r, s->dirfd, s->uid, s->gid);
	mark_running(s, r);
	if (rc == 0)
		rc = send_line(s, r, pre);
	/* a new shell that ended before it read the line (a cwd it could
	 * not enter): its reaping ends the run with what it said */
	if (rc == -EPIPE && !s->spoke)
		rc = 0;
	if (rc == 0 && pre)
		env_sent(s);
	if (run_changed_hook)
		run_changed_hook(r);
	return rc;
}

void sess_reset(struct sess *s)
{
	if (s->active && s->active->state == RUN_RUNNING) {
		s->reset = true;
		sess_kill_run(s, SIGTERM, END_KILLED);
		return;
	}
	kill_leftovers(s, SIGTERM); /* a new shell starts with nothing left */
	driver_retire(s);
}
