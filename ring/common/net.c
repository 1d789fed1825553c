/* UDP addresses: resolving members' hosts, telling which member an address
 * is, and the member's bound socket. The only place sockaddrs are compared. */
#include "common/net.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"

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

/* Addresses a member's host resolves to, at most this many. */
#define RESOLVED_MAX 8

/* Every answer for HOST:PORT into OUT (IPv4-mapped IPv6 as IPv4); how many. */
static size_t resolve_all(const char *host, uint16_t port, struct ring_addr *out)
{
	char service[8];
	snprintf(service, sizeof service, "%u", port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res, *r;
	if (getaddrinfo(host, service, &hints, &res) != 0)
		return 0;
	size_t n = 0;
	for (r = res; r && n < RESOLVED_MAX; r = r->ai_next) {
		if (r->ai_addrlen > sizeof out[n].sa)
			continue;
		const struct sockaddr_in6 *v6 = (const void *)r->ai_addr;
		if (r->ai_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
			struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = v6->sin6_port};
			memcpy(&v4.sin_addr, &v6->sin6_addr.s6_addr[12], 4);
			memcpy(&out[n].sa, &v4, sizeof v4);
			out[n].len = sizeof v4;
		} else {
			memcpy(&out[n].sa, r->ai_addr, r->ai_addrlen);
			out[n].len = r->ai_addrlen;
		}
		n++;
	}
	freeaddrinfo(res);
	return n;
}

static unsigned families_of(const struct ring_addr *a, size_t n)
{
	unsigned f = 0;
	for (size_t k = 0; k < n; k++)
		f |= a[k].sa.ss_family == AF_INET6 ? 2u : 1u;
	return f;
}

/* A member speaks one family, its own address's (ring_net_open_ring): every
 * member must have an address of one family in common. Members that do
 * not resolve here are left to the start. */
static int check_families(const struct ring_conf *conf,
			  const struct ring_addr (*addr)[RESOLVED_MAX], const size_t *count,
			  char *err, size_t errlen)
{
	const struct ring_layout *l = &conf->layout;
	size_t first = l->n;
	unsigned common = 3;
	for (size_t i = 0; i < l->n; i++) {
		unsigned f = families_of(addr[i], count[i]);
		if (!f)
			continue;
		if (first == l->n)
			first = i;
		if (!(common & f)) {
			unsigned g = families_of(addr[first], count[first]);
			snprintf(err, errlen, "%s:%u: [node.%u] (host %s) is %s only, [node.%u] (host %s) "
				 "%s: the members of a ring share one address family",
				 conf->path, conf->port_line[i], l->members[i].id, l->members[i].host,
				 f == 2 ? "IPv6" : "IPv4", l->members[first].id,
				 l->members[first].host, g == 2 ? "IPv6 only" : g == 1 ? "IPv4 only"
								   : "of both");
			return -RING_ECONFIG;
		}
		common &= f;
	}
	return 0;
}

int ring_net_check_conf(const struct ring_conf *conf, char *err, size_t errlen)
{
	const struct ring_layout *l = &conf->layout;
	static struct ring_addr addr[RING_MAX_MEMBERS][RESOLVED_MAX];
	size_t count[RING_MAX_MEMBERS];
	for (size_t i = 0; i < l->n; i++)
		count[i] = resolve_all(l->members[i].host, l->members[i].port, addr[i]);
	for (size_t j = 1; j < l->n; j++)
		for (size_t i = 0; i < j; i++)
			for (size_t x = 0; x < count[i]; x++)
				for (size_t y = 0; y < count[j]; y++) {
					if (!ring_net_same_addr(&addr[i][x], &addr[j][y]))
						continue;
					/* Said at the member written later. */
					size_t a = i, b = j;
					if (conf->port_line[a] > conf->port_line[b])
						a = j, b = i;
					const struct ring_member *ma = &l->members[a],
								 *mb = &l->members[b];
					char where[80];
					ring_net_format(&addr[i][x], where, sizeof where);
					snprintf(err, errlen,
						 "%s:%u: [node.%u] (host %s, port %u) is at %s, as [node.%u] "
						 "(host %s, line %u): one address, two members",
						 conf->path, conf->port_line[b], mb->id, mb->host, mb->port,
						 where, ma->id, ma->host, conf->port_line[a]);
					return -RING_ECONFIG;
				}
	return check_families(conf, addr, count, err, errlen);
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

/* The member's own port on its address A (known local): a port this
 * process may not bind (below 1024 without the capability) fails the
 * start; a port in use only while it is (the member itself, running while
 * its file is checked, or another program) gets a NOTE. */
static int check_port(const struct ring_member *m, struct ring_addr *a, char *note,
		      size_t notelen, char *err, size_t errlen)
{
	note[0] = '\0';
	if (a->sa.ss_family == AF_INET)
		((struct sockaddr_in *)&a->sa)->sin_port = htons(m->port);
	else
		((struct sockaddr_in6 *)&a->sa)->sin6_port = htons(m->port);
	int fd = socket(a->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -RING_EIO;
	}
	int rc = bind(fd, (const struct sockaddr *)&a->sa, a->len) == 0 ? 0 : errno;
	close(fd);
	if (rc == EACCES) {
		snprintf(err, errlen, "member %u's port %u cannot be bound by this user (%s): ports "
			 "below 1024 need CAP_NET_BIND_SERVICE; use a port of 1024 or above", m->id,
			 m->port, strerror(rc));
		return -RING_ECONFIG;
	}
	if (rc == EADDRINUSE)
		snprintf(note, notelen, "member %u's port %u is in use on this host now (the member "
			 "itself, running? or another program): the start fails while it is", m->id,
			 m->port);
	return 0;
}

int ring_net_check_local(const struct ring_member *m, char *note, size_t notelen, char *err,
			 size_t errlen)
{
	struct ring_addr a;
	char why[256];
	/* Port 0: the address is what is checked; the member's own port may be
	 * taken by the member itself, running while someone checks its file. */
	if (ring_net_resolve(m->host, 0, AF_UNSPEC, &a, why, sizeof why) < 0) {
		snprintf(err, errlen, "cannot resolve member %u's host %s: %s", m->id, m->host, why);
		return -RING_ECONFIG;
	}
	int fd = socket(a.sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -RING_EIO;
	}
	int rc = bind(fd, (const struct sockaddr *)&a.sa, a.len) == 0 ? 0 : -errno;
	close(fd);
	if (rc == 0)
		return check_port(m, &a, note, notelen, err, errlen);
	char where[64] = "?";
	getnameinfo((const struct sockaddr *)&a.sa, a.len, where, sizeof where, NULL, 0,
		    NI_NUMERICHOST);
	bool same = strcmp(where, m->host) == 0;
	snprintf(err, errlen, "member %u's host %s%s%s%s is not an address of this host (%s): run "
		 "member %u on the host that has it, or check a file meant for another host with "
		 "--no-local-checks", m->id, m->host, same ? "" : " (", same ? "" : where,
		 same ? "" : ")", strerror(-rc), m->id);
	return -RING_ECONFIG;
}

void ring_net_format(const struct ring_addr *a, char *buf, size_t len)
{
	char host[64] = "?", port[8] = "?";
	getnameinfo((const struct sockaddr *)&a->sa, a->len, host, sizeof host, port, sizeof port,
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, "%s:%s", host, port);
}
