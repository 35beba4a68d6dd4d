// SPDX-License-Identifier: GPL-2.0
/*
 * The engine of AHC and AHC_BROKE (Documentation/algorithms.md).
 *
 * Groups: the pods when there are several, else the servers.  When there
 * are several pods and every server has k > 1 ranks, a level0 stage runs
 * inside each server first and AHC runs on each "plane" of ranks with the
 * same local index (group g = my plane's ranks in pod g), as the other
 * hierarchical compositions do.
 *
 * Every member of every group cuts a region into blocks (the scheme's
 * cut).  The boundaries of all groups together split the region into
 * segments; a segment lies in one block of each group, and the owners of
 * those blocks, one per group, are the segment's "logical same-index
 * cards".  The inter-group stage runs one inner phase among the G cards of
 * each segment.  Every rank walks the segments of its own blocks in
 * increasing order, so two ranks meet in the segments they share in the
 * same order and the per-pair FIFO matching holds.
 *
 *   AllReduce      intra RS, per segment inter AllReduce, intra AG
 *   Broadcast      intra scatter in the root's group, per segment inter
 *                  Broadcast from the root's group, intra AG
 *   Reduce         intra RS, per segment inter Reduce to the root's group,
 *                  intra gather to the root
 *   ReduceScatter  for each group h: intra RS of h's region in every
 *                  group; then for each h, per segment of h's region an
 *                  inter Reduce to group h.  Group h cuts its region at its
 *                  members' result blocks, so the reduction of a segment
 *                  ends on the rank whose result it is and no intra stage
 *                  follows; the other groups cut it their own way.
 *   AllGather      the mirror: for each h, per segment of h's region an
 *                  inter Broadcast from group h, whose members hold their
 *                  own blocks; then for each h an intra AG of it.
 *                  With one member per group both are a single inter RS
 *                  (AG) among all the cards (see ahc_singletons()).
 *   Barrier        intra, inter among the first member of each group,
 *                  intra.
 *
 * Intra-group phases are NHR, inter-group ones Ring (HCOMM's defaults in
 * CommAHCBaseInfo::InitConcAlgOption).  A missing inner phase refuses the
 * operation with -EOPNOTSUPP.
 *
 * Cost: groups of one size (a class) cut every region alike, so finding a
 * segment costs O(classes), and the ranks array is only rewritten for the
 * classes whose card changes from one segment to the next.  A rank's plan
 * costs O(G + steps + segments * classes) plus the size of a class per
 * change of its card; regular shapes (and one-rank groups) have none.
 */
#include "alg_ahc_core.h"
#include "kc_cost.h"

/* First member of group h as a unit (rank, or server for planes); h <= G. */
static u32 ahc_first(const struct kc_ahc *a, u32 h)
{
	const struct kc_topo *t = a->c->topo;

	switch (a->mode) {
	case KC_AHC_SERVERS:
		return t->server_first[h];
	case KC_AHC_PODS:
		return t->server_first[t->pod_first[h]];
	default:
		return t->pod_first[h];
	}
}

static u32 ahc_size(const struct kc_ahc *a, u32 h)
{
	return ahc_first(a, h + 1) - ahc_first(a, h);
}

static u32 ahc_rank(const struct kc_ahc *a, u32 h, u32 j)
{
	return (ahc_first(a, h) + j) * a->stride + a->local;
}

/* Group and member index of a rank (for planes: of its server's column). */
static void ahc_locate(const struct kc_ahc *a, u32 rank, u32 *h, u32 *j)
{
	const struct kc_topo *t = a->c->topo;
	u32 srv = t->server_of[rank];
	u32 unit = a->mode == KC_AHC_PLANES ? srv : rank;

	*h = a->mode == KC_AHC_SERVERS ? srv : t->pod_of[srv];
	*j = unit - ahc_first(a, *h);
}

/* Sort the groups into classes of equal size (counting sort, O(G + mmax)). */
static int ahc_classes(struct kc_ahc *a)
{
	u32 G = a->ngroups, h, m, d = 0, pos = 0;
	u32 *cls_of;
	u8 *mem;

	a->mmin = U32_MAX;
	a->mmax = 0;
	for (h = 0; h < G; h++) {
		m = ahc_size(a, h);
		a->mmin = kc_min_u32(a->mmin, m);
		a->mmax = m > a->mmax ? m : a->mmax;
	}
	cls_of = kc_zalloc(((size_t)a->mmax + 1) * sizeof(u32));
	if (!cls_of)
		return -ENOMEM;
	for (h = 0; h < G; h++)
		cls_of[ahc_size(a, h)]++;
	for (m = 1; m <= a->mmax; m++)
		d += cls_of[m] ? 1 : 0;
	mem = kc_malloc((size_t)d * sizeof(struct kc_ahc_class) + (size_t)G * 2 * sizeof(u32));
	if (!mem) {
		kc_free(cls_of);
		return -ENOMEM;
	}
	a->cls = (struct kc_ahc_class *)mem;
	a->cgroups = (u32 *)(mem + (size_t)d * sizeof(struct kc_ahc_class));
	a->ranks = a->cgroups + G;
	a->nclasses = d;
	a->lcm = 1;
	for (m = 1, d = 0; m <= a->mmax; m++) {
		struct kc_ahc_class *cl = &a->cls[d];

		if (!cls_of[m])
			continue;
		memset(cl, 0, sizeof(*cl));
		cl->size = m;
		cl->first = pos;
		pos += cls_of[m];
		cls_of[m] = d++;
		/* the LCM stays below 2^32 * m, so the product cannot wrap */
		if (a->lcm <= U32_MAX)
			a->lcm = kc_min_u64(a->lcm / kc_gcd(a->lcm, m) * m, (u64)U32_MAX + 1);
	}
	for (h = 0; h < G; h++) {
		struct kc_ahc_class *cl = &a->cls[cls_of[ahc_size(a, h)]];

		a->cgroups[cl->first + cl->n++] = h;
		a->ranks[h] = ahc_rank(a, h, 0);
	}
	a->myclass = cls_of[ahc_size(a, a->g)];
	kc_free(cls_of);
	return 0;
}

