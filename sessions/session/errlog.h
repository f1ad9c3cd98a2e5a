/*
 * errlog.h - a session's recent refusals (its error file), each also
 * written to the log.
 */
#ifndef SFS_ERRLOG_H
#define SFS_ERRLOG_H

#include <stdbool.h>
#include <stddef.h>

#define SESS_ERRORS_KEPT 50

struct sess;

/* The last SESS_ERRORS_KEPT lines, oldest at first. */
struct errlog {
	char *lines[SESS_ERRORS_KEPT];
	unsigned first, n;
};

/* Records one refusal: a line in the session's error file and the log. */
void sess_error(struct sess *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The error file's text (malloc'd). */
char *sess_errors_text(struct sess *s, size_t *len);
void errlog_free(struct errlog *e);
/* How many refusals sess_error has recorded, of every session. */
unsigned long sess_errors_total(void);
/* Whether name may be a new child of s's folder dir (runs, procs,
 * contexts), taken saying whether one has it already: 0, -EINVAL with an
 * error line (a name of runs/ is also neither all digits nor "latest"),
 * -EEXIST, or -ENOENT while the session is going. */
int sess_child_name(struct sess *s, const char *dir, const char *name,
		    bool taken);

#endif
