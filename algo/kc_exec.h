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
 * The first message of an operation to each peer (message sequence 0, an
 * empty SYNC message included) also carries the operation's header
 * (KC_HDR_*): what this rank's caller asked for, as the peer must have
 * asked for it too.  The receiver compares it with its own before it
 * consumes anything from that peer; any difference (operation, element
 * type, reduce operation, root, count, or the pair's AlltoAllv count) ends
 * the operation with -EPROTO.  Ranks that disagree never exchange data,
 * so none of them can complete with a result built from another's
 * arguments: every rank that completes holds what it would hold had every
 * rank passed its own arguments.
 *
 * A compact plan is expanded one round at a time: the executor holds the
 * steps of the current round, per-peer state, and the messages in flight
 * and held (window per peer), never the whole expansion.
 */
#ifndef KC_EXEC_H
#define KC_EXEC_H

#include "kc_plan.h"

/*
 * The header of the first message of an operation to each peer: 32 bytes,
 * little-endian, at the start of the message, before the data.
 *
 *   offset size
 *    0     1    version   KC_HDR_VERSION
 *    1     1    size      KC_HDR_BYTES
 *    2     1    op        enum kcoll_op
 *    3     1    dtype     enum kcoll_dtype; 0 for Barrier
 *    4     1    redop     enum kcoll_redop (AVG is not SUM); 0 unless the op reduces
 *    5     3    reserved  0
 *    8     4    root      0 unless the op is rooted
 *   12     4    opnum     the operation's number in its communicator
 *                         (struct kc_exec_cfg.op_num, low 32 bits)
 *   16     8    count     elements (struct kc_op_desc.count); 0 for Barrier;
 *                         AlltoAllv: the pair's count, scounts[receiver] as
 *                         the sender writes it, rcounts[sender] as the
 *                         receiver expects it
 *   24     3    algo      enum kcoll_algo of the plan per level, 0: the
 *                         level is not used by this rank's plan
 *   27     5    reserved  0
 *
 * The receiver compares the header with the one it would have sent (a
 * version or size it does not know is a difference like any other); an
 * algorithm byte counts only where both ranks use the level, since a rank
 * alone on its server plans no level-0 step while its peers do.  The
 * reserved bytes are for later versions: a new field there changes
 * KC_HDR_VERSION unless zero keeps meaning what it meant.  A rank that
 * finds a difference keeps the peer's header (struct kc_exec.bad_hdr), so
 * that its owner can say who called what.
 */
#define KC_HDR_VERSION		2
#define KC_HDR_BYTES		32u
#define KC_HDR_OFF_VERSION	0
#define KC_HDR_OFF_SIZE		1
#define KC_HDR_OFF_OP		2
#define KC_HDR_OFF_DTYPE	3
#define KC_HDR_OFF_REDOP	4
#define KC_HDR_OFF_ROOT		8
#define KC_HDR_OFF_OPNUM	12
#define KC_HDR_OFF_COUNT	16
#define KC_HDR_OFF_ALGO		24

struct kc_op_desc;

struct kc_xport_ops {
	/*
	 * Send one message to rank peer: hdr_len bytes of hdr (0, or
	 * KC_HDR_BYTES on the first message of the operation to the peer),
	 * then len bytes of data (buf + off).  The receiver gets them as one
	 * message of hdr_len + len bytes (at most chunk_bytes + KC_HDR_BYTES:
	 * receive slots hold that much).  hdr is valid during the call only;
	 * its bytes are not the plan's (not in bytes_sent; time-only
	 * transports do not charge them, like the tag).  The transport
	 * reports completion with kc_exec_send_done(), in posting order per
	 * peer, once the receiver has consumed the message (its slot was
	 * released): this is the credit that bounds the window.
	 */
	int (*send)(void *ctx, u32 peer, u32 tag, const void *hdr, u32 hdr_len, u8 buf, u64 off,
		    const void *data, u32 len);
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
	/*
	 * Rounded down to a multiple of 8, at least 8, at most
	 * U32_MAX - KC_HDR_BYTES (a message and its header fit in 32 bits).
	 */
	u32 chunk_bytes;
	u32 window;		/* at least 1 */
	u8 op_seq;
	u32 op_num;		/* the operation's number, for the header */
	u32 flags;		/* KC_EXEC_F_* */
	/*
	 * The operation as this rank's caller described it (the plan was
	 * built from it), for the header; it must outlive the executor.
	 * Required unless KC_EXEC_F_NODATA: then NULL means a header of the
	 * plan's op, dtype and reduce op with root and count 0 (the
	 * simulator runs bare plans).
	 */
	const struct kc_op_desc *desc;
};

/*
 * Move no data and touch no buffer (bufs may all be NULL): the simulator
 * runs plans of any size for their timing only.  Only the header of a
 * first message is read (data points at it; otherwise data may be NULL).
 */
#define KC_EXEC_F_NODATA	0x1
/*
 * No header: first messages carry no fingerprint and none is checked,
 * so that a disagreement between ranks goes unnoticed.  For measuring
 * what the fingerprint costs (the module's tunable fingerprint=0); every
 * rank of a communicator must run the same way.
 */
#define KC_EXEC_F_NOHDR		0x2

/* A message tag: operation sequence number (8 bits), message sequence (24 bits). */
#define KC_TAG_SEQ_MASK		0xffffffu
#define KC_TAG(op_seq, seq)	(((u32)(op_seq) << 24) | ((seq) & KC_TAG_SEQ_MASK))

/* The operation sequence number of @tag. */
static inline u8 kc_tag_op_seq(u32 tag)
{
	return (u8)(tag >> 24);
}

/* The per-peer message sequence number of @tag. */
static inline u32 kc_tag_msg_seq(u32 tag)
{
	return tag & KC_TAG_SEQ_MASK;
}

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
	u64 bytes_sent;		/* data only, headers not counted */
	u64 bytes_received;
	/*
	 * Events that moved the operation: messages arrived, credits
	 * returned, peers that left.  Unchanged for a while: it is stuck.
	 */
	u64 progress;
	/* the first peer whose header differed, U32_MAX while none did */
	u32 bad_peer;
	u8 bad_hdr[KC_HDR_BYTES];	/* ... and what it sent */
};

