/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: the generic netlink family "kcoll", user-space ABI.
 *
 * What the module tells observers (collctl show, collctl monitor) about
 * its communicators: a dump or get of KCOLL_CMD_COMM_GET, and
 * notifications on the multicast group "events"; and what their last
 * operations were, also after their destruction: a dump of
 * KCOLL_CMD_HISTORY_GET (collctl history).  Values of the enums
 * below never change meaning; new ones are appended before the __*_MAX
 * sentinels.  Enum values of other headers (operation, algorithm) are
 * those of <linux/kcoll.h>.  The family is in the initial network
 * namespace only.
 *
 * Who sees what: a requester sees the communicators created by its user
 * (the effective uid of the creating process against the user that
 * opened the netlink socket); every user's need CAP_NET_ADMIN, as other
 * users' sockets and processes do for ss and /proc.  Another user's
 * communicator is not in a dump and a request for it is ENOENT, as for
 * one that does not exist.  The "events" group carries every user's
 * events: joining it needs CAP_NET_ADMIN (EPERM otherwise).
 *
 * This header may include <linux/types.h> only.
 */
#ifndef _UAPI_LINUX_KCOLL_GENL_H
#define _UAPI_LINUX_KCOLL_GENL_H

#include <linux/types.h>

#define KCOLL_GENL_NAME			"kcoll"
#define KCOLL_GENL_VERSION		1
#define KCOLL_GENL_MCGRP_EVENTS		"events"

/* Operations kept per communicator for KCOLL_A_COMM_LAST_OPS. */
#define KCOLL_GENL_LAST_OPS		8

/* Longest KCOLL_LASTOP_A_NOTE, its terminating NUL included. */
#define KCOLL_GENL_NOTE_MAX		160

/**
 * enum kcoll_genl_cmd - commands and notifications
 * @KCOLL_CMD_UNSPEC: unused
 * @KCOLL_CMD_COMM_GET: request: with NLM_F_DUMP every communicator the
 *	requester may see, else the one KCOLL_A_COMM_ID names (ENOENT if
 *	none, or if it is another user's and the requester lacks
 *	CAP_NET_ADMIN); reply: one message per communicator with every
 *	KCOLL_A_COMM_* attribute
 * @KCOLL_CMD_EVENT_COMM_NEW: notification: a communicator is connected
 *	and ready (KCOLL_A_COMM_ID, _PID, _RANK, _NRANKS)
 * @KCOLL_CMD_EVENT_COMM_DEL: notification: a communicator is being
 *	destroyed (KCOLL_A_COMM_ID, _PID, _RANK, _NRANKS and the counters
 *	_STATE, _ERR, _OPS, _BYTES, _ERRORS, _TIMEOUTS as its owner left it,
 *	before the tear-down cancels what is still queued)
 * @KCOLL_CMD_EVENT_OP_FAIL: notification: the first operation of a
 *	communicator that failed (KCOLL_A_COMM_ID, KCOLL_A_EVENT_OP, a nest
 *	of enum kcoll_lastop_attr); later failures of the same communicator
 *	(which refuses operations from then on) only count in
 *	KCOLL_A_COMM_ERRORS, so a failing communicator does not flood
 *	listeners; operations cancelled by abort or close (ECANCELED) are
 *	not reported
 * @KCOLL_CMD_EVENT_PEER_LOST: notification: the connection to a peer was
 *	lost (KCOLL_A_COMM_ID, KCOLL_A_EVENT_PEER, KCOLL_A_COMM_ERR), once
 *	per peer
 * @KCOLL_CMD_EVENT_ALGO_FALLBACK: notification: an operation completed
 *	that did not run an algorithm the communicator's algo string
 *	configures (KCOLL_A_COMM_ID, KCOLL_A_EVENT_OP with
 *	KCOLL_LASTOP_A_FALLBACK and KCOLL_LASTOP_A_NOTE: which levels, what
 *	ran instead and why).  Once per communicator and kind of operation
 *	(enum kcoll_op): the later ones show in KCOLL_A_COMM_LAST_OPS only
 * @KCOLL_CMD_NODE_GET: request (no attributes): the node's listeners and
 *	the refusals no communicator can be charged with; reply: one message
 *	with every KCOLL_A_NODE_* attribute (any user may ask)
 * @KCOLL_CMD_HISTORY_GET: request (NLM_F_DUMP; KCOLL_A_COMM_ID, if given,
 *	keeps that communicator only): the flight records of the
 *	communicators the requester may see, the live ones first (by id),
 *	then those destroyed within history_keep_ms that history_max_bytes
 *	still holds (oldest destruction first).  Reply: per communicator one
 *	or more messages with KCOLL_A_COMM_ID, _PID, _RANK, _NRANKS,
 *	_UNIQUE_ID, _ERR and every KCOLL_A_HIST_* attribute, its operations
 *	(KCOLL_A_HIST_OPS) oldest first and split over consecutive messages
 *	with the same KCOLL_A_COMM_ID where they do not fit in one.  A
 *	communicator being destroyed may be missing from a dump for the time
 *	of its tear-down, or show twice (live, then retained)
 * @KCOLL_CMD_EVENT_STALL: notification: an operation made no progress for
 *	the communicator's stall_ms (KCOLL_A_COMM_ID, _PID, _RANK, _NRANKS,
 *	KCOLL_A_EVENT_PEER: the rank it waits for, KCOLL_A_COMM_STALL),
 *	once when the stall is found and once when its cause is named
 * @__KCOLL_CMD_MAX: sentinel
 */
