/*
 * fam_tty.c - a session's tty/: the terminal's files. Writes to input and
 * keys (and ctl restart) start the terminal when it is not running;
 * nothing else does (no lookup, stat, readdir nor read: a walker of the
 * tree would start a shell in every session). Reads of stream, expect
 * and quiet, and writes to a full input queue, wait (parked in the
 * waiters of the terminal's output) until they can answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_run.h"
#include "fam_tty.h"
#include "sessions/core/ctl.h"
#include "sessions/core/names.h"
#include "sessions/core/state.h"
#include "sessions/tty/tty.h"

/* The terminal of fh's session, if it has one. */
static struct tty *tty_fh(const struct fh *fh)
{
	struct sess *s = sess_get(fh->sid);

	return s ? s->tty : NULL;
}

/* Starts the terminal of n's session unless it runs (a write to input
 * or keys). */
static int start(struct node *n)
{
	struct tty *t = tty_of(n->s);

	return t ? tty_start(t) : -ENOMEM;
}

/* A reader follows the output of the terminal as it is at the open: the
 * one running, or the one that exited (kept until a write starts anew),
 * or none (never started: empty, EOF at once). */
static int follow_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	const struct tty *t = n->s->tty;

	(void)fi;
	if (t && t->out)
		fh_set_run(fh, t->out);
	return 0;
}

/* For a poll of expect, quiet or ready before a read: the file follows
 * the terminal's output from then (a file that follows an older one is
 * readable: its reads answer at once). */
struct list *fam_tty_poll_waiters(struct fh *fh)
{
	struct tty *t = tty_fh(fh);

	if (!fh->r && t && t->out)
		fh_set_run(fh, t->out);
	return &fh->r->waiters;
}

/* Whether a read of expect, quiet or ready waits on fh's terminal: it
 * runs and fh follows its output (or will). */
struct tty *fam_tty_waits_on(const struct fh *fh)
{
	struct tty *t = tty_fh(fh);

	if (!t || !t->term || !t->out || t->state != TTY_RUNNING ||
	    (fh->r && fh->r != t->out) || fh->text)
		return NULL;
	return t;
}

/* Parses keys and, with t, sends them. */
static int keys_send(struct tty *t, const char *buf, size_t size, size_t *bad,
		     size_t *blen)
{
	struct keys_seq seq = { calloc(size + 1, sizeof(struct keys_item)), 0,
				malloc(size + 1), 0 };
	int rc = seq.items && seq.text ?
			 keys_parse(buf, size, &seq, bad, blen) :
			 -ENOMEM;

	if (rc == 0 && t)
		rc = tty_keys(t, &seq);
	free(seq.items);
	free(seq.text);
	return rc;
}

/* Sends what was written to input or keys (keys already checked). */
static int send(const struct fh *fh, struct tty *t, const char *buf,
		size_t size)
{
	size_t bad, blen;

	if (fh->fe->ft == FT_TTYINPUT)
		return tty_input(t, buf, size);
	return keys_send(t, buf, size, &bad, &blen);
}

/* A parked write: sent once the queue has room, or failed once the
 * terminal is gone. */
static bool try_send(struct park *p)
{
	struct tty *t = tty_fh(p->fh);
	int rc = t ? send(p->fh, t, p->data, p->size) : -EIO;

	if (rc == -EAGAIN)
		return false;
	park_reply_write(p, rc);
	return true;
}

/* Starts the terminal and sends buf; a blocking writer to a full queue
 * waits until the terminal has taken enough of it (Ctrl-C: EINTR). */
static int start_send(fuse_req_t req, struct fh *fh, struct node *n,
		      const char *buf, size_t size)
{
	struct park how = { .req = req, .fh = fh, .size = size, .data = buf };
	int rc = start(n);

	if (rc == 0)
		rc = send(fh, n->s->tty, buf, size);
	if (rc != -EAGAIN || (fh->flags & O_NONBLOCK))
		return rc;
	fh_set_run(fh, n->s->tty->out); /* the list outlives the record */
	how.retry = try_send;
	return park_add(fam_run_waiters(fh), &how) ? FOPS_LATER : -ENOMEM;
}

static int input_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	(void)off;
	return start_send(req, fh, n, buf, size);
}

static const struct fops input_ops = { .write = input_write };

static int keys_write(fuse_req_t req, struct fh *fh, struct node *n,
		      const char *buf, size_t size, off_t off)
{
	size_t bad = 0, blen = 0;
	int rc = keys_send(NULL, buf, size, &bad, &blen);

	(void)off;
	if (rc == -EINVAL)
		sess_error(n->s,
			   "tty/keys: '%.*s' is not a key name; nothing of "
			   "this write was sent",
			   (int)(blen > 80 ? 80 : blen), buf + bad);
	return rc < 0 ? rc : start_send(req, fh, n, buf, size);
}

