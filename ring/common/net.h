/* UDP addresses of the ring's members: resolving hosts, comparing the
 * address a datagram came from with a member's, and the bound socket. Shared
 * by ringd and ringctl; no libevent here. */
#ifndef RING_NET_H
#define RING_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "core/layout.h"

struct ring_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

/* Resolves HOST:PORT for UDP in FAMILY (AF_UNSPEC: the first answer's).
 * Returns 0, or -RING_ECONFIG with the resolver's reason in ERR. */
int ring_net_resolve(const char *host, uint16_t port, int family, struct ring_addr *out,
		     char *err, size_t errlen);

/* Whether A and B are the same IPv4 or IPv6 address and port; only those
 * fields count, not padding or IPv6 flow labels. */
bool ring_net_same_addr(const struct ring_addr *a, const struct ring_addr *b);

/* Refuses two members of CONF at one address and port once their hosts
 * are resolved: "localhost" and "127.0.0.1" are one place, which the
 * file's text does not show (ring_conf_load compares the text only). Every
 * answer of the resolver counts, an IPv4-mapped IPv6 address as the IPv4
 * one. A host that does not resolve is left to ring_net_open_ring. Returns
 * 0, or -RING_ECONFIG with ERR set to "PATH:LINE: ..." at the port of the
 * member written later in the file. */
int ring_net_check_conf(const struct ring_conf *conf, char *err, size_t errlen);

/* The index in ADDRS[0..N) of FROM, or N when none is at that address. */
size_t ring_net_index_of(const struct ring_addr *addrs, size_t n, const struct ring_addr *from);

/* Resolves every member of L into PEERS, member ME first and the others in
 * its address family, then opens a non-blocking UDP socket bound to ME's
 * address into *FD. Returns 0; -RING_ECONFIG when a host does not resolve;
 * -RING_EIO when the socket cannot be made or bound. The reason is in ERR. */
int ring_net_open_ring(const struct ring_layout *l, size_t me, struct ring_addr *peers, int *fd,
		       char *err, size_t errlen);

/* Formats A as "host:port" with numeric host and port into BUF. */
void ring_net_format(const struct ring_addr *a, char *buf, size_t len);

/* `ringd --check -n ID`: whether member M's host is an address of this
 * host, as the start's bind needs: a UDP socket is bound to it (port 0,
 * since the member may be running) and closed; then to its port, which
 * must be one this user may bind (a port in use now is only a NOTE: the
 * member itself may be running). 0 (NOTE "" or what to know);
 * -RING_ECONFIG when it is not (or does not resolve), with the way out in
 * ERR; -RING_EIO when no socket could be made. */
int ring_net_check_local(const struct ring_member *m, char *note, size_t notelen, char *err,
			 size_t errlen);

#endif
