/*
 * envmap.c - environment variable sets and the `export -p` parser.
 *
 * The shell reports its exported variables after each run with bash's
 * `export -p`, whose values are either "double quoted" (with \ before
 * " \ $ and `) or $'ANSI-C quoted' when they hold control characters.
 * Values are never evaluated: the parser only undoes that quoting.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sessions/core/envmap.h"
#include "sessions/core/names.h"

void envmap_init(struct envmap *m, enum obj_kind kind, void *owner)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->owner = owner;
}

static void var_free(struct envmap *m, struct envvar *e)
{
	if (m->kind != OBJ_NONE)
		objs_del(e->id);
	free(e->name);
	free(e->value);
	free(e);
}

void envmap_free(struct envmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		var_free(m, m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* Index of name, or of where it would be inserted (*found false). */
static size_t find(const struct envmap *m, const char *name, bool *found)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(m->v[mid]->name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct envvar *envmap_get(const struct envmap *m, const char *name)
{
	bool found;
	size_t i = find(m, name, &found);

	return found ? m->v[i] : NULL;
}

static int set_value(struct envvar *e, const char *val, size_t len)
{
	char *v = malloc(len + 1);

	if (!v)
		return -ENOMEM;
	if (len) /* an empty value may come as NULL */
		memcpy(v, val, len);
	v[len] = '\0';
	free(e->value);
	e->value = v;
	e->len = len;
	return 0;
}

int envmap_set(struct envmap *m, const char *name, const char *val, size_t len)
{
	bool found;
	size_t i = find(m, name, &found);
	struct envvar *e;

	if (found)
		return set_value(m->v[i], val, len);
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 32;
		struct envvar **nv = realloc(m->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		m->cap = nc;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->name = strdup(name)) || set_value(e, val, len) < 0) {
		if (e)
			free(e->name);
		free(e);
		return -ENOMEM;
	}
	e->owner = m->owner;
	if (m->kind != OBJ_NONE)
		e->id = objs_add(m->kind, e);
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = e;
	m->n++;
	return 0;
}

int envmap_unset(struct envmap *m, const char *name)
{
	bool found;
	size_t i = find(m, name, &found);

	if (!found)
		return -ENOENT;
	var_free(m, m->v[i]);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
	return 0;
}

int envmap_assign(struct envmap *dst, const struct envmap *src)
{
	size_t i = 0;
	int rc;

	while (i < dst->n) {
		if (!envmap_get(src, dst->v[i]->name))
			envmap_unset(dst, dst->v[i]->name);
		else
			i++;
	}
	for (i = 0; i < src->n; i++) {
		rc = envmap_set(dst, src->v[i]->name, src->v[i]->value,
				src->v[i]->len);
		if (rc < 0)
			return rc;
		envmap_get(dst, src->v[i]->name)->readonly =
			src->v[i]->readonly;
	}
	return 0;
}

size_t envmap_exec_bytes(const struct envmap *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += strlen(m->v[i]->name) + m->v[i]->len + 2 + sizeof(char *);
	return n;
}

char **envmap_envp(const struct envmap *m)
{
	char **envp = calloc(m->n + 1, sizeof(*envp));

	if (!envp)
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		size_t nl = strlen(m->v[i]->name);

		envp[i] = malloc(nl + m->v[i]->len + 2);
		if (!envp[i]) {
			while (i--)
				free(envp[i]);
			free(envp);
			return NULL;
		}
		memcpy(envp[i], m->v[i]->name, nl);
		envp[i][nl] = '=';
		memcpy(envp[i] + nl + 1, m->v[i]->value, m->v[i]->len + 1);
	}
	return envp;
}

void envmap_envp_free(char **envp)
{
	for (char **e = envp; e && *e; e++)
		free(*e);
	free(envp);
}

/* A growable byte buffer for decoding one value. */
struct bytes {
	char *p;
	size_t n, cap;
};