static const struct fops keys_ops = { .write = keys_write };

static off_t output_size(const struct node *n)
{
	const struct tty *t = n->s->tty;

	return t && t->out ? (off_t)t->out->out.size : 0;
}

static void output_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	fam_reply_spool(req, fh, "out", fh->r ? fh->r->out.size : 0, size, off);
}

static const struct fops output_ops = { .size = output_size,
					.open = follow_open,
					.read = output_read };

/* Output that waits at its end, as a run's stream (tail -f follows it). */
static off_t stream_size(const struct node *n)
{
	const struct tty *t = n->s->tty;

	return t && t->out ? (off_t)t->out->all.size : 0;
}

static const struct fops stream_ops = { .size = stream_size,
					.open = follow_open,
					.read = fam_stream_read,
					.readable = fam_stream_readable,
					.waiters = fam_run_waiters };

static char *size_text(const struct node *n, size_t *len)
{
	const struct tty *t = n->s->tty;
	struct strbuf b = { 0 };

	sb_addf(&b, "%d %d\n", t ? t->cols : 80, t ? t->rows : 24);
	return sb_take(&b, len);
}

static int size_write(fuse_req_t req, struct fh *fh, struct node *n,
		      const char *buf, size_t size, off_t off)
{
	struct tty *t = tty_of(n->s);
	int rc = t ? fam_gather(fh, n->s, buf, size) : -ENOMEM;
	int cols, rows;
	size_t len;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	len = fam_value_len(&fh->w);
	if (tty_parse_size(fh->w.p, len, &cols, &rows) < 0) {
		sess_error(n->s,
			   "tty/size: '%.*s' is not COLS ROWS, each %d to %d, "
			   "at most %d cells",
			   (int)(len > 80 ? 80 : len), fh->w.p, TTY_SIZE_MIN,
			   TTY_SIZE_MAX, TTY_AREA_MAX);
		fh->w.len = 0;
		return -EINVAL;
	}
	fh->w.len = 0;
	tty_resize(t, cols, rows);
	return 0;
}

static const struct fops size_ops = { .text = size_text, .write = size_write };

static int ctl_kill(const struct ctl_args *a)
{
	if (tty_kill(a->owner, a->sig) == 0)
		sess_error(a->s, "tty: signal %d", a->sig);
	return 0;
}

static int ctl_restart(const struct ctl_args *a)
{
	return tty_restart(a->owner);
}

static int ctl_clear(const struct ctl_args *a)
{
	struct tty *t = a->owner;

	if (t->term)
		term_clear_scrollback(t->term);
	state_touch();
	return 0;
}

static const struct ctl_verb ctl_verbs[] = {
	{ "kill", CTL_ARG_SIGNAL, false, ctl_kill },
	{ "SIGNAL", CTL_ARG_BARE, true, ctl_kill },
	{ "restart", CTL_ARG_NONE, false, ctl_restart },
	{ "clear-scrollback", CTL_ARG_NONE, false, ctl_clear },
	{ 0 },
};

/* tty/ctl is the terminal's (made, not started, by its first line). */
static void *ctl_owner(struct fh *fh, struct sess *s, const char **name)
{
	(void)fh;
	(void)name;
	return tty_of(s);
}

static const struct fam_ctl ctl_tab = { "tty/", ctl_verbs, ctl_owner, ENOMEM };
static const struct fops ctl_ops = FAM_CTL_OPS(ctl_tab);

static int expect_write(fuse_req_t req, struct fh *fh, struct node *n,
			const char *buf, size_t size, off_t off)
{
	struct tty *t = tty_of(n->s);
	int rc = t ? fam_gather(fh, n->s, buf, size) : -ENOMEM;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	return fam_expect_take(fh, n->s, "tty/expect", TTY_EXPECT_MS,
			       &t->expect, &t->expect_ms);
}

/* Answers with text (kept in fh for the reads after it). */
void fam_tty_answer(struct park *p, char *text, size_t len)
{
	struct fh *fh = p->fh;

	free(fh->text);
	fh->text = text;
	fh->tlen = text ? len : 0;
	fam_reply_text(p->req, fh->text, fh->tlen, p->size, p->off);
}

/* The row that x's regex matches, tried once per change of the screen
 * and at most a tenth of the time; a wake when the time held it back. */
