/*
 * jsonck.h - whether a text is one JSON value (RFC 8259), of ASCII alone,
 * so that it may go into a JSON document as it is.
 */
#ifndef SFS_JSONCK_H
#define SFS_JSONCK_H

#include <stdbool.h>
#include <stddef.h>

#define JSONCK_DEPTH_MAX 256 /* arrays and objects nested at most */

/* True when p (n bytes) is one JSON value with blanks around it, its
 * bytes all ASCII, nested at most JSONCK_DEPTH_MAX deep. */
bool jsonck_valid(const char *p, size_t n);

#endif
