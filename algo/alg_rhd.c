// SPDX-License-Identifier: GPL-2.0
/*
 * RHD, Recursive Halving-Doubling (Documentation/algorithms.md): log-step
 * exchanges with partners at distances that halve or double.
 *
 * A group of p = 2^k + r members first folds into a block of 2^k: the
 * first 2r members ("part1") pair up as (2i, 2i + 1), one of each pair
 * joins the block and the other hands its data to it in one step.  The
 * block runs the power-of-two algorithm, and one last step between the
 * pairs restores part1.  Block member v (the folded numbering) is member
 * 2v + par for v < r and member v + r after; par is 0 except for the
 * rooted Broadcast and Reduce, where the root's parity picks it so that
 * the root is always in the block.
 *
 * Round structure (n = bytes of the region, p' = 2^k, non power of two):
 *   AllReduce:     fold (n, reduce), k x vector halving + distance doubling
 *                  (n/2, n/4 .. n/p', reduce), k x vector doubling +
 *                  distance halving (n/p' .. n/2), unfold (n): 2k + 2 rounds.
 *   ReduceScatter: fold (n, reduce), k x distance halving keeping the
 *                  block order (non-uniform, folded members own two
 *                  blocks), scatter of the partner's block (n/p): k + 2.
 *   AllGather:     the mirror: partner's block in, k x distance doubling,
 *                  whole region out: k + 2 rounds.
 *   Broadcast:     k x distance halving from the root inside the block,
 *                  one more step to the folded members: ceil(log2 p) rounds
 *                  of n bytes.
 *   Reduce:        fold (n, reduce), the AllReduce's k halving steps, k
 *                  doubling steps that only gather towards the root:
 *                  2k + 1 rounds.
 *   Scatter/Gather: binomial trees with halving distances over contiguous
 *                  member intervals: ceil(log2 p) rounds, (p - 1)/p n at
 *                  the root and on the critical path.
 *   Barrier:       fold, k x recursive doubling, unfold (empty messages).
 * A power-of-two group skips the fold and unfold rounds.
 */
#include "kc_algo.h"
#include "kc_cost.h"

struct rhd_fold {
	u32 k;		/* floor(log2 p) */
	u32 pw;		/* 2^k, the block size */
	u32 r;		/* p - 2^k pairs fold */
	u32 par;	/* parity of the pair member that stays in the block */
};

static void rhd_fold_init(struct rhd_fold *f, u32 p, u32 par)
{
	f->k = 0;
	while (((u64)2 << f->k) <= p)
		f->k++;
	f->pw = 1u << f->k;
	f->r = p - f->pw;
	f->par = par;
}

static bool rhd_in_block(const struct rhd_fold *f, u32 m)
{
	return m >= 2 * f->r || (m & 1) == f->par;
}

/* Block index of a member that is in the block. */
static u32 rhd_vidx(const struct rhd_fold *f, u32 m)
{
	return m < 2 * f->r ? m / 2 : m - f->r;
}

static u32 rhd_vrank(const struct kc_group *g, const struct rhd_fold *f, u32 v)
{
	return kc_grp_rank(g, v < f->r ? 2 * v + f->par : v + f->r);
}

/*
 * One round between the members of each part1 pair over range rg (both
 * compute the same one): towards the block member when in is true (fold),
 * else from it (unfold).
 */
static void rhd_pair_xfer(struct kc_builder *b, const struct kc_group *g,
			  const struct rhd_fold *f, u8 buf, struct kc_range rg, bool in,
			  bool reduce)
{
	u32 me = g->me;

	if (me < 2 * f->r) {
		u32 buddy = kc_grp_rank(g, me ^ 1);

		if (rhd_in_block(f, me) != in)
			kc_b_send(b, buddy, buf, rg.off, rg.len);
		else if (reduce)
			kc_b_recv_reduce(b, buddy, buf, rg.off, rg.len);
		else
			kc_b_recv(b, buddy, buf, rg.off, rg.len);
	}
	kc_b_round(b);
}

static struct kc_range rhd_whole(const struct kc_builder *b, const struct kc_region *r)
{
	struct kc_range rg = { r->off, kc_region_bytes(r, b->esize) };

