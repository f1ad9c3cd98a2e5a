/*
 * files_watch.h - the caching of files/ and what keeps it true: a
 * fanotify mark on the workspace's filesystem, read by the loop, whose
 * events become invalidations of exactly what changed (fs/files_inval.h
 * sends them). Without the mark (files_cache = false, no fanotify, not
 * root, a filesystem without file handles) files/ caches nothing.
 */
#ifndef SFS_FILES_WATCH_H
#define SFS_FILES_WATCH_H

#include <fuse_lowlevel.h>
#include <stdbool.h>

struct fnode;

/* The entry and attribute timeout while the mark holds: what the events
 * miss (a store through a shared mapping until its close, a change on
 * another machine of a network filesystem) is seen after it. */
#define FWATCH_TTL 60.0

/* Whether files/ caches (timeouts, keep_cache, listings, negative
 * entries), and its timeout (0 when it does not). */
extern bool fwatch_on;
extern double fwatch_ttl;
/* Requests of files/ served, for the metrics (a cache shows as fewer). */
extern unsigned long fwatch_lookups, fwatch_getattrs, fwatch_readdirs,
	fwatch_opendirs;

/* An upgrade in place: the fanotify group (-1: none) goes to the next
 * program, which reads on the events queued meanwhile, so that none is
 * lost. fwatch_adopt takes it (and whether the program before cached),
 * before fwatch_start. */
int fwatch_fd(void);
void fwatch_adopt(bool cached, int fd);
/* After files_init or files_restore, before the loop runs: the mark,
 * when conf.files_cache asks for it (one line of the log says which).
 * When the kernel's cache may predate this program and the events in
 * between are lost (crashed; an upgrade from a program that cached but
 * handed over no group, or into one that does not cache), everything of
 * files/ the kernel holds is invalidated once. */
void fwatch_start(struct fuse_session *se, bool crashed);
/* Every node the kernel knows, and every entry (an overflow, a restore). */
void fwatch_flush(void);
/* Reads the events fanotify has queued now (they are queued inside the
 * system calls that make the changes) and queues their notifications. */
void fwatch_drain(void);
/* Before req's open of n's file or directory: what fanotify has queued
 * is read first, so that what changed before the open began is what it
 * opens (an event is queued inside the system call that makes the
 * change). Returns 1 when the kernel may keep n's pages (a directory's:
 * its listing), 0 when it is to drop them (n's attributes were
 * invalidated already),
 * or -ESTALE, once per opener, when a name of n's file went behind the
 * kernel's back: open(2) then looks the path up afresh and opens again
 * (an open the kernel makes itself, overlayfs' of a lower file, does
 * not: it fails). Never ESTALE for a directory. */
int fwatch_opening(struct fnode *n, fuse_req_t req);
/* A lookup that found nothing: a negative entry that the kernel keeps
 * for the timeout (an event of the name's creation drops it). */
void fwatch_reply_negative(fuse_req_t req);

#endif
