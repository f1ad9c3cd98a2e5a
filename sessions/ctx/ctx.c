/*
 * ctx.c - code contexts as objects: making them, their settings (fixed
 * at the first code), their executions kept, and the text of their
 * reports (status, result.json). Their interpreters' life is ctxrun.c.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/objs.h"
#include "sessions/ctx/ctx.h"
#include "sessions/ctx/ctxint.h"
#include "sessions/session/sess.h"
#include "sessions/core/state.h"

const char *ctx_lang_name(enum ctx_lang l)
{
	static const char *const names[] = { "python", "javascript",
					     "typescript" };

	return names[l];
}

const char *ctx_state_name(const struct ctx *c)
{
	static const char *const names[] = { "idle", "running", "interrupted",
					     "dead" };

	return names[c->state];
}

struct ctx *ctx_find(struct sess *s, const char *name)
{
	for (struct list *l = s->ctxs.next; l != &s->ctxs; l = l->next) {
		struct ctx *c = list_entry(l, struct ctx, link);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

struct ctx *ctx_alloc(struct sess *s, const char *name)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->id = objs_add(OBJ_CTX, c);
	c->sess = s;
	c->timeout_ms = s->timeout_ms;
	c->req_fd = c->ans.fd = c->out_fd = c->err_fd = -1;
	c->idle_o.fd = c->idle_e.fd = c->cg.dfd = -1;
	c->start_err = EIO;
	list_init(&c->queue);
	list_init(&c->execs);
	envmap_init(&c->env, OBJ_CTXVAR, c);
	return c;
}

int ctx_contain(struct ctx *c)
{
	char tag[32];

	snprintf(tag, sizeof(tag), "x%llu", (unsigned long long)c->id);
	return contain_new_in(&c->cg, &c->sess->cg, tag);
}

void ctx_attach(struct ctx *c)
{
	state_touch(); /* a checkpoint keeps contexts too */
	list_add_tail(&c->sess->ctxs, &c->link);
	sess_part_add(c->sess, &c->part, &ctx_part_ops);
	c->sess->nctxs++;
}

void ctx_discard(struct ctx *c)
{
	objs_del(c->id);
	envmap_free(&c->env);
	free(c->cwd);
	free(c->why);
	free(c);
}

int ctx_new(struct sess *s, const char *name, struct ctx **out)
{
	int rc = sess_child_name(s, "contexts", name, ctx_find(s, name));
	struct ctx *c;

	if (rc < 0)
		return rc;
	if (s->nctxs >= conf.max_procs_per_session) {
		sess_error(s, "contexts/%s: at most %llu contexts", name,
			   (unsigned long long)conf.max_procs_per_session);
		return -ENOSPC;
	}
	c = ctx_alloc(s, name);
	if (!c)
		return -ENOMEM;
	c->cwd = strdup(s->cwd);
	rc = !c->cwd || envmap_assign(&c->env, &s->env) < 0 ? -ENOMEM :
							      ctx_contain(c);
	if (rc < 0) {
		ctx_discard(c);
		return rc;
	}
	ctx_attach(c);
	*out = c;
	return 0;
}

static int locked(struct ctx *c, const char *what)
{
	state_touch(); /* a setting changes */
	if (!c->locked)
		return 0;
	sess_error(c->sess, "contexts/%s/%s: set before the first code only",
		   c->name, what);
	return -EBUSY;
}

int ctx_set_language(struct ctx *c, const char *v, size_t len)
{
	int rc = locked(c, "language");

	if (rc < 0)
		return rc;
	for (int l = CTX_PYTHON; l <= CTX_TYPESCRIPT; l++) {
		const char *name = ctx_lang_name((enum ctx_lang)l);

		if (len == strlen(name) && memcmp(v, name, len) == 0) {
			c->lang = (enum ctx_lang)l;
			return 0;
		}
	}
	sess_error(c->sess,
		   "contexts/%s/language: '%.*s' is not python, javascript "
		   "or typescript",
		   c->name, (int)(len > 40 ? 40 : len), v);
	return -EINVAL;
}

int ctx_set_cwd(struct ctx *c, const char *path)
{
	int rc = locked(c, "cwd");
	char *p;

	if (rc < 0)
		return rc;
	/* its form only, as the session's cwd (env.c): the interpreter's
	 * child enters it as the owner, or the context is dead with why */
	if (path[0] != '/' || strlen(path) >= PATH_MAX) {
		sess_error(c->sess,
			   "contexts/%s/cwd: not an absolute path "
			   "(shorter than %d bytes)",
			   c->name, PATH_MAX);
		return path[0] != '/' ? -EINVAL : -ENAMETOOLONG;
	}
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	free(c->cwd);
	c->cwd = p;
	return 0;
}

