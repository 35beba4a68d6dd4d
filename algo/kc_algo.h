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

struct kc_algo_ops {
	const char *name;	/* kcoll name, lower case */
	const char *hccl;	/* HCCL_ALGO token */
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
};

/* Can algorithm @a run operation @op as the only level of a flat topology? */
bool kc_algo_supports(const struct kc_algo_ops *a, u32 op);

extern const struct kc_algo_ops kc_alg_mesh;
extern const struct kc_algo_ops kc_alg_ring;
extern const struct kc_algo_ops kc_alg_rhd;
extern const struct kc_algo_ops kc_alg_nhr;
extern const struct kc_algo_ops kc_alg_nb;
extern const struct kc_algo_ops kc_alg_pairwise;
extern const struct kc_algo_ops kc_alg_tree;
extern const struct kc_algo_ops kc_alg_pipeline;
extern const struct kc_algo_ops kc_alg_ahc;
extern const struct kc_algo_ops kc_alg_ahc_broke;

/* The ops of algorithm id (enum kcoll_algo), or NULL for AUTO/unknown. */
const struct kc_algo_ops *kc_algo_get(u32 algo);

/*
 * Does NB broadcast bytes to p members with the binomial tree
 * (BroadcastNBBinary) instead of Scatter + AllGather?  HCCL switches at a
 * size derived from the link bandwidth; kcoll has no bandwidth figure and
 * uses a fixed 64 KiB, and the tree always for p == 2.  alg_nb.c builds
 * by this rule and kc_cost.c prices by it.
 */
static inline bool kc_nb_bcast_binomial(u64 p, u64 bytes)
{
	return p == 2 || bytes < 64 * 1024;
}

/*
 * Slow halves on the critical path of the double-tree Broadcast from
 * member 0 of p when only transfers between parts are slow (alg_tree.c).
 */
int kc_tree_bcast_slow_halves(u32 p, const u32 *part, u32 *halves);

const char *kc_algo_name(u32 algo);
/* The algorithm id named name (kcoll's lower-case name or "auto"), or -EINVAL. */
int kc_algo_by_name(const char *name);

#endif /* KC_ALGO_H */
