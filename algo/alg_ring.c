// SPDX-License-Identifier: GPL-2.0
/*
 * Ring (Documentation/algorithms.md): every member receives from its left
 * neighbour and sends to its right one.  RS and AG take p - 1 steps of one
 * block each; Broadcast and Reduce are chains from/to the root (pipelined in
 * pieces when the builder asks for pipelining); Scatter and Gather forward
 * blocks along the chain, one block per step per member.
 *
 * There is no ring AlltoAll: every block would be relayed by each member
 * between its source and its destination (p (p - 1) / 2 blocks on every
 * link instead of p - 1, Pairwise's count), and in AlltoAllv the relays
 * would not know the lengths of what they forward.
 */
#include "kc_algo.h"
#include "kc_cost.h"

/*
 * p - 1 steps around the ring: send block me - lag - k to the right,
 * receive block me - lag - k - 1 from the left.  ReduceScatter (lag 1)
 * reduces what arrives and ends with block me complete; AllGather (lag 0)
 * starts from block me and forwards what arrives.  Written as one repeat
 * of rounds whose blocks step back by one.
 */
static int ring_pass(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l,
		     bool reduce)
{
	u32 p = g->size, me = g->me, lag = reduce ? 1 : 0;

	if (!l->spb || l->nslices % l->spb || kc_lay_nblocks(l) != p || me >= p)
		return kc_b_fail(b, -EINVAL);
	kc_b_rep_begin(b, p - 1, true);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, kc_grp_mod(g, (s64)me + 1), 0, l,
		      kc_grp_mod(g, (s64)me - lag), -1);
	kc_b_rep_xfer(b, reduce ? KC_STEP_RECV_REDUCE : KC_STEP_RECV, g,
		      kc_grp_mod(g, (s64)me - 1), 0, l, kc_grp_mod(g, (s64)me - lag - 1), -1);
	kc_b_rep_end(b);
	return 0;
}

static int ring_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	return ring_pass(b, g, l, true);
}

static int ring_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	return ring_pass(b, g, l, false);
}

static int ring_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);

	ring_rs(b, g, &l);
	return ring_ag(b, g, &l);
}

/* Pieces a chain pipelines the region in: one unless pipelining is asked for. */
static u32 ring_pieces(const struct kc_builder *b, const struct kc_region *r)
{
	u64 n;

	if (!b->chunk_elems || !r->count)
		return 1;
	n = (r->count + b->chunk_elems - 1) / b->chunk_elems;
	return (u32)kc_min_u64(n, 1024);
}

/*
 * A chain from member distance 0 (head) to distance p - 1 (tail) when
 * towards_root is false, or from the tail to the head when it is true
 * (Reduce).  Member at distance d receives piece t in round t and forwards
 * piece t - 1 in the same round.
 */
static int ring_chain(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r, bool towards_root)
{
	u32 p = g->size, d = kc_grp_mod(g, (s64)g->me - root), np = ring_pieces(b, r), t;
	struct kc_layout l = kc_lay_even(r, np);
	/* upstream sends to me, I send downstream */
	bool has_up = towards_root ? d + 1 < p : d > 0;
	bool has_down = towards_root ? d > 0 : d + 1 < p;
	u32 up = kc_grp_rank(g, kc_grp_mod(g, (s64)g->me + (towards_root ? 1 : -1)));
	u32 down = kc_grp_rank(g, kc_grp_mod(g, (s64)g->me + (towards_root ? -1 : 1)));

	for (t = 0; t <= np; t++) {
		if (has_up && t < np) {
			struct kc_range rg = kc_lay_block(&l, b->esize, t);

			if (towards_root)
				kc_b_recv_reduce(b, up, r->buf, rg.off, rg.len);
			else
				kc_b_recv(b, up, r->buf, rg.off, rg.len);
		}
		if (has_down && (has_up ? t >= 1 : t < np)) {
			struct kc_range rg = kc_lay_block(&l, b->esize, has_up ? t - 1 : t);

			kc_b_send(b, down, r->buf, rg.off, rg.len);
		}
		kc_b_round(b);
	}
	return 0;
}

static int ring_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r)
{
	return ring_chain(b, g, root, r, false);
}

static int ring_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_region *r)
{
	return ring_chain(b, g, root, r, true);
}

/*
 * Scatter: in step k the member at distance d <= k forwards the block of
 * distance p - 1 - k + d to its right; far blocks leave the root first so
 * every block arrives in the last step at the latest.  A member at d >= 1
 * first only receives (step d - 1), then receives and forwards in steps
 * d .. p - 2, the blocks stepping back by one.
 */
