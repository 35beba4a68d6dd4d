/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What algorithm generators use to write plans: the builder (append
 * steps, close rounds, reserve scratch), groups of ranks, and block
 * layouts of a buffer region.
 *
 * Generators never check allocation failures step by step: the builder
 * records the first error and ignores later appends; kc_build_finish()
 * reports it.
 */
#ifndef KC_BUILD_H
#define KC_BUILD_H

#include "kc_plan.h"

struct kc_sendmap;

struct kc_builder {
	struct kc_plan *plan;
	int err;
	u32 round_open;		/* steps appended since the last round close */
	u64 scratch_top;	/* bump allocator over KC_BUF_SCRATCH */
	u32 esize;
	u32 chunk_elems;	/* pipelining granularity hint, elements (>= 1) */
	bool explicit;		/* write every repeat out step by step */
	bool rep_open;		/* a repeat is open: rep_* describe it */
	u32 rep_hdr;		/* record of its header */
	u32 rep_prog0;		/* plan->nprogs when it opened */
	u32 rep_round_open;	/* round_open when it opened */
	bool rep_expand;	/* the open repeat cannot stay compact */
	struct kc_sendmap *sendmap;	/* in-place ReduceScatter (kc_coll.c), or NULL */
};

/*
 * The send buffer of an in-place ReduceScatter, as the builder sees it
 * while b->sendmap is set.  Generators work on KC_BUF_SEND as on any
 * region; the builder takes every operand on it as the byte range it
 * spans (a repeat's transfer: the hull of all its iterations) and either
 * records the range and whether the step writes it (collect), or, when
 * the range lies in [lo, hi), moves the operand to the copy of [lo, hi)
 * at scratch offset scr.  An operand is seen once, when it is appended or
 * its repeat's transfer is written, so a compact build and a written-out
 * one see the same operands.  kc_coll.c chooses [lo, hi) between the two
 * passes of a build.
 */
struct kc_send_span {
	u64 lo;
	u64 hi;
	bool write;
};

struct kc_sendmap {
	bool collect;
	struct kc_send_span *spans;	/* collect: every operand on KC_BUF_SEND */
	u32 nspans;
	u32 cap;
	u64 lo;		/* map: the range kept in scratch ... */
	u64 hi;
	u64 scr;	/* ... at this scratch offset */
};

/* Append steps to the current round. */
void kc_b_send(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len);
void kc_b_recv(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len);
void kc_b_recv_reduce(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len);
void kc_b_sync_send(struct kc_builder *b, u32 peer);
void kc_b_sync_recv(struct kc_builder *b, u32 peer);
void kc_b_copy(struct kc_builder *b, u8 dbuf, u64 doff, u8 sbuf, u64 soff, u64 len);
void kc_b_avg(struct kc_builder *b, u8 buf, u64 off, u64 len);
/*
 * The one difference between mirrored phases (Scatter and Gather, or the
 * passes of ReduceScatter and AllGather): the direction of a transfer, or
 * whether a receive reduces.  Phases written once use these.
 */
static inline void kc_b_xfer(struct kc_builder *b, bool send, u32 peer, u8 buf, u64 off, u64 len)
{
	if (send)
		kc_b_send(b, peer, buf, off, len);
	else
		kc_b_recv(b, peer, buf, off, len);
}

static inline void kc_b_recv_into(struct kc_builder *b, bool reduce, u32 peer, u8 buf, u64 off,
				  u64 len)
{
	if (reduce)
		kc_b_recv_reduce(b, peer, buf, off, len);
	else
		kc_b_recv(b, peer, buf, off, len);
}

/*
 * Repeats, for phases of O(p) steps: kc_b_rep_begin(b, n, rounds), the
 * body (kc_b_rep_xfer() transfers, whose peer and block advance at every
 * iteration), kc_b_rep_end().  The body runs n times: each iteration a
 * round of its own when rounds is true (the current round is closed
 * first), or one after the other in the current round.  In iteration i
 * the transfer talks to member m0 + i * dm of g and moves block
 * b0 + i * db of l (both modulo their size; l NULL: a SYNC transfer).
 * The expansion is exactly the steps the body would give if written out
 * n times with kc_b_send() and friends, empty transfers and empty rounds
 * dropped alike; the builder writes it out itself when it cannot keep it
 * compact (a group given as a rank list with dm != 0, |dm| > 1) or when
 * b->explicit asks it to.  Repeats do not nest.
 */
struct kc_group;
struct kc_layout;
void kc_b_rep_begin(struct kc_builder *b, u32 n, bool rounds);
void kc_b_rep_xfer(struct kc_builder *b, u8 kind, const struct kc_group *g, u32 m0, s64 dm,
		   const struct kc_layout *l, u32 b0, s64 db);
/*
 * The blocks of a body transfer that moves blocks in runs, alternating
 * between two copies of its layout (see struct kc_prog): iteration i moves
 * block b0 + (i / run) * dbo + (i % run) * db, found at alt_off instead of
 * the layout's own offset when b & pmask has an odd number of bits.
 */
struct kc_blockwalk {
	u32 b0;
	s64 db;
	u32 run;	/* 0: one run, block b0 + i * db */
	s64 dbo;
	u32 pmask;	/* 0: one copy, at the layout's offset */
	u64 alt_off;
};

void kc_b_rep_xfer_walk(struct kc_builder *b, u8 kind, const struct kc_group *g, u32 m0,
			s64 dm, const struct kc_layout *l, const struct kc_blockwalk *w);
void kc_b_rep_end(struct kc_builder *b);

