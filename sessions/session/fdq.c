/*
 * fdq.c - the descriptors the daemon holds for users' open files
 * (spools read through stdout, output, stream, cmd; files/ files and
 * directories) and for the processes they start in procs/ and contexts/
 * (pipes, spools): counted per uid against max_fds_per_user, and kept
 * below the cut, RLIMIT_NOFILE less fd_reserve.
 *
 * The kernel gives the lowest free number, so a descriptor numbered at
 * or past the cut means that every number below it is taken: one opened
 * for a user is closed again and her open fails with ENFILE. Numbers
 * from the cut on are thus only ever the daemon's own (spawns, spools,
 * pipes, replies on /dev/fuse), however many files users hold open.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/session/fdq.h"
#include "sessions/core/log.h"

#define NOBODY	  ((uid_t)-1) /* a descriptor counted for no user */
/* What a session holds at most without what is charged to its owner:
 * its directory, cgroup, shell's pipes, spools, terminal (measured: 8 at
 * mkdir, 13 with its shell, 18 with its terminal). */
#define FDS_PER_SESSION 18
#define LIMIT_MAX (1u << 24)  /* more than the kernel's nr_open allows */

/* What one user holds. */
struct use {
	uid_t uid;
	unsigned long n;
};

static uid_t *owner; /* by descriptor number, below the cut */
static unsigned long cut, bound, held, refused;
static struct use *uses;
static size_t nuses, cap;

int fdq_init(void)
{
	struct rlimit rl = { 0 };
	unsigned long limit, reserve;

	if (owner)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	limit = rl.rlim_cur < LIMIT_MAX ? (unsigned long)rl.rlim_cur :
					  LIMIT_MAX;
	reserve = conf.fd_reserve < limit / 2 ? conf.fd_reserve : limit / 2;
	cut = limit - reserve;
	bound = conf.max_fds_per_user ? conf.max_fds_per_user : cut / 4;
	owner = malloc((cut ? cut : 1) * sizeof(*owner));
	if (!owner)
		return -ENOMEM;
	for (unsigned long i = 0; i < cut; i++)
		owner[i] = NOBODY;
	/* Sessions are not charged to their owners (max_sessions_per_user
	 * bounds them): no more of them than the cut has room for, so that
	 * they never reach the reserve. */
	if (conf.max_sessions > cut / FDS_PER_SESSION) {
		log_msg(LOG_NOTICE,
			"max_sessions lowered from %llu to %lu (and "
			"max_sessions_per_user to a quarter of that at most): "
			"%lu descriptors below the reserve, some %d a session",
			(unsigned long long)conf.max_sessions,
			cut / FDS_PER_SESSION, cut, FDS_PER_SESSION);
		conf.max_sessions = cut / FDS_PER_SESSION;
		/* and no one user may take them all */
		if (conf.max_sessions_per_user > conf.max_sessions / 4)
			conf.max_sessions_per_user =
				conf.max_sessions / 4 ? conf.max_sessions / 4 : 1;
	}
	log_msg(LOG_INFO,
		"descriptors: limit %lu, %lu kept for the daemon, %lu per user",
		limit, reserve, bound);
	return 0;
}

/* uid's record; with add, made when she has none (NULL on ENOMEM). */
static struct use *use_of(uid_t uid, bool add)
{
	struct use *nu;

	for (size_t i = 0; i < nuses; i++)
		if (uses[i].uid == uid)
			return &uses[i];
	if (!add)
		return NULL;
	if (nuses == cap) {
		nu = realloc(uses, (cap ? cap * 2 : 8) * sizeof(*nu));
		if (!nu)
			return NULL;
		uses = nu;
		cap = cap ? cap * 2 : 8;
	}
	uses[nuses] = (struct use){ .uid = uid };
	return &uses[nuses++];
}

/* Whether uid has no bound: root and the mounter. */
static bool unbound(uid_t uid)
{
	return uid == 0 || uid == getuid();
}

int fdq_check(uid_t uid)
{
	const struct use *u = use_of(uid, false);

	if (unbound(uid) || !u || u->n < bound)
		return 0;
	refused++;
	return -EMFILE;
}

/* Both start the module if nobody did (a unit test of fs/files.c). */
int fdq_take(uid_t uid, int fd)
{
	int rc = fd < 0 ? -errno : fdq_init();
	struct use *u = NULL;

	if (rc == 0)
		rc = fdq_check(uid);
	if (rc == 0 && (unsigned long)fd >= cut) {
		refused++;
		rc = -ENFILE;
	}
	if (rc == 0 && !(u = use_of(uid, true)))
		rc = -ENOMEM;
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	u->n++;
	owner[fd] = uid;
	held++;
	return fd;
}

void fdq_adopt(uid_t uid, int fd)
{
	struct use *u = NULL;

	if (fd < 0 || fdq_init() < 0 || (unsigned long)fd >= cut ||
	    owner[fd] != NOBODY || !(u = use_of(uid, true)))
		return;
	u->n++;
	owner[fd] = uid;
	held++;
}

int fdq_charge(uid_t uid, unsigned n, int top)
{
	int rc = fdq_init();
	struct use *u = rc == 0 ? use_of(uid, false) : NULL;

	if (rc == 0 && !unbound(uid) && (u ? u->n : 0) + n > bound)
		rc = -EMFILE;
	else if (rc == 0 && top >= 0 && (unsigned long)top >= cut)
		rc = -ENFILE;
	if (rc == 0 && !(u = use_of(uid, true)))
		return -ENOMEM;
	if (rc < 0) {
		refused++;
		return rc;
	}
	u->n += n;
	held += n;
	return 0;
}

void fdq_uncharge(uid_t uid, unsigned *np)
{
	struct use *u = use_of(uid, false);
	unsigned long n = *np;

	*np = 0;
	if (!u || n == 0)
		return;
	n = n < u->n ? n : u->n;
	u->n -= n;
	held -= n;
	if (u->n == 0)
		*u = uses[--nuses];
}

const char *fdq_why(uid_t uid, int rc, char *buf, size_t len)
{
	if (rc == -EMFILE)
		snprintf(buf, len,
			 "uid %u would pass max_fds_per_user (%lu "
			 "descriptors of the daemon's)",
			 (unsigned)uid, bound);
	else if (rc == -ENFILE)
		snprintf(buf, len,
			 "the daemon's descriptors are at their limit less "
			 "fd_reserve");
	else
		snprintf(buf, len, "%s", strerror(-rc));
	return buf;
}

int fdq_keep(int fd)
{
	int rc = fd < 0 ? -errno : fdq_init();

	if (rc == 0 && (unsigned long)fd < cut)
		return fd;
	if (fd >= 0) {
		close(fd);
		refused += rc == 0;
	}
	return rc < 0 ? rc : -ENFILE;
}

void fdq_release(int fd)
{
	struct use *u;

	if (fd < 0 || (unsigned long)fd >= cut || owner[fd] == NOBODY)
		return;
	u = use_of(owner[fd], false);
	owner[fd] = NOBODY;
	held--;
	if (u && --u->n == 0)
		*u = uses[--nuses];
}

void fdq_close(int fd)
{
	if (fd < 0)
		return;
	fdq_release(fd);
	close(fd);
}

unsigned long fdq_held(void)
{
	return held;
}

unsigned long fdq_bound(void)
{
	return bound;
}

unsigned long fdq_cut(void)
{
	return cut;
}

unsigned long fdq_refused(void)
{
	return refused;
}
