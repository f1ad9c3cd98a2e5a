/*
 * tty.c - the life of a session's terminal: its PTY (the master is
 * O_CLOEXEC and watched by the loop), its interactive shell (as the
 * session's owner, in a cgroup of its own below the session's, with no
 * descriptor of the daemon), what it prints (spooled, fed to the screen
 * and recorded), what is typed (queued for the PTY), its size, kills and
 * its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "sessions/session/chores.h"
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/core/state.h"
#include "sessions/session/output.h"
#include "sessions/session/sess.h"
#include "sessions/tty/tty.h"
#include "sessions/tty/ttyproc.h"

static char iobuf[4096]; /* what one read of a PTY gives at most */

struct tty *tty_of(struct sess *s)
{
	struct tty *t = s->tty;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->s = s;
	t->cols = 80;
	t->rows = 24;
	t->quiet_ms = TTY_QUIET_MS;
	t->ready_ms = TTY_READY_MS;
	t->expect_ms = TTY_EXPECT_MS;
	t->master.fd = -1;
	t->start.w.fd = -1;
	t->cast.fd = -1;
	t->cg.dfd = -1;
	s->tty = t;
	sess_part_add(s, &t->part, &tty_part_ops);
	return t;
}

static void changed(struct tty *t)
{
	if (t->out && run_changed_hook)
		run_changed_hook(t->out);
}

static void hung_up(struct tty *t);

/* What the master is watched for: room when input is queued, and what
 * the program prints unless some of it still waits for the screen. */
static void watch(struct tty *t)
{
	uint32_t mask =
		(t->pend.len ? 0 : EPOLLIN) | (t->wq.len ? EPOLLOUT : 0);

	if (t->watched && mask != t->mask && loop_mod(&t->master, mask) == 0)
		t->mask = mask;
}

/* Writes what the PTY takes of the queue; watches for room otherwise.
 * EIO: no process has the slave open for now; the queue waits. */
static void flush_queue(struct tty *t)
{
	ssize_t n = 0;

	while (t->master.fd >= 0 && t->wq.len > 0) {
		n = write(t->master.fd, t->wq.p, t->wq.len);
		if (n <= 0)
			break;
		memmove(t->wq.p, t->wq.p + n, t->wq.len - (size_t)n);
		t->wq.len -= (size_t)n;
	}
	if (n < 0 && errno == EIO)
		hung_up(t);
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		t->wq.len = 0;
	watch(t);
}

/* What the emulator sends the program: answers and encoded keys. */
static void to_pty(void *arg, const char *buf, size_t len)
{
	struct tty *t = arg;

	t->last_in_ms = loop_now_ms();
	sb_add(&t->wq, buf, len);
	flush_queue(t);
}

/* What the program printed: spooled and recorded now, on the screen as
 * time allows (drain). */
