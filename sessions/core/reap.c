/*
 * reap.c - SIGCHLD through a signalfd, and the registry of who waits for
 * which pid. The daemon is the child subreaper, so what sessions leave
 * behind is reaped here too, with nobody to tell.
 */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <errno.h>
#include <unistd.h>
#include "sessions/core/loop.h"
#include "sessions/core/reap.h"

void (*reap_batch_hook)(void);
static struct list watches = LIST_INIT(watches);
static struct loop_watch chld_w = { .fd = -1 };

void reap_add(struct reap_watch *w, pid_t pid,
	      void (*fn)(struct reap_watch *w, int wstatus), void *arg)
{
	reap_del(w);
	w->pid = pid;
	w->fn = fn;
	w->stopped = NULL;
	w->arg = arg;
	w->on = true;
	list_add_tail(&watches, &w->link);
}

void reap_del(struct reap_watch *w)
{
	if (!w->on)
		return;
	w->on = false;
	list_del(&w->link);
}

bool reap_watched(pid_t pid)
{
	for (struct list *l = watches.next; l != &watches; l = l->next)
		if (list_entry(l, struct reap_watch, link)->pid == pid)
			return true;
	return false;
}

/* Hands the exit (or stop) of pid to its watcher, if any. */
static void dispatch(pid_t pid, int wstatus)
{
	for (struct list *l = watches.next; l != &watches; l = l->next) {
		struct reap_watch *w = list_entry(l, struct reap_watch, link);

		if (w->pid != pid)
			continue;
		if (WIFSTOPPED(wstatus)) {
			if (w->stopped)
				w->stopped(w, WSTOPSIG(wstatus));
			return;
		}
		reap_del(w);
		w->fn(w, wstatus);
		return;
	}
}

static void on_sigchld(struct loop_watch *w, uint32_t events)
{
	struct signalfd_siginfo si;
	int st;
	pid_t pid;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si))
		;
	/* stops too: a shell stopped by its own command is resumed */
	while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0)
		dispatch(pid, st);
	if (reap_batch_hook)
		reap_batch_hook();
}

int reap_init(void)
{
	sigset_t set;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	chld_w.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	chld_w.fn = on_sigchld;
	if (chld_w.fd < 0)
		return -errno;
	return loop_add(&chld_w, EPOLLIN);
}
