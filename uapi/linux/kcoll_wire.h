/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: the connection handshake between module instances.
 *
 * Not an ioctl ABI: this is what two kcoll.ko instances say to each other
 * when they connect, kept here so that tools (and the tests, which play
 * impostors) can speak it.  All integers are little-endian.
 *
 * Rank r connects to every lower rank (rdma_cm, RC, port space TCP).  Each
 * node has one listener per network namespace and port (the rank table's
 * port, 0 for the module's listen_port), shared by every communicator:
 * the request names the communicator by its 128-bit id and the rank it
 * wants, and the listener hands it to that communicator or refuses it.
 *
 *   1. the connecting rank A sends struct kcoll_cm_req in the CM REQ's
 *	private data, with a fresh random nonce;
 *   2. the node of the accepting rank P looks up the communicator (id,
 *	rank P); none: it rejects with struct kcoll_cm_rej, errno ENOENT
 *	(not created yet: A retries) or ESTALE (destroyed: A gives up);
 *   3. P checks the parameters and that the request comes from the
 *	address the rank table gives for A's rank, and accepts with struct
 *	kcoll_cm_rep: its own fresh nonce and, when the communicator has a
 *	secret, the MAC that proves P knows it;
 *   4. A checks that MAC and, once connected, sends struct kcoll_auth_msg
 *	as the first message on the QP (a SEND without immediate data): the
 *	MAC that proves A knows the secret.  P takes no data before it.
 *
 * After that, data messages are SENDs with immediate data (the executor's
 * tag); the first one of every operation to each peer starts with the
 * executor's 32-byte header of the operation's arguments (KC_HDR_* in
 * algo/kc_exec.h, version KC_HDR_VERSION), which the receiver checks
 * before it takes anything else from that peer.
 *
 * Control messages (struct kcoll_ctl) are SENDs without immediate data
 * and with a payload, once the connection is up: what one module tells
 * another about the communicator outside any operation's data (why an
 * operation failed, that a rank is leaving).  Credits are SENDs without
 * immediate data and without payload.
 *
 * Both MACs are HMAC-SHA256 keyed with the secret over struct
 * kcoll_auth_input, which binds both nonces, both ranks, the parameters,
 * the communicator's id and a digest of the whole rank table; a replayed
 * message answers a nonce the other side no longer uses.  The id names
 * the communicator in the clear; only the secret proves membership.
 */
#ifndef _UAPI_LINUX_KCOLL_WIRE_H
#define _UAPI_LINUX_KCOLL_WIRE_H

#include <linux/types.h>

#define KCOLL_CM_MAGIC		0x6b636f6cU	/* "kcol" */
#define KCOLL_AUTH_MAGIC	0x6b636175U	/* "kcau" */
/*
 * 2: nonces and MACs (authentication), the data messages' operation header.
 * 3: the communicator's id and the wanted rank in the request (one
 *    listener per node), struct kcoll_cm_rej.
 * 4: header version 2 (operation number, algorithms), control messages
 *    (struct kcoll_ctl).
 * 5: KCOLL_CTL_RESET (a shrink takes a failed communicator's connection
 *    over).
 */
#define KCOLL_CM_VERSION	5

/* Bytes of a communicator's id. */
#define KCOLL_UID_BYTES		16

#define KCOLL_NONCE_BYTES	16
#define KCOLL_MAC_BYTES		32	/* HMAC-SHA256 */

/* struct kcoll_cm_req.flags, struct kcoll_cm_rep.flags */
#define KCOLL_CM_F_AUTH		0x1U	/* the communicator has a secret */
#define KCOLL_CM_F_NOFP		0x2U	/* first messages carry no header (fingerprint=0) */
#define KCOLL_CM_F_ON_NEED	0x4U	/* connects on need (connect_on_need=1) */

/**
 * struct kcoll_cm_req - private data of the connection request: 56 bytes,
 *	all that IB and RoCE carry (92 minus rdma_cm's 36-byte header)
 * @magic: KCOLL_CM_MAGIC
 * @version: KCOLL_CM_VERSION
 * @len: sizeof(struct kcoll_cm_req): the receiver sees the private data
 *	zero-padded to the transport's size
 * @slots: receive slots per peer (1..64), the same on every rank
 * @flags: KCOLL_CM_F_*
 * @uid: the communicator's id (struct kcoll_comm_create.uid)
 * @rank: the connecting rank
 * @dst: the rank it wants (several ranks of one communicator may share a
 *	node's listener)
 * @nranks: ranks of the communicator
 * @chunk_bytes: message size, the same on every rank
 * @nonce: fresh random bytes of the connecting rank
 */