/*
 * The header of the first message between this rank (running @plan, built
 * from @desc; NULL: see struct kc_exec_cfg) and rank @peer: the one it
 * sends there (@to_peer) or the one it expects from there.
 */
void kc_hdr_fill(u8 hdr[KC_HDR_BYTES], const struct kc_plan *plan, const struct kc_op_desc *desc,
		 u32 op_num, u32 peer, bool to_peer);
/* Whether header @got is what a rank expecting @want may accept. */
bool kc_hdr_same(const u8 want[KC_HDR_BYTES], const u8 got[KC_HDR_BYTES]);

/*
 * Prepare to run @plan with buffers bufs[KC_BUF_*] (unused ones may be
 * NULL).  Returns 0 or -ENOMEM / -EINVAL (no cfg->desc without
 * KC_EXEC_F_NODATA, among others).
 */
int kc_exec_init(struct kc_exec *ex, const struct kc_plan *plan, void *const bufs[KC_BUF_COUNT],
		 const struct kc_exec_cfg *cfg, const struct kc_xport_ops *ops, void *ctx);
/* Run local steps and post the first sends.  Returns the status. */
int kc_exec_start(struct kc_exec *ex);
/* The oldest outstanding message to @peer was consumed.  Returns the status. */
int kc_exec_send_done(struct kc_exec *ex, u32 peer);
/*
 * A message from @peer arrived in @slot: all of it, header included (@len
 * counts the header's bytes).  The first message from @peer is checked
 * at once, whether or not this rank's plan expects one from @peer (its
 * header must be what this rank would have sent: else -EPROTO, with
 * bad_peer and bad_hdr set).  The executor consumes the data now or when its round comes,
 * then releases the slot.  Returns the status.
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
/*
 * Whether the running operation still waits for rank @peer: a message to
 * send or to receive, or a credit for one it sent.  No side effect: for a
 * rank that another one says is gone, while its connection still stands.
 */
bool kc_exec_needs(const struct kc_exec *ex, u32 peer);
/*
 * Whether rank @peer's leaving would end the operation even once @more of
 * its messages, arrived and not delivered yet, were: something still to
 * send to it, or more to receive.  No side effect.
 */
bool kc_exec_lacks(const struct kc_exec *ex, u32 peer, u32 more);
/* End the operation with @err (a peer vanished, a timeout, ...). */
int kc_exec_fail(struct kc_exec *ex, int err);

static inline int kc_exec_status(const struct kc_exec *ex)
{
	return ex->status;
}

/* What a running operation waits for: enum kc_wait_kind of kc_exec_waiting(). */
enum kc_wait_kind {
	KC_WAIT_NONE = 0,	/* nothing (not running, or between events) */
	KC_WAIT_RECV = 1,	/* a message from the peer that has not arrived */
	KC_WAIT_CREDIT = 2,	/* the peer has not consumed a message sent to it */
};

/*
 * What the operation waits for, the first in the current round's plan
 * order: a receive whose next message (per-peer sequence *@msg_seq) has
 * not arrived from rank *@peer, else the oldest send to *@peer whose
 * credit has not come back.  *@round is the current round.  Returns the
 * kind (KC_WAIT_NONE, *@peer U32_MAX, when the status is not
 * -EINPROGRESS or nothing is outstanding).
 */
u32 kc_exec_waiting(const struct kc_exec *ex, u32 *peer, u32 *msg_seq, u32 *round);

/* Release held slots and memory.  Safe after any status. */
void kc_exec_destroy(struct kc_exec *ex);

#endif /* KC_EXEC_H */
