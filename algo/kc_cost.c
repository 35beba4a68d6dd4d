// SPDX-License-Identifier: GPL-2.0
/*
 * The arithmetic of the cost model and the composition of levels (see
 * kc_cost.h).  Each algorithm prices its own phases next to the steps
 * they count (kc_algo_ops.cost, .slow, .cost_whole); here are the shared
 * terms, each written as
 *   A * alpha + (bn / bd) * n * beta + (gn / gd) * n * gamma
 * so the integer arithmetic rounds once per term, and kc_hier.c's
 * composition of phases over the levels of a topology.
 */
#include "kc_cost.h"

/* Defaults: 1 us / 50 GB/s inside a server, 5 us / 25 GB/s between, 10 GB/s reduce. */
const struct kc_cost_model kc_cost_default = {
	.lv = {
		[KCOLL_LEVEL0] = {
			.alpha = KC_COST_NS_FS(KC_COST_DEF_L0_ALPHA_NS),
			.beta = KC_COST_GBPS_FS(KC_COST_DEF_L0_GBPS),
			.gamma = KC_COST_GBPS_FS(KC_COST_DEF_REDUCE_GBPS),
		},
		[KCOLL_LEVEL1] = {
			.alpha = KC_COST_NS_FS(KC_COST_DEF_L12_ALPHA_NS),
			.beta = KC_COST_GBPS_FS(KC_COST_DEF_L12_GBPS),
			.gamma = KC_COST_GBPS_FS(KC_COST_DEF_REDUCE_GBPS),
		},
		[KCOLL_LEVEL2] = {
			.alpha = KC_COST_NS_FS(KC_COST_DEF_L12_ALPHA_NS),
			.beta = KC_COST_GBPS_FS(KC_COST_DEF_L12_GBPS),
			.gamma = KC_COST_GBPS_FS(KC_COST_DEF_REDUCE_GBPS),
		},
	},
	.conv_q8 = KC_COST_DEF_CONV_PCT * 256 / 100,
	.window = KC_COST_DEF_WINDOW,
};

u64 kc_cost_add(u64 a, u64 b)
{
	u64 s;

	return check_add_overflow(a, b, &s) ? KC_COST_INF : s;
}

u64 kc_cost_mul(u64 a, u64 b)
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

u64 kc_abg(const struct kc_cost_link *l, u64 a, u64 n, u64 bn, u64 bd, u64 gn, u64 gd)
{
	u64 t = kc_cost_mul(a, l->alpha);

	t = kc_cost_add(t, kc_cost_muldiv(kc_cost_mul(n, l->beta), bn, bd));
	if (gn)
		t = kc_cost_add(t, kc_cost_muldiv(kc_cost_mul(n, l->gamma), gn, gd));
	return t;
}

/*
 * Latencies of a log-step phase whose round i (1..ceil(log2 p)) sends
 * ceil(p / 2^i) blocks that are not contiguous, one message each: with W
 * messages in flight per peer the round takes ceil(blocks / W) latencies
 * (the executor sends the next message only when a slot frees).  The
 * ceil(log2 p) when there is no window.
 */
u64 kc_cost_log_alphas(u64 p, u32 window)
{
	u64 a = 0, i, L = kc_clog2(p);

	if (!window)
		return L;
	for (i = 1; i <= L; i++)
		a += (((p + (1ull << i) - 1) >> i) + window - 1) / window;
	return a;
}

u64 kc_cost_phase(u32 algo, u32 op, u32 p, u64 n, const struct kc_cost_link *l, bool port)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);

	if (p <= 1)
		return 0;	/* nothing to exchange */
	return a && a->cost ? a->cost(op, p, n, l, port) : KC_COST_INF;
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

