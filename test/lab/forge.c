/* forge: what an attacker on the network can do to a ring without a key.
 * Sends one forged TOKEN, as member FROM (its source address and port, through
 * a raw IPv4 socket: root), to member TO, with the fingerprint of CONFIG's
 * layout (the ring file is no secret; any captured datagram shows it too).
 * Driven by test/lab/scenarios/s_9_forged_token.sh (docs/security.md). */
#define _DEFAULT_SOURCE /* IPPROTO_RAW, struct ip fields under -std=c11 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/conf.h"
#include "common/fingerprint.h"
#include "core/layout.h"
#include "core/wire.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
	fprintf(out,
		"usage: forge -c CONFIG --from F --to T --epoch E [--seq S] [--counter C]\n"
		"             [--count N] [--trailer]\n"
		"Sends N (1) copies of one TOKEN of CONFIG's ring, epoch E, hop S (2^30),\n"
		"grant counter C (2^30), every member alive, as member F (from F's address\n"
		"and port: raw IPv4, root) to member T. --trailer appends %d random bytes\n"
		"where a keyed ring's timestamp and MAC go. Without a key the receiver\n"
		"cannot tell it from F's own; with one it is an auth failure.\n",
		RING_AUTH_TRAILER);
}

static bool number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return false;
	*out = v;
	return true;
}

/* The IPv4 address of member ID of L, or false. */
static bool member_addr(const struct ring_layout *l, uint64_t id, struct in_addr *a, uint16_t *port)
{
	int i = ring_layout_index(l, (uint16_t)id);
	if (i < 0 || inet_pton(AF_INET, l->members[i].host, a) != 1)
		return false;
	*port = l->members[i].port;
	return true;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	uint64_t from = 0, to = 0, epoch = 0, seq = 1u << 30, counter = 1u << 30, count = 1;
	bool trailer = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;
		if (strcmp(a, "--trailer") == 0) {
			trailer = true;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return EXIT_USAGE;
		}
		if (strcmp(a, "-c") == 0)
			config = v;
		else if (strcmp(a, "--from") == 0)
			ok = number(v, 65535, &from);
		else if (strcmp(a, "--to") == 0)
			ok = number(v, 65535, &to);
		else if (strcmp(a, "--epoch") == 0)
			ok = number(v, UINT32_MAX, &epoch) && epoch > 0;
		else if (strcmp(a, "--seq") == 0)
			ok = number(v, UINT32_MAX, &seq);
		else if (strcmp(a, "--counter") == 0)
			ok = number(v, UINT32_MAX, &counter);
		else if (strcmp(a, "--count") == 0)
			ok = number(v, 1000, &count) && count > 0;
		else
			ok = false;
		if (!ok) {
			fprintf(stderr, "forge: bad argument %s %s\n", a, v);
			usage(stderr);
			return EXIT_USAGE;
		}
		i++;
	}
	if (!config || !from || !to || !epoch || from == to) {
		usage(stderr);
		return EXIT_USAGE;
	}
	static struct ring_conf conf;
	char err[1024];
	if (ring_conf_load(config, &conf, err, sizeof err) < 0) {
		fprintf(stderr, "forge: %s\n", err);
		return 78;
	}
	const struct ring_layout *l = &conf.layout;
	struct in_addr src, dst;
	uint16_t sport, dport;
	if (!member_addr(l, from, &src, &sport) || !member_addr(l, to, &dst, &dport)) {
		fprintf(stderr, "forge: members %" PRIu64 " and %" PRIu64 " must be IPv4 members of %s\n",
			from, to, config);
		return EXIT_USAGE;
	}

	struct ring_msg m = {.type = RING_MSG_TOKEN, .from = (uint16_t)from, .to = (uint16_t)to,
			     .fingerprint = ring_layout_fingerprint(l)};
	m.u.token.epoch = (uint32_t)epoch;
	m.u.token.seq = (uint32_t)seq;
	m.u.token.counter = (uint32_t)counter;
	for (size_t i = 0; i < l->n; i++)
		ring_set_add(&m.u.token.alive, i);
	uint8_t pkt[28 + RING_WIRE_MAX + RING_AUTH_TRAILER];
	int n = ring_wire_encode(&m, pkt + 28, RING_WIRE_MAX);
	if (n < 0) {
		fprintf(stderr, "forge: cannot encode the token (%d)\n", n);
		return 1;
	}
	size_t len = (size_t)n;
	if (trailer) {
		if (getrandom(pkt + 28 + len, RING_AUTH_TRAILER, 0) != RING_AUTH_TRAILER) {
			perror("forge: getrandom");
			return 1;
		}
		len += RING_AUTH_TRAILER;
	}

	/* IPv4 header (the kernel fills the checksum and id) and UDP header
	 * (checksum 0: none, which IPv4 allows). */
	size_t total = 28 + len;
	memset(pkt, 0, 28);
	pkt[0] = 0x45;
	pkt[2] = (uint8_t)(total >> 8);
	pkt[3] = (uint8_t)total;
	pkt[8] = 64;
	pkt[9] = IPPROTO_UDP;
	memcpy(pkt + 12, &src, 4);
	memcpy(pkt + 16, &dst, 4);
	pkt[20] = (uint8_t)(sport >> 8);
	pkt[21] = (uint8_t)sport;
	pkt[22] = (uint8_t)(dport >> 8);
	pkt[23] = (uint8_t)dport;
	pkt[24] = (uint8_t)((8 + len) >> 8);
	pkt[25] = (uint8_t)(8 + len);

	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0) {
		fprintf(stderr, "forge: raw socket: %s (needs root)\n", strerror(errno));
		return 1;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = dst};
	uint64_t sent = 0;
	for (uint64_t k = 0; k < count; k++) {
		if (sendto(fd, pkt, total, 0, (struct sockaddr *)&sa, sizeof sa) == (ssize_t)total)
			sent++;
		else
			fprintf(stderr, "forge: sendto: %s\n", strerror(errno));
		usleep(2000); /* copies 2 ms apart: the same hop, a duplicate after the first */
	}
	close(fd);
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &src, s, sizeof s);
	inet_ntop(AF_INET, &dst, d, sizeof d);
	printf("forge: sent %" PRIu64 " of %" PRIu64 " TOKEN datagrams of %zu bytes%s, as member %" PRIu64
	       " (%s:%u) to member %" PRIu64 " (%s:%u): epoch %" PRIu64 " seq %" PRIu64
	       " counter %" PRIu64 ", fingerprint %016" PRIx64 "\n",
	       sent, count, len, trailer ? " (with a random trailer)" : "", from, s, sport, to, d,
	       dport, epoch, seq, counter, m.fingerprint);
	return sent == count ? 0 : 1;
}
