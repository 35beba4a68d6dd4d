// SPDX-License-Identifier: GPL-2.0
/*
 * Closed-form costs (see kc_cost.h).  Notation as the spec: p members,
 * n bytes, L = ceil(log2 p), k = floor(log2 p), p' = 2^k.  Each formula
 * is written as  A * alpha + (bn / bd) * n * beta + (gn / gd) * n * gamma
 * so the integer arithmetic rounds once per term.
 */
#include "kc_cost.h"

/* Defaults: 1 us / 50 GB/s inside a server, 5 us / 25 GB/s between, 10 GB/s reduce. */
const struct kc_cost_model kc_cost_default = {
	.lv = {
		[KCOLL_LEVEL0] = { .alpha = 1000000000ull, .beta = 20000, .gamma = 100000 },
		[KCOLL_LEVEL1] = { .alpha = 5000000000ull, .beta = 40000, .gamma = 100000 },
		[KCOLL_LEVEL2] = { .alpha = 5000000000ull, .beta = 40000, .gamma = 100000 },
	},
	.conv_q8 = 256,
	.window = 8,
};

u64 kc_cost_add(u64 a, u64 b)
{
	u64 s;

	return check_add_overflow(a, b, &s) ? KC_COST_INF : s;
}

static u64 kc_cost_mul(u64 a, u64 b)
{
	u64 m;

	return check_mul_overflow(a, b, &m) ? KC_COST_INF : m;
}

u64 kc_cost_muldiv(u64 x, u64 num, u64 den)
{
	u64 q, r, hi, lo;

	if (!den || x == KC_COST_INF)
		return KC_COST_INF;
	q = x / den;
	r = x % den;
	hi = kc_cost_mul(q, num);
	/* r < den: r * num fits when den and num are below 2^32 */
	lo = (r && num > U64_MAX / r) ? KC_COST_INF : r * num / den;
	return kc_cost_add(hi, lo);
}

/* a * alpha + (bn / bd) * n * beta + (gn / gd) * n * gamma */
static u64 kc_abg(const struct kc_cost_link *l, u64 a, u64 n, u64 bn, u64 bd, u64 gn, u64 gd)
{
	u64 t = kc_cost_mul(a, l->alpha);

	t = kc_cost_add(t, kc_cost_muldiv(kc_cost_mul(n, l->beta), bn, bd));
	if (gn)
		t = kc_cost_add(t, kc_cost_muldiv(kc_cost_mul(n, l->gamma), gn, gd));
	return t;
}

static u64 kc_sum(u64 a, u64 b)
{
	return kc_cost_add(a, b);
}

