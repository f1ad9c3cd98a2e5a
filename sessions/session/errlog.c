/*
 * errlog.c - the ring of a session's last refusals, with their time; and
 * the refusal of a bad name for a new child of a session's folders.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sessions/session/errlog.h"
#include "sessions/core/names.h"
#include "sessions/core/log.h"
#include "sessions/session/sess.h"

/* Every refusal recorded since the start, of any session. */
static unsigned long refusals;

unsigned long sess_errors_total(void)
{
	return refusals;
}

void sess_error(struct sess *s, const char *fmt, ...)
{
	struct errlog *e = &s->errs;
	char raw[1024], msg[1024], line[1200], when[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;
	unsigned slot;

	refusals++;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	name_escape(msg, sizeof(msg), raw); /* one refusal, one line */
	log_msg(LOG_WARNING, "session %s: %s", s->name, msg);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(line, sizeof(line), "%s %s\n", when, msg);
	if (e->n == SESS_ERRORS_KEPT) {
		free(e->lines[e->first]);
		e->first = (e->first + 1) % SESS_ERRORS_KEPT;
		e->n--;
	}
	slot = (e->first + e->n) % SESS_ERRORS_KEPT;
	e->lines[slot] = strdup(line);
	if (e->lines[slot])
		e->n++;
}

char *sess_errors_text(struct sess *s, size_t *len)
{
	struct errlog *e = &s->errs;
	struct strbuf b = { 0 };

	sb_add(&b, "", 0);
	for (unsigned i = 0; i < e->n; i++) {
		const char *l = e->lines[(e->first + i) % SESS_ERRORS_KEPT];

		sb_add(&b, l, strlen(l));
	}
	return sb_take(&b, len);
}

void errlog_free(struct errlog *e)
{
	for (unsigned i = 0; i < e->n; i++)
		free(e->lines[(e->first + i) % SESS_ERRORS_KEPT]);
	e->n = 0;
}

int sess_child_name(struct sess *s, const char *dir, const char *name,
		    bool taken)
{
	bool run = strcmp(dir, "runs") == 0;
	unsigned long long n;

	if (!name_valid(name) ||
	    (run && (strcmp(name, "latest") == 0 ||
		     name_parse_u64(name, strlen(name), &n) == 0))) {
		sess_error(s, "%s/%.64s: %s", dir, name,
			   run ? "a run name is 1-64 of [A-Za-z0-9._-], not "
				 "all digits, not 'latest'" :
				 "a name is 1-64 of [A-Za-z0-9._-] not "
				 "starting with '.'");
		return -EINVAL;
	}
	if (taken)
		return -EEXIST;
	return s->dying ? -ENOENT : 0;
}
