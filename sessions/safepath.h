/*
 * safepath.h - a user's directory checked without a lookup in this
 * daemon's own mount (see safepath.c).
 */
#ifndef SFS_SAFEPATH_H
#define SFS_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

/* The mount this daemon serves is the one at mountpoint (NULL: none),
 * its device read without a request to it. Returns 0 or -errno (then
 * none). */
int safepath_set_mount(const char *mountpoint);
/* 0 when the absolute path names a directory, or when its walk reached
 * the mount (*on_mount, the rest unchecked); else -errno (ENOENT,
 * ENOTDIR, ELOOP, EINVAL for a relative path...). */
int safepath_dir(const char *path, bool *on_mount);

#endif
