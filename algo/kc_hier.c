// SPDX-License-Identifier: GPL-2.0
/*
 * The default composition of an operation over the effective topology
 * levels, with one flat algorithm per level (Documentation/algorithms.md,
 * "Levels"):
 *
 *   AllReduce      RS up the levels, AllReduce at the top, AG back down
 *   ReduceScatter  RS from the top level down (inter-server blocks stay
 *                  contiguous)
 *   AllGather      AG from the bottom level up
 *   Broadcast      scatter up the root's chain, broadcast at the top,
 *                  AG back down
 *   Reduce         RS up, reduce at the top, gather down the root's chain
 *   Scatter        scatter from the top down the root's chain
 *   Gather         gather from the bottom up towards the root
 *   Barrier        a barrier per level, bottom up
 *   AlltoAll(v)    one flat phase over all ranks, with the algorithm of
 *                  the highest level that configures one (else chosen
 *                  for the top level)
 *
 * A level whose algorithm has no RS/AG but an AllReduce runs the AllReduce
 * on the whole region and passes it up unchanged.  A merged level runs
 * the algorithm its own (level1) configuration names, else that of a
 * level merged into it (kc_level_algo()).  plan->algo records what runs
 * at each configuration level: a merged level's also at every merged
 * level that configured the same, AlltoAll's phase at the top level and
 * at every level that configured it.
 */
#include "kc_coll.h"

struct kc_hier {
	struct kc_level lv[KC_MAX_LEVELS];
	struct kc_level rlv[KC_MAX_LEVELS];	/* the root's levels */
	const struct kc_algo_ops *alg[KC_MAX_LEVELS];
	u32 n;
};

bool kc_hier_level_can(const struct kc_algo_ops *a, u32 op, bool top)
{
	if (!a || a->build)
		return false;
	if (top)
		return kc_algo_supports(a, op);
	/* Below the top, the level runs its part of the composed operation. */
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return (a->rs && a->ag) || a->ar;
	case KCOLL_OP_BROADCAST:
		return a->scatter && a->ag;
	case KCOLL_OP_REDUCE:
		return a->rs && a->gather;
	}
	return kc_algo_supports(a, op);
}

/*
 * Record that @id runs at configuration level @cl and at every level of
 * @levels that configured it (merged levels, AlltoAll's phase).
 */
static void kc_hier_record(struct kc_builder *b, const struct kc_coll_ctx *c, u32 cl,
			   u32 levels, u32 id)
{
	u32 l;

	if (!b->plan->algo[cl])
		b->plan->algo[cl] = id;
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		if (l != cl && (levels & KC_LEVEL_BIT(l)) && c->cfg->algo[l] == id)
			b->plan->algo[l] = id;
}

static int kc_hier_set(struct kc_builder *b, const struct kc_coll_ctx *c, struct kc_hier *h,
		       u32 l, u32 id, u32 levels)
{
	h->alg[l] = kc_algo_get(id);
	if (!h->alg[l] || h->alg[l]->build)
		return kc_coll_error(c, -EOPNOTSUPP, "not a single-level algorithm",
				     kc_algo_name(id));
	kc_hier_record(b, c, h->lv[l].cfg_level, levels, id);
	return 0;
}

static int kc_hier_init(struct kc_builder *b, const struct kc_coll_ctx *c, struct kc_hier *h)
{
	u32 l, id, all = 0;
	int ret;

	h->n = kc_topo_levels(c->topo, c->rank, h->lv);
	if (kc_op_rooted(c->op->op))
		kc_topo_levels(c->topo, c->op->root, h->rlv);
	if (c->op->op == KCOLL_OP_ALLTOALL || c->op->op == KCOLL_OP_ALLTOALLV) {
		/* one phase over all ranks: only the top level's entry is used */
		if (!h->n)
			return 0;
		id = KCOLL_ALGO_AUTO;
		for (l = h->n; l-- > 0;) {
			all |= h->lv[l].levels;
			if (!id)
				id = kc_level_algo(c->cfg->algo, h->lv[l].cfg_level,
						   h->lv[l].levels, NULL);
		}
		l = h->n - 1;
		if (!id)
			id = kc_select_level(c, h->lv[l].cfg_level, h->lv[l].g.size);
		return kc_hier_set(b, c, h, l, id, all);
	}
	for (l = 0; l < h->n; l++) {
		u32 cl = h->lv[l].cfg_level;

		id = kc_level_algo(c->cfg->algo, cl, h->lv[l].levels, NULL);
		if (id == KCOLL_ALGO_AUTO)
			id = kc_select_level(c, cl, h->lv[l].g.size);
		ret = kc_hier_set(b, c, h, l, id, h->lv[l].levels);
		if (ret)
			return ret;
	}
	return 0;
}

/* Does my position match the root's at levels [from, h->n)? */
static bool kc_same_above(const struct kc_hier *h, u32 from)
{
	u32 l;

	for (l = from; l < h->n; l++)
		if (h->lv[l].g.me != h->rlv[l].g.me)
			return false;
	return true;
}

