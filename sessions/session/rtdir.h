/*
 * rtdir.h - this instance's runtime directory (<runtime_dir>/sessionfs/
 * PID, mode 0700): one spool directory per session in it.
 */
#ifndef SFS_RTDIR_H
#define SFS_RTDIR_H

#include <stddef.h>

/* Makes the directory, removing those of instances that died. Returns 0
 * or -errno. */
int rtdir_init(void);
/* Removes it and everything in it. */
void rtdir_fini(void);
/* Makes the subdirectory name; its path goes to path. Returns an open
 * descriptor of it or -errno. */
int rtdir_make(const char *name, char *path, size_t len);
/* Removes the subdirectory name and its files. */
void rtdir_remove(const char *name);

#endif