enum kcoll_genl_cmd {
	KCOLL_CMD_UNSPEC,
	KCOLL_CMD_COMM_GET,
	KCOLL_CMD_EVENT_COMM_NEW,
	KCOLL_CMD_EVENT_COMM_DEL,
	KCOLL_CMD_EVENT_OP_FAIL,
	KCOLL_CMD_EVENT_PEER_LOST,
	KCOLL_CMD_EVENT_ALGO_FALLBACK,
	KCOLL_CMD_NODE_GET,
	KCOLL_CMD_HISTORY_GET,
	KCOLL_CMD_EVENT_STALL,
	__KCOLL_CMD_MAX
};

#define KCOLL_CMD_MAX	(__KCOLL_CMD_MAX - 1)

/**
 * enum kcoll_comm_state - KCOLL_A_COMM_STATE
 * @KCOLL_COMM_STATE_READY: accepts operations
 * @KCOLL_COMM_STATE_PEER_LOST: a peer left: new operations are refused,
 *	running ones finish if they no longer need it
 * @KCOLL_COMM_STATE_FAILED: a fatal error (KCOLL_A_COMM_ERR): every
 *	operation is refused until the communicator is destroyed
 * @__KCOLL_COMM_STATE_MAX: sentinel
 */
enum kcoll_comm_state {
	KCOLL_COMM_STATE_READY,
	KCOLL_COMM_STATE_PEER_LOST,
	KCOLL_COMM_STATE_FAILED,
	__KCOLL_COMM_STATE_MAX
};

/**
 * enum kcoll_peer_state - KCOLL_PEER_A_STATE
 * @KCOLL_PEER_STATE_IDLE: no connection (not needed yet, or this rank)
 * @KCOLL_PEER_STATE_CONNECTING: rdma_cm is setting the connection up
 * @KCOLL_PEER_STATE_UP: connected
 * @KCOLL_PEER_STATE_FAILED: the connection failed
 * @KCOLL_PEER_STATE_CLOSED: the connection was closed
 * @KCOLL_PEER_STATE_LOST: the peer disconnected
 * @KCOLL_PEER_STATE_AUTH: connected, waiting for the peer to prove the
 *	communicator's secret
 * @__KCOLL_PEER_STATE_MAX: sentinel
 */
enum kcoll_peer_state {
	KCOLL_PEER_STATE_IDLE,
	KCOLL_PEER_STATE_CONNECTING,
	KCOLL_PEER_STATE_UP,
	KCOLL_PEER_STATE_FAILED,
	KCOLL_PEER_STATE_CLOSED,
	KCOLL_PEER_STATE_LOST,
	KCOLL_PEER_STATE_AUTH,
	__KCOLL_PEER_STATE_MAX
};

