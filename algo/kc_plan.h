/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The plan: what one rank sends, receives, reduces and copies for one
 * collective operation, as a list of steps grouped into rounds.
 *
 * Buffers are named, not pointed to (KC_BUF_*); offsets and lengths are
 * bytes.  Steps of one round may run concurrently; a round starts when
 * every step of the previous round has completed locally.  Generators
 * place a send and the receive that matches it in the same phase, and the
 * k-th send from rank A to rank B matches the k-th receive on B from A,
 * so plans compose phase by phase without global round numbers.
 *
 * Plans are compact: an O(p)-step phase is not written out step by step
 * but as a repeat (see struct kc_prog), a body of steps whose peer and
 * block advance by a stride at every iteration.  plan->steps holds these
 * records; everything that reads a plan walks its expansion, round by
 * round, with the iterators at the end of this file, so the expansion is
 * never stored.
 */
#ifndef KC_PLAN_H
#define KC_PLAN_H

#include "kc_port.h"
#include "../uapi/linux/kcoll.h"

enum kc_buf {
	KC_BUF_SEND = 0,	/* the user's send buffer (read only) */
	KC_BUF_RECV = 1,	/* the user's receive buffer */
	KC_BUF_SCRATCH = 2,	/* plan-private memory, plan->scratch_bytes */
	KC_BUF_COUNT
};

enum kc_step_kind {
	KC_STEP_SEND = 0,	/* send buf[off, off+len) to peer */
	KC_STEP_RECV,		/* receive len bytes from peer into buf[off] */
	KC_STEP_RECV_REDUCE,	/* receive and reduce into buf[off] */
	KC_STEP_COPY,		/* buf[off] = sbuf[soff], len bytes */
	KC_STEP_REDUCE,		/* buf[off] op= sbuf[soff], len bytes */
	KC_STEP_AVG,		/* buf[off] /= nranks (final step of AVG) */
	KC_STEP_KIND_COUNT,
	/*
	 * Record only, never in an expansion: the next len records are the
	 * body of a repeat run peer (the count) times.  With KC_STEP_F_ROUNDS
	 * the header and its body are a round of their own and every
	 * iteration is a round; otherwise the iterations follow each other
	 * inside the round that holds the header.
	 */
	KC_STEP_REPEAT = 15,
};

/* A zero-length send/receive that still travels: barriers. */
#define KC_STEP_F_SYNC	0x1
/* A transfer in a repeat body: soff is the index of its struct kc_prog. */
#define KC_STEP_F_PROG	0x2
/* A repeat header whose iterations are rounds. */
#define KC_STEP_F_ROUNDS 0x4

struct kc_step {
	u8 kind;
	u8 buf;
	u8 sbuf;
	u8 flags;
	u32 peer;	/* index into plan->peers once finalized */
	u64 off;
	u64 len;
	u64 soff;
};

/*
 * How a transfer of a repeat body changes from iteration to iteration.
 * In iteration i its peer is rank gbase + m * gstride with member
 * m = (m0 + i * dm) mod gsize (ranks[m] while building from a group given
 * as a list; such repeats are always written out), and its range is block
 * (b0 + i * db) mod nblocks of layout (off, count, nslices, spb): block b
 * covers slices [b * spb, (b + 1) * spb) of count elements cut into
 * nslices slices, the first count % nslices one element longer.  Nothing
 * is stored per iteration: a block of length zero is a step that does not
 * exist, as in an explicit plan, and a round left empty is no round.
 *
 * Two refinements for Bruck's AlltoAll, whose steps move the blocks with
 * one bit of their index set (runs with gaps between them) between two
 * copies of the index space chosen by the parity of the lower bits:
 * with run != 0 the blocks advance in runs, block
 * b0 + (i / run) * dbo + (i % run) * db; with pmask != 0 a block b with
 * an odd number of bits in b & pmask lies in the copy at alt_off rather
 * than off (both copies share the layout).
 */
struct kc_prog {
	const u32 *ranks;	/* the group's rank list; only while building */
	u32 gbase;
	u32 gstride;
	u32 gsize;
	u32 m0;
	u32 dm;		/* member stride, already reduced mod gsize */
	u32 esize;
	u64 off;	/* layout region: byte offset and element count */
	u64 count;
	u32 nslices;
	u32 spb;
	u32 b0;
	u32 db;		/* block stride, already reduced mod nblocks */
	u32 run;	/* iterations per run of blocks, 0: no runs */
	u32 dbo;	/* block stride from run to run, reduced mod nblocks */
	u32 pmask;	/* parity of b & pmask odd: the copy at alt_off */
	u64 alt_off;
};

