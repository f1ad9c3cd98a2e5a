/*
 * ports.h - the sockets that a session's or a process's processes listen
 * on (tcp, tcp6) or are bound to (udp, udp6), read from /proc: each
 * process's descriptors and the socket tables of its own network
 * namespace. Nothing is run and nothing waits on the processes.
 */
#ifndef SFS_PORTS_H
#define SFS_PORTS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "sessions/core/contain.h"
#include "sessions/core/strbuf.h"

struct ports_sock {
	const char *proto; /* "tcp", "tcp6", "udp", "udp6" */
	char addr[INET6_ADDRSTRLEN];
	unsigned port;
	pid_t pid; /* the lowest pid that holds it */
};

struct ports {
	struct ports_sock *v;
	size_t n, cap;
};

/* The sockets of the processes of c and of the cgroups below it, sorted
 * by port, protocol, address. Returns 0 or -ENOMEM (l is then empty). */
int ports_of(const struct contain *c, struct ports *l);
/* Begins (on) or ends a batch of ports_of calls that share what they
 * read, as the looks of one moment may: each group's sockets, and each
 * network namespace's socket tables (the costly part: each read walks
 * the kernel's hash tables). */
void ports_batch(bool on);
/* Whether a socket of l has that port. */
bool ports_has(const struct ports *l, unsigned port);
/* l as lines "PROTO ADDRESS PORT PID\n". */
void ports_format(const struct ports *l, struct strbuf *b);
void ports_free(struct ports *l);

#endif
