// SPDX-License-Identifier: GPL-2.0
/*
 * The executor's event contract, driven step by step: two executors joined
 * by a loopback the test pumps itself, so every interleaving is chosen,
 * not left to threads.  What matters here is a peer that leaves: a rank
 * that finished first and closed must not fail the one still collecting
 * its last credits, and a rank that still needs the peer must fail.  And
 * the header of the first message to each peer: its layout on the wire
 * (kc_exec.h), and that a difference ends the operation before the
 * receiver consumes anything.  And what a stuck operation waits for
 * (kc_exec_waiting()), which the module's stall report names.
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
#define LB_LOG		64

struct lb_msg {
	u32 tag;
	u32 len;
	unsigned char data[];
};

struct lb_world;

struct lb_rank {
	struct lb_world *w;
	u32 me;
	struct kc_op_desc op;		/* this rank's arguments (lb_init: the default) */
	u64 a2av[4][2];			/* AlltoAllv counts and displacements */
	struct kc_plan *plan;
	struct kc_exec ex;
	s32 buf[LB_COUNT];
	s32 rbuf[LB_COUNT];		/* receive buffer of AlltoAllv */
	struct lb_msg *q[LB_QMAX];	/* data in flight to this rank, FIFO */
	u32 qhead, qn;
	u32 credits;			/* credits in flight to this rank */
};

/* One message as it went out: who sent it, its sizes, its first bytes. */
struct lb_sent {
	u32 from;
	u32 hdr_len;
	u32 len;			/* data bytes */
	unsigned char head[KC_HDR_BYTES];
};

struct lb_world {
	struct lb_rank rk[2];
	/* once rank 1 has finished, credits on their way to rank 0 are lost */
	bool lose_late_credits;
	/* rank 0's first message arrives with this byte flipped (0: none) */
	u32 corrupt_at;
	u32 algo;			/* every level's (lb_init: Ring) */
	struct lb_sent log[LB_LOG];	/* the first messages sent */
	u32 nlog;
};

static int lb_send(void *ctx, u32 peer, u32 tag, const void *hdr, u32 hdr_len, u8 buf, u64 off,
		   const void *data, u32 len)
{
	struct lb_rank *me = ctx;
	struct lb_world *w = me->w;
	struct lb_rank *to = &w->rk[peer];
	struct lb_msg *m;

	if (to->qn == LB_QMAX)
		return -ENOBUFS;
	m = malloc(sizeof(*m) + hdr_len + len);
	if (!m)
		return -ENOMEM;
	m->tag = tag;
	m->len = hdr_len + len;
	if (hdr_len)
		memcpy(m->data, hdr, hdr_len);
	if (len)
		memcpy(m->data + hdr_len, data, len);
	if (w->nlog < LB_LOG) {
		struct lb_sent *l = &w->log[w->nlog++];

		l->from = me->me;
		l->hdr_len = hdr_len;
		l->len = len;
		memcpy(l->head, m->data, m->len < KC_HDR_BYTES ? m->len : KC_HDR_BYTES);
	}
	if (w->corrupt_at && me->me == 0 && !kc_tag_msg_seq(tag))
		m->data[w->corrupt_at - 1] ^= 0x01;
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

/* Both ranks: an int32 sum AllReduce of LB_COUNT elements, in place. */
static void lb_init(struct lb_world *w)
{
	u32 r, i;

	memset(w, 0, sizeof(*w));
	w->algo = KCOLL_ALGO_RING;
	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];

		rk->w = w;
		rk->me = r;
		rk->op = (struct kc_op_desc){ .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
					      .redop = KCOLL_SUM, .count = LB_COUNT };
		for (i = 0; i < LB_COUNT; i++)
			rk->buf[i] = (s32)(r * 1000 + i);
	}
}

