// SPDX-License-Identifier: GPL-2.0
/*
 * The table of algorithms.  Its order is the order of every list of them:
 * the HCCL_ALGO parser's tokens and error text, and the table walks of
 * the tools and tests.  Selection has its own order (auto_rank).
 */
#include "kc_algo.h"
#include "kc_topo.h"

/*
 * An algorithm is file alg_<name>.c, which defines kc_alg_<name>: declared
 * here, and listed below where its HCCL_ALGO tokens go in the parser's list.
 */
KC_ALGO_DECLARE(ring);
KC_ALGO_DECLARE(rhd);
KC_ALGO_DECLARE(nhr);
KC_ALGO_DECLARE(nb);
KC_ALGO_DECLARE(ahc);
KC_ALGO_DECLARE(ahc_broke);
KC_ALGO_DECLARE(pipeline);
KC_ALGO_DECLARE(pairwise);
KC_ALGO_DECLARE(mesh);
KC_ALGO_DECLARE(tree);

const struct kc_algo_ops *const kc_algo_table[] = {
	&kc_alg_ring,
	&kc_alg_rhd,
	&kc_alg_nhr,
	&kc_alg_nb,
	&kc_alg_ahc,
	&kc_alg_ahc_broke,
	&kc_alg_pipeline,
	&kc_alg_pairwise,
	&kc_alg_mesh,
	&kc_alg_tree,
};

const u32 kc_algo_table_len = ARRAY_SIZE(kc_algo_table);

const struct kc_algo_ops *kc_algo_get(u32 algo)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(kc_algo_table); i++)
		if (kc_algo_table[i]->id == algo)
			return kc_algo_table[i];
	return NULL;
}

u32 kc_algo_auto_list(bool builders, u32 *ids)
{
	u8 rank[KCOLL_ALGO_COUNT] = {};
	u32 i, j, n = 0;

	/* insertion by rank after every equal one: ties stay in table order */
	for (i = 0; i < ARRAY_SIZE(kc_algo_table); i++) {
		const struct kc_algo_ops *a = kc_algo_table[i];

		if (!a->auto_rank || !a->build != !builders || n >= KCOLL_ALGO_COUNT)
			continue;
		for (j = n; j > 0 && rank[j - 1] > a->auto_rank; j--) {
			rank[j] = rank[j - 1];
			ids[j] = ids[j - 1];
		}
		rank[j] = a->auto_rank;
		ids[j] = a->id;
		n++;
	}
	return n;
}

void kc_algo_topo_cache(struct kc_topo *t)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n, i, j;

	memset(t->algo_cache, 0, sizeof(t->algo_cache));
	n = kc_topo_levels(t, 0, lv);
	for (i = 0; i < n; i++) {
		if (!kc_topo_level_merged(t, &lv[i]))
			continue;
		for (j = 0; j < ARRAY_SIZE(kc_algo_table); j++) {
			const struct kc_algo_ops *a = kc_algo_table[j];

			if (a->topo_cache && a->id < KCOLL_ALGO_COUNT)
				t->algo_cache[a->id] = a->topo_cache(t, &lv[i].g);
		}
	}
}

const char *kc_algo_name(u32 algo)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);

	if (algo == KCOLL_ALGO_AUTO)
		return "auto";
	return a ? a->name : "unknown";
}

const char *kc_algo_label(u32 algo)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);

	if (!a)
		return algo == KCOLL_ALGO_AUTO ? "auto" : "unknown";
	return a->label ? a->label : a->hccl;
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
