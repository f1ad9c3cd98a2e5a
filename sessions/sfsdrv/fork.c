/*
 * fork.c - the control line "fork PATH": this shell, between runs, forks
 * the shell of a new session with its whole state (variables, functions,
 * aliases, options, traps, the directory stack, umask, limits, cwd). The
 * daemon listens on PATH, a socket only this shell's owner may reach, and
 * sends the new session's request there as it would to the template
 * (tmpl.c forks it): its cgroup and pipes. In the child, what is this
 * shell's alone goes: its jobs, $!, $$ and the seeds (set as the
 * template's children set them), $SECONDS, which counts from the new
 * session's first run.
 */
#include <config.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "jobs.h"
#include "drv.h"

/* Forgets what belongs to the shell it was forked from: its jobs are
 * not this one's children. */
static void forget_parent(void)
{
	delete_all_jobs(0);
	last_asynchronous_pid = NO_PID;
	drv.clock_started = false;
}

int drv_fork(const char *path, char *dir, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct rlimit lim;
	int sock, rc = -1;

	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	/* room for the socket and the three descriptors it brings, under
	 * whatever `ulimit -n` a command set */
	drv_room(&lim);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock >= 0 && connect(sock, (struct sockaddr *)&a, sizeof(a)) == 0)
		rc = drv_fork_request(sock, dir, cap);
	if (rc == 1)
		forget_parent(); /* the socket is closed: child_fds */
	else if (sock >= 0)
		close(sock);
	drv_unroom(&lim);
	return rc;
}
