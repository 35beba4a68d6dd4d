/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What AHC and AHC_BROKE (Documentation/algorithms.md) share: the grouping of
 * the ranks, the "logical same-index cards" that carry the inter-group
 * stage, and the running of the inner phases (intra-group NHR, inter-group
 * Ring, HCOMM's defaults).  The two algorithms differ only in how the
 * members of a group cut a region into their blocks (struct kc_ahc_cut,
 * filled by the scheme's cut()); the engine in alg_ahc_core.c does the rest,
 * and prices both.  The family shares the alg_ahc prefix so it lists
 * together: alg_ahc.c, alg_ahc_broke.c and this engine, which is no
 * algorithm of its own (no table entry).
 */
#ifndef ALG_AHC_CORE_H
#define ALG_AHC_CORE_H

#include "kc_coll.h"

/*
 * How the m members of one group cut region r into blocks.  Slice mode
 * (unit == 0): the layout { r, nslices, spb } with nslices == m * spb.
 * Unit mode (unit > 0): r is cut into blocks of unit elements (the last
 * one shorter) dealt to the members in turn, block u to member u % m; each
 * window of m consecutive blocks is one layout for the intra phases.
 */
struct kc_ahc_cut {
	struct kc_region r;
	u32 m;
	u32 nslices;
	u32 spb;
	u64 unit;
};

/* Groups of equal size cut every region alike: one class per group size. */
struct kc_ahc_class {
	struct kc_ahc_cut cut;	/* of the region being exchanged */
	u32 size;
	u32 first;		/* its groups: cgroups[first .. first + n) */
	u32 n;
	u32 owner;		/* the member ranks[] holds for its groups */
};

enum kc_ahc_mode {
	KC_AHC_SERVERS,		/* one pod: a group is a server */
	KC_AHC_PODS,		/* a group is a pod */
	KC_AHC_PLANES,		/* pods of equal servers: same-local-index planes */
};

struct kc_ahc_scheme;

struct kc_ahc {
	struct kc_builder *b;
	const struct kc_coll_ctx *c;
	const struct kc_ahc_scheme *s;
	enum kc_ahc_mode mode;
	u32 ngroups;		/* G */
	u32 g;			/* my group */
	u32 me;			/* my member index in it */
	u32 stride;		/* member j of group h is rank		*/
	u32 local;		/* (first(h) + j) * stride + local	*/
	u32 mmin;		/* smallest and largest group */
	u32 mmax;
	u64 lcm;		/* of the group sizes, capped at 2^32 */
	struct kc_group grp;	/* my group */
	struct kc_group l0g;	/* my server (planes only) */
	const struct kc_algo_ops *intra;
	const struct kc_algo_ops *inter;
	const struct kc_algo_ops *l0;	/* inside servers (planes only) */
	u32 l0id;
	struct kc_ahc_class *cls;	/* [nclasses] */
	u32 nclasses;
	u32 myclass;
	u32 *cgroups;		/* [G] group numbers ordered by class */
	u32 *ranks;		/* [G] the logical same-index cards of a segment */
};

struct kc_ahc_scheme {
	u32 algo;		/* enum kcoll_algo */
	const char *name;	/* HCCL token, for the plan note */
	/*
	 * Cut region r for a group of m members.  owner_size == 0: the region
	 * of an AllReduce, Broadcast or Reduce.  Otherwise r is the region of
	 * a group of owner_size members (ReduceScatter, AllGather), and a
	 * group of that size must get exactly one r->count / owner_size
	 * element block per member, in member order.
	 */
	int (*cut)(const struct kc_ahc *a, u32 m, const struct kc_region *r, u32 owner_size,
		   struct kc_ahc_cut *cut);
	/* Append the scheme's parameters to the plan note. */
	void (*note)(const struct kc_ahc *a, bool whole, char *buf, u32 len);
};

/* Operations both algorithms build. */
#define KC_AHC_OPS ((1u << KCOLL_OP_ALLREDUCE) | (1u << KCOLL_OP_REDUCESCATTER) | \
		    (1u << KCOLL_OP_ALLGATHER) | (1u << KCOLL_OP_BROADCAST) | \
		    (1u << KCOLL_OP_REDUCE) | (1u << KCOLL_OP_BARRIER))

/* The whole-operation builder of both algorithms. */
int kc_ahc_build(struct kc_builder *b, const struct kc_coll_ctx *c, const struct kc_ahc_scheme *s);

/* Units (ranks, or servers for planes: stride = ranks per server) of AHC group h. */
u64 kc_ahc_units(const struct kc_topo *t, u32 h, bool pods, u32 stride);
/* kc_algo_ops.cost_whole of AHC and AHC_BROKE (@algo). */
u64 kc_ahc_cost(const struct kc_topo *t, const struct kc_cost_model *m, u32 algo, u32 op, u64 n,
		const u32 *l0algo);
/* kc_algo_ops.auto_ok of AHC and AHC_BROKE: where their model holds. */
bool kc_ahc_auto_ok(const struct kc_topo *t, const struct kc_op_desc *op, u32 algo);

#endif /* ALG_AHC_CORE_H */
