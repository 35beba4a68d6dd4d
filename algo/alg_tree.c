// SPDX-License-Identifier: GPL-2.0
/*
 * Double binary tree (NCCL src/graph/trees.cc; Documentation/algorithms.md).
 *
 * Tree 1 is NCCL's bit-pattern binary tree over positions 0..n-1 rooted at
 * 0: a position's parent comes from its lowest set bit, odd positions are
 * leaves, and 0 has the single child 2^floor(log2(n - 1)).  Its depth is
 * ceil(log2(n)).  Every phase schedules a member by its depth d in a tree
 * of depth D, so a send and its matching receive sit in the same round
 * index on both members:
 *
 *   up (reduce):   piece t arrives from the children in round t + D - d - 1
 *                  and leaves for the parent in round t + D - d;
 *   down (bcast):  piece t arrives from the parent in round s + t + d - 1
 *                  and leaves for the children in round s + t + d (s = D
 *                  in AllReduce, where the root sends piece t down right
 *                  after reducing it, and 0 in Broadcast).
 *
 * With np pieces per half that is np + 2D - 1 rounds for AllReduce,
 * np + D - 1 for Broadcast and Reduce, and 2D for the barrier (tree 1 up
 * and down with empty messages).
 *
 * A member never sends a piece in the round it is still receiving it, and
 * in AllReduce the down sweep of piece t reaches a member (round
 * t + D + d - 1) only after it sent t up (round t + D - d), so no round
 * sends and receives overlapping ranges.  Each tree carries one half of
 * the region, cut into pieces of b->chunk_elems elements (one piece when
 * the builder does not pipeline).  Both trees run in the same rounds; a
 * round lists tree 1's steps before tree 2's on every member, which keeps
 * the per-pair FIFO order when two members are linked in both trees.
 *
 * AllReduce uses NCCL's double tree: tree 2 is tree 1 mirrored
 * (m -> p - 1 - m) when p is even or shifted (m -> m - 1) when p is odd,
 * so a leaf of one tree is internal in the other.
 *
 * Broadcast and Reduce work in virtual ranks v = (m - root) mod p and put
 * the root on top of both trees, so no extra round feeds a second root.
 * Tree 1 is the bit tree over v.  Tree 2 is the bit tree over v shifted by
 * one among the non-root members (v -> v - 1, and v = 1 wraps to p - 1),
 * with the root kept at position 0: odd v, leaves of tree 1, become
 * internal in tree 2 and even v become leaves.  For odd p that is exactly
 * complementary; for even p member v = 1 is a leaf of both (tree 1 has p/2
 * leaves but only p/2 - 1 internal places besides the root).  Both trees
 * have depth ceil(log2(p)).
 *
 * RS, AG, Scatter, Gather and AlltoAll are NULL: a tree moves whole
 * vectors towards or away from one root, and NCCL offers Tree for
 * AllReduce only; there is no per-member block a tree would route.
 */
#include "kc_algo.h"
#include "kc_cost.h"

#define TREE_MAX_PIECES 1024

/* How a tree sits on the group: the bit-tree position of virtual rank v. */
enum tree_map {
	TREE_PLAIN,	/* v */
	TREE_MIRROR,	/* p - 1 - v */
	TREE_SHIFT,	/* (v - 1) mod p */
	TREE_ROT,	/* 0 for v = 0, else v - 1 rotated over 1..p-1 (1 -> p - 1) */
};

/* One member's place in one tree, with the half of the data it carries. */
struct tree_pos {
	bool has_parent;
	bool sync;		/* barrier: zero-byte messages instead of pieces */
	u32 parent;		/* global ranks */
	u32 child[2];
	u32 nchild;
	u32 depth;		/* edges from the tree's root */
	u32 tdepth;		/* depth of the deepest member */
	u32 npieces;
	struct kc_layout pieces;
};

/* Parent of position x != 0 of the bit tree over n positions. */
static u32 bt_parent(u32 n, u32 x)
{
	u64 bit = x & (~x + 1);
	u64 up = (x ^ bit) | (bit << 1);

	return up >= n ? (u32)(x ^ bit) : (u32)up;
}

