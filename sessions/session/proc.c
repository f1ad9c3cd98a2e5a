/*
 * proc.c - background processes (procs/NAME): started apart from the
 * session's shell, in its cwd and exported variables as they are at
 * start, each in a cgroup of its own below the session's, with output
 * spooled like a run's and a stdin fed from the filesystem. Each claims
 * its own exit (reap.c) and arms its own timer (its kill's escalation,
 * the wait of its kill for the tree a dead leader left, the wait of
 * rmdir for its cgroup).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/session/output.h"
#include "sessions/core/creds.h"
#include "sessions/session/proc.h"
#include "sessions/session/runopts.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "sessions/session/fdq.h"
#include "sessions/session/runstate.h"
#include "sessions/session/statekeys.h"
#include "sessions/core/state.h"

struct run *proc_by_name(struct sess *s, const char *name)
{
	return run_find(&s->procs, name);
}

/* Its run is freed (run part_free). */
static void part_free(struct run *p)
{
	free(p->proc->stdin_q.p);
	free(p->proc);
	p->proc = NULL;
}

/* Gives p the part of a process: no cgroup, stdin or child yet. */
static int add_part(struct run *p)
{
	p->proc = calloc(1, sizeof(*p->proc));
	if (!p->proc)
		return -ENOMEM;
	p->proc->cg.dfd = p->proc->stdin_w.fd = p->proc->start.w.fd = -1;
	p->is_proc = true;
	p->part_free = part_free;
	return 0;
}

int proc_new(struct sess *s, const char *name, struct run **out)
{
	state_touch();
	int rc = sess_child_name(s, "procs", name, proc_by_name(s, name));
	char tag[32];
	struct run *p;

	if (rc < 0)
		return rc;
	if (s->nprocs >= conf.max_procs_per_session) {
		sess_error(s, "procs/%s: max_procs_per_session (%llu) reached",
			   name,
			   (unsigned long long)conf.max_procs_per_session);
		return -ENOSPC;
	}
	p = run_new_empty();
	if (!p || !(p->name = strdup(name)) || add_part(p) < 0) {
		if (p)
			run_unref(p);
		return -ENOMEM;
	}
	snprintf(tag, sizeof(tag), "p%llu", (unsigned long long)p->id);
	rc = contain_new_in(&p->proc->cg, &s->cg, tag);
	if (rc < 0) {
		run_unref(p);
		return rc;
	}
	p->sess = s;
	list_add_tail(&s->procs, &p->link);
	s->nprocs++;
	*out = p;
	return 0;
}

