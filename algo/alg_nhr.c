// SPDX-License-Identifier: GPL-2.0
/*
 * NHR, Nonuniform Hierarchical Ring (HCCL "NHR";
 * Documentation/algorithms.md).  S = bit length of p - 1 steps for any p,
 * each step exchanging with the member at distance 2^s (RS, Scatter,
 * barrier) or 2^(S-1-s) (AG), so the large early transfers go between near
 * neighbours.
 *
 * Every step moves a list of slices (blocks) of the form base,
 * base - 2^k, base - 2 * 2^k, ... (mod p).  Sender and receiver compute
 * the very same list, so they cut it into the same transfers.
 *
 * AllReduce, Broadcast and Reduce only need the whole region at the end,
 * so there the slices are stored in the order of HCCL's GetRankMapping
 * (keepOrder = false): positions are de-interleaved, even ones first, for
 * as long as the steps carry more than one slice and the parts stay of
 * even length.  A step's slices then mostly sit side by side in memory
 * and go as one transfer (always for a power of two p).  RS, AG, Scatter
 * and Gather keep the block order their callers fixed.
 */
#include "kc_algo.h"
#include "kc_cost.h"

/* Slice storage order: the layout and the remap levels (0 = identity). */
struct nhr_map {
	const struct kc_layout *l;
	u32 p;
	u32 levels;
};

/* The slices base, base - 2^shift, base - 2 * 2^shift, ..., n of them, mod p. */
struct nhr_list {
	u32 base;
	u32 shift;
	u32 n;
};

enum nhr_dir {
	NHR_SEND,
	NHR_RECV,
	NHR_RECV_REDUCE,
};

/* Steps: the bit length of p - 1 (HCCL's GetStepNumInterServer). */
static u32 nhr_steps(u32 p)
{
	u32 s = 0, t;

	for (t = p - 1; t; t >>= 1)
		s++;
	return s;
}

/* Slices per RS step at distance h: those at odd multiples of h below p. */
static u32 nhr_nslices(u32 p, u64 h)
{
	return (u32)(((u64)p - 1 + h) / (2 * h));
}

static u32 nhr_member(const struct kc_group *g, s64 i)
{
	return kc_grp_rank(g, kc_grp_mod(g, i));
}

static struct nhr_map nhr_plain(const struct kc_group *g, const struct kc_layout *l)
{
	struct nhr_map m = { l, g->size, 0 };

	return m;
}

/* GetRankMapping(keepOrder = false): how many de-interleave levels apply. */
static struct nhr_map nhr_remapped(const struct kc_group *g, const struct kc_layout *l)
{
	struct nhr_map m = { l, g->size, 0 };
	u32 s, len = g->size, nsteps = nhr_steps(g->size);

	for (s = 0; s < nsteps && nhr_nslices(g->size, (u64)1 << s) > 1; s++) {
		m.levels++;
		if (len & 1)
			break;
		len >>= 1;
	}
	return m;
}

/*
 * Where slice j is stored.  Level v splits the positions into parts of
 * p >> v (all even but maybe the last level's) and moves the even offsets
 * of each part to its first half, the odd ones to its second half.
 */
static u32 nhr_pos(const struct nhr_map *m, u32 j)
{
	u32 v;

	for (v = 0; v < m->levels; v++) {
		u32 len = m->p >> v, off = j % len;

		j = j - off + (off & 1) * ((len + 1) / 2) + off / 2;
	}
	return j;
}

/* The inverse of nhr_pos(): which slice is stored at position q. */
static u32 nhr_slice_at(const struct nhr_map *m, u32 q)
{
	u32 v;

	for (v = m->levels; v-- > 0;) {
		u32 len = m->p >> v, off = q % len, half = (len + 1) / 2;

		q = q - off + (off < half ? 2 * off : 2 * (off - half) + 1);
	}
	return q;
}

static u32 nhr_at(const struct nhr_map *m, const struct nhr_list *ls, u32 i)
{
	u64 back = ((u64)i << ls->shift) % m->p;

	return (u32)(((u64)ls->base + m->p - back) % m->p);
}

static bool nhr_in(const struct nhr_map *m, const struct nhr_list *ls, u32 j)
{
	u64 d = j <= ls->base ? ls->base - j : (u64)ls->base + m->p - j;

	return !(d & (((u64)1 << ls->shift) - 1)) && (d >> ls->shift) < ls->n;
}

