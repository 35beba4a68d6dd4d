// SPDX-License-Identifier: GPL-2.0
/*
 * NB, Nonuniform Bruck: every phase takes S = ceil(log2 p)
 * steps at distances 1, 2, 4, ... for any p, and moves no more than
 * (p - 1) / p of the data per member, unlike RHD, which folds the extra
 * members of a non-power-of-two group in and out.
 *
 * All distances are relative member indices; "block d of me" below is
 * block (me + d) mod p of the layout, "block d of the root" is block
 * (root + d) mod p.
 *
 * AlltoAll is Bruck's: S steps of about p / 2 blocks each, relayed
 * through intermediate members.  AlltoAllv is refused: an intermediate
 * must know the length of what it relays to post the receive, and in
 * AlltoAllv a member knows only its own send and receive counts.
 */
#include "kc_algo.h"
#include "kc_cost.h"

/*
 * Small Broadcasts use the binomial tree (BroadcastNBBinary) instead of
 * Scatter + AllGather (kc_nb_bcast_binomial()).  HCCL switches at
 * p * BW * 60us * 1000 bytes for p <= 4 and ((2S - 2) / (S - 2)) * BW *
 * 60us * 1000 otherwise (BW the level1 bandwidth per NPU in GB/s); we have
 * no bandwidth figure, so use a fixed 64 KiB.
 */

/* S = ceil(log2 p): the number of steps of every phase. */
static u32 nb_nsteps(u32 p)
{
	u32 s = 0;

	while (((u64)1 << s) < p)
		s++;
	return s;
}

/* How many of dist, dist + 2 dist, dist + 4 dist, ... are below n. */
static u32 nb_strided(u64 n, u64 dist)
{
	return n > dist ? (u32)((n - dist + (dist << 1) - 1) / (dist << 1)) : 0;
}

/* Global rank of the member at distance d from me. */
static u32 nb_peer(const struct kc_group *g, s64 d)
{
	return kc_grp_rank(g, kc_grp_mod(g, (s64)g->me + d));
}

static bool nb_layout_ok(struct kc_builder *b, const struct kc_group *g,
			 const struct kc_layout *l)
{
	if (l->spb && kc_lay_nblocks(l) == g->size)
		return true;
	kc_b_fail(b, -EINVAL);
	return false;
}

/*
 * Send (tx) or receive the n blocks first, first + 1, ... (mod p): one
 * transfer per contiguous run, so at most two.  Both sides call this with
 * the same first and n, so the runs and their lengths match.
 */
static void nb_run(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l,
		   u32 peer, bool tx, u32 first, u32 n)
{
	u64 end = (u64)first + n;
	u32 p = g->size, k;

	for (k = 0; k < 2 && n; k++) {
		u32 z = end > p ? p : (u32)end;
		struct kc_range rg = kc_lay_slices(l, b->esize, first * l->spb, z * l->spb);

		if (tx)
			kc_b_send(b, peer, l->r.buf, rg.off, rg.len);
		else
			kc_b_recv(b, peer, l->r.buf, rg.off, rg.len);
		n -= z - first;
		first = 0;
		end = n;
	}
}

/*
 * ReduceScatter.  Step s: member me sends to me + 2^s the blocks d =
 * 2^s + i * 2^(s+1) < p (nSlices = floor((p - 1 + 2^s) / 2^(s+1)) of them)
 * and reduces into its blocks d = i * 2^(s+1) the ones from me - 2^s.
 * The partial sum of block j that member q holds thus moves along the
 * binary digits of its distance (j - q) mod p, lowest first, and every
 * contribution reaches block j at member j after S steps.  The blocks
 * sent (bit s set) and received (bits 0..s clear) never overlap.
 */
