/*
 * files_fd.c - a bound on the descriptors files/'s nodes hold.
 *
 * The kernel forgets an inode only under memory pressure, so a du over a
 * big tree leaves one node per file; with one open descriptor each, the
 * daemon ran out of descriptors and every session's output was cut. Here
 * each node keeps its file's handle (a few bytes), and at most `bound`
 * nodes keep an O_PATH descriptor, the ones used last (a doubly linked
 * list, lru_newest first). A request for an evicted node opens its handle
 * again (open_by_handle_at on the workspace root's mount): one system
 * call, paid only by nodes not used for a while.
 *
 * Opening a handle needs CAP_DAC_READ_SEARCH. A daemon without it (a
 * user's own mount), or a filesystem that makes no handles, keeps every
 * node's descriptor as before; the reserve (sessions/session/fdq.c) then
 * still keeps the sessions' own descriptors out of reach.
 *
 * The table of handles also lets an event that names a file by its
 * handle (fanotify's fids) find the node without opening anything.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sessions/core/state.h"
#include "sessions/session/fdq.h"
#include "files_fd.h"
#include "files_node.h"

#define BOUND_MAX 4096 /* descriptors kept at most, whatever the limit */
#define BOUND_MIN 16   /* a request uses at most three nodes at once */

static unsigned long bound = BOUND_MAX, nopen;
static unsigned long nhandle_opens; /* by fnfd_open_evicted */
static bool can_open; /* open_by_handle_at works for this daemon */
static struct file_handle *root_fh; /* the root's, when it can */
static int open_err;		    /* why it cannot: -errno */
/* the workspace root opened for reading: open_by_handle_at takes no
 * O_PATH descriptor for the mount (EBADF) */
static int mnt_fd = -1;
static struct fnode *lru_newest, *lru_oldest;

/* handle -> node, chained by fh_next; fh_cap a power of two */
static struct fnode **fh_tab;
static size_t fh_cap, fh_count;

/* ------------------------------------------------------------ handles */

static uint64_t fh_hash(const struct file_handle *fh)
{
	uint64_t h = 1469598103934665603ULL ^ (uint32_t)fh->handle_type;

	for (unsigned i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 1099511628211ULL;
	return h ^ h >> 29;
}

static size_t fh_slot(const struct file_handle *fh, size_t cap)
{
	return (size_t)fh_hash(fh) & (cap - 1);
}

static bool fh_equal(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_type == b->handle_type &&
	       a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* fd's handle, malloc'd, or NULL (none: ENOMEM, or the filesystem
 * exports none). */
static struct file_handle *handle_of(int fd)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	int mnt;

	if (!fh)
		return NULL;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", fh, &mnt, AT_EMPTY_PATH) < 0) {
		free(fh);
		return NULL;
	}
	return realloc(fh, sizeof(*fh) + fh->handle_bytes) ?: fh;
}

static int fh_grow(void)
{
	size_t ncap = fh_cap ? fh_cap * 2 : 64;
	struct fnode **nt = calloc(ncap, sizeof(*nt));
	struct fnode *n, *next;

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < fh_cap; i++)
		for (n = fh_tab[i]; n; n = next) {
			size_t s = fh_slot(n->fh, ncap);

			next = n->fh_next;
			n->fh_next = nt[s];
			nt[s] = n;
		}
	free(fh_tab);
	fh_tab = nt;
	fh_cap = ncap;
	return 0;
}

struct fnode *fnode_by_handle(const struct file_handle *fh)
{
	struct fnode *n;

	if (!fh_cap)
		return NULL;
	for (n = fh_tab[fh_slot(fh, fh_cap)]; n; n = n->fh_next)
		if (fh_equal(n->fh, fh))
			return n;
	return NULL;
}

/* Enters n (its fh set) into the table; without room, n keeps no
 * handle (and so keeps its fd). */
static void fh_add(struct fnode *n)
{
	size_t s;

	if (fh_count >= fh_cap && fh_grow() < 0) {
		free(n->fh);
		n->fh = NULL;
		return;
	}
	s = fh_slot(n->fh, fh_cap);
	n->fh_next = fh_tab[s];
	fh_tab[s] = n;
	fh_count++;
}

static void fh_del(struct fnode *n)
{
	struct fnode **p = &fh_tab[fh_slot(n->fh, fh_cap)];

	while (*p && *p != n)
		p = &(*p)->fh_next;
	if (*p) {
		*p = n->fh_next;
		fh_count--;
	}
}

/* ---------------------------------------------------------------- LRU */

static void lru_unlink(struct fnode *n)
{
	if (n->newer)
		n->newer->older = n->older;
	else
		lru_newest = n->older;
	if (n->older)
		n->older->newer = n->newer;
	else
		lru_oldest = n->newer;
	n->newer = n->older = NULL;
	nopen--;
}