/*
 * A list that is a whole residue class modulo 2^shift, when the remap
 * de-interleaves at least shift levels of even length, is one subtree
 * of the remap: a single run of p >> shift positions.  Returns false if
 * that does not apply, else the run's first position in *lo.
 */
static bool nhr_subtree_run(const struct nhr_map *m, const struct nhr_list *ls, u32 *lo)
{
	u32 v, len = m->p;

	if (ls->shift > m->levels || m->p & ((1u << ls->shift) - 1) ||
	    ls->n != m->p >> ls->shift)
		return false;
	*lo = 0;
	for (v = 0; v < ls->shift; v++) {
		len >>= 1;
		*lo += ((ls->base >> v) & 1) * len;
	}
	return true;
}

/*
 * Move the slices of a list to or from peer: one transfer per run of
 * adjacent positions, runs in the order of their first slice in the list.
 * A slice whose position follows another listed one belongs to that run.
 */
static void nhr_run(struct kc_builder *b, const struct nhr_map *m, enum nhr_dir dir, u32 peer,
		    u32 lo, u32 hi)
{
	struct kc_range rg = kc_lay_slices(m->l, b->esize, lo * m->l->spb, hi * m->l->spb);

	if (dir == NHR_SEND)
		kc_b_send(b, peer, m->l->r.buf, rg.off, rg.len);
	else if (dir == NHR_RECV)
		kc_b_recv(b, peer, m->l->r.buf, rg.off, rg.len);
	else
		kc_b_recv_reduce(b, peer, m->l->r.buf, rg.off, rg.len);
}

/*
 * Move the slices of a list to or from peer: one transfer per run of
 * adjacent positions, runs in the order of their first slice in the list.
 * A slice whose position follows another listed one belongs to that run.
 * Lists past the remap's levels have few runs only when they are short, so
 * the walk stays proportional to the transfers it writes.
 */
static void nhr_xfer(struct kc_builder *b, const struct nhr_map *m, const struct nhr_list *ls,
		     enum nhr_dir dir, u32 peer)
{
	static const u8 kinds[] = { KC_STEP_SEND, KC_STEP_RECV, KC_STEP_RECV_REDUCE };
	u32 i, lo, hi;

	if (nhr_subtree_run(m, ls, &lo)) {
		nhr_run(b, m, dir, peer, lo, lo + (m->p >> ls->shift));
		return;
	}
	if (!m->levels && ls->n > 1 && kc_lay_nblocks(m->l) == m->p) {
		/* blocks in their own order: one transfer per slice, stepping back 2^shift */
		struct kc_group one = { .size = 1, .base = peer };

		kc_b_rep_begin(b, ls->n, false);
		kc_b_rep_xfer(b, kinds[dir], &one, 0, 0, m->l, ls->base, -((s64)1 << ls->shift));
		kc_b_rep_end(b);
		return;
	}
	for (i = 0; i < ls->n; i++) {
		lo = nhr_pos(m, nhr_at(m, ls, i));
		hi = lo + 1;
		if (m->levels) {
			if (lo > 0 && nhr_in(m, ls, nhr_slice_at(m, lo - 1)))
				continue;
			while (hi < m->p && nhr_in(m, ls, nhr_slice_at(m, hi)))
				hi++;
		}
		nhr_run(b, m, dir, peer, lo, hi);
	}
}

/*
 * RS step s: send the partial slices at odd multiples of 2^s below me to
 * me - 2^s, and reduce those at multiples of 2^(s+1) from me + 2^s.  Slice
 * j therefore travels a binomial tree towards member j: the member at
 * distance d from j forwards it in step lowbit(d), after its children at
 * d + 2^t (t < lowbit(d)) delivered in the earlier steps.
 */
static int nhr_do_rs(struct kc_builder *b, const struct kc_group *g, const struct nhr_map *m)
{
	u32 p = g->size, me = g->me, nsteps = nhr_steps(p), s;

	for (s = 0; s < nsteps; s++) {
		u64 h = (u64)1 << s;
		u32 n = nhr_nslices(p, h), to = kc_grp_mod(g, (s64)me - h);
		struct nhr_list tx = { to, s + 1, n }, rx = { me, s + 1, n };

		nhr_xfer(b, m, &tx, NHR_SEND, kc_grp_rank(g, to));
		nhr_xfer(b, m, &rx, NHR_RECV_REDUCE, nhr_member(g, (s64)me + h));
		kc_b_round(b);
	}
	return 0;
}