static int nb_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	u32 p = g->size, ns = nb_nsteps(p), s;

	if (!nb_layout_ok(b, g, l))
		return b->err;
	for (s = 0; s < ns; s++) {
		u64 dist = (u64)1 << s;
		u32 to = kc_grp_mod(g, (s64)g->me + dist), from = kc_grp_mod(g, (s64)g->me - dist);

		/* one repeat per step: d = dist + i * 2^(s+1) */
		kc_b_rep_begin(b, nb_strided(p, dist), false);
		kc_b_rep_xfer(b, KC_STEP_SEND, g, to, 0, l, kc_grp_mod(g, (s64)g->me + dist),
			      (s64)dist << 1);
		kc_b_rep_xfer(b, KC_STEP_RECV_REDUCE, g, from, 0, l, g->me, (s64)dist << 1);
		kc_b_rep_end(b);
		kc_b_round(b);
	}
	return 0;
}

/*
 * AllGather (Bruck, increasing distance).  Before step s member me holds
 * blocks me - 2^s + 1 .. me; it sends n = min(2^s, p - 2^s) of them,
 * me - n + 1 .. me, to me + 2^s and receives me - 2^s - n + 1 .. me - 2^s
 * from me - 2^s.  n is 2^s except on the last step of a non-power-of-two
 * p, where it is p - 2^(S-1).
 */
static int nb_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	u32 p = g->size, ns = nb_nsteps(p), s;

	if (!nb_layout_ok(b, g, l))
		return b->err;
	for (s = 0; s < ns; s++) {
		u64 dist = (u64)1 << s;
		u32 n = (u32)kc_min_u64(dist, p - dist);
		u32 first_tx = kc_grp_mod(g, (s64)g->me - n + 1);
		u32 first_rx = kc_grp_mod(g, (s64)g->me - (s64)dist - n + 1);

		nb_run(b, g, l, nb_peer(g, (s64)dist), true, first_tx, n);
		nb_run(b, g, l, nb_peer(g, -(s64)dist), false, first_rx, n);
		kc_b_round(b);
	}
	return 0;
}

static int nb_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);

	nb_rs(b, g, &l);
	return nb_ag(b, g, &l);
}

/*
 * Scatter (binomial, increasing distance).  With d = (me - root) mod p,
 * at step s a member with d < 2^s and d + 2^s < p sends to me + 2^s the
 * blocks of the root d + 2^s + i * 2^(s+1) < p: the subtree of that
 * member, which forwards them at the later steps.  Members with
 * 2^s <= d < 2^(s+1) receive them.  A member never sends and receives in
 * the same step.
 *
 * Gather is the same tree run backwards, steps S - 1 down to 0, every
 * transfer reversed: a member with 2^s <= d < 2^(s+1) has collected its
 * subtree in the later steps and sends it to me - 2^s.
 */
static int nb_tree(struct kc_builder *b, const struct kc_group *g, u32 root,
		   const struct kc_layout *l, bool scatter)
{
	u32 p = g->size, ns = nb_nsteps(p), i;
	u64 d = kc_grp_mod(g, (s64)g->me - root);

	if (!nb_layout_ok(b, g, l))
		return b->err;
	for (i = 0; i < ns; i++) {
		u32 s = scatter ? i : ns - 1 - i;
		u64 dist = (u64)1 << s, first;
		bool send;
		u32 peer;

		if (d < dist && d + dist < p) {
			peer = kc_grp_mod(g, (s64)g->me + dist);
			first = d + dist;
			send = scatter;
		} else if (d >= dist && d < dist << 1) {
			peer = kc_grp_mod(g, (s64)g->me - dist);
			first = d;
			send = !scatter;
		} else {
			kc_b_round(b);
			continue;
		}
		/* blocks root + k, k = first + i * 2^(s+1) < p */
		kc_b_rep_begin(b, nb_strided(p - first + dist, dist), false);
		kc_b_rep_xfer(b, send ? KC_STEP_SEND : KC_STEP_RECV, g, peer, 0, l,
			      kc_grp_mod(g, (s64)root + first), (s64)dist << 1);
		kc_b_rep_end(b);
		kc_b_round(b);
	}
	return 0;
}

static int nb_scatter(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_layout *l)
{
	return nb_tree(b, g, root, l, true);
}

static int nb_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
		     const struct kc_layout *l)
{
	return nb_tree(b, g, root, l, false);
}

