/*
 * files_inval.c - the notifier thread of files/ (see files_inval.h): a
 * queue the loop fills and a thread that writes its notifications.
 *
 * The loop fills the queue from fanotify's queue (16384 events, then
 * one overflow that becomes one flush), and the thread empties it as
 * fast as the kernel takes notifications; it waits while a request holds
 * a lock the notification needs, and the loop answers that request
 * meanwhile. A process may also hold such a lock for as long as she
 * likes (fs/files_inval.h): past QUEUE_MAX items waiting, the next ones
 * are dropped for the kernel's epoch, so that the events of a busy
 * workspace do not fill the daemon's memory meanwhile; what was dropped
 * is seen within the cache's timeout.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sessions/core/log.h"
#include "files_inval.h"

/* FUSE_NOTIFY_INC_EPOCH (Linux 6.16, protocol 7.44): every dentry of
 * the connection made before it is looked up again at its next use. The
 * headers here are older. */
#define NOTIFY_INC_EPOCH 8

#define PAUSE_WAIT_MS 1000 /* an upgrade waits this long for the thread */
#define QUEUE_MAX 65536	   /* items waiting, then they are dropped */

struct item {
	struct item *next;
	fuse_ino_t ino; /* the inode, or the entry's parent */
	off_t off;	/* the inode's: < 0 attributes only */
	size_t len;	/* the entry's name's length; 0: an inode */
	char name[];
};

static struct fuse_session *sess;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* the thread waits on work, a pause on idle (both CLOCK_MONOTONIC) */
static pthread_cond_t work, idle;
static struct item *head, **tail = &head;
static size_t queued; /* items in head */
static bool epoch_due, busy, started, dropping;
/* Until when an upgrade pauses the thread (CLOCK_MONOTONIC ms). */
static _Atomic int64_t pause_end;
static atomic_ulong sent;
static bool no_epoch; /* the kernel refused one: said once */

/* Appends it (NULL: nothing, out of memory), or past QUEUE_MAX drops it
 * for the epoch, and wakes the thread. */
static void push(struct item *it, bool epoch)
{
	bool said;

	pthread_mutex_lock(&mu);
	said = dropping;
	if (it && queued >= QUEUE_MAX) {
		free(it);
		epoch = dropping = true;
	} else if (it) {
		*tail = it;
		tail = &it->next;
		queued++;
	}
	epoch_due |= epoch;
	said = said || !dropping; /* nothing to say */
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&mu);
	if (!said)
		log_msg(LOG_WARNING,
			"files/: %d notifications wait (the notifier waits for "
			"a lock): the next are dropped, files/ sees their "
			"changes within its cache's timeout",
			QUEUE_MAX);
}

void finval_inode(fuse_ino_t ino, off_t off)
{
	struct item *it;

	if (!started || !(it = calloc(1, sizeof(*it))))
		return;
	it->ino = ino;
	it->off = off;
	push(it, false);
}

void finval_attrs_now(fuse_ino_t ino)
{
	if (started && fuse_lowlevel_notify_inval_inode(sess, ino, -1, 0) == 0)
		atomic_fetch_add(&sent, 1);
}

void finval_entry(fuse_ino_t parent, const char *name, size_t len)
{
	struct item *it;

	if (!started || !len || !(it = calloc(1, sizeof(*it) + len + 1)))
		return;
	it->ino = parent;
	it->len = len;
	memcpy(it->name, name, len);
	push(it, false);
}

void finval_all_entries(void)
{
	if (started)
		push(NULL, true);
}

/* The epoch: a bare notification header, which libfuse 3.14 cannot
 * send. A kernel before 6.16 answers EINVAL: then a name cached before a
 * gap in the events (an overflow, an upgrade) stays until its timeout. */
static void send_epoch(void)
{
	struct fuse_out_header h = { .len = sizeof(h),
				     .error = NOTIFY_INC_EPOCH };

	if (write(fuse_session_fd(sess), &h, sizeof(h)) == (ssize_t)sizeof(h))
		atomic_fetch_add(&sent, 1);
	else if (!no_epoch) {
		no_epoch = true;
		log_msg(LOG_WARNING,
			"files/: the kernel cannot expire every entry at once "
			"(FUSE_NOTIFY_INC_EPOCH: %m): names cached before a "
			"gap in its events stay until their timeout");
	}
}

