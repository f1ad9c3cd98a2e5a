/*
 * files_fd.h - the descriptors of files/'s nodes, bounded: each node
 * keeps its file's handle (name_to_handle_at), and only the nodes used
 * last keep an open O_PATH descriptor; one evicted is opened again from
 * its handle when a request needs it.
 *
 * Invariants: a node with a handle is in the handle table and, while
 * its fd is open, in the LRU list; a node without one (the daemon may
 * not open handles, or the filesystem makes none) keeps its fd until
 * it is freed, as before. The root is never evicted. Handles opened are
 * only ever those taken from the daemon's own descriptors, never one
 * from a request or an event.
 */
#ifndef SFS_FILES_FD_H
#define SFS_FILES_FD_H

#include <fcntl.h>
#include <stdbool.h>

struct fnode;

/* Sets the bound from the descriptors the daemon may hold (fdq's cut)
 * and finds out whether handles can be opened (CAP_DAC_READ_SEARCH):
 * after the root is set. */
void fnfd_init(void);
/* n (new, or restored, its fd open) gets its handle and takes a place
 * in the LRU, evicting the oldest beyond the bound. */
void fnfd_add(struct fnode *n);
/* Makes n's fd open (from its handle when evicted) and the newest.
 * Returns 0, or -errno (ESTALE: the file is gone). Call it as the
 * daemon, before taking on a caller's credentials: opening a handle
 * needs the daemon's capability. */
int fnfd_use(struct fnode *n);
/* A number for n's file while it exists, whatever node stands for it:
 * its handle's hash (a node made again for the file after the kernel
 * forgot it has the same; a new file with the inode number of a deleted
 * one has another generation), else its inode's number. */
uint64_t fnfd_key(const struct fnode *n);
/* When n is evicted, opens its file with flags straight from its handle
 * into *fd (or -1, errno set) and returns true; n stays evicted. False
 * when n has its descriptor (open through it) or no handle. As the
 * daemon only: the open checks nothing a caller's credentials would. */
bool fnfd_open_evicted(const struct fnode *n, int flags, int *fd);
/* Whether fd, just opened for the same (dev, ino) as n, is n's file
 * (the inode number of a deleted file may be used again while n is
 * evicted): true when n has no handle or an equal one. */
bool fnfd_same(const struct fnode *n, int fd);
/* n goes: its fd closed, its handle dropped, out of both tables. */
void fnfd_del(struct fnode *n);
/* The root's handle (the root has none in the table): 0, or -errno
 * when this daemon may not open handles (then nodes keep none). */
int fnfd_root_handle(const struct file_handle **fh);
/* The node whose handle is fh, or NULL (one the kernel does not know). */
struct fnode *fnode_by_handle(const struct file_handle *fh);
/* An upgrade in place: n's handle as field key of the object open in w
 * (nothing without one); fnfd_restore_fd opens the file of such a
 * field again: its fd, or -1 (absent, or the file is gone). */
struct state_w;
struct state_r;
void fnfd_save(struct state_w *w, unsigned short key, const struct fnode *n);
int fnfd_restore_fd(const struct state_r *o, unsigned short key);
/* For the metrics and tests: nodes with an open fd, the bound, and the
 * opens of evicted nodes from their handles so far. */
unsigned long fnfd_open_count(void);
unsigned long fnfd_bound(void);
unsigned long fnfd_handle_opens(void);

#endif