/* Build both ranks' Ring plans from their arguments and start them. */
static int lb_go(struct lb_world *w, struct kc_topo *topo)
{
	struct kc_algo_cfg cfg = { .algo = { w->algo, w->algo, w->algo } };
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 7, .op_num = 17 };
	u32 r;
	int ret;

	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];
		void *bufs[KC_BUF_COUNT] = { 0 };

		ret = kc_plan_build(topo, r, &rk->op, &cfg, &rk->plan, NULL, 0);
		if (ret)
			return ret;
		bufs[KC_BUF_SEND] = rk->buf;
		bufs[KC_BUF_RECV] = rk->op.op == KCOLL_OP_ALLTOALLV ? rk->rbuf : rk->buf;
		ec.desc = &rk->op;
		ret = kc_exec_init(&rk->ex, rk->plan, bufs, &ec, &lb_ops, rk);
		if (ret)
			return ret;
	}
	for (r = 0; r < 2; r++)
		kc_exec_start(&w->rk[r].ex);
	return 0;
}

static int lb_start(struct lb_world *w, struct kc_topo *topo)
{
	lb_init(w);
	return lb_go(w, topo);
}

static void lb_end(struct lb_world *w)
{
	u32 r;

	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];

		if (rk->plan)
			kc_exec_destroy(&rk->ex);
		kc_plan_free(rk->plan);
		rk->plan = NULL;
		while (rk->qn) {
			free(rk->q[rk->qhead]);
			rk->qhead = (rk->qhead + 1) % LB_QMAX;
			rk->qn--;
		}
	}
}

/* Little-endian fields of a logged header. */
static u64 lb_le(const unsigned char *p, u32 n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
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

/* Deliver the data queued to rank @r now, and nothing else. */
static void lb_deliver(struct lb_world *w, u32 r)
{
	struct lb_rank *rk = &w->rk[r];

	while (rk->qn) {
		struct lb_msg *m = rk->q[rk->qhead];

		rk->qhead = (rk->qhead + 1) % LB_QMAX;
		rk->qn--;
		kc_exec_recv(&rk->ex, 1 - r, m->tag, m->data, m->len, m);
	}
}

/* A receive whose message has not come: the peer and the message are named. */
TEST_F(departure, waiting_names_the_message_not_arrived)
{
	struct lb_world *w = &self->w;
	u32 peer, seq, round, round0;
	u64 before;

	ASSERT_EQ(0, lb_start(w, &self->topo));
	/* rank 1's first messages are on their way, not delivered */
	EXPECT_EQ(KC_WAIT_RECV, kc_exec_waiting(&w->rk[0].ex, &peer, &seq, &round));
	EXPECT_EQ(1, peer);
	EXPECT_EQ(0, seq);
	round0 = round;
	EXPECT_EQ(0, w->rk[0].ex.progress);
	/* the window's worth arrives; rank 1 gets no credit, so sends no more */
	lb_deliver(w, 0);
	EXPECT_EQ(2, w->rk[0].ex.progress);
	EXPECT_EQ(KC_WAIT_RECV, kc_exec_waiting(&w->rk[0].ex, &peer, &seq, &round));
	EXPECT_EQ(1, peer);
	EXPECT_EQ(2, seq);
	EXPECT_EQ(round0, round);	/* the reduce-scatter's 4 messages */
	before = w->rk[0].ex.progress;
	lb_pump(w);
	EXPECT_LT(before, w->rk[0].ex.progress);
	ASSERT_EQ(0, kc_exec_status(&w->rk[0].ex));
	EXPECT_EQ(KC_WAIT_NONE, kc_exec_waiting(&w->rk[0].ex, &peer, &seq, &round));
	EXPECT_EQ(U32_MAX, peer);
}

/* Only credits outstanding: the oldest unconsumed message is named. */
TEST_F(departure, waiting_names_the_credit_not_returned)
{
	struct lb_world *w = &self->w;
	u32 peer, seq, round;

	ASSERT_EQ(0, lb_start(w, &self->topo));
	w->lose_late_credits = true;
	lb_pump(w);
	ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex));
	ASSERT_EQ(-EINPROGRESS, kc_exec_status(&w->rk[0].ex));
	EXPECT_EQ(KC_WAIT_CREDIT, kc_exec_waiting(&w->rk[0].ex, &peer, &seq, &round));
	EXPECT_EQ(1, peer);
	EXPECT_GT(8, seq);	/* 400 bytes each way in 64-byte messages */
	EXPECT_LT(0, round);
}