	return rg;
}

/* -------------------------------------- unordered halving and doubling */

/*
 * Vector halving + distance doubling over the p' slices of l: in step j,
 * block member v keeps the half of its slices [s0, s1) that bit j of v
 * selects and sends the other half, to be reduced, to partner v ^ 2^j.
 * Afterwards v holds slice bitreverse(v) reduced over the whole block.
 */
static void rhd_halving(struct kc_builder *b, const struct kc_group *g,
			const struct rhd_fold *f, u32 v, const struct kc_layout *l,
			u32 *s0, u32 *s1)
{
	u32 j;

	for (j = 0; j < f->k; j++) {
		u32 half = (*s1 - *s0) / 2, peer = rhd_vrank(g, f, v ^ (1u << j));
		bool upper = (v >> j) & 1;
		struct kc_range snd = upper ? kc_lay_slices(l, b->esize, *s0, *s0 + half) :
				      kc_lay_slices(l, b->esize, *s1 - half, *s1);
		struct kc_range keep;

		if (upper)
			*s0 += half;
		else
			*s1 -= half;
		keep = kc_lay_slices(l, b->esize, *s0, *s1);
		kc_b_send(b, peer, l->r.buf, snd.off, snd.len);
		kc_b_recv_reduce(b, peer, l->r.buf, keep.off, keep.len);
		kc_b_round(b);
	}
}

/*
 * The reverse: vector doubling + distance halving, from the slices
 * [s0, s1) rhd_halving() left.  With every member (AllGather part of
 * AllReduce) pairs swap their halves.  Towards root vroot only (Reduce),
 * the member whose rel = v ^ vroot has bit j as its highest bit receives
 * in the steps before j, sends all it holds in step j and is done; the
 * member it pairs with (bit j of rel clear) receives.
 */
static void rhd_doubling(struct kc_builder *b, const struct kc_group *g,
			 const struct rhd_fold *f, u32 v, const struct kc_layout *l,
			 u32 s0, u32 s1, bool rooted, u32 vroot)
{
	u32 j, rel = v ^ vroot;

	for (j = f->k; j-- > 0;) {
		u32 size = s1 - s0, peer = rhd_vrank(g, f, v ^ (1u << j));
		bool upper = (v >> j) & 1;
		struct kc_range mine = kc_lay_slices(l, b->esize, s0, s1), other;

		/* towards the root, bit j is the highest bit of rel: my last step */
		if (rooted && (rel >> j)) {
			kc_b_send(b, peer, l->r.buf, mine.off, mine.len);
			kc_b_round(b);
			break;
		}
		if (upper)
			s0 -= size;
		else
			s1 += size;
		other = upper ? kc_lay_slices(l, b->esize, s0, s0 + size) :
			kc_lay_slices(l, b->esize, s1 - size, s1);
		if (!rooted)
			kc_b_send(b, peer, l->r.buf, mine.off, mine.len);
		kc_b_recv(b, peer, l->r.buf, other.off, other.len);
		kc_b_round(b);
	}
}

static int rhd_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct rhd_fold f;
	struct kc_layout l;

	rhd_fold_init(&f, g->size, 0);
	l = kc_lay_even(r, f.pw);
	rhd_pair_xfer(b, g, &f, r->buf, rhd_whole(b, r), true, true);
	if (rhd_in_block(&f, g->me)) {
		u32 v = rhd_vidx(&f, g->me), s0 = 0, s1 = f.pw;

		rhd_halving(b, g, &f, v, &l, &s0, &s1);
		rhd_doubling(b, g, &f, v, &l, s0, s1, false, 0);
	}
	rhd_pair_xfer(b, g, &f, r->buf, rhd_whole(b, r), false, false);
	return 0;
}

