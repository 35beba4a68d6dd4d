// SPDX-License-Identifier: GPL-2.0
/*
 * Automatic algorithm selection by the cost model (kc_cost.c): for an
 * unconfigured level, the flat algorithm of least modelled time for the
 * bytes that level moves; when level1 and level2 are both unconfigured,
 * also the whole-operation builders (Pipeline; AHC and AHC_BROKE, which
 * win on asymmetric pods and servers).  Closed forms in integer
 * femtoseconds: cheap enough for every submission, no FPU.
 *
 * What is configured is not overridden (Documentation/algorithms.md,
 * "Forced algorithms"): a merged level runs the algorithm configured for
 * a level merged into it (kc_level_algo()); a whole-operation builder
 * competes only where it runs every configured level's algorithm (AHC
 * and AHC_BROKE on planes run level0's inside servers, Pipeline runs
 * none); and an algorithm that HCCL_ALGO configured falls back to
 * automatic selection only where it cannot run its level's part of the
 * operation on the topology (kc_select_prepare()).
 */
#include "kc_cost.h"
#include "kc_reduce.h"

u64 kc_cost_bytes(const struct kc_op_desc *op, u32 nranks)
{
	u64 es = kc_dtype_size(op->dtype), n;

	if (op->op == KCOLL_OP_BARRIER || check_mul_overflow(op->count, es, &n))
		return 0;
	switch (op->op) {
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
	case KCOLL_OP_ALLTOALL:
		return check_mul_overflow(n, (u64)nranks, &n) ? U64_MAX : n;
	}
	return n;
}

/*
 * May selection rank @algo (AHC or AHC_BROKE) for @op on @t by
 * kc_cost_ahc()?  Its model is checked against the simulator
 * (selftests/sim/test_ahc_cost) for AllReduce, Broadcast and Reduce:
 * AHC_BROKE exact, AHC within 0.85x to 2.5x (the intra stage inside
 * servers around the planes is Scatter + AllGather and ReduceScatter +
 * Gather, as kc_ahc.c runs it); regret within 5% on bench-select's pods.
 * For ReduceScatter and AllGather:
 *  - AHC cuts the region of each group's result blocks among the members
 *    of every group.  Where a cut is not exact, the segments of
 *    neighbouring cards overlap and their Ring phases wait on each other
 *    in one chain across the region, a convoy the model does not see: on
 *    64+128 one-rank servers an odd per-rank count makes ReduceScatter
 *    6x slower (2731 elements: 1204 us simulated, 187 modelled).  Every
 *    cut is exact when each group size divides count x gcd of the sizes.
 *    With exact cuts and two pods, the smaller dividing the larger, the
 *    model is exact (64+128, 2+8 at 2..65536 elements per rank, C = 2
 *    and 4; planes of 8+16 x8 and 2+8 x2, where a unit is a server and
 *    moves k counts).  Elsewhere it reads up to 20% low (coprime sizes,
 *    three sizes), and AHC runs them only when configured.
 *  - AHC_BROKE's model (windows of s blocks, the last one short, priced
 *    by kc_cost_nhr_uneven()) is exact on two groups of any sizes and on
 *    more whose sizes all divide the largest (within 2% low on planes);
 *    on 3+5+7 it reads 0.84-1.10 of the simulator, and there AHC_BROKE
 *    runs RS/AG only when configured.
 */
static bool kc_select_ahc_modelled(const struct kc_topo *t, const struct kc_op_desc *op,
				   u32 algo)
{
	bool pods = t->npods > 1;
	u32 g, ng = pods ? t->npods : t->nservers, big = 0, sz, all = 0;
	/* on pods a unit is a server, k ranks: the planes' AHC moves k counts per unit */
	u32 k = pods ? t->server_size : 1;
	u64 count;

	if (op->op == KCOLL_OP_ALLREDUCE || op->op == KCOLL_OP_BROADCAST ||
	    op->op == KCOLL_OP_REDUCE)
		return true;
	if (!k || (algo == KCOLL_ALGO_AHC && t->npods != 2))
		return false;
	count = op->count * k;
	for (g = 0; g < ng; g++) {
		sz = (u32)kc_cost_ahc_group(t, g, pods, k);
		big = sz > big ? sz : big;
		all = (u32)kc_gcd(all, sz);
	}
	for (g = 0; g < ng; g++) {
		sz = (u32)kc_cost_ahc_group(t, g, pods, k);
		/* AHC_BROKE: exact on any two groups, on more where sizes divide */
		if (!sz || (big % sz && (algo == KCOLL_ALGO_AHC || ng > 2)))
			return false;
		/* AHC: every cut exact (the largest size is their LCM) */
		if (algo == KCOLL_ALGO_AHC && (count % big) * all % big)
			return false;
	}
	return true;
}

