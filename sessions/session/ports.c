/*
 * ports.c - the listening sockets of a group of processes, from /proc.
 *
 * A socket is known to a process as a descriptor linked to
 * "socket:[INODE]" (/proc/PID/fd), and to its network namespace as a row
 * of /proc/PID/net/tcp (tcp6, udp, udp6) with that inode, its local
 * address, port and state. Each namespace's tables are read once, through
 * one of its processes, so a process in a namespace of its own (unshare
 * -n) is seen in its own. The daemon is root: it may read every
 * process's descriptors, and none of these reads waits on the process
 * (a stopped one is read alike).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessions/session/ports.h"

#define TCP_LISTEN 0x0A
#define UDP_UNCONNECTED 0x07 /* TCP_CLOSE: bound, not connected */

/* A socket inode a process holds, in its network namespace. */
struct held {
	ino_t ns;
	unsigned long ino;
	pid_t pid;
};

struct helds {
	struct held *v;
	size_t n, cap;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (*cap ? *cap * 2 : 16) * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

/* The socket descriptors of pid (a process gone meanwhile has none). */
static int add_process(struct helds *h, pid_t pid)
{
	char path[64], link[64];
	struct dirent *e;
	unsigned long ino;
	struct stat st;
	int rc = 0;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (stat(path, &st) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	while (d && rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		rc = grow((void **)&h->v, &h->cap, h->n, sizeof(*h->v));
		if (rc == 0)
			h->v[h->n++] = (struct held){ st.st_ino, ino, pid };
	}
	if (d)
		closedir(d);
	return rc;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The lowest pid of namespace ns in h[from..to) holding inode ino, or 0. */
static pid_t holder(const struct helds *h, size_t from, size_t to, ino_t ns,
		    unsigned long ino)
{
	struct held key = { ns, ino, 0 };
	size_t lo = from, hi = to;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_held(&h->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < to && h->v[lo].ino == ino ? h->v[lo].pid : 0;
}

/* A table's address in hex (the kernel prints each 32-bit word of it as
 * the number its bytes make in this machine's order). */
static bool parse_addr(const char *hex, bool v6, char *out, size_t cap)
{
	unsigned char bytes[16];
	size_t words = v6 ? 4 : 1;
	char w[9] = { 0 };

	if (strlen(hex) != words * 8)
		return false;
	for (size_t i = 0; i < words; i++) {
		uint32_t v;

		memcpy(w, hex + i * 8, 8);
		v = (uint32_t)strtoul(w, NULL, 16);
		memcpy(bytes + i * 4, &v, 4);
	}
	return inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, out,
			 (socklen_t)cap) != NULL;
}

struct table {
	const char *name; /* the file in /proc/PID/net, and the protocol */
	bool v6;
	unsigned state; /* the rows that count */
};

static const struct table tables[] = {
	{ "tcp", false, TCP_LISTEN },
	{ "tcp6", true, TCP_LISTEN },
	{ "udp", false, UDP_UNCONNECTED },
	{ "udp6", true, UDP_UNCONNECTED },
};

/* A socket of a namespace's tables in the state that counts. */
struct row {
	const char *proto;
	char addr[INET6_ADDRSTRLEN];
	unsigned port;
	unsigned long ino;
};

/* The sockets that count of one network namespace. */
struct nstab {
	ino_t ns;
	struct row *v;
	size_t n, cap;
};

/* During a batch (ports_batch) the tables read, one per namespace, and
 * the sockets found for each group of processes (its contain). */
static bool batching;
static struct nstab *batch;
static size_t nbatch, batch_cap;
static struct group {
	const struct contain *c;
	struct ports l;
} *groups;
static size_t ngroups, groups_cap;

/* Line of table t, when it is a socket in the state that counts. */
static bool parse_row(const struct table *t, const char *line, struct row *r)
{
	unsigned state;
	char hex[33];

	if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %*s %x %*s %*s %*s %*u %*u %lu",
		   hex, &r->port, &state, &r->ino) != 4 ||
	    state != t->state || r->port == 0 || r->port > 65535)
		return false;
	r->proto = t->name;
	return parse_addr(hex, t->v6, r->addr, sizeof(r->addr));
}

/* A row of a socket table is shorter than this (tcp6's are 178 bytes). */
#define ROW_MAX 256
#define SEQ_PAGE 4096

/* A socket table, whole: NULL with *err 0 when it cannot be opened (no
 * IPv6 in that kernel, or the process is gone), or -ENOMEM. Each read(2)
 * of one walks the kernel's whole hash table again to where it left
 * off, and gives at most a page of rows: a read that ends well short of
 * a page ended at the table's end, so a small table costs one walk, not
 * the two a read to EOF would (each one about a millisecond when the
 * CPUs are busy). */
static char *slurp(const char *path, int *err)
{
	char chunk[2 * SEQ_PAGE];
	struct strbuf b = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len;
	ssize_t n;
	char *text;

	*err = 0;
	if (fd < 0)
		return NULL;
	do {
		n = read(fd, chunk, sizeof(chunk));
		if (n > 0)
			sb_add(&b, chunk, (size_t)n);
	} while (n > SEQ_PAGE - ROW_MAX);
	close(fd);
	sb_add(&b, "", 0);
	text = sb_take(&b, &len);
	if (!text)
		*err = -ENOMEM;
	return text;
}

/* The sockets that count of pid's namespace ns, from its tables. */
static int load_ns(pid_t pid, ino_t ns, struct nstab *tab)
{
	char path[64], *text, *line, *next;
	int rc = 0;

	*tab = (struct nstab){ .ns = ns };
	for (size_t i = 0; rc == 0 && i < sizeof(tables) / sizeof(*tables);
	     i++) {
		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid,
			 tables[i].name);
		text = slurp(path, &rc);
		/* the first line is the heading, which no row's format fits */
		for (line = text; rc == 0 && line && *line; line = next) {
			next = strchr(line, '\n');
			next = next ? next + 1 : line + strlen(line);
			if (grow((void **)&tab->v, &tab->cap, tab->n,
				 sizeof(*tab->v)) < 0)
				rc = -ENOMEM;
			else if (parse_row(&tables[i], line, &tab->v[tab->n]))
				tab->n++;
		}
		free(text);
	}
	return rc;
}