static int rhd_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r)
{
	struct rhd_fold f;
	struct kc_layout l;

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	rhd_fold_init(&f, g->size, root & 1);
	l = kc_lay_even(r, f.pw);
	rhd_pair_xfer(b, g, &f, r->buf, rhd_whole(b, r), true, true);
	if (rhd_in_block(&f, g->me)) {
		u32 v = rhd_vidx(&f, g->me), s0 = 0, s1 = f.pw;

		rhd_halving(b, g, &f, v, &l, &s0, &s1);
		rhd_doubling(b, g, &f, v, &l, s0, s1, true, rhd_vidx(&f, root));
	}
	return 0;
}

/* ------------------------------------ ordered ReduceScatter / AllGather */

/* First block owned by block member v: members 2v, 2v + 1 for v < r. */
static u32 rhd_own(const struct rhd_fold *f, u32 v)
{
	return v < f->r ? 2 * v : v + f->r;
}

/* The blocks of l owned by block members [v0, v1). */
static struct kc_range rhd_span(const struct kc_builder *b, const struct rhd_fold *f,
				const struct kc_layout *l, u32 v0, u32 v1)
{
	return kc_lay_slices(l, b->esize, rhd_own(f, v0) * l->spb, rhd_own(f, v1) * l->spb);
}

static struct kc_range rhd_all_blocks(const struct kc_builder *b, const struct kc_layout *l)
{
	return kc_lay_slices(l, b->esize, 0, kc_lay_nblocks(l) * l->spb);
}

/*
 * Distance halving, keeping the scatter order: in step j (distance
 * d = p'/2^(j+1)) member v's interval of block members [a, a + 2d) splits
 * in two; v sends the blocks of the half without it to v ^ d and reduces
 * the blocks of its own half.  Block members v < r own two blocks each
 * and come first (as HCCL lays out its slices), so the lower half of an
 * interval holds d + min(d, r) blocks: step 2 moves
 * sum_j (d + min(d, r)) = p' - 1 + sum_j min(d, r) blocks, k + p' - 1 for
 * r = 1 up to 2p' - 2 for r >= p'/2, the bounds of HCCL's halving.
 */
static int rhd_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	struct rhd_fold f;
	u32 me = g->me;

	if (kc_lay_nblocks(l) != g->size)
		return kc_b_fail(b, -EINVAL);
	rhd_fold_init(&f, g->size, 0);
	rhd_pair_xfer(b, g, &f, l->r.buf, rhd_all_blocks(b, l), true, true);
	if (rhd_in_block(&f, me)) {
		u32 v = rhd_vidx(&f, me), a = 0, j;

		for (j = 0; j < f.k; j++) {
			u32 d = f.pw >> (j + 1), lo = a, hi = a + d;
			u32 peer = rhd_vrank(g, &f, v ^ d);
			struct kc_range snd, keep;

			if (v & d) {
				lo = a + d;
				hi = a + 2 * d;
				snd = rhd_span(b, &f, l, a, a + d);
				a += d;
			} else {
				snd = rhd_span(b, &f, l, a + d, a + 2 * d);
			}
			keep = rhd_span(b, &f, l, lo, hi);
			kc_b_send(b, peer, l->r.buf, snd.off, snd.len);
			kc_b_recv_reduce(b, peer, l->r.buf, keep.off, keep.len);
			kc_b_round(b);
		}
	}
	/* block member 2i scatters block 2i + 1 back to its partner */
	if (me < 2 * f.r)
		rhd_pair_xfer(b, g, &f, l->r.buf, kc_lay_block(l, b->esize, me | 1), false,
			      false);
	return 0;
}

/*
 * The mirror of rhd_rs(): the odd part1 members hand their block in, the
 * block doubles its intervals with distances 1, 2 .. p'/2, and the whole
 * region goes back out to the odd members.
 */
