/*
 * names.c - the rules for every name and small value that users write.
 * Nothing here touches the filesystem: names are checked, never used as
 * paths until they pass.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sessions/core/names.h"

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

bool name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(name[i]) && name[i] != '.' && name[i] != '_' &&
		    name[i] != '-')
			return false;
	return true;
}

bool name_env_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 255 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(name[i]) && name[i] != '_')
			return false;
	return true;
}

bool name_env_value_valid(const char *val, size_t len)
{
	return memchr(val, '\0', len) == NULL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int name_parse_u64(const char *s, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i = 0, digits = 0;

	while (i < len && is_blank(s[i]))
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (~0ULL - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	while (i < len && is_blank(s[i]))
		i++;
	if (digits == 0 || i != len)
		return -EINVAL;
	*out = v;
	return 0;
}

int name_parse_timeout(const char *s, size_t len, unsigned long long *ms)
{
	unsigned long long v;

	if (name_parse_u64(s, len, &v) < 0 || v > NAME_TIMEOUT_MAX_MS)
		return -EINVAL;
	*ms = v;
	return 0;
}

void name_escape(char *dst, size_t cap, const char *src)
{
	size_t o = 0;

	for (; *src && o + 5 <= cap; src++) {
		unsigned char c = (unsigned char)*src;
		const char *e = c == '\n' ? "\\n" :
				c == '\t' ? "\\t" :
				c == '\r' ? "\\r" :
				c == '\\' ? "\\\\" :
					    NULL;

		if (e)
			o += (size_t)snprintf(dst + o, cap - o, "%s", e);
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	if (cap)
		dst[o < cap ? o : cap - 1] = '\0';
}
