/*
 * dirtree.h - removing directory trees, and the leftovers of instances
 * of the daemon that died without cleaning up.
 */
#ifndef SFS_DIRTREE_H
#define SFS_DIRTREE_H

#include <stdbool.h>

/* How a tree is removed. */
struct dirtree_how {
	/* Called with each directory before what is in it (or NULL). */
	void (*enter)(int dfd);
	/* Whether files are unlinked too; cgroupfs files go with their
	 * directory, and only its subdirectories are removed. */
	bool files;
	unsigned depth;	     /* levels below the top that are descended */
	unsigned busy_tries; /* rmdir tries, 10 ms apart, while EBUSY */
};

/* Removes parent/name and what is in it. */
void dirtree_remove(int parent, const char *name,
		    const struct dirtree_how *how);
/* Opens dirfd/name for reading only if it is a plain file of its own
 * (not a link, a fifo or a device, one name): the spool directory is
 * writable by the commands, which could leave anything there. Returns
 * the descriptor or -errno (-EPERM for anything else). */
int dirtree_open_plain(int dirfd, const char *name);
/* The file of a live instance's directory that it holds locked. */
#define DIRTREE_LIVE "live"

/* Locks dfd's DIRTREE_LIVE while the descriptor returned stays open
 * (the process's life, and an upgrade hands it over). Returns it,
 * -EBUSY when another live process holds it, or -errno. */
int dirtree_hold_live(int dfd);
/* Calls fn(parent, entry) for each entry of parent named prefix<PID>
 * whose instance is gone: the lock of its DIRTREE_LIVE is free, or
 * without that file, no process PID runs. */
void dirtree_sweep_stale(int parent, const char *prefix,
			 void (*fn)(int parent, const char *name));

#endif