static int ring_scatter(struct kc_builder *b, const struct kc_group *g, u32 root,
			const struct kc_layout *l)
{
	u32 p = g->size, me = g->me, d = kc_grp_mod(g, (s64)me - root);
	u32 left = kc_grp_mod(g, (s64)me - 1), right = kc_grp_mod(g, (s64)me + 1);

	if (!l->spb || l->nslices % l->spb || kc_lay_nblocks(l) != p || me >= p)
		return kc_b_fail(b, -EINVAL);
	if (d >= 1) {
		struct kc_range rg = kc_lay_block(l, b->esize, kc_grp_mod(g, (s64)root - 1));

		kc_b_recv(b, kc_grp_rank(g, left), l->r.buf, rg.off, rg.len);
		kc_b_round(b);
	}
	kc_b_rep_begin(b, p - 1 - d, true);
	if (d >= 1)
		kc_b_rep_xfer(b, KC_STEP_RECV, g, left, 0, l, kc_grp_mod(g, (s64)root - 2), -1);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, right, 0, l, kc_grp_mod(g, (s64)root - 1), -1);
	kc_b_rep_end(b);
	return 0;
}

/*
 * Gather: scatter reversed in time and direction.  The member at e from
 * the root sends block root + e + k to its left in steps k <= p - 1 - e
 * and receives block root + e + 1 + k from its right in steps
 * k <= p - 2 - e: both in the first p - 1 - e steps, the send alone in
 * the last one.
 */
static int ring_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l)
{
	u32 p = g->size, me = g->me, e = kc_grp_mod(g, (s64)me - root);
	u32 left = kc_grp_mod(g, (s64)me - 1), right = kc_grp_mod(g, (s64)me + 1);

	if (!l->spb || l->nslices % l->spb || kc_lay_nblocks(l) != p || me >= p)
		return kc_b_fail(b, -EINVAL);
	kc_b_rep_begin(b, p - 1 - e, true);
	if (e >= 1)
		kc_b_rep_xfer(b, KC_STEP_SEND, g, left, 0, l, me, 1);
	kc_b_rep_xfer(b, KC_STEP_RECV, g, right, 0, l, right, 1);
	kc_b_rep_end(b);
	if (e >= 1) {
		struct kc_range rg = kc_lay_block(l, b->esize, kc_grp_mod(g, (s64)root - 1));

		kc_b_send(b, kc_grp_rank(g, left), l->r.buf, rg.off, rg.len);
		kc_b_round(b);
	}
	return 0;
}

/* p - 1 rounds of a token to the right: then all p members have entered. */
static int ring_barrier(struct kc_builder *b, const struct kc_group *g)
{
	kc_b_rep_begin(b, g->size - 1, true);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, kc_grp_mod(g, (s64)g->me + 1), 0, NULL, 0, 0);
	kc_b_rep_xfer(b, KC_STEP_RECV, g, kc_grp_mod(g, (s64)g->me - 1), 0, NULL, 0, 0);
	kc_b_rep_end(b);
	return 0;
}

/* Ring: unpipelined chains for Broadcast and Reduce. */
static u64 ring_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	(void)port;
	switch (op) {
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
	case KCOLL_OP_ALLGATHER:
		return kc_abg(l, p - 1, n, p - 1, p, 0, 1);
	case KCOLL_OP_REDUCESCATTER:
		return kc_abg(l, p - 1, n, p - 1, p, p - 1, p);
	case KCOLL_OP_ALLREDUCE:
		return kc_abg(l, 2 * (p - 1), n, 2 * (p - 1), p, p - 1, p);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, p - 1, n, p - 1, 1, 0, 1);
	case KCOLL_OP_REDUCE:
		return kc_abg(l, p - 1, n, p - 1, 1, p - 1, 1);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, 2 * (p - 1), 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/* Scatter and Gather on a merged level: every block past the first pod boundary. */
static bool ring_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	(void)n;
	(void)cache;
	return kc_cost_spread_slow(l, op, KC_COST_CHAIN, x, d);
}

KC_ALGO_DECLARE(ring);

const struct kc_algo_ops kc_alg_ring = {
	.id = KCOLL_ALGO_RING,
	.name = "ring",
	.hccl = "ring",
	.rs = ring_rs,
	.ag = ring_ag,
	.ar = ring_ar,
	.bcast = ring_bcast,
	.reduce = ring_reduce,
	.scatter = ring_scatter,
	.gather = ring_gather,
	.barrier_op = ring_barrier,
	.cost = ring_cost,
	.slow = ring_slow,
	.auto_rank = 3,
};
