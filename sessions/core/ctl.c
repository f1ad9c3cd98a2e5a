/*
 * ctl.c - parsing of ctl lines against a ctl file's table of verbs, and
 * signal names.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "sessions/core/ctl.h"
#include "sessions/core/names.h"

static const struct {
	const char *name;
	int sig;
} sigs[] = {
	{ "HUP", SIGHUP },   { "INT", SIGINT },	  { "QUIT", SIGQUIT },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
	{ "TERM", SIGTERM }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "ALRM", SIGALRM }, { "PIPE", SIGPIPE }, { "WINCH", SIGWINCH },
};

int ctl_signal(const char *name, size_t len)
{
	unsigned long long n;

	if (name_parse_u64(name, len, &n) == 0)
		return n >= 1 && n <= 64 ? (int)n : -1;
	if (len > 3 && strncasecmp(name, "SIG", 3) == 0) {
		name += 3;
		len -= 3;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		if (strlen(sigs[i].name) == len &&
		    strncasecmp(sigs[i].name, name, len) == 0)
			return sigs[i].sig;
	return -1;
}

/* The next blank-separated word of s (len bytes) from *i. */
static size_t word(const char *s, size_t len, size_t *i, const char **w)
{
	size_t n = 0;

	while (*i < len && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r'))
		(*i)++;
	*w = s + *i;
	while (*i + n < len && s[*i + n] != ' ' && s[*i + n] != '\t' &&
	       s[*i + n] != '\r')
		n++;
	*i += n;
	return n;
}

static bool is(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/* Reads the argument (an bytes at arg) that row v's verb takes. */
static int take_arg(const struct ctl_verb *v, const char *arg, size_t an,
		    struct ctl_args *a)
{
	unsigned long long ms = 0;
	int rc;

	switch (v->arg) {
	case CTL_ARG_SIGNAL:
		return an && (a->sig = ctl_signal(arg, an)) < 0 ? -EINVAL : 0;
	case CTL_ARG_MS:
		rc = an ? name_parse_timeout(arg, an, &ms) : -EINVAL;
		a->ms = ms;
		return rc;
	case CTL_ARG_PATH:
		a->path = arg;
		a->plen = an;
		return an && arg[0] != '/' ? -EINVAL : 0;
	case CTL_ARG_NAME:
		a->path = arg;
		a->plen = an;
		return an ? 0 : -EINVAL;
	default:
		return an ? -EINVAL : 0;
	}
}

const struct ctl_verb *ctl_lookup(const struct ctl_verb *tab, const char *s,
				  size_t len, struct ctl_args *a)
{
	const char *w, *arg, *extra;
	size_t i = 0, n = word(s, len, &i, &w);
	size_t an = word(s, len, &i, &arg);
	const struct ctl_verb *v;

	a->sig = SIGTERM;
	a->ms = 0;
	a->path = NULL;
	a->plen = 0;
	if (word(s, len, &i, &extra) != 0 || n == 0)
		return NULL;
	for (v = tab; v->verb; v++)
		if (v->arg != CTL_ARG_BARE && is(w, n, v->verb))
			return take_arg(v, arg, an, a) == 0 ? v : NULL;
	/* a verb is lower case, and "kill" a verb before it is a signal */
	for (v = tab; v->verb && an == 0; v++)
		if (v->arg == CTL_ARG_BARE && (a->sig = ctl_signal(w, n)) > 0)
			return v;
	return NULL;
}

void ctl_usage(const struct ctl_verb *tab, char *buf, size_t size)
{
	size_t k = 0, at = 0, left = 0;
	int n;

	for (const struct ctl_verb *v = tab; v->verb; v++)
		left += !v->unlisted;
	buf[0] = '\0';
	for (const struct ctl_verb *v = tab; v->verb && at < size; v++) {
		if (v->unlisted)
			continue;
		n = snprintf(buf + at, size - at, "%s%s%s",
			     k == 0	   ? "" :
			     k + 1 == left ? " or " :
					     ", ",
			     v->verb,
			     v->arg == CTL_ARG_SIGNAL ? " [SIGNAL]" :
			     v->arg == CTL_ARG_MS     ? " MS" :
			     v->arg == CTL_ARG_PATH   ? " [PATH]" :
			     v->arg == CTL_ARG_NAME   ? " NAME" :
							"");
		at += n > 0 ? (size_t)n : 0;
		if (v->arg == CTL_ARG_MS && at < size)
			at += (size_t)snprintf(buf + at, size - at,
					       " (0 to %llu)",
					       NAME_TIMEOUT_MAX_MS);
		k++;
	}
}
