/*
 * files_watch.c - the fanotify source of files/ (see files_watch.h).
 *
 * One mark covers the workspace's whole filesystem (FAN_MARK_FILESYSTEM:
 * an inode mark per directory would cost a descriptor each, and a mount
 * mark reports no creations, removals or renames). Each event names its
 * objects by file handle (FAN_REPORT_DFID_NAME_TARGET: the directory and
 * the name of an entry, and the file itself), which fnode_by_handle
 * (fs/files_fd.c) finds among the nodes' own handles; an object the
 * kernel does not know through files/ has no node, and the event is
 * dropped. The events of this process are the changes made through
 * files/, which the kernel made itself and already knows: a write,
 * truncate, setattr, create, link, unlink or rename goes through the
 * FUSE kernel module, which updates or invalidates its own dentries,
 * attributes and pages (t30 makes each through files/ and reads it back
 * through files/).
 *
 * The events are asynchronous (fanotify's permission events would make
 * them synchronous, at the price of a round trip to the daemon for every
 * open and write of the whole filesystem, and there is none for a
 * write), so a change is seen through files/ after the loop has read
 * its event and the notifier thread has sent the invalidation: see
 * sessionfs(7), WORKSPACE, for the window measured. An open of a file
 * or a directory is the exception (fwatch_opening): it reads the queue
 * before it answers, and the node an event marked is opened afresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "files_fd.h"
#include "files_inval.h"
#include "files_mounts.h"
#include "files_node.h"
#include "files_watch.h"
#include "watch.h"

#define EVENTS                                                                 \
	(FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ATTRIB | FAN_CREATE | FAN_DELETE | \
	 FAN_MOVED_FROM | FAN_MOVED_TO | FAN_DELETE_SELF | FAN_MOVE_SELF |     \
	 FAN_RENAME | FAN_ONDIR)
#define DIRENT (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO)
#define READS_PER_WAKE 16   /* then the loop serves what else is ready */
#define UNNAMED_MS     1000 /* a name gone is looked for at opens this long */
#define RETRY_MS       10000 /* an ESTALE's retry is awaited this long */

bool fwatch_on;
double fwatch_ttl;
unsigned long fwatch_lookups, fwatch_getattrs, fwatch_readdirs,
	fwatch_opendirs;

static struct loop_watch watch = { .fd = -1 };
static __kernel_fsid_t fsid; /* of the workspace's filesystem */
/* the root's handle: it has none in the nodes' table (fs/files_fd.h) */
static struct {
	struct file_handle h;
	unsigned char bytes[MAX_HANDLE_SZ];
} root_fh;
static pid_t self;
/* Events read so far, and when a directory last lost a name and last
 * changed its mode, owner or ACL (loop_now_ms, and the event's number):
 * the paths the kernel walked on what it had cached. */
static uint64_t events;
static int64_t dir_moved_ms, dir_attr_ms;
static uint64_t dir_moved_ev, dir_attr_ev;
static int adopted = -1;    /* the group an upgrade handed over */
static bool cached_before; /* the program before cached */

/* What one event names: the directory of its entry with the name, and
 * the object itself (either may be missing). */
struct ev {
	uint64_t mask;
	const struct fanotify_event_info_fid *dir, *obj;
	const char *name;
};

/* The node of fid's file, or NULL: the kernel does not know it. The
 * handle is only compared, never opened. */
static struct fnode *node_of(const struct fanotify_event_info_fid *fid)
{
	const struct file_handle *fh;

	if (!fid || memcmp(&fid->fsid, &fsid, sizeof(fsid)))
		return NULL;
	fh = (const struct file_handle *)fid->handle;
	if (fh->handle_type == root_fh.h.handle_type &&
	    fh->handle_bytes == root_fh.h.handle_bytes &&
	    !memcmp(fh->f_handle, root_fh.h.f_handle, fh->handle_bytes))
		return &fnode_root;
	return fnode_by_handle(fh);
}

/* Reads one info record at p (of at most room bytes) into e; false when
 * it is malformed. */
