/*
 * watch_state.c - the watches across an upgrade in place (see watch.h):
 * each one's owner, spec (as its text), whether events was read, its
 * error, and its spool, whose descriptor the next program inherits; the
 * fanotify group goes over with files/ (fs/files_state.c), so no event
 * is lost in the pause.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/log.h"
#include "sessions/core/objs.h"
#include "sessions/core/state.h"
#include "watch.h"

enum {
	K_ID = 1,
	K_NAME,
	K_UID,
	K_GID,
	K_GROUPS,
	K_SPEC,
	K_STARTED,
	K_FULL,
	K_SIZE,
	K_FD,
	K_ERROR,
};

static void save_one(const struct watch *x, struct state_w *w)
{
	size_t len;
	char *spec = wspec_text(&x->spec, &len);

	state_open(w, WATCH_STATE_KEY);
	state_put_u64(w, K_ID, x->id);
	state_put_str(w, K_NAME, x->name);
	state_put_u64(w, K_UID, x->own.uid);
	state_put_u64(w, K_GID, x->own.gid);
	state_put(w, K_GROUPS, x->groups, (size_t)x->ngroups * sizeof(gid_t));
	state_put_str(w, K_SPEC, spec);
	state_put_u64(w, K_STARTED, x->started);
	state_put_u64(w, K_FULL, x->full);
	state_put_u64(w, K_SIZE, x->size);
	state_put_fd(w, K_FD, x->fd);
	state_put_str(w, K_ERROR, x->error);
	state_close(w);
	free(spec);
}

void watch_save(struct state_w *w)
{
	for (struct watch *x = watch_first(); x; x = watch_next(x))
		save_one(x, w);
}

/* The fields of o into x (its spool and spec are the caller's). */
static int fields(struct watch *x, const struct state_r *o)
{
	const void *g;
	size_t glen = 0;

	if (!state_get_buf(o, K_NAME, x->name, sizeof(x->name)) ||
	    !name_valid(x->name) || watch_find(x->name))
		return -EINVAL;
	x->own.uid = (uid_t)state_get_u64(o, K_UID, (uint64_t)-1);
	x->own.gid = (gid_t)state_get_u64(o, K_GID, (uint64_t)-1);
	if (state_get(o, K_GROUPS, &g, &glen) &&
	    glen <= sizeof(x->groups) && glen % sizeof(gid_t) == 0) {
		memcpy(x->groups, g, glen);
		x->ngroups = (int)(glen / sizeof(gid_t));
	}
	x->started = state_get_u64(o, K_STARTED, 0) != 0;
	x->full = state_get_u64(o, K_FULL, 0) != 0;
	x->size = state_get_u64(o, K_SIZE, 0);
	x->error = state_get_str(o, K_ERROR);
	return x->own.uid == (uid_t)-1 ? -EINVAL : 0;
}

static int spec_of(struct watch *x, const struct state_r *o)
{
	char *text = state_get_str(o, K_SPEC), why[200];
	int rc = text ? wspec_parse(text, strlen(text), &x->spec, why,
				    sizeof(why)) :
			-EINVAL;

	free(text);
	return rc;
}

int watch_restore(const struct state_r *o)
{
	uint64_t id = state_get_u64(o, K_ID, 0);
	struct watch *x = calloc(1, sizeof(*x));
	int rc = x && id ? 0 : x ? -EINVAL : -ENOMEM;

	if (rc < 0) {
		free(x);
		return rc;
	}
	x->fd = state_get_fd(o, K_FD);
	list_init(&x->waiters);
	rc = fields(x, o);
	if (rc == 0)
		rc = spec_of(x, o);
	if (rc == 0 && x->fd < 0)
		rc = -EBADF;
	if (rc == 0 && watch_spools(true) < 0)
		rc = -EIO;
	if (rc < 0) {
		log_msg(LOG_WARNING, "watches/%s: not kept by the upgrade: %s",
			x->name, strerror(-rc));
		watch_free(x);
		return rc;
	}
	objs_reuse(id);
	x->id = objs_add(OBJ_WATCH, x);
	watch_link(x);
	return 1;
}