/*
 * AG step s, d = 2^(S-1-s): send what I hold at multiples of 2d below me
 * to me + d and receive the slices at odd multiples of d below me from
 * me - d: the RS trees run backwards.
 */
static int nhr_do_ag(struct kc_builder *b, const struct kc_group *g, const struct nhr_map *m)
{
	u32 p = g->size, me = g->me, nsteps = nhr_steps(p), s;

	for (s = 0; s < nsteps; s++) {
		u64 d = (u64)1 << (nsteps - 1 - s);
		u32 n = nhr_nslices(p, d), from = kc_grp_mod(g, (s64)me - d);
		struct nhr_list tx = { me, nsteps - s, n }, rx = { from, nsteps - s, n };

		nhr_xfer(b, m, &tx, NHR_SEND, nhr_member(g, (s64)me + d));
		nhr_xfer(b, m, &rx, NHR_RECV, kc_grp_rank(g, from));
		kc_b_round(b);
	}
	return 0;
}

/*
 * Scatter (HCCL ScatterNHR): with e = (root - me) mod p, in step s the
 * members with e < 2^s and e + 2^s < p send to me - 2^s, which receives.
 * The receiver at e' = e + 2^s later serves e' + k * 2^(s+1) (< p), so it
 * gets exactly those slices: me - 2^s - k * 2^(s+1).  (HCCL sends nSlices
 * of the RS step whatever e' is; the ones past p are of no use to anyone.)
 */
static u32 nhr_subtree(u32 p, u32 e, u64 h)
{
	return (u32)(((u64)p - 1 - e) / (2 * h) + 1);
}

/*
 * Scatter at step s (increasing): a member with e < 2^s sends the subtree
 * of member e + 2^s to it.  Gather runs the steps in reverse order, every
 * transfer reversed.
 */
static int nhr_tree(struct kc_builder *b, const struct kc_group *g, u32 root,
		    const struct nhr_map *m, bool scatter)
{
	u32 p = g->size, me = g->me, e = kc_grp_mod(g, (s64)root - me), nsteps = nhr_steps(p), i;

	for (i = 0; i < nsteps; i++) {
		u32 s = scatter ? i : nsteps - 1 - i;
		u64 h = (u64)1 << s;

		if (e < h && e + h < p) {
			u32 low = kc_grp_mod(g, (s64)me - h);
			struct nhr_list ls = { low, s + 1, nhr_subtree(p, e + h, h) };

			nhr_xfer(b, m, &ls, scatter ? NHR_SEND : NHR_RECV, kc_grp_rank(g, low));
		} else if (e >= h && e < 2 * h) {
			struct nhr_list ls = { me, s + 1, nhr_subtree(p, e, h) };

			nhr_xfer(b, m, &ls, scatter ? NHR_RECV : NHR_SEND,
				 nhr_member(g, (s64)me + h));
		}
		kc_b_round(b);
	}
	return 0;
}

static int nhr_check_layout(struct kc_builder *b, const struct kc_group *g,
			    const struct kc_layout *l)
{
	if (!l->spb || kc_lay_nblocks(l) != g->size)
		return kc_b_fail(b, -EINVAL);
	return 0;
}

static int nhr_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	struct nhr_map m = nhr_plain(g, l);

	return nhr_check_layout(b, g, l) ?: nhr_do_rs(b, g, &m);
}

static int nhr_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	struct nhr_map m = nhr_plain(g, l);

	return nhr_check_layout(b, g, l) ?: nhr_do_ag(b, g, &m);
}

static int nhr_scatter(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l)
{
	struct nhr_map m = nhr_plain(g, l);

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	return nhr_check_layout(b, g, l) ?: nhr_tree(b, g, root, &m, true);
}

static int nhr_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_layout *l)
{
	struct nhr_map m = nhr_plain(g, l);

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	return nhr_check_layout(b, g, l) ?: nhr_tree(b, g, root, &m, false);
}

/* RS + AG over the remapped slices of r. */
static int nhr_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	struct nhr_map m = nhr_remapped(g, &l);

	return nhr_do_rs(b, g, &m) ?: nhr_do_ag(b, g, &m);
}

/* Scatter + AG over the remapped slices of r. */
static int nhr_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		     const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	struct nhr_map m = nhr_remapped(g, &l);

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	return nhr_tree(b, g, root, &m, true) ?: nhr_do_ag(b, g, &m);
}

/* RS + Gather to the root over the remapped slices of r. */
static int nhr_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	struct nhr_map m = nhr_remapped(g, &l);

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	return nhr_do_rs(b, g, &m) ?: nhr_tree(b, g, root, &m, false);
}