static bool take_info(struct ev *e, const char *p, size_t room)
{
	const struct fanotify_event_info_header *h = (const void *)p;
	const struct fanotify_event_info_fid *fid = (const void *)p;
	const struct file_handle *fh = (const void *)fid->handle;
	size_t fixed = sizeof(*fid) + sizeof(*fh);

	if (room < sizeof(*h) || h->len < sizeof(*h) || h->len > room)
		return false;
	if (h->info_type != FAN_EVENT_INFO_TYPE_FID &&
	    h->info_type != FAN_EVENT_INFO_TYPE_DFID &&
	    h->info_type != FAN_EVENT_INFO_TYPE_DFID_NAME)
		return true; /* another kind: not ours */
	if (h->len < fixed || h->len - fixed < fh->handle_bytes)
		return false;
	if (h->info_type == FAN_EVENT_INFO_TYPE_FID) {
		e->obj = fid;
		return true;
	}
	e->dir = fid;
	if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
	    h->len > fixed + fh->handle_bytes &&
	    p[h->len - 1] == '\0') /* the name, NUL-terminated, padded */
		e->name = (const char *)fh->f_handle + fh->handle_bytes;
	return true;
}

/* What the event m (its bytes at ev) changed, queued for the notifier. */
static void on_one(const struct fanotify_event_metadata *m, const char *ev)
{
	const char *p = ev + m->metadata_len;
	size_t left = m->event_len - m->metadata_len;
	struct ev e = { .mask = m->mask };
	const struct fanotify_event_info_header *h;
	struct fnode *n;

	for (; left; p += h->len, left -= h->len) {
		h = (const void *)p;
		if (!take_info(&e, p, left))
			return;
	}
	if (e.name && !strcmp(e.name, "."))
		e.name = NULL; /* an event of the directory itself */
	if ((e.mask & DIRENT) && e.name && (n = node_of(e.dir))) {
		n->changed = true; /* its listing */
		finval_entry(fnode_ino(n), e.name, strlen(e.name));
		finval_inode(fnode_ino(n), 0); /* its times and listing */
	}
	if (!e.obj && !e.name && !(e.mask & DIRENT))
		e.obj = e.dir;
	if (!e.obj || !(n = node_of(e.obj)))
		return;
	/* fanotify merges the events of one object and name: a rename
	 * and a write of the file may come as one */
	events++;
	if (e.mask & (FAN_DELETE | FAN_MOVED_FROM)) {
		n->unnamed_ms = loop_now_ms();
		n->unnamed_ev = events;
	}
	if (S_ISDIR(n->type) && (e.mask & (FAN_DELETE | FAN_MOVED_FROM))) {
		dir_moved_ms = loop_now_ms();
		dir_moved_ev = events;
	}
	if (S_ISDIR(n->type) && (e.mask & FAN_ATTRIB)) {
		dir_attr_ms = loop_now_ms();
		dir_attr_ev = events;
	}
	if (e.mask & ~(DIRENT | FAN_ONDIR)) {
		n->changed = true;
		n->changed_ev = events;
	}
	finval_inode(fnode_ino(n),
		     e.mask & (FAN_MODIFY | FAN_CLOSE_WRITE) ? 0 : -1);
}

/* The events of one read, len bytes at buf. With info records an
 * event's length is a multiple of 4 only: each metadata is copied out
 * before its 64-bit mask is read. */
static void on_buf(const char *buf, size_t len)
{
	struct fanotify_event_metadata m;

	for (size_t off = 0; len - off >= sizeof(m); off += m.event_len) {
		memcpy(&m, buf + off, sizeof(m));
		if (m.event_len < sizeof(m) || m.event_len > len - off ||
		    m.metadata_len < sizeof(m) || m.metadata_len > m.event_len)
			return;
		if (m.vers != FANOTIFY_METADATA_VERSION)
			continue;
		if (watch_count) /* every event, files/' own too */
			watch_on_event(&m, buf + off);
		if (m.mask & FAN_Q_OVERFLOW) {
			log_msg(LOG_WARNING,
				"files/: fanotify's queue overflowed: "
				"everything cached is invalidated");
			fwatch_flush();
		} else if (m.pid != self && !(m.mask & FAN_RENAME)) {
			/* a rename's FAN_MOVED_FROM and _TO invalidate */
			on_one(&m, buf + off);
		}
	}
}

static void on_events(struct loop_watch *w, uint32_t events)
{
	char buf[16384] __attribute__((aligned(8)));
	ssize_t len;

	(void)events;
	for (int i = 0; i < READS_PER_WAKE; i++) {
		len = read(w->fd, buf, sizeof(buf));
		if (len <= 0)
			return; /* EAGAIN: all read */
		on_buf(buf, (size_t)len);
	}
}

void fwatch_drain(void)
{
	if (fwatch_on && watch.fd >= 0)
		on_events(&watch, EPOLLIN);
}

/* Whether n's file has no name left (unlinked, or replaced by a rename
 * over it, which fanotify reports as a change of its link count). */
