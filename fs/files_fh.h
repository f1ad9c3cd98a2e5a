/*
 * files_fh.h - the open files and directories of files/ (fs/files.c):
 * what the kernel's file handle (fi->fh) names. A handle is a slot's
 * index and the generation of the program that gave it (fnode_gen), so
 * that a handle survives an upgrade in place (same slot, same
 * generation) and a handle of a crashed program never finds a file of
 * the next one.
 */
#ifndef SFS_FILES_FH_H
#define SFS_FILES_FH_H

#include <dirent.h>
#include <stdint.h>
#include <sys/types.h>

struct state_w;
struct state_r;

struct fslot {
	int fd;		   /* -1: lost in an upgrade (ESTALE until released) */
	uid_t uid;	   /* whose descriptor it is (sessions/session/fdq.h) */
	DIR *dp;	   /* a directory's stream on fd, else NULL */
	struct dirent *de; /* read from dp but not yet sent */
	off_t off;	   /* offset of dp's next entry to send */
};

/* A slot for fd (counted as uid's, taken over) with its stream dp (NULL
 * for a file). Returns the handle, or 0 on ENOMEM (fd and dp untouched). */
uint64_t fslot_add(int fd, uid_t uid, DIR *dp);
/* The live slot of handle fh, or NULL (unknown, released or lost). */
struct fslot *fslot_of(uint64_t fh);
/* The release of fh: its descriptor (if any) is closed and no longer
 * counts; an unknown fh changes nothing. */
void fslot_close(uint64_t fh);
/* Opens directory fd (O_RDONLY, counted as uid's) as a stream in a new
 * slot, whose handle goes to *fh. Returns 0, or -errno (fd then closed). */
int fslot_opendir(int fd, uid_t uid, uint64_t *fh);

/* An upgrade: one object of key FSLOT_STATE_KEY per slot, into the
 * object open in w. */
#define FSLOT_STATE_KEY 0x11
void fslot_save(struct state_w *w);
/* Makes the slot saved in o again at its index, its descriptor counted
 * as its user's again; a slot whose descriptor is missing is kept as
 * lost (ESTALE until the kernel releases it). Returns 1 (live), 0
 * (lost) or -errno (refused: out of range, taken, ENOMEM). */
int fslot_restore(const struct state_r *o);

#endif
