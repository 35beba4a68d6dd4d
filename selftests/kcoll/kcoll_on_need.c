// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: with connect_on_need=1, a communicator connects only
 * the peers its operations use, when they first use them.
 *
 *  - ring_then_alltoall_connect_what_they_use: every rank of one flat
 *    server (the rank table's server ids set to 0, so that level0 spans
 *    all ranks) creates a communicator configured
 *    "allreduce=level0:ring/alltoall=level0:pairwise".  Right after
 *    creation it holds none but those a faster ring neighbour made for
 *    its own first AllReduce; after an exact Ring AllReduce
 *    exactly two, its ring neighbours, each with the time its handshake
 *    took; a second AllReduce connects nothing more; after an exact
 *    Pairwise AlltoAll it holds nranks - 1.  Counted through collctl's
 *    netlink client, as `collctl -j show` reports them; rank 0 prints
 *    what collctl show says after the AllReduce.  The kernel memory
 *    charged for it (KCOLL_A_COMM_MEM_BYTES) follows the connections:
 *    one equal share per peer connected on top of what it holds without
 *    any, the same after a second AllReduce.  With connect_on_need=0
 *    the same run checks the full mesh instead (nranks - 1 connections
 *    and all their memory from creation on): the creation times of both
 *    modes, side by side.
 *  - a_missing_peer_fails_the_first_operation: each rank alone makes two
 *    communicators of two ranks whose other rank is an address nobody
 *    answers, once as the connecting (higher) rank and once as the
 *    accepting one.  Creation returns at once; the first AllReduce is
 *    refused within the 2 s connect timeout (plus a second) with
 *    ETIMEDOUT, EHOSTUNREACH or ECONNREFUSED, and the communicator has
 *    failed: the next submission is refused as well.
 *
 * The runner sets connect_on_need (make check-vm-on-need:
 * --setup 'echo 1 >/sys/class/misc/kcoll/connect_on_need'); without it
 * the second test skips.  Any layout of 4 to 64 ranks; make check runs
 * 32 as 4 VMs x 8.  Each rank prints what it measured ("on-need:" lines).
 *
 *   kcoll-vm run -n 4 -k 8 --mem 768 --module kcoll.ko --setup '...' -- kcoll_on_need
 */
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "collctl_fmt.h"
#include "collctl_nl.h"

#define PORT_OFF	500
#define RING_COUNT	(1u << 14)	/* 64 KiB of fp32 per AllReduce */
#define A2A_COUNT	256u		/* fp32 per peer */
#define MISSING_CONNECT_MS	2000u

#define LOG(...) do { ksft_print_msg(__VA_ARGS__); fflush(stdout); } while (0)

static bool on_need_set(void)
{
	char v[16] = "";

	return !kc_file_read(KC_SYSFS "connect_on_need", v, sizeof(v)) && v[0] == '1';
}

static double now_ms(void)
{
	return kc_now_s() * 1e3;
}

/* What communicator @id holds on this rank, as collctl sees it. */
struct held {
	int up;			/* peers connected */
	__u64 which;		/* bitmap of them (ranks below 64) */
	/*
	 * Of them, those this rank's own submissions connected or waited for
	 * (a handshake time): unlike up, a faster peer connecting for its
	 * next operation does not change it.
	 */
	int used;
	__u32 min_us;		/* least handshake time among them (0: one has none) */
	__u32 max_us;		/* and the longest */
	__u64 mem;		/* kernel memory charged for it, worst case */
};

/* Fill @h for communicator @id (and print it on @show if not NULL); 0 or -1. */
static int held_get(__u64 id, FILE *show, struct held *h)
{
	char err[256];
	struct cc_comm c;
	struct cc_nl *nl;
	__u32 i;

	memset(h, 0, sizeof(*h));
	h->min_us = UINT32_MAX;
	if (cc_nl_open(&nl, err, sizeof(err)))
		return -1;
	if (cc_nl_get(nl, id, &c, err, sizeof(err))) {
		cc_nl_close(nl);
		return -1;
	}
	cc_nl_close(nl);
	for (i = 0; i < c.npeers; i++) {
		if (c.peers[i].rank == c.rank || c.peers[i].state != KCOLL_PEER_STATE_UP)
			continue;
		h->up++;
		h->which |= 1ull << c.peers[i].rank;
		h->used += c.peers[i].connect_us != 0;
		if (c.peers[i].connect_us < h->min_us)
			h->min_us = c.peers[i].connect_us;
		if (c.peers[i].connect_us > h->max_us)
			h->max_us = c.peers[i].connect_us;
	}
	h->mem = c.mem_bytes;
	if (show)
		cc_print_comm(show, &c);
	cc_comm_release(&c);
	return 0;
}

static int run_op(int fd, struct kcoll_submit *s)
{
	struct kcoll_completion cpl;

	if (submit(fd, s))
		return -errno;
	return wait_one(fd, &cpl);
}

