// SPDX-License-Identifier: GPL-2.0
/*
 * Pairwise (Documentation/algorithms.md): the stepped version of Mesh for
 * members with one port.  In step k = 1 .. p - 1 member i sends to member i
 * + k and receives from member i - k, so every member has exactly one send
 * and one receive in flight per step and no link carries two messages.
 *
 * Besides AlltoAll(v), the same exchange pattern gives ReduceScatter
 * (send block i + k, reduce block i), AllGather (send block i, receive
 * block i - k), AllReduce (RS + AG) and a barrier.  Rooted operations are
 * not pairwise exchanges and are left out.
 */
#include "kc_algo.h"
#include "kc_cost.h"

/* Member index of the step-k destination and source of this member. */
static u32 pw_to(const struct kc_group *g, u32 k)
{
	return kc_grp_mod(g, (s64)g->me + k);
}

static u32 pw_from(const struct kc_group *g, u32 k)
{
	return kc_grp_mod(g, (s64)g->me - k);
}

static bool pw_bad_layout(const struct kc_group *g, const struct kc_layout *l)
{
	return !l->spb || l->nslices % l->spb || kc_lay_nblocks(l) != g->size ||
	       g->me >= g->size;
}

/*
 * ReduceScatter step k: block me + k to its owner, and member me - k's
 * copy of block me reduced into mine.  The block sent is never the one
 * reduced into (k is not a multiple of p), so both transfers may share the
 * round.  AllGather step k: my block to member me + k, block me - k from
 * its owner.
 */
static int pw_pass(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l,
		   bool reduce)
{
	u32 me = g->me, to = kc_grp_mod(g, (s64)me + 1), from = kc_grp_mod(g, (s64)me - 1);

	if (pw_bad_layout(g, l))
		return kc_b_fail(b, -EINVAL);
	/* iteration i is step k = i + 1: peers and the blocks that follow them move by one */
	kc_b_rep_begin(b, g->size - 1, true);
	if (reduce) {
		kc_b_rep_xfer(b, KC_STEP_SEND, g, to, 1, l, to, 1);
		kc_b_rep_xfer(b, KC_STEP_RECV_REDUCE, g, from, -1, l, me, 0);
	} else {
		kc_b_rep_xfer(b, KC_STEP_SEND, g, to, 1, l, me, 0);
		kc_b_rep_xfer(b, KC_STEP_RECV, g, from, -1, l, from, -1);
	}
	kc_b_rep_end(b);
	return 0;
}

static int pw_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	return pw_pass(b, g, l, true);
}

static int pw_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	return pw_pass(b, g, l, false);
}

static int pw_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	int ret;

	ret = pw_rs(b, g, &l);
	if (ret)
		return ret;
	return pw_ag(b, g, &l);
}

/* Step k: send[me + k] to member me + k, recv[me - k] from member me - k. */
static int pw_a2a(struct kc_builder *b, const struct kc_group *g, const struct kc_a2a *a)
{
	struct kc_layout ls, lr;
	u32 k;

	if (g->me >= g->size)
		return kc_b_fail(b, -EINVAL);
	if (kc_ranges_layout(a->send, g->size, a->sbuf, b->esize, &ls) &&
	    kc_ranges_layout(a->recv, g->size, a->rbuf, b->esize, &lr)) {
		u32 to = pw_to(g, 1), from = pw_from(g, 1);

		kc_b_rep_begin(b, g->size - 1, true);
		kc_b_rep_xfer(b, KC_STEP_SEND, g, to, 1, &ls, to, 1);
		kc_b_rep_xfer(b, KC_STEP_RECV, g, from, -1, &lr, from, -1);
		kc_b_rep_end(b);
		return 0;
	}
	for (k = 1; k < g->size; k++) {
		u32 to = pw_to(g, k), from = pw_from(g, k);

		kc_b_send(b, kc_grp_rank(g, to), a->sbuf, a->send[to].off, a->send[to].len);
		kc_b_recv(b, kc_grp_rank(g, from), a->rbuf, a->recv[from].off,
			  a->recv[from].len);
		kc_b_round(b);
	}
	return 0;
}

/*
 * Step k: a sync to member me + k and one from member me - k.  After the
 * p - 1 steps every other member has signalled that it entered.
 */
static int pw_barrier(struct kc_builder *b, const struct kc_group *g)
{
	kc_b_rep_begin(b, g->size - 1, true);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, kc_grp_mod(g, (s64)g->me + 1), 1, NULL, 0, 0);
	kc_b_rep_xfer(b, KC_STEP_RECV, g, kc_grp_mod(g, (s64)g->me - 1), -1, NULL, 0, 0);
	kc_b_rep_end(b);
	return 0;
}

/*
 * Pairwise: p - 1 steps of one exchange each.  RS, AG and AR move
 * the ring's volumes in the ring's step count, so they cost the same.
 */
static u64 pw_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	switch (op) {
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return kc_abg(l, p - 1, n, p - 1, p, 0, 1);
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_ALLREDUCE:
		return kc_algo_get(KCOLL_ALGO_RING)->cost(op, p, n, l, port);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, p - 1, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

KC_ALGO_DECLARE(pairwise);

const struct kc_algo_ops kc_alg_pairwise = {
	.id = KCOLL_ALGO_PAIRWISE,
	.name = "pairwise",
	.hccl = "pairwise",
	.rs = pw_rs,
	.ag = pw_ag,
	.ar = pw_ar,
	.a2a = pw_a2a,
	.barrier_op = pw_barrier,
	.cost = pw_cost,
	.auto_rank = 6,
};