/* Children of position x; returns how many. */
static u32 bt_children(u32 n, u32 x, u32 child[2])
{
	u64 low;
	u32 k = 0;

	if (!x) {
		if (n > 1)
			child[k++] = 1u << kc_ilog2(n - 1);
		return k;
	}
	low = (x & (~x + 1)) >> 1;
	if (!low)
		return 0;
	child[k++] = (u32)(x - low);
	/* The right child is the farthest power-of-two step still in range. */
	while (low && x + low >= n)
		low >>= 1;
	if (low)
		child[k++] = (u32)(x + low);
	return k;
}

/* Depth of position x: the lowest set bit grows at every step up. */
static u32 bt_depth(u32 n, u32 x)
{
	u32 d = 0;

	while (x) {
		x = bt_parent(n, x);
		d++;
	}
	return d;
}

/*
 * Depth of the whole tree: 0's only child 2^k (k = floor(log2(n - 1)))
 * roots a subtree of height k whose left spine is complete, so the
 * deepest member is 1 + k = ceil(log2(n)) edges down.
 */
static u32 bt_height(u32 n)
{
	return kc_clog2(n);
}

static u32 tree_pos_of(u32 p, enum tree_map map, u32 v)
{
	switch (map) {
	case TREE_MIRROR:
		return p - 1 - v;
	case TREE_SHIFT:
		return v ? v - 1 : p - 1;
	case TREE_ROT:
		return v < 2 ? (v ? p - 1 : 0) : v - 1;
	default:
		return v;
	}
}

static u32 tree_v_of(u32 p, enum tree_map map, u32 x)
{
	switch (map) {
	case TREE_MIRROR:
		return p - 1 - x;
	case TREE_SHIFT:
		return x + 1 == p ? 0 : x + 1;
	case TREE_ROT:
		return x && x + 1 < p ? x + 1 : (x ? 1 : 0);
	default:
		return x;
	}
}

static u32 tree_rank(const struct kc_group *g, u32 root, u32 v)
{
	return kc_grp_rank(g, kc_grp_mod(g, (s64)v + root));
}

/* Place me in a tree; the caller sets the pieces. */
static void tree_place(struct tree_pos *tp, const struct kc_group *g, u32 root,
		       enum tree_map map)
{
	u32 p = g->size, x = tree_pos_of(p, map, kc_grp_mod(g, (s64)g->me - root));
	u32 c[2], i;

	tp->has_parent = x != 0;
	if (x)
		tp->parent = tree_rank(g, root, tree_v_of(p, map, bt_parent(p, x)));
	tp->nchild = bt_children(p, x, c);
	for (i = 0; i < tp->nchild; i++)
		tp->child[i] = tree_rank(g, root, tree_v_of(p, map, c[i]));
	tp->depth = bt_depth(p, x);
	tp->tdepth = bt_height(p);
}

/* Pieces of a half of count elements: one unless pipelining is asked for. */
static u32 tree_npieces(const struct kc_builder *b, u64 count)
{
	u64 n;

	if (!b->chunk_elems || !count)
		return 1;
	n = (count + b->chunk_elems - 1) / b->chunk_elems;
	return (u32)kc_min_u64(n, TREE_MAX_PIECES);
}

/* Tree h (0 or 1) carries half h of r, in np pieces. */
static void tree_set_half(struct tree_pos *tp, const struct kc_builder *b,
			  const struct kc_region *r, u32 h, u32 np)
{
	struct kc_layout halves = kc_lay_even(r, 2);
	struct kc_region half = kc_lay_block_region(&halves, b->esize, h);

	tp->sync = false;
	tp->npieces = np;
	tp->pieces = kc_lay_even(&half, np);
}

/* Send (or receive) piece t with peer, if t is a piece. */
static void tree_xfer(struct kc_builder *b, const struct tree_pos *tp, u32 peer, s64 t,
		      bool send, bool reduce)
{
	struct kc_range rg;

	if (t < 0 || t >= tp->npieces)
		return;
	if (tp->sync) {
		if (send)
			kc_b_sync_send(b, peer);
		else
			kc_b_sync_recv(b, peer);
		return;
	}
	rg = kc_lay_block(&tp->pieces, b->esize, (u32)t);
	if (send)
		kc_b_send(b, peer, tp->pieces.r.buf, rg.off, rg.len);
	else if (reduce)
		kc_b_recv_reduce(b, peer, tp->pieces.r.buf, rg.off, rg.len);
	else
		kc_b_recv(b, peer, tp->pieces.r.buf, rg.off, rg.len);
}

