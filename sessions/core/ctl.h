/*
 * ctl.h - the language of ctl files: one command per line, a verb and at
 * most one argument. Each ctl file has a table of the verbs it takes
 * (Inferno's Cmdtab); ctl_lookup finds a line's row and reads its
 * argument, ctl_usage names the verbs for the error line.
 */
#ifndef SFS_CTL_H
#define SFS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sess;

/* What follows a verb. */
enum ctl_arg {
	CTL_ARG_NONE,	/* nothing */
	CTL_ARG_SIGNAL, /* an optional signal name or number (TERM) */
	CTL_ARG_MS,	/* a timeout in milliseconds, 0 to NAME_TIMEOUT_MAX_MS */
	CTL_ARG_BARE,	/* the row of a signal name alone (the verb is its
			 * usage, "SIGNAL"), tried after every verb */
	CTL_ARG_PATH,	/* an optional absolute path (one word) */
	CTL_ARG_NAME,	/* a word (a name its handler checks), in path */
};

/* A line as its row's handler gets it: its argument, and whom it is for
 * (the caller's, not the parser's). */
struct ctl_args {
	int sig;     /* CTL_ARG_SIGNAL, CTL_ARG_BARE: SIGTERM when none */
	uint64_t ms; /* CTL_ARG_MS */
	const char *path; /* CTL_ARG_PATH, CTL_ARG_NAME: in the line, plen
			   * bytes (0: none) */
	size_t plen;
	uid_t uid; /* who opened the ctl file */
	gid_t gid;
	struct sess *s;
	void *owner; /* the run, context or terminal of the ctl file */
};

/* A row of a ctl file's table; the table ends with a row of no verb. */
struct ctl_verb {
	const char *verb;
	enum ctl_arg arg;
	bool unlisted; /* taken, but not named in the error line */
	/* carries out the line */
	int (*fn)(const struct ctl_args *a);
};

/* The row of tab that one line (without its newline) is, its argument
 * in *a (not its s and owner); NULL when the line is none of them or its argument is bad. */
const struct ctl_verb *ctl_lookup(const struct ctl_verb *tab, const char *line,
				  size_t len, struct ctl_args *a);
/* The listed verbs of tab with their arguments, "a, b [SIGNAL] or c", in
 * buf (cut to size). */
void ctl_usage(const struct ctl_verb *tab, char *buf, size_t size);
/* Signal number of a name ("TERM", "SIGTERM", "term", "15"), or -1. */
int ctl_signal(const char *name, size_t len);

#endif
