/*
 * load.c - reading the configuration file (libconfig syntax) into conf.
 * Every refusal names the file and line: "FILE:LINE: message".
 */
#include <errno.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <sys/stat.h>
#include "conf.h"
#include "sessions/core/names.h"

enum kind { K_STR, K_UINT, K_BOOL, K_GROUP, K_LEVEL, K_SHELL };

/* One table declares every setting: name, kind, range, where it goes. */
static const struct setting {
	const char *name;
	enum kind kind;
	unsigned long long min, max;
	size_t off;
} settings[] = {
#define AT(f) offsetof(struct conf, f)
	{ "shell", K_SHELL, 0, 0, AT(shell) },
	{ "workspace", K_STR, 0, 0, AT(workspace) },
	{ "runtime_dir", K_STR, 0, 0, AT(runtime_dir) },
	{ "default_timeout_ms", K_UINT, 0, NAME_TIMEOUT_MAX_MS,
	  AT(default_timeout_ms) },
	{ "kill_grace_ms", K_UINT, 0, 600000, AT(kill_grace_ms) },
	{ "max_sessions", K_UINT, 1, 1000000, AT(max_sessions) },
	{ "max_sessions_per_user", K_UINT, 1, 1000000,
	  AT(max_sessions_per_user) },
	{ "max_procs_per_session", K_UINT, 1, 100000,
	  AT(max_procs_per_session) },
	{ "max_fds_per_user", K_UINT, 0, 1ULL << 24, AT(max_fds_per_user) },
	{ "fd_reserve", K_UINT, 16, 1ULL << 24, AT(fd_reserve) },
	{ "max_command_bytes", K_UINT, 1, 1ULL << 30, AT(max_command_bytes) },
	{ "max_output_bytes", K_UINT, 0, 1ULL << 50, AT(max_output_bytes) },
	{ "max_spool_bytes", K_UINT, 1ULL << 20, 1ULL << 50,
	  AT(max_spool_bytes) },
	{ "history", K_UINT, 1, 100000, AT(history) },
	{ "shell_spin_us", K_UINT, 0, 1000000, AT(shell_spin_us) },
	{ "cpu_poll_ms", K_UINT, 0, 60000, AT(cpu_poll_ms) },
	{ "tty_scrollback_lines", K_UINT, 0, 1000000,
	  AT(tty_scrollback_lines) },
	{ "tty_rc", K_BOOL, 0, 0, AT(tty_rc) },
	{ "default_session", K_BOOL, 0, 0, AT(default_session) },
	{ "keeper", K_BOOL, 0, 0, AT(keeper) },
	{ "files_cache", K_BOOL, 0, 0, AT(files_cache) },
	{ "env", K_GROUP, 0, 0, 0 },
	{ "log_level", K_LEVEL, 0, 0, AT(log_level) },
#undef AT
};

static int fail(const config_setting_t *s, const char *path, const char *fmt,
		const char *name, const char *detail)
{
	fprintf(stderr, "%s:%d: ", path, config_setting_source_line(s));
	fprintf(stderr, fmt, name, detail);
	fputc('\n', stderr);
	return -EINVAL;
}

static int set_string(const config_setting_t *s, const char *path,
		      const struct setting *d)
{
	const char *v = config_setting_get_string(s);
	char **dst = (char **)((char *)&conf + d->off);

	if (!v)
		return fail(s, path, "%s: expected a string%s", d->name, "");
	if (v[0] != '/')
		return fail(s, path, "%s: expected an absolute path, got '%s'",
			    d->name, v);
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

/* Past what cannot hold a setting's name at p: a string, a comment, or
 * one character; counts the lines it passes in *line. */
static const char *skip_other(const char *p, int *line)
{
	const char *e = NULL;

	if (*p == '"') {
		for (e = p + 1; *e && *e != '"'; e++)
			if (*e == '\\' && e[1])
				e++;
	} else if (p[0] == '/' && p[1] == '*') {
		e = strstr(p + 2, "*/");
		e = e ? e + 1 : p + strlen(p) - 1;
	} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		e = p + strcspn(p, "\n") - 1;
	}
	for (const char *q = p; e && q <= e && *q; q++)
		*line += *q == '\n';
	if (!e)
		*line += *p == '\n';
	return e && *e ? e + 1 : (e ? e : p + 1);
}

/* The value of setting name on line in text, as written. */
static const char *find_value(const char *text, int line, const char *name)
{
	size_t len = strlen(name);
	int n = 1;

	for (const char *p = text; *p && n <= line;) {
		size_t w = strspn(p, "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*-");
		if (w == 0) {
			p = skip_other(p, &n);
			continue;
		}
		if (n == line && w == len && strncmp(p, name, len) == 0) {
			p += len + strspn(p + len, " \t");
			return *p == '=' || *p == ':' ?
				       p + 1 + strspn(p + 1, " \t") :
				       NULL;
		}
		p += w;
	}
	return NULL;
}

/* The integer as written at its setting: libconfig 1.5 silently wraps
 * values past 32 bits that lack an L suffix. The file is scanned as
 * libconfig does, so a string or a comment that holds the name does not
 * count. Returns 0 and *v, or -1 (then libconfig's value stands). */
static int raw_int(const char *path, int line, const char *name, long long *v)
{
	FILE *f = fopen(path, "re");
	char *text = NULL, *end;
	const char *p = NULL;
	size_t cap = 0;
	int rc = -1;

	if (f && getdelim(&text, &cap, '\0', f) >= 0)
		p = find_value(text, line, name);
	if (p && ((*p >= '0' && *p <= '9') || *p == '-')) {
		errno = 0;
		*v = strtoll(p, &end, strncasecmp(p, "0x", 2) == 0 ? 16 : 10);
		rc = errno || end == p ? -1 : 0;
	}
	if (f)
		fclose(f);
	free(text);
	return rc;
}

