/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The algorithm table.  Each algorithm is one file alg_<name>.c that fills
 * one struct kc_algo_ops with the phases its structure supports; a NULL
 * phase means the algorithm cannot run that phase and plan building fails
 * with -EOPNOTSUPP (never a silent substitute).
 *
 * A phase runs among the members of a group (see kc_build.h).  Contracts,
 * for every member unless stated otherwise:
 *
 *  rs:      before, every member holds its full contribution in layout l
 *           (all nblocks blocks, nblocks == g->size).  After, member i holds
 *           in block i the reduction over all members of block i.  Other
 *           blocks are scratch afterwards.
 *  ag:      before, member i holds block i of l.  After, every member holds
 *           every block.
 *  ar:      before, every member holds a contribution in region r.  After,
 *           every member holds the reduction in r.
 *  bcast:   root's r is copied to every member's r.
 *  reduce:  root's r receives the reduction over all members' r; the
 *           non-root regions are scratch afterwards.
 *  scatter: root holds every block of l; after, member i holds block i (at
 *           the same offsets).  Non-root members may use all of l as scratch.
 *  gather:  member i holds block i of l; after, root holds every block.
 *           Non-root members may use all of l as scratch.
 *  a2a:     member i receives a->send[i] of mine into its a->recv[me];
 *           the caller has already copied my own block (i == me).
 *           a->sbuf is never written while the phase runs.
 *  barrier: no member leaves before every member has entered.
 *
 * Phases append whole rounds: they start and end with kc_b_round().
 * A hierarchical algorithm (pipeline, AHC) instead provides build(), which
 * writes the whole plan of an operation for a topology (see kc_coll.h).
 */
#ifndef KC_ALGO_H
#define KC_ALGO_H

#include "kc_build.h"

struct kc_coll_ctx;
struct kc_cost_link;
struct kc_cost_lv;
struct kc_cost_model;
struct kc_topo;
struct kc_op_desc;

struct kc_algo_ops {
	u32 id;			/* its enum kcoll_algo value */
	const char *name;	/* kcoll name, lower case */
	const char *hccl;	/* HCCL_ALGO token, the one kc_cfg_format() writes */
	const char *const *aliases;	/* more HCCL_ALGO tokens, NULL-terminated, or NULL */
	const char *label;	/* collctl's short name; NULL: the HCCL token */
	int (*rs)(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l);
	int (*ag)(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l);
	int (*ar)(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r);
	int (*bcast)(struct kc_builder *b, const struct kc_group *g, u32 root,
		     const struct kc_region *r);
	int (*reduce)(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r);
	int (*scatter)(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l);
	int (*gather)(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_layout *l);
	int (*a2a)(struct kc_builder *b, const struct kc_group *g, const struct kc_a2a *a);
	int (*barrier_op)(struct kc_builder *b, const struct kc_group *g);
	/*
	 * a2a needs kc_a2a.uniform (AlltoAll, not AlltoAllv): it relays
	 * blocks through other members, which must know their length.
	 */
	bool a2a_uniform_only;
	/* Whole-operation builder of hierarchical algorithms (else NULL), */
	int (*build)(struct kc_builder *b, const struct kc_coll_ctx *c);
	/* and the operations it supports, as bits 1 << enum kcoll_op. */
	u32 build_ops;

	/*
	 * Cost model (kc_cost.h).  cost: modelled time of phase @op among
	 * @p > 1 members, @n bytes, on links @l (@port: one port per member,
	 * levels 1 and 2); KC_COST_INF for a phase it has not.
	 */
	u64 (*cost)(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port);
	/*
	 * Slow-link rule on a level merged across pods: of the *d units its
	 * beta counts, *x cross a pod; false when all of it runs at the
	 * merged (slow) level.  @cache: what topo_cache() kept, or 0.
	 */
	bool (*slow)(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d);
	/* A per-topology walk for slow() on rank 0's merged group (kc_topo_init*()). */
	u32 (*topo_cache)(const struct kc_topo *t, const struct kc_group *g);
	/* Builders: the time of the whole operation; l0algo: level0's configured algorithm. */
	u64 (*cost_whole)(const struct kc_topo *t, const struct kc_cost_model *m, u32 algo,
			  u32 op, u64 n, const u32 *l0algo);

	/*
	 * Automatic selection: the order in which it tries the algorithm
	 * (1 first; 0 never; equal ranks in table order).  Flat algorithms
	 * compete per level, builders for the whole operation.
	 */
	u8 auto_rank;
	/* Chosen between servers only where collctl calibrate measured the ports to overlap. */
	bool auto_port_measured;
	/* A builder that runs level0's configured algorithm inside servers of pods. */
	bool runs_level0;
	/* Configured at level1, it governs level2 too (HCCL's AHC rule). */
	bool governs_level2;
	/* A builder that selection may rank for @op on @t only where this is true. */
	bool (*auto_ok)(const struct kc_topo *t, const struct kc_op_desc *op, u32 algo);
};

/*
 * Declares kc_alg_<n>, the ops algorithm file alg_<n>.c defines right
 * after; the table (kc_algos.c) declares it the same way.
 */
#define KC_ALGO_DECLARE(n) extern const struct kc_algo_ops kc_alg_##n

/* Can algorithm @a run operation @op as the only level of a flat topology? */
bool kc_algo_supports(const struct kc_algo_ops *a, u32 op);

/*
 * The one table of algorithms (kc_algos.c), in the order every list of
 * them follows (the HCCL_ALGO parser's, for one).  Adding an algorithm is
 * its file, its uapi enum value and one line there.
 */
extern const struct kc_algo_ops *const kc_algo_table[];
extern const u32 kc_algo_table_len;

/* The ops of algorithm id (enum kcoll_algo), or NULL for AUTO/unknown. */
const struct kc_algo_ops *kc_algo_get(u32 algo);

/*
 * The algorithms automatic selection tries, flat ones (@builders false)
 * or builders, in its order, into @ids (room for KCOLL_ALGO_COUNT); how many.
 */
u32 kc_algo_auto_list(bool builders, u32 *ids);

/* Fill t's per-algorithm cache for the slow() rules (kc_topo_init*() call it). */
void kc_algo_topo_cache(struct kc_topo *t);

/*
 * Does NB broadcast bytes to p members with the binomial tree
 * (BroadcastNBBinary) instead of Scatter + AllGather?  HCCL switches at a
 * size derived from the link bandwidth; kcoll has no bandwidth figure and
 * uses a fixed 64 KiB, and the tree always for p == 2.  alg_nb.c builds
 * and prices by this rule.
 */
static inline bool kc_nb_bcast_binomial(u64 p, u64 bytes)
{
	return p == 2 || bytes < 64 * 1024;
}

/* NHR's phase cost (alg_nhr.c), which NB shares but for its own steps (@nb). */
u64 kc_nhr_cost(bool nb, u32 op, u64 p, u64 n, const struct kc_cost_link *l);

const char *kc_algo_name(u32 algo);
/* collctl's short name of algorithm id ("auto" for AUTO). */
const char *kc_algo_label(u32 algo);
/* The algorithm id named name (kcoll's lower-case name or "auto"), or -EINVAL. */
int kc_algo_by_name(const char *name);

#endif /* KC_ALGO_H */