/* The interpreter's execve takes the variables (as the session's env/):
 * 0, or -E2BIG and a line in the session's error file. */
static int env_fits(struct ctx *c, const char *name, size_t len)
{
	const struct envvar *v = envmap_get(&c->env, name);
	long max = sysconf(_SC_ARG_MAX);
	size_t one = strlen(name) + len + 2, total, budget;

	budget = (size_t)(max > 0 ? max : ENVMAP_EXEC_STRING_MAX) / 2;
	total = envmap_exec_bytes(&c->env) + one + sizeof(char *) -
		(v ? strlen(name) + v->len + 2 + sizeof(char *) : 0);
	if (one <= ENVMAP_EXEC_STRING_MAX && total <= budget)
		return 0;
	sess_error(c->sess,
		   "contexts/%s/env/%s: too big for execve (%zu bytes, the "
		   "environment %zu of at most %zu)",
		   c->name, name, one, total, budget);
	return -E2BIG;
}

int ctx_setenv(struct ctx *c, const char *name, const char *val, size_t len)
{
	int rc = locked(c, "env");

	if (rc < 0)
		return rc;
	if (!name_env_valid(name) || !name_env_value_valid(val, len)) {
		sess_error(c->sess,
			   "contexts/%s/env/%.64s: not a valid "
			   "variable",
			   c->name, name);
		return -EINVAL;
	}
	rc = env_fits(c, name, len);
	return rc < 0 ? rc : envmap_set(&c->env, name, val, len);
}

int ctx_unsetenv(struct ctx *c, const char *name)
{
	int rc = locked(c, "env");

	return rc < 0 ? rc : envmap_unset(&c->env, name);
}

void ctx_set_timeout(struct ctx *c, uint64_t ms)
{
	state_touch();
	c->timeout_ms = ms;
}

struct run *ctx_latest(struct ctx *c)
{
	return list_empty(&c->execs) ?
		       NULL :
		       list_entry(c->execs.prev, struct run, link);
}

/* Frees the formats and error texts of c's oldest executions but the
 * active one until those kept and incoming more bytes fit in
 * CTX_KEEP_MAX. It walks only when they do not: keeping a result costs
 * its own size. */
static void shed(struct ctx *c, size_t incoming)
{
	for (struct list *l = c->execs.next;
	     c->kept + incoming > CTX_KEEP_MAX && l != &c->execs;
	     l = l->next) {
		struct run *r = list_entry(l, struct run, link);
		size_t n = ctx_exec_bytes(r->cx);

		if (r == c->active || n <= r->cx->ename.len)
			continue;
		ctx_exec_shed(r->cx);
		c->kept = c->kept - n + ctx_exec_bytes(r->cx);
		sess_error(c->sess,
			   "contexts/%s: the results of execution %s were "
			   "dropped: over %u MiB kept",
			   c->name, r->name, CTX_KEEP_MAX >> 20);
	}
}

static uint64_t res_add(struct ctx_result *res)
{
	return objs_add(OBJ_CTXRES, res);
}

static const struct ctx_ids res_ids = { res_add, objs_del };

/* What the record of r says past its bounds, once each. */
static void say_cuts(struct ctx *c, const struct run *r, bool was_cut)
{
	const struct ctx_exec *e = r->cx;

	if (e->err_cut && !was_cut)
		sess_error(c->sess,
			   "contexts/%s: execution %s: its error was cut at "
			   "%u KiB (its name, value and traceback)",
			   c->name, r->name, CTX_ERR_MAX >> 10);
	if (e->done && e->dropped)
		sess_error(c->sess,
			   "contexts/%s: execution %s: %zu results past the "
			   "first %u were dropped",
			   c->name, r->name, e->dropped, CTX_RESULTS_MAX);
}