static bool nameless(struct fnode *n)
{
	struct stat st;

	return fnfd_use(n) == 0 &&
	       fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) ==
		       0 &&
	       st.st_nlink == 0;
}

/* Openers told ESTALE, whose retry is let through: a table, not a flag
 * of the node, since several may open it at once, each retrying once,
 * however late the scheduler lets it (RETRY_MS at most). A thread told
 * ESTALE is noted without its file: its next open is the retry, of
 * whatever file the path leads to now (a rename over the one told). The
 * retry stays as passed for that file, named by its handle (fnfd_key:
 * the kernel may forget the inode meanwhile, and a new file may get a
 * deleted one's number), with the number of the last event read before
 * the ESTALE: the path was walked afresh after that one, so the thread's
 * next opens of the file pass too, until a later event calls for it
 * again. The kernel opens a file again of itself for lsattr's and
 * chattr's ioctls, and never retries those opens. A retry whose walk
 * failed (the name gone, a directory she may not search) leaves the
 * thread's next open to pass once unchecked: that walk refreshed what
 * it went through. */
#define RETRIES 64
static struct retry {
	pid_t tid;
	bool passed;
	uint64_t key; /* of the file passed */
	int64_t at;
	uint64_t ev;
} retries[RETRIES];
static int64_t last_noted_ms;

/* An entry to note a thread in: a free one, an expired one, else the
 * oldest passed, else the oldest. */
static struct retry *free_retry(int64_t now)
{
	struct retry *old = &retries[0];

	for (unsigned i = 0; i < RETRIES; i++) {
		struct retry *r = &retries[i];
		int64_t keep = r->passed ? UNNAMED_MS : RETRY_MS;

		if (r->tid == 0 || now - r->at > keep)
			return r;
		if (r->passed > old->passed ||
		    (r->passed == old->passed && r->at < old->at))
			old = r;
	}
	return old;
}

/* Whether thread tid's open of n's file goes through, when an event
 * numbered since (0: none) calls for its path to be walked afresh: the
 * retry of an open told ESTALE, or an open after such a retry that came
 * after that event. Else tid is noted (the caller answers ESTALE). */
static bool may_pass(pid_t tid, const struct fnode *n, uint64_t since)
{
	int64_t now = loop_now_ms();
	uint64_t key = fnfd_key(n);
	struct retry *noted = NULL, *passed = NULL;

	if (!since && now - last_noted_ms > RETRY_MS)
		return true; /* nobody awaits a retry */
	for (unsigned i = 0; i < RETRIES; i++) {
		struct retry *r = &retries[i];

		if (r->tid != tid)
			continue;
		if (!r->passed && now - r->at <= RETRY_MS)
			noted = r;
		else if (r->passed && r->key == key)
			passed = r;
	}
	if (noted) { /* the retry */
		if (passed)
			passed->tid = 0;
		noted->passed = true;
		noted->key = key;
		noted->at = now;
		return true;
	}
	if (!since || (passed && since <= passed->ev))
		return true;
	noted = passed ? passed : free_retry(now);
	*noted = (struct retry){ tid, false, 0, now, events };
	last_noted_ms = now;
	return false;
}

static bool recent(int64_t ms)
{
	return ms && loop_now_ms() - ms < UNNAMED_MS;
}

/* Whether an open of file n is to be answered ESTALE for its name: one
 * of n's names went within UNNAMED_MS (the opener may have come by it,
 * cached: the notifier drops such an entry well within that), or its
 * last one. Returns the number of the event that calls for it, or 0. */
static uint64_t stale_name(struct fnode *n)
{
	if (!S_ISREG(n->type))
		return 0;
	if (recent(n->unnamed_ms))
		return n->unnamed_ev;
	return n->changed && nameless(n) ? n->changed_ev : 0;
}

/* Whether the open of n by req's caller, another user than the daemon's,
 * is to be answered ESTALE for the path the kernel walked to it: a
 * directory lost a name (the path may go through it still, cached), or
 * changed its mode, owner or ACL (the kernel checked her search on the
 * mode it had cached; the daemon's open checks n's own mode only),
 * within UNNAMED_MS. The retry walks the path with LOOKUP_REVAL, each
 * name looked up by the daemon, as her. Not the daemon's own user's
 * opens: they are overlayfs's too (a container's view of files/), which
 * never retry; for them such a path is in the window sessionfs(7)
 * states.
 * Returns the number of the event that calls for it, or 0. */