static int ahc_init(struct kc_ahc *a, struct kc_builder *b, const struct kc_coll_ctx *c,
		    const struct kc_ahc_scheme *s)
{
	const struct kc_topo *t = c->topo;
	u32 srv = t->server_of[c->rank];

	memset(a, 0, sizeof(*a));
	a->b = b;
	a->c = c;
	a->s = s;
	a->stride = 1;
	a->intra = kc_algo_get(KCOLL_ALGO_NHR);
	a->inter = kc_algo_get(KCOLL_ALGO_RING);
	if (t->npods > 1 && t->server_size > 1) {
		a->mode = KC_AHC_PLANES;
		a->ngroups = t->npods;
		a->stride = t->server_size;
		a->local = c->rank - t->server_first[srv];
		/*
		 * HCCL takes only NA at level0.  A whole-operation algorithm
		 * named there is what chose this builder (the driver also
		 * looks at level0), not an algorithm for inside servers.
		 */
		a->l0id = c->cfg->algo[KCOLL_LEVEL0];
		a->l0 = kc_algo_get(a->l0id);
		if (!a->l0 || a->l0->build) {
			a->l0id = KCOLL_ALGO_MESH;
			a->l0 = kc_algo_get(KCOLL_ALGO_MESH);
		}
		a->l0g.size = t->server_size;
		a->l0g.me = a->local;
		a->l0g.base = t->server_first[srv];
		a->l0g.stride = 1;
	} else {
		a->mode = t->npods > 1 ? KC_AHC_PODS : KC_AHC_SERVERS;
		a->ngroups = t->npods > 1 ? t->npods : t->nservers;
	}
	ahc_locate(a, c->rank, &a->g, &a->me);
	a->grp.size = ahc_size(a, a->g);
	a->grp.me = a->me;
	a->grp.base = ahc_rank(a, a->g, 0);
	a->grp.stride = a->stride;
	return ahc_classes(a);
}

/* ------------------------------------------------------------- cuts */

/* Slice of a uniform partition of count into n that holds element e. */
static u32 ahc_slice_of(u64 count, u32 n, u64 e)
{
	u64 q = count / n, r = count % n;

	if (e < r * (q + 1))
		return (u32)(e / (q + 1));
	return (u32)(r + (e - r * (q + 1)) / q);
}

/* Elements of the unit-mode block starting at lo (without wrapping). */
static u64 ahc_unit_end(const struct kc_ahc_cut *cut, u64 lo)
{
	return cut->r.count - lo > cut->unit ? lo + cut->unit : cut->r.count;
}

/* The non-empty block holding element e (< count): its member and end. */
static void ahc_cut_owner(const struct kc_ahc_cut *cut, u64 e, u32 *member, u64 *end)
{
	u64 n = cut->r.count;

	if (cut->unit) {
		u64 u = e / cut->unit;

		*member = (u32)(u % cut->m);
		*end = ahc_unit_end(cut, u * cut->unit);
	} else {
		u32 blk = ahc_slice_of(n, cut->nslices, e) / cut->spb;

		*member = blk;
		*end = kc_slice_start(n, cut->nslices, (blk + 1) * cut->spb);
	}
}

/* Block w of a member ([*lo, *hi) elements); false past its last one. */
static bool ahc_cut_block(const struct kc_ahc_cut *cut, u32 member, u64 w, u64 *lo, u64 *hi)
{
	u64 n = cut->r.count, u;

	if (!cut->unit) {
		*lo = kc_slice_start(n, cut->nslices, member * cut->spb);
		*hi = kc_slice_start(n, cut->nslices, (member + 1) * cut->spb);
		return !w;
	}
	u = w * cut->m + member;
	if (u >= n / cut->unit + (n % cut->unit ? 1 : 0))
		return false;
	*lo = u * cut->unit;
	*hi = ahc_unit_end(cut, *lo);
	return true;
}

/*
 * Layout w of a cut for the intra phases: 1 and the layout, 0 past the
 * last one, or an error.  A full window of unit mode is the even layout
 * of m blocks; a short one has one-element slices so that its blocks are
 * unit elements long and the members past its end get empty blocks.
 */
static int ahc_cut_layout(const struct kc_ahc *a, const struct kc_ahc_cut *cut, u64 w,
			  struct kc_layout *l)
{
	u64 n = cut->r.count, span, lo;