/* Mesh (2.1).  Through one port (levels 1, 2) the p - 1 transfers share it. */
static u64 kc_cost_mesh(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	u64 f = port ? p - 1 : 1;	/* bandwidth terms scale by the sharing */

	switch (op) {
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return kc_abg(l, 1, n, f, p, 0, 1);
	case KCOLL_OP_REDUCESCATTER:
		return kc_abg(l, 1, n, f, p, p - 1, p);
	case KCOLL_OP_ALLREDUCE:
	case KCOLL_OP_REDUCE:
		return kc_abg(l, 2, n, 2 * f, p, p - 1, p);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, 2, n, 2 * f, p, 0, 1);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, 1, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/* Ring (2.2): unpipelined chains for Broadcast and Reduce. */
static u64 kc_cost_ring(u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
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

/* RHD (2.3, seed 003), including the non-power-of-two totals. */
static u64 kc_cost_rhd(u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
	u64 k = kc_ilog2(p), pp = 1ull << k, L = kc_clog2(p), s = 0, i;
	bool pow2 = pp == p;

	/* sum_{i=1..k} ceil(p / 2^i): the non-uniform halving of 2.3 */
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
		 * against the simulator, selftests/sim/test_select.c).
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

/*
 * Latencies of a log-step phase whose round i (1..ceil(log2 p)) sends
 * ceil(p / 2^i) blocks that are not contiguous, one message each: with W
 * messages in flight per peer the round takes ceil(blocks / W) latencies
 * (the executor sends the next message only when a slot frees).  The
 * spec's ceil(log2 p) when there is no window.
 */
static u64 kc_cost_log_alphas(u64 p, u32 window)
{
	u64 a = 0, i, L = kc_clog2(p);

	if (!window)
		return L;
	for (i = 1; i <= L; i++)
		a += (((p + (1ull << i) - 1) >> i) + window - 1) / window;
	return a;
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
 * NHR (2.4) and NB (2.5) share their formulas; Reduce = RS + Gather.
 * Their phases that move one message per block pay the window
 * (kc_cost_log_alphas()): NHR's ReduceScatter, AllGather, Scatter and
 * Gather; NB's ReduceScatter, Scatter and Gather, also inside its
 * AllReduce and Reduce (NB's AllGather sends contiguous runs).  NHR's
 * AllReduce, Reduce and Broadcast do not (simulated with coll-sim's
 * default executor: selftests/sim/test_select.c).
 */
static u64 kc_cost_nhr(u32 algo, u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
	u64 L = kc_clog2(p), W = kc_cost_log_alphas(p, l->window);
	bool nb = algo == KCOLL_ALGO_NB;

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
		if (algo == KCOLL_ALGO_NB && kc_nb_bcast_binomial(p, n))
			return kc_abg(l, L, n, L, 1, 0, 1);
		return kc_abg(l, 2 * L, n, 2 * (p - 1), p, 0, 1);
	case KCOLL_OP_ALLTOALL:
		/* NB only: Bruck (kc_cost_bruck_blocks()) */
		return algo == KCOLL_ALGO_NB ?
		       kc_abg(l, L, n, kc_cost_bruck_blocks(p), p, 0, 1) : KC_COST_INF;
	case KCOLL_OP_BARRIER:
		return kc_abg(l, L, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/*
 * Pairwise (2.6): p - 1 steps of one exchange each.  RS, AG and AR move
 * the ring's volumes in the ring's step count, so they cost the same.
 */
static u64 kc_cost_pairwise(u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
	switch (op) {
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return kc_abg(l, p - 1, n, p - 1, p, 0, 1);
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_ALLREDUCE:
		return kc_cost_ring(op, p, n, l);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, p - 1, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/*
 * Double binary tree (spec 5.1) as alg_tree.c builds it, unpipelined (one
 * piece per half): D = ceil(log2 p) rounds, each moving both halves (n)
 * through the busiest port, except where the deepest level is too thin
 * to be busy.  In Broadcast that is p = 2^(D-1) + 1: its one deepest
 * member gets a half from each tree in the last round.  In Reduce, with
 * tree 2 rotated, the last round of the up sweep moves only a half
 * through every port while p <= 2^D - 3 (and p = 3).  Broadcast and
 * Reduce are exact against the simulator in conformance mode for
 * p = 2..300 (selftests/sim/test_tree_cost.c).  AllReduce keeps D rounds
 * up and D down; the simulator's up and down sweeps share a round, so
 * this is about one round of bandwidth high.
 */
/* Halves of n Tree's Broadcast moves on its path: 2L, 2L - 1 when the last round is thin. */
static u64 kc_cost_tree_bcast_halves(u64 p)
{
	u64 L = kc_clog2(p);

	return 2 * L - (p > 2 && p == (1ULL << (L - 1)) + 1);
}

static u64 kc_cost_tree(u32 op, u64 p, u64 n, const struct kc_cost_link *l)
{
	u64 L = kc_clog2(p);
	bool thin_red = p == 3 || (p > 2 && p <= (1ULL << L) - 3);

	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return kc_abg(l, 2 * L, n, 2 * L, 1, L, 1);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, L, n, kc_cost_tree_bcast_halves(p), 2, 0, 1);
	case KCOLL_OP_REDUCE:
		if (kc_is_pow2(p))
			return kc_abg(l, L, n, L, 1, L, 1);
		/*
		 * A half is reduced in every round but one; when the last
		 * round is full, the path through it reduces only D / 2:
		 * two paths, the longer counts.
		 */
		if (thin_red)
			return kc_abg(l, L, n, 2 * L - 1, 2, 2 * L - 1, 2);
		return kc_max_u64(kc_abg(l, L, n, 2 * L - 1, 2, 2 * L - 1, 2),
				  kc_abg(l, L, n, L, 1, L, 2));
	case KCOLL_OP_BARRIER:
		return kc_abg(l, 2 * L, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

u64 kc_cost_phase(u32 algo, u32 op, u32 p, u64 n, const struct kc_cost_link *l, bool port)
{
	if (p <= 1)
		return 0;	/* nothing to exchange */
	switch (algo) {
	case KCOLL_ALGO_MESH:
		return kc_cost_mesh(op, p, n, l, port);
	case KCOLL_ALGO_RING:
		return kc_cost_ring(op, p, n, l);
	case KCOLL_ALGO_RHD:
		return kc_cost_rhd(op, p, n, l);
	case KCOLL_ALGO_NHR:
	case KCOLL_ALGO_NB:
		return kc_cost_nhr(algo, op, p, n, l);
	case KCOLL_ALGO_PAIRWISE:
		return kc_cost_pairwise(op, p, n, l);
	case KCOLL_ALGO_TREE:
		return kc_cost_tree(op, p, n, l);
	}
	return KC_COST_INF;
}

struct kc_cost_link kc_cost_level_link(const struct kc_cost_model *m, u32 lvl)
{
	struct kc_cost_link l = m->lv[lvl < KCOLL_LEVEL_COUNT ? lvl : KCOLL_LEVEL2];

	if (lvl >= KCOLL_LEVEL2)
		l.beta = kc_cost_muldiv(l.beta, m->conv_q8, 256);
	l.window = m->window;
	return l;
}

/* ------------------------------------------------------- composition */

/* Flat algorithms AUTO chooses among, in tie-break order. */
static const u32 kc_cost_flat_algos[] = {
	KCOLL_ALGO_MESH, KCOLL_ALGO_NHR, KCOLL_ALGO_RING, KCOLL_ALGO_RHD, KCOLL_ALGO_NB,
	KCOLL_ALGO_PAIRWISE, KCOLL_ALGO_TREE,
};

/* One effective level as the composition sees it. */
struct kc_cost_lv {
	u32 size;
	u32 cfg;	/* configuration level */
	u32 levels;	/* the configuration levels it stands for (struct kc_level) */
	struct kc_cost_link link;
	bool port;
	/*
	 * A level-1 group merged across unequal pods runs at level 2 (link),
	 * but only some of its transfers cross a pod: those inside one run
	 * on near, the level-1 link.  pods = how many pods it spans (0: not
	 * merged).
	 */
	struct kc_cost_link near;
	u32 pods;
	const struct kc_topo *t;
	struct kc_group g;	/* rank 0's group at this level */
};

/* The physical level of an effective level: merged pods run at level 2. */
static u32 kc_cost_phys(const struct kc_topo *t, const struct kc_level *lv)
{
	if (lv->cfg_level == KCOLL_LEVEL1 && t->npods > 1 &&
	    (u64)lv->span * lv->g.size > t->pod_ranks)
		return KCOLL_LEVEL2;
	return lv->cfg_level;
}

static u32 kc_cost_levels(const struct kc_topo *t, const struct kc_cost_model *m,
			  struct kc_cost_lv *out)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n = kc_topo_levels(t, 0, lv), i;

	for (i = 0; i < n; i++) {
		u32 ph = kc_cost_phys(t, &lv[i]);

		out[i].size = lv[i].g.size;
		out[i].cfg = lv[i].cfg_level;
		out[i].levels = lv[i].levels;
		out[i].link = kc_cost_level_link(m, ph);
		out[i].port = ph != KCOLL_LEVEL0;
		out[i].near = kc_cost_level_link(m, lv[i].cfg_level);
		out[i].pods = ph != lv[i].cfg_level ? t->npods : 0;
		out[i].t = t;
		out[i].g = lv[i].g;
	}
	return n;
}

/* The pod of member j of group g. */
static u32 kc_cost_member_pod(const struct kc_topo *t, const struct kc_group *g, u32 j)
{
	return t->pod_of[t->server_of[kc_grp_rank(g, j)]];
}

/*
 * The slow halves on the critical path of Tree's Broadcast from member 0
 * of group g (kc_tree_bcast_slow_halves()): 0 when there is no memory
 * for the walk, never otherwise on a level that spans pods.
 */
static u32 kc_cost_tree_bcast_walk(const struct kc_topo *t, const struct kc_group *g)
{
	u32 p = g->size, j, halves = 0;
	u32 *part = kc_zalloc((size_t)p * sizeof(*part));

	if (!part)
		return 0;
	for (j = 0; j < p; j++)
		part[j] = kc_cost_member_pod(t, g, j);
	if (kc_tree_bcast_slow_halves(p, part, &halves))
		halves = 0;
	kc_free(part);
	return halves;
}

#define KC_RHD_FOLD_SLOW 0x80000000u	/* bit 31: above any distance bit */

/*
 * Which exchanges of RHD's AllReduce and Reduce (alg_rhd.c, root 0) cross
 * a pod of group g: bit j when a pair of the block at distance 2^j does,
 * KC_RHD_FOLD_SLOW when a fold pair (2i, 2i + 1) does.  A step lasts as
 * long as its slowest pair.
 */
static u32 kc_cost_rhd_walk(const struct kc_topo *t, const struct kc_group *g)
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
 * The walks are O(p log p), the tree's 0.2-0.4 ms at 4096 members: too
 * slow for every submission, so the topology keeps them for rank 0's
 * group on its merged level, the only group the model prices.
 */
void kc_cost_topo_cache(struct kc_topo *t)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n, i;

	t->tree_bcast_slow = 0;
	t->rhd_slow_steps = 0;
	n = kc_topo_levels(t, 0, lv);
	for (i = 0; i < n; i++) {
		if (kc_cost_phys(t, &lv[i]) == lv[i].cfg_level)
			continue;
		t->tree_bcast_slow = kc_cost_tree_bcast_walk(t, &lv[i].g);
		t->rhd_slow_steps = kc_cost_rhd_walk(t, &lv[i].g);
	}
}

/*
 * RHD's AllReduce (Reduce) on a merged level: *x of the *d units of n/p'
 * its beta counts cross a pod.  The exchange at distance 2^j moves n/2^(j+1)
 * each way (halving, then doubling back: twice), the fold n and the
 * unfold n (Reduce: no unfold).  Its RS and AG on a power of two, whose
 * exchange at distance 2^j moves 2^j of the p - 1 blocks that the
 * formula counts.
 */
static void kc_cost_rhd_slow(const struct kc_cost_lv *l, u32 op, u64 *x, u64 *d)
{
	u32 p = l->size, k = kc_ilog2(p), j, mask = l->t->rhd_slow_steps;
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
 * The tree Broadcast's slow share on a merged level: *x of the *d halves
 * its beta counts run at level 2, root 0 (the topology's walk, or a new
 * one if that had no memory).  False when this one has none either.
 */
static bool kc_cost_tree_bcast_slow(const struct kc_cost_lv *l, u64 *x, u64 *d)
{
	u32 halves = l->t->tree_bcast_slow ?: kc_cost_tree_bcast_walk(l->t, &l->g);

	if (!halves)
		return false;
	*x = halves;
	*d = kc_cost_tree_bcast_halves(l->size);
	return true;
}

/*
 * The p - 1 blocks of a Scatter (Gather) on a merged level, root 0: how
 * many cross a pod on its critical path.  For the trees that is the
 * root's own chain of sends, the largest subtrees first (the members it
 * serves redistribute no more than it sends after them):
 *  - NB's: the subtree of member 2^s in step s, ceil((p - 2^s) / 2^(s+1))
 *    blocks, to the root's own pod until 2^s reaches the next one;
 *  - NHR's: the same subtrees, but to member p - 2^s, from the last pod
 *    down: all of them cross when the root's pod is the first;
 *  - RHD's: p - 2^(L-1) blocks to member 2^(L-1), then 2^s to 2^s.
 * Ring pipelines the blocks down the chain, and the first pod boundary
 * carries the blocks of every member past it: the slow link sets the
 * pace of those.  Against the simulator (selftests/sim/test_merged_cost.c)
 * NHR's and Ring's are exact; NB's and RHD's are where the root's chain
 * is the critical path (64+128, 8+16 x8, 16+32+64) and down to 0.74
 * where a member's chain behind the root crosses more (5+12, 3+5+7).
 */
static u64 kc_cost_scatter_slow(const struct kc_cost_lv *l, u32 algo)
{
	u32 p = l->size, L = kc_clog2(p), pod0 = kc_cost_member_pod(l->t, &l->g, 0), s;
	u64 x = 0;

	if (algo == KCOLL_ALGO_RING) {
		for (s = 1; s < p && kc_cost_member_pod(l->t, &l->g, s) == pod0; s++)
			;
		return p - s;
	}
	for (s = 0; s < L; s++) {
		u64 h = 1ull << s;
		u64 c = algo != KCOLL_ALGO_RHD ? (p - 1 - h) / (2 * h) + 1 :
			s == L - 1 ? p - h : h;
		u32 to = algo == KCOLL_ALGO_NHR ? (u32)(p - h) : (u32)h;

		if (kc_cost_member_pod(l->t, &l->g, to) != pod0)
			x += c;
	}
	return x;
}

/*
 * The link a phase of algo sees on level l.  A rooted phase on a merged
 * level crosses pods on only part of its work, the rest runs at level-1
 * speed, so beta is mixed (selftests/sim/test_merged_cost.c):
 *  - the NCCL tree Broadcast: the slow transfers on its critical path,
 *    walked (kc_cost_tree_bcast_slow(); exact in the simulator);
 *  - a binomial Broadcast (RHD's, and NB's below 64 KiB): one slow round
 *    per pod spanned, min(pods, L) of the L rounds at level 2 (exact);
 *    a tree Reduce is charged the same, within [0.9, 1.3] of the
 *    simulator, which times 0.25 to 2.5 slow rounds for 2 to 4 pods;
 *  - NB's Scatter + AllGather Broadcast and its RS + Gather Reduce: the
 *    Scatter's (Gather's) crossing blocks as below, and all of the AG
 *    (RS), every step of which has a crossing pair (exact on two pods,
 *    within 9% low on 3+5+7; (pods - 1) / pods of the bytes was 16% high
 *    on 16+32+64 and 14% low on 2+3, where selection lost 12% to
 *    AHC_BROKE);
 *  - Scatter and Gather: the blocks that cross on the root's chain of
 *    sends (kc_cost_scatter_slow(); exact, or at most 26% low);
 *  - RHD's AllReduce and Reduce, and its RS and AG on a power of two:
 *    the bytes of the exchanges in which a pair crosses
 *    (kc_cost_rhd_slow(); exact, were up to 1.86x high).
 * AllReduce is otherwise not rooted and charged at level 2 throughout.
 * Charging all of it at the converged bandwidth priced these up to 27%
 * too high at C = 4 (bench-select, 64+128 ranks).
 */
static struct kc_cost_link kc_cost_lv_link(const struct kc_cost_lv *l, u32 algo, u32 op, u64 n)
{
	struct kc_cost_link k = l->link;
	u64 L = kc_clog2(l->size), x, d;
	bool rooted = op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE;
	bool spread = op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER;
	/*
	 * RHD's RS and AG only on a power of two: with a fold, which half of
	 * an interval holds the two-block members decides which pairs carry
	 * the most, and the per-step count below read up to 14% low (64+128).
	 */
	bool halving = algo == KCOLL_ALGO_RHD &&
		       (op == KCOLL_OP_ALLREDUCE ||
			((op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) &&
			 kc_is_pow2(l->size)));
	bool binomial = op == KCOLL_OP_BROADCAST &&
			(algo == KCOLL_ALGO_RHD ||
			 (algo == KCOLL_ALGO_NB && kc_nb_bcast_binomial(l->size, n)));

	if (!l->pods || !(rooted || spread || halving) || l->near.beta >= k.beta || !L)
		return k;
	if (spread) {
		x = kc_cost_scatter_slow(l, algo);
		d = l->size - 1;
	} else if (algo == KCOLL_ALGO_RHD && op != KCOLL_OP_BROADCAST) {
		kc_cost_rhd_slow(l, op, &x, &d);
	} else if (algo == KCOLL_ALGO_TREE && op == KCOLL_OP_BROADCAST &&
	    kc_cost_tree_bcast_slow(l, &x, &d)) {
		/* x, d set: the walk of both trees */
	} else if (algo == KCOLL_ALGO_TREE || binomial) {
		x = l->pods < L ? l->pods : L;
		d = L;
	} else if (algo == KCOLL_ALGO_NB) {
		/* the Scatter's (Gather's) crossing blocks, and all of the AG's (RS's) */
		x = kc_cost_scatter_slow(l, algo) + l->size - 1;
		d = 2 * ((u64)l->size - 1);
	} else {
		return k;
	}
	k.beta = l->near.beta + kc_cost_muldiv(k.beta - l->near.beta, x, d);
	return k;
}

/* Cost of phase op1, and of op2 after it unless op2 is KC_NOOP, of algo. */
static u64 kc_cost_phases(u32 algo, u32 op1, u32 op2, u64 n, const struct kc_cost_lv *l)
{
	struct kc_cost_link k = kc_cost_lv_link(l, algo, op1, n);
	u64 c = kc_cost_phase(algo, op1, l->size, n, &k, l->port);

	if (op2 < KCOLL_OP_COUNT) {
		k = kc_cost_lv_link(l, algo, op2, n);
		c = kc_sum(c, kc_cost_phase(algo, op2, l->size, n, &k, l->port));
	}
	return c;
}

/* Cost of phases op1 (+ op2) of algo, or the cheapest flat algorithm's. */
static u64 kc_cost_pick(u32 algo, u32 op1, u32 op2, u64 n, const struct kc_cost_lv *l,
			u32 *chosen)
{
	u64 best = KC_COST_INF;
	u32 i;

	if (algo != KCOLL_ALGO_AUTO) {
		if (chosen)
			*chosen = algo;
		return kc_cost_phases(algo, op1, op2, n, l);
	}
	for (i = 0; i < ARRAY_SIZE(kc_cost_flat_algos); i++) {
		u32 a = kc_cost_flat_algos[i];
		u64 c;

		/*
		 * Mesh between servers: HCCL refuses it (spec 3.5), and the
		 * model, one alpha per step on a perfectly shared port, rates
		 * p - 1 concurrent messages as cheap as one; taken only where
		 * the level's ports were measured to overlap them.
		 */
		if (a == KCOLL_ALGO_MESH && l->port && !l->link.auto_mesh)
			continue;
		c = kc_cost_phases(a, op1, op2, n, l);
		if (c < best) {
			best = c;
			if (chosen)
				*chosen = a;
		}
	}
	return best;
}

#define KC_NOOP KCOLL_OP_COUNT

/* kc_hier.c's composition; algo[] per effective level (AUTO allowed). */
static u64 kc_cost_hier(const struct kc_cost_lv *lv, u32 nl, const u32 *algo, u32 op, u64 n,
			u32 *chosen)
{
	u64 t = 0, x = n;
	u32 l, top = nl - 1;

	if (!nl)
		return 0;
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
	case KCOLL_OP_BROADCAST:
	case KCOLL_OP_REDUCE: {
		u32 down = op == KCOLL_OP_ALLREDUCE ? KCOLL_OP_REDUCESCATTER :
			   op == KCOLL_OP_BROADCAST ? KCOLL_OP_SCATTER : KCOLL_OP_REDUCESCATTER;
		u32 up = op == KCOLL_OP_REDUCE ? KCOLL_OP_GATHER : KCOLL_OP_ALLGATHER;

		for (l = 0; l < top; l++) {
			const struct kc_algo_ops *a = kc_algo_get(algo[l]);

			/* kc_hier.c: no RS and AG, an AllReduce of the whole region */
			if (op == KCOLL_OP_ALLREDUCE && a && !(a->rs && a->ag)) {
				t = kc_sum(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l],
							   &chosen[l]));
				continue;
			}
			t = kc_sum(t, kc_cost_pick(algo[l], down, up, x, &lv[l], &chosen[l]));
			x /= lv[l].size;
		}
		return kc_sum(t, kc_cost_pick(algo[top], op, KC_NOOP, x, &lv[top], &chosen[top]));
	}
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_SCATTER:
		for (l = nl; l-- > 0;) {
			t = kc_sum(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l], &chosen[l]));
			x /= lv[l].size;
		}
		return t;
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_GATHER:
		for (l = nl; l-- > 0;) {
			t = kc_sum(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l], &chosen[l]));
			x /= lv[l].size;
		}
		return t;
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV: {
		/*
		 * One phase over all ranks, at the top level's links, with the
		 * algorithm of the highest level that configures one (kc_hier.c)
		 */
		struct kc_cost_lv all = lv[top];
		u32 p = 1, a = KCOLL_ALGO_AUTO;

		for (l = 0; l < nl; l++)
			p *= lv[l].size;
		for (l = nl; l-- > 0 && !a;)
			a = algo[l];
		for (l = 0; l < top; l++)
			chosen[l] = algo[l];
		all.size = p;
		return kc_cost_pick(a, op, KC_NOOP, n, &all, &chosen[top]);
	}
	case KCOLL_OP_BARRIER:
		for (l = 0; l < nl; l++)
			t = kc_sum(t, kc_cost_pick(algo[l], op, KC_NOOP, 0, &lv[l], &chosen[l]));
		return t;
	}
	return KC_COST_INF;
}

/*
 * Pipeline (2.8).  AllGather is the spec's formula; with b = n / p bytes
 * per block, T1 = alpha1 + b beta1 (ring), T0 = alpha0 + b beta0 (intra):
 *   AG = (S - 1) max(T1, T0) + T0.
 * The spec omits gamma; the reductions of kcoll's ReduceScatter sit on
 * the critical path as follows: the first intra step reduces k - 1
 * blocks, every ring step reduces k - 1 intra blocks (overlapped with
 * the ring transfer) and then the ring block:
 *   RS = T0 + (k-1) b gamma + (S - 1) (max(T1, T0 + (k-1) b gamma) + b gamma).
 * AllReduce = RS + AG.  AlltoAll runs AG's rounds, but each inter step
 * forwards the k blocks its server's ranks gathered for one rank:
 *   A2A = (S - 1) max(alpha1 + k b beta1, T0) + T0.
 */
static u64 kc_cost_pipeline(const struct kc_topo *t, const struct kc_cost_model *m, u32 op,
			    u64 n)
{
	struct kc_cost_link in = kc_cost_level_link(m, KCOLL_LEVEL0);
	struct kc_cost_link x = kc_cost_level_link(m, t->npods > 1 ? KCOLL_LEVEL2 : KCOLL_LEVEL1);
	u64 p = t->nranks, S = t->nservers, k = t->server_size, b, t1, t0, red, ag, rs;

	if (!k || S < 2)
		return KC_COST_INF;
	b = n / p;
	t1 = kc_abg(&x, 1, b, 1, 1, 0, 1);
	t0 = k > 1 ? kc_abg(&in, 1, b, 1, 1, 0, 1) : 0;
	red = kc_cost_mul(kc_cost_mul(b, in.gamma), k - 1);
	ag = kc_sum(kc_cost_mul(kc_max_u64(t1, t0), S - 1), t0);
	rs = kc_sum(kc_sum(t0, red),
		    kc_cost_mul(kc_sum(kc_max_u64(t1, kc_sum(t0, red)),
				       kc_cost_mul(b, x.gamma)), S - 1));
	switch (op) {
	case KCOLL_OP_ALLGATHER:
		return ag;
	case KCOLL_OP_ALLTOALL:
		/* the same rounds, but an inter step carries k blocks (alg_pipeline.c) */
		t1 = kc_abg(&x, 1, b, k, 1, 0, 1);
		return kc_sum(kc_cost_mul(kc_max_u64(t1, t0), S - 1), t0);
	case KCOLL_OP_REDUCESCATTER:
		return rs;
	case KCOLL_OP_ALLREDUCE:
		return kc_sum(rs, ag);
	}
	return KC_COST_INF;
}

/*
 * AHC (2.9) as kc_ahc.c builds it: NHR inside the groups, a Ring phase
 * among the G logical same-index cards of every segment, segment after
 * segment.  A member of a group of m owns n/m of the exchanged region and
 * about T/m segments, T the distinct block boundaries of all groups
 * (inclusion-exclusion over up to 3 distinct sizes; their sum beyond).
 * AHC_BROKE: blocks of n/m_min, one segment, larger groups' extra members
 * idle in the inter stage.
 */
/*
 * Blocks of n/m on the critical path of NHR's ReduceScatter (and of its
 * mirror, the AllGather) over s members of which only 0..m-1 own one,
 * AHC_BROKE's cut in a group larger than the smallest (m).  In step k,
 * h = 2^k, a member sends the slices at distances h, 3h, 5h, ... < s
 * below it; the busiest one sends as many of [0, m) as a window of m
 * consecutive members holds of those points on the circle of s, which
 * are 2h apart but across the wrap.  s - 1 when m = s, the even case.
 * It equals a count over every member for all s < 200, and against the
 * simulator it replaces, for AllReduce, a charge of (s - 1)/s n that was
 * up to 34% low (3+9 one-rank pods) and, for Broadcast and Reduce, a rule
 * of thumb, m + ceil(log2 s) - 2 blocks, up to 10% high (4+8).
 */
static u64 kc_cost_nhr_uneven(u64 s, u64 m)
{
	u64 v = 0, h, n, gap, k;

	if (m >= s)
		return s - 1;	/* every distance 1..s-1 is h times an odd number once */
	for (h = 1; h < s; h <<= 1) {
		n = (s - 1 + h) / (2 * h);
		gap = s - 2 * h * (n - 1);	/* from the last point, h + 2h(n-1), round to h */
		k = (m - 1) / (2 * h) + 1;
		if (n >= 2 && gap <= m - 1)
			k = kc_max_u64(k, (m - 1 - gap) / (2 * h) + 2);
		v += kc_min_u64(n, k);
	}
	return v;
}

/* Units (ranks, or servers for planes) of AHC group h (kc_cost.h). */
u64 kc_cost_ahc_group(const struct kc_topo *t, u32 h, bool pods, u32 stride)
{
	u64 s = pods ? t->server_first[t->pod_first[h + 1]] - t->server_first[t->pod_first[h]] :
		kc_topo_server_size(t, h);

	return s / stride;
}

/*
 * Intra phases a member of a group of s runs for ReduceScatter and
 * AllGather: one per group's region (AHC), or ceil(m_h / s) windows of
 * per-rank blocks per region of m_h blocks (AHC_BROKE), each followed by
 * that many inter-group Ring phases, one per block it owns.
 */
static u64 kc_cost_ahc_windows(const struct kc_topo *t, u32 algo, u64 s, u32 G, bool pods,
			       u32 stride)
{
	u64 w = 0;
	u32 h;

	if (algo != KCOLL_ALGO_AHC_BROKE)
		return G;
	for (h = 0; h < G; h++)
		w += (kc_cost_ahc_group(t, h, pods, stride) + s - 1) / s;
	return w;
}

/*
 * AHC_BROKE's ReduceScatter and AllGather deal each group's region, m_h
 * blocks of n / units, to the s members of every group in windows of s:
 * a member of a group of s moves s - 1 blocks in NHR's phases over a full
 * window and kc_cost_nhr_uneven(s, w) over a last one of w.  Charged
 * (s - 1)/s n as one even cut, and the inter Ring (G - 1)/mmin n where
 * member 0 of the smallest group owns ceil(m_h / mmin) blocks of every
 * region, both were 17% low on 2+3 pods.
 */
static u64 kc_cost_broke_rsag_blocks(const struct kc_topo *t, u64 s, u32 G, bool pods,
				     u32 stride)
{
	u64 b = 0, mh;
	u32 h;

	for (h = 0; h < G; h++) {
		mh = kc_cost_ahc_group(t, h, pods, stride);
		b += mh / s * (s - 1);
		if (mh % s)
			b += kc_cost_nhr_uneven(s, mh % s);
	}
	return b;
}

static u64 kc_cost_ahc(const struct kc_topo *t, const struct kc_cost_model *m, u32 algo,
		       u32 op, u64 n, const u32 *l0algo)
{
	u32 sz[3] = { 0 }, nsz = 0, G, h, i, stride = 1, intra_lv, inter_lv;
	struct kc_cost_link in, x;
	u64 T, c = 0, worst_in = 0, worst_x = 0, sum = 0, mmin = U32_MAX, s0, root_in = 0;
	u64 g = 0, units = 0, wmin;
	bool pods = t->npods > 1, planes = pods && t->server_size > 1;
	bool broke = algo == KCOLL_ALGO_AHC_BROKE;
	bool rooted = op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE;
	bool around = rooted || op == KCOLL_OP_ALLREDUCE;

	if (!(op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_REDUCESCATTER ||
	      op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE))
		return KC_COST_INF;
	G = pods ? t->npods : t->nservers;
	if (G < 2)
		return KC_COST_INF;
	if (planes) {
		struct kc_cost_lv l0 = { .size = t->server_size, .cfg = KCOLL_LEVEL0,
					 .link = kc_cost_level_link(m, KCOLL_LEVEL0) };

		/* the stage inside servers that kc_ahc.c puts around the planes */
		u32 down = op == KCOLL_OP_ALLGATHER ? KCOLL_OP_ALLGATHER :
			   op == KCOLL_OP_BROADCAST ? KCOLL_OP_SCATTER : KCOLL_OP_REDUCESCATTER;
		u32 up = op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_BROADCAST ? KCOLL_OP_ALLGATHER :
			 op == KCOLL_OP_REDUCE ? KCOLL_OP_GATHER : KC_NOOP;

		stride = t->server_size;
		if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) {
			/*
			 * Spec 1.3: RS among the planes first, AG last, on all
			 * n, so a server's blocks stay contiguous; inside the
			 * server only its own n / S.  Priced as AllReduce's
			 * order (n / k among the planes) it was half the
			 * simulator on 8+16 x8.
			 */
			c = kc_cost_pick(*l0algo, op, KC_NOOP, n / t->nservers, &l0, NULL);
		} else {
			c = kc_cost_pick(*l0algo, down, up, n, &l0, NULL);
			n /= stride;
		}
	}
	intra_lv = pods ? KCOLL_LEVEL1 : KCOLL_LEVEL0;
	inter_lv = pods ? KCOLL_LEVEL2 : KCOLL_LEVEL1;
	s0 = kc_cost_ahc_group(t, 0, pods, stride);
	in = kc_cost_level_link(m, intra_lv);
	x = kc_cost_level_link(m, inter_lv);
	for (h = 0; h < G; h++) {
		u64 s = kc_cost_ahc_group(t, h, pods, stride);

		mmin = kc_min_u64(mmin, s);
		g = kc_gcd(g, s);
		units += s;
		for (i = 0; i < nsz && sz[i] != s; i++)
			;
		if (i == nsz) {
			if (nsz < ARRAY_SIZE(sz))
				sz[nsz] = (u32)s;
			nsz++;
			sum += s;
		}
	}
	if (nsz == 1)
		T = sz[0];
	else if (nsz == 2)
		T = (u64)sz[0] + sz[1] - kc_gcd(sz[0], sz[1]);
	else if (nsz == 3)
		T = (u64)sz[0] + sz[1] + sz[2] - kc_gcd(sz[0], sz[1]) - kc_gcd(sz[0], sz[2]) -
		    kc_gcd(sz[1], sz[2]) + kc_gcd(kc_gcd(sz[0], sz[1]), sz[2]);
	else
		T = sum;
	wmin = kc_cost_ahc_windows(t, algo, mmin, G, pods, stride);
	for (h = 0; h < nsz && h < ARRAY_SIZE(sz); h++) {
		/* n / own: the bytes of one inter-stage chain (see below) */
		u64 s = sz[h], own = broke ? mmin : around ? g : s;
		u64 seg = broke ? 1 : (T + s - 1) / s;
		u64 win = 1, xa = seg * (G - 1), ci, cx, bn, bd, ag;
		u64 red = op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_BROADCAST ? 0 : 1;

		if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) {
			win = kc_cost_ahc_windows(t, algo, s, G, pods, stride);
			/*
			 * AHC_BROKE: one inter Ring phase per block owned,
			 * each G - 1 hops long, one after the other: they
			 * overlap but for the first one's hops.  AHC: the
			 * same in each of the G group regions, one after the
			 * other, each cut by every group alike: T / s
			 * segments in each.
			 */
			if (broke)
				xa = win + G - 2;
			else
				xa = G * (seg + G - 2);
		}
		bn = s - 1;
		bd = s;
		if (broke && around) {
			/* only mmin members hold a block, n / mmin */
			bn = kc_cost_nhr_uneven(s, mmin);
			bd = mmin;
		} else if (broke) {
			bn = kc_cost_broke_rsag_blocks(t, s, G, pods, stride);
			bd = units;
		}
		ci = kc_abg(&in, win * kc_cost_log_alphas(s, in.window), n, bn, bd, red * bn, bd);
		/*
		 * The scatter (gather) runs in the root's group: root 0's, no
		 * reduction; AllReduce's AllGather in every group, no
		 * reduction either (charging it the RS's put AllReduce
		 * 8-10% above the simulator at 64 MiB).
		 */
		ag = kc_abg(&in, kc_cost_log_alphas(s, in.window), n, bn, bd, 0, 1);
		if (s == s0)
			root_in = ag;
		if (op == KCOLL_OP_ALLREDUCE)
			ci = kc_sum(ci, ag);
		/*
		 * AHC's inter stage: every card walks its segments in order
		 * and a segment waits for all of its G cards, so groups of
		 * coprime sizes chain every segment of the region one after
		 * the other; the chain breaks only where every group has a
		 * block boundary, every n / gcd of the sizes.  Simulated for
		 * 2..4 groups of 2..16: AllReduce is exactly the Ring's
		 * 2 (G-1)/G of n / gcd; Broadcast and Reduce overlap the
		 * rounds of consecutive segments only in part, 1, 11/6 and
		 * 2.31 times n / gcd for G = 2, 3, 4, which
		 * 2 (G-1)/G + (G-2)/(G-1) gives within 6%.
		 */
		if (op == KCOLL_OP_ALLREDUCE)
			cx = kc_abg(&x, seg * 2 * (G - 1), n, 2 * (G - 1), (u64)G * own,
				    G - 1, (u64)G * own);
		else if (!broke && rooted)
			cx = kc_abg(&x, xa, n, 2 * (G - 1) * (G - 1) + (u64)G * (G - 2),
				    (u64)G * (G - 1) * own, red * (G - 1), own);
		else if (broke && !rooted)
			cx = kc_abg(&x, xa, n, (G - 1) * wmin, units, red * (G - 1) * wmin, units);
		else
			cx = kc_abg(&x, xa, n, G - 1, own, red * (G - 1), own);
		worst_in = kc_max_u64(worst_in, ci);
		worst_x = kc_max_u64(worst_x, cx);
	}
	/*
	 * AllReduce, Broadcast, Reduce run an intra stage on both sides
	 * (AllReduce's are both in ci); the rooted one (scatter, gather)
	 * only in the root's group.
	 */
	if (rooted)
		worst_in = kc_sum(worst_in, root_in);
	return kc_sum(c, kc_sum(worst_in, worst_x));
}