TEST(ring_then_alltoall_connect_what_they_use)
{
	const char *algo = "allreduce=level0:ring/alltoall=level0:pairwise";
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank_size = sizeof(struct kcoll_rank), .eventfd = -1,
		.connect_timeout_ms = 60000, .algo = (uintptr_t)algo,
	};
	struct kcoll_submit s = { .dtype = KCOLL_FP32, .redop = KCOLL_SUM };
	bool on_need = on_need_set();
	struct held created, first, next, a2a;
	__u64 id = 0, ring;
	double t0, t_first, t_next, t_a2a, t_create;
	float *b, *sb, *rb;
	struct cluster c;
	__u32 i, p, n, r;
	int fd, all;

	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 4)
		SKIP(return, "needs 4 or more ranks (kcoll-vm -n 4 -k 8)");
	n = c.nranks;
	r = c.rank;
	all = (int)n - 1;
	/* One flat server: level0 is every rank, its Ring a single ring. */
	for (i = 0; i < n; i++)
		c.ranks[i].server_id = c.ranks[i].pod_id = 0;
	cc.rank = r;
	cc.nranks = n;
	cc.ranks = (uintptr_t)c.ranks;
	cc.timeout_ms = kc_op_timeout_ms();
	b = map_buf(RING_COUNT * sizeof(float));
	sb = map_buf((size_t)A2A_COUNT * n * sizeof(float));
	rb = map_buf((size_t)A2A_COUNT * n * sizeof(float));
	ASSERT_TRUE(b && sb && rb);
	fd = kc_open(_metadata);

	t0 = now_ms();
	ASSERT_EQ(0, kc_comm_create_named(fd, &cc, NULL, &id));
	t_create = now_ms() - t0;
	ASSERT_EQ(0, held_get(id, NULL, &created));
	ring = 1ull << ((r + 1) % n) | 1ull << ((r + n - 1) % n);
	/* On need, only a ring neighbour, faster to its first AllReduce, may have connected. */
	if (on_need) {
		EXPECT_EQ(0u, created.which & ~ring) TH_LOG("connected at creation: %#llx",
							     (unsigned long long)created.which);
	} else {
		EXPECT_EQ(all, created.up);
	}

	/* Ring AllReduce: its two neighbours, each with its handshake time. */
	s.op = KCOLL_OP_ALLREDUCE;
	s.count = RING_COUNT;
	s.send.addr = s.recv.addr = (uintptr_t)b;
	for (i = 0; i < RING_COUNT; i++)
		b[i] = (float)(r + 1 + i % 5);
	t0 = now_ms();
	ASSERT_EQ(0, run_op(fd, &s));
	t_first = now_ms() - t0;
	for (i = 0; i < RING_COUNT; i++)
		ASSERT_EQ((float)(n * (n + 1) / 2 + n * (i % 5)), b[i]) TH_LOG("element %u", i);
	ASSERT_EQ(0, held_get(id, r ? NULL : stdout, &first));
	if (on_need) {
		EXPECT_EQ(2, first.up);
		EXPECT_EQ(ring, first.which) TH_LOG("connected to %#llx, its ring neighbours are %#llx",
						    (unsigned long long)first.which,
						    (unsigned long long)ring);
		EXPECT_LT(0u, first.min_us) TH_LOG("a connection without its handshake time");
	} else {
		EXPECT_EQ(all, first.up);
		EXPECT_EQ(0u, first.min_us) TH_LOG("a handshake time without connect_on_need");
	}

	/* The next one connects nothing more. */
	t0 = now_ms();
	ASSERT_EQ(0, run_op(fd, &s));
	t_next = now_ms() - t0;
	ASSERT_EQ(0, held_get(id, NULL, &next));
	/* A faster peer may connect for the AlltoAll already: count ours. */
	EXPECT_EQ(on_need ? 2 : 0, next.used);
	EXPECT_EQ(first.mem, next.mem) TH_LOG("memory charged without a new connection");

	/* Pairwise AlltoAll: every peer. */
	s.op = KCOLL_OP_ALLTOALL;
	s.count = A2A_COUNT;
	s.send.addr = (uintptr_t)sb;
	s.recv.addr = (uintptr_t)rb;
	for (p = 0; p < n; p++)
		for (i = 0; i < A2A_COUNT; i++)
			sb[p * A2A_COUNT + i] = (float)(r * 1000 + p + i % 7);
	t0 = now_ms();
	ASSERT_EQ(0, run_op(fd, &s));
	t_a2a = now_ms() - t0;
	for (p = 0; p < n; p++)
		for (i = 0; i < A2A_COUNT; i++)
			ASSERT_EQ((float)(p * 1000 + r + i % 7), rb[p * A2A_COUNT + i])
				TH_LOG("from rank %u, element %u", p, i);
	ASSERT_EQ(0, held_get(id, NULL, &a2a));
	EXPECT_EQ(all, a2a.up);
	EXPECT_EQ(on_need ? all : 0, a2a.used);
	/*
	 * The memory charged: all of it from creation on for a full mesh;
	 * on need, what holds no connection plus one equal share per peer
	 * connected, 2 after the Ring and nranks - 1 after the AlltoAll.
	 */
	if (on_need) {
		EXPECT_LT(created.mem, first.mem);
		EXPECT_EQ((first.mem - created.mem) * (n - 1), (a2a.mem - created.mem) * 2)
			TH_LOG("charged %llu, %llu with 2 peers, %llu with %u",
			       (unsigned long long)created.mem, (unsigned long long)first.mem,
			       (unsigned long long)a2a.mem, n - 1);
	} else {
		EXPECT_EQ(created.mem, a2a.mem);
	}
	LOG("on-need: rank %u of %u, connect_on_need=%d: created in %.1f ms; Ring AllReduce first %.1f ms, next %.1f ms; AlltoAll %.1f ms; %d connections; kernel memory charged %llu, %llu with the Ring's, %llu with all\n",
	    r, n, on_need, t_create, t_first, t_next, t_a2a, a2a.up,
	    (unsigned long long)created.mem, (unsigned long long)first.mem,
	    (unsigned long long)a2a.mem);
	if (on_need)
		LOG("on-need: rank %u: waits for a connection (from the submission that needed it): the Ring's two %.1f-%.1f ms, all %d %.1f-%.1f ms\n",
		    r, first.min_us / 1e3, first.max_us / 1e3, a2a.up, a2a.min_us / 1e3,
		    a2a.max_us / 1e3);
	/*
	 * One more AllReduce before closing: it completes only once every
	 * rank has submitted it, after its own checks, so no peer closes
	 * (and leaves) while a slower one still counts its connections.
	 */
	s.op = KCOLL_OP_ALLREDUCE;
	s.count = RING_COUNT;
	s.send.addr = s.recv.addr = (uintptr_t)b;
	EXPECT_EQ(0, run_op(fd, &s));
	close(fd);
}

