/*
 * execerr.h - a child's word on why it did not start its program: a
 * close-on-exec pipe whose write end only the child has, until its exec
 * closes it. A child that cannot enter its cwd (or exec) writes one line
 * there before it exits; the daemon reads it without waiting (the pipe
 * says EOF at the exec, or holds the line when the child has exited), so
 * that such a process or terminal ends as an error with that line in
 * the session's error file rather than as its program's own failure.
 * The daemon never waits for the child: the read end is watched by the
 * loop and read again at the child's reaping.
 */
#ifndef SFS_EXECERR_H
#define SFS_EXECERR_H

#include <stdbool.h>
#include "sessions/core/loop.h"

struct execerr {
	struct loop_watch w; /* w.fd: the read end, -1 once closed */
	bool watched;	     /* w is in the loop */
	char why[256];	     /* the child's line, "" when it said nothing */
};

/* Makes the pipe; *child_fd is the end the child writes (close-on-exec).
 * Returns 0 or -errno (e->w.fd is -1 then). */
int execerr_open(struct execerr *e, int *child_fd);
/* In the parent after the fork: closes child_fd and watches the read
 * end until EOF. */
void execerr_watch(struct execerr *e, int child_fd);
/* In the child (system calls only): writes "what path: strerror(err)"
 * to fd. */
void execerr_say(int fd, const char *what, const char *path, int err);
/* At the child's reaping: reads what is left, closes; true when the
 * child said why it did not start (the line is in e->why). */
bool execerr_reaped(struct execerr *e);
/* Closes the read end (a child that was never started, a teardown). */
void execerr_close(struct execerr *e);

#endif