/* A rank the operation never talks to may leave without harm. */
TEST(peer_outside_the_plan_does_not_matter)
{
	struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_RING, KCOLL_ALGO_RING,
					     KCOLL_ALGO_RING } };
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
				 .redop = KCOLL_SUM, .count = LB_COUNT };
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 1, .desc = &op };
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

FIXTURE(hdr) {
	struct kc_topo topo;
	struct lb_world w;
};

FIXTURE_SETUP(hdr)
{
	ASSERT_EQ(0, kc_topo_init(&self->topo, 2, NULL, NULL, NULL, 0));
	lb_init(&self->w);
}

FIXTURE_TEARDOWN(hdr)
{
	lb_end(&self->w);
	kc_topo_free(&self->topo);
}

/* The first message to each peer, and only it, starts with the documented header. */
TEST_F(hdr, first_message_to_each_peer_carries_the_header)
{
	struct lb_world *w = &self->w;
	u32 i, firsts[2] = { 0, 0 };

	w->rk[0].op.root = 1;		/* not rooted: travels as 0 */
	w->rk[1].op.root = 0;
	ASSERT_EQ(0, lb_go(w, &self->topo));
	lb_pump(w);
	ASSERT_EQ(0, kc_exec_status(&w->rk[0].ex));
	ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex));
	ASSERT_LT(2, w->nlog);
	for (i = 0; i < w->nlog; i++) {
		const struct lb_sent *l = &w->log[i];
		const unsigned char *h = l->head;
		u32 b;

		if (firsts[l->from]++) {
			EXPECT_EQ(0, l->hdr_len) TH_LOG("message %u of rank %u", i, l->from);
			continue;
		}
		ASSERT_EQ(KC_HDR_BYTES, l->hdr_len);
		ASSERT_EQ(32, KC_HDR_BYTES);
		EXPECT_EQ(2, h[0]);			/* version */
		EXPECT_EQ(32, h[1]);			/* size */
		EXPECT_EQ(KCOLL_OP_ALLREDUCE, h[2]);
		EXPECT_EQ(KCOLL_INT32, h[3]);
		EXPECT_EQ(KCOLL_SUM, h[4]);
		EXPECT_EQ(0, lb_le(h + 8, 4));		/* root */
		EXPECT_EQ(LB_COUNT, lb_le(h + 16, 8));	/* count */
		for (b = 5; b < 8; b++)
			EXPECT_EQ(0, h[b]);
		EXPECT_EQ(17, lb_le(h + 12, 4));	/* operation number */
		for (b = 0; b < KCOLL_LEVEL_COUNT; b++)	/* algorithm per level */
			EXPECT_EQ(w->rk[l->from].plan->algo[b], h[24 + b]);
		for (b = 24 + KCOLL_LEVEL_COUNT; b < 32; b++)
			EXPECT_EQ(0, h[b]);
	}
	EXPECT_EQ(1, firsts[0] && firsts[1]);
	/* data as without a header: bytes_sent counts data only */
	for (i = 0; i < LB_COUNT; i++)
		ASSERT_EQ((s32)(1000 + 2 * i), w->rk[0].buf[i]) TH_LOG("element %u", i);
	EXPECT_EQ(kc_plan_bytes_sent(w->rk[0].plan), w->rk[0].ex.bytes_sent);
	EXPECT_EQ(kc_plan_bytes_received(w->rk[1].plan), w->rk[1].ex.bytes_received);
}

/*
 * A byte changed anywhere in the header: -EPROTO before any data is used,
 * and the receiver keeps what the peer sent.  An algorithm byte counts
 * only where both ranks use the level (one that is 0 on either side is
 * no difference).
 */