/* Close the current round (no-op when it is empty). */
void kc_b_round(struct kc_builder *b);
/* Reserve @bytes of scratch (8-byte aligned); returns its offset. */
u64 kc_b_scratch(struct kc_builder *b, u64 bytes);
/* Record an error (first one wins); returns it for convenience. */
int kc_b_fail(struct kc_builder *b, int err);
/* Turn global peer ranks of a finished plan into indices of plan->peers. */
int kc_plan_finalize_peers(struct kc_plan *p);

/* ------------------------------------------------------------- groups */

/*
 * An ordered set of ranks that run one phase together.  Member i is global
 * rank ranks[i], or base + i * stride when ranks is NULL.  me is this
 * rank's member index.
 */
struct kc_group {
	u32 size;
	u32 me;
	const u32 *ranks;
	u32 base;
	u32 stride;
};

static inline u32 kc_grp_rank(const struct kc_group *g, u32 i)
{
	return g->ranks ? g->ranks[i] : g->base + i * g->stride;
}

/* Member index i shifted by d around the group (d may be negative). */
static inline u32 kc_grp_mod(const struct kc_group *g, s64 i)
{
	s64 n = g->size;
	s64 r = i % n;

	return (u32)(r < 0 ? r + n : r);
}

/* ------------------------------------------------------------- regions */

/* count elements at byte offset off of buffer buf */
struct kc_region {
	u8 buf;
	u64 off;
	u64 count;
};

/*
 * A region cut into nslices slices as evenly as possible (the first
 * count % nslices slices get one element more), and into blocks of spb
 * consecutive slices: block i is slices [i * spb, (i + 1) * spb).  Plain
 * layouts have spb = 1; AHC uses spb > 1 to give groups of different sizes
 * a common slicing.
 */
struct kc_layout {
	struct kc_region r;
	u32 nslices;
	u32 spb;
};

struct kc_range {
	u64 off;	/* bytes, absolute in the buffer */
	u64 len;	/* bytes */
};

/* Element index where slice s of a uniform partition of count into n starts. */
static inline u64 kc_slice_start(u64 count, u32 n, u32 s)
{
	u64 q = count / n, r = count % n;

	return s * q + (s < r ? s : r);
}

static inline struct kc_range kc_lay_slices(const struct kc_layout *l, u32 esize, u32 s0, u32 s1)
{
	u64 a = kc_slice_start(l->r.count, l->nslices, s0);
	u64 z = kc_slice_start(l->r.count, l->nslices, s1);
	struct kc_range rg = { l->r.off + a * esize, (z - a) * esize };

	return rg;
}

static inline struct kc_range kc_lay_block(const struct kc_layout *l, u32 esize, u32 i)
{
	return kc_lay_slices(l, esize, i * l->spb, (i + 1) * l->spb);
}

static inline u32 kc_lay_nblocks(const struct kc_layout *l)
{
	return l->nslices / l->spb;
}

/* The plain layout of a region into n blocks. */
static inline struct kc_layout kc_lay_even(const struct kc_region *r, u32 n)
{
	struct kc_layout l = { *r, n, 1 };

	return l;
}

/* Block i of a layout as a region of its own (for nested phases). */
static inline struct kc_region kc_lay_block_region(const struct kc_layout *l, u32 esize, u32 i)
{
	struct kc_range rg = kc_lay_block(l, esize, i);
	struct kc_region r = { l->r.buf, rg.off, rg.len / esize };

	return r;
}

static inline u64 kc_region_bytes(const struct kc_region *r, u32 esize)
{
	return r->count * esize;
}

/*
 * Per-member send and receive ranges of an all-to-all phase: member i
 * gets send[i] from me and I get recv[i] from member i.  The entry for me
 * is a local copy.  send and recv ranges are in sbuf and rbuf.
 */
struct kc_a2a {
	u8 sbuf;
	u8 rbuf;
	bool uniform;	/* AlltoAll: every range has the same length on every member */
	const struct kc_range *send;	/* [group size] */
	const struct kc_range *recv;	/* [group size] */
};

/* ------------------------------------------------------------- repeats */

/* Peer rank and byte range of a body transfer in iteration i. */
static inline void kc_prog_at(const struct kc_prog *g, u32 i, u32 *rank, u64 *off, u64 *len)
{
	u32 nb = g->nslices / g->spb;
	u32 m = (u32)(((u64)g->m0 + (u64)i * g->dm) % g->gsize);
	u64 bi = g->run ? (u64)(i / g->run) * g->dbo % nb + (u64)(i % g->run) * g->db % nb :
		 (u64)i * g->db % nb;
	u32 blk = (u32)((g->b0 + bi) % nb);
	u64 a = kc_slice_start(g->count, g->nslices, blk * g->spb);
	u64 z = kc_slice_start(g->count, g->nslices, (blk + 1) * g->spb);
	bool alt = g->pmask && (kc_hweight32(blk & g->pmask) & 1);

	*rank = g->ranks ? g->ranks[m] : g->gbase + m * g->gstride;
	*off = (alt ? g->alt_off : g->off) + a * g->esize;
	*len = (z - a) * g->esize;
}

/* Index of rank in the ascending plan->peers (it is there by construction). */
static inline u32 kc_plan_peer_index(const struct kc_plan *plan, u32 rank)
{
	u32 lo = 0, hi = plan->npeers;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (plan->peers[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The n ranges rg[] as the blocks of one layout of buf, if they are that:
 * equal lengths (whole elements), each starting where the previous ends.
 * AlltoAll phases then write their O(p) transfers as repeats.
 */
bool kc_ranges_layout(const struct kc_range *rg, u32 n, u8 buf, u32 esize, struct kc_layout *l);

#endif /* KC_BUILD_H */
