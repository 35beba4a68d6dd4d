/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The executor: one event-driven state machine that walks any plan over
 * any transport.  It has no thread and never blocks; its owner feeds it
 * events (a send completed, a message arrived, an error) and reads the
 * status.  The owner serializes calls on one executor.
 *
 * Transfers are cut into messages of at most chunk_bytes; at most window
 * messages per peer are unacknowledged at a time, and the transport must
 * hold at least window receive slots per peer.  A message carries a 32-bit
 * tag: the operation sequence number (8 bits) and the per-peer message
 * sequence number (24 bits), checked on arrival so a plan mismatch between
 * ranks is an error (-EPROTO), never silent corruption.
 *
 * A compact plan is expanded one round at a time: the executor holds the
 * steps of the current round, per-peer state, and the messages in flight
 * and held (window per peer), never the whole expansion.
 */
#ifndef KC_EXEC_H
#define KC_EXEC_H

#include "kc_plan.h"

struct kc_xport_ops {
	/*
	 * Send len bytes (data, which is buf + off) to rank peer.  The
	 * transport reports completion with kc_exec_send_done(), in posting
	 * order per peer, once the receiver has consumed the message (its slot
	 * was released): this is the credit that bounds the window.
	 */
	int (*send)(void *ctx, u32 peer, u32 tag, u8 buf, u64 off, const void *data, u32 len);
	/* Give back a receive slot delivered with kc_exec_recv(). */
	void (*release)(void *ctx, u32 peer, void *slot);
	/*
	 * Optional (may be NULL): the executor just did len bytes of local
	 * work of step kind KC_STEP_*: a message from rank peer copied or
	 * reduced, or (peer == U32_MAX) a local copy, reduce or average.
	 * Time-only transports charge it.
	 */
	void (*work)(void *ctx, u32 peer, u8 kind, u64 len);
};

struct kc_exec_cfg {
	u32 chunk_bytes;	/* rounded down to a multiple of 8, at least 8 */
	u32 window;		/* at least 1 */
	u8 op_seq;
	u32 flags;		/* KC_EXEC_F_* */
};

/*
 * Move no data and touch no buffer (bufs may all be NULL): the simulator
 * runs plans of any size for their timing only.
 */
#define KC_EXEC_F_NODATA	0x1

#define KC_TAG(op_seq, seq)	(((u32)(op_seq) << 24) | ((seq) & 0xffffffu))

struct kc_exec_step;
struct kc_exec_peer;

struct kc_exec {
	const struct kc_plan *plan;
	const struct kc_xport_ops *ops;
	void *ctx;
	u8 *bufs[KC_BUF_COUNT];
	struct kc_exec_cfg cfg;
	int status;		/* -EINPROGRESS, 0, or the first error */
	u32 round;		/* index of the current (non-empty, expanded) round */
	bool entered;		/* the current round's local steps ran */
	bool more;		/* rit is a round still to run */
	u32 pending;		/* transfers of the current round not complete */
	struct kc_round_it rit;	/* the current round in the plan */
	struct kc_exec_step *st;	/* [st_cap]: the current round, expanded */
	u32 nst;
	u32 st_cap;		/* the largest round of the plan */
	struct kc_exec_peer *pe;	/* [npeers] */
	void *mem;
	u64 bytes_sent;
	u64 bytes_received;
};

/*
 * Prepare to run @plan with buffers bufs[KC_BUF_*] (unused ones may be
 * NULL).  Returns 0 or -ENOMEM / -EINVAL.
 */
int kc_exec_init(struct kc_exec *ex, const struct kc_plan *plan, void *const bufs[KC_BUF_COUNT],
		 const struct kc_exec_cfg *cfg, const struct kc_xport_ops *ops, void *ctx);
/* Run local steps and post the first sends.  Returns the status. */
int kc_exec_start(struct kc_exec *ex);
/* The oldest outstanding message to @peer was consumed.  Returns the status. */
int kc_exec_send_done(struct kc_exec *ex, u32 peer);
/*
 * A message from @peer arrived in @slot.  The executor consumes it now or
 * when its round comes, then releases the slot.  Returns the status.
 */
int kc_exec_recv(struct kc_exec *ex, u32 peer, u32 tag, const void *data, u32 len, void *slot);
/*
 * Rank @peer has left: nothing more will come from it and nothing can go
 * to it.  Call it once the transport has delivered (kc_exec_recv) all that
 * did arrive.  The operation goes on if it needs nothing more of @peer (a
 * rank that finished first and closed); the credits it still owed count as
 * given.  Otherwise the operation ends with @err.  Returns the status.
 */
int kc_exec_peer_gone(struct kc_exec *ex, u32 peer, int err);
/* End the operation with @err (a peer vanished, a timeout, ...). */
int kc_exec_fail(struct kc_exec *ex, int err);

static inline int kc_exec_status(const struct kc_exec *ex)
{
	return ex->status;
}

/* Release held slots and memory.  Safe after any status. */
void kc_exec_destroy(struct kc_exec *ex);

#endif /* KC_EXEC_H */