static u32 kc_cost_levels(const struct kc_topo *t, const struct kc_cost_model *m,
			  struct kc_cost_lv *out)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n = kc_topo_levels(t, 0, lv), i;

	for (i = 0; i < n; i++) {
		u32 ph = kc_topo_level_merged(t, &lv[i]) ? KCOLL_LEVEL2 : lv[i].cfg_level;

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
u32 kc_cost_member_pod(const struct kc_topo *t, const struct kc_group *g, u32 j)
{
	return t->pod_of[t->server_of[kc_grp_rank(g, j)]];
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
u64 kc_cost_scatter_slow(const struct kc_cost_lv *l, enum kc_cost_shape shape)
{
	u32 p = l->size, L = kc_clog2(p), pod0 = kc_cost_member_pod(l->t, &l->g, 0), s;
	u64 x = 0;

	if (shape == KC_COST_CHAIN) {
		for (s = 1; s < p && kc_cost_member_pod(l->t, &l->g, s) == pod0; s++)
			;
		return p - s;
	}
	for (s = 0; s < L; s++) {
		u64 h = 1ull << s;
		u64 c = shape != KC_COST_HALVING ? (p - 1 - h) / (2 * h) + 1 :
			s == L - 1 ? p - h : h;
		u32 to = shape == KC_COST_BINOMIAL_DOWN ? (u32)(p - h) : (u32)h;

		if (kc_cost_member_pod(l->t, &l->g, to) != pod0)
			x += c;
	}
	return x;
}

bool kc_cost_spread_slow(const struct kc_cost_lv *l, u32 op, enum kc_cost_shape shape,
			 u64 *x, u64 *d)
{
	if (op != KCOLL_OP_SCATTER && op != KCOLL_OP_GATHER)
		return false;
	*x = kc_cost_scatter_slow(l, shape);
	*d = l->size - 1;
	return true;
}

void kc_cost_rounds_slow(const struct kc_cost_lv *l, u64 *x, u64 *d)
{
	u64 L = kc_clog2(l->size);

	*x = l->pods < L ? l->pods : L;
	*d = L;
}

/*
 * The link a phase of algo sees on level l.  On a level merged across
 * pods a phase may cross pods on only part of its work, the rest running
 * at level-1 speed: the algorithm's slow() rule says which part, and beta
 * is mixed accordingly (Documentation/algorithms.md, "Merged levels").
 */
static struct kc_cost_link kc_cost_lv_link(const struct kc_cost_lv *l, u32 algo, u32 op, u64 n)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);
	struct kc_cost_link k = l->link;
	u64 x, d;

	if (!l->pods || l->near.beta >= k.beta || !kc_clog2(l->size) || !a || !a->slow ||
	    !a->slow(l, op, n, l->t->algo_cache[a->id], &x, &d))
		return k;
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
		c = kc_cost_add(c, kc_cost_phase(algo, op2, l->size, n, &k, l->port));
	}
	return c;
}

/* Cost of phases op1 (+ op2) of algo, or the cheapest flat algorithm's. */
u64 kc_cost_pick(u32 algo, u32 op1, u32 op2, u64 n, const struct kc_cost_lv *l, u32 *chosen)
{
	u32 ids[KCOLL_ALGO_COUNT], na, i;
	u64 best = KC_COST_INF;

	if (algo != KCOLL_ALGO_AUTO) {
		if (chosen)
			*chosen = algo;
		return kc_cost_phases(algo, op1, op2, n, l);
	}
	na = kc_algo_auto_list(false, ids);
	for (i = 0; i < na; i++) {
		u32 a = ids[i];
		u64 c;

		/*
		 * HCCL refuses Mesh between servers, and the model, one alpha
		 * per step on a shared port, rates p - 1 concurrent messages
		 * as cheap as one: taken there only where measured.
		 */
		if (kc_algo_get(a)->auto_port_measured && l->port && !l->link.auto_mesh)
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
				t = kc_cost_add(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l],
								&chosen[l]));
				continue;
			}
			t = kc_cost_add(t, kc_cost_pick(algo[l], down, up, x, &lv[l], &chosen[l]));
			x /= lv[l].size;
		}
		return kc_cost_add(t, kc_cost_pick(algo[top], op, KC_NOOP, x, &lv[top],
						   &chosen[top]));
	}
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_SCATTER:
		for (l = nl; l-- > 0;) {
			t = kc_cost_add(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l],
							&chosen[l]));
			x /= lv[l].size;
		}
		return t;
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_GATHER:
		for (l = nl; l-- > 0;) {
			t = kc_cost_add(t, kc_cost_pick(algo[l], op, KC_NOOP, x, &lv[l],
							&chosen[l]));
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
			t = kc_cost_add(t, kc_cost_pick(algo[l], op, KC_NOOP, 0, &lv[l],
							&chosen[l]));
		return t;
	}
	return KC_COST_INF;
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
			if (!a->cost_whole)
				return KC_COST_INF;
			return a->cost_whole(t, m, cfg->algo[i], op, n, &cfg->algo[KCOLL_LEVEL0]);
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

