// SPDX-License-Identifier: GPL-2.0
/*
 * Pipeline (Documentation/algorithms.md): a hierarchical builder that
 * overlaps the inter-server ring with intra-server full-mesh transfers, so
 * the intra-server links are not idle while the inter-server phase runs.
 *
 * All servers (of all pods) form one ring of S servers of k ranks each;
 * rank (s, i) is local rank i of server s, global rank s * k + i (ranks of
 * a server are contiguous and every server has k ranks).  Local rank i of
 * every server sits on ring "column" i: (s, i) -> (s + 1, i).  Block (s, i)
 * of a layout of p = S * k blocks is block s * k + i.
 *
 *   AllGather      S - 1 ring steps, each overlapped with the intra-server
 *                  copy of the block in flight, then one intra step.
 *   ReduceScatter  one intra step, then S - 1 ring steps each overlapped
 *                  with the intra-server reduction of the next block.
 *   AllReduce      ReduceScatter then AllGather over p blocks.
 *   AlltoAll       one intra step, then S - 1 inter-server pairwise steps
 *                  each overlapped with the intra-server gathering of the
 *                  blocks the next step forwards.
 *
 * k == 1 degenerates to a ring (pairwise for AlltoAll) over servers and
 * S == 1 to the single intra-server mesh step.
 */
#include "kc_coll.h"
#include "kc_cost.h"

struct pipe_ctx {
	struct kc_group ring;	/* column i: (x, i) for every server x */
	struct kc_group local;	/* my server: (s, j) for every local j */
	u32 nsrv;		/* S */
	u32 k;			/* ranks per server */
};

/* Block (x, j) of the p-block layout. */
static struct kc_range pipe_block(const struct kc_builder *b, const struct pipe_ctx *pc,
				  const struct kc_layout *l, s64 x, u32 j)
{
	return kc_lay_block(l, b->esize, kc_grp_mod(&pc->ring, x) * pc->k + j);
}

/*
 * Intra-server step in the current round, with every local peer j.
 * AllGather: send my block (x, i), receive its block (x, j).
 * ReduceScatter: send my contribution to block (x, j), receive and reduce
 * its contribution to my block (x, i).
 */
static void pipe_intra(struct kc_builder *b, const struct pipe_ctx *pc,
		       const struct kc_layout *l, s64 x, bool reduce)
{
	u32 i = pc->local.me, j;
	struct kc_range mine = pipe_block(b, pc, l, x, i);

	for (j = 0; j < pc->k; j++) {
		struct kc_range theirs = pipe_block(b, pc, l, x, j);
		struct kc_range s = reduce ? theirs : mine, r = reduce ? mine : theirs;
		u32 peer = kc_grp_rank(&pc->local, j);

		if (j == i)
			continue;
		kc_b_send(b, peer, l->r.buf, s.off, s.len);
		kc_b_recv_into(b, reduce, peer, l->r.buf, r.off, r.len);
	}
}

/* Index of block (x, j) in the p-block layout. */
static u32 pipe_blk(const struct pipe_ctx *pc, s64 x, u32 j)
{
	return kc_grp_mod(&pc->ring, x) * pc->k + j;
}

/*
 * pipe_intra() as the body of a repeat of rounds whose server x steps
 * back by one each round: block (x - t, j) is block (x, j) - t * k of the
 * p = S * k blocks, so every block moves by -k.
 */
static void pipe_intra_rep(struct kc_builder *b, const struct pipe_ctx *pc,
			   const struct kc_layout *l, s64 x, bool reduce)
{
	u32 i = pc->local.me, j;
	s64 db = -(s64)pc->k;

	for (j = 0; j < pc->k; j++) {
		if (j == i)
			continue;
		kc_b_rep_xfer(b, KC_STEP_SEND, &pc->local, j, 0, l,
			      pipe_blk(pc, x, reduce ? j : i), db);
		kc_b_rep_xfer(b, reduce ? KC_STEP_RECV_REDUCE : KC_STEP_RECV, &pc->local, j, 0, l,
			      pipe_blk(pc, x, reduce ? i : j), db);
	}
}

