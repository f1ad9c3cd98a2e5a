/*
 * shell.h - the long-lived bash of a session and the protocol with it.
 *
 * The daemon sends "ID FLAG\n" on the shell's fd 200; the shell sources
 * r<ID>.cmd (after applying r<ID>.pre when FLAG is 'p') with stdin from
 * /dev/null and stdout/stderr into the fifos r<ID>.o and r<ID>.e, then
 * reports on fd 201 a frame "R<status>\0<PWD>\0\0" (so the run ends at
 * once), writes `export -p` to the file "env" and sends "E0\0\0\0" (the
 * variables are ready). `export -p` is a third of a run's cost in the
 * shell, so it is kept off the run's critical path. The report never
 * passes through the command's output, so output cannot fake it. When
 * the shell exits, its EXIT trap leaves "env" and the frame kind 'X' in
 * the file "state" so the next shell starts where it left off. The
 * frame's third field is kept for variables sent inline; the shell leaves
 * it empty.
 */
#ifndef SFS_SHELL_H
#define SFS_SHELL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include "contain.h"
#include "envmap.h"

#define SHELL_CTL_FD 200
#define SHELL_RES_FD 201
/* Makes the shell abandon the command it sources (see boot in shell.c). */
#define SHELL_ABORT_SIG (SIGRTMIN + 3)

struct shell_frame {
	char kind; /* 'R' after a run, 'E' when "env" is written, 'X' from
		    * the EXIT trap */
	int status;
	const char *pwd; /* points into the parsed buffer */
	const char *env;
	size_t env_len;
};

/* Parses one frame at buf. Returns the bytes it takes, 0 when the frame
 * is incomplete, or -EINVAL when it is malformed. */
ssize_t shell_parse_frame(const char *buf, size_t len, struct shell_frame *f);

/* Starts bash in cwd with envp, contained in cg, talking through *ctl
 * (write end) and *res (read end, non-blocking). Returns the pid or
 * -errno. */
pid_t shell_spawn(const char *bash, const char *dir, const char *cwd,
		  char **envp, const struct contain *cg, int *ctl, int *res);

/* Writes the prelude file: variables to set and unset, and a cwd (or
 * NULL), as NUL-separated records read by the shell with `read -d ''`. */
int shell_write_prelude(int dirfd, const char *name, const struct envmap *set,
			const struct envmap *unset, const char *cwd);

#endif
