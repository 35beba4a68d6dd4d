// SPDX-License-Identifier: GPL-2.0
/*
 * The executor's event contract, driven step by step: two executors joined
 * by a loopback the test pumps itself, so every interleaving is chosen,
 * not left to threads.  What matters here is a peer that leaves: a rank
 * that finished first and closed must not fail the one still collecting
 * its last credits, and a rank that still needs the peer must fail.
 */
#include <stdio.h>
#include <stdlib.h>
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kc_exec.h"
#include "kc_coll.h"

#define LB_COUNT	100
#define LB_QMAX		256

struct lb_msg {
	u32 tag;
	u32 len;
	unsigned char data[];
};

struct lb_world;

struct lb_rank {
	struct lb_world *w;
	u32 me;
	struct kc_plan *plan;
	struct kc_exec ex;
	s32 buf[LB_COUNT];
	struct lb_msg *q[LB_QMAX];	/* data in flight to this rank, FIFO */
	u32 qhead, qn;
	u32 credits;			/* credits in flight to this rank */
};

struct lb_world {
	struct lb_rank rk[2];
	/* once rank 1 has finished, credits on their way to rank 0 are lost */
	bool lose_late_credits;
};

static int lb_send(void *ctx, u32 peer, u32 tag, u8 buf, u64 off, const void *data, u32 len)
{
	struct lb_rank *me = ctx;
	struct lb_rank *to = &me->w->rk[peer];
	struct lb_msg *m;

	if (to->qn == LB_QMAX)
		return -ENOBUFS;
	m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	m->tag = tag;
	m->len = len;
	if (len)
		memcpy(m->data, data, len);
	to->q[(to->qhead + to->qn++) % LB_QMAX] = m;
	return 0;
}

/* Consuming a message frees its slot and credits the sender. */
static void lb_release(void *ctx, u32 peer, void *slot)
{
	struct lb_rank *me = ctx;

	free(slot);
	me->w->rk[peer].credits++;
}

static const struct kc_xport_ops lb_ops = { .send = lb_send, .release = lb_release };

/* Deliver everything deliverable until nothing moves. */
static void lb_pump(struct lb_world *w)
{
	bool moved = true;
	u32 r;

	while (moved) {
		moved = false;
		for (r = 0; r < 2; r++) {
			struct lb_rank *rk = &w->rk[r];

			if (rk->qn) {
				struct lb_msg *m = rk->q[rk->qhead];

				rk->qhead = (rk->qhead + 1) % LB_QMAX;
				rk->qn--;
				kc_exec_recv(&rk->ex, 1 - r, m->tag, m->data, m->len, m);
				moved = true;
			}
			if (rk->credits) {
				rk->credits--;
				if (!(r == 0 && w->lose_late_credits &&
				      kc_exec_status(&w->rk[1].ex) == 0))
					kc_exec_send_done(&rk->ex, 1 - r);
				moved = true;
			}
		}
	}
}

/* Build and start a two-rank Ring AllReduce (int32 sum) on fresh buffers. */
static int lb_start(struct lb_world *w, struct kc_topo *topo)
{
	struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_RING, KCOLL_ALGO_RING,
					     KCOLL_ALGO_RING } };
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
				 .redop = KCOLL_SUM, .count = LB_COUNT };
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 7 };
	u32 r, i;
	int ret;

	memset(w, 0, sizeof(*w));
	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];
		void *bufs[KC_BUF_COUNT] = { 0 };

		rk->w = w;
		rk->me = r;
		for (i = 0; i < LB_COUNT; i++)
			rk->buf[i] = (s32)(r * 1000 + i);
		ret = kc_plan_build(topo, r, &op, &cfg, &rk->plan, NULL, 0);
		if (ret)
			return ret;
		bufs[KC_BUF_SEND] = rk->buf;
		bufs[KC_BUF_RECV] = rk->buf;
		ret = kc_exec_init(&rk->ex, rk->plan, bufs, &ec, &lb_ops, rk);
		if (ret)
			return ret;
	}
	for (r = 0; r < 2; r++)
		kc_exec_start(&w->rk[r].ex);
	return 0;
}

