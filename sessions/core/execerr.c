/*
 * execerr.c - the pipe a child says on why it did not start its program
 * (see execerr.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "sessions/core/execerr.h"

/* Reads what the pipe holds now; closes it at EOF or once read. */
static void drain(struct execerr *e)
{
	size_t have = strlen(e->why);
	ssize_t n;

	if (e->w.fd < 0)
		return;
	n = read(e->w.fd, e->why + have, sizeof(e->why) - 1 - have);
	if (n > 0)
		e->why[have + (size_t)n] = '\0';
	if (n < 0 && errno == EAGAIN)
		return; /* still starting: more comes, or EOF at its exec */
	execerr_close(e);
}

static void on_event(struct loop_watch *w, uint32_t events)
{
	(void)events;
	drain(w->arg);
}

int execerr_open(struct execerr *e, int *child_fd)
{
	int p[2];

	e->why[0] = '\0';
	e->watched = false;
	e->w = (struct loop_watch){ -1, on_event, e };
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	e->w.fd = p[0];
	*child_fd = p[1];
	return 0;
}

void execerr_watch(struct execerr *e, int child_fd)
{
	close(child_fd);
	/* not watched, it is read at the reaping only */
	e->watched = loop_add(&e->w, EPOLLIN) == 0;
}

/* Appends s to line (of len bytes, n used), as much as fits. */
static size_t put(char *line, size_t len, size_t n, const char *s)
{
	size_t k = strnlen(s, len - n);

	memcpy(line + n, s, k);
	return n + k;
}

void execerr_say(int fd, const char *what, const char *path, int err)
{
	const char *why = strerrordesc_np(err); /* no locale, no allocation */
	char line[sizeof(((struct execerr *)0)->why) - 1];
	size_t n = put(line, sizeof(line), 0, what);

	n = put(line, sizeof(line), n, " ");
	n = put(line, sizeof(line), n, path);
	n = put(line, sizeof(line), n, ": ");
	n = put(line, sizeof(line), n, why ? why : "error");
	(void)!write(fd, line, n);
}

bool execerr_reaped(struct execerr *e)
{
	drain(e);
	execerr_close(e);
	return e->why[0] != '\0';
}

void execerr_close(struct execerr *e)
{
	if (e->w.fd < 0)
		return;
	if (e->watched)
		loop_del(&e->w);
	e->watched = false;
	close(e->w.fd);
	e->w.fd = -1;
}
