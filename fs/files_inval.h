/*
 * files_inval.h - the notifier of files/: a thread that tells the kernel
 * which of its cached entries, attributes and pages of files/ are stale
 * (fuse_lowlevel_notify_inval_inode, _inval_entry). The loop, which
 * alone answers requests, only queues: the kernel may hold a lock while
 * it waits for the loop's reply, and a notification that needs that lock
 * would wait for the loop forever if the loop sent it.
 */
#ifndef SFS_FILES_INVAL_H
#define SFS_FILES_INVAL_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Starts the thread once, for se's connection. 0 or -errno. */
int finval_start(struct fuse_session *se);
/* Queues ino's attributes (off < 0) or its attributes and pages from
 * off (0: all, a directory's listing too). */
void finval_inode(fuse_ino_t ino, off_t off);
/* Sends ino's attributes' invalidation now, from the caller's thread:
 * it needs no lock a request may hold (only pages and entries do), so
 * the loop may send it while a client waits for its reply. */
void finval_attrs_now(fuse_ino_t ino);
/* Queues the entry (positive or negative) of name in parent. */
void finval_entry(fuse_ino_t parent, const char *name, size_t len);
/* Queues every entry of the mount (the kernel's epoch, Linux 6.16 and
 * later): what is named anywhere is looked up again. The caller queues
 * the inodes. */
void finval_all_entries(void);
/* Before an upgrade's execve: waits (a bounded time) until every
 * notification queued is written, and sends none for FINVAL_PAUSE_MS (an
 * execve that failed: the thread goes on after it). An execve waits for
 * every thread to end, and a thread inside a notification that waits for
 * a lock would wait for the loop, which is in the execve. Returns 0, or
 * -EBUSY (and no pause) when the thread is still inside a notification
 * at the end of that wait. */
#define FINVAL_PAUSE_MS 10000
int finval_pause(void);
/* Whether every notification queued is written (none waits, and the
 * thread is inside none). */
bool finval_idle(void);
/* Counts since the start (metrics, tests): notifications sent. */
unsigned long finval_sent(void);

#endif