/**
 * enum kcoll_genl_attr - attributes of the family's messages
 * @KCOLL_A_UNSPEC: unused
 * @KCOLL_A_PAD: padding for 64-bit attributes
 * @KCOLL_A_COMM_ID: u64, the communicator's id (unique until reboot)
 * @KCOLL_A_COMM_PID: u32, thread group id of the process that created it
 * @KCOLL_A_COMM_RANK: u32, its rank
 * @KCOLL_A_COMM_NRANKS: u32, number of ranks
 * @KCOLL_A_COMM_STATE: u32, enum kcoll_comm_state
 * @KCOLL_A_COMM_ERR: u32, the error (positive errno) that failed the
 *	communicator or that the lost peer gave, 0 if none
 * @KCOLL_A_COMM_OPS: u64, operations completed (successfully or not)
 * @KCOLL_A_COMM_BYTES: u64, bytes sent and received by completed operations
 * @KCOLL_A_COMM_ERRORS: u64, operations completed with an error
 * @KCOLL_A_COMM_TIMEOUTS: u64, of which with ETIMEDOUT
 * @KCOLL_A_COMM_INFLIGHT: u32, operations submitted and not yet reaped
 * @KCOLL_A_COMM_CHUNK_BYTES: u32, the communicator's chunk size
 * @KCOLL_A_COMM_SLOTS: u32, its window
 * @KCOLL_A_COMM_TIMEOUT_MS: u32, its operation timeout
 * @KCOLL_A_COMM_PEERS: nest of KCOLL_A_COMM_PEER, one per rank
 * @KCOLL_A_COMM_PEER: nest of enum kcoll_peer_attr
 * @KCOLL_A_COMM_LAST_OPS: nest of KCOLL_A_COMM_LAST_OP, oldest first, at
 *	most KCOLL_GENL_LAST_OPS
 * @KCOLL_A_COMM_LAST_OP: nest of enum kcoll_lastop_attr
 * @KCOLL_A_COMM_MODEL: nest of KCOLL_A_COMM_LINK (one per level) and
 *	KCOLL_A_COMM_CONV_Q8: the link model snapshot automatic selection
 *	uses for this communicator
 * @KCOLL_A_COMM_LINK: nest of enum kcoll_link_attr
 * @KCOLL_A_COMM_CONV_Q8: u32, level-2 convergence ratio in 1/256
 * @KCOLL_A_COMM_ALGOS: nest of KCOLL_A_COMM_ALGO, one per operation: the
 *	configured algorithm per level (KCOLL_ALGO_AUTO: chosen per
 *	operation by the model)
 * @KCOLL_A_COMM_ALGO: nest of enum kcoll_algo_attr
 * @KCOLL_A_EVENT_PEER: u32, KCOLL_CMD_EVENT_PEER_LOST: the peer's rank
 * @KCOLL_A_EVENT_OP: nest of enum kcoll_lastop_attr,
 *	KCOLL_CMD_EVENT_OP_FAIL and KCOLL_CMD_EVENT_ALGO_FALLBACK: the
 *	operation
 * @KCOLL_A_COMM_AUTH: u32, enum kcoll_comm_auth: how peers were admitted
 * @KCOLL_A_COMM_REFUSED: u64, connections refused: from another address
 *	than the rank table's, with other parameters, or without the proof
 *	that they know the secret, or claiming a rank already connected
 * @KCOLL_A_COMM_UNIQUE_ID: binary, KCOLL_COMM_UID_BYTES: the id that names
 *	the communicator on the wire (struct kcoll_comm_create.uid)
 * @KCOLL_A_NODE_COMMS: u32, communicators registered with the listeners
 * @KCOLL_A_NODE_REFUSED_UNKNOWN: u64, requests for an id and rank not
 *	here (a peer faster than the communicator's creation, or a stranger)
 * @KCOLL_A_NODE_REFUSED_STALE: u64, requests for a destroyed communicator
 * @KCOLL_A_NODE_REFUSED_BAD: u64, requests that were not kcoll's of this
 *	version
 * @KCOLL_A_NODE_DUP_IDS: u64, creations refused because the id and rank
 *	exist (EEXIST)
 * @KCOLL_A_NODE_LISTENERS: nest of KCOLL_A_NODE_LISTENER
 * @KCOLL_A_NODE_LISTENER: nest of enum kcoll_listen_attr
 * @KCOLL_A_HIST_RETAINED: u32, KCOLL_CMD_HISTORY_GET: 1 when the
 *	communicator was destroyed (a retained record), 0 while it lives
 * @KCOLL_A_HIST_UID: u32, the effective uid of the creating process (in
 *	the initial user namespace)
 * @KCOLL_A_HIST_TASK: NUL-terminated string, the command name (comm) of
 *	the creating thread, at most 16 bytes
 * @KCOLL_A_HIST_CREATED_NS: u64, CLOCK_REALTIME ns of the creation
 * @KCOLL_A_HIST_DESTROYED_NS: u64, CLOCK_REALTIME ns of the destruction,
 *	with KCOLL_A_HIST_RETAINED 1 only
 * @KCOLL_A_HIST_CAPACITY: u32, operations the record keeps (history_ops
 *	at the creation)
 * @KCOLL_A_HIST_RECORDED: u64, operations recorded in all (submitted),
 *	the oldest of them dropped beyond KCOLL_A_HIST_CAPACITY
 * @KCOLL_A_HIST_OPS: nest of KCOLL_A_HIST_OP, oldest first
 * @KCOLL_A_HIST_OP: nest of enum kcoll_hist_attr
 * @KCOLL_A_COMM_FAULT: binary, struct kcoll_fault (uapi/linux/kcoll.h):
 *	why the communicator's first operation failed, from the rank's point
 *	of view (who, what it called or why it left); only once it is known
 * @KCOLL_A_COMM_STALL: binary, struct kcoll_stall: the last operation
 *	that made no progress for stall_ms, what it waits for and who is
 *	to blame (collctl why); only once one stalled
 * @KCOLL_A_COMM_STALL_MS: u32, the communicator's stall_ms, 0: off
 * @KCOLL_A_COMM_MEM_BYTES: u64, the kernel memory the communicator may
 *	hold at most as it is now, as charged against user_max_bytes: with
 *	connect_on_need, what it holds without connections plus each
 *	connection made so far; else all of them from creation on
 * @__KCOLL_A_MAX: sentinel
 */
