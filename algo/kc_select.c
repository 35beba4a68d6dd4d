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
	const struct kc_algo_ops *a = kc_algo_get(algo);
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n = kc_topo_levels(t, 0, lv), i;

	for (i = 0; i < n; i++) {
		if (!kc_level_algo(cfg->algo, lv[i].cfg_level, lv[i].levels, NULL))
			continue;
		/* on planes AHC runs level0's algorithm inside the servers (alg_ahc_core.c) */
		if (a && a->runs_level0 && lv[i].levels == KC_LEVEL_BIT(KCOLL_LEVEL0) &&
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
	u64 n = kc_cost_bytes(op, t->nranks), best;
	struct kc_algo_cfg work = *in;
	u32 whole[KCOLL_ALGO_COUNT], nw, i;

	kc_select_prepare(t, op->op, &work);
	best = kc_cost_resolve(t, op->op, n, &work, m, out);
	if (work.algo[KCOLL_LEVEL1] != KCOLL_ALGO_AUTO ||
	    work.algo[KCOLL_LEVEL2] != KCOLL_ALGO_AUTO)
		return best;
	nw = kc_algo_auto_list(true, whole);
	for (i = 0; i < nw; i++) {
		const struct kc_algo_ops *a = kc_algo_get(whole[i]);
		struct kc_algo_cfg c = work, r;
		u64 cost;

		if (!kc_algo_supports(a, op->op) || !kc_select_whole_ok(t, &work, whole[i]))
			continue;
		if (a->auto_ok && !a->auto_ok(t, op, whole[i]))
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
