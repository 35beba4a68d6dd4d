// SPDX-License-Identifier: GPL-2.0
/*
 * The table of algorithms, indexed by enum kcoll_algo.
 */
#include "kc_algo.h"

static const struct kc_algo_ops *const kc_algos[KCOLL_ALGO_COUNT] = {
	[KCOLL_ALGO_MESH] = &kc_alg_mesh,
	[KCOLL_ALGO_RING] = &kc_alg_ring,
	[KCOLL_ALGO_RHD] = &kc_alg_rhd,
	[KCOLL_ALGO_NHR] = &kc_alg_nhr,
	[KCOLL_ALGO_NB] = &kc_alg_nb,
	[KCOLL_ALGO_PAIRWISE] = &kc_alg_pairwise,
	[KCOLL_ALGO_TREE] = &kc_alg_tree,
	[KCOLL_ALGO_PIPELINE] = &kc_alg_pipeline,
	[KCOLL_ALGO_AHC] = &kc_alg_ahc,
	[KCOLL_ALGO_AHC_BROKE] = &kc_alg_ahc_broke,
};

const struct kc_algo_ops *kc_algo_get(u32 algo)
{
	return algo < KCOLL_ALGO_COUNT ? kc_algos[algo] : NULL;
}

const char *kc_algo_name(u32 algo)
{
	if (algo == KCOLL_ALGO_AUTO)
		return "auto";
	return algo < KCOLL_ALGO_COUNT && kc_algos[algo] ? kc_algos[algo]->name : "unknown";
}

int kc_algo_by_name(const char *name)
{
	u32 a;

	for (a = 0; a < KCOLL_ALGO_COUNT; a++)
		if (!strcmp(name, kc_algo_name(a)))
			return (int)a;
	return -EINVAL;
}

bool kc_algo_supports(const struct kc_algo_ops *a, u32 op)
{
	if (!a || op >= KCOLL_OP_COUNT)
		return false;
	if (a->build)
		return a->build_ops & (1u << op);
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return a->ar;
	case KCOLL_OP_REDUCESCATTER:
		return a->rs;
	case KCOLL_OP_ALLGATHER:
		return a->ag;
	case KCOLL_OP_BROADCAST:
		return a->bcast;
	case KCOLL_OP_REDUCE:
		return a->reduce;
	case KCOLL_OP_SCATTER:
		return a->scatter;
	case KCOLL_OP_GATHER:
		return a->gather;
	case KCOLL_OP_ALLTOALL:
		return a->a2a;
	case KCOLL_OP_ALLTOALLV:
		return a->a2a && !a->a2a_uniform_only;
	case KCOLL_OP_BARRIER:
		return a->barrier_op;
	}
	return false;
}