static void printed(struct tty *t, const char *buf, size_t n)
{
	uint64_t at = t->out->out.size;

	sb_add(&t->pend, buf, n);
	output_keep(t->out, buf, n);
	cast_output(&t->cast, at, (size_t)(t->out->out.size - at));
	t->last_out_ms = loop_now_ms();
	state_touch(); /* a crash's restart keeps the screen's last text */
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Feeds the screen what is pending, a piece at a time (term_piece), until
 * the time is up; whether nothing is left. */
static bool feed(struct tty *t, int64_t until_us)
{
	size_t done = 0, piece = term_piece(t->term);

	while (done < t->pend.len && now_us() < until_us) {
		const char *p = t->pend.p + done,
			   *end = t->pend.p + t->pend.len;
		const char *nl = p;

		/* cut after newlines only: libvterm 0.1.4 loses a title
		 * (OSC) whose bytes come in two writes */
		for (size_t i = 0; i < piece && nl && nl < end; i++) {
			nl = memchr(nl, '\n', (size_t)(end - nl));
			nl = nl ? nl + 1 : NULL;
		}
		nl = nl ? nl : end;
		done += term_take(t->term, p, (size_t)(nl - p));
	}
	if (done == 0)
		return t->pend.len == 0;
	memmove(t->pend.p, t->pend.p + done, t->pend.len - done);
	t->pend.len -= done;
	return t->pend.len == 0;
}

static void drain(struct tty *t, bool all);

static void on_more(struct loop_timer *m)
{
	drain(m->arg, false);
}

/* Reads what the PTY holds and puts it on the screen for at most
 * DRAIN_US per round of the loop (all: until the PTY is empty), so that
 * a flood of output leaves the loop to the other requests (a listing is
 * some four rounds); the rest waits for the next round (a timer of now),
 * and the PTY is not read until it is on the screen. */
#define DRAIN_US 500
/* The output paused (TTY_SETTLE_MS): the screen feeds what it held. */
static void on_settle(struct loop_timer *s)
{
	struct tty *t = s->arg;
	int64_t at = t->last_out_ms + TTY_SETTLE_MS;

	if (at > loop_now_ms() || !term_settle(t->term, now_us() + DRAIN_US))
		loop_timer_add(s, at > loop_now_ms() ? at : loop_now_ms(),
			       on_settle, t);
}

static void drain(struct tty *t, bool all)
{
	int64_t until = all ? INT64_MAX : now_us() + DRAIN_US;
	bool any = t->pend.len > 0;

	/* a waiter sees every line, as each round feeds them */
	term_skip(t->term, list_empty(&t->out->waiters));
	while (feed(t, until) && t->master.fd >= 0) {
		ssize_t n = read(t->master.fd, iobuf, sizeof(iobuf));

		if (n > 0) {
			printed(t, iobuf, (size_t)n);
			any = true;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		hung_up(t);
		break;
	}
	if (t->pend.len > 0)
		loop_timer_add(&t->more, loop_now_ms(), on_more, t);
	if (!term_settled(t->term) && !t->settle.armed) /* once paused */
		loop_timer_add(&t->settle, t->last_out_ms + TTY_SETTLE_MS,
			       on_settle, t);
	/* also when the emulator answered while its input was pending (an
	 * answer to ESC[6n is written from inside the feed) */
	watch(t);
	if (any)
		changed(t);
}

/* Whether a process has the slave open again: then the master no longer
 * reports a hangup. */
static void on_retry(struct loop_timer *r)
{
	struct tty *t = r->arg;
	struct pollfd p = { .fd = t->master.fd, .events = POLLIN };
	size_t queued;

	if (t->master.fd < 0 || t->watched)
		return;
	if (poll(&p, 1, 0) < 0 || (p.revents & POLLHUP) ||
	    loop_add(&t->master, EPOLLIN) < 0) {
		loop_timer_add(r, loop_now_ms() + TTY_RETRY_MS, on_retry, t);
		return;
	}
	t->watched = true;
	t->mask = EPOLLIN;
	queued = t->wq.len;
	flush_queue(t);
	if (t->wq.len < queued)
		changed(t); /* room for the writers that wait */
	drain(t, false);
}

/* EIO or HUP: no process has the slave open. epoll would report the
 * hangup without end, so the master is not watched; while the shell
 * lives, one of its processes may open /dev/tty again, which a timer
 * looks for. The master is kept open until the shell is reaped (which
 * reads it once more). */
static void hung_up(struct tty *t)
{
	if (t->watched)
		loop_del(&t->master);
	t->watched = false;
	if (t->pid && t->master.fd >= 0 && !t->retry.armed)
		loop_timer_add(&t->retry, loop_now_ms() + TTY_RETRY_MS,
			       on_retry, t);
}

static void on_master(struct loop_watch *w, uint32_t events)
{
	struct tty *t = w->arg;
	size_t queued = t->wq.len;

	if (events & EPOLLOUT)
		flush_queue(t);
	/* the emulator's answers may flush the queue too */
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !t->more.armed)
		drain(t, false);
	/* room for the writers that wait: woken here, never from to_pty (a
	 * writer being answered is in the middle of the waiters) */
	if (t->wq.len < queued)
		changed(t);
}

static void close_master(struct tty *t)
{
	if (t->master.fd < 0)
		return;
	if (t->watched)
		loop_del(&t->master);
	t->watched = false;
	close(t->master.fd);
	t->master.fd = -1;
	t->wq.len = 0;
	t->pend.len = 0;
	loop_timer_del(&t->more);
	loop_timer_del(&t->retry);
}

/* The previous shell's output, screen and recording go. */
static void drop_output(struct tty *t)
{
	char name[64];

	if (t->out) {
		run_finish(t->out, t->exit_code, t->sig, END_EXITED);
		run_file(t->out, "cast", name, sizeof(name));
		if (t->cast.fd >= 0)
			sess_trash(t->s, name);
		run_forget_files(t->out, ~0u, sess_trash, t->s);
		t->out->sess = NULL;
		run_unref(t->out);
		t->out = NULL;
	}
	cast_close(&t->cast);
	loop_timer_del(&t->settle);
	term_free(t->term);
	t->term = NULL;
}

/* A new output spool (a run that is never queued) and screen. */
static int new_output(struct tty *t)
{
	struct run *r = run_new_empty();
	char name[64];

	if (!r || !(r->name = strdup("tty"))) {
		if (r)
			run_unref(r);
		return -ENOMEM;
	}
	r->sess = t->s;
	r->is_tty = true;
	r->state = RUN_RUNNING;
	r->started_wall = r->queued_wall = loop_wall_ms();
	r->started_mono = loop_now_ms();
	t->out = r;
	t->term = term_new(t->cols, t->rows, conf.tty_scrollback_lines, to_pty,
			   t);
	if (!t->term)
		return -ENOMEM;
	run_file(r, "cast", name, sizeof(name));
	if (cast_open(&t->cast, t->s->dirfd, name, t->cols, t->rows) < 0)
		sess_error(t->s, "tty: no recording: %s", strerror(errno));
	return 0;
}

/* What the terminal's shell starts with. */
static struct ttyproc_spec spec(const struct tty *t)
{
	return (struct ttyproc_spec){ t->cols,	   t->rows,  t->s->uid,
				      t->s->gid,   t->s->cwd, &t->s->env,
				      t->has_cg ? &t->cg : NULL };
}

/* The PTY: the master watched by the loop, the slave the owner's. */
static int open_pty(struct tty *t, int *slave)
{
	struct ttyproc_spec sp = spec(t);
	int m, rc = ttyproc_open(&sp, &m, slave);

	if (rc == 0)
		t->master = (struct loop_watch){ m, on_master, t };
	return rc;
}

static void reaped(struct reap_watch *w, int wstatus);

static int spawn(struct tty *t, int slave)
{
	struct ttyproc_spec sp = spec(t);
	pid_t pid = ttyproc_spawn(&sp, slave, &t->start);

	if (pid < 0)
		return pid;
	if (t->has_cg)
		contain_add(&t->cg, pid);
	t->pid = pid;
	t->cg.leader = t->cg.sid = pid;
	reap_add(&t->reap, pid, reaped, t);
	return 0;
}

/* The cgroup, once per terminal: below the session's, so that the
 * session's kills and runs' kills do not reach it and its deletion
 * does. */
static void make_cgroup(struct tty *t)
{
	if (t->has_cg)
		return;
	if (contain_new_in(&t->cg, &t->s->cg, "tty") == 0)
		t->has_cg = true;
}

int tty_start(struct tty *t)
{
	int slave = -1, rc;

	if (t->state == TTY_RUNNING)
		return 0;
	if (t->s->dying)
		return -ENOENT;
	drop_output(t);
	t->exit_code = t->sig = 0;
	make_cgroup(t);
	rc = new_output(t);
	if (rc == 0)
		rc = open_pty(t, &slave);
	if (rc == 0)
		rc = spawn(t, slave);
	if (slave >= 0)
		close(slave);
	if (rc == 0)
		rc = loop_add(&t->master, EPOLLIN);
	t->watched = rc == 0;
	t->mask = EPOLLIN;
	if (rc < 0) {
		close_master(t);
		sess_error(t->s, "tty: cannot start: %s", strerror(-rc));
		t->state = TTY_EXITED;
		t->exit_code = 126;
		if (t->out)
			run_finish(t->out, 126, 0, END_ERROR);
		return rc;
	}
	t->state = TTY_RUNNING;
	t->last_out_ms = loop_now_ms();
	state_touch();
	log_msg(LOG_INFO, "session %s: tty started, pid %ld, %dx%d", t->s->name,
		(long)t->pid, t->cols, t->rows);
	changed(t);
	return 0;
}

static void reaped(struct reap_watch *w, int wstatus)
{
	struct tty *t = w->arg;

	t->cg.leader = 0;
	t->pid = 0;
	if (execerr_reaped(&t->start)) /* its screen says it too */
		sess_error(t->s, "tty: %s", t->start.why);
	drain(t, true);	 /* what it printed last */
	close_master(t); /* hangs up what it left behind */
	if (t->has_cg)
		contain_kill(&t->cg);
	loop_timer_del(&t->grace);
	t->state = TTY_EXITED;
	t->exit_code = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) :
					      WEXITSTATUS(wstatus);
	t->sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	run_finish(t->out, t->exit_code, t->sig, END_EXITED);
	state_touch();
	log_msg(LOG_INFO, "session %s: tty ended (exit %d)", t->s->name,
		t->exit_code);
	if (t->restart && !t->s->dying) {
		t->restart = false;
		tty_start(t);
	}
}