	l->r = cut->r;
	if (!cut->unit) {
		l->nslices = cut->nslices;
		l->spb = cut->spb;
		return !w;
	}
	if (cut->unit > U32_MAX / cut->m)
		span = U64_MAX;
	else
		span = cut->unit * cut->m;
	lo = w * span;
	if (w && (span == U64_MAX || lo >= n))
		return 0;
	l->r.off += lo * a->c->esize;
	l->r.count = kc_min_u64(span, n - lo);
	if (l->r.count == span) {
		l->nslices = cut->m;
		l->spb = 1;
		return 1;
	}
	if (span > U32_MAX)
		return kc_coll_error(a->c, -EOPNOTSUPP,
				     "a short window needs more than 2^32 one-element slices",
				     kc_algo_name(a->s->algo));
	l->nslices = (u32)span;
	l->spb = (u32)cut->unit;
	return 1;
}

/* Let every class cut region r (see struct kc_ahc_scheme). */
static int ahc_cut_all(struct kc_ahc *a, const struct kc_region *r, u32 owner_size)
{
	u32 i;
	int ret;

	for (i = 0; i < a->nclasses; i++) {
		ret = a->s->cut(a, a->cls[i].size, r, owner_size, &a->cls[i].cut);
		if (ret)
			return ret;
	}
	return 0;
}

/* ----------------------------------------------------- inner phases */

enum ahc_intra {
	AHC_I_RS,
	AHC_I_AG,
	AHC_I_SCATTER,
	AHC_I_GATHER,
};

/* An intra-group phase over every layout of my cut, in order. */
static int ahc_intra(struct kc_ahc *a, const struct kc_ahc_cut *cut, enum ahc_intra kind,
		     u32 root)
{
	const struct kc_algo_ops *alg = a->intra;
	struct kc_layout l;
	u64 w;
	int ret;

	for (w = 0; ; w++) {
		ret = ahc_cut_layout(a, cut, w, &l);
		if (ret <= 0)
			return ret;
		switch (kind) {
		case AHC_I_RS:
			ret = alg->rs(a->b, &a->grp, &l);
			break;
		case AHC_I_AG:
			ret = alg->ag(a->b, &a->grp, &l);
			break;
		case AHC_I_SCATTER:
			ret = alg->scatter(a->b, &a->grp, root, &l);
			break;
		case AHC_I_GATHER:
			ret = alg->gather(a->b, &a->grp, root, &l);
			break;
		}
		if (ret)
			return ret;
		kc_b_round(a->b);
	}
}

enum ahc_inter {
	AHC_X_AR,
	AHC_X_BCAST,
	AHC_X_REDUCE,
};

static void ahc_set_owner(struct kc_ahc *a, struct kc_ahc_class *cl, u32 member)
{
	u32 i;

	if (cl->owner == member)
		return;
	cl->owner = member;
	for (i = 0; i < cl->n; i++) {
		u32 h = a->cgroups[cl->first + i];

		a->ranks[h] = ahc_rank(a, h, member);
	}
}

/*
 * The inter-group stage over the region the classes have cut: for each
 * segment of my blocks, in increasing order, one inner phase among the
 * segment's logical same-index cards (member h of the phase is group h's
 * card; root is a group number).
 */
static int ahc_inter(struct kc_ahc *a, enum ahc_inter kind, u32 root)
{
	const struct kc_ahc_cut *mine = &a->cls[a->myclass].cut;
	const struct kc_algo_ops *alg = a->inter;
	struct kc_group grp = { a->ngroups, a->g, a->ranks, 0, 0 };
	u64 w, lo, hi, cur, end;
	u32 i;
	int ret = 0;

	for (w = 0; ahc_cut_block(mine, a->me, w, &lo, &hi); w++) {
		for (cur = lo; cur < hi; cur = end) {
			struct kc_region seg = mine->r;

			end = hi;
			for (i = 0; i < a->nclasses; i++) {
				u32 member;
				u64 e;

				ahc_cut_owner(&a->cls[i].cut, cur, &member, &e);
				end = kc_min_u64(end, e);
				ahc_set_owner(a, &a->cls[i], member);
			}
			seg.off += cur * a->c->esize;
			seg.count = end - cur;
			if (kind == AHC_X_AR)
				ret = alg->ar(a->b, &grp, &seg);
			else if (kind == AHC_X_BCAST)
				ret = alg->bcast(a->b, &grp, root, &seg);
			else
				ret = alg->reduce(a->b, &grp, root, &seg);
			if (ret)
				return ret;
			kc_b_round(a->b);
		}
	}
	return 0;
}

/* ------------------------------------------- the AHC of one region */

static int ahc_allreduce(struct kc_ahc *a, const struct kc_region *x)
{
	const struct kc_ahc_cut *mine = &a->cls[a->myclass].cut;

	if (!x->count)
		return 0;
	return ahc_cut_all(a, x, 0) ?: ahc_intra(a, mine, AHC_I_RS, 0) ?:
	       ahc_inter(a, AHC_X_AR, 0) ?: ahc_intra(a, mine, AHC_I_AG, 0);
}

static int ahc_bcast(struct kc_ahc *a, const struct kc_region *x, u32 h0, u32 j0)
{
	const struct kc_ahc_cut *mine = &a->cls[a->myclass].cut;
	int ret;

	if (!x->count)
		return 0;
	ret = ahc_cut_all(a, x, 0);
	if (!ret && a->g == h0)
		ret = ahc_intra(a, mine, AHC_I_SCATTER, j0);
	return ret ?: ahc_inter(a, AHC_X_BCAST, h0) ?: ahc_intra(a, mine, AHC_I_AG, 0);
}

