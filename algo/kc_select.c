// SPDX-License-Identifier: GPL-2.0
/*
 * Automatic choice of a flat algorithm for one level when none is
 * configured.  This is a first-fit preference order; the cost model that
 * replaces it ranks the candidates by modelled time instead.
 */
#include "kc_coll.h"

static bool kc_algo_can(const struct kc_algo_ops *a, u32 op, bool top)
{
	if (!a || a->build)
		return false;
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return top ? !!a->ar : (a->rs && a->ag) || a->ar;
	case KCOLL_OP_REDUCESCATTER:
		return a->rs;
	case KCOLL_OP_ALLGATHER:
		return a->ag;
	case KCOLL_OP_BROADCAST:
		return top ? !!a->bcast : a->scatter && a->ag;
	case KCOLL_OP_REDUCE:
		return top ? !!a->reduce : a->rs && a->gather;
	case KCOLL_OP_SCATTER:
		return a->scatter;
	case KCOLL_OP_GATHER:
		return a->gather;
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return a->a2a;
	case KCOLL_OP_BARRIER:
		return a->barrier;
	}
	return false;
}

u32 kc_select_level(const struct kc_coll_ctx *c, u32 cfg_level, u32 group_size)
{
	static const u32 small[] = { KCOLL_ALGO_MESH, KCOLL_ALGO_RING, KCOLL_ALGO_PAIRWISE };
	static const u32 large[] = { KCOLL_ALGO_NHR, KCOLL_ALGO_RING, KCOLL_ALGO_RHD,
				     KCOLL_ALGO_PAIRWISE, KCOLL_ALGO_MESH };
	bool use_small = cfg_level == KCOLL_LEVEL0 && group_size <= 8;
	const u32 *order = use_small ? small : large;
	u32 n = use_small ? ARRAY_SIZE(small) : ARRAY_SIZE(large);
	u32 i;

	for (i = 0; i < n; i++)
		if (kc_algo_can(kc_algo_get(order[i]), c->op->op, true) &&
		    kc_algo_can(kc_algo_get(order[i]), c->op->op, false))
			return order[i];
	return KCOLL_ALGO_RING;
}