/* The note: a builder's shape after why configured algorithms did not run. */
#define KC_PLAN_MAX_NOTE 160

struct kc_plan {
	struct kc_step *steps;	/* records: steps, repeat headers, repeat bodies */
	u32 nsteps;		/* records, not expanded steps */
	u32 steps_cap;
	u32 *round_start;	/* record round i: [round_start[i], round_start[i+1]) */
	u32 nrounds;		/* record rounds, not expanded rounds */
	u32 rounds_cap;
	struct kc_prog *progs;	/* indexed by the soff of KC_STEP_F_PROG steps */
	u32 nprogs;
	u32 progs_cap;
	u32 *peers;		/* distinct peer ranks, ascending; step->peer indexes it */
	u32 npeers;
	u64 scratch_bytes;
	u32 rank;
	u32 nranks;
	u32 op;
	u32 dtype;
	u32 redop;
	u32 esize;
	u32 algo[KCOLL_LEVEL_COUNT];	/* algorithm used per level (0 = unused) */
	/*
	 * Bit l: the algorithm configured for level l (kc_algo_cfg.conf, or
	 * algo where the caller set it) did not run there, although the
	 * topology has the level; note says what ran instead and why.
	 */
	u32 fallback;
	char note[KC_PLAN_MAX_NOTE];	/* human-readable, for explain and observers */
};

void kc_plan_free(struct kc_plan *plan);

/* Bytes this rank sends / receives in total (for tests and the simulator). */
u64 kc_plan_bytes_sent(const struct kc_plan *plan);
u64 kc_plan_bytes_received(const struct kc_plan *plan);

/**
 * kc_plan_writes_buf() - whether a plan writes one of its buffers
 * @plan: the plan
 * @buf: enum kc_buf
 *
 * Return: true when any step of any round has @buf as its destination
 * (receive, receive-reduce, copy, reduce, average); false when the plan
 * only reads @buf or does not use it, so that it may be read-only memory.
 */
bool kc_plan_writes_buf(const struct kc_plan *plan, u8 buf);

/* ------------------------------------------------------------ walking */

/*
 * An expanded round: record round rec, iteration iter of its repeat (0
 * when the round is not a repeat of rounds).  kc_plan_round_first() and
 * kc_plan_round_next() visit the rounds that have at least one step, in
 * order; they return false past the last one.
 */
struct kc_round_it {
	u32 rec;
	u32 iter;
};

bool kc_plan_round_first(const struct kc_plan *plan, struct kc_round_it *r);
bool kc_plan_round_next(const struct kc_plan *plan, struct kc_round_it *r);

/*
 * The steps of one expanded round, in order, empty ones skipped.  The
 * step written to *out has every field final: peer is an index into
 * plan->peers (or a global rank before kc_plan_finalize_peers()).
 */
struct kc_step_it {
	u32 rec;	/* next record */
	u32 end;	/* end of the round's records */
	u32 iter;	/* iteration of a ROUNDS repeat */
	u32 rep_first;	/* body of the step repeat being walked, or U32_MAX */
	u32 rep_end;
	u32 rep_iter;
	u32 rep_count;
};

void kc_plan_steps_begin(const struct kc_plan *plan, const struct kc_round_it *r,
			 struct kc_step_it *it);
bool kc_plan_step_next(const struct kc_plan *plan, struct kc_step_it *it, struct kc_step *out);

/*
 * Every expanded step of a plan, round after round: the one loop over a
 * whole plan.  kc_plan_walk_next() writes the next step to *out, and in
 * w->round the index of its round among the non-empty ones; false past
 * the last step.
 */
struct kc_plan_walk {
	struct kc_round_it r;
	struct kc_step_it it;
	u32 round;
	bool more;	/* r is a round still to walk */
};

void kc_plan_walk_begin(const struct kc_plan *plan, struct kc_plan_walk *w);
bool kc_plan_walk_next(const struct kc_plan *plan, struct kc_plan_walk *w, struct kc_step *out);

/* Expanded steps and non-empty rounds of a plan (walks the whole plan). */
void kc_plan_expanded_size(const struct kc_plan *plan, u64 *nsteps, u32 *nrounds);

/* Plan memory in bytes: records, rounds, progressions and peers. */
u64 kc_plan_mem_bytes(const struct kc_plan *plan);

#endif /* KC_PLAN_H */