/*
 * AllGather.  Ring step t = 0..S-2: (s, i) sends block (s - t, i) to
 * (s + 1, i) and receives (s - t - 1, i) from (s - 1, i); in the same round
 * it sends (s - t, i) to every local peer and receives (s - t, j) from each
 * local peer j.  (s - t, i) is my own block at t = 0 (so its intra copy
 * hides in the first ring step) and the block the ring brought in the
 * previous step afterwards.  A last intra round spreads the block of the
 * last ring step, (s - S + 1, i) = (s + 1, i).  Sent regions are blocks of
 * server s - t, received ones of s - t - 1 and of column j != i: they never
 * overlap.  Cost: (S - 1) rounds of max(inter, intra) one block each, plus
 * one intra round.
 */
static void pipe_ag(struct kc_builder *b, const struct pipe_ctx *pc, const struct kc_layout *l)
{
	u32 s = pc->ring.me, i = pc->local.me;
	u32 right = kc_grp_mod(&pc->ring, (s64)s + 1), left = kc_grp_mod(&pc->ring, (s64)s - 1);
	s64 db = -(s64)pc->k;

	kc_b_rep_begin(b, pc->nsrv - 1, true);
	kc_b_rep_xfer(b, KC_STEP_SEND, &pc->ring, right, 0, l, pipe_blk(pc, s, i), db);
	kc_b_rep_xfer(b, KC_STEP_RECV, &pc->ring, left, 0, l, pipe_blk(pc, (s64)s - 1, i), db);
	pipe_intra_rep(b, pc, l, s, false);
	kc_b_rep_end(b);
	pipe_intra(b, pc, l, (s64)s + 1, false);
	kc_b_round(b);
}

/*
 * ReduceScatter, the reverse flow.  Block (x, i) is reduced along column
 * i: it starts at server x + 1 and travels the ring to server x, each
 * server on the way adding its own server's sum of the block.  That sum
 * is built by the intra-server reduction onto (s, i) one round before
 * (s, i) forwards the block, in the same round as the ring delivers it:
 *
 *   round 0 (intra only): (s, i) receives and reduces (s - 1, i) from
 *     every local peer, and sends (s - 1, j) to each local peer j;
 *   ring step t = 0..S-2: (s, i) sends its partial of (s - t - 1, i) to
 *     (s + 1, i) and receives and reduces (s - t - 2, i) from (s - 1, i);
 *     in the same round it receives and reduces (s - t - 2, i) from every
 *     local peer, and sends (s - t - 2, j) to each local peer j.
 *
 * The ring partial and the k - 1 local contributions of a block arrive in
 * one round and are reduced one at a time.  At t = S - 2 the received
 * block is (s - S, i) = (s, i), now reduced over every rank.  I only ever
 * write blocks of column i, so the blocks (x, j != i) I send to local
 * peers are still my own contribution; the block sent on the ring (server
 * s - t - 1) differs from every block received in that round (server
 * s - t - 2).  Cost, HCCL's RS formula: one intra round plus (S - 1)
 * rounds of max(inter, intra), one block each (with its reduction).
 */
static void pipe_rs(struct kc_builder *b, const struct pipe_ctx *pc, const struct kc_layout *l)
{
	u32 s = pc->ring.me, i = pc->local.me;
	u32 right = kc_grp_mod(&pc->ring, (s64)s + 1), left = kc_grp_mod(&pc->ring, (s64)s - 1);
	s64 db = -(s64)pc->k;

	pipe_intra(b, pc, l, (s64)s - 1, true);
	kc_b_round(b);
	kc_b_rep_begin(b, pc->nsrv - 1, true);
	kc_b_rep_xfer(b, KC_STEP_SEND, &pc->ring, right, 0, l, pipe_blk(pc, (s64)s - 1, i), db);
	kc_b_rep_xfer(b, KC_STEP_RECV_REDUCE, &pc->ring, left, 0, l, pipe_blk(pc, (s64)s - 2, i),
		      db);
	pipe_intra_rep(b, pc, l, (s64)s - 2, true);
	kc_b_rep_end(b);
}