/* Round r of the sweep towards the root (reducing unless it is a barrier). */
static void tree_up(struct kc_builder *b, const struct tree_pos *tp, s64 r)
{
	s64 t = r + tp->depth - tp->tdepth;
	u32 i;

	for (i = 0; i < tp->nchild; i++)
		tree_xfer(b, tp, tp->child[i], t + 1, false, true);
	if (tp->has_parent)
		tree_xfer(b, tp, tp->parent, t, true, false);
}

/* Round r of the sweep away from the root, r counted from its start. */
static void tree_down(struct kc_builder *b, const struct tree_pos *tp, s64 r)
{
	s64 t = r - tp->depth;
	u32 i;

	if (tp->has_parent)
		tree_xfer(b, tp, tp->parent, t + 1, false, false);
	for (i = 0; i < tp->nchild; i++)
		tree_xfer(b, tp, tp->child[i], t, true, false);
}

/*
 * Run ntrees trees together: with up, the reduce sweep in rounds
 * [0, np + D - 1); with down, the broadcast sweep, which after an up sweep
 * starts at round D of each tree (its root sends piece t as soon as it
 * has reduced it).
 */
static int tree_run(struct kc_builder *b, const struct tree_pos *tp, u32 ntrees, bool up,
		    bool down)
{
	u32 k, dmax = 0, np = 0;
	s64 r, nrounds;

	for (k = 0; k < ntrees; k++) {
		dmax = tp[k].tdepth > dmax ? tp[k].tdepth : dmax;
		np = tp[k].npieces > np ? tp[k].npieces : np;
	}
	if (!dmax)
		return 0;
	nrounds = (s64)np + (up && down ? 2 * (s64)dmax : dmax) - 1;
	kc_b_round(b);
	for (r = 0; r < nrounds; r++) {
		for (k = 0; k < ntrees; k++) {
			if (up)
				tree_up(b, &tp[k], r);
			if (down)
				tree_down(b, &tp[k], up ? r - tp[k].tdepth : r);
		}
		kc_b_round(b);
	}
	return 0;
}

static int tree_ar(struct kc_builder *b, const struct kc_group *g, const struct kc_region *r)
{
	struct tree_pos tp[2];
	u32 np = tree_npieces(b, (r->count + 1) / 2);

	tree_place(&tp[0], g, 0, TREE_PLAIN);
	tree_place(&tp[1], g, 0, g->size % 2 ? TREE_SHIFT : TREE_MIRROR);
	tree_set_half(&tp[0], b, r, 0, np);
	tree_set_half(&tp[1], b, r, 1, np);
	return tree_run(b, tp, 2, true, true);
}

/* Both trees rooted at @root (see the top comment), each with a half of r. */
static void tree_rooted(struct tree_pos tp[2], struct kc_builder *b, const struct kc_group *g,
			u32 root, const struct kc_region *r)
{
	u32 np = tree_npieces(b, (r->count + 1) / 2);

	tree_place(&tp[0], g, root, TREE_PLAIN);
	tree_place(&tp[1], g, root, TREE_ROT);
	tree_set_half(&tp[0], b, r, 0, np);
	tree_set_half(&tp[1], b, r, 1, np);
}

static int tree_bcast(struct kc_builder *b, const struct kc_group *g, u32 root,
		      const struct kc_region *r)
{
	struct tree_pos tp[2];

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	tree_rooted(tp, b, g, root, r);
	return tree_run(b, tp, 2, false, true);
}

static int tree_reduce(struct kc_builder *b, const struct kc_group *g, u32 root,
		       const struct kc_region *r)
{
	struct tree_pos tp[2];

	if (root >= g->size)
		return kc_b_fail(b, -EINVAL);
	tree_rooted(tp, b, g, root, r);
	return tree_run(b, tp, 2, true, false);
}