enum kcoll_genl_attr {
	KCOLL_A_UNSPEC,
	KCOLL_A_PAD,
	KCOLL_A_COMM_ID,
	KCOLL_A_COMM_PID,
	KCOLL_A_COMM_RANK,
	KCOLL_A_COMM_NRANKS,
	KCOLL_A_COMM_STATE,
	KCOLL_A_COMM_ERR,
	KCOLL_A_COMM_OPS,
	KCOLL_A_COMM_BYTES,
	KCOLL_A_COMM_ERRORS,
	KCOLL_A_COMM_TIMEOUTS,
	KCOLL_A_COMM_INFLIGHT,
	KCOLL_A_COMM_CHUNK_BYTES,
	KCOLL_A_COMM_SLOTS,
	KCOLL_A_COMM_TIMEOUT_MS,
	KCOLL_A_COMM_PEERS,
	KCOLL_A_COMM_PEER,
	KCOLL_A_COMM_LAST_OPS,
	KCOLL_A_COMM_LAST_OP,
	KCOLL_A_COMM_MODEL,
	KCOLL_A_COMM_LINK,
	KCOLL_A_COMM_CONV_Q8,
	KCOLL_A_COMM_ALGOS,
	KCOLL_A_COMM_ALGO,
	KCOLL_A_EVENT_PEER,
	KCOLL_A_EVENT_OP,
	KCOLL_A_COMM_AUTH,
	KCOLL_A_COMM_REFUSED,
	KCOLL_A_COMM_UNIQUE_ID,
	KCOLL_A_NODE_COMMS,
	KCOLL_A_NODE_REFUSED_UNKNOWN,
	KCOLL_A_NODE_REFUSED_STALE,
	KCOLL_A_NODE_REFUSED_BAD,
	KCOLL_A_NODE_DUP_IDS,
	KCOLL_A_NODE_LISTENERS,
	KCOLL_A_NODE_LISTENER,
	KCOLL_A_HIST_RETAINED,
	KCOLL_A_HIST_UID,
	KCOLL_A_HIST_TASK,
	KCOLL_A_HIST_CREATED_NS,
	KCOLL_A_HIST_DESTROYED_NS,
	KCOLL_A_HIST_CAPACITY,
	KCOLL_A_HIST_RECORDED,
	KCOLL_A_HIST_OPS,
	KCOLL_A_HIST_OP,
	KCOLL_A_COMM_FAULT,
	KCOLL_A_COMM_STALL,
	KCOLL_A_COMM_STALL_MS,
	KCOLL_A_COMM_MEM_BYTES,
	__KCOLL_A_MAX
};

