/* Watches one ring's datagrams on the loopback interface for make bench,
 * with kernel timestamps and without touching the members: token hops and
 * their latency (all, and those with no grant at the receiver), grants (from
 * the token's counter), every datagram by type.
 * Needs CAP_NET_RAW (an AF_PACKET socket with a BPF filter). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "core/bytes.h"

#define SNAP 96    /* IP + UDP headers + the token's header and first fields */
#define BATCH 256  /* datagrams per recvmmsg */
#define TYPES 13   /* ring message types 1..12; 0 counts anything else */

static const char *type_name[TYPES] = {"other",    "token",  "token_ack", "heartbeat",
				       "election", "election_ack", "join", "leave",
				       "status_req", "status_resp", "epoch_query", "epoch_reply",
				       "want"};

/* A growing sample of hop times, in nanoseconds. */
struct sample {
	uint64_t *ns;
	size_t n, cap;
};

static void sample_add(struct sample *s, uint64_t ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 65536;
		s->ns = realloc(s->ns, s->cap * sizeof *s->ns);
		if (!s->ns) {
			perror("wirecap");
			exit(1);
		}
	}
	s->ns[s->n++] = ns;
}

struct cap {
	uint64_t from_ns, to_ns;     /* the measured window, CLOCK_REALTIME */
	uint64_t count[TYPES];
	uint64_t first_tok_ns, last_tok_ns;
	uint32_t epoch, seq, counter, idle; /* the last token seen */
	uint64_t seq_ns;             /* when that seq was first sent */
	bool have_tok;
	uint64_t hops, grants, retransmits, epochs, misordered;
	struct sample hop;  /* every hop */
	struct sample pure; /* hops whose receiver granted nothing on that visit */
};

static void on_token(struct cap *c, const uint8_t *body, uint64_t ts)
{
	uint32_t epoch = ring_get_be32(body), seq = ring_get_be32(body + 4), counter = ring_get_be32(body + 8);
	uint32_t idle = ring_get_be32(body + 16); /* after quiet_us (wire v3) */
	if (!c->have_tok)
		c->first_tok_ns = ts;
	c->last_tok_ns = ts;
	if (c->have_tok && epoch == c->epoch && seq == c->seq) {
		c->retransmits++; /* a resend of the same hop */
		return;
	}
	if (c->have_tok && epoch == c->epoch && seq == c->seq + 1) {
		/* One hop: the predecessor's send of seq to this member's send
		 * of seq+1: transit, wake-up, the step, the ack, the pass. */
		c->hops++;
		c->grants += counter - c->counter;
		if (ts < c->seq_ns) {
			/* Stamped before its predecessor: the two sends ran on
			 * different CPUs whose clocks disagree a little (seen
			 * in VMs). Counted, not taken as a latency. */
			c->misordered++;
			goto next;
		}
		sample_add(&c->hop, ts - c->seq_ns);
		/* The token's counter did not move and its idle count grew by
		 * one: the receiver only passed it on (no grant, no park, no
		 * summons), so this hop has no client's round trip in it. */
		if (counter == c->counter && idle == c->idle + 1)
			sample_add(&c->pure, ts - c->seq_ns);
	} else if (c->have_tok) {
		c->epochs++; /* a new epoch or a gap: start a new chain */
	}
next:
	c->have_tok = true;
	c->epoch = epoch;
	c->seq = seq;
	c->counter = counter;
	c->idle = idle;
	c->seq_ns = ts;
}

static void on_packet(struct cap *c, const uint8_t *p, size_t len, uint64_t ts)
{
	if (ts < c->from_ns || ts >= c->to_ns || len < 20)
		return;
	size_t ihl = (size_t)(p[0] & 0xf) * 4;
	if (len < ihl + 8 + 4)
		return;
	const uint8_t *d = p + ihl + 8; /* the datagram */
	size_t dlen = len - ihl - 8;
	unsigned type = d[0] == 'R' && d[1] == 'G' && d[3] < TYPES ? d[3] : 0;
	c->count[type]++;
	if (type == 1 && dlen >= 16 + 20)
		on_token(c, d + 16, ts);
}

/* Kernel BPF: IPv4 UDP to a port in LO..HI, as sent (each datagram once:
 * on lo the tap sees it leave and arrive), first SNAP bytes. The socket is
 * bound to ETH_P_ALL because only those taps see outgoing packets. */
static int attach_filter(int fd, uint16_t lo, uint16_t hi)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 9),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 7),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 5),    /* UDP */
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),           /* X = IP header length */
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),            /* destination port */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, hi, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SNAP),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog);
}

