// SPDX-License-Identifier: GPL-2.0
/*
 * AHC_BROKE (HCOMM CommBrokeAlignInfo; Documentation/algorithms.md): AHC
 * aligned to the smallest group (m members) instead of the LCM of the group
 * sizes, so coprime or large sizes do not shred the data into tiny slices;
 * the price is idle cards in the larger groups.
 *
 * AllReduce, Broadcast, Reduce: every group cuts the region into
 * ceil(count / m) element blocks, block i for member i; only members
 * i < m get a non-empty one.  The logical same-index cards of block i are
 * the members i of all groups; they run the inter-group phase on it (Ring
 * re-splits it G ways).
 *
 * ReduceScatter, AllGather: the per-rank blocks of group h's region are
 * dealt to the members of every group g in turn, block i to member
 * i % size(g).  So the logical group of block i is member i of the groups
 * that have one ("complete") and member i % size of the others, which
 * take part with their share of the data (HCOMM's extra logical groups
 * for indices >= m).  Group h's own member i is the card of block i and
 * receives its result there.
 *
 * Per rank of group g (s members), n bytes, G groups:
 *   AllReduce  NHR RS in g over s blocks of n/m (blocks >= m empty):
 *              ceil(log2 s) rounds; members i < m: Ring AllReduce of n/m
 *              among G, 2(G-1) rounds of n/(mG); NHR AG in g.
 *   RS / AG    per group region of t blocks: ceil(t/s) NHR RS (AG)
 *              windows in g, then per own block a Ring reduce to
 *              (broadcast from) group h's card.
 *   Broadcast, Reduce, Barrier as AHC (see alg_ahc.c) on these blocks.
 * The "no slices below 128 KiB" rounding of HCOMM is not applied: kcoll
 * leaves message sizing to the executor.
 */
#include "alg_ahc_core.h"

static int broke_cut(const struct kc_ahc *a, u32 m, const struct kc_region *r,
		     u32 owner_size, struct kc_ahc_cut *cut)
{
	cut->r = *r;
	cut->m = m;
	cut->nslices = 0;
	cut->spb = 0;
	if (owner_size)
		cut->unit = r->count / owner_size;
	else
		cut->unit = r->count / a->mmin + (r->count % a->mmin ? 1 : 0);
	return 0;
}

static void broke_note(const struct kc_ahc *a, bool whole, char *buf, u32 len)
{
	kc_snprintf(buf, len, whole ? " m=%u" : " per-rank blocks", a->mmin);
}

static const struct kc_ahc_scheme broke_scheme = {
	.algo = KCOLL_ALGO_AHC_BROKE,
	.name = "AHC_BROKE",
	.cut = broke_cut,
	.note = broke_note,
};

static int broke_build(struct kc_builder *b, const struct kc_coll_ctx *c)
{
	return kc_ahc_build(b, c, &broke_scheme);
}

KC_ALGO_DECLARE(ahc_broke);

const struct kc_algo_ops kc_alg_ahc_broke = {
	.id = KCOLL_ALGO_AHC_BROKE,
	.name = "ahc_broke",
	.hccl = "AHC_BROKE",
	.build = broke_build,
	.build_ops = KC_AHC_OPS,
	.cost_whole = kc_ahc_cost,
	.auto_rank = 3,
	.runs_level0 = true,
	.governs_level2 = true,
	.auto_ok = kc_ahc_auto_ok,
};