#define KCOLL_A_MAX	(__KCOLL_A_MAX - 1)

/**
 * enum kcoll_listen_attr - one listener of the node (KCOLL_A_NODE_LISTENER)
 * @KCOLL_LISTEN_A_UNSPEC: unused
 * @KCOLL_LISTEN_A_PORT: u32, its rdma_cm port
 * @KCOLL_LISTEN_A_FAMILY: u32, KCOLL_AF_INET or KCOLL_AF_INET6 (it listens
 *	on every address of that family)
 * @KCOLL_LISTEN_A_COMMS: u32, communicators it accepts connections for
 * @__KCOLL_LISTEN_A_MAX: sentinel
 */
enum kcoll_listen_attr {
	KCOLL_LISTEN_A_UNSPEC,
	KCOLL_LISTEN_A_PORT,
	KCOLL_LISTEN_A_FAMILY,
	KCOLL_LISTEN_A_COMMS,
	__KCOLL_LISTEN_A_MAX
};

#define KCOLL_LISTEN_A_MAX	(__KCOLL_LISTEN_A_MAX - 1)

/**
 * enum kcoll_comm_auth - KCOLL_A_COMM_AUTH
 * @KCOLL_COMM_AUTH_ADDRESS: no secret: peers are admitted by their address
 *	alone, so another user on a rank's node could take its place
 * @KCOLL_COMM_AUTH_HMAC_SHA256: every peer proved it knows the secret
 * @__KCOLL_COMM_AUTH_MAX: sentinel
 */
enum kcoll_comm_auth {
	KCOLL_COMM_AUTH_ADDRESS,
	KCOLL_COMM_AUTH_HMAC_SHA256,
	__KCOLL_COMM_AUTH_MAX
};

/**
 * enum kcoll_peer_attr - one rank of a communicator (KCOLL_A_COMM_PEER)
 * @KCOLL_PEER_A_UNSPEC: unused
 * @KCOLL_PEER_A_RANK: u32, its rank
 * @KCOLL_PEER_A_STATE: u32, enum kcoll_peer_state
 * @KCOLL_PEER_A_SERVER: u32, server id from the rank table
 * @KCOLL_PEER_A_POD: u32, super-pod id from the rank table
 * @KCOLL_PEER_A_REUSED: u8, 1: the connection was taken over from the
 *	failed communicator this one shrank (KCOLL_CREATE_F_PARENT), no new
 *	handshake; 0: connected anew
 * @KCOLL_PEER_A_CONNECT_US: u32, with connect_on_need: how long the
 *	submission that first needed the peer waited for the connection,
 *	in microseconds (at least 1); 0: not connected on need
 * @__KCOLL_PEER_A_MAX: sentinel
 */
enum kcoll_peer_attr {
	KCOLL_PEER_A_UNSPEC,
	KCOLL_PEER_A_RANK,
	KCOLL_PEER_A_STATE,
	KCOLL_PEER_A_SERVER,
	KCOLL_PEER_A_POD,
	KCOLL_PEER_A_REUSED,
	KCOLL_PEER_A_CONNECT_US,
	__KCOLL_PEER_A_MAX
};

#define KCOLL_PEER_A_MAX	(__KCOLL_PEER_A_MAX - 1)

