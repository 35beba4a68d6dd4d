// SPDX-License-Identifier: GPL-2.0
/*
 * Mesh: every pair of members is directly connected, so each
 * phase talks to all peers at once and takes one round.  RS and AG move
 * one block per link; AllReduce is RS + AG, Broadcast is Scatter + AG and
 * Reduce is RS + Gather (2 rounds each); Scatter, Gather, AlltoAll and
 * Barrier are one round each.
 *
 * Within a round a member lists its peers starting from its right
 * neighbour (me + 1, me + 2, ...), so that on a real fabric the members do
 * not all start with the same destination.
 */
#include "kc_algo.h"
#include "kc_cost.h"

/* The j-th peer of this member in its round order, 1 <= j < size. */
static u32 mesh_peer_idx(const struct kc_group *g, u32 j)
{
	return kc_grp_mod(g, (s64)g->me + j);
}

/* A layout must have one block per member for the block phases. */
static bool mesh_bad_layout(const struct kc_group *g, const struct kc_layout *l)
{
	return !l->spb || l->nslices % l->spb || kc_lay_nblocks(l) != g->size ||
	       g->me >= g->size;
}

/*
 * One round: block j goes to member j, and every peer's block me is
 * reduced into mine.  The p - 1 arrivals into block me are reduced one at
 * a time by the executor, so they may share a round.  Peer j = me + 1 +
 * i of the repeat, and the block sent, move by one per iteration.
 */
static int mesh_rs(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	u32 first;

	if (mesh_bad_layout(g, l))
		return kc_b_fail(b, -EINVAL);
	first = mesh_peer_idx(g, 1);
	kc_b_rep_begin(b, g->size - 1, false);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, first, 1, l, first, 1);
	kc_b_rep_xfer(b, KC_STEP_RECV_REDUCE, g, first, 1, l, g->me, 0);
	kc_b_rep_end(b);
	kc_b_round(b);
	return 0;
}

/* One round: my block to every peer, block j from member j. */
static int mesh_ag(struct kc_builder *b, const struct kc_group *g, const struct kc_layout *l)
{
	u32 first;

	if (mesh_bad_layout(g, l))
		return kc_b_fail(b, -EINVAL);
	first = mesh_peer_idx(g, 1);
	kc_b_rep_begin(b, g->size - 1, false);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, first, 1, l, g->me, 0);
	kc_b_rep_xfer(b, KC_STEP_RECV, g, first, 1, l, first, 1);
	kc_b_rep_end(b);
	kc_b_round(b);
	return 0;
}

static int mesh_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	int ret;

	ret = mesh_rs(b, g, &l);
	if (ret)
		return ret;
	return mesh_ag(b, g, &l);
}

/*
 * One round: the root sends block j straight to member j (Scatter), or
 * every member sends its block straight to the root (Gather).
 */
static int mesh_rooted(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l, bool scatter)
{
	if (mesh_bad_layout(g, l) || root >= g->size)
		return kc_b_fail(b, -EINVAL);
	if (g->me == root) {
		u32 first = mesh_peer_idx(g, 1);

		kc_b_rep_begin(b, g->size - 1, false);
		kc_b_rep_xfer(b, scatter ? KC_STEP_SEND : KC_STEP_RECV, g, first, 1, l, first, 1);
		kc_b_rep_end(b);
	} else {
		struct kc_range rg = kc_lay_block(l, b->esize, g->me);

		kc_b_xfer(b, !scatter, kc_grp_rank(g, root), l->r.buf, rg.off, rg.len);
	}
	kc_b_round(b);
	return 0;
}

static int mesh_scatter(struct kc_builder *b, const struct kc_group *g, u32 root,
			const struct kc_layout *l)
{
	return mesh_rooted(b, g, root, l, true);
}

static int mesh_gather(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_layout *l)
{
	return mesh_rooted(b, g, root, l, false);
}

/*
 * Broadcast = Scatter + AllGather: the root's link to each peer
 * carries n / p instead of n, and the peers complete the rest among
 * themselves in a second round.
 */