/*
 * Rounds r = 1 .. S - 2 of pipe_a2a() as one repeat, when the send and
 * receive ranges are the blocks of one layout each (AlltoAll): with
 * t = r - 1, the inter-server peers are ring members s + 1 + t and
 * s - 1 - t, the blocks of other servers move by k per round, and the two
 * scratch halves (blocks of a 2k-block layout) swap, a move by k modulo
 * 2k.  Returns false (nothing written) if the ranges are not uniform.
 */
static bool pipe_a2a_middle(struct kc_builder *b, const struct pipe_ctx *pc,
			    const struct kc_a2a *a, u64 nb, u64 scr)
{
	u32 s = pc->ring.me, i = pc->local.me, k = pc->k, p = pc->nsrv * k, j;
	struct kc_layout ls, lr, lx = { { KC_BUF_SCRATCH, scr, 2 * (u64)k * nb / b->esize },
					2 * k, 1 };
	u32 to = kc_grp_mod(&pc->ring, (s64)s + 1), from = kc_grp_mod(&pc->ring, (s64)s - 1);
	u32 next2 = kc_grp_mod(&pc->ring, (s64)s + 2);

	if (!kc_ranges_layout(a->send, p, a->sbuf, b->esize, &ls) ||
	    !kc_ranges_layout(a->recv, p, a->rbuf, b->esize, &lr) || nb % b->esize)
		return false;
	kc_b_rep_begin(b, pc->nsrv - 2, true);
	for (j = 0; j < k; j++) {
		if (j == i)
			kc_b_rep_xfer(b, KC_STEP_SEND, &pc->ring, to, 1, &ls, to * k + i, k);
		else
			kc_b_rep_xfer(b, KC_STEP_SEND, &pc->ring, to, 1, &lx, k + j, k);
		kc_b_rep_xfer(b, KC_STEP_RECV, &pc->ring, from, -1, &lr, from * k + j, -(s64)k);
	}
	for (j = 0; j < k; j++) {
		if (j == i)
			continue;
		kc_b_rep_xfer(b, KC_STEP_SEND, &pc->local, j, 0, &ls, next2 * k + j, k);
		kc_b_rep_xfer(b, KC_STEP_RECV, &pc->local, j, 0, &lx, j, k);
	}
	kc_b_rep_end(b);
	return true;
}

/*
 * AlltoAll (HCCL: intra-server mesh with inter-server pairwise).  The
 * blocks that the ranks of server s send to rank (s + d, i) travel
 * together over the one inter-server pair (s, i) -> (s + d, i): in intra
 * job d each local rank (s, j) hands its block for (s + d, i) to (s, i),
 * which forwards all k of them in inter step d straight into the receive
 * ranges of (s + d, i).  Round r = 0..S-1 runs inter step r (r >= 1) with
 * intra job r + 1; the last job, S, exchanges the blocks for my own
 * server, which go directly to their receive ranges.  Gathered blocks
 * alternate between two scratch areas of k blocks: job r + 1 fills one
 * while step r sends the other, filled in round r - 1.  Cost: S rounds of
 * one block per local peer, rounds 1..S-1 overlapped with k blocks on the
 * inter-server pair.  AlltoAllv is not supported: the relaying rank would
 * have to know the lengths of blocks between two other ranks.
 */