int tty_input(struct tty *t, const char *buf, size_t len)
{
	if (t->state != TTY_RUNNING || t->master.fd < 0)
		return -EIO;
	/* one write larger than the queue is taken whole once it is empty */
	if (t->wq.len > 0 && t->wq.len + len > TTY_INPUT_QUEUE_MAX)
		return -EAGAIN;
	to_pty(t, buf, len);
	return t->wq.err;
}

int tty_keys(struct tty *t, const struct keys_seq *seq)
{
	if (t->state != TTY_RUNNING || t->master.fd < 0)
		return -EIO;
	if (t->wq.len > TTY_INPUT_QUEUE_MAX)
		return -EAGAIN;
	term_keys(t->term, seq);
	return t->wq.err;
}

/* "COLS ROWS" (or COLSxROWS), each TTY_SIZE_MIN..TTY_SIZE_MAX and at most
 * TTY_AREA_MAX cells; blanks after it are taken. Below 2 columns,
 * libvterm 0.1.4 crashes on a wide character; each scrolled line moves the
 * whole screen, so the area bounds the cost of a line. */
int tty_parse_size(const char *p, size_t len, int *cols, int *rows)
{
	char buf[64], *end;
	long c, r;

	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, p, len);
	buf[len] = '\0';
	c = strtol(buf, &end, 10);
	if (end == buf || (*end != ' ' && *end != 'x'))
		return -EINVAL;
	p = end + 1;
	r = strtol(p, &end, 10);
	if (end == p || *end != '\0' || c < TTY_SIZE_MIN || c > TTY_SIZE_MAX ||
	    r < TTY_SIZE_MIN || r > TTY_SIZE_MAX || c * r > TTY_AREA_MAX)
		return -EINVAL;
	*cols = (int)c;
	*rows = (int)r;
	return 0;
}

