/*
 * fam_ttyready.c - tty/ready: a read waits until the terminal's
 * foreground program is blocked reading the terminal and nothing was
 * printed for ready_ms (20 by default, written to the file), then
 * gives the screen. The kernel tells of no event when a process starts
 * to wait in a read, so a waiting reader looks at the processes (in
 * /proc: sessions/tty/ttywait.c) once the output has paused, and again
 * every TTY_READY_POLL_MS while it waits, less often as the silence
 * lasts (next_look); an output wakes it as it wakes every reader of
 * the terminal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_tty.h"
#include "park.h"
#include "sessions/core/state.h"
#include "sessions/tty/tty.h"

static int ready_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	struct tty *t = tty_of(n->s);
	uint64_t ms;
	int rc = t ? fam_tty_ms_write(fh, n->s, buf, size, "ready", &ms) :
		     -ENOMEM;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	t->ready_ms = ms;
	state_touch();
	return 0;
}

/* How long a reader waits before it looks again at a program that does
 * not wait for input, silent for `silent` ms: a tenth of that, from
 * TTY_READY_POLL_MS to TTY_READY_POLL_MAX_MS (a compiler silent for
 * minutes costs 20 looks a second, not 200). */
static int64_t next_look(int64_t silent)
{
	int64_t ms = silent / 10;

	return ms < TTY_READY_POLL_MS	  ? TTY_READY_POLL_MS :
	       ms > TTY_READY_POLL_MAX_MS ? TTY_READY_POLL_MAX_MS :
					    ms;
}

/* Whether t's program waits for input, its output and input having
 * paused for ready_ms (bytes just typed may not have reached it yet:
 * the PTY passes them on from a kernel worker), seen twice
 * TTY_READY_POLL_MS apart (what it printed just before it blocked may
 * still be on its way to the master) with x->deadline holding the
 * first sight; when not, t's waiters are looked at again at the
 * pause's end or after next_look. t has a screen (t->term). */
static bool is_ready(struct tty *t, struct ttyfh *x)
{
	int64_t now = loop_now_ms(),
		at = (t->last_out_ms > t->last_in_ms ? t->last_out_ms :
						       t->last_in_ms) +
		     (int64_t)t->ready_ms;

	if (now < at) {
		tty_wake_at(t, at);
		return false;
	}
	/* what was printed is on the screen (a loaded loop may lag) */
	if (t->pend.len || !term_settled(t->term) || !tty_waiting_input(t)) {
		x->deadline = 0;
		tty_wake_at(t, now + next_look(now - at));
		return false;
	}
	if (x->deadline < at)
		x->deadline = now;
	else if (now >= x->deadline + TTY_READY_POLL_MS)
		return true;
	tty_wake_at(t, x->deadline + TTY_READY_POLL_MS);
	return false;
}

/* The screen once ready; EPIPE when the terminal ends first (as
 * expect). */
static bool try_ready(struct park *p)
{
	struct fh *fh = p->fh;
	struct ttyfh *x = fam_ttyfh(fh);
	struct sess *s = sess_get(fh->sid);
	struct tty *t = s ? s->tty : NULL;
	size_t len = 0;
	char *text;

	if (!t || !t->term || t->state != TTY_RUNNING || fh->r != t->out ||
	    !x) {
		fuse_reply_err(p->req, x ? EPIPE : ENOMEM);
		return true;
	}
	if (!is_ready(t, x))
		return false;
	text = term_screen(t->term, &len);
	fam_tty_answer(p, text, len);
	return true;
}

/* The reads after the answer read that screen (cat reads on). */
static void ready_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct sess *s = sess_get(fh->sid);
	struct tty *t = s ? s->tty : NULL;

	if (fh->text && off > 0) {
		fam_reply_text(req, fh->text, fh->tlen, size, off);
		return;
	}
	if (!t || !t->out) {
		fuse_reply_err(req, EPIPE);
		return;
	}
	if (fh->r != t->out)
		fh_set_run(fh, t->out);
	fam_read_or_park(req, fh, fam_run_waiters, size, off, try_ready);
}

/* poll: the program waits for input and the output paused (a terminal
 * that is not running is readable: its read fails at once). */
static bool ready_readable(const struct fh *fh)
{
	struct tty *t = fam_tty_waits_on(fh);

	/* without its record (ENOMEM at the open) a read answers at once */
	return !t || !fh->priv || is_ready(t, fh->priv);
}

/* Each open file keeps when it first saw the program wait. */
static int ready_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	(void)n;
	(void)fi;
	return fam_ttyfh(fh) ? 0 : -ENOMEM;
}

const struct fops fam_ttyready_ops = { .write = ready_write,
				       .open = ready_open,
				       .read = ready_read,
				       .readable = ready_readable,
				       .waiters = fam_tty_poll_waiters,
				       .priv_restore = fam_ttyfh_restore };
