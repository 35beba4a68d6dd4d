/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The alpha-beta-gamma cost model (spec sections 1.1, 2.1-2.11; seeds 002
 * and 003) in integer arithmetic, so the kernel can rank algorithms at
 * every submission without the FPU: times are femtoseconds (u64, up to
 * about 5 hours), beta and gamma femtoseconds per byte.  Sums and products
 * saturate at KC_COST_INF instead of wrapping.
 *
 * kc_cost_phase() is the time of one flat phase among p members; it is
 * the spec's formula where the spec has one and, where it has none (NHR
 * Reduce and Gather, tree, pairwise outside AlltoAll, barriers), the same
 * rule applied to what kcoll's generator does (documented per case in
 * kc_cost.c).  kc_cost_op() composes phases over the levels of a
 * topology as kc_hier.c does, and models the whole-operation builders
 * (Pipeline, AHC, AHC_BROKE) by their stages.
 */
#ifndef KC_COST_H
#define KC_COST_H

#include "kc_coll.h"

#define KC_COST_INF	U64_MAX
#define KC_FS_PER_S	1000000000000000ull

/*
 * One level's links: latency, time per byte, reduce time per byte, and
 * whether automatic selection may run Mesh through this level's ports.
 */
struct kc_cost_link {
	u64 alpha;	/* fs */
	u64 beta;	/* fs per byte */
	u64 gamma;	/* fs per byte */
	u32 window;	/* the model's window (struct kc_cost_model) */
	/*
	 * Mesh between servers (levels 1, 2) is priced as p - 1 messages
	 * that share the port's bandwidth but pay one alpha: they overlap.
	 * Where that holds Mesh is never dearer than Ring; where it does
	 * not (incast, a port that serialises messages) it is far too
	 * cheap.  So selection leaves it out (spec 3.5) unless a
	 * measurement has shown it holds (collctl calibrate).  Level 0
	 * has a link per pair and ignores this.
	 */
	bool auto_mesh;
};

struct kc_cost_model {
	struct kc_cost_link lv[KCOLL_LEVEL_COUNT];
	u32 conv_q8;	/* convergence ratio C of level 2, in 1/256 (256 = 1) */
	/*
	 * Messages in flight per peer (kc_exec_cfg.window: the module's
	 * slots); 0 for no limit, as in the simulator's conformance mode.
	 */
	u32 window;
};

/* The model used when a configuration names none. */
extern const struct kc_cost_model kc_cost_default;

/*
 * Time of phase @op (the collective it performs among the members, enum
 * kcoll_op) of flat algorithm @algo among @p members, @n bytes (the whole
 * region: count * esize, or count * p * esize for per-rank ops and
 * AlltoAll), on links @l.  @port: the members share one port each (levels
 * 1, 2) rather than a link per pair (level 0); only Mesh cares.
 * KC_COST_INF when the algorithm has no such phase.
 */
u64 kc_cost_phase(u32 algo, u32 op, u32 p, u64 n, const struct kc_cost_link *l, bool port);

/* The link parameters a group at configuration level @lvl sees (C applied). */
struct kc_cost_link kc_cost_level_link(const struct kc_cost_model *m, u32 lvl);

/*
 * Modelled time of a whole operation of @n bytes (as kc_cost_phase) on
 * topology @t with algorithm cfg->algo[level] per level (AUTO levels take
 * the cheapest flat algorithm, as kc_select_level() does), or with the
 * whole-operation builder cfg names.  KC_COST_INF when the combination
 * cannot run the operation.
 */
u64 kc_cost_op(const struct kc_topo *t, u32 op, u64 n, const struct kc_algo_cfg *cfg,
	       const struct kc_cost_model *m);

/* kc_cost_op(), and the algorithms it assumed per level in *out (may be NULL). */
u64 kc_cost_resolve(const struct kc_topo *t, u32 op, u64 n, const struct kc_algo_cfg *cfg,
		    const struct kc_cost_model *m, struct kc_algo_cfg *out);

/* Bytes an operation moves, in the sense of kc_cost_phase()'s n. */
u64 kc_cost_bytes(const struct kc_op_desc *op, u32 nranks);
/*
 * What the model keeps in the topology (kc_topo_init*() call it): Tree
 * Broadcast's slow halves on a merged pod level (kc_topo.h).
 */
void kc_cost_topo_cache(struct kc_topo *t);
/* Units (ranks, or servers for planes: stride = ranks per server) of AHC group h. */
u64 kc_cost_ahc_group(const struct kc_topo *t, u32 h, bool pods, u32 stride);

/*
 * Automatic selection (kc_select.c): resolve every AUTO level of @in for
 * operation @op on @t to the algorithm of least modelled time on @m (NULL:
 * kc_cost_default), considering the whole-operation builders (Pipeline,
 * AHC, AHC_BROKE) when level1 and level2 are both AUTO and they run what
 * the other levels configure (kc_select_whole_ok()).  The result
 * depends only on the topology, the op and its count, so every rank makes
 * the same choice.  Returns the modelled time (KC_COST_INF when nothing
 * can run the op); *out is always fully resolved where possible.
 */
u64 kc_select_cfg(const struct kc_topo *t, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *in, const struct kc_cost_model *m,
		  struct kc_algo_cfg *out);

/*
 * Where HCCL_ALGO configured a level's algorithm (cfg->conf) and it
 * cannot run its level's part of @op on @t (kc_hier_level_can(): Tree
 * below the top level of a Broadcast or Reduce), make the level AUTO: the
 * documented fallback to automatic selection, reported by plan building.
 * Levels the caller filled itself (conf AUTO) are left to be refused.
 * kc_select_cfg() and kc_plan_build() do this first.
 */
void kc_select_prepare(const struct kc_topo *t, u32 op, struct kc_algo_cfg *cfg);

/*
 * May whole-operation builder @algo (Pipeline, AHC, AHC_BROKE) compete in
 * automatic selection with @cfg's configured levels?  Only where it runs
 * every algorithm configured for a level of @t: AHC and AHC_BROKE on
 * planes run level0's inside the servers; Pipeline runs none.
 */
bool kc_select_whole_ok(const struct kc_topo *t, const struct kc_algo_cfg *cfg, u32 algo);

/* Saturating helpers, exported for the selection and the tests. */
u64 kc_cost_add(u64 a, u64 b);
/* floor(x * num / den) without overflow for x * num < 2^64 * den; saturates. */
u64 kc_cost_muldiv(u64 x, u64 num, u64 den);

#endif /* KC_COST_H */
