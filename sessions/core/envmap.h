/*
 * envmap.h - a sorted set of environment variables (name, value, id), and
 * the parser of bash's `export -p` output that refreshes it after each run.
 */
#ifndef SFS_ENVMAP_H
#define SFS_ENVMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sessions/core/objs.h"

struct envvar {
	uint64_t id; /* object id, so that env/NAME has a stable inode */
	void *owner; /* the session (or NULL for the root env) */
	char *name;
	char *value;
	size_t len;
	bool readonly; /* the shell reported it readonly (declare -r) */
};

struct envmap {
	struct envvar **v;
	size_t n, cap;
	enum obj_kind kind; /* OBJ_ENVVAR or OBJ_ROOTENV; OBJ_NONE: no ids */
	void *owner;
};

void envmap_init(struct envmap *m, enum obj_kind kind, void *owner);
void envmap_free(struct envmap *m);
struct envvar *envmap_get(const struct envmap *m, const char *name);
/* Sets name to value (len bytes). Returns 0 or -ENOMEM. */
int envmap_set(struct envmap *m, const char *name, const char *val, size_t len);
/* Returns 0, or -ENOENT when name is not set. */
int envmap_unset(struct envmap *m, const char *name);
/* Makes dst hold exactly the variables of src, keeping the ids of names
 * that stay. */
int envmap_assign(struct envmap *dst, const struct envmap *src);
/* MAX_ARG_STRLEN: execve takes no longer "NAME=value" with its NUL. */
#define ENVMAP_EXEC_STRING_MAX 131072
/* What m takes of execve's room for arguments and environment: each
 * "NAME=VALUE" with its NUL and its pointer. */
size_t envmap_exec_bytes(const struct envmap *m);
/* A NULL-terminated "NAME=VALUE" array for execve; free with
 * envmap_envp_free. */
char **envmap_envp(const struct envmap *m);
/* Frees such an array, its strings and itself (NULL: nothing). */
void envmap_envp_free(char **envp);
/* Fills m (emptied first) from `export -p` text. Lines it does not
 * understand (arrays, functions) are skipped. Returns 0 or -ENOMEM. */
int envmap_parse_export(struct envmap *m, const char *buf, size_t len);

#endif