/* ... and at levels [0, to)? */
static bool kc_same_below(const struct kc_hier *h, u32 to)
{
	u32 l;

	for (l = 0; l < to; l++)
		if (h->lv[l].g.me != h->rlv[l].g.me)
			return false;
	return true;
}

#define KC_NEED(c, alg, phase) \
	((alg)->phase ? 0 : kc_coll_error(c, -EOPNOTSUPP, NULL, (alg)->name))

static int kc_hier_allreduce(struct kc_builder *b, const struct kc_coll_ctx *c,
			     const struct kc_hier *h)
{
	struct kc_region reg[KC_MAX_LEVELS + 1];
	bool split[KC_MAX_LEVELS] = { false };
	u32 l, top = h->n - 1;
	int ret;

	reg[0] = c->work;
	for (l = 0; l < top; l++) {
		const struct kc_algo_ops *a = h->alg[l];

		split[l] = a->rs && a->ag;
		if (split[l]) {
			struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

			ret = a->rs(b, &h->lv[l].g, &lay);
			reg[l + 1] = kc_lay_block_region(&lay, c->esize, h->lv[l].g.me);
		} else {
			ret = KC_NEED(c, a, ar);
			if (!ret)
				ret = a->ar(b, &h->lv[l].g, &reg[l]);
			reg[l + 1] = reg[l];
		}
		if (ret)
			return ret;
	}
	ret = KC_NEED(c, h->alg[top], ar);
	if (!ret)
		ret = h->alg[top]->ar(b, &h->lv[top].g, &reg[top]);
	for (l = top; l-- > 0 && !ret;) {
		struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

		if (split[l])
			ret = h->alg[l]->ag(b, &h->lv[l].g, &lay);
	}
	return ret;
}

/* Layout of region r over level l's members, each standing for span ranks. */
static struct kc_layout kc_span_layout(const struct kc_region *r, const struct kc_level *lv)
{
	struct kc_layout lay = { *r, lv->g.size * lv->span, lv->span };

	return lay;
}

static int kc_hier_reducescatter(struct kc_builder *b, const struct kc_coll_ctx *c,
				 const struct kc_hier *h)
{
	struct kc_region r = c->work;
	u32 l;
	int ret;

	for (l = h->n; l-- > 0;) {
		struct kc_layout lay = kc_span_layout(&r, &h->lv[l]);

		ret = KC_NEED(c, h->alg[l], rs);
		if (!ret)
			ret = h->alg[l]->rs(b, &h->lv[l].g, &lay);
		if (ret)
			return ret;
		r = kc_lay_block_region(&lay, c->esize, h->lv[l].g.me);
	}
	return 0;
}

/* The region of my span at level l (contiguous ranks' blocks). */
static struct kc_region kc_span_region(const struct kc_coll_ctx *c, const struct kc_hier *h,
				       u32 l)
{
	u32 span = h->lv[l].span * h->lv[l].g.size;
	u32 first = c->rank / span * span;
	struct kc_region r = { c->work.buf, c->work.off + (u64)first * c->op->count * c->esize,
			       (u64)span * c->op->count };

	return r;
}

static int kc_hier_allgather(struct kc_builder *b, const struct kc_coll_ctx *c,
			     const struct kc_hier *h)
{
	u32 l;
	int ret;

	for (l = 0; l < h->n; l++) {
		struct kc_region r = kc_span_region(c, h, l);
		struct kc_layout lay = kc_span_layout(&r, &h->lv[l]);

		ret = KC_NEED(c, h->alg[l], ag);
		if (!ret)
			ret = h->alg[l]->ag(b, &h->lv[l].g, &lay);
		if (ret)
			return ret;
	}
	return 0;
}

static int kc_hier_broadcast(struct kc_builder *b, const struct kc_coll_ctx *c,
			     const struct kc_hier *h)
{
	struct kc_region reg[KC_MAX_LEVELS + 1];
	u32 l, top = h->n - 1;
	int ret = 0;

	reg[0] = c->work;
	for (l = 0; l < top && !ret; l++) {
		struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

		ret = KC_NEED(c, h->alg[l], scatter) ?: KC_NEED(c, h->alg[l], ag);
		if (!ret && kc_same_above(h, l + 1))
			ret = h->alg[l]->scatter(b, &h->lv[l].g, h->rlv[l].g.me, &lay);
		reg[l + 1] = kc_lay_block_region(&lay, c->esize, h->lv[l].g.me);
	}
	if (!ret)
		ret = KC_NEED(c, h->alg[top], bcast);
	if (!ret)
		ret = h->alg[top]->bcast(b, &h->lv[top].g, h->rlv[top].g.me, &reg[top]);
	for (l = top; l-- > 0 && !ret;) {
		struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

		ret = h->alg[l]->ag(b, &h->lv[l].g, &lay);
	}
	return ret;
}

