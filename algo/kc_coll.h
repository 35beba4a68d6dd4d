/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Operations: their description, validation, and kc_plan_build(), which
 * turns (op, topology, rank, algorithm per level) into this rank's plan.
 *
 * Counts follow NCCL: AllReduce, Broadcast and Reduce move count elements;
 * ReduceScatter receives count and sends count * nranks; AllGather sends
 * count and receives count * nranks; Scatter and Gather move count per
 * rank (count * nranks at the root); AlltoAll sends and receives count per
 * peer.  AlltoAllv takes per-peer counts and displacements in elements.
 *
 * In place (KC_OP_F_INPLACE) means, as in NCCL: the same buffer for
 * AllReduce, Broadcast, Reduce and AlltoAll; for ReduceScatter and Scatter
 * the receive buffer is the send buffer + rank * count; for AllGather and
 * Gather the send buffer is the receive buffer + rank * count.  The caller
 * maps KC_BUF_SEND and KC_BUF_RECV accordingly.  Plans write KC_BUF_SEND
 * only in place, and then only where the result goes: ReduceScatter
 * leaves the caller's other blocks as they were.
 */
#ifndef KC_COLL_H
#define KC_COLL_H

#include "kc_algo.h"
#include "kc_topo.h"

struct kc_cost_model;

#define KC_OP_F_INPLACE	0x1

struct kc_op_desc {
	u32 op;
	u32 dtype;
	u32 redop;
	u32 root;
	u64 count;
	u32 flags;
	/* KCOLL_OP_ALLTOALLV only: [nranks] element counts and displacements */
	const u64 *scounts;
	const u64 *sdispls;
	const u64 *rcounts;
	const u64 *rdispls;
};

struct kc_algo_cfg {
	u32 algo[KCOLL_LEVEL_COUNT];	/* enum kcoll_algo per level; AUTO chooses */
	u64 pipe_bytes;			/* pipelining piece for tree/pipeline; 0: none */
	/*
	 * What HCCL_ALGO configured per level for this operation
	 * (kc_cfg_for_op()), before the fallback of algorithms that cannot
	 * run it; AUTO where it configured nothing, and everywhere when the
	 * caller fills algo[] itself.  A level configured here may also fall
	 * back where its algorithm cannot run the operation on the topology
	 * (kc_select_prepare()); plan building reports every configured
	 * algorithm that did not run (struct kc_plan: fallback, note).
	 */
	u32 conf[KCOLL_LEVEL_COUNT];
};

/* What a whole-operation builder (and the hierarchical composer) works on. */
struct kc_coll_ctx {
	const struct kc_topo *topo;
	const struct kc_op_desc *op;
	const struct kc_algo_cfg *cfg;
	u32 rank;
	u32 esize;
	/*
	 * The region the operation works in place on (see kc_algo.h):
	 * AllReduce, Broadcast, Reduce: count elements;
	 * ReduceScatter, AllGather, Scatter, Gather: count * nranks elements,
	 * block r (count elements) belonging to rank r.
	 */
	struct kc_region work;
	struct kc_a2a a2a;		/* AlltoAll(v): over all ranks */
	const struct kc_cost_model *model;	/* for AUTO levels; NULL: kc_cost_default */
	char *err;			/* message for a human, may be NULL */
	u32 errlen;
};

/* True for ops that reduce, and so need a valid redop. */
bool kc_op_reduces(u32 op);
bool kc_op_rooted(u32 op);
const char *kc_op_name(u32 op);
/* The op named name (as kc_op_name() spells it), or -EINVAL. */
int kc_op_by_name(const char *name);

/*
 * Check an operation for nranks ranks.  Returns 0, -EINVAL (unknown op,
 * dtype or redop, root out of range, missing AlltoAllv arrays) or
 * -EOVERFLOW (byte size does not fit 64 bits), with a message in err.
 */
int kc_op_validate(const struct kc_op_desc *op, u32 nranks, char *err, u32 errlen);

/* Bytes of the send and receive buffers of this rank (0 where unused). */
int kc_op_buf_bytes(const struct kc_op_desc *op, u32 nranks, u32 rank,
		    u64 *send_bytes, u64 *recv_bytes);

/*
 * Build the plan of @rank.  Returns 0 and the plan in *out, or a negative
 * errno with a message in err: validation errors above, -EOPNOTSUPP when a
 * chosen algorithm cannot run the operation (or on this topology),
 * -ENOMEM.
 */
int kc_plan_build(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *cfg, struct kc_plan **out, char *err, u32 errlen);
/*
 * The same plan with every repeat written out step by step by the
 * builder: the same expansion, with no compact record.  Tests compare the
 * two; nothing else needs it.
 */
int kc_plan_build_explicit(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
			   const struct kc_algo_cfg *cfg, struct kc_plan **out, char *err,
			   u32 errlen);

/*
 * kc_plan_build() with the AUTO levels chosen on link model @model (NULL:
 * kc_cost_default, which is what kc_plan_build() uses).  Every rank of a
 * communicator must pass the same model, or they choose differently.
 */
int kc_plan_build_model(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
			const struct kc_algo_cfg *cfg, const struct kc_cost_model *model,
			struct kc_plan **out, char *err, u32 errlen);

/* The default composition over the effective levels (kc_hier.c). */
int kc_hier_build(struct kc_builder *b, const struct kc_coll_ctx *c);

/* Automatic choice of the flat algorithm for one level (kc_select.c). */
u32 kc_select_level(const struct kc_coll_ctx *c, u32 cfg_level, u32 group_size);

/*
 * The algorithm @algo (per HCCL_ALGO level) names for an effective level
 * configured by @cfg_level that stands for @levels (struct kc_level): its
 * own level's, else that of a level merged into it, level2 before level0;
 * KCOLL_ALGO_AUTO when none names one.  *@from (may be NULL): the level
 * it came from.
 */
u32 kc_level_algo(const u32 *algo, u32 cfg_level, u32 levels, u32 *from);

/*
 * Can flat algorithm @a run what kc_hier.c's composition of @op asks of
 * an effective level, the top one (@top) or one below it?  Below the top,
 * Broadcast needs Scatter and AllGather, Reduce ReduceScatter and Gather,
 * AllReduce ReduceScatter and AllGather or an AllReduce of the whole
 * region; AlltoAll(v) is one phase over all ranks.
 */
bool kc_hier_level_can(const struct kc_algo_ops *a, u32 op, bool top);

/* Record a message for a human in the context's error buffer. */
int kc_coll_error(const struct kc_coll_ctx *c, int err, const char *what, const char *algo);

#endif /* KC_COLL_H */