TEST_F(hdr, any_header_difference_fails_before_consuming)
{
	struct lb_world *w = &self->w;
	u32 at, i;

	for (at = 1; at <= KC_HDR_BYTES; at++) {
		u32 b = at - 1;
		bool lenient = false;

		lb_end(w);
		lb_init(w);
		w->corrupt_at = at;
		ASSERT_EQ(0, lb_go(w, &self->topo));
		if (b >= KC_HDR_OFF_ALGO && b < KC_HDR_OFF_ALGO + KCOLL_LEVEL_COUNT) {
			u32 a = w->rk[0].plan->algo[b - KC_HDR_OFF_ALGO];

			lenient = !a || !(a ^ 1);
		}
		lb_pump(w);
		if (lenient) {
			ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex)) TH_LOG("byte %u", b);
			continue;
		}
		ASSERT_EQ(-EPROTO, kc_exec_status(&w->rk[1].ex)) TH_LOG("byte %u", b);
		EXPECT_EQ(0, w->rk[1].ex.bytes_received) TH_LOG("byte %u", b);
		EXPECT_EQ(0, w->rk[1].ex.bad_peer) TH_LOG("byte %u", b);
		EXPECT_EQ(2 ^ (b == 0), w->rk[1].ex.bad_hdr[0]) TH_LOG("byte %u", b);
		EXPECT_EQ(KCOLL_OP_ALLREDUCE ^ (b == 2), w->rk[1].ex.bad_hdr[2]) TH_LOG("byte %u", b);
		/* rank 1 reduced nothing into its buffer */
		for (i = 0; i < LB_COUNT; i++)
			ASSERT_EQ((s32)(1000 + i), w->rk[1].buf[i]) TH_LOG("byte %u elem %u", b, i);
	}
}

/* Ranks that differ in any argument fail; SUM against MAX is no exception. */
TEST_F(hdr, disagreeing_arguments_fail_with_eproto)
{
	static const struct { const char *what; u32 dtype, redop; u64 count; } d[] = {
		{ "redop", KCOLL_INT32, KCOLL_MAX, LB_COUNT },
		{ "avg", KCOLL_INT32, KCOLL_AVG, LB_COUNT },
		{ "dtype", KCOLL_UINT32, KCOLL_SUM, LB_COUNT },
		{ "dtype", KCOLL_FP32, KCOLL_SUM, LB_COUNT },
		{ "count", KCOLL_INT32, KCOLL_SUM, LB_COUNT - 1 },
	};
	struct lb_world *w = &self->w;
	u32 k;

	for (k = 0; k < ARRAY_SIZE(d); k++) {
		lb_end(w);
		lb_init(w);
		w->rk[1].op.dtype = d[k].dtype;
		w->rk[1].op.redop = d[k].redop;
		w->rk[1].op.count = d[k].count;
		ASSERT_EQ(0, lb_go(w, &self->topo));
		lb_pump(w);
		EXPECT_EQ(-EPROTO, kc_exec_status(&w->rk[0].ex)) TH_LOG("%s", d[k].what);
		EXPECT_EQ(-EPROTO, kc_exec_status(&w->rk[1].ex)) TH_LOG("%s", d[k].what);
	}
}

