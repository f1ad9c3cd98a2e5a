/*
 * watch.c - the watches, their spools and specs, and which event goes
 * to which (see watch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/core/objs.h"
#include "sessions/core/strbuf.h"
#include "sessions/session/rtdir.h"
#include "park.h"
#include "watch.h"

unsigned watch_count, watch_gen;

static struct list watches = LIST_INIT(watches);
static int spool_dir = -1; /* the runtime directory's watches/ */
static int root_fd = -1;

#define W_OF(l) list_entry(l, struct watch, link)

struct watch *watch_first(void)
{
	return list_empty(&watches) ? NULL : W_OF(watches.next);
}

struct watch *watch_next(const struct watch *w)
{
	return w->link.next == &watches ? NULL : W_OF(w->link.next);
}

struct watch *watch_find(const char *name)
{
	for (struct watch *w = watch_first(); w; w = watch_next(w))
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

struct watch *watch_get(uint64_t id)
{
	return id ? objs_get(id, OBJ_WATCH) : NULL;
}

int watch_root_fd(void)
{
	if (root_fd < 0 && fnode_root.fd >= 0)
		root_fd = openat(fnode_root.fd, ".",
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return root_fd >= 0 ? root_fd : fnode_root.fd >= 0 ? -errno : -ENOENT;
}

/* The spools' directory: made afresh by the first watch of this program
 * (one a crash left behind holds nothing anybody reads), the one handed
 * over by an upgrade (reopen). */
int watch_spools(bool reopen)
{
	char path[4096];

	if (spool_dir >= 0)
		return spool_dir;
	if (reopen) {
		spool_dir = rtdir_reopen("watches", path, sizeof(path));
		return spool_dir;
	}
	rtdir_remove("watches");
	spool_dir = rtdir_make("watches", path, sizeof(path));
	return spool_dir;
}

static int quota(uid_t uid)
{
	unsigned mine = 0;

	if (watch_count >= WATCH_MAX)
		return -EDQUOT;
	for (struct watch *w = watch_first(); w; w = watch_next(w))
		mine += w->own.uid == uid;
	return uid == 0 || mine < WATCH_PER_USER ? 0 : -EDQUOT;
}

static int open_spool(struct watch *w)
{
	char name[32];
	int dir = watch_spools(false);

	if (dir < 0)
		return dir;
	snprintf(name, sizeof(name), "w%llu", (unsigned long long)w->id);
	w->fd = openat(dir, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return w->fd < 0 ? -errno : 0;
}

void watch_free(struct watch *w)
{
	char name[32];

	if (w->fd >= 0) {
		close(w->fd);
		snprintf(name, sizeof(name), "w%llu",
			 (unsigned long long)w->id);
		unlinkat(spool_dir, name, 0);
	}
	if (w->id && watch_get(w->id) == w)
		objs_del(w->id);
	wspec_free(&w->spec);
	free(w->error);
	free(w->seen_dir);
	free(w);
}

int watch_new(const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	      int ngroups, struct watch **out)
{
	struct watch *w;
	int rc = !name_valid(name) ? -EINVAL :
		 watch_find(name)  ? -EEXIST :
				     quota(uid);

	if (rc < 0)
		return rc;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct watch){ .own = { uid, gid }, .fd = -1 };
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->ngroups = ngroups < 0 ? 0 :
		     ngroups > FNODE_GROUPS ? FNODE_GROUPS :
					      ngroups;
	memcpy(w->groups, groups, (size_t)w->ngroups * sizeof(gid_t));
	list_init(&w->waiters);
	w->id = objs_add(OBJ_WATCH, w);
	rc = wspec_default(&w->spec);
	if (rc == 0)
		rc = open_spool(w);
	if (rc < 0) {
		watch_free(w);
		return rc;
	}
	watch_link(w);
	*out = w;
	return 0;
}

void watch_link(struct watch *w)
{
	list_add_tail(&watches, &w->link);
	watch_count++;
}

void watch_del(struct watch *w)
{
	list_del(&w->link);
	watch_count--;
	objs_del(w->id);
	park_wake_list(&w->waiters); /* they find no watch: the end */
	watch_free(w);
	if (!watch_count)
		watch_paths_drop();
}

/* The refusal of a spec: w's error file and the log. */
static void refuse(struct watch *w, const char *why)
{
	log_msg(LOG_WARNING, "watches/%s/spec: %s", w->name, why);
	free(w->error);
	if (asprintf(&w->error, "spec: %s\n", why) < 0)
		w->error = NULL;
}

/* Whether w's owner may search and read dir (relative to files/; ""
 * is files/), as that owner: 0 or -errno. Names no symlink and never
 * leaves the workspace. */
static int owner_may(const struct watch *w, const char *dir, bool open)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH |
					   RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	int root = watch_root_fd(), as, fd, rc = 0;

	if (root < 0)
		return root;
	as = fnode_as_creds(w->own.uid, w->own.gid, w->groups, w->ngroups);
	if (as < 0)
		return as;
	if (open) {
		fd = (int)syscall(SYS_openat2, root, *dir ? dir : ".", &how,
				  sizeof(how));
		if (fd < 0 || faccessat(fd, ".", X_OK, AT_EACCESS) < 0)
			rc = -errno;
		if (fd >= 0)
			close(fd);
	} else if (faccessat(root, *dir ? dir : ".", R_OK | X_OK,
			     AT_EACCESS) < 0) {
		rc = -errno;
	}
	fnode_as_self(as);
	return rc;
}

int watch_set_spec(struct watch *w, const char *buf, size_t len)
{
	struct wspec s;
	char why[200];
	int rc;

	if (w->started)
		return -EBUSY;
	rc = wspec_parse(buf, len, &s, why, sizeof(why));
	if (rc == 0 && (rc = owner_may(w, s.path, true)) < 0) {
		snprintf(why, sizeof(why), "path %.80s: %s",
			 *s.path ? s.path : ".", strerror(-rc));
		wspec_free(&s);
		rc = -EINVAL;
	}
	if (rc < 0) {
		refuse(w, why);
		return rc;
	}
	wspec_free(&w->spec);
	w->spec = s;
	free(w->error);
	w->error = NULL;
	w->size = 0;
	w->full = false;
	return ftruncate(w->fd, 0) < 0 ? -errno : 0;
}

/* Appends line (len bytes) to w's spool; past its bound one overflow. */
static void append(struct watch *w, const char *line, size_t len)
{
	static const char over[] = "{\"type\":\"overflow\"}\n";
	ssize_t n;

	if (w->full)
		return;
	if (w->size + len + sizeof(over) > WATCH_SPOOL_MAX) {
		w->full = true;
		line = over, len = sizeof(over) - 1;
		log_msg(LOG_WARNING, "watches/%s: its events reached %u MiB: "
				     "no more are kept", w->name,
			WATCH_SPOOL_MAX >> 20);
	}
	n = pwrite(w->fd, line, len, (off_t)w->size);
	if (n != (ssize_t)len) {
		log_msg(LOG_ERR, "watches/%s: its spool: %s", w->name,
			n < 0 ? strerror(errno) : "short write");
		w->full = true; /* never a hole, never a torn line */
		return;
	}
	w->size += len;
	park_wake_list(&w->waiters);
}

/* Whether w's owner may see what happens in dir: root always, another
 * owner when it may search every directory down to dir and read it. */
static bool visible(struct watch *w, const char *dir)
{
	if (w->own.uid == 0)
		return true;
	if (w->seen_dir && w->seen_gen == watch_gen && !strcmp(w->seen_dir, dir))
		return w->seen_ok;
	free(w->seen_dir);
	w->seen_dir = strdup(dir);
	w->seen_gen = watch_gen;
	w->seen_ok = owner_may(w, dir, false) == 0;
	return w->seen_ok;
}

static char *line_of(unsigned kind, const char *path, const char *from,
		     bool isdir, size_t *len)
{
	struct strbuf b = { 0 };

	sb_addf(&b, "{\"type\":\"%s\",\"path\":", wspec_kind_name(kind));
	sb_add_json(&b, path, strlen(path));
	if (from) {
		sb_add(&b, ",\"from\":", 8);
		sb_add_json(&b, from, strlen(from));
	}
	sb_addf(&b, ",\"isDir\":%s,\"time\":%lld}\n", isdir ? "true" : "false",
		(long long)loop_wall_ms());
	return sb_take(&b, len);
}

/* What a move is to w: a move within what it takes, a delete out of it,
 * a create into it (0: nothing it wants). */
static unsigned move_kind(struct watch *w, const struct watch_event *e)
{
	bool to = wspec_takes(&w->spec, e->path) && visible(w, e->dir);
	bool from = wspec_takes(&w->spec, e->from) && visible(w, e->fromdir);
	unsigned k = to && from ? WEV_MOVE :
		     to		? WEV_CREATE :
		     from	? WEV_DELETE :
				  0;

	return k & w->spec.events;
}

void watch_emit(const struct watch_event *e)
{
	char *lines[3] = { NULL, NULL, NULL }; /* move, create, delete */
	size_t lens[3] = { 0 };

	for (struct watch *w = watch_first(); w; w = watch_next(w)) {
		unsigned k = e->kind;
		int i = 0;

		if (k == WEV_MOVE)
			k = move_kind(w, e);
		else if (!(w->spec.events & k) ||
			 !wspec_takes(&w->spec, e->path) || !visible(w, e->dir))
			k = 0;
		if (!k)
			continue;
		i = k == WEV_DELETE && e->kind == WEV_MOVE ? 2 :
		    k == WEV_CREATE && e->kind == WEV_MOVE ? 1 :
							    0;
		if (!lines[i])
			lines[i] = line_of(k, i == 2 ? e->from : e->path,
					   i == 0 ? e->from : NULL, e->isdir,
					   &lens[i]);
		if (lines[i])
			append(w, lines[i], lens[i]);
	}
	for (int i = 0; i < 3; i++)
		free(lines[i]);
}

void watch_overflow_all(void)
{
	static const char over[] = "{\"type\":\"overflow\"}\n";

	for (struct watch *w = watch_first(); w; w = watch_next(w))
		append(w, over, sizeof(over) - 1);
}
