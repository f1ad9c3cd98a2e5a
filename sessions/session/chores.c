/*
 * chores.c - the names to unlink and the fifos to make of each session,
 * kept off the path of requests: a run's start is on the path of the
 * close of cmd, so its fifos are made ahead, after the run before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessions/session/chores.h"
#include "sessions/session/sess.h"

/* The sessions with chores, done one per quiet moment of the loop. */
static struct list chores = LIST_INIT(chores);

static void add_chores(struct sess *s)
{
	if (s->has_chores)
		return;
	s->has_chores = true;
	list_add_tail(&chores, &s->chores_link);
}

void sess_trash(void *arg, const char *name)
{
	struct sess *s = arg;

	sb_add(&s->trash, name, strlen(name) + 1);
	add_chores(s);
}

/* The fifo f<gen>.<which>. */
static void fifo_name(char *buf, size_t len, unsigned gen, char which)
{
	snprintf(buf, len, "f%u.%c", gen, which);
}

void chores_trash_fifos(struct sess *s, unsigned gen)
{
	char name[32];

	fifo_name(name, sizeof(name), gen, 'o');
	sess_trash(s, name);
	fifo_name(name, sizeof(name), gen, 'e');
	sess_trash(s, name);
}

/* Makes the fifo f<gen>.<which> and opens its read end. Returns the fd
 * or -errno. */
static int make_fifo(struct sess *s, unsigned gen, char which)
{
	char name[32];
	int fd;

	fifo_name(name, sizeof(name), gen, which);
	/* a server that crashed after its last checkpoint may have made
	 * this generation's fifo already: made anew */
	if (mkfifoat(s->dirfd, name, 0600) < 0 &&
	    (errno != EEXIST || unlinkat(s->dirfd, name, 0) < 0 ||
	     mkfifoat(s->dirfd, name, 0600) < 0))
		return -errno;
	fd = openat(s->dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* the shell opens its end as the session's owner */
	if (fd >= 0 && fchown(fd, s->uid, s->gid) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = -errno;
		unlinkat(s->dirfd, name, 0);
	}
	return fd;
}

int chores_make_fifos(struct sess *s)
{
	char name[32];
	int o, e;

	if (s->fifo.o >= 0)
		return 0;
	s->fifo.gen++;
	o = make_fifo(s, s->fifo.gen, 'o');
	e = o < 0 ? o : make_fifo(s, s->fifo.gen, 'e');
	if (e < 0) {
		if (o >= 0) {
			close(o);
			fifo_name(name, sizeof(name), s->fifo.gen, 'o');
			unlinkat(s->dirfd, name, 0);
		}
		return e;
	}
	s->fifo.o = o;
	s->fifo.e = e;
	return 0;
}

/* Unlinks the name trashed last in s and drops it from the trash. */
static void unlink_one(struct sess *s)
{
	size_t at = s->trash.len - 1; /* at the NUL that ends the last name */

	while (at > 0 && s->trash.p[at - 1] != '\0')
		at--;
	unlinkat(s->dirfd, s->trash.p + at, 0);
	s->trash.len = at;
}

/* One piece per call, so that a request never waits for more: one name
 * unlinked, or the next run's fifos of one session once its trash is
 * empty. */
bool chores_quiet(void)
{
	struct sess *s;

	if (list_empty(&chores))
		return false;
	s = list_entry(chores.next, struct sess, chores_link);
	if (s->trash.len) {
		unlink_one(s);
		return true;
	}
	list_del(&s->chores_link);
	s->has_chores = false;
	if (s->pid && !s->dying)
		chores_make_fifos(s);
	return !list_empty(&chores);
}

void chores_forget(struct sess *s)
{
	if (s->fifo.o >= 0) {
		close(s->fifo.o);
		close(s->fifo.e);
	}
	if (s->has_chores)
		list_del(&s->chores_link);
	s->has_chores = false;
	free(s->trash.p);
	s->trash.p = NULL;
}