/* In the child: everything that must hold before the command starts. */
static void child(struct sess *s, struct run *p, int in, int out, int err,
		  int why, char **envp, const char *script)
{
	char *argv[] = { "bash", "--noprofile", "--norc", (char *)script,
			 NULL };

	creds_reset_signals(0);
	setsid();
	if (contain_enter(&p->proc->cg) < 0 || dup2(in, 0) < 0 ||
	    dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	shell_exec_child(why, s->uid, s->gid,
			 p->opts && p->opts->cwd ? p->opts->cwd : s->cwd, argv,
			 envp);
}

/* Pipes for stdout, stderr and (when wanted) stdin: fds[0..5]. */
static int make_pipes(struct run *p, int fds[6])
{
	int i;

	for (i = 0; i < 6; i++)
		fds[i] = -1;
	if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(fds + 2, O_CLOEXEC) < 0)
		return -errno;
	if (p->proc->want_stdin)
		return pipe2(fds + 4, O_CLOEXEC) < 0 ? -errno : 0;
	fds[4] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fds[4] < 0 ? -errno : 0;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A running proc keeps its stdout and stderr pipes, its stdin's when
 * fed and its three spools (out, err, index): counted as its owner's
 * from its start to its end, checked against her bound and the cut with
 * the pipes just made (fds). */
static int charge(struct sess *s, struct run *p, const int fds[6])
{
	unsigned n = p->proc->want_stdin ? 6 : 5;
	char why[160];
	int top = -1, rc;

	for (int i = 0; i < 6; i++)
		top = fds[i] > top ? fds[i] : top;
	rc = fdq_charge(s->uid, n, top);
	if (rc == 0)
		p->proc->fd_charge = n;
	else
		sess_error(s, "procs/%s: cannot start: %s", p->name,
			   fdq_why(s->uid, rc, why, sizeof(why)));
	return rc;
}

/* Its pipes and spools are closed (its end, or its removal). */
static void uncharge(struct run *p)
{
	if (p->sess)
		fdq_uncharge(p->sess->uid, &p->proc->fd_charge);
}

static void on_stdin(struct loop_watch *w, uint32_t events);
static void reaped(struct reap_watch *w, int wstatus);

/* fd, the write end of p's stdin, is watched for room while bytes or
 * its end wait to be written. */
static void watch_stdin(struct run *p, int fd)
{
	struct proc_part *pp = p->proc;

	pp->stdin_w = (struct loop_watch){ fd, on_stdin, p };
	loop_add(&pp->stdin_w, pp->stdin_q.len || pp->stdin_eof ? EPOLLOUT : 0);
}

/* Starts the process; fds: out r/w, err r/w, stdin r/w. */
static int spawn(struct sess *s, struct run *p, int fds[6])
{
	char **envp = runopts_envp(p, &s->env);
	char script[4096];
	int why;
	pid_t pid;

	if (!envp)
		return -ENOMEM;
	if (execerr_open(&p->proc->start, &why) < 0) {
		envmap_envp_free(envp);
		return -errno;
	}
	snprintf(script, sizeof(script), "%s/r%llu.cmd", s->dir,
		 (unsigned long long)p->id);
	pid = contain_fork(&p->proc->cg);
	if (pid == 0)
		child(s, p, fds[4], fds[1], fds[3], why, envp, script);
	envmap_envp_free(envp);
	if (pid < 0) {
		int rc = -errno;

		close(why);
		execerr_close(&p->proc->start);
		return rc;
	}
	execerr_watch(&p->proc->start, why);
	p->pid = pid;
	reap_add(&p->proc->reap, pid, reaped, p);
	/* the child calls setsid() */
	p->proc->cg.leader = p->proc->cg.sid = pid;
	return 0;
}

int proc_start(struct sess *s, struct run *p, const char *text, size_t len)
{
	state_touch();
	int fds[6] = { -1, -1, -1, -1, -1, -1 }, rc;
	bool refused = false;

	if (p->has_cmd)
		return -EBUSY;
	if (s->dying || p->sess != s)
		return -ENOENT; /* deleted while its cmd was open */
	rc = run_set_cmd(p, s->dirfd, text, len);
	p->has_cmd = true;
	p->started_wall = p->queued_wall = loop_wall_ms();
	p->started_mono = loop_now_ms();
	if (rc == 0)
		rc = make_pipes(p, fds);
	if (rc == 0)
		refused = (rc = charge(s, p, fds)) < 0; /* it said why */
	if (rc == 0)
		rc = spawn(s, p, fds);
	if (rc < 0) {
		close_all(fds, 6);
		if (!refused)
			sess_error(s, "procs/%s: cannot start: %s", p->name,
				   strerror(-rc));
		uncharge(p);
		run_finish(p, 126, 0, END_ERROR);
		return rc;
	}
	close(fds[1]);
	close(fds[3]);
	close(fds[4]);
	p->state = RUN_RUNNING;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[2], F_SETFL, O_NONBLOCK);
	output_watch(p, &p->pipe_o, fds[0]);
	output_watch(p, &p->pipe_e, fds[2]);
	if (p->proc->want_stdin) {
		fcntl(fds[5], F_SETFL, O_NONBLOCK);
		watch_stdin(p, fds[5]);
	} else {
		close(fds[5]);
	}
	log_msg(LOG_INFO, "session %s: procs/%s started, pid %ld", s->name,
		p->name, (long)p->pid);
	if (run_changed_hook)
		run_changed_hook(p);
	return 0;
}

static void close_stdin(struct run *p)
{
	if (p->proc->stdin_w.fd >= 0) {
		loop_del(&p->proc->stdin_w);
		close(p->proc->stdin_w.fd);
	}
	p->proc->stdin_w.fd = -1;
	p->proc->stdin_q.len = 0;
}

