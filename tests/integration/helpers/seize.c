/* seize SECONDS: for SECONDS, tries to PTRACE_SEIZE every process of the
 * caller's uid whose command line names /proc/self/fd/200 (a session
 * shell that has not yet loaded its driver); prints how many it seized
 * and how many it tried (t50: a new shell is never dumpable). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

static int is_shell(const char *pid)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strstr(buf, "/proc/self/fd/200") != NULL;
}

/* The real uid of the process (its status is readable even when it is
 * not dumpable, unlike the owner of its /proc directory), or -1. */
static long uid_of(const char *pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	if (f)
		fclose(f);
	return uid;
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3);
	int seized = 0, tried = 0;

	while (time(NULL) < end) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			if (uid_of(e->d_name) != (long)getuid() ||
			    !is_shell(e->d_name))
				continue;
			tried++;
			if (ptrace(PTRACE_SEIZE, atoi(e->d_name), 0, 0) == 0)
				seized++;
		}
		if (d)
			closedir(d);
	}
	printf("%d %d\n", seized, tried);
	return 0;
}