u32 kc_level_algo(const u32 *algo, u32 cfg_level, u32 levels, u32 *from)
{
	static const u32 order[] = { KCOLL_LEVEL2, KCOLL_LEVEL0 };
	u32 i, l = cfg_level;

	for (i = 0; !algo[l] && i < ARRAY_SIZE(order); i++)
		if ((levels & KC_LEVEL_BIT(order[i])) && algo[order[i]])
			l = order[i];
	if (from)
		*from = l;
	return algo[l];
}

/* The whole-operation builder @cfg names, or AUTO. */
static u32 kc_select_builder(const struct kc_algo_cfg *cfg)
{
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		const struct kc_algo_ops *a = kc_algo_get(cfg->algo[l]);

		if (a && a->build)
			return cfg->algo[l];
	}
	return KCOLL_ALGO_AUTO;
}

void kc_select_prepare(const struct kc_topo *t, u32 op, struct kc_algo_cfg *cfg)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n, i, l;

	/* AlltoAll is one phase: kc_cfg_for_op() left only what can run it */
	if (op == KCOLL_OP_ALLTOALL || op == KCOLL_OP_ALLTOALLV || kc_select_builder(cfg))
		return;
	n = kc_topo_levels(t, 0, lv);
	for (i = 0; i < n; i++) {
		for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
			const struct kc_algo_ops *a = kc_algo_get(cfg->algo[l]);

			if (a && (lv[i].levels & KC_LEVEL_BIT(l)) && cfg->conf[l] == cfg->algo[l] &&
			    !kc_hier_level_can(a, op, i == n - 1))
				cfg->algo[l] = KCOLL_ALGO_AUTO;
		}
	}
}

bool kc_select_whole_ok(const struct kc_topo *t, const struct kc_algo_cfg *cfg, u32 algo)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n = kc_topo_levels(t, 0, lv), i;

	for (i = 0; i < n; i++) {
		if (!kc_level_algo(cfg->algo, lv[i].cfg_level, lv[i].levels, NULL))
			continue;
		/* on planes AHC runs level0's algorithm inside the servers (kc_ahc.c) */
		if (algo != KCOLL_ALGO_PIPELINE && lv[i].levels == KC_LEVEL_BIT(KCOLL_LEVEL0) &&
		    t->npods > 1)
			continue;
		return false;
	}
	return true;
}

u64 kc_select_cfg(const struct kc_topo *t, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *in, const struct kc_cost_model *m,
		  struct kc_algo_cfg *out)
{
	static const u32 whole[] = { KCOLL_ALGO_PIPELINE, KCOLL_ALGO_AHC, KCOLL_ALGO_AHC_BROKE };
	u64 n = kc_cost_bytes(op, t->nranks), best;
	struct kc_algo_cfg work = *in;
	u32 i;

	kc_select_prepare(t, op->op, &work);
	best = kc_cost_resolve(t, op->op, n, &work, m, out);
	if (work.algo[KCOLL_LEVEL1] != KCOLL_ALGO_AUTO ||
	    work.algo[KCOLL_LEVEL2] != KCOLL_ALGO_AUTO)
		return best;
	for (i = 0; i < ARRAY_SIZE(whole); i++) {
		struct kc_algo_cfg c = work, r;
		u64 cost;

		if (!kc_algo_supports(kc_algo_get(whole[i]), op->op) ||
		    !kc_select_whole_ok(t, &work, whole[i]))
			continue;
		if (whole[i] != KCOLL_ALGO_PIPELINE && !kc_select_ahc_modelled(t, op, whole[i]))
			continue;
		c.algo[KCOLL_LEVEL1] = whole[i];
		cost = kc_cost_resolve(t, op->op, n, &c, m, &r);
		if (cost < best) {
			best = cost;
			*out = r;
		}
	}
	return best;
}

u32 kc_select_level(const struct kc_coll_ctx *c, u32 cfg_level, u32 group_size)
{
	struct kc_algo_cfg flat = *c->cfg, out;
	u32 l;

	(void)group_size;
	/* kc_hier.c asks for flat algorithms only: leave builders out */
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		const struct kc_algo_ops *a = kc_algo_get(flat.algo[l]);

		if (a && a->build)
			flat.algo[l] = KCOLL_ALGO_AUTO;
	}
	kc_cost_resolve(c->topo, c->op->op, kc_cost_bytes(c->op, c->topo->nranks), &flat,
			c->model, &out);
	return out.algo[cfg_level] ? out.algo[cfg_level] : KCOLL_ALGO_RING;
}