static int ahc_reduce(struct kc_ahc *a, const struct kc_region *x, u32 h0, u32 j0)
{
	const struct kc_ahc_cut *mine = &a->cls[a->myclass].cut;
	int ret;

	if (!x->count)
		return 0;
	ret = ahc_cut_all(a, x, 0) ?: ahc_intra(a, mine, AHC_I_RS, 0) ?:
	      ahc_inter(a, AHC_X_REDUCE, h0);
	if (!ret && a->g == h0)
		ret = ahc_intra(a, mine, AHC_I_GATHER, j0);
	return ret;
}

/* The region of group h's result blocks, unit elements per member. */
static struct kc_region ahc_group_region(const struct kc_ahc *a, u32 h, u64 unit)
{
	struct kc_region r = a->c->work;

	r.off += (u64)ahc_first(a, h) * unit * a->c->esize;
	r.count = (u64)ahc_size(a, h) * unit;
	return r;
}

/*
 * With one member per group there is no intra stage, every segment of
 * every group region has the same cards (all the groups, stride apart),
 * and the regions are one block each, back to back: the G rooted phases
 * are one RS (AG) among the cards over the whole region.
 */
static bool ahc_singletons(const struct kc_ahc *a, struct kc_group *cards, struct kc_layout *l,
			   u64 unit)
{
	struct kc_region w = a->c->work;

	if (a->mmax != 1)
		return false;
	cards->size = a->ngroups;
	cards->me = a->g;
	cards->ranks = NULL;
	cards->base = a->local;
	cards->stride = a->stride;
	w.count = unit * a->ngroups;
	*l = kc_lay_even(&w, a->ngroups);
	return true;
}

static int ahc_reducescatter(struct kc_ahc *a, u64 unit)
{
	struct kc_group cards;
	struct kc_ahc_cut cut;
	struct kc_layout l;
	u32 h;
	int ret;

	if (!unit)
		return 0;
	if (ahc_singletons(a, &cards, &l, unit))
		return a->inter->rs(a->b, &cards, &l);
	for (h = 0; h < a->ngroups; h++) {
		struct kc_region r = ahc_group_region(a, h, unit);

		ret = a->s->cut(a, a->grp.size, &r, ahc_size(a, h), &cut) ?:
		      ahc_intra(a, &cut, AHC_I_RS, 0);
		if (ret)
			return ret;
	}
	for (h = 0; h < a->ngroups; h++) {
		struct kc_region r = ahc_group_region(a, h, unit);

		ret = ahc_cut_all(a, &r, ahc_size(a, h)) ?: ahc_inter(a, AHC_X_REDUCE, h);
		if (ret)
			return ret;
	}
	return 0;
}