/**
 * enum kcoll_lastop_attr - one completed operation
 * @KCOLL_LASTOP_A_UNSPEC: unused
 * @KCOLL_LASTOP_A_PAD: padding for 64-bit attributes
 * @KCOLL_LASTOP_A_ID: u64, the operation id the submit ioctl returned
 * @KCOLL_LASTOP_A_OP: u32, enum kcoll_op
 * @KCOLL_LASTOP_A_BYTES: u64, bytes this rank sent and received
 * @KCOLL_LASTOP_A_ALGO_L0: u32, enum kcoll_algo run at level 0 (0: none)
 * @KCOLL_LASTOP_A_ALGO_L1: u32, the same at level 1
 * @KCOLL_LASTOP_A_ALGO_L2: u32, the same at level 2
 * @KCOLL_LASTOP_A_STATUS: u32, 0 or the positive errno it failed with
 * @KCOLL_LASTOP_A_DURATION_NS: u64, from its start to its completion
 * @KCOLL_LASTOP_A_COUNT: u64, its element count
 * @KCOLL_LASTOP_A_FALLBACK: u32, bit N set when the algorithm the algo
 *	string configures at level N did not run there although the
 *	topology has that level (the documented fallbacks:
 *	Documentation/algorithms.md); 0 when everything configured ran
 * @KCOLL_LASTOP_A_NOTE: NUL-terminated string of at most
 *	KCOLL_GENL_NOTE_MAX bytes, only with a non-zero
 *	KCOLL_LASTOP_A_FALLBACK: per such level, what ran instead and why
 *	(the plan's note, as collctl explain shows it)
 * @__KCOLL_LASTOP_A_MAX: sentinel
 */
enum kcoll_lastop_attr {
	KCOLL_LASTOP_A_UNSPEC,
	KCOLL_LASTOP_A_PAD,
	KCOLL_LASTOP_A_ID,
	KCOLL_LASTOP_A_OP,
	KCOLL_LASTOP_A_BYTES,
	KCOLL_LASTOP_A_ALGO_L0,
	KCOLL_LASTOP_A_ALGO_L1,
	KCOLL_LASTOP_A_ALGO_L2,
	KCOLL_LASTOP_A_STATUS,
	KCOLL_LASTOP_A_DURATION_NS,
	KCOLL_LASTOP_A_COUNT,
	KCOLL_LASTOP_A_FALLBACK,
	KCOLL_LASTOP_A_NOTE,
	__KCOLL_LASTOP_A_MAX
};

#define KCOLL_LASTOP_A_MAX	(__KCOLL_LASTOP_A_MAX - 1)

/**
 * enum kcoll_link_attr - one level of the link model (KCOLL_A_COMM_LINK)
 * @KCOLL_LINK_A_UNSPEC: unused
 * @KCOLL_LINK_A_PAD: padding for 64-bit attributes
 * @KCOLL_LINK_A_LEVEL: u32, enum kcoll_level
 * @KCOLL_LINK_A_ALPHA_FS: u64, latency in femtoseconds
 * @KCOLL_LINK_A_BETA_FS: u64, transfer time per byte in femtoseconds
 * @KCOLL_LINK_A_GAMMA_FS: u64, reduction time per byte in femtoseconds
 * @__KCOLL_LINK_A_MAX: sentinel
 */
enum kcoll_link_attr {
	KCOLL_LINK_A_UNSPEC,
	KCOLL_LINK_A_PAD,
	KCOLL_LINK_A_LEVEL,
	KCOLL_LINK_A_ALPHA_FS,
	KCOLL_LINK_A_BETA_FS,
	KCOLL_LINK_A_GAMMA_FS,
	__KCOLL_LINK_A_MAX
};

#define KCOLL_LINK_A_MAX	(__KCOLL_LINK_A_MAX - 1)

/**
 * enum kcoll_algo_attr - configured algorithms of one operation
 * @KCOLL_ALGO_A_UNSPEC: unused
 * @KCOLL_ALGO_A_PAD: padding for 64-bit attributes
 * @KCOLL_ALGO_A_OP: u32, enum kcoll_op
 * @KCOLL_ALGO_A_L0: u32, enum kcoll_algo at level 0
 * @KCOLL_ALGO_A_L1: u32, the same at level 1
 * @KCOLL_ALGO_A_L2: u32, the same at level 2
 * @KCOLL_ALGO_A_PIPE_BYTES: u64, pipelining piece in bytes, 0: none
 * @KCOLL_ALGO_A_CONF_L0: u32, enum kcoll_algo the algo string names at
 *	level 0 for this operation, before the fallback of an algorithm
 *	that cannot run it (KCOLL_ALGO_A_L0 is then KCOLL_ALGO_AUTO)
 * @KCOLL_ALGO_A_CONF_L1: u32, the same at level 1
 * @KCOLL_ALGO_A_CONF_L2: u32, the same at level 2
 * @__KCOLL_ALGO_A_MAX: sentinel
 */
