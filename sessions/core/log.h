/*
 * log.h - the daemon's log: stderr in the foreground, syslog otherwise.
 */
#ifndef SFS_LOG_H
#define SFS_LOG_H

#include <syslog.h>

/* Route messages to syslog (daemon mode) instead of stderr. */
void log_use_syslog(void);
/* Messages above this syslog level are dropped (LOG_DEBUG keeps all). */
void log_set_level(int level);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