static int ahc_allgather(struct kc_ahc *a, u64 unit)
{
	struct kc_group cards;
	struct kc_ahc_cut cut;
	struct kc_layout l;
	u32 h;
	int ret;

	if (!unit)
		return 0;
	if (ahc_singletons(a, &cards, &l, unit))
		return a->inter->ag(a->b, &cards, &l);
	for (h = 0; h < a->ngroups; h++) {
		struct kc_region r = ahc_group_region(a, h, unit);

		ret = ahc_cut_all(a, &r, ahc_size(a, h)) ?: ahc_inter(a, AHC_X_BCAST, h);
		if (ret)
			return ret;
	}
	for (h = 0; h < a->ngroups; h++) {
		struct kc_region r = ahc_group_region(a, h, unit);

		ret = a->s->cut(a, a->grp.size, &r, ahc_size(a, h), &cut) ?:
		      ahc_intra(a, &cut, AHC_I_AG, 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int ahc_run_barrier(struct kc_ahc *a, const struct kc_algo_ops *alg,
			   const struct kc_group *g)
{
	return alg->barrier_op(a->b, g);
}

static int ahc_barrier(struct kc_ahc *a)
{
	struct kc_group firsts = { a->ngroups, a->g, a->ranks, 0, 0 };
	int ret;

	/* ranks[] still holds every group's first member (ahc_classes) */
	ret = ahc_run_barrier(a, a->intra, &a->grp);
	if (!ret && !a->me)
		ret = ahc_run_barrier(a, a->inter, &firsts);
	return ret ?: ahc_run_barrier(a, a->intra, &a->grp);
}

/* ------------------------------------------------------- operations */

/* -EOPNOTSUPP with a message when an inner algorithm lacks a phase. */
static int ahc_need(const struct kc_ahc *a, const struct kc_algo_ops *alg, bool have,
		    const char *what)
{
	return have ? 0 : kc_coll_error(a->c, -EOPNOTSUPP, what, alg->name);
}

/* Refuse an operation whose inner phases are missing. */
static int ahc_check(const struct kc_ahc *a, u32 op)
{
	const struct kc_algo_ops *in = a->intra, *x = a->inter, *l0 = a->l0;
	bool rs = in->rs, ag = in->ag;
	int ret;

	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		ret = ahc_need(a, in, rs && ag, "AHC needs its rs and ag phases") ?:
		      ahc_need(a, x, x->ar, "AHC needs its ar phase");
		return ret ?: (l0 ? ahc_need(a, l0, l0->rs && l0->ag,
					     "AHC needs its rs and ag phases") : 0);
	case KCOLL_OP_REDUCESCATTER:
		ret = ahc_need(a, in, rs, "AHC needs its rs phase") ?:
		      ahc_need(a, x, x->reduce && x->rs, "AHC needs its reduce and rs phases");
		return ret ?: (l0 ? ahc_need(a, l0, l0->rs, "AHC needs its rs phase") : 0);
	case KCOLL_OP_ALLGATHER:
		ret = ahc_need(a, in, ag, "AHC needs its ag phase") ?:
		      ahc_need(a, x, x->bcast && x->ag, "AHC needs its bcast and ag phases");
		return ret ?: (l0 ? ahc_need(a, l0, l0->ag, "AHC needs its ag phase") : 0);
	case KCOLL_OP_BROADCAST:
		ret = ahc_need(a, in, in->scatter && ag, "AHC needs its scatter and ag phases") ?:
		      ahc_need(a, x, x->bcast, "AHC needs its bcast phase");
		return ret ?: (l0 ? ahc_need(a, l0, l0->scatter && l0->ag,
					     "AHC needs its scatter and ag phases") : 0);
	case KCOLL_OP_REDUCE:
		ret = ahc_need(a, in, rs && in->gather, "AHC needs its rs and gather phases") ?:
		      ahc_need(a, x, x->reduce, "AHC needs its reduce phase");
		return ret ?: (l0 ? ahc_need(a, l0, l0->rs && l0->gather,
					     "AHC needs its rs and gather phases") : 0);
	case KCOLL_OP_BARRIER:
		ret = ahc_need(a, in, in->barrier_op, "AHC needs its barrier phase") ?:
		      ahc_need(a, x, x->barrier_op, "AHC needs its barrier phase");
		return ret ?: (l0 ? ahc_need(a, l0, l0->barrier_op,
					     "AHC needs its barrier phase") : 0);
	}
	return kc_coll_error(a->c, -EOPNOTSUPP, NULL, kc_algo_name(a->s->algo));
}

/* The level0 layout of the whole region over my server, and my block of it. */
static struct kc_layout ahc_l0_layout(const struct kc_ahc *a, struct kc_region *mine)
{
	struct kc_layout l = kc_lay_even(&a->c->work, a->stride);

	*mine = kc_lay_block_region(&l, a->c->esize, a->local);
	return l;
}

/* My server's part of a per-rank region, cut into its ranks' blocks. */
static struct kc_layout ahc_l0_server(const struct kc_ahc *a)
{
	struct kc_region r = a->c->work;
	u64 n = a->c->op->count;

	r.off += (u64)a->l0g.base * n * a->c->esize;
	r.count = (u64)a->stride * n;
	return kc_lay_even(&r, a->stride);
}

static int ahc_op_allreduce(struct kc_ahc *a)
{
	struct kc_builder *b = a->b;
	struct kc_region x;
	struct kc_layout l;

	if (!a->l0)
		return ahc_allreduce(a, &a->c->work);
	l = ahc_l0_layout(a, &x);
	return a->l0->rs(b, &a->l0g, &l) ?: ahc_allreduce(a, &x) ?: a->l0->ag(b, &a->l0g, &l);
}

/* Top-down, as HCCL: AHC among the planes first, then inside servers. */
static int ahc_op_reducescatter(struct kc_ahc *a)
{
	struct kc_layout l;
	int ret;

	ret = ahc_reducescatter(a, a->c->op->count * a->stride);
	if (ret || !a->l0)
		return ret;
	l = ahc_l0_server(a);
	return a->l0->rs(a->b, &a->l0g, &l);
}

/* Bottom-up: inside servers first, then AHC among the planes. */
static int ahc_op_allgather(struct kc_ahc *a)
{
	struct kc_layout l;
	int ret = 0;

	if (a->l0) {
		l = ahc_l0_server(a);
		ret = a->l0->ag(a->b, &a->l0g, &l);
	}
	return ret ?: ahc_allgather(a, a->c->op->count * a->stride);
}

static int ahc_op_broadcast(struct kc_ahc *a)
{
	u32 root = a->c->op->root, h0, j0;
	struct kc_region x;
	struct kc_layout l;
	int ret = 0;

	ahc_locate(a, root, &h0, &j0);
	if (!a->l0)
		return ahc_bcast(a, &a->c->work, h0, j0);
	l = ahc_l0_layout(a, &x);
	if (root - a->l0g.base < a->stride)
		ret = a->l0->scatter(a->b, &a->l0g, root - a->l0g.base, &l);
	return ret ?: ahc_bcast(a, &x, h0, j0) ?: a->l0->ag(a->b, &a->l0g, &l);
}

static int ahc_op_reduce(struct kc_ahc *a)
{
	u32 root = a->c->op->root, h0, j0;
	struct kc_region x;
	struct kc_layout l;
	int ret;

	ahc_locate(a, root, &h0, &j0);
	if (!a->l0)
		return ahc_reduce(a, &a->c->work, h0, j0);
	l = ahc_l0_layout(a, &x);
	ret = a->l0->rs(a->b, &a->l0g, &l) ?: ahc_reduce(a, &x, h0, j0);
	if (!ret && root - a->l0g.base < a->stride)
		ret = a->l0->gather(a->b, &a->l0g, root - a->l0g.base, &l);
	return ret;
}

/*
 * Inside servers first: then the first card of a plane's groups knows
 * that every server entered, and the AHC barrier spreads that.
 */
static int ahc_op_barrier(struct kc_ahc *a)
{
	int ret = 0;

	if (a->l0)
		ret = ahc_run_barrier(a, a->l0, &a->l0g);
	return ret ?: ahc_barrier(a);
}

/* "AHC 2 groups 2+3 L=6 slices=12", for explain. */
static void ahc_note(const struct kc_ahc *a, bool whole)
{
	char *n = a->b->plan->note;
	u32 len = KC_PLAN_MAX_NOTE, pos, h;

	pos = (u32)kc_snprintf(n, len, "%s %u groups ", a->s->name, a->ngroups);
	if (a->nclasses == 1) {
		pos += (u32)kc_snprintf(n + pos, len - pos, "of %u", a->mmin);
	} else if (a->ngroups <= 8) {
		for (h = 0; h < a->ngroups && pos < len; h++)
			pos += (u32)kc_snprintf(n + pos, len - pos, "%s%u", h ? "+" : "",
						ahc_size(a, h));
	} else {
		pos += (u32)kc_snprintf(n + pos, len - pos, "of %u..%u", a->mmin, a->mmax);
	}
	if (a->l0 && pos < len)
		pos += (u32)kc_snprintf(n + pos, len - pos, " (planes of %u)", a->stride);
	if (pos < len)
		a->s->note(a, whole, n + pos, len - pos);
}

int kc_ahc_build(struct kc_builder *b, const struct kc_coll_ctx *c, const struct kc_ahc_scheme *s)
{
	struct kc_ahc a;
	u32 op = c->op->op;
	int ret;

	/*
	 * One rank has no groups and no level: its plan is the driver's
	 * level-less composition (only AlltoAll has a step, its local copy),
	 * whatever the algorithm.
	 */
	if (c->topo->nranks == 1)
		return kc_hier_build(b, c);
	ret = ahc_init(&a, b, c, s);
	if (!ret)
		ret = ahc_check(&a, op);
	if (ret)
		goto out;
	b->plan->algo[KCOLL_LEVEL1] = s->algo;
	if (c->topo->npods > 1)
		b->plan->algo[KCOLL_LEVEL2] = s->algo;
	if (a.l0)
		b->plan->algo[KCOLL_LEVEL0] = a.l0id;
	ahc_note(&a, op != KCOLL_OP_REDUCESCATTER && op != KCOLL_OP_ALLGATHER);
	kc_b_round(b);
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		ret = ahc_op_allreduce(&a);
		break;
	case KCOLL_OP_REDUCESCATTER:
		ret = ahc_op_reducescatter(&a);
		break;
	case KCOLL_OP_ALLGATHER:
		ret = ahc_op_allgather(&a);
		break;
	case KCOLL_OP_BROADCAST:
		ret = ahc_op_broadcast(&a);
		break;
	case KCOLL_OP_REDUCE:
		ret = ahc_op_reduce(&a);
		break;
	default:
		ret = ahc_op_barrier(&a);
		break;
	}
	kc_b_round(b);
out:
	kc_free(a.cls);
	return ret;
}

/* ------------------------------------------------------- cost model */

/*
 * AHC's cost, as alg_ahc_core.c builds it: NHR inside the groups, a Ring phase
 * among the G logical same-index cards of every segment, segment after
 * segment.  A member of a group of m owns n/m of the exchanged region and
 * about T/m segments, T the distinct block boundaries of all groups
 * (inclusion-exclusion over up to 3 distinct sizes; their sum beyond).
 * AHC_BROKE: blocks of n/m_min, one segment, larger groups' extra members
 * idle in the inter stage.
 */
/*
 * Blocks of n/m on the critical path of NHR's ReduceScatter (and of its
 * mirror, the AllGather) over s members of which only 0..m-1 own one,
 * AHC_BROKE's cut in a group larger than the smallest (m).  In step k,
 * h = 2^k, a member sends the slices at distances h, 3h, 5h, ... < s
 * below it; the busiest one sends as many of [0, m) as a window of m
 * consecutive members holds of those points on the circle of s, which
 * are 2h apart but across the wrap.  s - 1 when m = s, the even case.
 * It equals a count over every member for all s < 200, and against the
 * simulator it replaces, for AllReduce, a charge of (s - 1)/s n that was
 * up to 34% low (3+9 one-rank pods) and, for Broadcast and Reduce, a rule
 * of thumb, m + ceil(log2 s) - 2 blocks, up to 10% high (4+8).
 */
static u64 kc_cost_nhr_uneven(u64 s, u64 m)
{
	u64 v = 0, h, n, gap, k;

	if (m >= s)
		return s - 1;	/* every distance 1..s-1 is h times an odd number once */
	for (h = 1; h < s; h <<= 1) {
		n = (s - 1 + h) / (2 * h);
		gap = s - 2 * h * (n - 1);	/* from the last point, h + 2h(n-1), round to h */
		k = (m - 1) / (2 * h) + 1;
		if (n >= 2 && gap <= m - 1)
			k = kc_max_u64(k, (m - 1 - gap) / (2 * h) + 2);
		v += kc_min_u64(n, k);
	}
	return v;
}

/* Units (ranks, or servers for planes) of AHC group h (alg_ahc_core.h). */
u64 kc_ahc_units(const struct kc_topo *t, u32 h, bool pods, u32 stride)
{
	u64 s = pods ? t->server_first[t->pod_first[h + 1]] - t->server_first[t->pod_first[h]] :
		kc_topo_server_size(t, h);

	return s / stride;
}

/*
 * Intra phases a member of a group of s runs for ReduceScatter and
 * AllGather: one per group's region (AHC), or ceil(m_h / s) windows of
 * per-rank blocks per region of m_h blocks (AHC_BROKE), each followed by
 * that many inter-group Ring phases, one per block it owns.
 */
static u64 kc_cost_ahc_windows(const struct kc_topo *t, u32 algo, u64 s, u32 G, bool pods,
			       u32 stride)
{
	u64 w = 0;
	u32 h;

	if (algo != KCOLL_ALGO_AHC_BROKE)
		return G;
	for (h = 0; h < G; h++)
		w += (kc_ahc_units(t, h, pods, stride) + s - 1) / s;
	return w;
}

/*
 * AHC_BROKE's ReduceScatter and AllGather deal each group's region, m_h
 * blocks of n / units, to the s members of every group in windows of s:
 * a member of a group of s moves s - 1 blocks in NHR's phases over a full
 * window and kc_cost_nhr_uneven(s, w) over a last one of w.  Charged
 * (s - 1)/s n as one even cut, and the inter Ring (G - 1)/mmin n where
 * member 0 of the smallest group owns ceil(m_h / mmin) blocks of every
 * region, both were 17% low on 2+3 pods.
 */
static u64 kc_cost_broke_rsag_blocks(const struct kc_topo *t, u64 s, u32 G, bool pods,
				     u32 stride)
{
	u64 b = 0, mh;
	u32 h;

	for (h = 0; h < G; h++) {
		mh = kc_ahc_units(t, h, pods, stride);
		b += mh / s * (s - 1);
		if (mh % s)
			b += kc_cost_nhr_uneven(s, mh % s);
	}
	return b;
}

u64 kc_ahc_cost(const struct kc_topo *t, const struct kc_cost_model *m, u32 algo, u32 op, u64 n,
		const u32 *l0algo)
{
	u32 sz[3] = { 0 }, nsz = 0, G, h, i, stride = 1, intra_lv, inter_lv;
	struct kc_cost_link in, x;
	u64 T, c = 0, worst_in = 0, worst_x = 0, sum = 0, mmin = U32_MAX, s0, root_in = 0;
	u64 g = 0, units = 0, wmin;
	bool pods = t->npods > 1, planes = pods && t->server_size > 1;
	bool broke = algo == KCOLL_ALGO_AHC_BROKE;
	bool rooted = op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE;
	bool around = rooted || op == KCOLL_OP_ALLREDUCE;

	if (!(op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_REDUCESCATTER ||
	      op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE))
		return KC_COST_INF;
	G = pods ? t->npods : t->nservers;
	if (G < 2)
		return KC_COST_INF;
	if (planes) {
		struct kc_cost_lv l0 = { .size = t->server_size, .cfg = KCOLL_LEVEL0,
					 .link = kc_cost_level_link(m, KCOLL_LEVEL0) };

		/* the stage inside servers that alg_ahc_core.c puts around the planes */
		u32 down = op == KCOLL_OP_ALLGATHER ? KCOLL_OP_ALLGATHER :
			   op == KCOLL_OP_BROADCAST ? KCOLL_OP_SCATTER : KCOLL_OP_REDUCESCATTER;
		u32 up = op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_BROADCAST ? KCOLL_OP_ALLGATHER :
			 op == KCOLL_OP_REDUCE ? KCOLL_OP_GATHER : KC_NOOP;

		stride = t->server_size;
		if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) {
			/*
			 * HCCL: RS among the planes first, AG last, on all
			 * n, so a server's blocks stay contiguous; inside the
			 * server only its own n / S.  Priced as AllReduce's
			 * order (n / k among the planes) it was half the
			 * simulator on 8+16 x8.
			 */
			c = kc_cost_pick(*l0algo, op, KC_NOOP, n / t->nservers, &l0, NULL);
		} else {
			c = kc_cost_pick(*l0algo, down, up, n, &l0, NULL);
			n /= stride;
		}
	}
	intra_lv = pods ? KCOLL_LEVEL1 : KCOLL_LEVEL0;
	inter_lv = pods ? KCOLL_LEVEL2 : KCOLL_LEVEL1;
	s0 = kc_ahc_units(t, 0, pods, stride);
	in = kc_cost_level_link(m, intra_lv);
	x = kc_cost_level_link(m, inter_lv);
	for (h = 0; h < G; h++) {
		u64 s = kc_ahc_units(t, h, pods, stride);

		mmin = kc_min_u64(mmin, s);
		g = kc_gcd(g, s);
		units += s;
		for (i = 0; i < nsz && sz[i] != s; i++)
			;
		if (i == nsz) {
			if (nsz < ARRAY_SIZE(sz))
				sz[nsz] = (u32)s;
			nsz++;
			sum += s;
		}
	}
	if (nsz == 1)
		T = sz[0];
	else if (nsz == 2)
		T = (u64)sz[0] + sz[1] - kc_gcd(sz[0], sz[1]);
	else if (nsz == 3)
		T = (u64)sz[0] + sz[1] + sz[2] - kc_gcd(sz[0], sz[1]) - kc_gcd(sz[0], sz[2]) -
		    kc_gcd(sz[1], sz[2]) + kc_gcd(kc_gcd(sz[0], sz[1]), sz[2]);
	else
		T = sum;
	wmin = kc_cost_ahc_windows(t, algo, mmin, G, pods, stride);
	for (h = 0; h < nsz && h < ARRAY_SIZE(sz); h++) {
		/* n / own: the bytes of one inter-stage chain (see below) */
		u64 s = sz[h], own = broke ? mmin : around ? g : s;
		u64 seg = broke ? 1 : (T + s - 1) / s;
		u64 win = 1, xa = seg * (G - 1), ci, cx, bn, bd, ag;
		u64 red = op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_BROADCAST ? 0 : 1;

		if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER) {
			win = kc_cost_ahc_windows(t, algo, s, G, pods, stride);
			/*
			 * AHC_BROKE: one inter Ring phase per block owned,
			 * each G - 1 hops long, one after the other: they
			 * overlap but for the first one's hops.  AHC: the
			 * same in each of the G group regions, one after the
			 * other, each cut by every group alike: T / s
			 * segments in each.
			 */
			if (broke)
				xa = win + G - 2;
			else
				xa = G * (seg + G - 2);
		}
		bn = s - 1;
		bd = s;
		if (broke && around) {
			/* only mmin members hold a block, n / mmin */
			bn = kc_cost_nhr_uneven(s, mmin);
			bd = mmin;
		} else if (broke) {
			bn = kc_cost_broke_rsag_blocks(t, s, G, pods, stride);
			bd = units;
		}
		ci = kc_abg(&in, win * kc_cost_log_alphas(s, in.window), n, bn, bd, red * bn, bd);
		/*
		 * The scatter (gather) runs in the root's group: root 0's, no
		 * reduction; AllReduce's AllGather in every group, no
		 * reduction either (charging it the RS's put AllReduce
		 * 8-10% above the simulator at 64 MiB).
		 */
		ag = kc_abg(&in, kc_cost_log_alphas(s, in.window), n, bn, bd, 0, 1);
		if (s == s0)
			root_in = ag;
		if (op == KCOLL_OP_ALLREDUCE)
			ci = kc_cost_add(ci, ag);
		/*
		 * AHC's inter stage: every card walks its segments in order
		 * and a segment waits for all of its G cards, so groups of
		 * coprime sizes chain every segment of the region one after
		 * the other; the chain breaks only where every group has a
		 * block boundary, every n / gcd of the sizes.  Simulated for
		 * 2..4 groups of 2..16: AllReduce is exactly the Ring's
		 * 2 (G-1)/G of n / gcd; Broadcast and Reduce overlap the
		 * rounds of consecutive segments only in part, 1, 11/6 and
		 * 2.31 times n / gcd for G = 2, 3, 4, which
		 * 2 (G-1)/G + (G-2)/(G-1) gives within 6%.
		 */
		if (op == KCOLL_OP_ALLREDUCE)
			cx = kc_abg(&x, seg * 2 * (G - 1), n, 2 * (G - 1), (u64)G * own,
				    G - 1, (u64)G * own);
		else if (!broke && rooted)
			cx = kc_abg(&x, xa, n, 2 * (G - 1) * (G - 1) + (u64)G * (G - 2),
				    (u64)G * (G - 1) * own, red * (G - 1), own);
		else if (broke && !rooted)
			cx = kc_abg(&x, xa, n, (G - 1) * wmin, units, red * (G - 1) * wmin, units);
		else
			cx = kc_abg(&x, xa, n, G - 1, own, red * (G - 1), own);
		worst_in = kc_max_u64(worst_in, ci);
		worst_x = kc_max_u64(worst_x, cx);
	}
	/*
	 * AllReduce, Broadcast, Reduce run an intra stage on both sides
	 * (AllReduce's are both in ci); the rooted one (scatter, gather)
	 * only in the root's group.
	 */
	if (rooted)
		worst_in = kc_cost_add(worst_in, root_in);
	return kc_cost_add(c, kc_cost_add(worst_in, worst_x));
}