static void drain(int fd, struct cap *c)
{
	static uint8_t buf[BATCH][SNAP];
	static char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	for (;;) {
		for (int k = 0; k < BATCH; k++) {
			iov[k] = (struct iovec){.iov_base = buf[k], .iov_len = SNAP};
			m[k].msg_hdr = (struct msghdr){.msg_iov = &iov[k], .msg_iovlen = 1,
						       .msg_control = ctl[k],
						       .msg_controllen = sizeof ctl[k]};
		}
		int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		for (int k = 0; k < n; k++) {
			uint64_t ts = 0;
			for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m[k].msg_hdr); cm;
			     cm = CMSG_NXTHDR(&m[k].msg_hdr, cm))
				if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPNS) {
					struct timespec t;
					memcpy(&t, CMSG_DATA(cm), sizeof t);
					ts = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
				}
			if (ts)
				on_packet(c, buf[k], m[k].msg_len < SNAP ? m[k].msg_len : SNAP, ts);
		}
		if (n < BATCH)
			return;
	}
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: wirecap PORT_LO PORT_HI SECONDS [READY_FILE]\n"
				"watches UDP datagrams to ports PORT_LO..PORT_HI on lo for SECONDS\n"
				"(READY_FILE is created once it watches); prints one JSON object\n");
		return 2;
	}
	long lo = atol(argv[1]), hi = atol(argv[2]);
	double secs = atof(argv[3]);
	if (lo < 1 || hi > 65535 || lo > hi || secs <= 0 || secs > 600) {
		fprintf(stderr, "wirecap: bad ports or seconds\n");
		return 2;
	}
	/* Protocol 0 first: nothing arrives before the filter is on. */
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "wirecap: AF_PACKET socket: %s (needs root or CAP_NET_RAW)\n",
			strerror(errno));
		return 77;
	}
	int one = 1, big = 64 << 20;
	if (attach_filter(fd, (uint16_t)lo, (uint16_t)hi) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
		fprintf(stderr, "wirecap: setsockopt: %s\n", strerror(errno));
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				 .sll_ifindex = (int)if_nametoindex("lo")};
	if (ll.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&ll, sizeof ll) != 0) {
		fprintf(stderr, "wirecap: bind lo: %s\n", strerror(errno));
		return 1;
	}
	struct cap c = {0};
	c.from_ns = ring_clock_ns(CLOCK_REALTIME);
	c.to_ns = c.from_ns + (uint64_t)(secs * 1e9);
	if (argc == 5) {
		int r = open(argv[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (r >= 0)
			close(r);
	}
	/* Wake 50 times a second, not per datagram: the watcher should cost
	 * the ring as little CPU as it can on a small machine. */
	struct timespec tick = {0, 20000000};
	while (ring_clock_ns(CLOCK_REALTIME) < c.to_ns + 5000000u) {
		nanosleep(&tick, NULL);
		drain(fd, &c);
	}
	drain(fd, &c);
	struct tpacket_stats st = {0};
	socklen_t stlen = sizeof st;
	getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &stlen);
	close(fd);

	double win = secs;
	double tok_span = c.hops ? (double)(c.last_tok_ns - c.first_tok_ns) / 1e9 : 0;
	uint64_t ring_total = 0;
	for (int t = 0; t < 8; t++)
		ring_total += c.count[t];
	printf("{\"seconds\":%.3f,\"drops\":%u,\"datagrams\":%llu,\"datagrams_per_s\":%.1f", win,
	       st.tp_drops, (unsigned long long)ring_total, (double)ring_total / win);
	for (int t = 0; t < TYPES; t++)
		printf(",\"%s\":%llu", type_name[t], (unsigned long long)c.count[t]);
	printf(",\"hops\":%llu,\"hops_per_s\":%.1f,\"grants\":%llu,\"grants_per_s\":%.1f,"
	       "\"token_resends\":%llu,\"chain_breaks\":%llu,\"misordered\":%llu",
	       (unsigned long long)c.hops, tok_span > 0 ? (double)c.hops / tok_span : 0,
	       (unsigned long long)c.grants, tok_span > 0 ? (double)c.grants / tok_span : 0,
	       (unsigned long long)c.retransmits, (unsigned long long)c.epochs,
	       (unsigned long long)c.misordered);
	if (c.hop.n) {
		struct sample *h = &c.hop;
		bench_sort(h->ns, h->n);
		double sum = 0;
		for (size_t k = 0; k < h->n; k++)
			sum += (double)h->ns[k];
		printf(",\"hop_p50_us\":%.2f,\"hop_p99_us\":%.2f,\"hop_mean_us\":%.2f,"
		       "\"hop_max_us\":%.2f",
		       (double)h->ns[h->n / 2] / 1e3, (double)h->ns[h->n * 99 / 100] / 1e3,
		       sum / (double)h->n / 1e3, (double)h->ns[h->n - 1] / 1e3);
	}
	printf(",\"pure_hops\":%zu", c.pure.n);
	if (c.pure.n) {
		struct sample *h = &c.pure;
		bench_sort(h->ns, h->n);
		double sum = 0;
		for (size_t k = 0; k < h->n; k++)
			sum += (double)h->ns[k];
		printf(",\"pure_hop_p50_us\":%.2f,\"pure_hop_p99_us\":%.2f,\"pure_hop_mean_us\":%.2f",
		       (double)h->ns[h->n / 2] / 1e3, (double)h->ns[h->n * 99 / 100] / 1e3,
		       sum / (double)h->n / 1e3);
	}
	if (c.grants)
		printf(",\"datagrams_per_grant\":%.2f", (double)ring_total / (double)c.grants);
	printf("}\n");
	free(c.hop.ns);
	free(c.pure.ns);
	return 0;
}