static void lru_push(struct fnode *n)
{
	n->older = lru_newest;
	n->newer = NULL;
	if (lru_newest)
		lru_newest->newer = n;
	lru_newest = n;
	if (!lru_oldest)
		lru_oldest = n;
	nopen++;
}

/* Closes the descriptors of the lru_oldest nodes beyond the bound. */
static void lru_evict(void)
{
	struct fnode *n;

	while (nopen > bound && (n = lru_oldest)) {
		lru_unlink(n);
		close(n->fd);
		n->fd = -1;
	}
}

/* ------------------------------------------------------------- public */

void fnfd_init(void)
{
	unsigned long cut = fdq_cut() / 4;
	int fd;

	bound = cut < BOUND_MIN ? BOUND_MIN : cut > BOUND_MAX ? BOUND_MAX : cut;
	/* the root's own handle, opened once, tells whether this daemon
	 * may open handles at all */
	if (mnt_fd >= 0)
		close(mnt_fd);
	free(root_fh);
	mnt_fd = openat(fnode_root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	errno = 0;
	root_fh = mnt_fd >= 0 ? handle_of(fnode_root.fd) : NULL;
	fd = root_fh ? open_by_handle_at(mnt_fd, root_fh, O_PATH | O_CLOEXEC) :
		       -1;
	can_open = fd >= 0;
	open_err = can_open ? 0 : errno ? -errno : -ENOMEM;
	if (fd >= 0)
		close(fd);
	if (!can_open) {
		free(root_fh);
		root_fh = NULL;
	}
}

int fnfd_root_handle(const struct file_handle **fh)
{
	*fh = root_fh;
	return root_fh ? 0 : open_err ? open_err : -ENOENT;
}

void fnfd_add(struct fnode *n)
{
	if (!can_open || n == &fnode_root || n->fd < 0)
		return;
	if (!n->fh && (n->fh = handle_of(n->fd)))
		fh_add(n);
	if (!n->fh)
		return;
	lru_push(n);
	lru_evict();
}

int fnfd_use(struct fnode *n)
{
	int fd;

	if (!n->fh)
		return n->fd >= 0 ? 0 : -ESTALE;
	if (n->fd >= 0) {
		lru_unlink(n);
		lru_push(n);
		return 0;
	}
	/* ENFILE past the cut, as for a node's first descriptor */
	fd = fdq_keep(open_by_handle_at(mnt_fd, n->fh,
					O_PATH | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return fd == -ENFILE ? fd : -ESTALE;
	n->fd = fd;
	lru_push(n);
	lru_evict();
	return 0;
}

uint64_t fnfd_key(const struct fnode *n)
{
	return n->fh ? fh_hash(n->fh) : fnode_ino(n);
}

bool fnfd_open_evicted(const struct fnode *n, int flags, int *fd)
{
	if (n->fd >= 0 || !n->fh)
		return false;
	*fd = open_by_handle_at(mnt_fd, n->fh, flags);
	nhandle_opens++;
	return true;
}

bool fnfd_same(const struct fnode *n, int fd)
{
	struct file_handle *fh;
	bool same;

	if (!n->fh)
		return true;
	fh = handle_of(fd);
	same = !fh || fh_equal(fh, n->fh);
	free(fh);
	return same;
}

void fnfd_del(struct fnode *n)
{
	if (n->fd >= 0 && n->fh)
		lru_unlink(n);
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
	if (n->fh)
		fh_del(n);
	free(n->fh);
	n->fh = NULL;
}

/* ------------------------------------------------------------ upgrade */

void fnfd_save(struct state_w *w, unsigned short key, const struct fnode *n)
{
	if (n->fh)
		state_put(w, key, n->fh, sizeof(*n->fh) + n->fh->handle_bytes);
}

int fnfd_restore_fd(const struct state_r *o, unsigned short key)
{
	const struct file_handle *saved;
	struct file_handle *fh;
	const void *p;
	size_t len;
	int fd = -1;

	if (!state_get(o, key, &p, &len) || len < sizeof(*saved) ||
	    len > sizeof(*saved) + MAX_HANDLE_SZ || mnt_fd < 0)
		return -1;
	/* a copy: the state's bytes need not be aligned */
	if (!(fh = malloc(len)))
		return -1;
	memcpy(fh, p, len);
	if (fh->handle_bytes == len - sizeof(*fh))
		fd = open_by_handle_at(mnt_fd, fh,
				       O_PATH | O_NOFOLLOW | O_CLOEXEC);
	free(fh);
	return fd;
}

unsigned long fnfd_open_count(void)
{
	return nopen;
}

unsigned long fnfd_handle_opens(void)
{
	return nhandle_opens;
}

unsigned long fnfd_bound(void)
{
	return bound;
}