static void lb_end(struct lb_world *w)
{
	u32 r;

	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];

		kc_exec_destroy(&rk->ex);
		kc_plan_free(rk->plan);
		while (rk->qn) {
			free(rk->q[rk->qhead]);
			rk->qhead = (rk->qhead + 1) % LB_QMAX;
			rk->qn--;
		}
	}
}

FIXTURE(departure) {
	struct kc_topo topo;
	struct lb_world w;
};

FIXTURE_SETUP(departure)
{
	ASSERT_EQ(0, kc_topo_init(&self->topo, 2, NULL, NULL, NULL, 0));
}

FIXTURE_TEARDOWN(departure)
{
	lb_end(&self->w);
	kc_topo_free(&self->topo);
}

/* The peer finished and left before its last credit reached us. */
TEST_F(departure, finished_peer_leaving_with_credits_owed_is_forgiven)
{
	struct lb_world *w = &self->w;
	u32 i;

	ASSERT_EQ(0, lb_start(w, &self->topo));
	w->lose_late_credits = true;
	lb_pump(w);
	ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex));
	/* the scenario under test: rank 0 waits for nothing but credits */
	ASSERT_EQ(-EINPROGRESS, kc_exec_status(&w->rk[0].ex));
	EXPECT_EQ(0, kc_exec_peer_gone(&w->rk[0].ex, 1, -ECONNRESET));
	for (i = 0; i < LB_COUNT; i++)
		ASSERT_EQ((s32)(1000 + 2 * i), w->rk[0].buf[i]) TH_LOG("element %u", i);
}

/* The peer left before sending what we need: the operation fails. */
TEST_F(departure, peer_leaving_with_data_owed_fails_the_operation)
{
	struct lb_world *w = &self->w;

	ASSERT_EQ(0, lb_start(w, &self->topo));
	EXPECT_EQ(-ECONNRESET, kc_exec_peer_gone(&w->rk[0].ex, 1, -ECONNRESET));
	/* later events change nothing */
	lb_pump(w);
	EXPECT_EQ(-ECONNRESET, kc_exec_status(&w->rk[0].ex));
}

/* A rank the operation never talks to may leave without harm. */
TEST(peer_outside_the_plan_does_not_matter)
{
	struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_RING, KCOLL_ALGO_RING,
					     KCOLL_ALGO_RING } };
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
				 .redop = KCOLL_SUM, .count = LB_COUNT };
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 1 };
	void *bufs[KC_BUF_COUNT] = { 0 };
	struct kc_plan *plan;
	struct kc_topo topo;
	struct kc_exec ex;
	s32 buf[LB_COUNT] = { 0 };
	u32 i;

	ASSERT_EQ(0, kc_topo_init(&topo, 4, NULL, NULL, NULL, 0));
	ASSERT_EQ(0, kc_plan_build(&topo, 0, &op, &cfg, &plan, NULL, 0));
	/* a ring of four: rank 0 talks to ranks 1 and 3 only */
	for (i = 0; i < plan->npeers; i++)
		ASSERT_NE(2, plan->peers[i]);
	bufs[KC_BUF_SEND] = buf;
	bufs[KC_BUF_RECV] = buf;
	ASSERT_EQ(0, kc_exec_init(&ex, plan, bufs, &ec, &lb_ops, NULL));
	EXPECT_EQ(-EINPROGRESS, kc_exec_peer_gone(&ex, 2, -ECONNRESET));
	EXPECT_EQ(-ECONNRESET, kc_exec_peer_gone(&ex, 1, -ECONNRESET));
	kc_exec_destroy(&ex);
	kc_plan_free(plan);
	kc_topo_free(&topo);
}

TEST_HARNESS_MAIN