static int rhd_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	struct rhd_fold f;
	u32 me = g->me;

	if (kc_lay_nblocks(l) != g->size)
		return kc_b_fail(b, -EINVAL);
	rhd_fold_init(&f, g->size, 0);
	if (me < 2 * f.r)
		rhd_pair_xfer(b, g, &f, l->r.buf, kc_lay_block(l, b->esize, me | 1), true,
			      false);
	if (rhd_in_block(&f, me)) {
		u32 v = rhd_vidx(&f, me), d;

		for (d = 1; d < f.pw; d *= 2) {
			u32 a = v & ~(2 * d - 1), peer = rhd_vrank(g, &f, v ^ d);
			u32 m0 = v & d ? a + d : a, o0 = v & d ? a : a + d;
			struct kc_range mine = rhd_span(b, &f, l, m0, m0 + d);
			struct kc_range other = rhd_span(b, &f, l, o0, o0 + d);

			kc_b_send(b, peer, l->r.buf, mine.off, mine.len);
			kc_b_recv(b, peer, l->r.buf, other.off, other.len);
			kc_b_round(b);
		}
	}
	rhd_pair_xfer(b, g, &f, l->r.buf, rhd_all_blocks(b, l), false, false);
	return 0;
}

/* ------------------------------------------------------------ Broadcast */

/*
 * The root's parity picks which member of each part1 pair joins the
 * block, so the root is in it; the block runs distance halving from the
 * root (k rounds of the whole region) and its part1 members then send
 * once more to their partners: ceil(log2 p) rounds on every path.
 */
static int rhd_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		     const struct kc_region *r)
{
	struct rhd_fold f;

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	rhd_fold_init(&f, g->size, root & 1);
	if (rhd_in_block(&f, g->me)) {
		u32 v = rhd_vidx(&f, g->me), rel = v ^ rhd_vidx(&f, root), mask;
		u64 len = kc_region_bytes(r, b->esize);

		for (mask = f.pw / 2; mask; mask /= 2) {
			u32 peer = rhd_vrank(g, &f, v ^ mask);

			/* holders so far are the multiples of 2 * mask */
			if (!(rel & (mask - 1))) {
				if (rel & mask)
					kc_b_recv(b, peer, r->buf, r->off, len);
				else
					kc_b_send(b, peer, r->buf, r->off, len);
			}
			kc_b_round(b);
		}
	}
	rhd_pair_xfer(b, g, &f, r->buf, rhd_whole(b, r), false, false);
	return 0;
}

/* ----------------------------------------------------- Scatter / Gather */

/* One transfer of a subtree's blocks [lo, hi) between me and peer. */
struct rhd_hop {
	u32 peer;
	u32 lo;
	u32 hi;
	bool from_me;	/* in the scatter direction */
};

#define RHD_MAX_DEPTH 32

/*
 * The binomial scatter tree over the member interval, distances halving:
 * with L = ceil(log2 p), in round t (mask m = 2^(L-1-t)) every holder of
 * an interval of c > m members keeps m of them, itself included, and
 * sends the other c - m, taken from the end of its interval away from
 * itself so that both parts stay contiguous, to the nearest member among
 * them, which holds that piece from then on.  The root sends p - 2^(L-1),
 * then m blocks in every later round, the most of any holder in that
 * round: (p - 1)/p n on the critical path.  Records my transfers in round
 * order; returns how many.
 */
static u32 rhd_tree(u32 p, u32 root, u32 me, struct rhd_hop *hop)
{
	u32 lo = 0, hi = p, h = root, n = 0, depth = 0, m;

	while (((u64)1 << depth) < p)
		depth++;
	for (m = depth ? 1u << (depth - 1) : 0; m; m /= 2) {
		u32 c = hi - lo, plo, phi, o;

		if (c <= m)
			continue;
		if (h >= lo + (c - m)) {
			plo = lo;
			phi = lo + (c - m);
			o = phi - 1;
		} else {
			plo = hi - (c - m);
			phi = hi;
			o = plo;
		}
		if ((me == h || me == o) && n < RHD_MAX_DEPTH) {
			hop[n].peer = me == h ? o : h;
			hop[n].lo = plo;
			hop[n].hi = phi;
			hop[n].from_me = me == h;
			n++;
		}
		if (me >= plo && me < phi) {
			lo = plo;
			hi = phi;
			h = o;
		} else if (plo == lo) {
			lo = phi;
		} else {
			hi = plo;
		}
	}
	return n;
}