u64 kc_cost_resolve(const struct kc_topo *t, u32 op, u64 n, const struct kc_algo_cfg *cfg,
		    const struct kc_cost_model *m, struct kc_algo_cfg *out)
{
	struct kc_cost_lv lv[KC_MAX_LEVELS];
	u32 algo[KC_MAX_LEVELS], chosen[KC_MAX_LEVELS] = { 0 }, nl, l, i;
	u64 c;

	if (!m)
		m = &kc_cost_default;
	if (out)
		*out = *cfg;
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++) {
		const struct kc_algo_ops *a = kc_algo_get(cfg->algo[i]);

		if (a && a->build) {
			if (!kc_algo_supports(a, op))
				return KC_COST_INF;
			if (cfg->algo[i] == KCOLL_ALGO_PIPELINE)
				return kc_cost_pipeline(t, m, op, n);
			return kc_cost_ahc(t, m, cfg->algo[i], op, n, &cfg->algo[KCOLL_LEVEL0]);
		}
	}
	nl = kc_cost_levels(t, m, lv);
	for (l = 0; l < nl; l++)
		algo[l] = kc_level_algo(cfg->algo, lv[l].cfg, lv[l].levels, NULL);
	c = kc_cost_hier(lv, nl, algo, op, n, chosen);
	for (l = 0; out && l < nl; l++)
		if (chosen[l])
			out->algo[lv[l].cfg] = chosen[l];
	return c;
}

u64 kc_cost_op(const struct kc_topo *t, u32 op, u64 n, const struct kc_algo_cfg *cfg,
	       const struct kc_cost_model *m)
{
	return kc_cost_resolve(t, op, n, cfg, m, NULL);
}