/* AlltoAllv: the sender writes scounts[peer], the receiver expects rcounts[from]. */
TEST_F(hdr, alltoallv_header_carries_the_pair_count)
{
	struct lb_world *w = &self->w;
	u32 r, i;

	for (r = 0; r < 2; r++) {
		struct lb_rank *rk = &w->rk[r];

		/* rank 0 sends 3 elements to rank 1, rank 1 sends 5 to rank 0 */
		rk->a2av[0][0] = r ? 5 : 2;	/* scounts */
		rk->a2av[0][1] = r ? 1 : 3;
		rk->a2av[1][0] = 0;		/* sdispls */
		rk->a2av[1][1] = 10;
		rk->a2av[2][0] = r ? 3 : 2;	/* rcounts */
		rk->a2av[2][1] = r ? 1 : 5;
		rk->a2av[3][0] = 0;		/* rdispls */
		rk->a2av[3][1] = 10;
		rk->op = (struct kc_op_desc){ .op = KCOLL_OP_ALLTOALLV, .dtype = KCOLL_INT32,
					      .scounts = rk->a2av[0], .sdispls = rk->a2av[1],
					      .rcounts = rk->a2av[2], .rdispls = rk->a2av[3] };
	}
	w->algo = KCOLL_ALGO_MESH;
	ASSERT_EQ(0, lb_go(w, &self->topo));
	lb_pump(w);
	ASSERT_EQ(0, kc_exec_status(&w->rk[0].ex));
	ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex));
	for (i = 0; i < w->nlog; i++) {
		if (!w->log[i].hdr_len)
			continue;
		EXPECT_EQ(KCOLL_OP_ALLTOALLV, w->log[i].head[2]);
		EXPECT_EQ(w->log[i].from ? 5 : 3, lb_le(w->log[i].head + 16, 8));
	}
	for (i = 0; i < 5; i++)
		ASSERT_EQ(w->rk[1].buf[i], w->rk[0].rbuf[10 + i]);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(w->rk[0].buf[10 + i], w->rk[1].rbuf[i]);

	/* rank 1 expects 4 from rank 0, which sends 3: only rank 1 sees it */
	lb_end(w);
	for (r = 0; r < 2; r++)
		memset(w->rk[r].rbuf, 0, sizeof(w->rk[r].rbuf));
	w->nlog = 0;
	w->rk[1].a2av[2][0] = 4;
	ASSERT_EQ(0, lb_go(w, &self->topo));
	lb_pump(w);
	EXPECT_EQ(-EPROTO, kc_exec_status(&w->rk[1].ex));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, w->rk[1].rbuf[i]) TH_LOG("element %u", i);
	/* rank 0 got all it expected; its credits wait for the peer to go */
	EXPECT_EQ(0, kc_exec_peer_gone(&w->rk[0].ex, 1, -ECONNRESET));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(w->rk[1].buf[i], w->rk[0].rbuf[10 + i]);
}

/* A Barrier's empty SYNC messages carry the header too. */
TEST_F(hdr, barrier_sync_message_carries_the_header)
{
	struct lb_world *w = &self->w;
	u32 i, n = 0;

	w->rk[0].op = (struct kc_op_desc){ .op = KCOLL_OP_BARRIER };
	w->rk[1].op = w->rk[0].op;
	ASSERT_EQ(0, lb_go(w, &self->topo));
	lb_pump(w);
	ASSERT_EQ(0, kc_exec_status(&w->rk[0].ex));
	ASSERT_EQ(0, kc_exec_status(&w->rk[1].ex));
	for (i = 0; i < w->nlog; i++) {
		if (!w->log[i].hdr_len)
			continue;
		n++;
		EXPECT_EQ(0, w->log[i].len);
		EXPECT_EQ(KCOLL_OP_BARRIER, w->log[i].head[2]);
		EXPECT_EQ(0, lb_le(w->log[i].head + 16, 8));
	}
	EXPECT_EQ(2, n);
	/* and a Barrier against an AllReduce of one element fails on both */
	lb_end(w);
	w->nlog = 0;
	w->rk[1].op = (struct kc_op_desc){ .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
					   .count = 1 };
	ASSERT_EQ(0, lb_go(w, &self->topo));
	lb_pump(w);
	EXPECT_EQ(-EPROTO, kc_exec_status(&w->rk[0].ex));
	EXPECT_EQ(-EPROTO, kc_exec_status(&w->rk[1].ex));
}

/* A data-moving executor needs the operation's description for the header. */
TEST_F(hdr, executor_without_description_is_einval)
{
	struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_RING, KCOLL_ALGO_RING,
					     KCOLL_ALGO_RING } };
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 1 };
	struct lb_rank *rk = &self->w.rk[0];
	void *bufs[KC_BUF_COUNT] = { rk->buf, rk->buf };
	struct kc_exec ex;

	ASSERT_EQ(0, kc_plan_build(&self->topo, 0, &rk->op, &cfg, &rk->plan, NULL, 0));
	EXPECT_EQ(-EINVAL, kc_exec_init(&ex, rk->plan, bufs, &ec, &lb_ops, rk));
	ec.flags = KC_EXEC_F_NODATA;
	ASSERT_EQ(0, kc_exec_init(&ex, rk->plan, bufs, &ec, &lb_ops, rk));
	kc_exec_destroy(&ex);
}

TEST_HARNESS_MAIN