static uint64_t stale_path(const struct fnode *n, fuse_req_t req)
{
	uint64_t moved = recent(dir_moved_ms) ? dir_moved_ev : 0;
	uint64_t taken = recent(dir_attr_ms) ? dir_attr_ev : 0;

	if (fnode_is_self(req) || !(S_ISREG(n->type) || S_ISDIR(n->type)))
		return 0;
	return moved > taken ? moved : taken;
}

int fwatch_opening(struct fnode *n, fuse_req_t req)
{
	uint64_t since, path;

	if (!fwatch_on)
		return 0;
	fwatch_drain();
	since = stale_name(n);
	path = stale_path(n, req);
	if (!may_pass(fuse_req_ctx(req)->pid, n, path > since ? path : since))
		return -ESTALE;
	if (!n->changed)
		return 1;
	n->changed = false;
	finval_attrs_now(fnode_ino(n));
	return 0;
}

static void flush_one(const struct fnode *n)
{
	finval_inode(fnode_ino(n), 0);
}

void fwatch_flush(void)
{
	finval_all_entries();
	fnode_each(flush_one);
}

void fwatch_reply_negative(fuse_req_t req)
{
	struct fuse_entry_param e = { .ino = 0, .entry_timeout = fwatch_ttl };

	fuse_reply_entry(req, &e);
}

/* The workspace's filesystem and root handle, when this daemon may open
 * handles: without that the nodes keep none (fs/files_fd.c), and no
 * event would find its node. 0 or -errno. */
static int root_handle(void)
{
	const struct file_handle *h;
	struct statfs sf;
	int rc = fnfd_root_handle(&h);

	if (rc == 0 && fstatfs(fnode_root.fd, &sf) < 0)
		rc = -errno;
	if (rc < 0)
		return rc;
	memcpy(&fsid, &sf.f_fsid, sizeof(fsid));
	memcpy(&root_fh, h, sizeof(*h) + h->handle_bytes);
	return 0;
}

/* The mark on the workspace's filesystem: 0 or -errno, with its reason
 * in *what. */
static int mark(const char **what)
{
	int fd;

	*what = "fanotify_init";
	fd = adopted >= 0 ? adopted :
			    fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC |
						  FAN_NONBLOCK |
						  FAN_REPORT_DFID_NAME_TARGET,
					  O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	watch.fd = fd;
	*what = "fanotify_mark";
	/* an adopted group too: a program before FAN_RENAME lacked it */
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, EVENTS,
			  fnode_root.fd, ".") < 0)
		return -errno;
	adopted = -1; /* watch's now */
	*what = "the workspace's file handles";
	fd = root_handle();
	if (fd < 0)
		return fd;
	*what = "the loop";
	fd = loop_add(&watch, EPOLLIN);
	if (fd == 0)
		fmounts_start();
	return fd;
}

/* Undoes what mark made before it failed. */
static void unmark(void)
{
	if (watch.fd >= 0)
		close(watch.fd);
	watch.fd = -1;
}

int fwatch_fd(void)
{
	return watch.fd;
}

void fwatch_adopt(bool cached, int fd)
{
	cached_before = cached;
	adopted = fd;
}

void fwatch_start(struct fuse_session *se, bool crashed)
{
	const char *what = "files_cache = false";
	int rc = conf.files_cache ? 0 : -ECANCELED;
	bool lost = crashed || (cached_before && adopted < 0);

	self = getpid();
	watch.fn = on_events;
	if (rc == 0 && fnode_root.fd < 0)
		rc = -ENOENT, what = "no workspace";
	if (rc == 0)
		rc = mark(&what);
	if (rc == 0 && (rc = finval_start(se)) < 0)
		what = "the notifier thread";
	if (rc < 0 && watch.fd >= 0)
		loop_del(&watch);
	if (rc < 0)
		unmark();
	if (adopted >= 0) { /* not taken: the events since are lost */
		close(adopted);
		adopted = -1;
		lost = cached_before;
	}
	fwatch_on = rc == 0;
	fwatch_ttl = fwatch_on ? FWATCH_TTL : 0;
	if (fwatch_on)
		log_msg(LOG_INFO, "files/: cached (%.0f s), kept true by fanotify",
			fwatch_ttl);
	else
		log_msg(LOG_NOTICE, "files/: not cached (%s%s%s)", what,
			rc == -ECANCELED ? "" : ": ",
			rc == -ECANCELED ? "" : strerror(-rc));
	/* the previous program's cache: dropped even when this one caches
	 * nothing */
	if (lost && finval_start(se) == 0)
		fwatch_flush();
}
