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

#include "sessions/session/statekeys.h"

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

/* Checkpoints, for a restart after a crash (a keeper's server): the
 * layer without descriptors in the runtime directory's file
 * "checkpoint", written at a quiet moment after a change, at most every
 * SSTATE_CKPT_MS. */
#define SSTATE_CKPT_MS 100
/* (what a checkpoint keeps calls state_touch when it changes) */
void sstate_checkpoints(bool on);
/* The loop's quiet time: true when it wrote one. */
bool sstate_checkpoint_quiet(void);
/* The latest checkpoint's layer (*bytes to free), or -errno. */
int sstate_read_checkpoint(struct state_r *layer, void **bytes);
/* Writes only what a restart needs to take over the runtime directory
 * (the keeper holds its descriptors), as an object SSTATE_LAYER. */
void sstate_save_dirs(struct state_w *w);

#endif
