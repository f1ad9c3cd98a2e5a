/*
 * shprog.c - what a session's shell runs: the driver module sfsdrv.so
 * (found next to the daemon's executable, a build tree, else in
 * SFS_DRIVER_DIR; copied once into a sealed memfd that each shell gets on
 * SHELL_DRV_FD), and for an owner other than the daemon's user an
 * exec-only copy of bash. Neither depends on what the owner may reach:
 * a build tree in a 0700 home works, and files replaced on disk (an
 * upgrade) change nothing for the running daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/log.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/shell.h"

static char drv_path[PATH_MAX];
static int drv_fd = -1; /* the module's sealed copy */

void shell_set_driver(const char *path)
{
	snprintf(drv_path, sizeof(drv_path), "%s", path);
	if (drv_fd >= 0)
		close(drv_fd);
	drv_fd = -1;
}

bool shell_find_file(const char *file, char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(buf, len, "%s/%s", exe, file);
		if (access(buf, R_OK) == 0)
			return true;
	}
	snprintf(buf, len, "%s/%s", SFS_DRIVER_DIR, file);
	return access(buf, R_OK) == 0;
}

/* MFD_EXEC (Linux 6.3) keeps a memfd executable where vm.memfd_noexec
 * would make it noexec; older headers and kernels have no such flag. */
#ifndef MFD_EXEC
#define MFD_EXEC 0
#endif

/* The file at path in a memfd that nothing can change any more (the
 * seals hold for every process that opens it). Returns it or -errno. */
static int seal_copy(const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), fd, rc = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	fd = memfd_create(SHELL_DRIVER,
			  MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0)
		rc = -errno;
	while (rc == 0 && (n = sendfile(fd, in, NULL, 1 << 20)) != 0)
		if (n < 0)
			rc = -errno;
	if (rc == 0 &&
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		rc = -errno;
	close(in);
	if (rc < 0 && fd >= 0)
		close(fd);
	return rc < 0 ? rc : fd;
}

int shell_load_driver(void)
{
	char path[PATH_MAX];
	int fd;

	if (drv_fd >= 0)
		return drv_fd;
	if (drv_path[0])
		snprintf(path, sizeof(path), "%s", drv_path);
	else if (!shell_find_file(SHELL_DRIVER, path, sizeof(path))) {
		log_msg(LOG_ERR,
			"the shell driver " SHELL_DRIVER " is neither next to "
			"the executable nor in " SFS_DRIVER_DIR ": no session "
			"shell can start");
		return -ENOENT;
	}
	fd = seal_copy(path);
	if (fd < 0) {
		log_msg(LOG_ERR, "the shell driver %s cannot be read: %s", path,
			strerror(-fd));
		return fd;
	}
	log_msg(LOG_INFO, "the shell driver is %s", path);
	drv_fd = fd;
	return fd;
}

/* The program of a shell of an owner other than the daemon's user: a
 * copy of bash that no user may read (mode 0111, root's, rtdir.h).
 * The kernel makes a process that execs a file it may not read not
 * dumpable from the exec on, so no process of the owner's can trace the
 * new shell or open its /proc files before its driver has made it so
 * itself (PR_SET_DUMPABLE), a window in which a tracer could keep it
 * dumpable and then open its pipes. The copy is made once, at the
 * daemon's start (shell_copy_program), before any user can fill the
 * runtime directory; without it (NULL, logged; tried again at the next
 * such start) no such shell starts: bash itself would open that window
 * again. Returns its path. */
static const char *exec_only(const char *bash)
{
	static char path[PATH_MAX];
	int rc;

	if (path[0])
		return path;
	rc = rtdir_copy(bash, "bash", 0111, path, sizeof(path));
	if (rc == 0)
		return path;
	path[0] = '\0';
	log_msg(LOG_ERR,
		"cannot copy %s into the runtime directory (%s): no shell of "
		"another user starts",
		bash, strerror(-rc));
	return NULL;
}

const char *shell_program(const char *bash, uid_t uid)
{
	return uid == geteuid() ? bash : exec_only(bash);
}

int shell_copy_program(bool others)
{
	exec_only(conf.shell);
	if (!others || geteuid() != 0 || !rtdir_noexec())
		return 0;
	log_msg(LOG_ERR,
		"runtime_dir %s is mounted noexec: the shells of users other "
		"than root run a copy of %s kept there and could not start; "
		"set runtime_dir to a directory whose filesystem allows exec",
		conf.runtime_dir, conf.shell);
	return -ENOEXEC;
}