static void pipe_a2a(struct kc_builder *b, const struct pipe_ctx *pc, const struct kc_a2a *a,
		     u64 nb)
{
	u32 s = pc->ring.me, i = pc->local.me, k = pc->k, r, j;
	u32 me = kc_grp_rank(&pc->local, i);
	u64 scr = 0;

	if (k > 1 && pc->nsrv > 1)
		scr = kc_b_scratch(b, 2 * k * nb);
	kc_b_copy(b, a->rbuf, a->recv[me].off, a->sbuf, a->send[me].off, nb);
	for (r = 0; r < pc->nsrv; r++) {
		u32 u = r + 1, dsrv = kc_grp_mod(&pc->ring, (s64)s + u);
		u64 fill = scr + (u % 2) * k * nb, out = scr + (r % 2) * k * nb;

		if (r == 1 && pc->nsrv > 3 && pipe_a2a_middle(b, pc, a, nb, scr)) {
			r = pc->nsrv - 2;	/* rounds 1 .. S - 2 are one repeat */
			continue;
		}

		if (r) {
			u32 to = kc_grp_rank(&pc->ring, kc_grp_mod(&pc->ring, (s64)s + r));
			u32 ssrv = kc_grp_mod(&pc->ring, (s64)s - r);
			u32 from = kc_grp_rank(&pc->ring, ssrv);

			for (j = 0; j < k; j++) {
				if (j == i)
					kc_b_send(b, to, a->sbuf, a->send[to].off, nb);
				else
					kc_b_send(b, to, KC_BUF_SCRATCH, out + j * nb, nb);
				kc_b_recv(b, from, a->rbuf, a->recv[ssrv * k + j].off, nb);
			}
		}
		for (j = 0; j < k; j++) {
			u32 peer = kc_grp_rank(&pc->local, j);

			if (j == i)
				continue;
			kc_b_send(b, peer, a->sbuf, a->send[dsrv * k + j].off, nb);
			if (u < pc->nsrv)
				kc_b_recv(b, peer, KC_BUF_SCRATCH, fill + j * nb, nb);
			else
				kc_b_recv(b, peer, a->rbuf, a->recv[peer].off, nb);
		}
		kc_b_round(b);
	}
}

/* Ring of servers and my server, or -EOPNOTSUPP when servers differ. */
static int pipe_init(struct kc_builder *b, const struct kc_coll_ctx *c, struct pipe_ctx *pc)
{
	const struct kc_topo *t = c->topo;
	u32 k = t->server_size;

	if (!k)
		return kc_coll_error(c, -EOPNOTSUPP, "servers of different sizes", "pipeline");
	pc->k = k;
	pc->nsrv = t->nservers;
	pc->ring.size = pc->nsrv;
	pc->ring.me = c->rank / k;
	pc->ring.ranks = NULL;
	pc->ring.base = c->rank % k;
	pc->ring.stride = k;
	pc->local.size = k;
	pc->local.me = c->rank % k;
	pc->local.ranks = NULL;
	pc->local.base = c->rank / k * k;
	pc->local.stride = 1;
	b->plan->algo[KCOLL_LEVEL0] = KCOLL_ALGO_PIPELINE;
	b->plan->algo[KCOLL_LEVEL1] = KCOLL_ALGO_PIPELINE;
	return 0;
}

#define PIPE_OPS ((1u << KCOLL_OP_ALLREDUCE) | (1u << KCOLL_OP_REDUCESCATTER) | \
		  (1u << KCOLL_OP_ALLGATHER) | (1u << KCOLL_OP_ALLTOALL))

