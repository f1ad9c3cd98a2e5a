/*
 * report.c - what the shell driver tells the daemon: a run's frames (its
 * status, the real cwd, the exported variables in `export -p` form, which
 * the daemon's envmap parser reads) and, when the shell exits, the files
 * "env" and "state"; and the growing buffers and file reads it uses.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "variables.h"
#include "drv.h"

void drv_buf_add(struct drv_buf *b, const void *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void drv_buf_str(struct drv_buf *b, const char *s)
{
	drv_buf_add(b, s, strlen(s) + 1);
}

void drv_records(char *p, size_t len,
		 int (*fn)(char op, char *arg, char *val, void *ctx), void *ctx)
{
	char *end = p + len, *val;

	for (char *r = p, *arg; r < end; r = val) {
		char op = r[0];

		arg = r + strlen(r) + 1;
		if (arg >= end)
			return;
		val = arg + strlen(arg) + 1;
		if (op == 'S' && val >= end)
			return;
		if (fn(op, arg, op == 'S' ? val : NULL, ctx))
			return;
		if (op == 'S')
			val += strlen(val) + 1;
	}
}

char *drv_slurp(const char *name, size_t *len)
{
	char path[PATH_MAX + 16];
	struct drv_buf b = { 0 };
	char chunk[65536];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", drv.dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		drv_buf_add(&b, chunk, (size_t)n);
	close(fd);
	drv_buf_add(&b, "", 1);
	if (b.err || n < 0) {
		free(b.p);
		return NULL;
	}
	*len = b.len - 1;
	return b.p;
}

/* The exported variables as `export -p` shows them (a nameref's value is
 * the name it refers to, as bash shows it). */
static void add_exports(struct drv_buf *b)
{
	SHELL_VAR **list = all_exported_variables();

	for (SHELL_VAR **v = list; v && *v; v++) {
		const char *val = value_cell(*v);

		if (invisible_p(*v) || array_p(*v) || assoc_p(*v) ||
		    function_p(*v) || !val)
			continue;
		/* -r: env/ refuses what the shell would not take */
		drv_buf_add(b, readonly_p(*v) ? "declare -rx " : "declare -x ",
			    readonly_p(*v) ? 12 : 11);
		drv_buf_add(b, (*v)->name, strlen((*v)->name));
		drv_buf_add(b, "=\"", 2);
		/* runs without a character to escape go in one piece */
		for (const char *c = val; *c;) {
			size_t n = strcspn(c, "\"\\$`");

			drv_buf_add(b, c, n);
			c += n;
			if (*c) {
				drv_buf_add(b, "\\", 1);
				drv_buf_add(b, c++, 1);
			}
		}
		drv_buf_add(b, "\"\n", 2);
	}
	free(list);
}

/* The real working directory, not $PWD ("" when it has none: the daemon
 * keeps the one it knew). */
static void add_cwd(struct drv_buf *b)
{
	char cwd[PATH_MAX];

	drv_buf_str(b, getcwd(cwd, sizeof(cwd)) && cwd[0] == '/' ? cwd : "");
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_file(const char *name, const struct drv_buf *b)
{
	char path[PATH_MAX + 16];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", drv.dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	rc = b->err ? -1 : write_all(fd, b->p, b->len);
	close(fd);
	return rc;
}

void drv_save_state(void)
{
	struct drv_buf env = { 0 }, st = { 0 };

	struct rlimit lim;

	if (getpid() != drv.pid || !drv.running)
		return;
	drv_opts_restore(); /* an `exit` in a run: the options were its own */
	add_exports(&env);
	drv_buf_add(&st, "X0", 3);
	add_cwd(&st);
	drv_buf_add(&st, "", 1);
	drv_room(&lim);
	if (write_file("env", &env) == 0)
		write_file("state", &st);
	drv_unroom(&lim);
	free(env.p);
	free(st.p);
}

/* A frame's head: its kind and status, then " KEY" when the run has a
 * key. */
static void add_head(struct drv_buf *b, char kind, int status, const char *key)
{
	char head[64];

	snprintf(head, sizeof(head), "%c%d%s%s", kind, status,
		 key[0] ? " " : "", key);
	drv_buf_str(b, head);
}

/* "R<status> KEY\0<cwd>\0\0" ends the run at once ("F126
 * KEY\0<cwd>\0<why>\0" a run that could not start); then
 * "E0 KEY\0<cwd>\0<exports>\0", which only the next run waits for. */
int drv_report(int status, const char *key, const char *why)
{
	struct drv_buf b = { 0 };
	int rc;

	add_head(&b, why[0] ? 'F' : 'R', why[0] ? 126 : status, key);
	add_cwd(&b);
	drv_buf_str(&b, why);
	rc = b.err ? -1 : write_all(drv_res_fd(), b.p, b.len);
	b.len = 0;
	add_head(&b, 'E', 0, key);
	add_cwd(&b);
	add_exports(&b);
	drv_buf_add(&b, "", 1);
	if (rc == 0)
		rc = b.err ? -1 : write_all(drv_res_fd(), b.p, b.len);
	free(b.p);
	return rc;
}
