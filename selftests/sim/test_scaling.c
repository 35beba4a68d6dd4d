// SPDX-License-Identifier: GPL-2.0
/*
 * coll-sim --scaling (tools/sim/scaling.c): the peers, handshakes and
 * receive memory it reports for plans whose shape is known: a ring talks
 * to 2 peers and connects p pairs, pairwise exchange to every peer, and
 * beyond SCALE_ALL_RANKS ranks the handshakes are an estimate, said so.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "sim.h"
#include "scaling.h"

/* @name's configuration among coll-sim -A's for AllReduce on @t; -1 if none. */
static int find(const struct kc_topo *t, u32 op, const char *name, struct kc_algo_cfg *out)
{
	struct kc_algo_cfg c[2 * KCOLL_ALGO_COUNT];
	const char *names[2 * KCOLL_ALGO_COUNT];
	u32 n = sim_candidates(t, op, c, names), i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name)) {
			*out = c[i];
			return 0;
		}
	return -1;
}

static int measure(u32 p, u32 op, const char *algo, struct scale_row *r)
{
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = 1u << 20 };
	struct kc_algo_cfg cfg;
	struct kc_topo t;
	char err[256];
	int ret;

	if (kc_topo_init_regular(&t, 1, p, 1))
		return -1;
	ret = find(&t, op, algo, &cfg);
	if (!ret)
		ret = scale_measure(&t, &d, &cfg, r, err, sizeof(err));
	kc_topo_free(&t);
	return ret;
}

TEST(a_ring_talks_to_two_and_connects_p_pairs)
{
	struct scale_row r;

	ASSERT_EQ(0, measure(16, KCOLL_OP_ALLREDUCE, "ring", &r));
	EXPECT_EQ(16, r.sampled);
	EXPECT_EQ(2, r.peers_min);
	EXPECT_EQ(2, r.peers_max);
	EXPECT_EQ(120, r.handshakes_now);
	EXPECT_EQ(16, r.handshakes_need);
	EXPECT_FALSE(r.need_estimated);
}

TEST(pairwise_needs_every_pair)
{
	struct scale_row r;

	ASSERT_EQ(0, measure(16, KCOLL_OP_ALLTOALL, "pairwise", &r));
	EXPECT_EQ(15, r.peers_min);
	EXPECT_EQ(15, r.peers_max);
	EXPECT_EQ(120, r.handshakes_need);
}

TEST(recursive_halving_doubling_talks_to_log_p)
{
	struct scale_row r;

	ASSERT_EQ(0, measure(64, KCOLL_OP_ALLREDUCE, "rhd", &r));
	EXPECT_EQ(6, r.peers_max);
	EXPECT_EQ(64 * 6 / 2, r.handshakes_need);
}

TEST(large_jobs_are_sampled_and_say_so)
{
	struct scale_row r;

	ASSERT_EQ(0, measure(4096, KCOLL_OP_ALLREDUCE, "ring", &r));
	EXPECT_EQ(SCALE_ALL_RANKS, r.sampled);
	EXPECT_TRUE(r.need_estimated);
	EXPECT_EQ(4096, r.handshakes_need);
	EXPECT_EQ(4096ull * 4095 / 2, r.handshakes_now);
}

TEST(a_connection_holds_its_receive_slots)
{
	/* 2 x 8 + 1 slots of 64 KiB + a 32-byte header, page aligned. */
	EXPECT_EQ(17ull * 69632, scale_conn_bytes());
}

TEST_HARNESS_MAIN