static int pipe_build(struct kc_builder *b, const struct kc_coll_ctx *c)
{
	u32 op = c->op->op, me = c->rank;
	struct kc_layout l;
	struct pipe_ctx pc = { 0 };
	int ret;

	if (c->topo->nranks == 1 && (op == KCOLL_OP_ALLTOALL || op == KCOLL_OP_ALLTOALLV)) {
		/* A lone rank exchanges nothing; only its own block moves. */
		kc_b_copy(b, c->a2a.rbuf, c->a2a.recv[me].off, c->a2a.sbuf, c->a2a.send[me].off,
			  kc_min_u64(c->a2a.send[me].len, c->a2a.recv[me].len));
		kc_b_round(b);
		return b->err;
	}
	if (!(PIPE_OPS & (1u << op)))
		return kc_coll_error(c, -EOPNOTSUPP, NULL, "pipeline");
	ret = pipe_init(b, c, &pc);
	if (ret)
		return ret;
	if (op == KCOLL_OP_ALLTOALL) {
		pipe_a2a(b, &pc, &c->a2a, c->op->count * c->esize);
		return b->err;
	}
	l = kc_lay_even(&c->work, c->topo->nranks);
	if (op != KCOLL_OP_ALLGATHER)
		pipe_rs(b, &pc, &l);
	if (op != KCOLL_OP_REDUCESCATTER)
		pipe_ag(b, &pc, &l);
	return b->err;
}

/*
 * Pipeline's cost.  AllGather is HCCL's formula; with b = n / p bytes
 * per block, T1 = alpha1 + b beta1 (ring), T0 = alpha0 + b beta0 (intra):
 *   AG = (S - 1) max(T1, T0) + T0.
 * HCCL's omits gamma; the reductions of kcoll's ReduceScatter sit on
 * the critical path as follows: the first intra step reduces k - 1
 * blocks, every ring step reduces k - 1 intra blocks (overlapped with
 * the ring transfer) and then the ring block:
 *   RS = T0 + (k-1) b gamma + (S - 1) (max(T1, T0 + (k-1) b gamma) + b gamma).
 * AllReduce = RS + AG.  AlltoAll runs AG's rounds, but each inter step
 * forwards the k blocks its server's ranks gathered for one rank:
 *   A2A = (S - 1) max(alpha1 + k b beta1, T0) + T0.
 */
static u64 pipe_cost(const struct kc_topo *t, const struct kc_cost_model *m, u32 algo, u32 op,
		     u64 n, const u32 *l0algo)
{
	struct kc_cost_link in = kc_cost_level_link(m, KCOLL_LEVEL0);
	struct kc_cost_link x = kc_cost_level_link(m, t->npods > 1 ? KCOLL_LEVEL2 : KCOLL_LEVEL1);
	u64 p = t->nranks, S = t->nservers, k = t->server_size, b, t1, t0, red, ag, rs;

	(void)algo;
	(void)l0algo;
	if (!k || S < 2)
		return KC_COST_INF;
	b = n / p;
	t1 = kc_abg(&x, 1, b, 1, 1, 0, 1);
	t0 = k > 1 ? kc_abg(&in, 1, b, 1, 1, 0, 1) : 0;
	red = kc_cost_mul(kc_cost_mul(b, in.gamma), k - 1);
	ag = kc_cost_add(kc_cost_mul(kc_max_u64(t1, t0), S - 1), t0);
	rs = kc_cost_add(kc_cost_add(t0, red),
			 kc_cost_mul(kc_cost_add(kc_max_u64(t1, kc_cost_add(t0, red)),
						 kc_cost_mul(b, x.gamma)), S - 1));
	switch (op) {
	case KCOLL_OP_ALLGATHER:
		return ag;
	case KCOLL_OP_ALLTOALL:
		/* the same rounds, but an inter step carries k blocks (alg_pipeline.c) */
		t1 = kc_abg(&x, 1, b, k, 1, 0, 1);
		return kc_cost_add(kc_cost_mul(kc_max_u64(t1, t0), S - 1), t0);
	case KCOLL_OP_REDUCESCATTER:
		return rs;
	case KCOLL_OP_ALLREDUCE:
		return kc_cost_add(rs, ag);
	}
	return KC_COST_INF;
}

KC_ALGO_DECLARE(pipeline);

const struct kc_algo_ops kc_alg_pipeline = {
	.id = KCOLL_ALGO_PIPELINE,
	.name = "pipeline",
	.hccl = "pipeline",
	.build = pipe_build,
	.build_ops = PIPE_OPS,
	.cost_whole = pipe_cost,
	.auto_rank = 1,
};