static int rhd_scatter_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
			      const struct kc_layout *l, bool gather)
{
	struct rhd_hop hop[RHD_MAX_DEPTH];
	u32 n, i;

	if (root >= g->size || kc_lay_nblocks(l) != g->size)
		return kc_b_fail(b, -EINVAL);
	n = rhd_tree(g->size, root, g->me, hop);
	for (i = 0; i < n; i++) {
		const struct rhd_hop *h = &hop[gather ? n - 1 - i : i];
		struct kc_range rg = kc_lay_slices(l, b->esize, h->lo * l->spb, h->hi * l->spb);
		u32 peer = kc_grp_rank(g, h->peer);

		if (h->from_me != gather)
			kc_b_send(b, peer, l->r.buf, rg.off, rg.len);
		else
			kc_b_recv(b, peer, l->r.buf, rg.off, rg.len);
		kc_b_round(b);
	}
	return 0;
}

static int rhd_scatter(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l)
{
	return rhd_scatter_gather(b, g, root, l, false);
}

static int rhd_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_layout *l)
{
	return rhd_scatter_gather(b, g, root, l, true);
}

/* -------------------------------------------------------------- Barrier */

static int rhd_barrier(struct kc_builder *b, const struct kc_group *g)
{
	struct rhd_fold f;
	u32 me = g->me;

	rhd_fold_init(&f, g->size, 0);
	if (me < 2 * f.r) {
		if (me & 1)
			kc_b_sync_send(b, kc_grp_rank(g, me ^ 1));
		else
			kc_b_sync_recv(b, kc_grp_rank(g, me ^ 1));
		kc_b_round(b);
	}
	if (rhd_in_block(&f, me)) {
		u32 v = rhd_vidx(&f, me), d;

		for (d = 1; d < f.pw; d *= 2) {
			kc_b_sync_send(b, rhd_vrank(g, &f, v ^ d));
			kc_b_sync_recv(b, rhd_vrank(g, &f, v ^ d));
			kc_b_round(b);
		}
	}
	/* the odd members leave only once the block has completed */
	if (me < 2 * f.r) {
		if (me & 1)
			kc_b_sync_recv(b, kc_grp_rank(g, me ^ 1));
		else
			kc_b_sync_send(b, kc_grp_rank(g, me ^ 1));
		kc_b_round(b);
	}
	return 0;
}

/* RHD, including the non-power-of-two totals. */
static u64 rhd_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	u64 k = kc_ilog2(p), pp = 1ull << k, L = kc_clog2(p), s = 0, i;
	bool pow2 = pp == p;

	(void)port;
	/* sum_{i=1..k} ceil(p / 2^i): the non-uniform halving */
	for (i = 1; i <= k; i++)
		s += (p + (1ull << i) - 1) >> i;
	switch (op) {
	case KCOLL_OP_REDUCESCATTER:
		if (pow2)
			return kc_abg(l, k, n, p - 1, p, p - 1, p);
		/* Reduce alpha+n(b+g), halving sum, Scatter alpha+n/p b */
		return kc_abg(l, k + 2, n, p + s + 1, p, p + s, p);
	case KCOLL_OP_ALLGATHER:
		if (pow2)
			return kc_abg(l, k, n, p - 1, p, 0, 1);
		return kc_abg(l, k + 2, n, p + s + 1, p, 0, 1);
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
		/*
		 * No formula: alg_rhd.c's binomial tree over contiguous
		 * intervals, L rounds; the root sends (receives) every other
		 * block once, (p - 1)/p n, the most of any member (exact
		 * in the simulator).
		 */
		return kc_abg(l, L, n, p - 1, p, 0, 1);
	case KCOLL_OP_ALLREDUCE:
		if (pow2)
			return kc_abg(l, 2 * k, n, 2 * (p - 1), p, p - 1, p);
		return kc_abg(l, 2 * k + 2, n, 2 * (pp - 1) + 2 * pp, pp, 2 * pp - 1, pp);
	case KCOLL_OP_REDUCE:
		if (pow2)
			return kc_abg(l, 2 * k, n, 2 * (p - 1), p, p - 1, p);
		return kc_abg(l, 2 * k + 1, n, 2 * (pp - 1) + pp, pp, 2 * pp - 1, pp);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, L, n, L, 1, 0, 1);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, pow2 ? k : k + 2, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

