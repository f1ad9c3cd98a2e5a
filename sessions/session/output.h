/*
 * output.h - a run's (or process's) stdout and stderr pipes, drained
 * into spool files: stdout and stderr each, and the index of `output`.
 */
#ifndef SFS_OUTPUT_H
#define SFS_OUTPUT_H

#include "sessions/session/run.h"

/* Watches fd (made non-blocking) as r's pipe w (r->pipe_o or r->pipe_e).
 * Returns 0 or -errno. */
int output_watch(struct run *r, struct loop_watch *w, int fd);
/* Keeps n bytes as r's stdout, as a pipe's would be (tty output). */
void output_keep(struct run *r, const char *buf, size_t n);
/* Takes what the pipe still holds, then closes it. */
void output_close(struct run *r, struct loop_watch *w);
/* A run that a crash of the server left running: a checkpoint, written
 * every 100 ms at most, may count less output than its spools hold.
 * Takes the spools' real sizes and the index the crashed server wrote,
 * and records in the index what it lacks, so that stdout, stderr and
 * output keep every byte the run printed (the order of the two
 * streams' last pieces may be lost). */
void output_recover(struct run *r);

#endif
