/*
 * keeper.h - the keeper: a small process that holds the mount's
 * /dev/fuse descriptor (and a few others the server hands it), so that
 * a crash of the process that serves the mount (kill -9, a segfault, an
 * OOM kill) is not an outage: the kernel keeps the connection and its
 * queued requests, and the keeper starts the program again, which takes
 * the connection over (--recover) and the sessions from their last
 * checkpoint.
 *
 * The keeper is the process sessionfs starts as (the daemon's pid, which
 * systemd and a container's runtime watch); the server is its child. It
 * parses no user input: it reads only its child's messages on a private
 * socket pair. SIGTERM and SIGINT are passed to the server (whose
 * shutdown ends every session and unmounts, as ever) and the keeper
 * exits with the server's status. A server that exits (any status) is
 * not restarted; one killed by a signal is, at most KEEPER_TRIES times
 * in KEEPER_WINDOW_S; past that the keeper answers every request with
 * EIO until the mount is gone (or SIGTERM or SIGINT: it unmounts), rather
 * than let callers hang.
 */
#ifndef SFS_KEEPER_H
#define SFS_KEEPER_H

#include <stddef.h>

#define KEEPER_TRIES	5
#define KEEPER_WINDOW_S 30
#define KEEPER_FDS_MAX	8

/* Forks: returns in the child, the server, with 0 (or -errno when no
 * keeper could be made: then this process serves alone); the parent
 * becomes the keeper and exits with the server's status. exe and argv
 * start the next server (argv with --recover added) in cwd. */
int keeper_start(int fuse_fd, const char *exe, const char *cwd, char **argv);
/* The server, recovering: the keeper's socket handed over. */
void keeper_adopt(int sock);
/* The server: what the next server gets at these same numbers if this
 * one crashes (fds[0] is the note, a state of the connection). Returns 0
 * or -errno; without a keeper, nothing. */
int keeper_hold(const int *fds, size_t n);
/* The server's end of the socket (-1: no keeper), for an upgrade. */
int keeper_fd(void);
/* Whether this server was started by a keeper after a crash. */
unsigned long keeper_recoveries(void);
void keeper_set_recoveries(unsigned long n);

#endif