/* Up tree 1 and back down with empty messages: 2 * depth rounds. */
static int tree_barrier(struct kc_builder *b, const struct kc_group *g)
{
	struct tree_pos tp;

	tree_place(&tp, g, 0, TREE_PLAIN);
	tp.sync = true;
	tp.npieces = 1;
	return tree_run(b, &tp, 1, true, true);
}

/* Slow sends of member v (root 0) in round r: children in another part. */
static u32 tree_slow_sends(u32 p, const u32 *part, const u8 *depth, u32 v, u32 r)
{
	static const enum tree_map maps[2] = { TREE_PLAIN, TREE_ROT };
	u32 t, i, n = 0, c[2], k;

	for (t = 0; t < 2; t++) {
		u32 x = tree_pos_of(p, maps[t], v);

		if (depth[x] != r)
			continue;
		k = bt_children(p, x, c);
		for (i = 0; i < k; i++)
			n += part[tree_v_of(p, maps[t], c[i])] != part[v];
	}
	return n;
}

/* Slow receives of member v (root 0) in round r: from a parent in another part. */
static u32 tree_slow_recvs(u32 p, const u32 *part, const u8 *depth, u32 v, u32 r)
{
	static const enum tree_map maps[2] = { TREE_PLAIN, TREE_ROT };
	u32 t, n = 0;

	for (t = 0; t < 2; t++) {
		u32 x = tree_pos_of(p, maps[t], v);

		if (x && depth[x] == r + 1)
			n += part[tree_v_of(p, maps[t], bt_parent(p, x))] != part[v];
	}
	return n;
}

/*
 * The slow time on the critical path of a Broadcast from member 0 of p
 * (tree_bcast() without pieces), in units of a half of the region at the
 * slow rate, when member v is in part[v] and only transfers between parts
 * are slow (pods on a merged level, kc_cost.c).  Round r sends every half
 * from depth r to depth r + 1; a transfer starts when both ends have
 * finished round r - 1 (rendezvous) and its sender's slow sends of the
 * round share its port, as do its receiver's slow receives (one from each
 * tree): each lasts as many halves as the busier end has.  Without the
 * receive side, 2+6 was 17% low.
 * Transfers inside a part count nothing.  Matches the simulator for every
 * layout tried (2 to 4 pods of 1 to 128), where charging min(pods, D)
 * slow rounds was off by up to a round either way.  O(p log p) time,
 * 5p bytes; -ENOMEM, or the slow halves in *halves.
 */
static int tree_bcast_slow_halves(u32 p, const u32 *part, u32 *halves)
{
	static const enum tree_map maps[2] = { TREE_PLAIN, TREE_ROT };
	u32 D = bt_height(p), r, x, t, best = 0;
	u16 *buf, *fin, *next, *tmp;
	u8 *depth;

	*halves = 0;
	if (p < 2)
		return 0;
	/* when each member finished its last round, and the same after this one */
	buf = kc_zalloc((size_t)p * (2 * sizeof(u16) + 1));
	if (!buf)
		return -ENOMEM;
	fin = buf;
	next = buf + p;
	depth = (u8 *)(buf + 2 * (size_t)p);
	for (x = 0; x < p; x++)
		depth[x] = (u8)bt_depth(p, x);
	for (r = 0; r < D; r++) {
		memcpy(next, fin, (size_t)p * sizeof(u16));
		for (x = 1; x < p; x++) {
			if (depth[x] != r + 1)
				continue;
			for (t = 0; t < 2; t++) {
				u32 a = tree_v_of(p, maps[t], bt_parent(p, x));
				u32 b = tree_v_of(p, maps[t], x);
				u32 end = fin[a] > fin[b] ? fin[a] : fin[b];

				if (part[a] != part[b]) {
					u32 snd = tree_slow_sends(p, part, depth, a, r);
					u32 rcv = tree_slow_recvs(p, part, depth, b, r);

					end += snd > rcv ? snd : rcv;
				}
				next[a] = (u16)(next[a] > end ? next[a] : end);
				next[b] = (u16)(next[b] > end ? next[b] : end);
			}
		}
		tmp = fin;
		fin = next;
		next = tmp;
	}
	for (x = 0; x < p; x++)
		best = fin[x] > best ? fin[x] : best;
	*halves = best;
	kc_free(buf);
	return 0;
}

