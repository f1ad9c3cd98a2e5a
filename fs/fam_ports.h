/*
 * fam_ports.h - the `ports` file of a session and of procs/NAME: the
 * sockets their processes listen on, and a read that waits for a port.
 */
#ifndef SFS_FAM_PORTS_H
#define SFS_FAM_PORTS_H

#include "tree.h"

/* The types of the ports files (their numbers never move: fs/tree.h). */
#define FT_BLOCK_PORTS 102 /* 100: a run's expect (fs/fam_run.h) */
enum {
	FT_PORTS = FT_BLOCK_PORTS, /* a session's ports */
	FT_PROCPORTS,		   /* procs/NAME/ports */
};

/* How often a read that waits for a port looks again, while one waits. */
#define PORTS_TICK_MS 10

extern const struct fops fam_ports_ops;

/* An upgrade in place: the waits written and not yet taken by an open
 * (an object of key), and made again. */
struct state_w;
struct state_r;
void fam_ports_save(struct state_w *w, uint16_t key);
void fam_ports_restore(const struct state_r *root, uint16_t key);

#endif