static int kc_hier_reduce(struct kc_builder *b, const struct kc_coll_ctx *c,
			  const struct kc_hier *h)
{
	struct kc_region reg[KC_MAX_LEVELS + 1];
	u32 l, top = h->n - 1;
	int ret = 0;

	reg[0] = c->work;
	for (l = 0; l < top && !ret; l++) {
		struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

		ret = KC_NEED(c, h->alg[l], rs) ?: KC_NEED(c, h->alg[l], gather);
		if (!ret)
			ret = h->alg[l]->rs(b, &h->lv[l].g, &lay);
		reg[l + 1] = kc_lay_block_region(&lay, c->esize, h->lv[l].g.me);
	}
	if (!ret)
		ret = KC_NEED(c, h->alg[top], reduce);
	if (!ret)
		ret = h->alg[top]->reduce(b, &h->lv[top].g, h->rlv[top].g.me, &reg[top]);
	for (l = top; l-- > 0 && !ret;) {
		struct kc_layout lay = kc_lay_even(&reg[l], h->lv[l].g.size);

		if (kc_same_above(h, l + 1))
			ret = h->alg[l]->gather(b, &h->lv[l].g, h->rlv[l].g.me, &lay);
	}
	return ret;
}

/*
 * Scatter runs the levels top down (each level hands the blocks of its
 * span down to the level below), Gather bottom up; both run a level only
 * where the levels below hold the same member index (kc_same_below).
 */
static int kc_hier_rooted(struct kc_builder *b, const struct kc_coll_ctx *c,
			  const struct kc_hier *h, bool scatter)
{
	u32 i;
	int ret;

	for (i = 0; i < h->n; i++) {
		u32 l = scatter ? h->n - 1 - i : i;
		const struct kc_algo_ops *a = h->alg[l];
		struct kc_region r = kc_span_region(c, h, l);
		struct kc_layout lay = kc_span_layout(&r, &h->lv[l]);

		ret = scatter ? KC_NEED(c, a, scatter) : KC_NEED(c, a, gather);
		if (ret)
			return ret;
		if (!kc_same_below(h, l))
			continue;
		ret = (scatter ? a->scatter : a->gather)(b, &h->lv[l].g, h->rlv[l].g.me, &lay);
		if (ret)
			return ret;
	}
	return 0;
}

static int kc_hier_barrier(struct kc_builder *b, const struct kc_coll_ctx *c,
			   const struct kc_hier *h)
{
	u32 l;
	int ret;

	for (l = 0; l < h->n; l++) {
		ret = KC_NEED(c, h->alg[l], barrier_op);
		if (!ret)
			ret = h->alg[l]->barrier_op(b, &h->lv[l].g);
		if (ret)
			return ret;
	}
	return 0;
}

static int kc_hier_alltoall(struct kc_builder *b, const struct kc_coll_ctx *c,
			    const struct kc_hier *h)
{
	struct kc_group all = { .size = c->topo->nranks, .me = c->rank, .base = 0, .stride = 1 };
	const struct kc_algo_ops *a = h->n ? h->alg[h->n - 1] : NULL;
	const struct kc_range *s = &c->a2a.send[c->rank], *r = &c->a2a.recv[c->rank];
	int ret;

	/* My own block is a local copy whatever the algorithm. */
	kc_b_copy(b, c->a2a.rbuf, r->off, c->a2a.sbuf, s->off, kc_min_u64(s->len, r->len));
	kc_b_round(b);
	if (!a)
		return 0;
	ret = KC_NEED(c, a, a2a);
	if (!ret && a->a2a_uniform_only && !c->a2a.uniform)
		ret = kc_coll_error(c, -EOPNOTSUPP,
				    "it relays blocks whose lengths only their owners know",
				    a->name);
	if (!ret)
		ret = a->a2a(b, &all, &c->a2a);
	return ret;
}

int kc_hier_build(struct kc_builder *b, const struct kc_coll_ctx *c)
{
	struct kc_hier h;
	int ret;

	ret = kc_hier_init(b, c, &h);
	if (ret)
		return ret;
	if (!h.n && c->op->op != KCOLL_OP_ALLTOALL && c->op->op != KCOLL_OP_ALLTOALLV)
		return 0;
	switch (c->op->op) {
	case KCOLL_OP_ALLREDUCE:
		return kc_hier_allreduce(b, c, &h);
	case KCOLL_OP_REDUCESCATTER:
		return kc_hier_reducescatter(b, c, &h);
	case KCOLL_OP_ALLGATHER:
		return kc_hier_allgather(b, c, &h);
	case KCOLL_OP_BROADCAST:
		return kc_hier_broadcast(b, c, &h);
	case KCOLL_OP_REDUCE:
		return kc_hier_reduce(b, c, &h);
	case KCOLL_OP_SCATTER:
		return kc_hier_rooted(b, c, &h, true);
	case KCOLL_OP_GATHER:
		return kc_hier_rooted(b, c, &h, false);
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return kc_hier_alltoall(b, c, &h);
	case KCOLL_OP_BARRIER:
		return kc_hier_barrier(b, c, &h);
	}
	return -EINVAL;
}
