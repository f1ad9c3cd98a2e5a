/*
 * files_kill.h - the setuid and setgid bits a write by another user
 * clears (fs/files_kill.c).
 */
#ifndef SFS_FILES_KILL_H
#define SFS_FILES_KILL_H

#include <fuse_lowlevel.h>
#include <sys/stat.h>

struct fnode;

/* When the setattr (attr, *set) of n is the kernel's request to clear
 * n's setuid and setgid bits for a write or truncate of req's caller
 * (another user who may write n), clears them with the daemon's credentials and takes
 * the mode out of *set. Call it with the daemon's own credentials.
 * Returns 0 or -errno. */
int fkill_setattr(fuse_req_t req, const struct fnode *n,
		  const struct stat *attr, int *set);

#endif
