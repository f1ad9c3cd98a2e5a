/*
 * drv.h - what the parts of the shell driver (sfsdrv.so) share: its state,
 * growing buffers, the report and the protocol's descriptors.
 */
#ifndef SFS_DRV_H
#define SFS_DRV_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define DRV_CTL_FD    0	  /* the control pipe between runs */
#define DRV_RES_FD    201 /* the result pipe between runs (SHELL_RES_FD) */
#define DRV_MOD_FD    200 /* this module's memfd at the start (SHELL_DRV_FD) */
#define DRV_ABORT_SIG (SIGRTMIN + 3) /* SHELL_ABORT_SIG */

struct drv {
	char dir[PATH_MAX]; /* the session's spool directory */
	pid_t pid;	    /* the shell's (a subshell has another) */
	bool running;
	bool clock_started; /* $SECONDS counts from the first run */
	int res_fd; /* where the result pipe came (DRV_RES_FD, see tmpl.c) */
};
extern struct drv drv;

struct drv_buf {
	char *p;
	size_t len, cap;
	bool err;
};

void drv_buf_add(struct drv_buf *b, const void *s, size_t n);
/* Adds s with its terminating NUL. */
void drv_buf_str(struct drv_buf *b, const char *s);
/* The file DIR/name, NUL-terminated, or NULL. */
char *drv_slurp(const char *name, size_t *len);
/* Calls fn on each record of p's len bytes, "S\0NAME\0VALUE\0",
 * "U\0NAME\0" or "C\0DIR\0" (val NULL but for S; a record cut short
 * ends the walk), until fn returns non-zero. */
void drv_records(char *p, size_t len,
		 int (*fn)(char op, char *arg, char *val, void *ctx),
		 void *ctx);

/* The template's loop (tmpl.c): forks a session's shell per request.
 * Returns 0 in such a shell, with its directory in dir; -1 in the
 * template when the daemon is done with it. */
int drv_template(char *dir, size_t cap);
/* One request of the template's protocol on sock: forks the shell it
 * asks for. Returns 1 in that shell (its directory in dir), 0 in the
 * forking shell once it has answered, -1 at EOF or on an error. */
int drv_fork_request(int sock, char *dir, size_t cap);
/* The control line "fork PATH" (fork.c): forks this shell, with its
 * state, as the shell of another session, whose descriptors come on the
 * daemon's socket PATH. Returns 1 in the new shell (its directory in
 * dir, its bash state that of a new shell's: $$, jobs, seeds), 0 in this
 * one, -1 when the fork failed (this shell goes on). */
int drv_fork(const char *path, char *dir, size_t cap);
/* The argument that makes sfs_driver a template. */
#define DRV_TEMPLATE_ARG "--template"

/* Sends a run's frames, with its key (or none: ""), on the result pipe;
 * why, when not "", says why the run could not start (then its status
 * is 126). Returns 0 or -1. */
int drv_report(int status, const char *key, const char *why);
/* atexit: the shell's variables in DIR/env, its frame in DIR/state. */
void drv_save_state(void);

/* The prelude's steps (sfsdrv.c): sets NAME to val, literally and
 * exported; enters path as cd would (PWD, OLDPWD), or says why not in
 * why (no fallback: the command was meant for that directory). */
void drv_pre_set(char *name, char *val);
void drv_pre_cd(char *path, char *why, size_t cap);
/* A run's own options (opts.c): applies those flags names ("o":
 * rID.opt, "i": stdin from rID.in) before the run, or says in why what
 * it could not; puts back after the run what the command left as given
 * (also at the shell's exit). */
void drv_opts_apply(const char *id, const char *flags, char *why, size_t cap);
/* What begins such a why (SHELL_OPT_WHY). */
#define DRV_OPT_WHY "option "
void drv_opts_restore(void);
/* Opens path (flags) onto the descriptor target: 0 or -1. */
int drv_put_fd(const char *path, int flags, int target);

/* Raises a low RLIMIT_NOFILE while the driver opens descriptors, and
 * puts it back. */
void drv_room(struct rlimit *saved);
void drv_unroom(const struct rlimit *saved);
/* Starts the holder thread and notes the pipes on fds 0 and
 * drv.res_fd. */
int drv_fds_init(void);
/* Between runs: the pipes on 0 and 201, /dev/null on 1 and 2. */
int drv_idle_fds(void);
/* A run's: /dev/null, fGEN.o, fGEN.e on 0-2, no pipe. */
int drv_run_fds(const char *gen);
/* Runs pending traps with the pipes out of their reach. */
int drv_run_traps(void);
/* The control pipe's descriptor now, and the result pipe's. */
int drv_ctl_fd(void);
int drv_res_fd(void);

#endif
