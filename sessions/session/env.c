/*
 * env.c - environment and cwd of sessions, and the sandbox-wide
 * variables (root env/) that apply to every session.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/dirtree.h"
#include "sessions/session/env.h"
#include "sessions/session/statekeys.h"
#include "sessions/core/state.h"
#include "sessions/core/log.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"

extern char **environ;

static struct envmap base_env; /* what a new session starts with */
static struct envmap root_env; /* what root env/ lists */

void (*sess_env_ready_hook)(struct sess *s);

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

void env_init(void)
{
	envmap_init(&base_env, OBJ_NONE, NULL);
	envmap_init(&root_env, OBJ_ROOTENV, NULL);
	for (char **e = environ; *e; e++)
		add_base(*e);
	for (size_t i = 0; i < conf.nenv; i++)
		add_base(conf.env[i]);
}

int env_new(struct sess *s)
{
	envmap_init(&s->env, OBJ_ENVVAR, s);
	envmap_init(&s->pend_set, OBJ_NONE, NULL);
	envmap_init(&s->pend_unset, OBJ_NONE, NULL);
	return envmap_assign(&s->env, &base_env) < 0 ? -ENOMEM : 0;
}

void env_free(struct sess *s)
{
	envmap_free(&s->env);
	envmap_free(&s->pend_set);
	envmap_free(&s->pend_unset);
}

void env_sent(struct sess *s)
{
	envmap_free(&s->pend_set);
	envmap_free(&s->pend_unset);
	s->pend_cwd = false;
}

/* Parses the `export -p` that the shell left in the file "env". */
#define ENV_FILE_MAX (16u << 20)

static int read_env_file(struct sess *s, struct envmap *m)
{
	struct strbuf b = { 0 };
	char buf[65536];
	ssize_t n;
	int fd = dirtree_open_plain(s->dirfd, "env");
	int rc;

	if (fd < 0)
		return fd;
	/* more than any environment execve takes is not the shell's */
	while ((n = read(fd, buf, sizeof(buf))) > 0 && b.len < ENV_FILE_MAX)
		sb_add(&b, buf, (size_t)n);
	close(fd);
	rc = b.err ? b.err : n > 0 ? -E2BIG : 0;
	if (rc == 0)
		rc = envmap_parse_export(m, b.p ? b.p : "", b.len);
	free(b.p);
	return rc;
}

void env_apply_pwd(struct sess *s, const struct shell_frame *f)
{
	char *cwd;

	if (f->pwd[0] != '/' || !(cwd = strdup(f->pwd)))
		return;
	free(s->cwd);
	s->cwd = cwd;
}

/* (The 'E' of the last run will not come when its shell is gone, maybe
 * in the middle of writing "env".) */
void env_settled(struct sess *s)
{
	if (!s->env_pending)
		return;
	s->env_pending = false;
	if (sess_env_ready_hook)
		sess_env_ready_hook(s);
}