void tty_resize(struct tty *t, int cols, int rows)
{
	struct winsize ws = { .ws_row = (unsigned short)rows,
			      .ws_col = (unsigned short)cols };

	t->cols = cols;
	t->rows = rows;
	state_touch();
	if (t->term)
		term_resize(t->term, cols, rows);
	if (t->state != TTY_RUNNING)
		return;
	if (t->master.fd >= 0)
		ioctl(t->master.fd, TIOCSWINSZ, &ws); /* SIGWINCH */
	cast_resize(&t->cast, cols, rows);
	changed(t);
}

static void on_grace(struct loop_timer *g)
{
	struct tty *t = g->arg;

	if (t->state != TTY_RUNNING)
		return;
	sess_error(t->s, "tty outlived SIGTERM: SIGKILL");
	if (t->has_cg)
		contain_kill(&t->cg);
	else if (t->pid)
		kill(t->pid, SIGKILL);
}

int tty_kill(struct tty *t, int sig)
{
	if (t->state != TTY_RUNNING)
		return -ESRCH;
	if (t->has_cg)
		contain_signal(&t->cg, sig, 0);
	else
		kill(-t->pid, sig);
	if (sig == SIGTERM && !t->grace.armed)
		loop_timer_add(&t->grace,
			       loop_now_ms() + (int64_t)conf.kill_grace_ms,
			       on_grace, t);
	return 0;
}