enum kcoll_algo_attr {
	KCOLL_ALGO_A_UNSPEC,
	KCOLL_ALGO_A_PAD,
	KCOLL_ALGO_A_OP,
	KCOLL_ALGO_A_L0,
	KCOLL_ALGO_A_L1,
	KCOLL_ALGO_A_L2,
	KCOLL_ALGO_A_PIPE_BYTES,
	KCOLL_ALGO_A_CONF_L0,
	KCOLL_ALGO_A_CONF_L1,
	KCOLL_ALGO_A_CONF_L2,
	__KCOLL_ALGO_A_MAX
};

#define KCOLL_ALGO_A_MAX	(__KCOLL_ALGO_A_MAX - 1)

/**
 * enum kcoll_hist_state - KCOLL_HIST_A_STATE
 * @KCOLL_HIST_STATE_QUEUED: submitted, waiting for the ones before it
 * @KCOLL_HIST_STATE_RUNNING: started, not completed
 * @KCOLL_HIST_STATE_DONE: completed (KCOLL_HIST_A_STATUS)
 * @__KCOLL_HIST_STATE_MAX: sentinel
 */
enum kcoll_hist_state {
	KCOLL_HIST_STATE_QUEUED,
	KCOLL_HIST_STATE_RUNNING,
	KCOLL_HIST_STATE_DONE,
	__KCOLL_HIST_STATE_MAX
};

/**
 * enum kcoll_hist_attr - one operation of a flight record (KCOLL_A_HIST_OP)
 * @KCOLL_HIST_A_UNSPEC: unused
 * @KCOLL_HIST_A_PAD: padding for 64-bit attributes
 * @KCOLL_HIST_A_ID: u64, the operation id the submit ioctl returned (the
 *	communicator's sequence: 1, 2, ...)
 * @KCOLL_HIST_A_STATE: u32, enum kcoll_hist_state
 * @KCOLL_HIST_A_OP: u32, enum kcoll_op
 * @KCOLL_HIST_A_DTYPE: u32, enum kcoll_dtype
 * @KCOLL_HIST_A_REDOP: u32, enum kcoll_redop, for reducing operations only
 * @KCOLL_HIST_A_ROOT: u32, the root rank, for rooted operations only
 * @KCOLL_HIST_A_COUNT: u64, its element count
 * @KCOLL_HIST_A_BYTES: u64, bytes this rank sent and received (once done)
 * @KCOLL_HIST_A_ALGO_L0: u32, enum kcoll_algo the plan runs at level 0
 *	(0: none)
 * @KCOLL_HIST_A_ALGO_L1: u32, the same at level 1
 * @KCOLL_HIST_A_ALGO_L2: u32, the same at level 2
 * @KCOLL_HIST_A_STATUS: u32, 0 or the positive errno it failed with (once
 *	done)
 * @KCOLL_HIST_A_SUBMIT_NS: u64, CLOCK_REALTIME ns of its submission
 * @KCOLL_HIST_A_START_NS: u64, CLOCK_REALTIME ns of its start, only once
 *	started (differences between the three times are exact: they are
 *	taken on CLOCK_MONOTONIC and shifted by one offset per communicator)
 * @KCOLL_HIST_A_END_NS: u64, CLOCK_REALTIME ns of its completion, only
 *	once done
 * @__KCOLL_HIST_A_MAX: sentinel
 */
enum kcoll_hist_attr {
	KCOLL_HIST_A_UNSPEC,
	KCOLL_HIST_A_PAD,
	KCOLL_HIST_A_ID,
	KCOLL_HIST_A_STATE,
	KCOLL_HIST_A_OP,
	KCOLL_HIST_A_DTYPE,
	KCOLL_HIST_A_REDOP,
	KCOLL_HIST_A_ROOT,
	KCOLL_HIST_A_COUNT,
	KCOLL_HIST_A_BYTES,
	KCOLL_HIST_A_ALGO_L0,
	KCOLL_HIST_A_ALGO_L1,
	KCOLL_HIST_A_ALGO_L2,
	KCOLL_HIST_A_STATUS,
	KCOLL_HIST_A_SUBMIT_NS,
	KCOLL_HIST_A_START_NS,
	KCOLL_HIST_A_END_NS,
	__KCOLL_HIST_A_MAX
};

