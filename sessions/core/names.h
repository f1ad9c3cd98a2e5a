/*
 * names.h - validation of names that come from the filesystem or users:
 * session and run names, environment variable names and values.
 */
#ifndef SFS_NAMES_H
#define SFS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAME_MAX_LEN 64

/* Session, run and process names: 1-64 of [A-Za-z0-9._-], no leading '.'. */
bool name_valid(const char *name);
/* Environment names: [A-Za-z_][A-Za-z0-9_]*, at most 255 bytes. */
bool name_env_valid(const char *name);
/* Environment values: any bytes but NUL. */
bool name_env_value_valid(const char *val, size_t len);
/* Copies src into dst (cap bytes, NUL-terminated, cut to fit) so that it
 * is one line of text: a control byte or DEL becomes \n, \t, \r or \xHH
 * and a backslash \\. */
void name_escape(char *dst, size_t cap, const char *src);
/* Parses a non-negative decimal with optional surrounding blanks/newline. */
int name_parse_u64(const char *s, size_t len, unsigned long long *out);
/* The longest timeout (ms) of a run, a session or a context: 365 days, as
 * default_timeout_ms. A deadline is a monotonic int64_t ms, which a value
 * near 2^63 or 2^64 would wrap into the past. */
#define NAME_TIMEOUT_MAX_MS (86400000ULL * 365)
/* Parses a timeout as name_parse_u64 does; -EINVAL for what is not a
 * number or is past NAME_TIMEOUT_MAX_MS. */
int name_parse_timeout(const char *s, size_t len, unsigned long long *ms);

#endif
