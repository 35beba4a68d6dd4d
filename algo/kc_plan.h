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
	KC_STEP_KIND_COUNT
};

/* A zero-length send/receive that still travels: barriers. */
#define KC_STEP_F_SYNC	0x1

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

#define KC_PLAN_MAX_NOTE 96

struct kc_plan {
	struct kc_step *steps;
	u32 nsteps;
	u32 steps_cap;
	u32 *round_start;	/* round i: steps [round_start[i], round_start[i+1]) */
	u32 nrounds;
	u32 rounds_cap;
	u32 *peers;		/* distinct peer ranks, indexed by step->peer */
	u32 npeers;
	u64 scratch_bytes;
	u32 rank;
	u32 nranks;
	u32 op;
	u32 dtype;
	u32 redop;
	u32 esize;
	u32 algo[KCOLL_LEVEL_COUNT];	/* algorithm used per level (0 = unused) */
	char note[KC_PLAN_MAX_NOTE];	/* human-readable shape, for explain */
};

void kc_plan_free(struct kc_plan *plan);

/* Bytes this rank sends / receives in total (for tests and the simulator). */
u64 kc_plan_bytes_sent(const struct kc_plan *plan);
u64 kc_plan_bytes_received(const struct kc_plan *plan);

#endif /* KC_PLAN_H */
