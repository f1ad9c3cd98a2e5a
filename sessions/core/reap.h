/*
 * reap.h - child exits: each is handed to whoever registered its pid.
 */
#ifndef SFS_REAP_H
#define SFS_REAP_H

#include <stdbool.h>
#include <sys/types.h>
#include "sessions/core/list.h"

/* A claim on the exit of one child, embedded in its owner. */
struct reap_watch {
	pid_t pid;
	bool on;
	void (*fn)(struct reap_watch *w, int wstatus);
	/* when set, told that the child was stopped by signal sig */
	void (*stopped)(struct reap_watch *w, int sig);
	void *arg;
	struct list link;
};

/* Makes this process the child subreaper and watches SIGCHLD. Returns 0
 * or -errno. */
int reap_init(void);
/* Calls fn(w, wstatus) once pid has exited and is reaped (w->stopped is
 * cleared: set it after this call to hear of stops). */
void reap_add(struct reap_watch *w, pid_t pid,
	      void (*fn)(struct reap_watch *w, int wstatus), void *arg);
/* Drops the claim: the exit is reaped and ignored. */
void reap_del(struct reap_watch *w);
/* Whether some claim is on pid. */
bool reap_watched(pid_t pid);
/* Called after each batch of exits (set by the session layer). */
extern void (*reap_batch_hook)(void);

#endif
