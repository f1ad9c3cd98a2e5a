/*
 * watch.h - the watches of the workspace (watches/NAME, fs/fam_watch.c):
 * each has an owner, a spec (sessions/core/wspec.h) and a spool of
 * events, JSON lines appended to a file of the runtime directory and
 * read at any offset. The events come from the fanotify group of files/
 * (fs/files_watch.c calls watch_on_event, fs/watch_ev.c turns them into
 * paths); one is written to a watch when its spec takes the path and its
 * owner may search and read the event's directory.
 */
#ifndef SFS_WATCH_H
#define SFS_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/list.h"
#include "sessions/core/names.h"
#include "sessions/core/wspec.h"
#include "files_node.h"
#include "tree.h"

#define WATCH_SPOOL_MAX (64u << 20) /* then one overflow, and no more */
#define WATCH_MAX	256	    /* watches at once */
#define WATCH_PER_USER	16	    /* of a user other than root */

struct watch {
	struct tree_owned own; /* first: fs/tree.c resolves to it */
	uint64_t id;	       /* OBJ_WATCH */
	char name[NAME_MAX_LEN + 1];
	gid_t groups[FNODE_GROUPS];
	int ngroups;
	struct wspec spec;
	bool started; /* events was read: the spec is fixed */
	bool full;    /* past WATCH_SPOOL_MAX: the overflow is written */
	int fd;	      /* the spool (O_RDWR) */
	uint64_t size;
	char *error; /* the latest refusal of its spec, one line (or NULL) */
	struct list waiters; /* readers of events at its end */
	struct list link;
	/* the owner's latest verdict on a directory (watch_gen's) */
	char *seen_dir;
	bool seen_ok;
	unsigned seen_gen;
};

/* How many watches there are: none, and no event is looked at. */
extern unsigned watch_count;
/* Bumped when a directory's mode, owner, ACL or place may have changed:
 * the verdicts on directories are asked again. */
extern unsigned watch_gen;

/* Makes the watch name for uid/gid with those groups. 0, -EEXIST,
 * -EINVAL (a bad name), -EDQUOT (too many), -ENOMEM or another -errno of
 * its spool. */
int watch_new(const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	      int ngroups, struct watch **out);
/* Ends w: its readers get the end of the file. */
void watch_del(struct watch *w);
struct watch *watch_find(const char *name);
struct watch *watch_first(void);
struct watch *watch_next(const struct watch *w);
struct watch *watch_get(uint64_t id);
/* Replaces w's spec with the one in buf: -EBUSY once events was read,
 * -EINVAL with a line in w's error file and the log for a bad one (or a
 * path that is not a directory its owner may search and read), and the
 * events so far are dropped (they were of the spec before). */
int watch_set_spec(struct watch *w, const char *buf, size_t len);
/* An event: its kind (a WEV_ bit), its path relative to files/ and the
 * directory its entry is in (its owner must search and read it); for a
 * move the old ones too. */
struct watch_event {
	unsigned kind;
	const char *dir, *path;
	const char *fromdir, *from;
	bool isdir;
};
/* Writes e to every watch that takes it; a move is a create to a watch
 * that takes only its new path, a delete to one that takes only its old
 * one. */
void watch_emit(const struct watch_event *e);
/* {"type":"overflow"} in every watch (fanotify lost events). */
void watch_overflow_all(void);
/* The workspace root, opened to be read (for open_by_handle_at and the
 * owners' checks), or -errno. */
int watch_root_fd(void);

/* The hook of fs/files_watch.c: one fanotify event (fs/watch_ev.c). */
struct fanotify_event_metadata;
void watch_on_event(const struct fanotify_event_metadata *m, const char *ev);
/* Forgets the paths of directories (fs/watch_ev.c). */
void watch_paths_drop(void);

/* An upgrade in place: one object of key WATCH_STATE_KEY per watch (its
 * spool's descriptor with it) into the object open in w (files/'). The
 * restore makes the watch of o again with its id: 1, or -errno. */
#define WATCH_STATE_KEY 0x12
struct state_w;
struct state_r;
void watch_save(struct state_w *w);
int watch_restore(const struct state_r *o);
/* For fs/watch_state.c: the spools' directory (reopen: the one handed
 * over), a watch made joins the list, one not made is freed. */
int watch_spools(bool reopen);
void watch_link(struct watch *w);
void watch_free(struct watch *w);

#endif
