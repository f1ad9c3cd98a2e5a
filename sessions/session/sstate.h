/*
 * sstate.h - the session layer as state (sessions/core/state.h), for an
 * upgrade in place: every session with its shell, runs, procs, variables
 * and error lines, then its parts (part.h), and the layer's own globals
 * (the runtime directory, the cgroups, root env/).
 *
 * A live save hands over descriptors (the shells' pipes, fifos, spools);
 * a checkpoint (a crash's restart) has none, and each restore then makes
 * what can be made and says what was lost in the session's error file.
 */
#ifndef SFS_SSTATE_H
#define SFS_SSTATE_H

#include <stdbool.h>
#include "sessions/core/state.h"

/* Object keys of the session layer (parts use SESS_PART_KEY_MIN on). */
enum {
	SSTATE_LAYER = 1, /* the layer: globals, then its sessions */
	SSTATE_SESS,
	SSTATE_RUN,
	SSTATE_PROC,
	SSTATE_ENV,
	SSTATE_PEND_SET,
	SSTATE_PEND_UNSET,
	SSTATE_VAR,
	SSTATE_ERRS,
	SSTATE_ROOTENV,
};

/* Why the layer cannot be saved now (a session being deleted or killed,
 * a killall): 0, or -EBUSY. */
int sstate_busy(void);
/* Writes the layer as one object SSTATE_LAYER. */
void sstate_save(struct state_w *w);
/* In the next program, instead of sess_init's making (sess_init calls
 * it): takes the runtime directory and the cgroups over. Returns 0 or
 * -errno (nothing usable: the program must not serve). */
int sstate_restore_dirs(const struct state_r *layer);
/* Then, once the layer is started: makes every session again. */
int sstate_restore(const struct state_r *layer);

#endif
