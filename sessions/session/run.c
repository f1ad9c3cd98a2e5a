/*
 * run.c - runs: creation, the state machine QUEUED -> RUNNING -> DONE, and
 * the text of their reports. Runs are reference counted because open
 * files keep reading them after they leave the history or the session
 * is deleted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sessions/core/state.h"
#include "sessions/core/objs.h"
#include "sessions/session/proc.h"
#include "sessions/session/run.h"
#include "sessions/session/runopts.h"
#include "sessions/session/sess.h"
#include "sessions/core/strbuf.h"

void (*run_changed_hook)(struct run *r);

void run_file(const struct run *r, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "r%llu.%s", (unsigned long long)r->id, suffix);
}

void run_forget_files(struct run *r, unsigned which,
		      void (*fn)(void *arg, const char *name), void *arg)
{
	static const struct {
		unsigned flag;
		const char *sfx;
	} files[] = { { RUN_F_CMD, "cmd" },    { RUN_F_SPOOLS, "out" },
		      { RUN_F_SPOOLS, "err" }, { RUN_F_SPOOLS, "idx" },
		      { RUN_F_PRE, "pre" },    { RUN_F_OPT, "opt" },
		      { RUN_F_IN, "in" } };
	char name[64];

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		if (!(r->files & which & files[i].flag))
			continue;
		run_file(r, files[i].sfx, name, sizeof(name));
		fn(arg, name);
	}
	r->files &= ~which;
}

struct run *run_find(struct list *head, const char *name)
{
	for (struct list *l = head->next; l != head; l = l->next) {
		struct run *r = list_entry(l, struct run, link);

		if (strcmp(r->name, name) == 0)
			return r;
	}
	return NULL;
}

struct run *run_new_empty(void)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->id = objs_add(OBJ_RUN, r);
	r->refs = 1;
	r->state = RUN_QUEUED;
	r->out.fd = r->err.fd = r->all.fd = -1;
	r->pipe_o.fd = r->pipe_e.fd = -1;
	list_init(&r->link);
	list_init(&r->qlink);
	list_init(&r->waiters);
	return r;
}

int run_set_cmd(struct run *r, int dirfd, const char *text, size_t len)
{
	char name[64];
	int rc;

	run_file(r, "cmd", name, sizeof(name));
	rc = spool_write_file(dirfd, name, text, len);
	if (rc < 0)
		return rc;
	r->files |= RUN_F_CMD;
	/* the shell reads it as the session's owner (a system call a run
	 * spares when that is the daemon's own user) */
	if (r->sess &&
	    (r->sess->uid != geteuid() || r->sess->gid != getegid()) &&
	    fchownat(dirfd, name, r->sess->uid, r->sess->gid,
		     AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	r->cmd_len = len;
	return 0;
}

struct run *run_new(int dirfd, const char *text, size_t len, int *err)
{
	struct run *r = run_new_empty();

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = run_set_cmd(r, dirfd, text, len);
	if (*err < 0) {
		run_unref(r);
		return NULL;
	}
	return r;
}

void run_ref(struct run *r)
{
	r->refs++;
}

void run_unref(struct run *r)
{
	if (--r->refs > 0)
		return;
	objs_del(r->id);
	loop_timer_del(&r->rest);
	spool_release(&r->out);
	spool_release(&r->err);
	spool_close(&r->out);
	spool_close(&r->err);
	outidx_close(&r->all);
	if (r->part_free)
		r->part_free(r);
	free(r->name);
	free(r->expect);
	runopts_free(r);
	free(r);
}

bool run_active(const struct run *r)
{
	return r->state != RUN_DONE;
}

const char *run_state_name(const struct run *r)
{
	if (r->state == RUN_QUEUED)
		return r->has_cmd ? "queued" : "created";
	if (r->state == RUN_RUNNING)
		return "running";
	switch (r->end) {
	case END_TIMEDOUT:
		return "timed-out";
	case END_KILLED:
		return "killed";
	case END_CANCELED:
		return "canceled";
	case END_ERROR:
		return "error";
	default:
		/* bash's 127 (not found) and 126 (not executable): a process
		 * that could not start its command */
		if (r->is_proc && (r->exit_code == 126 || r->exit_code == 127))
			return "error";
		return r->exit_code == 0 ? "completed" : "failed";
	}
}

uint64_t run_duration_ms(const struct run *r)
{
	int64_t end;

	if (r->state == RUN_QUEUED)
		return 0;
	end = r->state == RUN_DONE ? r->ended_mono : loop_now_ms();
	return end > r->started_mono ? (uint64_t)(end - r->started_mono) : 0;
}

void run_finish(struct run *r, int exit_code, int sig, enum run_end end)
{
	state_touch();
	if (r->state == RUN_DONE)
		return;
	if (r->state == RUN_QUEUED)
		r->started_mono = loop_now_ms();
	r->state = RUN_DONE;
	r->exit_code = exit_code;
	r->sig = sig;
	r->end = end;
	r->ended_mono = loop_now_ms();
	r->ended_wall = loop_wall_ms();
	spool_close(&r->out);
	spool_close(&r->err);
	outidx_close(&r->all);
	if (run_changed_hook)
		run_changed_hook(r);
}

char *run_format_exit(const struct run *r, size_t *len)
{
	struct strbuf b = { 0 };

	if (r && r->state == RUN_DONE && r->exit_code == RUN_EXIT_LOST)
		sb_add(&b, "-\n", 2);
	else if (r && r->state == RUN_DONE)
		sb_addf(&b, "%d\n", r->exit_code);
	else
		sb_add(&b, "", 0);
	return sb_take(&b, len);
}

static void iso_time(int64_t wall_ms, char *buf, size_t len)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(wall_ms % 1000));
}