/*
 * Bruck AlltoAll.  Relative index j (1..p-1) of member r names the block
 * that started at r - (j & (2^s - 1)) for member that + j: at step s
 * every block with bit s of j set moves to r + 2^s and keeps its index,
 * so after S steps index j holds the block from r - j to r.  A block sits
 * in the send buffer until its lowest set bit moves it, lands in the
 * receive buffer at its highest, and in between alternates between two
 * scratch copies of the index space, by the parity of the bits already
 * done, so that what a step sends is never what it receives.  No local
 * copies.
 *
 * The indices a step moves, j = 2^s (2k + 1) + t with 0 <= t < 2^s, are
 * sent and received in one order both ends know: first t = 0 (from the
 * send buffer) for k = 0, 1, ..., then t > 0 (from the copy that the
 * parity of t names) k by k.  Each class is one repeat whose blocks
 * advance by a stride, or in runs of 2^s - 1 with the copy chosen by the
 * parity of b & (2^s - 1) (struct kc_blockwalk), so a plan holds
 * O(S) records whatever p.
 */
static int nb_a2a(struct kc_builder *b, const struct kc_group *g, const struct kc_a2a *a)
{
	u32 p = g->size, ns = nb_nsteps(p), me = g->me, s;
	struct kc_layout ls, lr, lx[2];
	u64 blk, home[2];

	if (!a->uniform || me >= p ||
	    !kc_ranges_layout(a->send, p, a->sbuf, b->esize, &ls) ||
	    !kc_ranges_layout(a->recv, p, a->rbuf, b->esize, &lr))
		return kc_b_fail(b, -EINVAL);
	blk = a->send[me].len;
	home[0] = kc_b_scratch(b, blk * p);
	home[1] = kc_b_scratch(b, blk * p);
	for (s = 0; s < 2; s++) {
		struct kc_region r = { KC_BUF_SCRATCH, home[s], blk / b->esize * p };

		lx[s] = kc_lay_even(&r, p);
	}
	for (s = 0; s < ns; s++) {
		u64 dist = (u64)1 << s, odd = p % (2 * dist);
		u32 to = kc_grp_mod(g, (s64)me + (s64)dist);
		u32 from = kc_grp_mod(g, (s64)me - (s64)dist);
		/* the indices below p with bit s set; nfirst of them have t = 0 */
		u32 nset = (u32)((p >> (s + 1)) * dist + (odd > dist ? odd - dist : 0));
		u32 nfirst = nb_strided(p, dist), nrest = nset - nfirst;
		u32 nlast = (u32)kc_min_u64(dist, p - dist) - 1;	/* t > 0 with k = 0 */
		struct kc_blockwalk first = { .b0 = to, .db = 2 * (s64)dist };
		struct kc_blockwalk rest = { .b0 = (u32)dist + 1, .db = 1, .run = (u32)dist - 1,
					     .dbo = 2 * (s64)dist, .pmask = (u32)dist - 1,
					     .alt_off = home[1] };
		struct kc_range rg = kc_lay_block(&lr, b->esize, from);

		kc_b_rep_begin(b, nfirst, false);
		kc_b_rep_xfer_walk(b, KC_STEP_SEND, g, to, 0, &ls, &first);
		kc_b_rep_end(b);
		kc_b_rep_begin(b, nrest, false);
		kc_b_rep_xfer_walk(b, KC_STEP_SEND, g, to, 0, &lx[0], &rest);
		kc_b_rep_end(b);

		/* t = 0: k = 0 lands in block me - 2^s, the others go to copy 1 */
		kc_b_recv(b, kc_grp_rank(g, from), a->rbuf, rg.off, rg.len);
		kc_b_rep_begin(b, nfirst - 1, false);
		kc_b_rep_xfer(b, KC_STEP_RECV, g, from, 0, &lx[1], (u32)(3 * dist), 2 * (s64)dist);
		kc_b_rep_end(b);
		/* t > 0: k = 0 is final (blocks me - j, downwards), then the copies */
		kc_b_rep_begin(b, nlast, false);
		kc_b_rep_xfer(b, KC_STEP_RECV, g, from, 0, &lr,
			      kc_grp_mod(g, (s64)me - (s64)dist - 1), -1);
		kc_b_rep_end(b);
		rest.b0 = (u32)(3 * dist + 1);
		rest.alt_off = home[0];
		kc_b_rep_begin(b, nrest - nlast, false);
		kc_b_rep_xfer_walk(b, KC_STEP_RECV, g, from, 0, &lx[1], &rest);
		kc_b_rep_end(b);
		kc_b_round(b);
	}
	return 0;
}