int tty_restart(struct tty *t)
{
	if (t->state != TTY_RUNNING)
		return tty_start(t);
	t->restart = true;
	return tty_kill(t, SIGKILL);
}

static void on_wake(struct loop_timer *w)
{
	changed(w->arg);
}

void tty_wake_at(struct tty *t, int64_t when)
{
	if (!t->wake.armed || when < t->wake.when)
		loop_timer_add(&t->wake, when, on_wake, t);
}

char *tty_status(const struct tty *t, size_t *len)
{
	static const char *const states[] = { "none", "running", "exited" };
	const struct run *r = t ? t->out : NULL;
	struct strbuf b = { 0 };

	sb_addf(&b, "state %s\npid %ld\n", states[t ? t->state : TTY_NONE],
		t ? (long)t->pid : 0L);
	if (t && t->state == TTY_EXITED)
		sb_addf(&b, "exit %d\nsignal %d\n", t->exit_code, t->sig);
	else
		sb_addf(&b, "exit -\nsignal -\n");
	sb_addf(&b, "cols %d\nrows %d\naltscreen %d\n", t ? t->cols : 80,
		t ? t->rows : 24, t && t->term && term_altscreen(t->term));
	sb_addf(&b, "output_bytes %llu\ntruncated %d\ntruncated_reason %s\n",
		r ? (unsigned long long)r->out.size : 0ULL,
		r && r->out.truncated, spool_cut_name(r ? r->out.cut : 0));
	sb_addf(&b, "waiting_input %d\n", tty_waiting_input(t));
	return sb_take(&b, len);
}

int tty_resume(struct tty *t, const struct state_r *screen, int64_t grace_at,
	       int64_t wake_at)
{
	if (t->state == TTY_NONE)
		return 0;
	t->term = term_restore(screen, t->cols, t->rows,
			       conf.tty_scrollback_lines, to_pty, t);
	if (!t->term)
		return -ENOMEM;
	t->master.fn = on_master;
	t->master.arg = t;
	if (t->pid)
		reap_add(&t->reap, t->pid, reaped, t);
	/* on_retry watches the master once a process has the slave open */
	if (t->master.fd >= 0)
		loop_timer_add(&t->retry, loop_now_ms(), on_retry, t);
	if (t->pend.len > 0)
		loop_timer_add(&t->more, loop_now_ms(), on_more, t);
	if (grace_at && t->state == TTY_RUNNING)
		loop_timer_add(&t->grace, grace_at, on_grace, t);
	if (wake_at)
		loop_timer_add(&t->wake, wake_at, on_wake, t);
	return 0;
}

void tty_hangup(struct tty *t)
{
	if (!t || t->state != TTY_RUNNING)
		return;
	t->restart = false;
	close_master(t);
	tty_kill(t, SIGHUP);
	tty_kill(t, SIGTERM);
}

bool tty_alive(const struct tty *t)
{
	return t && t->pid != 0;
}

void tty_free(struct sess *s)
{
	struct tty *t = s->tty;

	if (!t)
		return;
	if (t->pid) {
		if (t->has_cg)
			contain_kill(&t->cg);
		kill(t->pid, SIGKILL);
		reap_del(&t->reap);
	}
	close_master(t);
	execerr_close(&t->start);
	loop_timer_del(&t->wake);
	loop_timer_del(&t->grace);
	drop_output(t);
	if (t->has_cg)
		contain_free(&t->cg);
	free(t->wq.p);
	free(t->pend.p);
	free(t->expect);
	free(t);
	s->tty = NULL;
}