/* Writes what stdin can take; closes it after eof once drained. */
static void flush_stdin(struct run *p)
{
	struct proc_part *pp = p->proc;
	ssize_t n;

	while (pp->stdin_w.fd >= 0 && pp->stdin_q.len > 0) {
		n = write(pp->stdin_w.fd, pp->stdin_q.p, pp->stdin_q.len);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			close_stdin(p); /* EPIPE: the reader is gone */
			return;
		}
		memmove(pp->stdin_q.p, pp->stdin_q.p + n, pp->stdin_q.len - n);
		pp->stdin_q.len -= (size_t)n;
	}
	if (pp->stdin_w.fd < 0)
		return;
	if (pp->stdin_q.len == 0 && pp->stdin_eof)
		close_stdin(p);
	else
		loop_mod(&pp->stdin_w, pp->stdin_q.len ? EPOLLOUT : 0);
}

static void on_stdin(struct loop_watch *w, uint32_t events)
{
	(void)events;
	flush_stdin(w->arg);
}

#define STDIN_QUEUE_MAX (1 << 20)

void proc_want_stdin(struct run *p)
{
	p->proc->want_stdin = true;
}

int proc_write(struct run *p, const char *buf, size_t len)
{
	if (p->proc->stdin_eof || (p->state == RUN_DONE) ||
	    (p->state == RUN_RUNNING && p->proc->stdin_w.fd < 0))
		return -EPIPE;
	if (p->proc->stdin_q.len + len > STDIN_QUEUE_MAX)
		return -EAGAIN;
	p->proc->want_stdin = true;
	sb_add(&p->proc->stdin_q, buf, len);
	if (p->proc->stdin_q.err)
		return p->proc->stdin_q.err;
	flush_stdin(p);
	return 0;
}

void proc_eof(struct run *p)
{
	p->proc->stdin_eof = true;
	if (p->state == RUN_RUNNING)
		flush_stdin(p);
}

static void on_timer(struct loop_timer *t);

/* How often a kill looks whether the tree of a dead leader is gone. */
#define TREE_POLL_MS 20

/* Sets p's timer: the escalation of its kill, a poll of the tree its
 * leader left during the grace, or, while rmdir waits for what it left
 * behind, a poll of its cgroup. */
static void arm(struct run *p)
{
	int64_t t = 0, poll = loop_now_ms() + TREE_POLL_MS;

	if (p->state == RUN_RUNNING && p->proc->kill_stage == 1)
		t = p->proc->kill_at;
	if (p->state == RUN_RUNNING && p->proc->leader_gone && (!t || poll < t))
		t = poll;
	if (p->proc->gone_cb && p->state != RUN_RUNNING)
		t = loop_now_ms() + 10;
	if (t)
		loop_timer_add(&p->proc->timer, t, on_timer, p);
	else
		loop_timer_del(&p->proc->timer);
}

int proc_signal(struct run *p, int sig)
{
	if (p->state != RUN_RUNNING)
		return -ESRCH;
	if (p->end == END_NONE && (sig == SIGTERM || sig == SIGKILL ||
				   sig == SIGINT || sig == SIGQUIT)) {
		p->end = END_KILLED;
		p->sig = sig;
	}
	contain_signal(&p->proc->cg, sig, 0);
	/* The processes are signalled one by one as they are listed, and one
	 * forked meanwhile (bash starting the command) would miss it; a
	 * signal to the leader's process group reaches such a child too,
	 * the kernel making fork and it atomic. While the leader is not
	 * reaped, no other group can have its number (before its setsid
	 * there is no group yet: ESRCH, and it got the signal above). */
	if (p->proc->cg.leader > 0)
		kill(-p->proc->cg.leader, sig);
	if (sig == SIGTERM && p->proc->kill_stage == 0) {
		p->proc->kill_stage = 1;
		p->proc->kill_at = loop_now_ms() + (int64_t)conf.kill_grace_ms;
		arm(p);
	} else if (sig == SIGKILL && p->proc->kill_stage == 1) {
		p->proc->kill_stage = 2; /* nothing is left to wait for */
		arm(p);
	}
	return 0;
}

