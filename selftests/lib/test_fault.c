// SPDX-License-Identifier: GPL-2.0
/*
 * The words for a communicator's fault (lib/coll_fault.c), needing no
 * module: the headers of a disagreement decoded as the calls each rank
 * made, the algorithms named only when they differ, who found it, and
 * how a rank left; nothing at all for a fault of no kind, and a short
 * buffer cut but terminated.
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include <string.h>

#include "kselftest_harness.h"
#include "coll.h"
#include "coll_fault.h"

/* An operation header as algo/kc_exec.c writes it (KC_HDR_*). */
static void hdr(uint8_t h[32], unsigned int op, unsigned int dtype, unsigned int redop,
		unsigned int root, uint32_t num, uint64_t count, unsigned int algo0)
{
	unsigned int i;

	memset(h, 0, 32);
	h[0] = 2;
	h[1] = 32;
	h[2] = op;
	h[3] = dtype;
	h[4] = redop;
	for (i = 0; i < 4; i++) {
		h[8 + i] = (uint8_t)(root >> (8 * i));
		h[12 + i] = (uint8_t)(num >> (8 * i));
	}
	for (i = 0; i < 8; i++)
		h[16 + i] = (uint8_t)(count >> (8 * i));
	h[24] = algo0;
}

static const char *node(uint32_t rank, void *arg)
{
	(void)arg;
	return rank == 3 ? "10.0.0.4" : NULL;
}

static const char *algo_name(uint32_t id)
{
	return id == 1 ? "mesh" : id == 2 ? "ring" : "?";
}

TEST(mismatch_names_both_calls_and_the_operation)
{
	struct kcoll_fault f = { .size = sizeof(f), .kind = KCOLL_FAULT_MISMATCH, .op_id = 17,
				 .status = -EPROTO, .rank = 3, .reporter = 0 };
	char buf[384];
	size_t n;

	hdr(f.fp_rank, COLL_OP_ALLGATHER, COLL_FLOAT, 0, 0, 17, 262144, 1);
	hdr(f.fp_mine, COLL_OP_ALLREDUCE, COLL_FLOAT, COLL_SUM, 0, 17, 1048576, 1);
	n = coll_fault_format(&f, 0, node, NULL, algo_name, buf, sizeof(buf));
	EXPECT_EQ(strlen(buf), n);
	EXPECT_STREQ("rank 3 called allgather(float, 262144) as operation 17; "
		     "this rank called allreduce(float, sum, 1048576)", buf);
}

TEST(a_rank_told_by_another_says_who_found_it)
{
	struct kcoll_fault f = { .size = sizeof(f), .kind = KCOLL_FAULT_MISMATCH, .op_id = 5,
				 .status = -EPROTO, .rank = 1, .reporter = 2 };
	char buf[384];

	hdr(f.fp_rank, COLL_OP_BROADCAST, COLL_INT32, 0, 1, 5, 100, 0);
	hdr(f.fp_mine, COLL_OP_BROADCAST, COLL_INT32, 0, 0, 5, 100, 0);
	coll_fault_format(&f, 0, NULL, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 called broadcast(int32, root 1, 100) as operation 5; "
		     "this rank called broadcast(int32, root 0, 100) (rank 2 found the difference)",
		     buf);
}

TEST(algorithms_are_named_only_when_they_differ)
{
	struct kcoll_fault f = { .size = sizeof(f), .kind = KCOLL_FAULT_MISMATCH, .op_id = 9,
				 .status = -EPROTO, .rank = 1, .reporter = 0 };
	char buf[384];

	hdr(f.fp_rank, COLL_OP_ALLREDUCE, COLL_FLOAT, COLL_SUM, 0, 9, 64, 2);
	hdr(f.fp_mine, COLL_OP_ALLREDUCE, COLL_FLOAT, COLL_SUM, 0, 9, 64, 1);
	coll_fault_format(&f, 0, NULL, NULL, algo_name, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 called allreduce(float, sum, 64) with ring, -, - on levels 0-2 "
		     "as operation 9; this rank called allreduce(float, sum, 64) with mesh, -, - "
		     "on levels 0-2", buf);
	coll_fault_format(&f, 0, NULL, NULL, NULL, buf, sizeof(buf));
	EXPECT_NE(NULL, strstr(buf, "with algorithm 2, -, -")) TH_LOG("%s", buf);
}

TEST(a_rank_that_left_is_named_with_why)
{
	struct kcoll_fault f = { .size = sizeof(f), .kind = KCOLL_FAULT_PEER_SIGNAL, .op_id = 2,
				 .status = -ECONNRESET, .rank = 3, .reporter = 3, .pid = 171,
				 .code = 9 };
	char buf[384];

	coll_fault_format(&f, 0, node, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 3 (pid 171 on 10.0.0.4) was killed by signal 9 (Killed) "
		     "during operation 2", buf);
	f.kind = KCOLL_FAULT_PEER_EXIT;
	f.code = 3;
	f.rank = 1;
	coll_fault_format(&f, 0, node, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 (pid 171) exited with status 3 during operation 2 (told by rank 3)",
		     buf);
	f.reporter = 0;		/* this rank */
	f.kind = KCOLL_FAULT_PEER_LOST;
	f.pid = 0;
	coll_fault_format(&f, 0, node, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 disconnected without notice (its node, network or module is gone) "
		     "during operation 2", buf);
	/* Found by the transport: sends it never acknowledged. */
	f.status = -EHOSTUNREACH;
	coll_fault_format(&f, 0, node, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 stopped acknowledging (its node or the network to it is gone) "
		     "during operation 2", buf);
	/* Its own communicator failed (an abort): alive, but out of it. */
	f.kind = KCOLL_FAULT_PEER_FAILED;
	f.code = ECANCELED;
	f.status = -ECONNRESET;
	coll_fault_format(&f, 0, node, NULL, NULL, buf, sizeof(buf));
	EXPECT_STREQ("rank 1 failed on its own (ECANCELED: Operation canceled) during operation 2",
		     buf);
}

TEST(no_kind_says_nothing_and_short_buffers_stay_terminated)
{
	struct kcoll_fault f = { .size = sizeof(f), .kind = KCOLL_FAULT_NONE, .status = -ETIMEDOUT };
	char buf[16];

	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(0, coll_fault_format(&f, 0, NULL, NULL, NULL, buf, sizeof(buf)));
	EXPECT_EQ('\0', buf[0]);
	f.kind = KCOLL_FAULT_PEER_CLOSE;
	f.rank = 12;
	EXPECT_LT(sizeof(buf), coll_fault_format(&f, 0, NULL, NULL, NULL, buf, sizeof(buf)));
	EXPECT_EQ(sizeof(buf) - 1, strlen(buf));
	EXPECT_STREQ("rank 12 closed ", buf);
}

TEST_HARNESS_MAIN
