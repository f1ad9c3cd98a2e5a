/*
 * shell.h - the long-lived bash of a session and the protocol with it.
 *
 * The shell loads the driver SHELL_DRIVER (sessions/sfsdrv/sfsdrv.c, a
 * bash loadable builtin), which reads "ID GEN FLAG SPIN KEY\n" lines on
 * its stdin (a pipe from the daemon); for each it runs the text of
 * r<ID>.cmd as a sourced file (after applying r<ID>.pre when FLAG is 'p')
 * with stdin from /dev/null and stdout/stderr into the fifos f<GEN>.o and
 * f<GEN>.e. Then it writes on fd 201 (the result pipe) a frame
 * "R<status> <KEY>\0<cwd>\0\0", so the run ends at once, and a frame
 * "E0 <KEY>\0<cwd>\0<export -p>\0" with its exported variables (the next
 * run and env/ requests wait for it), and polls for SPIN rounds of about
 * 4 us before it sleeps. KEY (SHELL_KEY_LEN hex digits) is new for each
 * run and known only to the daemon and the driver: a frame without the
 * run's key is not the driver's, and the daemon drops it. (A line without
 * a KEY gets frames without one: the unit tests speak so.) cwd is the shell's real working directory, not $PWD.
 * The report never passes through the command's output, so output cannot
 * fake it. When the shell exits, the driver leaves `export -p` in the file
 * "env" and the frame "X0\0<cwd>\0\0" in the file "state", so the next
 * shell starts where it left off.
 */
#ifndef SFS_SHELL_H
#define SFS_SHELL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/contain.h"
#include "sessions/core/envmap.h"

#define SHELL_RES_FD  201	  /* the shell's end of the result pipe */
#define SHELL_DRIVER  "sfsdrv.so" /* the driver module's file name */
#define SHELL_KEY_LEN 16	  /* hex digits of a run's key */
/* The driver module's memfd in a starting shell, and its path there (the
 * driver's DRV_MOD_FD). */
#define SHELL_DRV_FD   200
#define SHELL_DRV_PATH "/proc/self/fd/200"
/* The shell's stderr until the driver runs (see shell_spawn). */
#define SHELL_BOOT_ERR "boot.err"
/* Begins the why of an 'F' frame when the run's own options failed (not
 * the session's cwd: that one is tried again at the next run). */
#define SHELL_OPT_WHY "option "
/* Makes the shell abandon the command it sources (see boot in shell.c). */
#define SHELL_ABORT_SIG (SIGRTMIN + 3)

struct shell_frame {
	char kind; /* 'R' after a run, 'F' a run that could not start (why
		    * in env: its cwd could not be entered), 'E' with the
		    * variables, 'X' from the EXIT trap (variables in the
		    * file "env") */
	int status;
	bool keyed; /* the frame carries a key */
	uint64_t key;
	const char *pwd; /* points into the parsed buffer */
	const char *env;
	size_t env_len;
};

/* Parses one frame at buf. Returns the bytes it takes, 0 when the frame
 * is incomplete, or -EINVAL when it is malformed. */
ssize_t shell_parse_frame(const char *buf, size_t len, struct shell_frame *f);

/* Makes shells load the driver module at path instead of looking for it
 * next to the executable, then in SFS_DRIVER_DIR (tests use it). */
void shell_set_driver(const char *path);
/* Copies the driver module into the sealed memfd that every shell started
 * from now on loads, unless that is done already (the daemon does it at
 * start-up; while there is none, each start of a shell tries again).
 * Returns the memfd or -errno (logged). */
int shell_load_driver(void);
/* Finds a file installed with the daemon: next to its executable (a
 * build tree), else in SFS_DRIVER_DIR. Fills buf with its path; false
 * when it is in neither. */
bool shell_find_file(const char *file, char *buf, size_t len);

/* Whose shell it is: the session's directory, the first cwd, and the
 * owner it runs as (its files in dir are made the owner's). */
struct shell_who {
	const char *dir;
	const char *cwd;
	uid_t uid;
	gid_t gid;
};

/* Starts bash as w->uid in w->cwd with envp, contained in cg, talking
 * through *ctl (write end) and *res (read end, non-blocking); until the
 * driver runs, its stderr is w->dir/SHELL_BOOT_ERR. Returns the pid or
 * -errno (-ENOENT, logged, when the driver module is missing). */
pid_t shell_spawn(const char *bash, const struct shell_who *w, char **envp,
		  const struct contain *cg, int *ctl, int *res);

/* The argument of the driver that makes it a template (sfsdrv's
 * DRV_TEMPLATE_ARG), and how long a fork from it may take. */
#define SHELL_TEMPLATE_ARG "--template"
#define SHELL_TEMPLATE_MS  100
/* Starts a template shell (sessions/session/tmpl.c) as w->uid in w->cwd with
 * envp, in cg, talking through the socket *sock. Returns its pid or
 * -errno. */
pid_t shell_spawn_template(const char *bash, const struct shell_who *w,
			   char **envp, const struct contain *cg, int *sock);
/* Has the template on sock fork w's shell into cg, as shell_spawn would
 * start it (the template's environment and cwd, its owner). Returns the
 * pid, a child of the daemon's, or -errno (the template is then of no
 * more use). */
pid_t shell_fork_from(int sock, const struct shell_who *w,
		      const struct contain *cg, int *ctl, int *res);

/* Whether a child that cannot enter cwd starts in "/" instead: only for
 * the workspace, every session's first cwd, which its owner did not
 * choose (a workspace she may not enter, root's home say). Any other cwd
 * that cannot be entered fails the shell, process or terminal: its
 * command was meant for that directory. */
/* Makes the exec-only copy of the configured shell that the shells of
 * other owners run (mode 0111 in the runtime directory; see shell.c),
 * once, at the start, before any user can fill that directory; logged
 * when it cannot be made (then no such shell starts). others: other
 * users reach the mount (allow_other); a root daemon's then refuses a
 * runtime directory mounted noexec, where no such shell could start:
 * -ENOEXEC (logged), else 0. */
int shell_copy_program(bool others);
/* The program uid's shell execs: bash for the daemon's own user, else the
 * copy shell_copy_program made; NULL without it (logged). */
const char *shell_program(const char *bash, uid_t uid);
bool shell_cwd_fallback(const char *cwd);
/* The end of a forked child of a process or the terminal, its 0-2 set:
 * closes every other descriptor but why (execerr.h), becomes uid and
 * gid, enters cwd (no fallback to "/" but for the workspace: else the
 * reason goes to why and stderr) and execs the configured shell with
 * argv and envp. Returns only to exit. */
void shell_exec_child(int why, uid_t uid, gid_t gid, const char *cwd,
		      char **argv, char **envp);
/* Writes the prelude file: variables to set and unset, and a cwd (or
 * NULL), as NUL-separated records read by the shell with `read -d ''`. */
int shell_write_prelude(int dirfd, const char *name, const struct shell_who *w,
			const struct envmap *set, const struct envmap *unset,
			const char *cwd);

#endif
