/*
 * rtdir.h - this instance's runtime directory (<runtime_dir>/sessionfs/
 * PID, mode 0700): one spool directory per session in it.
 */
#ifndef SFS_RTDIR_H
#define SFS_RTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Makes the directory, removing those of instances that died. Returns 0
 * or -errno. */
int rtdir_init(void);
/* Removes it and everything in it. */
void rtdir_fini(void);
/* Whether its filesystem is mounted noexec: no program copied into it
 * (rtdir_copy) can be run. */
bool rtdir_noexec(void);
/* Makes the subdirectory name; its path goes to path. Returns an open
 * descriptor of it or -errno. */
int rtdir_make(const char *name, char *path, size_t len);
/* The path of a copy of the file src, named name, with mode (0444 for
 * a driver anyone may run, 0111 for a program no user may read), in a
 * subdirectory of the runtime directory; made at the first call for
 * name, so it is the file of this start whatever later replaces src.
 * Returns 0 or -errno. */
int rtdir_copy(const char *src, const char *name, mode_t mode, char *path,
	       size_t len);
/* Removes the subdirectory name and its files. */
void rtdir_remove(const char *name);

/* An upgrade in place: the directory (its descriptor holds its lock) and
 * its path, handed to the next program instead of rtdir_init. */
struct state_w;
struct state_r;
void rtdir_save(struct state_w *w);
int rtdir_restore(const struct state_r *o);
/* A file of the daemon's own in the directory (0600), replaced whole:
 * 0 or -errno. */
int rtdir_put(const char *name, const void *p, size_t len);
/* Its bytes (malloc'd; *len), or NULL. */
void *rtdir_get(const char *name, size_t *len);
/* The directory name made earlier (a restart after a crash), or made
 * now: as rtdir_make. */
int rtdir_reopen(const char *name, char *path, size_t len);

#endif
