/*
 * procwait.c - whether a background process (procs/NAME) waits for what
 * is written to its stdin: one of the processes of its cgroup is blocked
 * reading the pipe the daemon feeds, and none of them runs (looked at in
 * /proc by sessions/core/inwait.c).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include "sessions/core/inwait.h"
#include "sessions/session/proc.h"

bool proc_waiting_input(const struct run *p)
{
	struct inwait_target tg = { false, 0 };
	struct contain_pids l;
	struct stat st;
	bool yes;

	/* bytes queued for the pipe are input on its way */
	if (!p->proc || p->state != RUN_RUNNING || p->proc->stdin_w.fd < 0 ||
	    p->proc->stdin_q.len || fstat(p->proc->stdin_w.fd, &st) < 0)
		return false;
	tg.pipe_ino = st.st_ino;
	contain_pids(&p->proc->cg, 0, &l);
	yes = inwait_any(l.pid, l.n, 0, &tg);
	free(l.pid);
	return yes;
}