/*
 * May selection rank @algo (AHC or AHC_BROKE) for @op on @t by
 * kc_ahc_cost()?  Always for AllReduce, Broadcast and Reduce.  For
 * ReduceScatter and AllGather only where the model holds: AHC on two
 * pods, the smaller dividing the larger, with every cut of a region exact;
 * AHC_BROKE on two groups, or more whose sizes divide the largest
 * (Documentation/algorithms.md, "How automatic selection chooses").
 */
bool kc_ahc_auto_ok(const struct kc_topo *t, const struct kc_op_desc *op, u32 algo)
{
	bool pods = t->npods > 1;
	u32 g, ng = pods ? t->npods : t->nservers, big = 0, sz, all = 0;
	/* on pods a unit is a server, k ranks: the planes' AHC moves k counts per unit */
	u32 k = pods ? t->server_size : 1;
	u64 count;

	if (op->op == KCOLL_OP_ALLREDUCE || op->op == KCOLL_OP_BROADCAST ||
	    op->op == KCOLL_OP_REDUCE)
		return true;
	if (!k || (algo == KCOLL_ALGO_AHC && t->npods != 2))
		return false;
	count = op->count * k;
	for (g = 0; g < ng; g++) {
		sz = (u32)kc_ahc_units(t, g, pods, k);
		big = sz > big ? sz : big;
		all = (u32)kc_gcd(all, sz);
	}
	for (g = 0; g < ng; g++) {
		sz = (u32)kc_ahc_units(t, g, pods, k);
		/* AHC_BROKE: exact on any two groups, on more where sizes divide */
		if (!sz || (big % sz && (algo == KCOLL_ALGO_AHC || ng > 2)))
			return false;
		/* AHC: every cut exact (the largest size is their LCM) */
		if (algo == KCOLL_ALGO_AHC && (count % big) * all % big)
			return false;
	}
	return true;
}