/*
 * Double binary tree as alg_tree.c builds it, unpipelined (one
 * piece per half): D = ceil(log2 p) rounds, each moving both halves (n)
 * through the busiest port, except where the deepest level is too thin
 * to be busy.  In Broadcast that is p = 2^(D-1) + 1: its one deepest
 * member gets a half from each tree in the last round.  In Reduce, with
 * tree 2 rotated, the last round of the up sweep moves only a half
 * through every port while p <= 2^D - 3 (and p = 3).  Broadcast and
 * Reduce are exact against the simulator in conformance mode for
 * p = 2..300.  AllReduce keeps D rounds
 * up and D down; the simulator's up and down sweeps share a round, so
 * this is about one round of bandwidth high.
 */
/* Halves of n Tree's Broadcast moves on its path: 2L, 2L - 1 when the last round is thin. */
static u64 tree_bcast_halves(u64 p)
{
	u64 L = kc_clog2(p);

	return 2 * L - (p > 2 && p == (1ULL << (L - 1)) + 1);
}

static u64 tree_cost(u32 op, u64 p, u64 n, const struct kc_cost_link *l, bool port)
{
	u64 L = kc_clog2(p);
	bool thin_red = p == 3 || (p > 2 && p <= (1ULL << L) - 3);

	(void)port;
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return kc_abg(l, 2 * L, n, 2 * L, 1, L, 1);
	case KCOLL_OP_BROADCAST:
		return kc_abg(l, L, n, tree_bcast_halves(p), 2, 0, 1);
	case KCOLL_OP_REDUCE:
		if (kc_is_pow2(p))
			return kc_abg(l, L, n, L, 1, L, 1);
		/*
		 * A half is reduced in every round but one; when the last
		 * round is full, the path through it reduces only D / 2:
		 * two paths, the longer counts.
		 */
		if (thin_red)
			return kc_abg(l, L, n, 2 * L - 1, 2, 2 * L - 1, 2);
		return kc_max_u64(kc_abg(l, L, n, 2 * L - 1, 2, 2 * L - 1, 2),
				  kc_abg(l, L, n, L, 1, L, 2));
	case KCOLL_OP_BARRIER:
		return kc_abg(l, 2 * L, 0, 0, 1, 0, 1);
	}
	return KC_COST_INF;
}

/*
 * The slow halves on the critical path of Tree's Broadcast from member 0
 * of group g (tree_bcast_slow_halves()): 0 when there is no memory
 * for the walk, never otherwise on a level that spans pods.
 */
static u32 tree_topo_cache(const struct kc_topo *t, const struct kc_group *g)
{
	u32 p = g->size, j, halves = 0;
	u32 *part = kc_zalloc((size_t)p * sizeof(*part));

	if (!part)
		return 0;
	for (j = 0; j < p; j++)
		part[j] = kc_cost_member_pod(t, g, j);
	if (tree_bcast_slow_halves(p, part, &halves))
		halves = 0;
	kc_free(part);
	return halves;
}

/*
 * On a merged level: Broadcast's slow halves on its critical path (the
 * topology's walk, or a new one if that had no memory; one slow round per
 * pod when this one has none either), Reduce one slow round per pod.
 */
static bool tree_slow(const struct kc_cost_lv *l, u32 op, u64 n, u32 cache, u64 *x, u64 *d)
{
	u32 halves;

	(void)n;
	if (op == KCOLL_OP_BROADCAST) {
		halves = cache ?: tree_topo_cache(l->t, &l->g);
		if (halves) {
			*x = halves;
			*d = tree_bcast_halves(l->size);
			return true;
		}
	}
	if (op != KCOLL_OP_BROADCAST && op != KCOLL_OP_REDUCE)
		return false;
	kc_cost_rounds_slow(l, x, d);
	return true;
}

KC_ALGO_DECLARE(tree);

const struct kc_algo_ops kc_alg_tree = {
	.id = KCOLL_ALGO_TREE,
	.name = "tree",
	.hccl = "tree",
	.ar = tree_ar,
	.bcast = tree_bcast,
	.reduce = tree_reduce,
	.barrier_op = tree_barrier,
	.cost = tree_cost,
	.slow = tree_slow,
	.topo_cache = tree_topo_cache,
	.auto_rank = 7,
};