static int mesh_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	int ret;

	ret = mesh_scatter(b, g, root, &l);
	if (ret)
		return ret;
	return mesh_ag(b, g, &l);
}

/* Reduce = ReduceScatter + Gather. */
static int mesh_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_region *r)
{
	struct kc_layout l = kc_lay_even(r, g->size);
	int ret;

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	ret = mesh_rs(b, g, &l);
	if (ret)
		return ret;
	return mesh_gather(b, g, root, &l);
}

/* One round: send[j] to member j and recv[j] from member j, for every peer j. */
static int mesh_a2a(struct kc_builder *b, const struct kc_group *g, const struct kc_a2a *a)
{
	struct kc_layout ls, lr;
	u32 j;

	if (g->me >= g->size)
		return kc_b_fail(b, -EINVAL);
	if (kc_ranges_layout(a->send, g->size, a->sbuf, b->esize, &ls) &&
	    kc_ranges_layout(a->recv, g->size, a->rbuf, b->esize, &lr)) {
		u32 first = mesh_peer_idx(g, 1);

		kc_b_rep_begin(b, g->size - 1, false);
		kc_b_rep_xfer(b, KC_STEP_SEND, g, first, 1, &ls, first, 1);
		kc_b_rep_xfer(b, KC_STEP_RECV, g, first, 1, &lr, first, 1);
		kc_b_rep_end(b);
		kc_b_round(b);
		return 0;
	}
	for (j = 1; j < g->size; j++) {
		u32 i = mesh_peer_idx(g, j);

		kc_b_send(b, kc_grp_rank(g, i), a->sbuf, a->send[i].off, a->send[i].len);
		kc_b_recv(b, kc_grp_rank(g, i), a->rbuf, a->recv[i].off, a->recv[i].len);
	}
	kc_b_round(b);
	return 0;
}

/* One round of sync messages to and from every peer. */
static int mesh_barrier(struct kc_builder *b, const struct kc_group *g)
{
	u32 first = mesh_peer_idx(g, 1);

	kc_b_rep_begin(b, g->size - 1, false);
	kc_b_rep_xfer(b, KC_STEP_SEND, g, first, 1, NULL, 0, 0);
	kc_b_rep_xfer(b, KC_STEP_RECV, g, first, 1, NULL, 0, 0);
	kc_b_rep_end(b);
	kc_b_round(b);
	return 0;
}

/* Mesh.  Through one port (levels 1, 2) the p - 1 transfers share it. */
static u64 mesh_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	u64 f = port ? p - 1 : 1;	/* bandwidth terms scale by the sharing */

	switch (op) {
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		return kc_abg(l, 1, n, f, p, 0, 1);
	case KCOLL_OP_REDUCESCATTER:
		return kc_abg(l, 1, n, f, p, p - 1, p);
	case KCOLL_OP_ALLREDUCE:
	case KCOLL_OP_REDUCE:
		return kc_abg(l, 2, n, 2 * f, p, p - 1, p);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, 2, n, 2 * f, p, 0, 1);
	case KCOLL_OP_BARRIER:
		return kc_abg(l, 1, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/* Scatter and Gather on a merged level: priced as the binomial tree's sends. */
static bool mesh_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	(void)n;
	(void)cache;
	return kc_cost_spread_slow(l, op, KC_COST_BINOMIAL, x, d);
}

KC_ALGO_DECLARE(mesh);

const struct kc_algo_ops kc_alg_mesh = {
	.id = KCOLL_ALGO_MESH,
	.name = "mesh",
	.hccl = "fullmesh",
	.aliases = (const char *const[]){ "mesh", NULL },
	.label = "mesh",
	.rs = mesh_rs,
	.ag = mesh_ag,
	.ar = mesh_ar,
	.bcast = mesh_bcast,
	.reduce = mesh_reduce,
	.scatter = mesh_scatter,
	.gather = mesh_gather,
	.a2a = mesh_a2a,
	.barrier_op = mesh_barrier,
	.cost = mesh_cost,
	.slow = mesh_slow,
	.auto_rank = 1,
	.auto_port_measured = true,
};