static void send_one(const struct item *it)
{
	int rc = it->len ? fuse_lowlevel_notify_inval_entry(
				   sess, it->ino, it->name, it->len) :
			   fuse_lowlevel_notify_inval_inode(sess, it->ino,
							    it->off, 0);

	/* ENOENT: the kernel has forgotten it, nothing to do */
	if (rc == 0)
		atomic_fetch_add(&sent, 1);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static bool paused(void)
{
	return now_ms() < atomic_load(&pause_end);
}

/* Waits on work until it is signalled, or the pause ends. */
static void wait_work(void)
{
	int64_t end = atomic_load(&pause_end);
	struct timespec t = { .tv_sec = end / 1000,
			      .tv_nsec = end % 1000 * 1000000 };

	if (paused())
		pthread_cond_timedwait(&work, &mu, &t);
	else
		pthread_cond_wait(&work, &mu);
}

/* Takes the queue (and the epoch) when there is work and no pause. */
static struct item *take(bool *epoch)
{
	struct item *list;

	pthread_mutex_lock(&mu);
	busy = false;
	pthread_cond_broadcast(&idle);
	while (paused() || (!head && !epoch_due))
		wait_work();
	list = head;
	head = NULL;
	tail = &head;
	queued = 0;
	dropping = false;
	*epoch = epoch_due;
	epoch_due = false;
	busy = true;
	pthread_mutex_unlock(&mu);
	return list;
}

/* Puts back what a pause stopped, before what came meanwhile. */
static void put_back(struct item *list)
{
	struct item **end = &list;
	size_t n = 0;

	for (; *end; n++)
		end = &(*end)->next;
	pthread_mutex_lock(&mu);
	queued += n;
	*end = head;
	if (!head)
		tail = end;
	head = list;
	pthread_mutex_unlock(&mu);
}

static void *notifier(void *unused)
{
	struct item *list, *it;
	bool epoch;

	(void)unused;
	for (;;) {
		list = take(&epoch);
		if (epoch)
			send_epoch();
		while ((it = list) && !paused()) {
			list = it->next;
			send_one(it);
			free(it);
		}
		if (list)
			put_back(list);
	}
	return NULL; /* never: it lives as long as the program */
}

int finval_start(struct fuse_session *se)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	pthread_t t;
	int rc;

	if (started)
		return 0;
	sess = se;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&work, &ca);
	pthread_cond_init(&idle, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all); /* the loop's signalfds take every signal */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&t, NULL, notifier, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0) {
		pthread_detach(t);
		started = true;
	}
	return rc;
}

int finval_pause(void)
{
	int64_t end = now_ms() + PAUSE_WAIT_MS;
	struct timespec until = { .tv_sec = end / 1000,
				  .tv_nsec = end % 1000 * 1000000 };
	int rc = 0;

	if (!started)
		return 0;
	pthread_mutex_lock(&mu);
	/* what the loop read before is sent: the next program reads on
	 * from the events after it */
	while ((busy || head || epoch_due) &&
	       pthread_cond_timedwait(&idle, &mu, &until) == 0)
		;
	/* still inside a notification: it waits for a lock that some
	 * process holds while it waits itself (a listing of files/ copied
	 * into a page of a FUSE file whose server does not answer); the
	 * execve would wait for this thread, and every user for the execve */
	if (busy) {
		rc = -EBUSY;
		log_msg(LOG_WARNING, "files/: a notification waits for a lock "
				     "that another process holds: the upgrade "
				     "is refused");
	} else {
		atomic_store(&pause_end, now_ms() + FINVAL_PAUSE_MS);
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

bool finval_idle(void)
{
	bool idle;

	pthread_mutex_lock(&mu);
	idle = !busy && !head && !epoch_due;
	pthread_mutex_unlock(&mu);
	return idle;
}

unsigned long finval_sent(void)
{
	return atomic_load(&sent);
}