static int push(struct bytes *b, char c)
{
	if (b->n + 1 >= b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		char *np = realloc(b->p, nc);

		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	b->p[b->n++] = c;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes one $'...' escape at s[*i] (just after the backslash). */
static int ansic_escape(const char *s, size_t len, size_t *i, struct bytes *b)
{
	static const char from[] = "abeEfnrtv\\'\"?";
	static const char to[] = "\a\b\033\033\f\n\r\t\v\\'\"?";
	const char *hit;
	char c = s[*i];
	int v = 0, k;

	if (c && (hit = strchr(from, c))) {
		(*i)++;
		return push(b, to[hit - from]);
	}
	if (c >= '0' && c <= '7') {
		for (k = 0; k < 3 && *i < len && s[*i] >= '0' && s[*i] <= '7';
		     k++)
			v = v * 8 + (s[(*i)++] - '0');
		return push(b, (char)v);
	}
	if (c == 'x' && *i + 1 < len && hexval(s[*i + 1]) >= 0) {
		(*i)++;
		for (k = 0; k < 2 && *i < len && hexval(s[*i]) >= 0; k++)
			v = v * 16 + hexval(s[(*i)++]);
		return push(b, (char)v);
	}
	if (c == 'c' && *i + 1 < len) {
		*i += 2;
		return push(b, (char)(s[*i - 1] & 0x1f));
	}
	return push(b, '\\');
}

/* Decodes a quoted value starting at s[*i]; stops after its closing quote. */
static int decode_value(const char *s, size_t len, size_t *i, struct bytes *b)
{
	bool ansic = s[*i] == '$';
	char q = ansic ? '\'' : '"';
	int rc = 0;

	*i += ansic ? 2 : 1;
	while (*i < len && s[*i] != q && rc == 0) {
		char c = s[(*i)++];

		if (c != '\\' || *i >= len)
			rc = push(b, c);
		else if (ansic)
			rc = ansic_escape(s, len, i, b);
		else if (strchr("\"\\$`", s[*i]))
			rc = push(b, s[(*i)++]);
		else
			rc = push(b, '\\');
	}
	if (*i < len)
		(*i)++;
	return rc;
}

/* Parses "declare -FLAGS NAME[=VALUE]" (or, in POSIX mode,
 * "export [-FLAGS ]NAME[=VALUE]") at s[*i]; *i is just past "declare -",
 * "export -" or "export ". */
static int parse_decl(struct envmap *m, const char *s, size_t len, size_t *i,
		      bool flags)
{
	struct bytes name = { 0 }, val = { 0 };
	bool skip = false, has_val = false, ro = false;
	int rc = 0;

	for (; flags && *i < len && s[*i] != ' '; (*i)++)
		if (s[*i] == 'a' || s[*i] == 'A' || s[*i] == 'f')
			skip = true;
		else if (s[*i] == 'r')
			ro = true;
	if (flags && *i < len)
		(*i)++;
	while (*i < len && s[*i] != '=' && s[*i] != '\n' && rc == 0)
		rc = push(&name, s[(*i)++]);
	if (rc == 0 && *i < len && s[*i] == '=') {
		(*i)++;
		has_val = true;
		if (*i < len && (s[*i] == '"' || s[*i] == '$'))
			rc = decode_value(s, len, i, &val);
	}
	if (rc == 0)
		rc = push(&name, '\0');
	/* "declare -x NAME" alone is exported but unset: not in environ.
	 * The text may not be bash's (the EXIT trap's file "env" is the
	 * user's to overwrite): a name or value env/ could not hold is out. */
	if (rc == 0 && !skip && has_val && name_env_valid(name.p) &&
	    name_env_value_valid(val.p ? val.p : "", val.n)) {
		rc = envmap_set(m, name.p, val.p ? val.p : "", val.n);
		if (rc == 0)
			envmap_get(m, name.p)->readonly = ro;
	}
	free(name.p);
	free(val.p);
	return rc;
}

/* True (and *i moved past it) when s[*i] starts with word. */
static bool skip_word(const char *s, size_t len, size_t *i, const char *word)
{
	size_t n = strlen(word);

	if (len - *i <= n || memcmp(s + *i, word, n) != 0)
		return false;
	*i += n;
	return true;
}

int envmap_parse_export(struct envmap *m, const char *s, size_t len)
{
	size_t i = 0;
	int rc = 0;

	envmap_free(m);
	while (i < len && rc == 0) {
		if (skip_word(s, len, &i, "declare -"))
			rc = parse_decl(m, s, len, &i, true);
		else if (skip_word(s, len, &i, "export -"))
			rc = parse_decl(m, s, len, &i, true);
		else if (skip_word(s, len, &i, "export "))
			rc = parse_decl(m, s, len, &i, false);
		while (i < len && s[i] != '\n')
			i++;
		i++;
	}
	return rc;
}