/* Unlinks p's files, frees its cgroup and drops it. */
static void drop_proc(struct sess *s, struct run *p)
{
	loop_timer_del(&p->proc->timer);
	reap_del(&p->proc->reap);
	run_forget_files(p, ~0u, sess_trash, s);
	output_close(p, &p->pipe_o);
	output_close(p, &p->pipe_e);
	close_stdin(p);
	execerr_close(&p->proc->start);
	run_finish(p, 128 + SIGTERM, SIGTERM, END_CANCELED); /* never ran */
	uncharge(p);
	contain_free(&p->proc->cg);
	list_del(&p->link);
	s->nprocs--;
	p->sess = NULL;
	run_unref(p);
}

/* Drops p once its cgroup is empty if rmdir waits for it. Returns true
 * when it did. */
static bool finish_removal(struct sess *s, struct run *p)
{
	void (*cb)(void *) = p->proc->gone_cb;
	void *arg = p->proc->gone_arg;

	if (!cb || p->state == RUN_RUNNING || !contain_empty(&p->proc->cg))
		return false;
	drop_proc(s, p);
	cb(arg);
	return true;
}

/* p has ended: its leader's wait status is wstatus. What is left of its
 * tree goes when it was killed or rmdir waits. */
static void ended(struct run *p, int wstatus)
{
	struct sess *s = p->sess;
	enum run_end end = p->end == END_KILLED ? END_KILLED : END_EXITED;

	output_close(p, &p->pipe_o);
	output_close(p, &p->pipe_e);
	close_stdin(p);
	if (execerr_reaped(&p->proc->start)) {
		/* it never ran its command: an error, not the command's exit */
		sess_error(s, "procs/%s: %s", p->name, p->proc->start.why);
		end = END_ERROR;
	}
	if (WIFSIGNALED(wstatus))
		run_finish(p, 128 + WTERMSIG(wstatus), WTERMSIG(wstatus), end);
	else
		run_finish(p, WEXITSTATUS(wstatus), 0, end);
	uncharge(p);
	log_msg(LOG_INFO, "session %s: procs/%s ended (%s, exit %d)", s->name,
		p->name, run_state_name(p), p->exit_code);
	if (p->end == END_KILLED || p->proc->gone_cb)
		contain_kill(&p->proc->cg); /* the rest of its tree */
	if (!finish_removal(s, p))
		arm(p);
}

static void on_timer(struct loop_timer *t)
{
	struct run *p = t->arg;
	bool running = p->state == RUN_RUNNING;

	/* A tree that went within the grace ended as its leader did; one
	 * that needed KILL ended by KILL, whatever ended its leader, once
	 * the KILLed are gone too (they take a moment to exit). */
	if (running && p->proc->leader_gone && contain_empty(&p->proc->cg)) {
		ended(p, p->proc->kill_stage == 2 ? W_EXITCODE(0, SIGKILL) :
						    p->proc->leader_wstatus);
		return;
	}
	if (running && p->proc->kill_stage == 1 &&
	    loop_now_ms() >= p->proc->kill_at) {
		sess_error(p->sess, "procs/%s outlived SIGTERM: SIGKILL",
			   p->name);
		contain_kill(&p->proc->cg);
		p->proc->kill_stage = 2;
	}
	if (!finish_removal(p->sess, p))
		arm(p);
}

/* The process p ended (wstatus from waitpid). During a kill's grace the
 * rest of its tree keeps the grace: p ends when they are gone too. */
static void reaped(struct reap_watch *w, int wstatus)
{
	struct run *p = w->arg;

	p->proc->cg.leader = 0; /* reaped: its pid may be reused */
	if (p->proc->kill_stage && !contain_empty(&p->proc->cg)) {
		p->proc->leader_gone = true;
		p->proc->leader_wstatus = wstatus;
		arm(p);
		return;
	}
	ended(p, wstatus);
}

