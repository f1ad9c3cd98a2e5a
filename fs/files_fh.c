/*
 * files_fh.c - the table of files/' open files and directories, whose
 * handles the kernel keeps (fi->fh), and its save and restore for an
 * upgrade in place.
 *
 * A handle is (generation << 32 | index + 1): the kernel sends it back
 * with every request on the open file, so a slot keeps its index for
 * as long as the file is open, here and in the next program, and a
 * freed index is used again only by this program's generation. A slot
 * whose descriptor did not survive an upgrade stays, lost, until the
 * kernel releases it: its index is not given to another open meanwhile,
 * so the stale handle never reaches someone else's file.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "sessions/core/state.h"
#include "sessions/session/fdq.h"
#include "files_fh.h"
#include "files_node.h"

#define SLOTS_MAX (1u << 24) /* more than the descriptors of a process */

/* Field keys of a slot's object; never reused. */
enum { KS_INDEX = 1, KS_FD, KS_UID, KS_DIR, KS_OFF };

static struct fslot **slots;
static size_t nslots, cap;
static size_t nfree; /* NULL entries below nslots */

static uint64_t handle(size_t i)
{
	return (uint64_t)fnode_gen << 32 | (uint64_t)(i + 1);
}

/* The index that handle fh names, or SIZE_MAX. */
static size_t index_of(uint64_t fh)
{
	uint32_t low = (uint32_t)fh;

	if (fh >> 32 != fnode_gen || low == 0 || low > nslots)
		return SIZE_MAX;
	return (size_t)low - 1;
}

/* Room for index i. Returns 0 or -ENOMEM. */
static int room(size_t i)
{
	size_t ncap = cap ? cap : 16;
	struct fslot **n;

	if (i >= SLOTS_MAX)
		return -ENOMEM;
	while (ncap <= i)
		ncap *= 2;
	if (ncap != cap) {
		n = realloc(slots, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		slots = n;
		cap = ncap;
	}
	while (nslots <= i) {
		slots[nslots++] = NULL;
		nfree++;
	}
	return 0;
}

/* A free index (made when there is none), or SIZE_MAX on ENOMEM. */
static size_t free_index(void)
{
	if (nfree == 0)
		return room(nslots) == 0 ? nslots - 1 : SIZE_MAX;
	for (size_t i = 0; i < nslots; i++)
		if (!slots[i])
			return i;
	return SIZE_MAX;
}

/* Puts a new slot at index i (free, room made). NULL on ENOMEM. */
static struct fslot *put_at(size_t i, int fd, uid_t uid, DIR *dp)
{
	struct fslot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	*s = (struct fslot){ .fd = fd, .uid = uid, .dp = dp };
	slots[i] = s;
	nfree--;
	return s;
}

uint64_t fslot_add(int fd, uid_t uid, DIR *dp)
{
	size_t i = free_index();

	if (i == SIZE_MAX || !put_at(i, fd, uid, dp))
		return 0;
	return handle(i);
}

struct fslot *fslot_of(uint64_t fh)
{
	size_t i = index_of(fh);

	return i == SIZE_MAX || !slots[i] || slots[i]->fd < 0 ? NULL : slots[i];
}

void fslot_close(uint64_t fh)
{
	size_t i = index_of(fh);
	struct fslot *s = i == SIZE_MAX ? NULL : slots[i];

	if (!s)
		return;
	if (s->dp) {
		fdq_release(s->fd);
		closedir(s->dp);
	} else {
		fdq_close(s->fd);
	}
	free(s);
	slots[i] = NULL;
	nfree++;
}

int fslot_opendir(int fd, uid_t uid, uint64_t *fh)
{
	DIR *dp = fd < 0 ? NULL : fdopendir(fd);
	int rc = dp ? 0 : -errno;

	*fh = 0;
	if (fd < 0)
		return fd;
	if (dp && !(*fh = fslot_add(fd, uid, dp)))
		rc = -ENOMEM;
	if (rc == 0)
		return 0;
	fdq_release(fd);
	if (dp)
		closedir(dp);
	else
		close(fd);
	return rc;
}

/* -------------------------------------------------------------- upgrade */

void fslot_save(struct state_w *w)
{
	for (size_t i = 0; i < nslots; i++) {
		const struct fslot *s = slots[i];

		if (!s)
			continue;
		state_open(w, FSLOT_STATE_KEY);
		state_put_u64(w, KS_INDEX, i);
		state_put_fd(w, KS_FD, s->fd);
		state_put_u64(w, KS_UID, s->uid);
		state_put_u64(w, KS_DIR, s->dp != NULL);
		/* where the next readdir goes on; the stream's read-ahead is
		 * not kept, the new stream seeks there */
		state_put_i64(w, KS_OFF, s->off);
		state_close(w);
	}
}

/* A directory stream on fd again, at off (the kernel's next readdir
 * asks for it). NULL on ENOMEM. */
static DIR *dir_again(int fd, off_t off)
{
	DIR *dp = fdopendir(fd);

	if (dp)
		seekdir(dp, off);
	return dp;
}

/* Closes what a refused slot brought. */
static void drop(int fd, DIR *dp)
{
	if (dp)
		closedir(dp);
	else if (fd >= 0)
		close(fd);
}

int fslot_restore(const struct state_r *o)
{
	uint64_t i = state_get_u64(o, KS_INDEX, UINT64_MAX);
	int fd = state_get_fd(o, KS_FD);
	uid_t uid = (uid_t)state_get_u64(o, KS_UID, 0);
	off_t off = (off_t)state_get_i64(o, KS_OFF, 0);
	int rc = i < SLOTS_MAX ? room((size_t)i) : -EINVAL;
	DIR *dp = NULL;
	struct fslot *s = NULL;

	if (rc == 0 && slots[i])
		rc = -EINVAL; /* two slots of one index */
	if (rc == 0 && fd >= 0 && state_get_u64(o, KS_DIR, 0) &&
	    !(dp = dir_again(fd, off))) {
		close(fd); /* the kernel's next request on it: ESTALE */
		fd = -1;
	}
	if (rc == 0 && !(s = put_at((size_t)i, fd, uid, dp)))
		rc = -ENOMEM;
	if (rc < 0) {
		drop(fd, dp);
		return rc;
	}
	s->off = off;
	fdq_adopt(uid, fd);
	return fd >= 0;
}
