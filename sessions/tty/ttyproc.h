/*
 * ttyproc.h - the start of a terminal's shell: the PTY (its slave made
 * the owner's), the environment (the session's exported variables and
 * TERM of ours) and the child (the PTY as its controlling terminal and
 * 0, 1 and 2, nothing else of the daemon's, the owner's credentials, the
 * terminal's cgroup and the session's cwd, then bash -i). A child that
 * cannot enter the cwd says why on the screen and through its execerr.
 */
#ifndef SFS_TTYPROC_H
#define SFS_TTYPROC_H

#include <sys/types.h>
#include "sessions/core/contain.h"
#include "sessions/core/envmap.h"
#include "sessions/core/execerr.h"

struct ttyproc_spec {
	int cols, rows;
	uid_t uid;
	gid_t gid;
	const char *cwd;
	const struct envmap *env; /* the session's exported variables */
	const struct contain *cg; /* the terminal's cgroup, or NULL */
};

/* Opens a PTY of the spec's size: the master non-blocking and
 * close-on-exec, the slave the owner's. Returns 0 or -errno (nothing
 * left open). */
int ttyproc_open(const struct ttyproc_spec *sp, int *master, int *slave);
/* Starts the shell on slave; why gets what the child says when it does
 * not exec. Returns its pid or -errno. */
pid_t ttyproc_spawn(const struct ttyproc_spec *sp, int slave,
		    struct execerr *why);

#endif