char *run_format_status(const struct run *r, size_t *len)
{
	struct strbuf b = { 0 };
	char when[40] = "-";

	if (!r) {
		sb_addf(&b, "state none\n");
		return sb_take(&b, len);
	}
	if (r->state != RUN_QUEUED)
		iso_time(r->started_wall, when, sizeof(when));
	sb_addf(&b, "state %s\n%s %s\npid %ld\n", run_state_name(r),
		r->is_proc ? "name" : "run", r->name, r->pid);
	sb_addf(&b, "started %s\n", when);
	if (r->state == RUN_DONE)
		iso_time(r->ended_wall, when, sizeof(when));
	else
		snprintf(when, sizeof(when), "-");
	sb_addf(&b, "ended %s\nduration_ms %llu\n", when,
		(unsigned long long)run_duration_ms(r));
	if (r->state == RUN_DONE)
		if (r->exit_code == RUN_EXIT_LOST)
			sb_addf(&b, "exit -\nsignal %d\n", r->sig);
		else
			sb_addf(&b, "exit %d\nsignal %d\n", r->exit_code,
				r->sig);
	else
		sb_addf(&b, "exit -\nsignal -\n");
	sb_addf(&b, "timeout_ms %llu\n",
		(unsigned long long)(r->state == RUN_QUEUED ?
					     r->timeout_ms :
					     r->eff_timeout_ms));
	sb_addf(&b, "stdout_bytes %llu\nstderr_bytes %llu\n",
		(unsigned long long)r->out.size,
		(unsigned long long)r->err.size);
	sb_addf(&b, "truncated %d\n", r->out.truncated || r->err.truncated);
	sb_addf(&b, "truncated_reason");
	if (r->out.truncated)
		sb_addf(&b, " stdout:%s", spool_cut_name(r->out.cut));
	if (r->err.truncated)
		sb_addf(&b, " stderr:%s", spool_cut_name(r->err.cut));
	if (!r->out.truncated && !r->err.truncated)
		sb_addf(&b, " -");
	sb_addf(&b, "\n");
	runopts_status(r, &b);
	if (r->is_proc) /* only a process can have a stdin to wait on */
		sb_addf(&b, "waiting_input %d\n", proc_waiting_input(r));
	return sb_take(&b, len);
}

/* Appends up to cap bytes of dirfd/name (size bytes long) as a JSON
 * string. Returns 0, or -errno when it cannot be read: result.json then
 * fails rather than claim "" for it. */
