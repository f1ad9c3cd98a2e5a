/*
 * runopts.c - a named run's or a process's own options (runopts.h):
 * kept with the run, written for the driver as r<id>.opt (the prelude's
 * records) and r<id>.in (its stdin), shown in its status and
 * result.json, saved by an upgrade and a checkpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sessions/core/state.h"
#include "sessions/session/env.h"
#include "sessions/session/run.h"
#include "sessions/session/runopts.h"
#include "sessions/session/shell.h"
#include "sessions/session/spool.h"

static const struct envmap no_env = { .kind = OBJ_NONE };

/* A stdin file takes room where the spools do: it counts in their
 * budget (spool.h) from its write to the end of its run. */
static int charge(struct run_opts *o, uint64_t to)
{
	uint64_t from = o->charged;
	struct spool d = { .size = to > from ? to - from : from - to };

	if (to > from && spool_budget() &&
	    spool_used() + d.size > spool_budget())
		return -ENOSPC;
	if (to > from)
		spool_charge(&d);
	else
		spool_release(&d);
	o->charged = to;
	return 0;
}

/* r's options, made at the first one; NULL on ENOMEM. */
static struct run_opts *opts_of(struct run *r)
{
	if (!r->opts) {
		r->opts = calloc(1, sizeof(*r->opts));
		if (r->opts)
			envmap_init(&r->opts->env, OBJ_RUNVAR, r);
	}
	return r->opts;
}

static void opt_file(const struct run *r, const char *sfx, char *buf,
		     size_t len)
{
	snprintf(buf, len, "r%llu.%s", (unsigned long long)r->id, sfx);
}

bool runopts_open(const struct run *r)
{
	return r->state == RUN_QUEUED && !r->has_cmd;
}

const struct envmap *runopts_env(const struct run *r)
{
	return r->opts ? &r->opts->env : &no_env;
}

int runopts_setenv(struct run *r, const char *name, const char *val, size_t len)
{
	if (!runopts_open(r))
		return -EBUSY;
	if (!opts_of(r))
		return -ENOMEM;
	state_touch();
	return envmap_set(&r->opts->env, name, val, len);
}

int runopts_forget(struct run *r, const char *name)
{
	if (!runopts_open(r))
		return -EBUSY;
	state_touch();
	return r->opts ? envmap_unset(&r->opts->env, name) : -ENOENT;
}

int runopts_set_cwd(struct run *r, const char *path)
{
	char *p;

	if (!runopts_open(r))
		return -EBUSY;
	if (!opts_of(r) || !(p = strdup(path)))
		return -ENOMEM;
	free(r->opts->cwd);
	r->opts->cwd = p;
	state_touch();
	return 0;
}

/* r's stdin file, open for writing (made uid's at its first write). */
static int open_stdin(struct run *r, int dirfd, uid_t uid, gid_t gid)
{
	char name[64];
	int fd;

	opt_file(r, "in", name, sizeof(name));
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	if (!(r->files & RUN_F_IN) && fchown(fd, uid, gid) < 0) {
		close(fd);
		return -errno;
	}
	r->files |= RUN_F_IN;
	r->opts->has_stdin = true;
	return fd;
}

int runopts_write_stdin(struct run *r, int dirfd, uid_t uid, gid_t gid,
			const char *buf, size_t size, off_t off)
{
	uint64_t at;
	ssize_t n;
	int fd, rc = 0;

	if (!runopts_open(r))
		return -EBUSY;
	if (!opts_of(r))
		return -ENOMEM;
	at = off < 0 ? r->opts->stdin_len : (uint64_t)off;
	if (at + size > RUNOPTS_STDIN_MAX)
		return -EFBIG;
	if (at + size > r->opts->stdin_len &&
	    (rc = charge(r->opts, at + size)) < 0)
		return rc;
	fd = open_stdin(r, dirfd, uid, gid);
	n = fd < 0 ? fd : pwrite(fd, buf, size, (off_t)at);
	if (n == (ssize_t)size && at + size > r->opts->stdin_len)
		r->opts->stdin_len = at + size;
	charge(r->opts, r->opts->stdin_len); /* what was not written */
	if (fd < 0)
		return fd;
	if (n != (ssize_t)size)
		rc = n < 0 ? -errno : -ENOSPC;
	close(fd);
	state_touch();
	return rc;
}

int runopts_truncate_stdin(struct run *r, int dirfd, uid_t uid, gid_t gid,
			   uint64_t len)
{
	int fd, rc = 0;

	if (!runopts_open(r))
		return -EBUSY;
	if (len > RUNOPTS_STDIN_MAX)
		return -EFBIG;
	if (!opts_of(r))
		return -ENOMEM;
	if ((rc = charge(r->opts, len)) < 0)
		return rc;
	fd = open_stdin(r, dirfd, uid, gid);
	if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
		r->opts->stdin_len = len;
	else
		rc = fd < 0 ? fd : -errno;
	charge(r->opts, r->opts->stdin_len);
	if (fd >= 0)
		close(fd);
	state_touch();
	return rc;
}

const char *runopts_flags(const struct run *r)
{
	const struct run_opts *o = r->opts;
	bool file = o && (o->env.n || o->cwd);

	if (!o || (!file && !o->has_stdin))
		return "-";
	return file && o->has_stdin ? "oi" : file ? "o" : "i";
}