/* BroadcastNBBinary: at step s, members with d < 2^s pass the region on. */
static void nb_bcast_binary(struct kc_builder *b, const struct kc_group *g, u32 root,
			    const struct kc_region *r)
{
	u32 p = g->size, ns = nb_nsteps(p), s;
	u64 d = kc_grp_mod(g, (s64)g->me - root), len = kc_region_bytes(r, b->esize);

	for (s = 0; s < ns; s++) {
		u64 dist = (u64)1 << s;

		if (d < dist && d + dist < p)
			kc_b_send(b, nb_peer(g, (s64)dist), r->buf, r->off, len);
		else if (d >= dist && d < dist << 1)
			kc_b_recv(b, nb_peer(g, -(s64)dist), r->buf, r->off, len);
		kc_b_round(b);
	}
}

static int nb_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		    const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);

	if (kc_nb_bcast_binomial(g->size, kc_region_bytes(r, b->esize))) {
		nb_bcast_binary(b, g, root, r);
		return 0;
	}
	nb_scatter(b, g, root, &l);
	return nb_ag(b, g, &l);
}

/* Reduce: ReduceScatter, then gather the reduced blocks to the root. */
static int nb_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		     const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);

	nb_rs(b, g, &l);
	return nb_gather(b, g, root, &l);
}

/*
 * Dissemination barrier: after step s a member has heard, directly or
 * not, from the 2^(s+1) - 1 members behind it, so after S steps from all.
 */
static int nb_barrier(struct kc_builder *b, const struct kc_group *g)
{
	u32 ns = nb_nsteps(g->size), s;

	for (s = 0; s < ns; s++) {
		s64 dist = (s64)1 << s;

		kc_b_sync_send(b, nb_peer(g, dist));
		kc_b_sync_recv(b, nb_peer(g, -dist));
		kc_b_round(b);
	}
	return 0;
}

static u64 nb_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	(void)port;
	return kc_nhr_cost(true, op, p, n, l);
}

/*
 * On a merged level: Scatter and Gather by the binomial tree's sends; the
 * binomial Broadcast one slow round per pod; the Scatter + AllGather
 * Broadcast and the ReduceScatter + Gather Reduce the Scatter's
 * (Gather's) crossing blocks and all of the AllGather (ReduceScatter),
 * every step of which has a crossing pair.
 */
static bool nb_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	(void)cache;
	if (kc_cost_spread_slow(l, op, KC_COST_BINOMIAL, x, d))
		return true;
	if (op == KCOLL_OP_BROADCAST && kc_nb_bcast_binomial(l->size, n)) {
		kc_cost_rounds_slow(l, x, d);
		return true;
	}
	if (op != KCOLL_OP_BROADCAST && op != KCOLL_OP_REDUCE)
		return false;
	*x = kc_cost_scatter_slow(l, KC_COST_BINOMIAL) + l->size - 1;
	*d = 2 * ((u64)l->size - 1);
	return true;
}

KC_ALGO_DECLARE(nb);

const struct kc_algo_ops kc_alg_nb = {
	.id = KCOLL_ALGO_NB,
	.name = "nb",
	.hccl = "NB",
	.rs = nb_rs,
	.ag = nb_ag,
	.ar = nb_ar,
	.bcast = nb_bcast,
	.reduce = nb_reduce,
	.scatter = nb_scatter,
	.gather = nb_gather,
	.barrier_op = nb_barrier,
	.a2a = nb_a2a,
	.a2a_uniform_only = true,
	.cost = nb_cost,
	.slow = nb_slow,
	.auto_rank = 5,
};
