/*
 * ttywait.c - whether the terminal's program waits for what is typed:
 * its foreground process group (the PTY's, asked of the master) among
 * the terminal's processes (its cgroup), looked at in /proc by
 * sessions/core/inwait.c.
 */
#include <stdlib.h>
#include <unistd.h>
#include "sessions/core/inwait.h"
#include "sessions/tty/tty.h"

bool tty_waiting_input(const struct tty *t)
{
	const struct inwait_target tg = { true, 0 };
	struct contain_pids l;
	bool yes;
	pid_t fg;

	/* bytes still queued for the PTY are input on its way */
	if (!t || t->state != TTY_RUNNING || t->master.fd < 0 || t->wq.len)
		return false;
	fg = tcgetpgrp(t->master.fd);
	if (fg <= 0)
		return false;
	contain_pids(&t->cg, 0, &l);
	yes = inwait_any(l.pid, l.n, fg, &tg);
	free(l.pid);
	return yes;
}
