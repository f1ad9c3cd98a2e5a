/*
 * watch_ev.c - fanotify's events as the watches' (fs/watch.h): the paths
 * of their directories, found from the directories' file handles, and
 * the kinds of their masks.
 *
 * A directory's path is asked of the kernel once: open_by_handle_at on
 * the workspace's descriptor, then /proc/self/fd's link, made relative
 * to the workspace's own link. A bounded cache keeps handle -> path (or
 * "outside the workspace", so that the events of the rest of the
 * filesystem cost a hash); a directory deleted or moved may change many
 * paths, and the whole cache is dropped then.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "watch.h"

#define SLOTS 4096 /* direct-mapped: a collision replaces */

struct slot {
	bool used, outside;
	int type;
	unsigned bytes;
	unsigned char h[MAX_HANDLE_SZ];
	char *rel;
};

static struct slot cache[SLOTS];
static char *root_path; /* the workspace's link, as /proc shows it */

void watch_paths_drop(void)
{
	for (size_t i = 0; i < SLOTS; i++) {
		free(cache[i].rel);
		cache[i] = (struct slot){ 0 };
	}
	free(root_path);
	root_path = NULL;
}

static uint32_t hash(const struct file_handle *fh)
{
	uint32_t h = 2166136261u ^ (uint32_t)fh->handle_type;

	for (unsigned i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 16777619u;
	return h;
}

static char *link_of(int fd)
{
	char proc[40], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* Asks the kernel where the directory of fh is: into s (outside when it
 * is not below the workspace, or gone). false on ENOMEM and the like. */
static bool ask(const struct file_handle *fh, struct slot *s)
{
	struct {
		struct file_handle h;
		unsigned char b[MAX_HANDLE_SZ];
	} copy;
	int root = watch_root_fd(), fd;
	char *at;
	size_t rl;

	if (root < 0 || (!root_path && !(root_path = link_of(root))))
		return false;
	memcpy(&copy, fh, sizeof(*fh) + fh->handle_bytes);
	fd = open_by_handle_at(root, &copy.h, O_PATH | O_CLOEXEC);
	at = fd < 0 ? NULL : link_of(fd);
	if (fd >= 0)
		close(fd);
	rl = strlen(root_path);
	s->outside = true;
	if (at && !strncmp(at, root_path, rl) &&
	    (at[rl] == '\0' || (at[rl] == '/' && rl > 1) ||
	     (rl == 1 && at[0] == '/'))) {
		s->outside = false;
		s->rel = strdup(at + rl + (at[rl] == '/'));
	}
	free(at);
	return s->outside || s->rel;
}

/* The path of a directory relative to files/ ("" for files/ itself), or
 * NULL when it is outside the workspace or unknown. */
static const char *dir_path(const struct file_handle *fh)
{
	struct slot *s = &cache[hash(fh) % SLOTS];

	if (s->used && s->type == fh->handle_type &&
	    s->bytes == fh->handle_bytes &&
	    !memcmp(s->h, fh->f_handle, fh->handle_bytes))
		return s->outside ? NULL : s->rel;
	free(s->rel);
	*s = (struct slot){ .type = fh->handle_type,
			    .bytes = fh->handle_bytes };
	memcpy(s->h, fh->f_handle, fh->handle_bytes);
	if (!ask(fh, s)) {
		free(s->rel);
		*s = (struct slot){ 0 };
		return NULL;
	}
	s->used = true;
	return s->outside ? NULL : s->rel;
}

/* A directory and a name of one event. */
struct dname {
	const struct file_handle *dir;
	const char *name;
};

/* Reads the info record at p (room bytes) into one of the three;
 * false when it is malformed. */
static bool take(const char *p, size_t room, struct dname *ent,
		 struct dname *old, struct dname *new)
{
	const struct fanotify_event_info_header *h = (const void *)p;
	const struct fanotify_event_info_fid *fid = (const void *)p;
	const struct file_handle *fh = (const void *)fid->handle;
	size_t fixed = sizeof(*fid) + sizeof(*fh);
	struct dname *d = h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ? ent :
			  h->info_type == FAN_EVENT_INFO_TYPE_OLD_DFID_NAME ?
								  old :
			  h->info_type == FAN_EVENT_INFO_TYPE_NEW_DFID_NAME ?
								  new :
								  NULL;

	if (room < sizeof(*h) || h->len < sizeof(*h) || h->len > room)
		return false;
	if (!d)
		return true; /* the object's own fid: not needed */
	if (h->len < fixed || h->len - fixed < fh->handle_bytes ||
	    fh->handle_bytes > MAX_HANDLE_SZ || h->len <= fixed + fh->handle_bytes ||
	    p[h->len - 1] != '\0')
		return false;
	d->dir = fh;
	d->name = (const char *)fh->f_handle + fh->handle_bytes;
	return true;
}

/* The path of d's entry into buf and of the directory its owner must
 * read into dir (PATH_MAX bytes each); false when it is not in the
 * workspace. An event of a directory itself names it ".": it is the
 * entry, in its parent. */
static bool path_of(const struct dname *d, char *buf, char *dir)
{
	const char *rel = d->dir ? dir_path(d->dir) : NULL;
	char *slash;

	if (!rel || snprintf(dir, PATH_MAX, "%s", rel) >= PATH_MAX)
		return false;
	if (strcmp(d->name, ".") != 0)
		return snprintf(buf, PATH_MAX, "%s%s%s", rel, *rel ? "/" : "",
				d->name) < PATH_MAX;
	if (!*rel)
		return false; /* files/ itself is no watch's entry */
	strcpy(buf, dir);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		*dir = '\0';
	return true;
}

static void emit_kinds(uint64_t mask, const char *dir, const char *path)
{
	static const struct {
		uint64_t fan;
		unsigned kind;
	} order[] = { { FAN_CREATE, WEV_CREATE },
		      { FAN_MODIFY, WEV_MODIFY },
		      { FAN_ATTRIB, WEV_ATTRIB },
		      { FAN_CLOSE_WRITE, WEV_CLOSE_WRITE },
		      { FAN_DELETE, WEV_DELETE } };
	struct watch_event e = { .dir = dir,
				 .path = path,
				 .isdir = mask & FAN_ONDIR };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (mask & order[i].fan) {
			e.kind = order[i].kind;
			watch_emit(&e);
		}
}

static void on_rename(const struct dname *old, const struct dname *new,
		      bool isdir)
{
	static char from[PATH_MAX], to[PATH_MAX], fdir[PATH_MAX], tdir[PATH_MAX];
	struct watch_event e = { WEV_MOVE, tdir, to, fdir, from, isdir };
	bool in_old = path_of(old, from, fdir);
	bool in_new = path_of(new, to, tdir);

	e.from = from;
	e.path = to;
	if (in_old && in_new) {
		watch_emit(&e);
	} else if (in_old) {
		e = (struct watch_event){ WEV_DELETE, fdir, from, NULL, NULL,
					  isdir };
		watch_emit(&e);
	} else if (in_new) {
		e.kind = WEV_CREATE;
		e.from = e.fromdir = NULL;
		watch_emit(&e);
	}
}

void watch_on_event(const struct fanotify_event_metadata *m, const char *ev)
{
	struct dname ent = { 0 }, old = { 0 }, new = { 0 };
	const char *p = ev + m->metadata_len;
	size_t left = m->event_len - m->metadata_len;
	static char path[PATH_MAX], dir[PATH_MAX];

	if (m->mask & FAN_Q_OVERFLOW) {
		watch_paths_drop();
		watch_overflow_all();
		return;
	}
	for (size_t l; left; p += l, left -= l) {
		l = ((const struct fanotify_event_info_header *)p)->len;
		if (!take(p, left, &ent, &old, &new))
			return;
	}
	if ((m->mask & FAN_RENAME) && old.dir && new.dir)
		on_rename(&old, &new, m->mask & FAN_ONDIR);
	else if (ent.dir && (m->mask & (FAN_CREATE | FAN_MODIFY | FAN_ATTRIB |
				       FAN_CLOSE_WRITE | FAN_DELETE)) &&
		 path_of(&ent, path, dir))
		emit_kinds(m->mask, dir, path);
	/* a directory gone or moved, or its mode changed: paths and
	 * verdicts are asked again */
	if ((m->mask & FAN_ONDIR) &&
	    (m->mask & (FAN_RENAME | FAN_DELETE | FAN_ATTRIB | FAN_MOVED_FROM)))
		watch_gen++;
	if ((m->mask & FAN_ONDIR) &&
	    (m->mask & (FAN_RENAME | FAN_DELETE | FAN_MOVED_FROM)))
		watch_paths_drop();
}
