/*
 * runstate.h - what every run is, as state (sessions/core/state.h): its
 * numbers, times, spools and, while it runs, its output fifos. The kind
 * of a run (a session's run, a proc, a terminal's output, an execution
 * of a context) saves its own fields beside these in the same object.
 */
#ifndef SFS_RUNSTATE_H
#define SFS_RUNSTATE_H

#include "sessions/core/state.h"
#include "sessions/session/run.h"

/* Keys below RUNSTATE_KEY_MAX are runstate's; a kind numbers its own
 * fields of the run's object from there on. */
#define RUNSTATE_KEY_MAX 64

/* Writes r's common fields into the object that is open. */
void run_save_fields(const struct run *r, struct state_w *w);
/* A run made again from o with its old id, refs 1, in no list and of no
 * session; its live fifos are watched again. NULL on ENOMEM. */
struct run *run_restore_fields(const struct state_r *o);

#endif
