/*
 * opts.c - a run's own options (sessions/session/runopts.h): the
 * variables and the cwd of rID.opt (the prelude's records) and its stdin
 * from rID.in. What the shell had is noted before they apply and put
 * back after the run, unless the command itself left something else: a
 * variable given a value that is no longer that value and exported, a
 * variable unset for the run that is set again, a cwd that is no longer
 * the one given. So the shell is as a subshell with those options would
 * leave it, except for what the command changed. All in C, with bash's
 * variable functions: no function, alias or trap of the user's runs.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "variables.h"
#include "common.h"
#include "drv.h"

/* A variable given to the run, and what it was before. */
struct given {
	char *name;
	char *val;     /* NULL: unset for the run */
	char *old;     /* its value before, NULL: it had none */
	int old_attrs; /* its attributes before */
	bool existed;
	bool declared; /* attributes without a value (`declare -x NAME`) */
};

static struct given *vars;
static size_t nvars;
/* The cwd: the shell's before the run ($PWD, OLDPWD as they were) and
 * the one the run entered; NULL without a cwd option. */
static char *cwd_before, *pwd_before, *oldpwd_before, *cwd_given;

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Notes name's state, or says why it cannot be given to the run. */
static int note_var(char *name, char *val, char *why, size_t cap)
{
	SHELL_VAR *v = find_variable_noref(name);
	struct given *g, *nv;

	if (v && readonly_p(v)) {
		snprintf(why, cap, "env/%s: readonly in the shell", name);
		return -1;
	}
	if (v && (array_p(v) || assoc_p(v))) {
		snprintf(why, cap, "env/%s: an array in the shell", name);
		return -1;
	}
	/* RANDOM, SECONDS, BASH_ARGV0...: bash computes them, and what is
	 * noted of one could not be put back (unbound and bound again, it
	 * is a plain variable: $RANDOM would stay one number) */
	if (v && (v->dynamic_value || v->assign_func)) {
		snprintf(why, cap, "env/%s: computed by bash in the shell",
			 name);
		return -1;
	}
	nv = realloc(vars, (nvars + 1) * sizeof(*vars));
	if (!nv)
		return -1;
	vars = nv;
	g = &vars[nvars++];
	*g = (struct given){ .name = strdup(name), .val = dup_or_null(val) };
	g->existed = v && !invisible_p(v) && value_cell(v);
	g->declared = v && !g->existed;
	if (v)
		g->old_attrs = v->attributes;
	if (g->existed)
		g->old = strdup(value_cell(v));
	return 0;
}

static void give_var(struct given *g)
{
	if (g->val) {
		drv_pre_set(g->name, g->val);
		return;
	}
	unbind_variable_noref(g->name);
	stupidly_hack_special_variables(g->name);
}

/* Enters dir for the run, noting where the shell was. */
static void give_cwd(char *dir, char *why, size_t cap)
{
	cwd_before = getcwd(NULL, 0);
	pwd_before = dup_or_null(get_string_value("PWD"));
	oldpwd_before = dup_or_null(get_string_value("OLDPWD"));
	drv_pre_cd(dir, why, cap);
	if (!why[0])
		cwd_given = getcwd(NULL, 0);
}

struct why {
	char *p;
	size_t cap;
};

static int opt_record(char op, char *arg, char *val, void *ctx)
{
	struct why *w = ctx;

	if ((op == 'S' || op == 'U') && note_var(arg, val, w->p, w->cap) == 0)
		give_var(&vars[nvars - 1]);
	else if (op == 'C')
		give_cwd(arg, w->p, w->cap);
	return w->p[0] != '\0';
}

/* The records of rID.opt: "S\0NAME\0VALUE\0", "U\0NAME\0", "C\0DIR\0". */
static void apply_file(const char *id, char *why, size_t cap)
{
	struct why w = { why, cap };
	char name[64], *p;
	size_t len;

	snprintf(name, sizeof(name), "r%s.opt", id);
	if (!(p = drv_slurp(name, &len))) {
		snprintf(why, cap, "options: %s", strerror(errno));
		return;
	}
	drv_records(p, len, opt_record, &w);
	free(p);
}

void drv_opts_apply(const char *id, const char *flags, char *why, size_t cap)
{
	char path[PATH_MAX + 64], err[PATH_MAX + 128] = "";

	if (strchr(flags, 'o'))
		apply_file(id, err, sizeof(err));
	if (strchr(flags, 'i') && !err[0]) {
		snprintf(path, sizeof(path), "%s/r%s.in", drv.dir, id);
		if (drv_put_fd(path, O_RDONLY | O_NOFOLLOW, 0) < 0)
			snprintf(err, sizeof(err), "stdin: %s",
				 strerror(errno));
	}
	if (err[0])
		snprintf(why, cap, "%s%s", DRV_OPT_WHY, err);
}

/* Whether g is as the run was given it: then it goes back. */
static bool as_given(const struct given *g)
{
	SHELL_VAR *v = find_variable_noref(g->name);

	if (!g->val)
		return !v || invisible_p(v);
	return v && !array_p(v) && !assoc_p(v) && exported_p(v) &&
	       value_cell(v) && strcmp(value_cell(v), g->val) == 0;
}

static void restore_var(struct given *g)
{
	SHELL_VAR *v;

	if (!as_given(g))
		return;
	unbind_variable_noref(g->name);
	if ((g->existed || g->declared) &&
	    (v = bind_variable(g->name, g->existed ? g->old : "",
			       ASS_NOEVAL))) {
		if (g->declared) { /* back to no value, as declare left it */
			FREE(value_cell(v));
			var_setvalue(v, NULL);
		}
		v->attributes = g->old_attrs;
	}
	array_needs_making = 1;
	stupidly_hack_special_variables(g->name);
}

/* Sets name back to val (NULL: unset), as it was before the run. */
static void reset_var(const char *name, const char *val)
{
	SHELL_VAR *v = find_variable_noref(name);

	if (v && readonly_p(v))
		return;
	if (val)
		bind_variable(name, (char *)val, ASS_NOEVAL);
	else
		unbind_variable_noref(name);
}

/* Goes back to the shell's cwd (by its $PWD when that is the same
 * directory), unless the command left the one given. */
static void restore_cwd(void)
{
	char *now = getcwd(NULL, 0), why[PATH_MAX + 128] = "";
	struct stat a, b;
	char *to = cwd_before;

	if (now && cwd_given && cwd_before && strcmp(now, cwd_given) == 0) {
		if (pwd_before && stat(pwd_before, &a) == 0 &&
		    stat(cwd_before, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			to = pwd_before;
		drv_pre_cd(to, why, sizeof(why));
		if (why[0])
			builtin_error("%s", why);
		else
			reset_var("OLDPWD", oldpwd_before);
	}
	free(now);
}

void drv_opts_restore(void)
{
	for (size_t i = nvars; i-- > 0;) {
		restore_var(&vars[i]);
		free(vars[i].name);
		free(vars[i].val);
		free(vars[i].old);
	}
	free(vars);
	vars = NULL;
	nvars = 0;
	if (cwd_before)
		restore_cwd();
	free(cwd_before);
	free(pwd_before);
	free(oldpwd_before);
	free(cwd_given);
	cwd_before = pwd_before = oldpwd_before = cwd_given = NULL;
}
