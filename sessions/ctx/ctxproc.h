/*
 * ctxproc.h - starting a code context's interpreter: its driver found
 * next to the daemon, two fifos for the protocol (opened by the driver by
 * path, so they are close-on-exec there and no child of the user's code
 * inherits them), two pipes for its stdout and stderr, and the child's
 * side (the owner's credentials, the context's cgroup, cwd and
 * variables).
 */
#ifndef SFS_CTXPROC_H
#define SFS_CTXPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "sessions/core/contain.h"

struct ctxproc_spec {
	const char *interp; /* python3 or node, looked up in envp's PATH */
	const char *flag;   /* an option before the driver, or NULL */
	const char *driver; /* the driver's file name (ctxproc_driver) */
	const char *arg;    /* an argument after the fifos' paths, or NULL */
	int dirfd;	    /* the session's directory, for the fifos */
	const char *dir;
	const char *tag; /* names the fifos: TAG.q and TAG.a */
	uid_t uid;
	gid_t gid;
	const char *cwd;
	char **envp;
	const struct contain *cg;
};

/* The driver's exit status when its protocol descriptors were closed or
 * replaced by the user's code (sessions/ctx/ctxdrv). */
#define CTX_EXIT_LOST 86

struct ctxproc {
	pid_t pid;
	int req_fd, ans_fd, out_fd, err_fd;
	unsigned fd_charge; /* counted as the owner's (fdq.h) until the
			     * context gives them back (fdq_uncharge) */
	char why[160];	    /* why the start was refused, or "" */
};

/* What a running interpreter keeps of the daemon's: the two fifos, the
 * two pipes and their copies watched between executions, an execution's
 * copies of the pipes and its three spools. */
#define CTXPROC_FDS 11

/* The path of the driver file (sfsctx.py, sfsctx.js) for an interpreter
 * to run: a copy, mode 0444, in the runtime directory beside one of the
 * file it loads (sfschart.py, sfsts.js), made at the first
 * call from the file next to the daemon or installed (shell_find_file),
 * so that an owner who may not reach that path (a build tree in a 0700
 * home) runs it too; the file itself when it cannot be copied (logged).
 * False when there is no such file. */
bool ctxproc_driver(const char *file, char *buf, size_t len);
/* Starts the interpreter, its descriptors charged to sp->uid: returns 0
 * or -errno (nothing left open; EMFILE or ENFILE with p->why when her
 * bound or the cut refused it). */
int ctxproc_spawn(const struct ctxproc_spec *sp, struct ctxproc *p);
/* Unlinks the fifos of tag (once the driver has opened them). */
void ctxproc_unlink(int dirfd, const char *tag);

#endif