struct kcoll_cm_req {
	__le32 magic;
	__u8 version;
	__u8 len;
	__u8 slots;
	__u8 flags;
	__u8 uid[KCOLL_UID_BYTES];
	__le32 rank;
	__le32 dst;
	__le32 nranks;
	__le32 chunk_bytes;
	__u8 nonce[KCOLL_NONCE_BYTES];
};

/**
 * struct kcoll_cm_rep - private data of the accept (196 bytes at most)
 * @hello: the request's fields for the accepting rank: its rank, the same
 *	parameters and flags, its own fresh nonce
 * @mac: with KCOLL_CM_F_AUTH, the accepting rank's proof (role 'P'); zero
 *	otherwise
 */
struct kcoll_cm_rep {
	struct kcoll_cm_req hello;
	__u8 mac[KCOLL_MAC_BYTES];
};

/**
 * struct kcoll_cm_rej - private data of a refusal by the node's listener
 * @magic: KCOLL_CM_MAGIC
 * @version: KCOLL_CM_VERSION
 * @err: why, a positive errno: ENOENT (no communicator of that id and
 *	rank here yet), ESTALE (it was destroyed), EPROTO (not a request
 *	this version understands), EBUSY (that rank is already connected or
 *	connecting), EACCES (parameters, address or secret do not match)
 */
struct kcoll_cm_rej {
	__le32 magic;
	__le32 version;
	__le32 err;
};

/**
 * struct kcoll_auth_msg - the connecting rank's proof, the first message
 * @magic: KCOLL_AUTH_MAGIC
 * @version: KCOLL_CM_VERSION
 * @mac: the connecting rank's proof (role 'A')
 */
struct kcoll_auth_msg {
	__le32 magic;
	__le32 version;
	__u8 mac[KCOLL_MAC_BYTES];
};

/* The label that starts every MAC input. */
#define KCOLL_AUTH_LABEL	"kcoll-auth-v3"

/**
 * struct kcoll_auth_input - what both MACs are computed over
 * @label: KCOLL_AUTH_LABEL without its NUL, zero-padded
 * @role: 'P' for the accepting rank's proof, 'A' for the connecting rank's
 * @pad: zero
 * @active_rank: the connecting rank
 * @passive_rank: the accepting rank
 * @nranks: ranks of the communicator
 * @chunk_bytes: its message size
 * @slots: its receive slots per peer
 * @uid: the communicator's id
 * @table: SHA-256 of the rank table: struct kcoll_rank (uapi/linux/kcoll.h)
 *	of every rank in rank order, each exactly as the ABI lays it out
 * @nonce_active: struct kcoll_cm_req.nonce
 * @nonce_passive: struct kcoll_cm_rep.hello.nonce
 */
struct kcoll_auth_input {
	__u8 label[16];
	__u8 role;
	__u8 pad[3];
	__le32 active_rank;
	__le32 passive_rank;
	__le32 nranks;
	__le32 chunk_bytes;
	__le32 slots;
	__u8 uid[KCOLL_UID_BYTES];
	__u8 table[32];
	__u8 nonce_active[KCOLL_NONCE_BYTES];
	__u8 nonce_passive[KCOLL_NONCE_BYTES];
};

#define KCOLL_CTL_MAGIC		0x6b63746cU	/* "kctl" */

/* struct kcoll_ctl.type */
enum kcoll_ctl_type {
	KCOLL_CTL_VERDICT = 1,	/* an operation failed: who disagreed about it */
	KCOLL_CTL_BYE = 2,	/* the sender's rank leaves with work outstanding */
	KCOLL_CTL_PEER_FAULT = 3,	/* the sender fails: a rank left during an op */
	KCOLL_CTL_PROBE = 4,	/* the sender's operation stalled: what are you doing? */
	KCOLL_CTL_REPLY = 5,	/* the answer to a probe: the sender's state */
	KCOLL_CTL_RESET = 6	/* the connection is a new communicator's from here */
};

