/*
 * ttywait.c - whether the terminal's program waits for what is typed:
 * its foreground process group (the PTY's, asked of the master) among
 * the terminal's processes (its cgroup), looked at in /proc by
 * sessions/core/inwait.c, while the PTY holds nothing on its way.
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "sessions/core/inwait.h"
#include "sessions/tty/tty.h"

bool tty_waiting_input(const struct tty *t)
{
	const struct inwait_target tg = { true, 0 };
	struct contain_pids l;
	int unread = 0;
	bool yes;
	pid_t fg;

	/* bytes still queued for the PTY are input on its way, and bytes
	 * the master holds were printed after the wait may have begun */
	if (!t || t->state != TTY_RUNNING || t->master.fd < 0 || t->wq.len ||
	    ioctl(t->master.fd, FIONREAD, &unread) < 0 || unread > 0)
		return false;
	fg = tcgetpgrp(t->master.fd);
	if (fg <= 0)
		return false;
	contain_pids(&t->cg, 0, &l);
	yes = inwait_any(l.pid, l.n, fg, &tg);
	free(l.pid);
	return yes;
}
