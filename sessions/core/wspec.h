/*
 * wspec.h - the spec of a watch of the workspace (fs/fam_watch.c): its
 * parse from the text written to watches/NAME/spec, and which paths and
 * events it takes. A pure module (no system call): tests/fuzz parses
 * anything with it.
 */
#ifndef SFS_WSPEC_H
#define SFS_WSPEC_H

#include <stdbool.h>
#include <stddef.h>

/* The kinds of events, one bit each. */
enum {
	WEV_CREATE = 1u << 0,
	WEV_MODIFY = 1u << 1,
	WEV_DELETE = 1u << 2,
	WEV_MOVE = 1u << 3,
	WEV_ATTRIB = 1u << 4,
	WEV_CLOSE_WRITE = 1u << 5,
	WEV_ALL = (1u << 6) - 1,
};

#define WSPEC_GLOBS_MAX 64  /* include and exclude lines together */
#define WSPEC_LINE_MAX	4096 /* a line, and so a path or a glob */

struct wspec {
	char *path;	/* relative to files/, without "./" or a final '/';
			 * "" is files/ itself */
	bool recursive; /* else only the entries of path itself */
	unsigned events;
	char **inc, **exc; /* NULL-terminated, malloc'd */
	size_t ninc, nexc;
};

/* The default: the whole workspace, recursive, every event. 0 or -ENOMEM. */
int wspec_default(struct wspec *s);
/* Parses len bytes of lines (`path P`, `recursive 0|1`, `include GLOB`,
 * `exclude GLOB`, `events KIND...`; blank lines and lines starting with #
 * are skipped) into *s over the default. Returns 0, -ENOMEM, or -EINVAL
 * with a readable reason in why (at most whylen bytes, one line). */
int wspec_parse(const char *buf, size_t len, struct wspec *s, char *why,
		size_t whylen);
void wspec_free(struct wspec *s);
/* s as lines that parse to s again (what spec reads back, and what an
 * upgrade hands over): malloc'd, or NULL on ENOMEM. */
char *wspec_text(const struct wspec *s, size_t *len);
/* The kind named (a WEV_ bit), or 0. */
unsigned wspec_kind(const char *name, size_t len);
const char *wspec_kind_name(unsigned kind);
/* Whether rel (a path relative to files/) is one of s's: below its path
 * (only directly with recursive 0), included and not excluded. A glob
 * without '/' matches any component of the path below the watch's path
 * (exclude .git drops everything under .git); with '/' it matches that
 * whole path (fnmatch FNM_PATHNAME). */
bool wspec_takes(const struct wspec *s, const char *rel);

#endif