static char *new_match(struct ttyfh *x, struct tty *t)
{
	int64_t retry = 0;
	char *line = t && t->term ? term_match_once(t->term, &x->re, &x->seen,
						    &retry) :
				    NULL;

	if (retry)
		tty_wake_at(t, retry);
	return line;
}

static bool try_expect(struct park *p)
{
	struct fh *fh = p->fh;
	struct ttyfh *x = fh->priv;
	struct tty *t = tty_fh(fh);
	char *line = new_match(x, t);

	if (line) {
		fam_tty_answer(p, line, strlen(line));
		return true;
	}
	if (!t || t->state != TTY_RUNNING || fh->r != t->out) {
		fuse_reply_err(p->req, EPIPE);
		return true;
	}
	if (loop_now_ms() >= x->deadline) {
		fuse_reply_err(p->req, ETIMEDOUT);
		return true;
	}
	tty_wake_at(t, x->deadline);
	return false;
}

/* An open for reading takes the pattern last written and its timeout,
 * which counts from the first read or poll (a reader may open it before
 * it types what it waits for). */
static int expect_open(struct fh *fh, struct node *n, struct fuse_file_info *fi)
{
	struct ttyfh *x = fam_ttyfh(fh);
	struct tty *t = n->s->tty;

	if (!x)
		return -ENOMEM;
	if ((fi->flags & O_ACCMODE) == O_WRONLY || !t || !t->expect)
		return 0;
	if (fam_expect_compile(n->s, "tty/expect", t->expect, strlen(t->expect),
			       &x->re) < 0)
		return -EINVAL;
	x->has_re = true;
	x->pat = strdup(t->expect);
	if (!x->pat)
		return -ENOMEM;
	x->ms = t->expect_ms;
	if (t->out)
		fh_set_run(fh, t->out);
	return 0;
}

/* The timeout starts at the first read or poll. */
static void expect_begin(struct ttyfh *x)
{
	if (x->deadline == 0)
		x->deadline = loop_now_ms() + (int64_t)x->ms;
}

/* Waits for a row that matches; the reads after it read that row. With
 * no pattern written before the open: EINVAL (and no error line: a
 * reader such as grep -r changes nothing). */
static void expect_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct ttyfh *x = fh->priv;

	if (x && x->has_re)
		expect_begin(x);
	if (fh->text)
		fam_reply_text(req, fh->text, fh->tlen, size, off);
	else if (!x || !x->has_re)
		fuse_reply_err(req, EINVAL);
	else
		fam_read_or_park(req, fh, fam_run_waiters, size, off,
				 try_expect);
}

/* poll: a match or the timeout. */
static bool expect_readable(const struct fh *fh)
{
	struct ttyfh *x = fh->priv;
	struct tty *t = fam_tty_waits_on(fh);
	char *line;

	if (!t || !x || !x->has_re)
		return true;
	expect_begin(x);
	line = new_match(x, t);
	free(line);
	if (line || loop_now_ms() >= x->deadline)
		return true;
	tty_wake_at(t, x->deadline);
	return false;
}

static const struct fops expect_ops = { .write = expect_write,
					.open = expect_open,
					.read = expect_read,
					.readable = expect_readable,
					.waiters = fam_tty_poll_waiters,
					.priv_restore = fam_ttyfh_restore };

int fam_tty_ms_write(struct fh *fh, struct sess *s, const char *buf,
		     size_t size, const char *file, uint64_t *ms)
{
	int rc = fam_gather(fh, s, buf, size);
	unsigned long long v;

	if (rc < 0)
		return rc;
	rc = name_parse_u64(fh->w.p, fh->w.len, &v);
	if (rc < 0 || v > 3600000) {
		sess_error(s,
			   "tty/%s: '%.*s' is not a number of milliseconds "
			   "(at most 3600000)",
			   file, (int)fam_value_len(&fh->w), fh->w.p);
		fh->w.len = 0;
		return -EINVAL;
	}
	fh->w.len = 0;
	*ms = v;
	return 0;
}

static int quiet_write(fuse_req_t req, struct fh *fh, struct node *n,
		       const char *buf, size_t size, off_t off)
{
	struct tty *t = tty_of(n->s);
	uint64_t ms;
	int rc = t ? fam_tty_ms_write(fh, n->s, buf, size, "quiet", &ms) :
		     -ENOMEM;

	(void)req;
	(void)off;
	if (rc < 0)
		return rc;
	t->quiet_ms = ms;
	state_touch();
	return 0;
}