#define KCOLL_HIST_A_MAX	(__KCOLL_HIST_A_MAX - 1)

/**
 * enum kcoll_stall_wait - what a stalled operation waits for
 * @KCOLL_STALL_WAIT_NONE: nothing known (between events)
 * @KCOLL_STALL_WAIT_RECV: a message from the peer that has not arrived
 * @KCOLL_STALL_WAIT_CREDIT: the peer has not consumed a message sent to it
 */
enum kcoll_stall_wait {
	KCOLL_STALL_WAIT_NONE,
	KCOLL_STALL_WAIT_RECV,
	KCOLL_STALL_WAIT_CREDIT
};

/**
 * enum kcoll_stall_why - why the named rank holds the operation up
 * @KCOLL_STALL_WHY_UNKNOWN: not known yet (the probes are out)
 * @KCOLL_STALL_WHY_NOT_SUBMITTED: it has not submitted the operation
 *	(its last submitted one: struct kcoll_stall.culprit_submitted, last
 *	completed: .culprit_done)
 * @KCOLL_STALL_WHY_STOPPED: it has not submitted the operation and its
 *	process is stopped (SIGSTOP, a debugger)
 * @KCOLL_STALL_WHY_NO_ANSWER: its node did not answer the probe within
 *	half a stall_ms (node down or network cut)
 * @KCOLL_STALL_WHY_WAITING: it runs the operation and waits for
 *	.culprit_waits (every rank answered; no rank is known to lag)
 */
enum kcoll_stall_why {
	KCOLL_STALL_WHY_UNKNOWN,
	KCOLL_STALL_WHY_NOT_SUBMITTED,
	KCOLL_STALL_WHY_STOPPED,
	KCOLL_STALL_WHY_NO_ANSWER,
	KCOLL_STALL_WHY_WAITING
};

/* struct kcoll_stall.flags */
#define KCOLL_STALL_F_OVER	0x1U	/* the operation moved again or ended */

/**
 * struct kcoll_stall - KCOLL_A_COMM_STALL, from one rank's point of view
 * @size: sizeof(struct kcoll_stall)
 * @flags: KCOLL_STALL_F_*
 * @op_id: the operation that stalled (its submit id)
 * @bytes: its size in bytes (count times the element size)
 * @op: its enum kcoll_op
 * @wait: enum kcoll_stall_wait: what this rank waits for
 * @wait_peer: the rank it waits for, 0xffffffff none
 * @wait_msg: that peer's message sequence (per operation, from 0)
 * @round: the plan round this rank is in
 * @why: enum kcoll_stall_why
 * @culprit: the rank named, 0xffffffff while none is
 * @culprit_submitted: NOT_SUBMITTED, STOPPED: the last operation it
 *	submitted (low 32 bits)
 * @culprit_done: NOT_SUBMITTED, STOPPED: the last it completed
 * @culprit_waits: WAITING: the rank it waits for
 * @culprit_pid: its process (thread group id on its node), 0 unknown
 * @probed: peers probed
 * @replied: of which answered
 * @stall_ms: how long the operation had made no progress when found
 * @named_ms: ms after the stall was found that the culprit was named
 * @pad: zero
 */
struct kcoll_stall {
	__u32 size;
	__u32 flags;
	__u64 op_id;
	__u64 bytes;
	__u32 op;
	__u32 wait;
	__u32 wait_peer;
	__u32 wait_msg;
	__u32 round;
	__u32 why;
	__u32 culprit;
	__u32 culprit_submitted;
	__u32 culprit_done;
	__u32 culprit_waits;
	__u32 culprit_pid;
	__u32 probed;
	__u32 replied;
	__u32 stall_ms;
	__u32 named_ms;
	__u32 pad;
};

#endif /* _UAPI_LINUX_KCOLL_GENL_H */