/*
 * Dissemination: in step s a token goes to me - 2^s and comes from
 * me + 2^s.  After step s I have heard, through chains, from me + 1 ..
 * me + 2^(s+1) - 1, so after S steps (2^S - 1 >= p - 1) from everyone.
 */
static int nhr_barrier(struct kc_builder *b, const struct kc_group *g)
{
	u32 nsteps = nhr_steps(g->size), s;

	for (s = 0; s < nsteps; s++) {
		s64 h = (s64)1 << s;

		kc_b_sync_send(b, nhr_member(g, (s64)g->me - h));
		kc_b_sync_recv(b, nhr_member(g, (s64)g->me + h));
		kc_b_round(b);
	}
	return 0;
}

/*
 * Blocks of n/p every member of Bruck's AlltoAll sends over its
 * ceil(log2 p) steps: in step s those whose index j (1..p-1) has bit s
 * set, p/2 per step only when p is a power of two (ceil(log2 p) / 2 n
 * overcharged 5 ranks by 50%, 192 by 9%).
 */
static u64 kc_cost_bruck_blocks(u64 p)
{
	u64 b = 0, s, L = kc_clog2(p);

	for (s = 0; s < L; s++) {
		u64 h = 1ull << s, r = p % (2 * h);

		b += p / (2 * h) * h + (r > h ? r - h : 0);
	}
	return b;
}

/*
 * NHR and NB share their formulas; Reduce = RS + Gather.
 * Their phases that move one message per block pay the window
 * (kc_cost_log_alphas()): NHR's ReduceScatter, AllGather, Scatter and
 * Gather; NB's ReduceScatter, Scatter and Gather, also inside its
 * AllReduce and Reduce (NB's AllGather sends contiguous runs).  NHR's
 * AllReduce, Reduce and Broadcast do not (simulated with coll-sim's
 * default executor).
 */
u64 kc_nhr_cost(bool nb, u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
	u64 L = kc_clog2(p), W = kc_cost_log_alphas(p, l->window);

	switch (op) {
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
		return kc_abg(l, W, n, p - 1, p, 0, 1);
	case KCOLL_OP_ALLGATHER:
		return kc_abg(l, nb ? L : W, n, p - 1, p, 0, 1);
	case KCOLL_OP_REDUCESCATTER:
		return kc_abg(l, W, n, p - 1, p, p - 1, p);
	case KCOLL_OP_ALLREDUCE:
		return kc_abg(l, nb ? W + L : 2 * L, n, 2 * (p - 1), p, p - 1, p);
	case KCOLL_OP_REDUCE:
		return kc_abg(l, nb ? 2 * W : 2 * L, n, 2 * (p - 1), p, p - 1, p);
	case KCOLL_OP_BROADCAST:
		/* NB: BroadcastNBBinary for p == 2 or under 64 KiB (alg_nb.c) */
		if (nb && kc_nb_bcast_binomial(p, n))
			return kc_abg(l, L, n, L, 1, 0, 1);
		return kc_abg(l, 2 * L, n, 2 * (p - 1), p, 0, 1);
	case KCOLL_OP_ALLTOALL:
		/* NB only: Bruck (kc_cost_bruck_blocks()) */
		return nb ?
		       kc_abg(l, L, n, kc_cost_bruck_blocks(p), p, 0, 1) : KC_COST_INF;
	case KCOLL_OP_BARRIER:
		return kc_abg(l, L, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

static u64 nhr_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	(void)port;
	return kc_nhr_cost(false, op, p, n, l);
}

/* Scatter and Gather on a merged level: the tree's sends to member p - 2^s. */
static bool nhr_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	(void)n;
	(void)cache;
	return kc_cost_spread_slow(l, op, KC_COST_BINOMIAL_DOWN, x, d);
}

KC_ALGO_DECLARE(nhr);

const struct kc_algo_ops kc_alg_nhr = {
	.id = KCOLL_ALGO_NHR,
	.name = "nhr",
	.hccl = "NHR",
	.rs = nhr_rs,
	.ag = nhr_ag,
	.ar = nhr_ar,
	.bcast = nhr_bcast,
	.reduce = nhr_reduce,
	.scatter = nhr_scatter,
	.gather = nhr_gather,
	.barrier_op = nhr_barrier,
	.cost = nhr_cost,
	.slow = nhr_slow,
	.auto_rank = 2,
};
