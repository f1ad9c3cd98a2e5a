/*
 * inwait.h - whether a process is blocked waiting for input on one file
 * (the pipe of its stdin, or its terminal), read from /proc without
 * running anything: each task's syscall and arguments
 * (/proc/PID/task/TID/syscall), the sets of a select or poll (read from
 * the process's memory, where that memory is anonymous), the targets
 * of an epoll (its fdinfo), and what the descriptors name.
 */
#ifndef SFS_INWAIT_H
#define SFS_INWAIT_H

#include <stdbool.h>
#include <sys/types.h>

/* What the input is: the process's controlling terminal (by any path:
 * /dev/pts/N or /dev/tty), or a pipe by its inode. */
struct inwait_target {
	bool tty;
	ino_t pipe_ino;
};

/* Over n processes, those of process group pgrp only when pgrp > 0:
 * true when a task of one is blocked in a read of tg (or a select, poll
 * or epoll wait for it to be readable) and no task of them runs. */
bool inwait_any(const pid_t *pid, int n, pid_t pgrp,
		const struct inwait_target *tg);

#endif
