/*
 * ctl.c - parsing of ctl lines and signal names.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
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

int ctl_parse(const char *s, size_t len, struct ctl_cmd *c)
{
	const char *w, *arg, *extra;
	size_t i = 0, n = word(s, len, &i, &w);
	size_t an = word(s, len, &i, &arg);
	unsigned long long ms;
	int rc;

	if (word(s, len, &i, &extra) != 0 || n == 0)
		return -EINVAL;
	c->sig = SIGTERM;
	c->ms = 0;
	if (is(w, n, "kill")) {
		c->op = CTL_KILL;
		if (an && (c->sig = ctl_signal(arg, an)) < 0)
			return -EINVAL;
		return 0;
	}
	ms = 0;
	if (is(w, n, "timeout")) {
		c->op = CTL_TIMEOUT;
		rc = an ? name_parse_timeout(arg, an, &ms) : -EINVAL;
		c->ms = ms;
		return rc;
	}
	if (an)
		return -EINVAL;
	if (is(w, n, "reset"))
		c->op = CTL_RESET;
	else if (is(w, n, "eof"))
		c->op = CTL_EOF;
	else if (is(w, n, "killall"))
		c->op = CTL_KILLALL;
	else if ((c->sig = ctl_signal(w, n)) > 0)
		c->op = CTL_KILL;
	else
		return -EINVAL;
	return 0;
}