static int set_uint(const config_setting_t *s, const char *path,
		    const struct setting *d)
{
	int t = config_setting_type(s);
	long long v, raw;
	char range[64];

	if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
		return fail(s, path, "%s: expected an integer%s", d->name, "");
	v = config_setting_get_int64(s);
	if (raw_int(path, config_setting_source_line(s), d->name, &raw) == 0)
		v = raw; /* what is written, not libconfig's wrapped value */
	snprintf(range, sizeof(range), " (%llu to %llu)", d->min, d->max);
	if (v < 0 || (unsigned long long)v < d->min ||
	    (unsigned long long)v > d->max)
		return fail(s, path, "%s: out of range%s", d->name, range);
	*(uint64_t *)((char *)&conf + d->off) = (uint64_t)v;
	return 0;
}

static int set_level(const config_setting_t *s, const char *path)
{
	static const char *const names[] = { "error", "warning", "notice",
					     "info", "debug" };
	static const int levels[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE,
				      LOG_INFO, LOG_DEBUG };
	const char *v = config_setting_get_string(s);

	for (size_t i = 0; v && i < sizeof(names) / sizeof(*names); i++)
		if (strcasecmp(v, names[i]) == 0) {
			conf.log_level = levels[i];
			return 0;
		}
	return fail(s, path, "%s: expected one of %s", "log_level",
		    "error, warning, notice, info, debug");
}

/* env = { NAME = "value"; ... } */
static int set_env(const config_setting_t *g, const char *path)
{
	int n = config_setting_length(g);

	if (!config_setting_is_group(g))
		return fail(g, path,
			    "%s: expected a group { NAME = \"value\"; }%s",
			    "env", "");
	for (int i = 0; i < n; i++) {
		config_setting_t *e = config_setting_get_elem(g, i);
		const char *name = config_setting_name(e);
		const char *v = config_setting_get_string(e);
		int rc;

		if (!name_env_valid(name))
			return fail(e, path,
				    "env: '%s' is not a variable "
				    "name%s",
				    name, "");
		if (!v)
			return fail(e, path, "env: %s: expected a string%s",
				    name, "");
		rc = conf_add_env(name, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* shell = "/bin/bash"; or shell = [ "/bin/bash", "-O", "extglob" ]; */
static int set_shell(const config_setting_t *s, const char *path,
		     const struct setting *d)
{
	int n = config_setting_length(s);
	char **args;

	if (config_setting_type(s) == CONFIG_TYPE_STRING)
		return set_string(s, path, d);
	if ((config_setting_type(s) != CONFIG_TYPE_LIST &&
	     config_setting_type(s) != CONFIG_TYPE_ARRAY) ||
	    n < 1)
		return fail(s, path,
			    "%s: expected a path or a list [path, "
			    "arguments...]%s",
			    d->name, "");
	for (int i = 0; i < n; i++)
		if (!config_setting_get_string_elem(s, i))
			return fail(s, path,
				    "%s: every element must be a "
				    "string%s",
				    d->name, "");
	if (config_setting_get_string_elem(s, 0)[0] != '/')
		return fail(s, path, "%s: expected an absolute path, got '%s'",
			    d->name, config_setting_get_string_elem(s, 0));
	args = calloc((size_t)n, sizeof(*args));
	for (int i = 1; args && i < n; i++)
		if (!(args[i - 1] =
			      strdup(config_setting_get_string_elem(s, i))))
			return -ENOMEM;
	if (!args)
		return -ENOMEM;
	free(conf.shell);
	conf.shell = strdup(config_setting_get_string_elem(s, 0));
	for (char **a = conf.shell_args; a && *a; a++)
		free(*a);
	free(conf.shell_args);
	conf.shell_args = args;
	return conf.shell ? 0 : -ENOMEM;
}

static const struct setting *find(const char *name)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(*settings); i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

static int apply(const config_setting_t *s, const char *path)
{
	const struct setting *d = find(config_setting_name(s));

	if (!d)
		return fail(s, path, "unknown setting '%s'%s",
			    config_setting_name(s), "");
	switch (d->kind) {
	case K_STR:
		return set_string(s, path, d);
	case K_UINT:
		return set_uint(s, path, d);
	case K_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return fail(s, path, "%s: expected true or false%s",
				    d->name, "");
		*(bool *)((char *)&conf + d->off) = config_setting_get_bool(s);
		return 0;
	case K_GROUP:
		return set_env(s, path);
	case K_SHELL:
		return set_shell(s, path, d);
	default:
		return set_level(s, path);
	}
}

int conf_load(const char *path)
{
	config_t cfg;
	config_setting_t *root;
	int rc = 0;

	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: cannot read: is a directory\n", path);
		return -EINVAL;
	}
	config_init(&cfg);
	if (!config_read_file(&cfg, path)) {
		if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
			fprintf(stderr, "%s: cannot read: %s\n", path,
				strerror(errno));
		else
			fprintf(stderr, "%s:%d: %s\n",
				config_error_file(&cfg) ?
					config_error_file(&cfg) :
					path,
				config_error_line(&cfg),
				config_error_text(&cfg));
		config_destroy(&cfg);
		return -EINVAL;
	}
	root = config_root_setting(&cfg);
	for (int i = 0; rc == 0 && i < config_setting_length(root); i++)
		rc = apply(config_setting_get_elem(root, i), path);
	config_destroy(&cfg);
	return rc;
}