/*
 * A communicator of two ranks: this one, and at @missing (port @port) a
 * rank nobody answers for; this rank is @rank of them.
 */
static void missing_case(struct __test_metadata *_metadata, const struct cluster *c,
			 __u32 rank, const __u8 missing[4], __u16 port)
{
	struct kcoll_rank ranks[2] = {};
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = rank, .nranks = 2, .ranks = (uintptr_t)ranks,
		.rank_size = sizeof(struct kcoll_rank), .eventfd = -1,
		.connect_timeout_ms = MISSING_CONNECT_MS, .timeout_ms = 10000,
	};
	struct kcoll_submit s = {
		.op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
		.count = 1024,
	};
	double t0, t_create, t_fail;
	float *b = map_buf(1024 * sizeof(float));
	int fd, ret;

	ASSERT_NE(NULL, b);
	ranks[rank] = c->ranks[c->rank];
	ranks[rank].port += 1000;
	ranks[!rank].family = KCOLL_AF_INET;
	memcpy(ranks[!rank].addr, missing, 4);
	ranks[!rank].port = port;
	ranks[!rank].server_id = 1;
	s.send.addr = s.recv.addr = (uintptr_t)b;
	fd = kc_open(_metadata);
	t0 = now_ms();
	ASSERT_EQ(0, kc_comm_create_named(fd, &cc, NULL, NULL));
	t_create = now_ms() - t0;
	EXPECT_GT(1000.0, t_create) TH_LOG("creation waited %.0f ms for a peer", t_create);
	t0 = now_ms();
	ret = submit(fd, &s) ? -errno : 0;
	t_fail = now_ms() - t0;
	EXPECT_TRUE(ret == -ETIMEDOUT || ret == -EHOSTUNREACH || ret == -ECONNREFUSED)
		TH_LOG("first submission: %d (%s)", ret, strerror(-ret));
	EXPECT_GT(MISSING_CONNECT_MS + 1000.0, t_fail) TH_LOG("refused after %.0f ms", t_fail);
	EXPECT_LE(MISSING_CONNECT_MS * 0.9, t_fail) TH_LOG("gave up after %.0f ms", t_fail);
	/* The communicator failed: nothing more is taken. */
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_NE(0, errno);
	LOG("on-need: rank %u, as rank %u of a pair with a missing peer: created in %.1f ms, first submission refused after %.0f ms with %s\n",
	    c->rank, rank, t_create, t_fail, strerror(-ret));
	close(fd);
}

TEST(a_missing_peer_fails_the_first_operation)
{
	struct cluster c;
	__u8 missing[4];

	if (!on_need_set())
		SKIP(return, "needs connect_on_need=1 (make check-vm-on-need sets it)");
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 2)
		SKIP(return, "needs the virtual cluster's addresses (kcoll-vm -n 2 or more)");
	/* This node's subnet, a host number no node has. */
	memcpy(missing, c.ranks[c.rank].addr, 4);
	missing[3] = 250;
	/* Connecting to it (this rank higher), then waiting for it (lower). */
	missing_case(_metadata, &c, 1, missing, 16667);
	missing_case(_metadata, &c, 0, missing, 16667);
}

KC_HARNESS_MAIN
