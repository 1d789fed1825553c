/* UDP addresses: resolving members' hosts, telling which member an address
 * is, and the member's bound socket. The only place sockaddrs are compared. */
#include "net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

int ring_net_resolve(const char *host, uint16_t port, int family, struct ring_addr *out,
		     char *err, size_t errlen)
{
	char service[8];
	snprintf(service, sizeof service, "%u", port);
	struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_DGRAM}, *res;
	int rc = getaddrinfo(host, service, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "%s", gai_strerror(rc));
		return -RING_ECONFIG;
	}
	memcpy(&out->sa, res->ai_addr, res->ai_addrlen);
	out->len = (socklen_t)res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

bool ring_net_same_addr(const struct ring_addr *a, const struct ring_addr *b)
{
	if (a->sa.ss_family != b->sa.ss_family)
		return false;
	if (a->sa.ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)&a->sa, *y = (const void *)&b->sa;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)&a->sa, *y = (const void *)&b->sa;
		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
	}
	return a->len == b->len && memcmp(&a->sa, &b->sa, a->len) == 0;
}

size_t ring_net_index_of(const struct ring_addr *addrs, size_t n, const struct ring_addr *from)
{
	for (size_t i = 0; i < n; i++)
		if (ring_net_same_addr(from, &addrs[i]))
			return i;
	return n;
}

int ring_net_open_ring(const struct ring_layout *l, size_t me, struct ring_addr *peers, int *fd,
		       char *err, size_t errlen)
{
	char why[256];
	const struct ring_member *m = &l->members[me];
	*fd = -1;
	if (ring_net_resolve(m->host, m->port, AF_UNSPEC, &peers[me], why, sizeof why) < 0) {
		snprintf(err, errlen, "cannot resolve own host %s: %s", m->host, why);
		return -RING_ECONFIG;
	}
	int family = peers[me].sa.ss_family;
	for (size_t i = 0; i < l->n; i++) {
		if (i == me)
			continue;
		m = &l->members[i];
		if (ring_net_resolve(m->host, m->port, family, &peers[i], why, sizeof why) < 0) {
			snprintf(err, errlen, "cannot resolve member %u's host %s as %s: %s", m->id,
				 m->host, family == AF_INET6 ? "IPv6" : "IPv4", why);
			return -RING_ECONFIG;
		}
	}
	m = &l->members[me];
	*fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -RING_EIO;
	}
	if (bind(*fd, (const struct sockaddr *)&peers[me].sa, peers[me].len) != 0) {
		snprintf(err, errlen, "cannot bind %s:%u: %s", m->host, m->port, strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

void ring_net_format(const struct ring_addr *a, char *buf, size_t len)
{
	char host[64] = "?", port[8] = "?";
	getnameinfo((const struct sockaddr *)&a->sa, a->len, host, sizeof host, port, sizeof port,
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, "%s:%s", host, port);
}
