/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The alpha-beta-gamma cost model (Documentation/algorithms.md, "How
 * automatic selection chooses") in integer arithmetic, so the kernel can rank algorithms at
 * every submission without the FPU: times are femtoseconds (u64, up to
 * about 5 hours), beta and gamma femtoseconds per byte.  Sums and products
 * saturate at KC_COST_INF instead of wrapping.
 *
 * Each algorithm prices its own phases (kc_algo_ops.cost, next to the
 * steps it counts), its slow-link rule on merged levels (.slow) and, for
 * builders, the whole operation (.cost_whole); kc_cost_phase() dispatches
 * to them.  kc_cost_op() composes phases over the levels of a topology as
 * kc_hier.c does.
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
	 * cheap.  So selection leaves it out, as HCCL does, unless a
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

/*
 * The model used when a configuration names none, defined here once in the
 * units operators set it in: kcoll.ko's tunables take these as their
 * defaults (kmod/kcoll_tunables.h), kc_cost_default converts them.  Plain
 * literals: the module's parameter descriptions print them.
 */
#define KC_COST_DEF_L0_ALPHA_NS		1000
#define KC_COST_DEF_L0_GBPS		400
#define KC_COST_DEF_L12_ALPHA_NS	5000
#define KC_COST_DEF_L12_GBPS		200
#define KC_COST_DEF_REDUCE_GBPS		80
#define KC_COST_DEF_CONV_PCT		100
#define KC_COST_DEF_WINDOW		8

/* ns to fs; Gbit/s to fs per byte (exact for the defaults above) */
#define KC_COST_NS_FS(ns)		((u64)(ns) * 1000000ull)
#define KC_COST_GBPS_FS(gbps)		(8000000ull / (gbps))

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

/* Saturating helpers, exported for the algorithms, the selection and the tests. */
u64 kc_cost_add(u64 a, u64 b);
u64 kc_cost_mul(u64 a, u64 b);
/* a * alpha + (bn / bd) * n * beta + (gn / gd) * n * gamma on links l */
u64 kc_abg(const struct kc_cost_link *l, u64 a, u64 n, u64 bn, u64 bd, u64 gn, u64 gd);
/*
 * Latencies of a log-step phase whose round i (1..ceil(log2 p)) sends
 * ceil(p / 2^i) blocks that are not contiguous, one message each, with
 * @window messages in flight per peer (0: no limit, ceil(log2 p)).
 */
u64 kc_cost_log_alphas(u64 p, u32 window);

/* A phase's second part: none. */
#define KC_NOOP KCOLL_OP_COUNT

/* One effective level as the composition (and the slow() rules) see it. */
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

/*
 * Cost of phases @op1 and @op2 (KC_NOOP: none) of @algo on level @l, or
 * of the cheapest flat algorithm for AUTO (its id in *chosen, may be NULL).
 */
u64 kc_cost_pick(u32 algo, u32 op1, u32 op2, u64 n, const struct kc_cost_lv *l, u32 *chosen);

/* The pod of member j of group g. */
u32 kc_cost_member_pod(const struct kc_topo *t, const struct kc_group *g, u32 j);

/*
 * How a Scatter (Gather) from member 0 sends its p - 1 blocks: down a
 * chain (Ring), as a binomial tree to member 2^s in step s (NB), to
 * member p - 2^s (NHR), or by recursive halving (RHD).
 */
enum kc_cost_shape {
	KC_COST_CHAIN,
	KC_COST_BINOMIAL,
	KC_COST_BINOMIAL_DOWN,
	KC_COST_HALVING,
};

/*
 * Of the p - 1 blocks of a Scatter (Gather) from member 0 on merged level
 * @l, how many cross a pod on its critical path: for the trees the root's
 * own chain of sends, the largest subtrees first; for the chain every
 * block past the first pod boundary.
 */
u64 kc_cost_scatter_slow(const struct kc_cost_lv *l, enum kc_cost_shape shape);
/* The slow() rule of a Scatter or Gather of @shape; false for other ops. */
bool kc_cost_spread_slow(const struct kc_cost_lv *l, u32 op, enum kc_cost_shape shape,
			 u64 *x, u64 *d);
/* A binomial phase on merged level @l: one slow round per pod, min(pods, L) of L. */
void kc_cost_rounds_slow(const struct kc_cost_lv *l, u64 *x, u64 *d);
/* floor(x * num / den) without overflow for x * num < 2^64 * den; saturates. */
u64 kc_cost_muldiv(u64 x, u64 num, u64 den);

#endif /* KC_COST_H */