static bool try_quiet(struct park *p)
{
	struct fh *fh = p->fh;
	struct ttyfh *x = fh->priv;
	struct tty *t = tty_fh(fh);
	size_t len = 0;
	int64_t at;
	char *text;

	if (!t || !t->term) {
		fam_tty_answer(p, strdup(""), 0);
		return true;
	}
	/* quiet counts from the read too: keys just written may not have
	 * been echoed yet */
	at = (t->last_out_ms > x->deadline ? t->last_out_ms : x->deadline) +
	     (int64_t)t->quiet_ms;
	if (t->state == TTY_RUNNING && fh->r == t->out && loop_now_ms() < at) {
		tty_wake_at(t, at);
		return false;
	}
	text = term_screen(t->term, &len);
	fam_tty_answer(p, text, len);
	return true;
}

static void quiet_read(fuse_req_t req, struct fh *fh, size_t size, off_t off)
{
	struct ttyfh *x = fam_ttyfh(fh);
	struct tty *t = tty_fh(fh);

	if (fh->text && off > 0) {
		fam_reply_text(req, fh->text, fh->tlen, size, off);
		return;
	}
	if (!x) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	x->deadline = loop_now_ms(); /* here: when the read began */
	if (t && fh->r != t->out)
		fh_set_run(fh, t->out);
	fam_read_or_park(req, fh, fam_run_waiters, size, off, try_quiet);
}

/* poll: nothing printed for quiet ms. */
static bool quiet_readable(const struct fh *fh)
{
	struct tty *t = fam_tty_waits_on(fh);
	int64_t at;

	if (!t)
		return true;
	at = t->last_out_ms + (int64_t)t->quiet_ms;
	if (loop_now_ms() >= at)
		return true;
	tty_wake_at(t, at);
	return false;
}

static const struct fops quiet_ops = { .write = quiet_write,
				       .read = quiet_read,
				       .readable = quiet_readable,
				       .waiters = fam_tty_poll_waiters,
				       .priv_restore = fam_ttyfh_restore };

static const struct fent tty_tab[] = {
	{ "input", FT_TTYINPUT, FENT_WO, &input_ops, 0, HOME_DIR,
	  "write raw bytes, as typed (a newline is Enter)" },
	{ "keys", FT_TTYKEYS, FENT_WO, &keys_ops, 0, HOME_DIR,
	  "write key names: Enter Tab Esc Up C-c M-x \"text\"..." },
	{ "output", FT_TTYOUTPUT, FENT_RO, &output_ops, 0, HOME_DIR,
	  "every byte the terminal printed" },
	{ "stream", FT_TTYSTREAM, FENT_RO, &stream_ops, 0, HOME_DIR,
	  "that output as it arrives (tail -f works)" },
	{ "screen", FT_TTYSCREEN, FENT_RO, &fam_ttyscreen_ops, 0, HOME_DIR,
	  "what a person would see, one line per row" },
	{ "scrollback", FT_TTYSCROLLBACK, FENT_RO, &fam_ttyscrollback_ops, 0,
	  HOME_DIR, "the lines that scrolled off the top" },
	{ "cursor", FT_TTYCURSOR, FENT_RO, &fam_ttycursor_ops, 0, HOME_DIR,
	  "ROW COL visible|hidden" },
	{ "size", FT_TTYSIZE, FENT_RW, &size_ops, 0, HOME_DIR,
	  "COLS ROWS; write to resize" },
	{ "title", FT_TTYTITLE, FENT_RO, &fam_ttytitle_ops, 0, HOME_DIR,
	  "the window title the program set" },
	{ "status", FT_TTYSTATUS, FENT_RO, &fam_ttystatus_ops, 0, HOME_DIR,
	  "state (none running exited), pid, exit, size..." },
	{ "ctl", FT_TTYCTL, FENT_WO, &ctl_ops, 0, HOME_DIR,
	  "write kill [SIGNAL], restart or clear-scrollback" },
	{ "expect", FT_TTYEXPECT, FENT_RW, &expect_ops, 0, HOME_DIR,
	  "write a regex [TIMEOUT_MS]: a read waits for a row of the screen "
	  "that matches it" },
	{ "quiet", FT_TTYQUIET, FENT_RW, &quiet_ops, 0, HOME_DIR,
	  "a read waits until nothing was printed for 200 ms, then gives the "
	  "screen" },
	{ "ready", FT_TTYREADY, FENT_RW, &fam_ttyready_ops, 0, HOME_DIR,
	  "a read waits until the program waits for input and nothing was "
	  "printed for 20 ms, then gives the screen" },
	{ "recording.cast", FT_TTYCAST, FENT_RO, &fam_ttycast_ops, 0, HOME_DIR,
	  "its asciicast v2 recording" },
	{ 0 },
};

const struct fops fam_tty_ops = { .tab = tty_tab };