/* The tables of namespace ns (through pid): the batch's, read once in
 * it, or *own, read now. NULL on ENOMEM. */
static const struct nstab *tables_of(pid_t pid, ino_t ns, struct nstab *own)
{
	for (size_t i = 0; batching && i < nbatch; i++)
		if (batch[i].ns == ns)
			return &batch[i];
	if (load_ns(pid, ns, own) < 0)
		return NULL; /* the caller frees own */
	if (!batching ||
	    grow((void **)&batch, &batch_cap, nbatch, sizeof(*batch)) < 0)
		return own;
	batch[nbatch] = *own;
	*own = (struct nstab){ 0 };
	return &batch[nbatch++];
}

/* The sockets of h's entries from..to (one namespace) into l. */
static int read_ns(struct ports *l, const struct helds *h, size_t from,
		   size_t to)
{
	struct nstab own = { 0 };
	const struct nstab *tab =
		tables_of(h->v[from].pid, h->v[from].ns, &own);
	int rc = tab ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < tab->n; i++) {
		const struct row *r = &tab->v[i];
		struct ports_sock s = { .proto = r->proto, .port = r->port };

		s.pid = holder(h, from, to, h->v[from].ns, r->ino);
		if (!s.pid)
			continue;
		memcpy(s.addr, r->addr, sizeof(s.addr));
		rc = grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
		if (rc == 0)
			l->v[l->n++] = s;
	}
	free(own.v);
	return rc;
}

void ports_batch(bool on)
{
	for (size_t i = 0; i < nbatch; i++)
		free(batch[i].v);
	free(batch);
	batch = NULL;
	nbatch = batch_cap = 0;
	for (size_t i = 0; i < ngroups; i++)
		ports_free(&groups[i].l);
	free(groups);
	groups = NULL;
	ngroups = groups_cap = 0;
	batching = on;
}

static int cmp_sock(const void *a, const void *b)
{
	const struct ports_sock *x = a, *y = b;
	int c;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if ((c = strcmp(x->proto, y->proto)) != 0)
		return c;
	if ((c = strcmp(x->addr, y->addr)) != 0)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The sockets of h's processes, namespace by namespace. */
static int read_all(struct ports *l, struct helds *h)
{
	size_t from = 0, to;
	int rc = 0;

	if (h->n > 1) /* qsort takes no NULL, even for nothing */
		qsort(h->v, h->n, sizeof(*h->v), cmp_held);
	while (rc == 0 && from < h->n) {
		for (to = from + 1; to < h->n && h->v[to].ns == h->v[from].ns;
		     to++)
			;
		rc = read_ns(l, h, from, to);
		from = to;
	}
	return rc;
}

/* The sockets of c's processes, read now. */
static int read_group(const struct contain *c, struct ports *l)
{
	struct contain_pids pids;
	struct helds h = { 0 };
	int rc = 0;

	*l = (struct ports){ 0 };
	contain_pids_tree(c, &pids);
	for (int i = 0; rc == 0 && i < pids.n; i++)
		rc = add_process(&h, pids.pid[i]);
	if (rc == 0)
		rc = read_all(l, &h);
	if (rc < 0)
		ports_free(l);
	else if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_sock);
	free(pids.pid);
	free(h.v);
	return rc;
}

/* A copy of l into *to (-ENOMEM: to is empty). */
static int copy(const struct ports *l, struct ports *to)
{
	*to = (struct ports){ 0 };
	if (l->n == 0)
		return 0;
	to->v = malloc(l->n * sizeof(*l->v));
	if (!to->v)
		return -ENOMEM;
	memcpy(to->v, l->v, l->n * sizeof(*l->v));
	to->n = to->cap = l->n;
	return 0;
}

int ports_of(const struct contain *c, struct ports *l)
{
	int rc;

	for (size_t i = 0; batching && i < ngroups; i++)
		if (groups[i].c == c)
			return copy(&groups[i].l, l);
	rc = read_group(c, l);
	if (rc < 0 || !batching ||
	    grow((void **)&groups, &groups_cap, ngroups, sizeof(*groups)) < 0 ||
	    copy(l, &groups[ngroups].l) < 0)
		return rc;
	groups[ngroups++].c = c;
	return 0;
}

bool ports_has(const struct ports *l, unsigned port)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].port == port)
			return true;
	return false;
}

void ports_format(const struct ports *l, struct strbuf *b)
{
	sb_add(b, "", 0);
	for (size_t i = 0; i < l->n; i++)
		sb_addf(b, "%s %s %u %d\n", l->v[i].proto, l->v[i].addr,
			l->v[i].port, (int)l->v[i].pid);
}

void ports_free(struct ports *l)
{
	free(l->v);
	*l = (struct ports){ 0 };
}
