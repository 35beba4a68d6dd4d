/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One collective operation run end to end on the threaded transport and
 * checked bit for bit against a straightforward reference.
 *
 * Inputs are made so that any reduction order gives the same bits
 * (small integers in the mantissa, as nccl-tests does); data-movement
 * operations get pseudo-random bytes so a misplaced block cannot hide.
 */
#ifndef KC_TW_CASE_H
#define KC_TW_CASE_H

#include "kc_coll.h"
#include "tw.h"

struct tc_case {
	const struct kc_topo *topo;
	struct kc_op_desc op;
	struct kc_algo_cfg cfg;
	u32 chunk_bytes;
	u32 window;
	u32 kill_rank;		/* fault: this rank dies ... */
	u64 kill_after;		/* ... after this many sends (0: no fault) */
	u32 iters;		/* timed repetitions (out of place only); 0 = 1 */
	/*
	 * Ranks that disagree: with alt set, rank alt_first and, with
	 * alt_every != 0, every alt_every-th rank after it run *alt instead
	 * of op; their AlltoAllv sends to one peer (tc_a2av_alter()) change
	 * by a2av_delta elements.  The case passes when at least one rank
	 * fails (-EPROTO, or -ECONNRESET / -ETIMEDOUT after a peer did) and
	 * every rank that succeeds holds what it would hold had every rank
	 * passed its own arguments: the others' inputs made as its own
	 * arguments say, its own counts and root.
	 */
	const struct kc_op_desc *alt;
	u32 alt_first;
	u32 alt_every;
	s64 a2av_delta;
};

enum tc_result {
	TC_PASS = 0,
	TC_FAIL,		/* wrong data, bad status, corrupted guard */
	TC_BUILD_ERROR,		/* kc_plan_build failed; see build_err */
};

struct tc_outcome {
	enum tc_result result;
	int build_err;
	int status[4];		/* first statuses seen, for fault tests */
	u32 nfailed_ranks;
	u32 neproto, nreset, ntimedout;	/* failed ranks by status */
	u64 nwrong;		/* wrong elements, summed over ranks */
	double usec;		/* mean time of one run, microseconds */
	char why[256];
};

/* Run @c on world @w (its size must be the topology's rank count). */
void tc_run(struct tw_world *w, const struct tc_case *c, struct tc_outcome *out);

/* Describe a case in one line, for failure reports. */
void tc_describe(const struct tc_case *c, char *buf, size_t len);

/* Fill per-peer AlltoAllv counts/displacements of rank me (arrays [p]). */
void tc_a2av_layout(u32 p, u32 me, u64 scale, u64 *scounts, u64 *sdispls, u64 *rcounts,
		    u64 *rdispls);

/*
 * Change what rank me sends to one peer by delta elements (the first
 * peer after me with at least 1 - delta elements), keeping a one-element
 * gap between blocks.  Returns the peer, or U32_MAX when none fits.
 */
u32 tc_a2av_alter(u32 p, u32 me, s64 delta, u64 *scounts, u64 *sdispls);

/* Does rank r run c->alt? */
bool tc_uses_alt(const struct tc_case *c, u32 r);

#endif