/* The variables given empty go to unset, the others to set. */
static int split_env(const struct envmap *m, struct envmap *set,
		     struct envmap *unset)
{
	int rc = 0;

	envmap_init(set, OBJ_NONE, NULL);
	envmap_init(unset, OBJ_NONE, NULL);
	for (size_t i = 0; i < m->n && rc == 0; i++)
		rc = envmap_set(m->v[i]->len ? set : unset, m->v[i]->name,
				m->v[i]->value, m->v[i]->len);
	return rc;
}

int runopts_write_file(struct run *r, int dirfd, uid_t uid, gid_t gid)
{
	struct shell_who w = { .uid = uid, .gid = gid };
	struct envmap set, unset;
	char name[64];
	int rc;

	if (!r->opts || (!r->opts->env.n && !r->opts->cwd))
		return 0;
	opt_file(r, "opt", name, sizeof(name));
	rc = split_env(&r->opts->env, &set, &unset);
	if (rc == 0) {
		r->files |= RUN_F_OPT;
		rc = shell_write_prelude(dirfd, name, &w, &set, &unset,
					 r->opts->cwd);
	}
	envmap_free(&set);
	envmap_free(&unset);
	return rc;
}

char **runopts_envp(const struct run *r, const struct envmap *base)
{
	const struct envmap *m = runopts_env(r);
	struct envmap e;
	char **envp = NULL;
	int rc;

	envmap_init(&e, OBJ_NONE, NULL);
	rc = envmap_assign(&e, base);
	for (size_t i = 0; i < m->n && rc == 0; i++)
		if (m->v[i]->len)
			rc = envmap_set(&e, m->v[i]->name, m->v[i]->value,
					m->v[i]->len);
		else
			envmap_unset(&e, m->v[i]->name);
	if (rc == 0)
		envp = envmap_envp(&e);
	envmap_free(&e);
	return envp;
}

void runopts_status(const struct run *r, struct strbuf *b)
{
	const struct run_opts *o = r->opts;

	if (!o)
		return;
	if (o->env.n) {
		sb_addf(b, "env");
		for (size_t i = 0; i < o->env.n; i++)
			sb_addf(b, " %s%s", o->env.v[i]->len ? "" : "-",
				o->env.v[i]->name);
		sb_addf(b, "\n");
	}
	if (o->cwd)
		sb_addf(b, "cwd %s\n", o->cwd);
	if (o->has_stdin)
		sb_addf(b, "stdin_bytes %llu\n",
			(unsigned long long)o->stdin_len);
}

void runopts_json(const struct run *r, struct strbuf *b)
{
	const struct run_opts *o = r->opts;

	if (!o)
		return;
	sb_addf(b, ",\"options\":{\"env\":{");
	for (size_t i = 0; i < o->env.n; i++) {
		const struct envvar *v = o->env.v[i];

		sb_addf(b, "%s", i ? "," : "");
		sb_add_json(b, v->name, strlen(v->name));
		sb_addf(b, ":");
		if (v->len)
			sb_add_json(b, v->value, v->len);
		else
			sb_addf(b, "null");
	}
	sb_addf(b, "},\"cwd\":");
	if (o->cwd)
		sb_add_json(b, o->cwd, strlen(o->cwd));
	else
		sb_addf(b, "null");
	if (o->has_stdin)
		sb_addf(b, ",\"stdinBytes\":%llu}",
			(unsigned long long)o->stdin_len);
	else
		sb_addf(b, ",\"stdinBytes\":null}");
}

void runopts_done(struct run *r)
{
	if (!r->opts)
		return;
	charge(r->opts, 0);
}

void runopts_free(struct run *r)
{
	if (!r->opts)
		return;
	runopts_done(r);
	envmap_free(&r->opts->env);
	free(r->opts->cwd);
	free(r->opts);
	r->opts = NULL;
}

enum { O_ENV = 1, O_CWD, O_HAS_STDIN, O_STDIN_LEN };

void runopts_save(const struct run *r, struct state_w *w, uint16_t key)
{
	const struct run_opts *o = r->opts;

	if (!o)
		return;
	state_open(w, key);
	env_save_map(w, O_ENV, &o->env);
	state_put_str(w, O_CWD, o->cwd);
	state_put_u64(w, O_HAS_STDIN, o->has_stdin);
	state_put_u64(w, O_STDIN_LEN, o->stdin_len);
	state_close(w);
}

void runopts_restore(struct run *r, const struct state_r *o, uint16_t key)
{
	struct state_r b;

	if (!state_obj(o, key, &b) || !opts_of(r))
		return;
	env_restore_map(&b, O_ENV, &r->opts->env);
	r->opts->cwd = state_get_str(&b, O_CWD);
	r->opts->has_stdin = state_get_u64(&b, O_HAS_STDIN, 0) != 0;
	r->opts->stdin_len = state_get_u64(&b, O_STDIN_LEN, 0);
	if (!(r->files & RUN_F_IN) || charge(r->opts, r->opts->stdin_len) < 0)
		charge(r->opts, 0); /* its file is gone, or past the budget */
}
