/*
 * files_mounts.h - mounts below the workspace, for files/' cache: a
 * mount makes no event of the workspace's filesystem, yet a name cached
 * before it would still lead to the directory under it, where a lookup
 * now answers EXDEV (fs/files_node.c).
 */
#ifndef SFS_FILES_MOUNTS_H
#define SFS_FILES_MOUNTS_H

/* After the workspace's mark: watches the daemon's mount namespace
 * (fanotify's mount events, Linux 6.15), or says in the log that a
 * mount below the workspace is seen after the timeout. */
void fmounts_start(void);

#endif