static int json_file(struct strbuf *b, int dirfd, const char *name,
		     uint64_t size, uint64_t cap)
{
	size_t n = (size_t)(size < cap ? size : cap);
	char *buf = NULL;
	ssize_t got = 0;
	int fd = -1, rc = 0;

	if (n) {
		buf = malloc(n);
		fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
		rc = !buf ? -ENOMEM : fd < 0 ? -errno : 0;
	}
	if (rc == 0 && n && (got = pread(fd, buf, n, 0)) < 0)
		rc = -errno;
	if (rc == 0)
		sb_add_json(b, got > 0 ? buf : "", got > 0 ? (size_t)got : 0);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* Why a stream is cut short in result.json: its spool's cut, else
 * "json" when only json_output_bytes cuts it, else null. */
static void json_reason(struct strbuf *b, const char *key,
			const struct spool *sp, uint64_t cap)
{
	if (sp->truncated)
		sb_addf(b, ",\"%s\":\"%s\"", key, spool_cut_name(sp->cut));
	else if (sp->size > cap)
		sb_addf(b, ",\"%s\":\"json\"", key);
	else
		sb_addf(b, ",\"%s\":null", key);
}

/* result.json's command, stdout and stderr, in that order of its keys
 * with the exit code and state between them. */
static int json_streams(struct strbuf *b, const struct run *r, int dirfd,
			uint64_t cap)
{
	char name[64];
	int rc;

	sb_add(b, "{\"command\":", 11);
	run_file(r, "cmd", name, sizeof(name));
	rc = json_file(b, dirfd, name, r->cmd_len, cap);
	if (r->state == RUN_DONE && r->exit_code == RUN_EXIT_LOST)
		sb_addf(b, ",\"exitCode\":null,\"success\":false");
	else if (r->state == RUN_DONE)
		sb_addf(b, ",\"exitCode\":%d,\"success\":%s", r->exit_code,
			r->exit_code == 0 ? "true" : "false");
	else
		sb_addf(b, ",\"exitCode\":null,\"success\":null");
	sb_addf(b, ",\"state\":\"%s\",\"stdout\":", run_state_name(r));
	run_file(r, "out", name, sizeof(name));
	if (rc == 0)
		rc = json_file(b, dirfd, name, r->out.size, cap);
	sb_add(b, ",\"stderr\":", 10);
	run_file(r, "err", name, sizeof(name));
	if (rc == 0)
		rc = json_file(b, dirfd, name, r->err.size, cap);
	return rc;
}

char *run_format_json(const struct run *r, int dirfd, const char *sess_name,
		      uint64_t cap, size_t *len)
{
	struct strbuf b = { 0 };
	char when[40];
	int rc;

	if (!r) {
		sb_addf(&b, "{}\n");
		return sb_take(&b, len);
	}
	rc = json_streams(&b, r, dirfd, cap);
	if (rc < 0) {
		free(b.p);
		errno = rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM ? -rc :
									  EIO;
		return NULL;
	}
	iso_time(r->state == RUN_QUEUED ? r->queued_wall : r->started_wall,
		 when, sizeof(when));
	sb_addf(&b, ",\"stdoutTruncated\":%s,\"stderrTruncated\":%s",
		r->out.size > cap || r->out.truncated ? "true" : "false",
		r->err.size > cap || r->err.truncated ? "true" : "false");
	json_reason(&b, "stdoutTruncatedReason", &r->out, cap);
	json_reason(&b, "stderrTruncatedReason", &r->err, cap);
	sb_addf(&b, ",\"duration\":%llu,\"timestamp\":\"%s\",\"sessionId\":",
		(unsigned long long)run_duration_ms(r), when);
	sb_add_json(&b, sess_name, strlen(sess_name));
	sb_addf(&b, ",\"run\":");
	sb_add_json(&b, r->name, strlen(r->name));
	runopts_json(r, &b);
	sb_add(&b, "}\n", 2);
	return sb_take(&b, len);
}

void run_set_timeout(struct run *r, uint64_t ms)
{
	r->timeout_ms = ms;
	r->has_timeout = true;
}
