/* ctl_every.h - a ctl table of every verb the ctl files take, and what a
 * line is against it, for fuzz_ctl.c and tests/unit/test_ctl.c (no ctl
 * file has them all). */
#ifndef SFS_CTL_EVERY_H
#define SFS_CTL_EVERY_H

#include <errno.h>
#include <stdint.h>
#include "sessions/core/ctl.h"

/* The table's rows; a bare signal is a kill. */
enum ctl_op { CTL_KILL, CTL_SIGNAL, CTL_RESET, CTL_TIMEOUT, CTL_EOF,
	      CTL_KILLALL };

static const struct ctl_verb every[] = {
	[CTL_KILL] = { "kill", CTL_ARG_SIGNAL, false, NULL },
	[CTL_SIGNAL] = { "SIGNAL", CTL_ARG_BARE, false, NULL },
	[CTL_RESET] = { "reset", CTL_ARG_NONE, false, NULL },
	[CTL_TIMEOUT] = { "timeout", CTL_ARG_MS, false, NULL },
	[CTL_EOF] = { "eof", CTL_ARG_NONE, false, NULL },
	[CTL_KILLALL] = { "killall", CTL_ARG_NONE, false, NULL },
	{ 0 },
};

/* What a line is: its row (a bare signal as CTL_KILL) and argument. */
struct ctl_cmd {
	enum ctl_op op;
	int sig;
	uint64_t ms;
};

/* Parses one line (len bytes) against every: 0, or -EINVAL. */
static inline int every_parse(const char *s, size_t len, struct ctl_cmd *c)
{
	struct ctl_args a;
	const struct ctl_verb *v = ctl_lookup(every, s, len, &a);

	if (!v)
		return -EINVAL;
	c->op = v - every == CTL_SIGNAL ? CTL_KILL : (enum ctl_op)(v - every);
	c->sig = a.sig;
	c->ms = a.ms;
	return 0;
}

#endif