#define KC_RHD_FOLD_SLOW 0x80000000u	/* bit 31: above any distance bit */

/*
 * Which exchanges of RHD's AllReduce and Reduce (alg_rhd.c, root 0) cross
 * a pod of group g: bit j when a pair of the block at distance 2^j does,
 * KC_RHD_FOLD_SLOW when a fold pair (2i, 2i + 1) does.  A step lasts as
 * long as its slowest pair.
 */
static u32 rhd_topo_cache(const struct kc_topo *t, const struct kc_group *g)
{
	u32 p = g->size, k = kc_ilog2(p), r = p - (1u << k), v, j, mask = 0;

	for (v = 0; v < r; v++)
		if (kc_cost_member_pod(t, g, 2 * v) != kc_cost_member_pod(t, g, 2 * v + 1))
			mask |= KC_RHD_FOLD_SLOW;
	for (v = 0; v < (1u << k); v++) {
		u32 a = kc_cost_member_pod(t, g, v < r ? 2 * v : v + r);

		for (j = 0; j < k; j++) {
			u32 w = v ^ (1u << j);

			if (kc_cost_member_pod(t, g, w < r ? 2 * w : w + r) != a)
				mask |= 1u << j;
		}
	}
	return mask;
}

/*
 * RHD's AllReduce (Reduce) on a merged level: *x of the *d units of n/p'
 * its beta counts cross a pod.  The exchange at distance 2^j moves n/2^(j+1)
 * each way (halving, then doubling back: twice), the fold n and the
 * unfold n (Reduce: no unfold).  Its RS and AG on a power of two, whose
 * exchange at distance 2^j moves 2^j of the p - 1 blocks that the
 * formula counts.
 */
static void rhd_slow_steps(const struct kc_cost_lv *l, u32 op, u32 mask, u64 *x, u64 *d)
{
	u32 p = l->size, k = kc_ilog2(p), j;
	u64 pw = 1ull << k, folds = p > pw ? (op == KCOLL_OP_REDUCE ? 1 : 2) : 0;

	if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) {
		/*
		 * p a power of two: the exchange at distance 2^j moves 2^j
		 * blocks of n/p, so the slow ones add up to the mask's low bits.
		 */
		*d = pw - 1;
		*x = mask & (pw - 1);
		return;
	}
	*d = 2 * (pw - 1) + folds * pw;
	*x = mask & KC_RHD_FOLD_SLOW ? folds * pw : 0;
	for (j = 0; j < k; j++)
		if (mask & (1u << j))
			*x += pw >> j;
}

/*
 * On a merged level: Scatter and Gather by their halving sends, the
 * exchanges that cross a pod in AllReduce, Reduce and, on a power of two,
 * ReduceScatter and AllGather; Broadcast's binomial rounds.
 */
static bool rhd_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	(void)n;
	if (kc_cost_spread_slow(l, op, KC_COST_HALVING, x, d))
		return true;
	if (op == KCOLL_OP_BROADCAST) {
		kc_cost_rounds_slow(l, x, d);
		return true;
	}
	/*
	 * ReduceScatter and AllGather not with a fold: which half of an
	 * interval holds the two-block members decides which pairs carry
	 * the most.
	 */
	if (op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_REDUCE ||
	    ((op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) && kc_is_pow2(l->size))) {
		rhd_slow_steps(l, op, cache, x, d);
		return true;
	}
	return false;
}

KC_ALGO_DECLARE(rhd);

const struct kc_algo_ops kc_alg_rhd = {
	.id = KCOLL_ALGO_RHD,
	.name = "rhd",
	.hccl = "H-D_R",
	.rs = rhd_rs,
	.ag = rhd_ag,
	.ar = rhd_ar,
	.bcast = rhd_bcast,
	.reduce = rhd_reduce,
	.scatter = rhd_scatter,
	.gather = rhd_gather,
	.barrier_op = rhd_barrier,
	.cost = rhd_cost,
	.slow = rhd_slow,
	.topo_cache = rhd_topo_cache,
	.auto_rank = 4,
};
