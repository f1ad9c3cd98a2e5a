/*
 * mountpoint.h - the checks sessionfs makes on its mount point before it
 * mounts there.
 */
#ifndef SFS_MOUNTPOINT_H
#define SFS_MOUNTPOINT_H

/* Readies path (absolute, as fuse_parse_cmdline resolved it) for the
 * mount: unmounts (lazily) a sessionfs there whose daemon has died, then
 * refuses a live sessionfs (-EBUSY), a mount that does not answer
 * (-ETIMEDOUT) and a non-directory (-ENOTDIR), with one line on stderr.
 * Returns 0 when sessionfs may mount there. */
int mountpoint_prepare(const char *path);

#endif