int ctx_keep_frame(struct ctx *c, const struct ctxproto_frame *f)
{
	struct run *r = c->active;
	struct ctx_exec *e = r->cx;
	size_t before = e->bytes, need = ctx_exec_room(e, f);
	bool was_cut = e->err_cut;
	int rc;

	if (need)
		shed(c, need);
	rc = ctx_exec_frame(e, f, &res_ids);
	c->kept = c->kept - before + e->bytes;
	if (rc == 0 && strcmp(f->tag, "result") == 0)
		e->res[e->nres - 1]->owner = r;
	if (rc == -EFBIG)
		sess_error(c->sess,
			   "contexts/%s: execution %s: a %s of %zu bytes "
			   "was dropped (at most %u MiB a format, %u MiB "
			   "kept)",
			   c->name, r->name, f->tag, f->len, CTX_FMT_MAX >> 20,
			   CTX_KEEP_MAX >> 20);
	if (rc == 0 || rc == -EFBIG)
		say_cuts(c, r, was_cut);
	return rc == -EFBIG ? 0 : rc;
}

void ctx_fail_record(struct ctx *c, struct run *r, const char *name,
		     const char *value)
{
	size_t before = r->cx->bytes;

	ctx_exec_fail(r->cx, name, value);
	c->kept = c->kept - before + r->cx->bytes;
}

void ctx_forget_record(struct ctx *c, struct run *r)
{
	c->kept -= r->cx->bytes;
}

struct run *ctx_exec_by_name(struct ctx *c, const char *name)
{
	return run_find(&c->execs, name);
}

static void iso_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !gmtime_r(&t, &tm))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

char *ctx_format_status(const struct ctx *c, const struct run *r, size_t *len)
{
	struct strbuf b = { 0 };
	char when[40];

	if (r) {
		sb_addf(&b, "state %s\n",
			r->state == RUN_QUEUED	? "queued" :
			r->state == RUN_RUNNING ? "running" :
			r->end == END_CANCELED	? "canceled" :
			r->cx->has_error	? "error" :
						  "ok");
	} else {
		sb_addf(&b, "state %s\n", ctx_state_name(c));
		r = list_empty(&c->execs) ?
			    NULL :
			    list_entry(c->execs.prev, struct run, link);
	}
	sb_addf(&b, "execution_count %u\n",
		r && r->state == RUN_DONE ? r->cx->count : c->count);
	if (c && c->pid)
		sb_addf(&b, "pid %ld\n", (long)c->pid);
	else
		sb_addf(&b, "pid -\n");
	sb_addf(&b, "language %s\n", ctx_lang_name(c ? c->lang : CTX_PYTHON));
	iso_time(r && r->state != RUN_QUEUED ? r->started_wall : 0, when,
		 sizeof(when));
	sb_addf(&b, "started %s\n", when);
	sb_addf(&b, "duration_ms %llu\n",
		(unsigned long long)(r && r->state != RUN_QUEUED ?
					     run_duration_ms(r) :
					     0));
	return sb_take(&b, len);
}

/* Up to cap bytes of r's spool with that suffix, malloc'd. */
static char *read_spool(const struct run *r, const char *suffix, uint64_t size,
			size_t *len)
{
	char name[64], *p;
	uint64_t cap =
		size < conf.json_output_bytes ? size : conf.json_output_bytes;
	ssize_t n = 0;
	int fd;

	*len = 0;
	p = malloc(cap + 1);
	if (!p || !r->sess || !cap)
		return p;
	run_file(r, suffix, name, sizeof(name));
	fd = openat(r->sess->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, p, cap, 0);
		close(fd);
	}
	*len = n > 0 ? (size_t)n : 0;
	return p;
}

static char *format_json(const struct run *r, size_t *len)
{
	size_t olen, elen;
	char *out = read_spool(r, "out", r->out.size, &olen);
	char *err = read_spool(r, "err", r->err.size, &elen);
	char *text = out && err ?
			     ctx_exec_json(r->cx, out, olen, err, elen, len) :
			     NULL;

	free(out);
	free(err);
	return text;
}

struct ctx_json *ctx_json_get(struct run *r)
{
	struct ctx_json *j = r->cx->json;

	if (j) {
		j->refs++;
		return j;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->p = format_json(r, &j->len);
	if (!j->p) {
		free(j);
		return NULL;
	}
	j->refs = 1;
	if (r->state == RUN_DONE) { /* else its logs still grow */
		j->owner = r->cx;
		r->cx->json = j;
	}
	return j;
}

void ctx_json_put(void *arg)
{
	struct ctx_json *j = arg;

	if (!j || --j->refs)
		return;
	if (j->owner)
		j->owner->json = NULL;
	free(j->p);
	free(j);
}

void ctx_exec_release(struct run *r)
{
	ctx_exec_free(r->cx, objs_del);
	free(r->cx);
}