void env_apply(struct sess *s, const struct shell_frame *f)
{
	state_touch();
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

int sess_env_check(struct sess *s, const char *name, const char *val,
		   size_t len)
{
	if (!name_env_valid(name)) {
		sess_error(s, "invalid variable name '%.64s'", name);
		return -EINVAL;
	}
	if (!name_env_value_valid(val, len)) {
		sess_error(s, "value of %s holds a NUL byte", name);
		return -EINVAL;
	}
	return 0;
}

int sess_setenv(struct sess *s, const char *name, const char *val, size_t len)
{
	state_touch();
	int rc = sess_env_check(s, name, val, len);

	if (rc < 0)
		return rc;
	rc = envmap_set(&s->env, name, val, len);
	if (rc == 0)
		rc = envmap_set(&s->pend_set, name, val, len);
	envmap_unset(&s->pend_unset, name);
	return rc;
}

int sess_unsetenv(struct sess *s, const char *name)
{
	state_touch();
	if (envmap_unset(&s->env, name) < 0)
		return -ENOENT;
	envmap_unset(&s->pend_set, name);
	return envmap_set(&s->pend_unset, name, "", 0);
}

int sess_cwd_abs(struct sess *s, const char *path, const char *what, char **out)
{
	char *abs;

	if (path[0] != '/') {
		if (asprintf(&abs, "%s/%s", s->cwd, path) < 0)
			return -ENOMEM;
	} else if (!(abs = strdup(path))) {
		return -ENOMEM;
	}
	/* Its form only: the daemon looks up no path of a user's (it could
	 * wait on her stopped filesystem, or tell her what root sees). The
	 * shell enters it as the owner at the next run, or fails that run. */
	if (strlen(abs) >= PATH_MAX) {
		sess_error(s, "%s: %.64s...: %s", what, abs,
			   strerror(ENAMETOOLONG));
		free(abs);
		return -ENAMETOOLONG;
	}
	*out = abs;
	return 0;
}

int sess_chdir(struct sess *s, const char *path)
{
	state_touch();
	char *abs;
	int rc = sess_cwd_abs(s, path, "cwd", &abs);

	if (rc < 0)
		return rc;
	free(s->cwd);
	s->cwd = abs;
	s->pend_cwd = true;
	return 0;
}

/* Counts the changes of root env/: a session made ahead with an older
 * count has stale variables. */
static unsigned long base_gen;

unsigned long env_base_gen(void)
{
	return base_gen;
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
	base_gen++;
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
	base_gen++;
	envmap_unset(&base_env, name);
	for (struct sess *s = sess_first(); s; s = sess_next(s))
		sess_unsetenv(s, name);
	return 0;
}

void env_fit_exec(struct sess *s)
{
	for (size_t i = 0; i < s->env.n;) {
		const struct envvar *v = s->env.v[i];
		size_t n = strlen(v->name) + v->len + 2;
		char name[256];

		if (n <= ENVMAP_EXEC_STRING_MAX) {
			i++;
			continue;
		}
		snprintf(name, sizeof(name), "%s", v->name);
		sess_error(s,
			   "%s is %zu bytes, more than a new shell can be "
			   "started with (%d); dropped",
			   name, n, ENVMAP_EXEC_STRING_MAX);
		envmap_unset(&s->env, name);
	}
}

/* An upgrade: a map as an object of key, one SSTATE_VAR per variable,
 * and made again with the same ids (env/NAME's inodes). */
enum { VK_ID = 1, VK_NAME, VK_VALUE, VK_READONLY };

void env_save_map(struct state_w *w, uint16_t key, const struct envmap *m)
{
	state_open(w, key);
	for (size_t i = 0; i < m->n; i++) {
		const struct envvar *v = m->v[i];

		state_open(w, SSTATE_VAR);
		state_put_u64(w, VK_ID, v->id);
		state_put_str(w, VK_NAME, v->name);
		state_put(w, VK_VALUE, v->value, v->len);
		state_put_u64(w, VK_READONLY, v->readonly);
		state_close(w);
	}
	state_close(w);
}

void env_restore_map(const struct state_r *o, uint16_t key, struct envmap *m)
{
	struct state_r map, var;
	size_t pos = 0;
	uint16_t k;

	if (!state_obj(o, key, &map))
		return;
	while (state_next(&map, &pos, &k, &var) == 1) {
		char *name = state_get_str(&var, VK_NAME);
		const void *val = "";
		size_t len = 0;
		struct envvar *v;

		state_get(&var, VK_VALUE, &val, &len);
		if (m->kind != OBJ_NONE)
			objs_reuse(state_get_u64(&var, VK_ID, 0));
		if (name && name_env_valid(name) &&
		    envmap_set(m, name, val, len) == 0 &&
		    (v = envmap_get(m, name)))
			v->readonly = state_get_u64(&var, VK_READONLY, 0) != 0;
		free(name);
	}
}

void env_save_root(struct state_w *w)
{
	env_save_map(w, SSTATE_ROOTENV, &root_env);
}

void env_restore_root(const struct state_r *o)
{
	env_restore_map(o, SSTATE_ROOTENV, &root_env);
	for (size_t i = 0; i < root_env.n; i++)
		envmap_set(&base_env, root_env.v[i]->name, root_env.v[i]->value,
			   root_env.v[i]->len);
}