int proc_remove(struct sess *s, struct run *p, void (*cb)(void *), void *arg)
{
	if (p->proc->gone_cb)
		return -EBUSY;
	p->proc->gone_cb = cb;
	p->proc->gone_arg = arg;
	if (p->state == RUN_RUNNING)
		return proc_signal(p, SIGTERM);
	/* its leader is gone; what it left behind goes too */
	contain_kill(&p->proc->cg);
	if (!finish_removal(s, p))
		arm(p);
	return 0;
}

void proc_free_all(struct sess *s)
{
	while (!list_empty(&s->procs)) {
		struct run *p = list_entry(s->procs.next, struct run, link);

		if (p->state == RUN_RUNNING)
			run_finish(p, 128 + SIGKILL, SIGKILL, END_KILLED);
		drop_proc(s, p); /* (and one that never started: canceled) */
	}
}

/* The fields of a proc beyond a run's (runstate.h), for an upgrade. */
enum {
	PK_STDIN_Q = RUNSTATE_KEY_MAX,
	PK_STDIN_W,
	PK_WANT_STDIN,
	PK_STDIN_EOF,
	PK_LEADER,
	PK_FD_CHARGE,
};

void proc_save(const struct run *p, struct state_w *w)
{
	state_open(w, SSTATE_PROC);
	run_save_fields(p, w);
	state_put(w, PK_STDIN_Q, p->proc->stdin_q.p, p->proc->stdin_q.len);
	state_put_fd(w, PK_STDIN_W, p->proc->stdin_w.fd);
	state_put_u64(w, PK_WANT_STDIN, p->proc->want_stdin);
	state_put_u64(w, PK_STDIN_EOF, p->proc->stdin_eof);
	/* not in a checkpoint: after a crash that process is no child of
	 * the next server, whose reap would never see it end */
	if (!w->no_fds)
		state_put_i64(w, PK_LEADER, p->proc->cg.leader);
	state_put_u64(w, PK_FD_CHARGE, p->proc->fd_charge);
	state_close(w);
}

/* p's process and its stdin, watched again. */
static void adopt(struct run *p, const struct state_r *o)
{
	const void *q;
	size_t len;
	int fd = state_get_fd(o, PK_STDIN_W);
	pid_t pid = (pid_t)state_get_i64(o, PK_LEADER, 0);

	if (state_get(o, PK_STDIN_Q, &q, &len))
		sb_add(&p->proc->stdin_q, q, len);
	p->proc->want_stdin = state_get_u64(o, PK_WANT_STDIN, 0) != 0;
	p->proc->stdin_eof = state_get_u64(o, PK_STDIN_EOF, 0) != 0;
	if (fd >= 0)
		watch_stdin(p, fd);
	p->proc->fd_charge = (unsigned)state_get_u64(o, PK_FD_CHARGE, 0);
	if (p->proc->fd_charge &&
	    fdq_charge(p->sess->uid, p->proc->fd_charge, -1) < 0)
		p->proc->fd_charge = 0;
	if (p->state == RUN_RUNNING && pid > 0) {
		p->proc->cg.leader = p->proc->cg.sid = pid;
		reap_add(&p->proc->reap, pid, reaped, p);
	} else if (p->state == RUN_RUNNING) {
		/* the crash case: its process was not handed over */
		sess_error(p->sess, "procs/%s: lost by a restart of sessionfs",
			   p->name);
		output_recover(p);
		run_finish(p, RUN_EXIT_LOST, 0, END_ERROR);
	}
}

int proc_restore(struct sess *s, const struct state_r *o)
{
	char tag[32];
	struct run *p = run_restore_fields(o);

	if (!p || add_part(p) < 0) {
		if (p)
			run_unref(p);
		return -ENOMEM;
	}
	snprintf(tag, sizeof(tag), "p%llu", (unsigned long long)p->id);
	p->proc->cg.parent_dfd = s->cg.dfd;
	p->proc->cg.nested = s->cg.dfd >= 0;
	snprintf(p->proc->cg.name, sizeof(p->proc->cg.name), "%s", tag);
	p->sess = s;
	list_add_tail(&s->procs, &p->link);
	s->nprocs++;
	adopt(p, o);
	return 0;
}
