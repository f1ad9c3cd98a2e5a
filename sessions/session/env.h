/*
 * env.h - a session's exported variables and cwd as the session layer
 * keeps them (the API is in sess.h): what a new session starts with,
 * what its shell reports, what is still to be sent to it.
 */
#ifndef SFS_ENV_H
#define SFS_ENV_H

#include <stdint.h>

struct sess;
struct shell_frame;
struct envmap;

/* What every new session starts with: the daemon's environment, conf.env
 * and the root env/. */
void env_init(void);
/* Gives a new session its variables. Returns 0 or -ENOMEM. */
int env_new(struct sess *s);
void env_free(struct sess *s);
/* Changes so far of the variables every new session starts with (root
 * env/): a session made ahead with another count is out of date. */
unsigned long env_base_gen(void);
/* Takes the cwd from a shell's report. */
void env_apply_pwd(struct sess *s, const struct shell_frame *f);
/* Takes the variables from a report ('E', or 'X' with the file "env"),
 * and lets the requests that waited for them go. */
void env_apply(struct sess *s, const struct shell_frame *f);
/* The variables of the last run will not come: the known ones stand. */
void env_settled(struct sess *s);
/* The shell has been given the pending changes. */
void env_sent(struct sess *s);
/* Drops, with a line in error, the variables a new shell could not be
 * started with (execve takes no "NAME=value" over MAX_ARG_STRLEN): a
 * command may have exported one, and the shell would fail to start for
 * good. */
void env_fit_exec(struct sess *s);

/* An upgrade in place: a map as the object key (sstate.h), and root
 * env/, with the variables' ids. */
struct state_w;
struct state_r;
void env_save_map(struct state_w *w, uint16_t key, const struct envmap *m);
void env_restore_map(const struct state_r *o, uint16_t key, struct envmap *m);
void env_save_root(struct state_w *w);
void env_restore_root(const struct state_r *o);

#endif
