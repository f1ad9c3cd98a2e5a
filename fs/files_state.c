/*
 * files_state.c - the start of files/ and its hand-over to the next
 * program of an upgrade in place: the workspace root, the nodes the
 * kernel knows (fs/files_node.c) and the open files and directories
 * (fs/files_fh.c), with the generation that their inode numbers and
 * handles carry.
 *
 * Everything is kept by its descriptor, so the next program serves the
 * very same files, whatever was renamed or removed meanwhile. Without
 * the root's descriptor (a state written after a crash) nothing the
 * kernel holds can be trusted: the configured workspace is opened
 * again, and a new generation makes the kernel's old inodes and handles
 * of files/ stale (ESTALE) rather than names of other files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/core/state.h"
#include "files.h"
#include "files_inval.h"
#include "files_fh.h"
#include "files_node.h"
#include "files_watch.h"
#include "watch.h"
#include "upgrade.h"

/* Field keys of files/' object; never reused. */
enum { KF_GEN = 1, KF_WORKSPACE, KF_ROOT_FD, KF_CACHED, KF_WATCH_FD };

static char *ws_path; /* the workspace as files_init was given it */

/* A generation unlike any other start's (fnode_gen). */
static void new_gen(void)
{
	uint32_t g = 0;

	if (getrandom(&g, sizeof(g), GRND_NONBLOCK) != sizeof(g))
		g = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
	fnode_gen = g ? g : 1;
}

/* Makes fd (a workspace, O_PATH) the root: not on a sessionfs, where
 * the daemon would wait on itself. Returns 0, or -errno with fd closed. */
static int root_take(int fd)
{
	uint64_t mnt = 0;
	struct stat st;
	int rc = fnode_mount_of(fd, &mnt);

	if (rc == 0 && fnode_is_sessionfs(mnt))
		rc = -ELOOP;
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = -errno;
	if (rc == 0 && !S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	if (rc == 0)
		rc = fnode_root_set(fd, &st);
	if (rc < 0)
		close(fd);
	return rc;
}

int files_init(const char *workspace)
{
	int fd = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);

	fnode_save_creds();
	if (!fnode_gen)
		new_gen();
	if (fd < 0)
		return -errno;
	if (fnode_root.fd >= 0) {
		close(fd);
		return -EALREADY;
	}
	if (!ws_path || strcmp(ws_path, workspace)) {
		free(ws_path);
		ws_path = strdup(workspace);
	}
	return root_take(fd);
}

int files_save(struct state_w *w)
{
	int rc = finval_pause(); /* the execve follows */

	if (rc < 0)
		return rc;
	state_open(w, UPK_FILES);
	state_put_u64(w, KF_GEN, fnode_gen);
	state_put_str(w, KF_WORKSPACE, ws_path);
	state_put_fd(w, KF_ROOT_FD, fnode_root.fd);
	state_put_u64(w, KF_CACHED, fwatch_on);
	state_put_fd(w, KF_WATCH_FD, fwatch_fd());
	fnode_save(w);
	fslot_save(w);
	watch_save(w);
	state_close(w);
	return 0;
}

/* Makes the nodes and open files of o again; counts into n[0] those
 * kept, n[1] those lost (ESTALE), n[2] those refused. */
static void restore_all(const struct state_r *o, unsigned n[3])
{
	struct state_r body;
	size_t pos = 0;
	uint16_t key;
	int rc;

	while (state_next(o, &pos, &key, &body) == 1) {
		if (key == FNODE_STATE_KEY)
			rc = fnode_restore(&body);
		else if (key == FSLOT_STATE_KEY)
			rc = fslot_restore(&body);
		else if (key == WATCH_STATE_KEY)
			rc = watch_restore(&body);
		else
			continue;
		n[rc > 0 ? 0 : rc == 0 ? 1 : 2]++;
	}
}

/* How many nodes and open files o holds. */
static unsigned count_all(const struct state_r *o)
{
	struct state_r body;
	size_t pos = 0;
	uint16_t key;
	unsigned n = 0;

	while (state_next(o, &pos, &key, &body) == 1)
		n += key == FNODE_STATE_KEY || key == FSLOT_STATE_KEY;
	return n;
}

/* The state came without the root's descriptor: the workspace of this
 * start's configuration (that of the state when there is none), and a
 * generation that makes whatever the kernel holds of files/ stale. */
static int restore_none(const struct state_r *o, const char *ws)
{
	const char *path = conf.workspace ? conf.workspace : ws;
	int rc = fnode_root.fd >= 0 ? 0 : path ? files_init(path) : -ENOENT;

	new_gen();
	log_msg(LOG_WARNING,
		"files/: the workspace's descriptor was not handed over: %u "
		"inodes and open files of files/ are stale (ESTALE)",
		count_all(o));
	return rc;
}

int files_restore(const struct state_r *o)
{
	int fd = state_get_fd(o, KF_ROOT_FD);
	uint64_t gen = state_get_u64(o, KF_GEN, 0);
	char *ws = state_get_str(o, KF_WORKSPACE);
	unsigned n[3] = { 0 };
	int rc;

	fnode_save_creds();
	fwatch_adopt(state_get_u64(o, KF_CACHED, 0),
		     state_get_fd(o, KF_WATCH_FD));
	if (fd >= 0 && gen > 0 && gen <= UINT32_MAX) {
		rc = root_take(fd);
		if (rc < 0)
			log_msg(LOG_WARNING,
				"files/: the workspace handed over: %s",
				strerror(-rc));
		fnode_gen = (uint32_t)gen;
		restore_all(o, n);
		log_msg(n[1] || n[2] ? LOG_WARNING : LOG_INFO,
			"files/: %u inodes and open files kept, %u lost "
			"(ESTALE), %u refused",
			n[0], n[1], n[2]);
		if (ws) { /* the root's name is the one handed over */
			free(ws_path);
			ws_path = ws;
			ws = NULL;
		}
	} else {
		if (fd >= 0)
			close(fd);
		rc = restore_none(o, ws);
	}
	free(ws);
	return rc;
}