/* KCOLL_CTL_REPLY: struct kcoll_ctl.code */
#define KCOLL_CTL_REPLY_RUNNING	0x1U	/* @other is running here */
#define KCOLL_CTL_REPLY_STOPPED	0x2U	/* the owner process is stopped (SIGSTOP) */

/*
 * KCOLL_CTL_REPLY: the le32 words of struct kcoll_ctl.fp_rank: what the
 * running operation waits for (kc_exec_waiting() of algo/kc_exec.h).
 */
#define KCOLL_CTL_W_KIND	0	/* enum kcoll_stall_wait (kcoll_genl.h) */
#define KCOLL_CTL_W_PEER	1	/* the rank it waits for, 0xffffffff none */
#define KCOLL_CTL_W_MSG		2	/* that peer's message sequence */
#define KCOLL_CTL_W_ROUND	3	/* the plan round it is in */
#define KCOLL_CTL_W_DONE	4	/* the last operation completed (low 32 bits) */
#define KCOLL_CTL_W_WORDS	5

/**
 * struct kcoll_ctl - a control message (96 bytes)
 * @magic: KCOLL_CTL_MAGIC
 * @version: KCOLL_CM_VERSION
 * @type: enum kcoll_ctl_type
 * @len: sizeof(struct kcoll_ctl)
 * @op_num: KCOLL_CTL_VERDICT: the number of the operation (low 32 bits
 *	of its id); KCOLL_CTL_BYE, KCOLL_CTL_REPLY: the last operation the
 *	rank submitted; KCOLL_CTL_PROBE: the prober's stalled operation
 * @err: the errno (positive) the operation failed with; BYE, PROBE,
 *	REPLY: zero
 * @rank: VERDICT: a rank whose header differed from @other's (its
 *	header in @fp_rank); BYE, PROBE, REPLY: the sender; PEER_FAULT: the
 *	rank whose leaving failed the sender's operation @op_num
 * @other: VERDICT: the rank that tells, with the header it expected from
 *	@rank in @fp_other; BYE, PEER_FAULT: enum kcoll_fault_kind (exit,
 *	signal, close; PEER_FAULT also lost); PROBE: the rank the sender
 *	waits for (0xffffffff: none); REPLY: the sender's active operation
 *	(low 32 bits), 0 if none
 * @pid: BYE, PEER_FAULT: @rank's process (thread group id, in its node's
 *	initial pid namespace), 0 if unknown; REPLY: the sender's process;
 *	VERDICT, PROBE: zero
 * @code: BYE, PEER_FAULT: the exit status or the signal; REPLY:
 *	KCOLL_CTL_REPLY_*; RESET: the new communicator's number of ranks;
 *	VERDICT, PROBE: zero
 * @fp_rank: VERDICT: the operation header @rank sent (KC_HDR_* of
 *	algo/kc_exec.h); REPLY: KCOLL_CTL_W_WORDS le32 words (KCOLL_CTL_W_*),
 *	then zero; RESET: the new communicator's id (KCOLL_UID_BYTES), then
 *	zero; PROBE: zero
 * @fp_other: VERDICT: the one @other would have sent; others: zero
 *
 * A rank whose operation made no progress for stall_ms sends PROBE to
 * its peers; the module of each answers at once with REPLY, whatever its
 * process is doing (kmod/kcoll_stall.c).
 *
 * RESET (kmod/kcoll_adopt.c): a failed communicator's connection to a
 * live peer is parked, not stopped; a new communicator of the survivors
 * takes it over and sends RESET first, with @rank its rank there, @other
 * the peer's.  Everything the sender sent before RESET belongs to the old
 * communicator and is dropped (data without a credit back, credits and
 * other control messages unread); what follows belongs to the new one.
 * The connection is the new communicator's once both ends have sent
 * RESET and each has received the other's, naming the same id, ranks
 * and size.
 */
struct kcoll_ctl {
	__le32 magic;
	__u8 version;
	__u8 type;
	__le16 len;
	__le32 op_num;
	__le32 err;
	__le32 rank;
	__le32 other;
	__le32 pid;
	__le32 code;
	__u8 fp_rank[32];
	__u8 fp_other[32];
};

#endif /* _UAPI_LINUX_KCOLL_WIRE_H */
