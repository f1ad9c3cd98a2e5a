/*
 * log.c - where log lines go: stderr with -f, syslog once daemonized.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "sessions/core/log.h"

static bool use_syslog;
static int max_level = LOG_INFO;

void log_use_syslog(void)
{
	openlog("sessionfs", LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void log_set_level(int level)
{
	max_level = level;
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *names[] = { "emerg",	  "alert",  "crit", "error",
				       "warning", "notice", "info", "debug" };
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fprintf(stderr, "sessionfs: %s: ", names[level & 7]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
