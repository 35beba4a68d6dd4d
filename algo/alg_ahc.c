// SPDX-License-Identifier: GPL-2.0
/*
 * AHC, Asymmetric Hierarchical Concatenate (Documentation/algorithms.md):
 * groups of different sizes (2 + 3 cards, 64 + 128 ...) still split the work
 * evenly among all their members.  For AllReduce, Broadcast and Reduce the
 * region is cut into L * G slices (L the LCM of the group sizes, G the
 * number of groups) and each member of a group of m owns L * G / m
 * consecutive slices, so every group's block boundaries fall on slice
 * boundaries.  The boundaries of all groups together cut the region into
 * segments; the owners of a segment in the G groups (the "logical same-index
 * cards") run the inter-group phase on it.  Example 2 + 3, 12 slices: group
 * 0 owns [0, 6) [6, 12), group 1 [0, 4) [4, 8) [8, 12); the segments are [0,
 * 4) [4, 6) [6, 8) [8, 12) with the cards (0,0) (0,1) (1,1) (1,2).
 *
 * ReduceScatter and AllGather keep every rank's result block exact: the
 * region of group h (its members' blocks) is cut by group h at its
 * members' blocks and by every other group evenly among its members; the
 * segments are again the common refinement, i.e. the seed's LCM slicing
 * wherever the data divides evenly.
 *
 * The stages (alg_ahc_core.c), per rank of group g (m members), n bytes:
 *   AllReduce  NHR RS in g: ceil(log2 m) rounds, (m-1)/m * n;
 *              per own segment s: Ring AllReduce among G cards,
 *              2(G-1) rounds of |s|/G;
 *              NHR AG in g: ceil(log2 m) rounds, (m-1)/m * n.
 *   Broadcast  NHR scatter in the root's group, Ring broadcast per
 *              segment from the root group's card, NHR AG.
 *   Reduce     NHR RS, Ring reduce per segment to the root group's card,
 *              NHR gather to the root.
 *   RS / AG    per group region: NHR RS (AG) in g of (m-1)/m of it, and
 *              per own segment a Ring reduce to (broadcast from) the card
 *              of the region's group.
 *   Barrier    NHR barrier, Ring barrier among the first members, NHR
 *              barrier.
 */
#include "alg_ahc_core.h"

static int ahc_cut(const struct kc_ahc *a, u32 m, const struct kc_region *r, u32 owner_size,
		   struct kc_ahc_cut *cut)
{
	u64 slices = a->lcm * a->ngroups;

	cut->r = *r;
	cut->m = m;
	cut->unit = 0;
	if (owner_size) {
		cut->nslices = m;
		cut->spb = 1;
		return 0;
	}
	if (a->lcm > U32_MAX || slices > U32_MAX)
		return kc_coll_error(a->c, -EOPNOTSUPP,
				     "LCM of the group sizes x groups exceeds 2^32 slices", "ahc");
	cut->nslices = (u32)slices;
	cut->spb = (u32)(slices / m);
	return 0;
}

static void ahc_note(const struct kc_ahc *a, bool whole, char *buf, u32 len)
{
	if (!whole)
		kc_snprintf(buf, len, " even cuts");
	else if (a->lcm > U32_MAX)
		kc_snprintf(buf, len, " L>2^32");
	else
		kc_snprintf(buf, len, " L=%llu slices=%llu", (unsigned long long)a->lcm,
			    (unsigned long long)a->lcm * a->ngroups);
}

static const struct kc_ahc_scheme ahc_scheme = {
	.algo = KCOLL_ALGO_AHC,
	.name = "AHC",
	.cut = ahc_cut,
	.note = ahc_note,
};

static int ahc_build(struct kc_builder *b, const struct kc_coll_ctx *c)
{
	return kc_ahc_build(b, c, &ahc_scheme);
}

KC_ALGO_DECLARE(ahc);

const struct kc_algo_ops kc_alg_ahc = {
	.id = KCOLL_ALGO_AHC,
	.name = "ahc",
	.hccl = "AHC",
	.build = ahc_build,
	.build_ops = KC_AHC_OPS,
	.cost_whole = kc_ahc_cost,
	.auto_rank = 2,
	.runs_level0 = true,
	.governs_level2 = true,
	.auto_ok = kc_ahc_auto_ok,
};
