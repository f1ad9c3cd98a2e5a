/*
 * shell.h - the long-lived bash of a session and the protocol with it.
 *
 * The shell reads "ID GEN FLAG SPIN\n" lines on its stdin (a pipe from
 * the daemon); for each it sources r<ID>.cmd (after applying r<ID>.pre
 * when FLAG is 'p') with stdin from /dev/null and stdout/stderr into the
 * fifos f<GEN>.o and f<GEN>.e. Then it writes on fd 201 (the result pipe)
 * a frame "R<status>\0<PWD>\0\0", so the run ends at once, and a frame
 * "E0\0<PWD>\0<export -p>\0" with its exported variables: `export -p`
 * is the largest part of a run's cost in the shell, so the run does not
 * wait for it (only the next run and env/ requests do). Then it polls its
 * stdin SPIN times (`read -t 0`) before it blocks for the next line. The
 * report never passes through the command's output, so output cannot
 * fake it. When the shell exits, its EXIT trap leaves `export -p` in the
 * file "env" and the frame "X0\0<PWD>\0\0" in the file "state", so the
 * next shell starts where it left off.
 */
#ifndef SFS_SHELL_H
#define SFS_SHELL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include "contain.h"
#include "envmap.h"

#define SHELL_RES_FD 201 /* the shell's end of the result pipe */
/* Makes the shell abandon the command it sources (see boot in shell.c). */
#define SHELL_ABORT_SIG (SIGRTMIN + 3)

struct shell_frame {
	char kind; /* 'R' after a run, 'E' with the variables, 'X' from the
		    * EXIT trap (variables in the file "env") */
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
