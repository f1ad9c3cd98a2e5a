/*
 * files_settle.h - a run's end is told once files/ shows what the run
 * changed in the workspace (see files_settle.c).
 */
#ifndef SFS_FILES_SETTLE_H
#define SFS_FILES_SETTLE_H

#include "sessions/session/run.h"

/* run_changed_hook: wakes what is parked on r (park_wake), at once while
 * r runs, and once its changes are invalidated when it has ended. */
void fsettle_run_changed(struct run *r);
/* Wakes what still waits (at the end of the loop). */
void fsettle_fini(void);

#endif
