/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: collective communication over RDMA, user-space ABI.
 *
 * This header is shared by the kernel module, libcoll and the algorithm
 * core in algo/.  It may include <linux/types.h> and <linux/ioctl.h> only.
 *
 * The enums below are part of the ABI: values never change meaning and new
 * values are only ever appended before the *_COUNT sentinel.
 */
#ifndef _UAPI_LINUX_KCOLL_H
#define _UAPI_LINUX_KCOLL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KCOLL_ABI_VERSION	1

/*
 * ioctl magic.  0xC7 is not assigned in
 * Documentation/userspace-api/ioctl/ioctl-number.rst; kcoll reserves it.
 */
#define KCOLL_IOC_MAGIC		0xC7

/* Collective operations. */
enum kcoll_op {
	KCOLL_OP_ALLREDUCE	= 0,
	KCOLL_OP_REDUCESCATTER	= 1,
	KCOLL_OP_ALLGATHER	= 2,
	KCOLL_OP_BROADCAST	= 3,
	KCOLL_OP_REDUCE		= 4,
	KCOLL_OP_SCATTER	= 5,
	KCOLL_OP_GATHER		= 6,
	KCOLL_OP_ALLTOALL	= 7,
	KCOLL_OP_ALLTOALLV	= 8,
	KCOLL_OP_BARRIER	= 9,
	KCOLL_OP_COUNT
};

/* Element types. */
enum kcoll_dtype {
	KCOLL_INT8	= 0,
	KCOLL_UINT8	= 1,
	KCOLL_INT16	= 2,
	KCOLL_UINT16	= 3,
	KCOLL_INT32	= 4,
	KCOLL_UINT32	= 5,
	KCOLL_INT64	= 6,
	KCOLL_UINT64	= 7,
	KCOLL_FP16	= 8,
	KCOLL_BF16	= 9,
	KCOLL_FP32	= 10,
	KCOLL_FP64	= 11,
	KCOLL_DTYPE_COUNT
};

/* Reduction operators. */
enum kcoll_redop {
	KCOLL_SUM	= 0,
	KCOLL_PROD	= 1,
	KCOLL_MAX	= 2,
	KCOLL_MIN	= 3,
	KCOLL_AVG	= 4,
	KCOLL_REDOP_COUNT
};

/*
 * Algorithms, selectable per topology level.  KCOLL_ALGO_AUTO lets the
 * cost model choose.  Names follow HCCL_ALGO tokens where one exists.
 */
enum kcoll_algo {
	KCOLL_ALGO_AUTO		= 0,
	KCOLL_ALGO_MESH		= 1,	/* "mesh", HCCL "fullmesh" */
	KCOLL_ALGO_RING		= 2,	/* "ring" */
	KCOLL_ALGO_RHD		= 3,	/* "H-D_R" */
	KCOLL_ALGO_NHR		= 4,	/* "NHR" */
	KCOLL_ALGO_NB		= 5,	/* "NB" */
	KCOLL_ALGO_PAIRWISE	= 6,	/* "pairwise" */
	KCOLL_ALGO_TREE		= 7,	/* "tree": NCCL double binary tree */
	KCOLL_ALGO_PIPELINE	= 8,	/* "pipeline" */
	KCOLL_ALGO_AHC		= 9,	/* "AHC" */
	KCOLL_ALGO_AHC_BROKE	= 10,	/* "AHC_BROKE" */
	KCOLL_ALGO_COUNT
};

/* Topology levels, as in HCCL_ALGO. */
enum kcoll_level {
	KCOLL_LEVEL0	= 0,	/* inside a server */
	KCOLL_LEVEL1	= 1,	/* between servers of a super-node */
	KCOLL_LEVEL2	= 2,	/* between super-nodes */
	KCOLL_LEVEL_COUNT
};

/*
 * ---------------------------------------------------------------------
 * ioctl interface of /dev/kcoll
 *
 * Every open file of /dev/kcoll holds at most one communicator, the
 * memory registered through it and the completions of its operations.
 * close() (or the death of the process) destroys all of it.  They belong
 * to the process that opened the file: another process that inherited it
 * (fork) or was passed it gets EPERM from every ioctl but KCOLL_IOC_INFO.
 *
 * Conventions, for every struct below:
 *  - the first field is @size, set by the caller to sizeof() of the
 *    struct it was compiled with.  The kernel accepts smaller (older)
 *    structs, zero-filling the missing tail, and larger ones up to
 *    KCOLL_STRUCT_MAX bytes as long as the bytes it does not know are
 *    zero (else -E2BIG): the copy_struct_from_user() rules.  A @size
 *    above KCOLL_STRUCT_MAX is -E2BIG whatever the tail holds, as for
 *    openat2() and clone3().  Output fields beyond the caller's size are
 *    not written.
 *  - pointers travel as __u64 (cast through uintptr_t).
 *  - @flags and every field named pad* or reserved must be zero
 *    (-EINVAL otherwise), so they can gain meaning later.
 *  - errors are returned as -1/errno by ioctl(); a failed ioctl changes
 *    no state and writes no output.  Output that cannot be written
 *    (read-only or unmapped memory) fails the ioctl with EFAULT before
 *    it takes effect.  Unknown commands give ENOTTY.
 *  - an ioctl that waits (KCOLL_IOC_COMM_CREATE, KCOLL_IOC_REAP with
 *    KCOLL_REAP_WAIT) waits interruptibly: a signal ends it with EINTR
 *    and nothing done.  No ioctl waits for another one of the same file.
 * The number in _IOWR() encodes today's struct size; the kernel dispatches
 * on the command number alone, so a grown struct keeps working.
 */

/* Largest @size an ioctl struct may have (E2BIG beyond). */
#define KCOLL_STRUCT_MAX	4096

/* Features reported by KCOLL_IOC_INFO. */
#define KCOLL_FEAT_EVENTFD	0x1ULL	/* completions signal an eventfd */
#define KCOLL_FEAT_USERPTR	0x2ULL	/* unregistered buffers accepted */
#define KCOLL_FEAT_IPV6		0x4ULL	/* IPv6 rank addresses */
#define KCOLL_FEAT_ALLTOALLV	0x8ULL
#define KCOLL_FEAT_AUTH		0x10ULL	/* kcoll_comm_create.secret */
#define KCOLL_FEAT_UID		0x20ULL	/* kcoll_comm_create.uid, one listener per node */
#define KCOLL_FEAT_FAULT	0x40ULL	/* KCOLL_IOC_FAULT, peers tell why */
#define KCOLL_FEAT_PEERS	0x80ULL	/* KCOLL_IOC_PEERS */
#define KCOLL_FEAT_REUSE	0x100ULL	/* kcoll_comm_create.parent_fd */

/* kcoll_comm_create.flags */
#define KCOLL_CREATE_F_PARENT	0x1U	/* @parent_fd and @parent_ranks are given */

/* Bytes of kcoll_comm_create.uid (KCOLL_UID_BYTES of kcoll_wire.h). */
#define KCOLL_COMM_UID_BYTES	16

/* Bounds of kcoll_comm_create.secret_len, in bytes. */
#define KCOLL_SECRET_MIN	16
#define KCOLL_SECRET_MAX	256

/* Longest HCCL_ALGO string, terminating NUL included. */
#define KCOLL_ALGO_STR_MAX	1024

/**
 * struct kcoll_info - KCOLL_IOC_INFO: what this module supports
 * @size: in: sizeof(struct kcoll_info); out: the kernel's size
 * @abi_version: out: KCOLL_ABI_VERSION of the module
 * @features: out: KCOLL_FEAT_* bits
 * @ops: out: bit (1 << enum kcoll_op) per supported operation
 * @dtypes: out: bit (1 << enum kcoll_dtype) per supported element type
 * @redops: out: bit (1 << enum kcoll_redop) per supported reduction
 * @algos: out: bit (1 << enum kcoll_algo) per available algorithm
 * @max_ranks: out: largest communicator
 * @max_inflight: out: submitted but not yet reaped operations per file
 * @max_reg_bytes: out: largest single registration (RLIMIT_MEMLOCK still
 *	applies to the sum)
 * @chunk_bytes: out: current default (sysfs) message size
 * @slots: out: current default receive slots per peer (the send window)
 * @timeout_ms: out: current default operation timeout
 * @connect_timeout_ms: out: current default connection set-up timeout
 * @version: out: module version as (major << 16) | (minor << 8) | patch
 * @pad: zero (EINVAL otherwise)
 * @listen_port: out: the port of the node's listener for ranks whose
 *	rank-table port is 0 (module parameter listen_port)
 * @pad2: out: zero
 *
 * Every field but @size and @pad is output only: what the caller puts
 * there is ignored.
 */
struct kcoll_info {
	__u32 size;
	__u32 abi_version;
	__u64 features;
	__u32 ops;
	__u32 dtypes;
	__u32 redops;
	__u32 algos;
	__u32 max_ranks;
	__u32 max_inflight;
	__u64 max_reg_bytes;
	__u32 chunk_bytes;
	__u32 slots;
	__u32 timeout_ms;
	__u32 connect_timeout_ms;
	__u32 version;
	__u32 pad;
	__u32 listen_port;
	__u32 pad2;
};

/* Address families of struct kcoll_rank. */
#define KCOLL_AF_INET		4
#define KCOLL_AF_INET6		6

/**
 * struct kcoll_rank - one entry of the rank table
 * @addr: the rank's RoCE address in network byte order: IPv4 in
 *	addr[0..3] (the rest zero), IPv6 in all 16 bytes
 * @family: KCOLL_AF_INET or KCOLL_AF_INET6
 * @port: rdma_cm port (TCP port space) of the rank's node listener,
 *	1..65535, or 0 for the module's listen_port (kcoll_info.listen_port);
 *	ranks and communicators may share one
 * @server_id: server label; ranks of one server are contiguous
 * @pod_id: super-node label; servers of one super-node are contiguous
 */
struct kcoll_rank {
	__u8 addr[16];
	__u32 family;
	__u32 port;
	__u32 server_id;
	__u32 pod_id;
};

/**
 * struct kcoll_comm_create - KCOLL_IOC_COMM_CREATE: this file's communicator
 * @size: sizeof(struct kcoll_comm_create)
 * @flags: KCOLL_CREATE_F_PARENT or zero
 * @rank: this process's rank, < @nranks
 * @nranks: number of ranks, 1..kcoll_info.max_ranks
 * @ranks: pointer to struct kcoll_rank[@nranks], the same on every rank
 * @rank_size: sizeof(struct kcoll_rank) as the caller knows it (>= 32)
 * @eventfd: eventfd signalled once per completed operation, or -1 for
 *	none; any other negative number or a descriptor that is not an
 *	eventfd is EBADF
 * @algo: pointer to a NUL-terminated HCCL_ALGO string
 *	("level0:NA;level1:H-D_R", or per operation
 *	"AllReduce=level0:NA;level1:ring/AllGather=..."), 0 for the sysfs
 *	default
 * @timeout_ms: operation timeout, 0 for the sysfs default
 * @connect_timeout_ms: how long creation waits for every peer, 0 for the
 *	sysfs default
 * @chunk_bytes: message size, 0 for the sysfs default; the same on
 *	every rank
 * @slots: receive slots per peer (send window), 0 for the sysfs default;
 *	the same on every rank
 * @comm_id: out: module-wide id of the communicator (diagnostics)
 * @secret: pointer to the communicator's shared secret, @secret_len bytes,
 *	the same on every rank (random bytes known only to the job's ranks);
 *	0 for none
 * @secret_len: KCOLL_SECRET_MIN..KCOLL_SECRET_MAX with @secret, else 0
 * @pad: zero
 * @uid: the communicator's id, the same on every rank: random bytes drawn
 *	by one rank and distributed with the rank table (as an ncclUniqueId;
 *	coll_comm_init_oob() does it).  All zero (or a caller that does not
 *	know the field): the id is derived from the rank table (SHA-256), so
 *	two communicators of one table are one id.  Not a secret: it names
 *	the communicator on the wire; the secret proves membership.
 * @parent_fd: with KCOLL_CREATE_F_PARENT, a descriptor of this process's
 *	/dev/kcoll file whose communicator failed (the survivors of a
 *	failure shrink it: coll_comm_shrink()); else ignored
 * @reused: out: connections taken over from the parent (below)
 * @parent_ranks: with KCOLL_CREATE_F_PARENT, pointer to __u32[@nranks]:
 *	each rank's rank in the parent, in increasing order, @rank's own
 *	rank among them
 *
 * A communicator made from a failed parent takes over the parent's
 * connections to the ranks it keeps wherever both ends still hold them
 * (a failure parks, rather than stops, the connection to a peer that
 * is up and acknowledged everything sent to it): each end then tells
 * the other the new communicator's id and ranks, what the failed
 * operation left in flight is dropped, and the connection is the new
 * communicator's without a handshake.  A connection one end no longer
 * holds, or whose peer names another communicator, is made anew as at
 * any creation.  Reuse needs the same @chunk_bytes, @slots and secret
 * as the parent's; a communicator that differs connects anew.  The
 * parent's connections a creation has taken over stay taken when it
 * fails (the peers have moved on to the new id; a retry, with another
 * id, connects anew): the one state a failed create does not give back.
 *
 * Every node has one rdma_cm listener per network namespace and port,
 * shared by all communicators; a connection request names the
 * communicator (@uid) and the rank it wants, and is handed to that
 * communicator only.  A request for an id not (yet) created here is
 * refused with ENOENT and retried by the peer until its connect timeout;
 * one for a destroyed id with ESTALE, which ends the peer's creation.
 * Refusals are counted (collctl show).
 *
 * Blocks until every peer is connected, at most @connect_timeout_ms,
 * interruptibly.  Meanwhile the file's other ioctls do not wait:
 * KCOLL_IOC_INFO, KCOLL_IOC_MEM_REG and KCOLL_IOC_MEM_DEREG work,
 * KCOLL_IOC_SUBMIT, KCOLL_IOC_REAP and a second KCOLL_IOC_COMM_CREATE
 * fail with EBUSY, and KCOLL_IOC_ABORT (or close() of the file by another
 * thread) cancels the creation.  A failed creation leaves nothing behind:
 * the file can create again.
 *
 * Who may connect: a peer is taken only from the address the rank table
 * gives for the rank it claims; with a secret, every connection also
 * proves both ways that its ends know the secret (HMAC-SHA256 over fresh
 * nonces of both sides, bound to both ranks, the parameters and the rank
 * table; the secret never travels).  A peer that fails is refused and
 * counted (collctl show) and creation goes on waiting for the real one.
 * Without a secret another user's process on a rank's own node can take
 * its place: such a communicator is reported as unauthenticated.
 * The highest rank accepts no connection and does not listen.
 *
 * Errors: EBUSY (this file already has a communicator or is creating
 * one), EINVAL (bad field, @parent_ranks not increasing, out of the
 * parent's range or without this rank; the kernel log says which), EBADF
 * (@eventfd; @parent_fd not a /dev/kcoll file of this process with a
 * communicator),
 * EADDRNOTAVAIL (the address of @rank is not an address of this node),
 * EACCES (the port of @rank is below 1024 and the caller lacks
 * CAP_NET_BIND_SERVICE), EADDRINUSE (the port of @rank is taken by
 * something other than kcoll), EEXIST (a communicator with this @uid and
 * @rank exists in this network namespace), ESTALE (a peer's communicator
 * of this @uid was destroyed),
 * ETIMEDOUT, EHOSTUNREACH, ECONNREFUSED, ECONNRESET (a peer left during
 * set-up), EINTR (a signal; after a handler with SA_RESTART the
 * creation starts over by itself), ECANCELED (KCOLL_IOC_ABORT or close()
 * during the creation), EKEYREJECTED (whoever listens at a rank's address
 * cannot prove the secret), EFAULT (@secret or @parent_ranks unreadable),
 * ENOMEM (out of memory, the memory cgroup's limit, or the caller's user
 * would take more than /sys/class/misc/kcoll/user_max_bytes with it).
 */
struct kcoll_comm_create {
	__u32 size;
	__u32 flags;
	__u32 rank;
	__u32 nranks;
	__u64 ranks;
	__u32 rank_size;
	__s32 eventfd;
	__u64 algo;
	__u32 timeout_ms;
	__u32 connect_timeout_ms;
	__u32 chunk_bytes;
	__u32 slots;
	__u64 comm_id;
	__u64 secret;
	__u32 secret_len;
	__u32 pad;
	__u8 uid[KCOLL_COMM_UID_BYTES];
	__s32 parent_fd;
	__u32 reused;
	__u64 parent_ranks;
};

/* kcoll_mem_reg.flags: pin for reading only (a send buffer). */
#define KCOLL_MEM_REG_RDONLY	0x1U

/**
 * struct kcoll_mem_reg - KCOLL_IOC_MEM_REG: pin a buffer for repeated use
 * @size: sizeof(struct kcoll_mem_reg)
 * @flags: KCOLL_MEM_REG_RDONLY or zero
 * @addr: start of the buffer (anonymous, shmem or hugetlb memory)
 * @len: bytes, 1..kcoll_info.max_reg_bytes
 * @handle: out: non-zero handle for struct kcoll_buf and KCOLL_IOC_MEM_DEREG
 *
 * The pages stay pinned until deregistration or close and are charged
 * to RLIMIT_MEMLOCK: over the limit (a limit of 0 included, unless the
 * caller has CAP_IPC_LOCK) ENOMEM, checked before anything is allocated
 * or pinned.  The whole range must be mapped, and writable without
 * KCOLL_MEM_REG_RDONLY (EFAULT otherwise, nothing left pinned).
 * Remapping the range afterwards is not noticed: keep it mapped.
 *
 * With KCOLL_MEM_REG_RDONLY the kernel never writes the buffer, so it may
 * be read-only memory; it serves as the send buffer of an operation that
 * is not in place, and a submission that would write it (as a receive
 * buffer, or an in-place send buffer) fails with EFAULT.  Writable
 * private memory is still taken as the process's own copy of each page,
 * as without the flag, so the registration sees what is written later.
 */
struct kcoll_mem_reg {
	__u32 size;
	__u32 flags;
	__u64 addr;
	__u64 len;
	__u64 handle;
};

/**
 * struct kcoll_mem_dereg - KCOLL_IOC_MEM_DEREG: unpin a registration
 * @size: sizeof(struct kcoll_mem_dereg)
 * @flags: zero
 * @handle: from KCOLL_IOC_MEM_REG; ENOENT if unknown, EBUSY while an
 *	operation that is not yet complete uses it.  A failed operation
 *	completes before its communicator's connections are stopped and
 *	keeps its buffers until then; deregistering one waits for that
 *	(bounded, well under a second) instead of EBUSY
 */
struct kcoll_mem_dereg {
	__u32 size;
	__u32 flags;
	__u64 handle;
};

/**
 * struct kcoll_buf - a buffer of an operation
 * @handle: a registration handle, or 0 for a plain user pointer
 * @addr: byte offset inside the registration, or the user pointer
 *
 * The byte size follows from the operation (see kcoll_submit).  A plain
 * pointer is pinned for the duration of the operation: for reading only
 * when it is a send buffer the operation does not write (not in place),
 * so it may lie in read-only memory; else for writing (EFAULT on
 * read-only memory).
 */
struct kcoll_buf {
	__u64 handle;
	__u64 addr;
};

/**
 * struct kcoll_submit - KCOLL_IOC_SUBMIT: start a collective operation
 * @size: sizeof(struct kcoll_submit)
 * @flags: zero
 * @op: enum kcoll_op
 * @dtype: enum kcoll_dtype (ignored by barrier)
 * @redop: enum kcoll_redop (AllReduce, ReduceScatter, Reduce)
 * @root: root rank (Broadcast, Reduce, Scatter, Gather)
 * @count: elements, NCCL convention: AllReduce, Broadcast, Reduce move
 *	@count; ReduceScatter sends @count * nranks and receives @count;
 *	AllGather sends @count and receives @count * nranks; Scatter and
 *	Gather move @count per rank; AlltoAll @count per peer
 * @send: send buffer
 * @recv: receive buffer.  In place, as in NCCL, when the addresses say
 *	so: equal for AllReduce, Broadcast, Reduce and AlltoAll(v); recv =
 *	send + rank * count elements for ReduceScatter and Scatter; send =
 *	recv + rank * count elements for AllGather and Gather.  In place,
 *	only the receive area is written: ReduceScatter (and the root of
 *	Scatter) leave the other blocks of the send buffer as they were
 * @scounts: AlltoAllv: pointer to __u64[nranks] elements sent to each rank
 * @sdispls: AlltoAllv: pointer to __u64[nranks] send displacements
 * @rcounts: AlltoAllv: pointer to __u64[nranks] elements from each rank
 * @rdispls: AlltoAllv: pointer to __u64[nranks] receive displacements
 * @cookie: returned unchanged in the completion
 * @op_id: out: id of the operation, increasing from 1; written before
 *	the operation starts (when it cannot be written, EFAULT and the
 *	operation does not start)
 *
 * Every rank submits the same operations in the same order.  Operations
 * of one communicator run and complete in submission order.  Errors:
 * ENOTCONN (no communicator), EBUSY (KCOLL_IOC_COMM_CREATE is under way),
 * EINVAL (the kernel log says which field), EOPNOTSUPP (the configured
 * algorithm cannot run this operation), EOVERFLOW, EFAULT (a buffer is
 * not mapped, is read-only where the operation writes it, or is a
 * KCOLL_MEM_REG_RDONLY registration the operation would write), ENOENT
 * (handle), ERANGE (offset + size beyond the registration), ENOMEM
 * (RLIMIT_MEMLOCK, a limit of 0 included), EAGAIN (max_inflight
 * operations not yet reaped), ECANCELED after KCOLL_IOC_ABORT, or else
 * the error that ended the communicator.  A peer that left does not end
 * it by itself: an operation that needs that peer completes with
 * ECONNRESET (which ends the communicator), one that already has all it
 * needs from it (a root that finished its broadcast and closed) completes.
 */
struct kcoll_submit {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 dtype;
	__u32 redop;
	__u32 root;
	__u64 count;
	struct kcoll_buf send;
	struct kcoll_buf recv;
	__u64 scounts;
	__u64 sdispls;
	__u64 rcounts;
	__u64 rdispls;
	__u64 cookie;
	__u64 op_id;
};

/**
 * struct kcoll_completion - one finished operation
 * @cookie: kcoll_submit.cookie
 * @op_id: kcoll_submit.op_id
 * @status: 0, or a negative errno: ETIMEDOUT (operation timeout),
 *	ECONNRESET (a peer disconnected), EHOSTUNREACH (a peer stopped
 *	acknowledging: its node died or the network to it is cut; the
 *	module's qp_timeout and qp_retry_count say how soon, the kernel log
 *	names the rank), EIO (a transfer failed), ENODEV
 *	(the RDMA device went away), ECANCELED (KCOLL_IOC_ABORT), EPROTO
 *	(ranks disagree on the operation: its kind, element type, reduce
 *	operation, count, AlltoAllv counts, root, number or algorithms, or
 *	the sequence of operations; no rank completes with data from
 *	another's arguments).  KCOLL_IOC_FAULT tells, for EPROTO and
 *	ECONNRESET, which rank and what it did.
 * @pad: zero
 * @bytes: payload bytes this rank sent plus received
 * @submit_ns: CLOCK_MONOTONIC time of submission
 * @complete_ns: CLOCK_MONOTONIC time of completion
 */
struct kcoll_completion {
	__u64 cookie;
	__u64 op_id;
	__s32 status;
	__u32 pad;
	__u64 bytes;
	__u64 submit_ns;
	__u64 complete_ns;
};

/* kcoll_reap.flags: wait (killable) until at least one completion. */
#define KCOLL_REAP_WAIT		0x1U

/**
 * struct kcoll_reap - KCOLL_IOC_REAP: collect finished operations
 * @size: sizeof(struct kcoll_reap)
 * @flags: KCOLL_REAP_WAIT or zero
 * @entries: pointer to struct kcoll_completion[@max]
 * @max: room at @entries, >= 1
 * @count: out: entries written, oldest first
 * @entry_size: sizeof(struct kcoll_completion) as the caller knows it
 * @timeout_ms: with KCOLL_REAP_WAIT, give up after this long (ETIMEDOUT);
 *	0 waits as long as an operation is outstanding
 *
 * Without KCOLL_REAP_WAIT, returns 0 with @count = 0 when nothing is
 * ready.  Waiting with nothing outstanding gives ENOENT; a signal gives
 * EINTR with nothing reaped.  Completions are removed only once they and
 * @count have been written: when @entries or @count cannot be written,
 * EFAULT and nothing is reaped.  Reapers of one file running at the same
 * time get distinct completions.  EBUSY while KCOLL_IOC_COMM_CREATE is
 * under way.
 */
struct kcoll_reap {
	__u32 size;
	__u32 flags;
	__u64 entries;
	__u32 max;
	__u32 count;
	__u32 entry_size;
	__u32 timeout_ms;
};

/**
 * struct kcoll_abort - KCOLL_IOC_ABORT: end the communicator
 * @size: sizeof(struct kcoll_abort)
 * @flags: zero
 *
 * Every outstanding operation completes with ECANCELED (or with the
 * error that had already ended the communicator), and every later
 * submission fails with ECANCELED, whatever ended the communicator
 * first; registrations stay until close().  The ioctl waits for no peer:
 * it returns within about 20 ms whether the peers run, are stopped, dead
 * or cut off, and the operations complete as soon as the local QPs are
 * stopped, which does not wait for peers either.
 *
 * During a KCOLL_IOC_COMM_CREATE of the file (by another thread), cancels
 * it: the creation fails with ECANCELED, and the abort returns once the
 * creation has been undone, so the file can create again.  ENOTCONN
 * without a communicator or a creation.
 */
struct kcoll_abort {
	__u32 size;
	__u32 flags;
};

/**
 * enum kcoll_fault_kind - struct kcoll_fault.kind
 * @KCOLL_FAULT_NONE: nothing is known beyond the errno
 * @KCOLL_FAULT_MISMATCH: @rank called the operation differently
 *	(@fp_rank) from this rank (@fp_mine): found here or told by @reporter
 * @KCOLL_FAULT_PEER_EXIT: @rank's process exited (status @code) with
 *	work outstanding
 * @KCOLL_FAULT_PEER_SIGNAL: @rank's process was killed by signal @code
 * @KCOLL_FAULT_PEER_CLOSE: @rank's process closed its communicator with
 *	work outstanding
 * @KCOLL_FAULT_PEER_LOST: @rank disconnected without a word (its node,
 *	network or module went away)
 * @KCOLL_FAULT_PEER_FAILED: @rank's own communicator failed with nobody
 *	to blame (a timeout, an abort; its errno, positive, in @code): it is
 *	alive but takes part in nothing more
 */
enum kcoll_fault_kind {
	KCOLL_FAULT_NONE,
	KCOLL_FAULT_MISMATCH,
	KCOLL_FAULT_PEER_EXIT,
	KCOLL_FAULT_PEER_SIGNAL,
	KCOLL_FAULT_PEER_CLOSE,
	KCOLL_FAULT_PEER_LOST,
	KCOLL_FAULT_PEER_FAILED
};

/**
 * struct kcoll_fault - KCOLL_IOC_FAULT: why the communicator failed
 * @size: sizeof(struct kcoll_fault)
 * @kind: out: enum kcoll_fault_kind; NONE while nothing failed
 * @op_id: out: the operation that failed first (its kcoll_submit.op_id;
 *	the operation number on the wire is its low 32 bits)
 * @status: out: its errno, negative
 * @rank: out: the rank at fault
 * @reporter: out: the rank that found it (this rank, or the peer that
 *	told this one)
 * @pid: out: PEER_*: @rank's process (as its node's initial pid namespace
 *	sees it)
 * @code: out: PEER_EXIT: the exit status; PEER_SIGNAL: the signal;
 *	PEER_FAILED: its errno (positive)
 * @pad: zero
 * @fp_rank: out: MISMATCH: the operation's header as @rank sent it (the
 *	layout of KC_HDR_* in algo/kc_exec.h: version, size, op, dtype,
 *	redop, root, number, count, algorithm per level)
 * @fp_mine: out: MISMATCH: the header this rank would have sent @rank
 *
 * The first fault is kept: later operations fail with the communicator's
 * error and change nothing here.  ENOTCONN without a communicator, EBUSY
 * while it is being created.
 */
struct kcoll_fault {
	__u32 size;
	__u32 kind;
	__u64 op_id;
	__s32 status;
	__u32 rank;
	__u32 reporter;
	__u32 pid;
	__u32 code;
	__u32 pad;
	__u8 fp_rank[32];
	__u8 fp_mine[32];
};

/**
 * enum kcoll_peer_fate - struct kcoll_peers.fates[]: a rank, as this one knows it
 * @KCOLL_FATE_ALIVE: connected (or this rank itself)
 * @KCOLL_FATE_FAILED: disconnected after saying that its communicator
 *	failed: alive, and may shrink as well
 * @KCOLL_FATE_LOST: disconnected without a word
 * @KCOLL_FATE_NAMED: a rank (this one, or a peer that told) found it gone
 * @KCOLL_FATE_LEFT: said its process leaves (exit, signal, close)
 *
 * A later fate wins over an earlier one: ALIVE and FAILED are alive.
 */
enum kcoll_peer_fate {
	KCOLL_FATE_ALIVE,
	KCOLL_FATE_FAILED,
	KCOLL_FATE_LOST,
	KCOLL_FATE_NAMED,
	KCOLL_FATE_LEFT
};

/**
 * struct kcoll_peers - KCOLL_IOC_PEERS: which ranks are alive, as this one knows
 * @size: sizeof(struct kcoll_peers)
 * @nranks: in: bytes at @fates; out: the communicator's size (ENOSPC, with
 *	@nranks set, if @fates is shorter)
 * @fates: user address of @nranks bytes: out: enum kcoll_peer_fate of
 *	each rank, by rank
 *
 * What the peers said before their connections went down
 * (KCOLL_FEAT_PEERS): after a failure the survivors agree on it whenever
 * every failure was told to every survivor, which the first rank to fail
 * does.  ENOTCONN without a communicator, EBUSY while it is being created.
 */
struct kcoll_peers {
	__u32 size;
	__u32 nranks;
	__u64 fates;
};

#define KCOLL_IOC_INFO		_IOWR(KCOLL_IOC_MAGIC, 0x00, struct kcoll_info)
#define KCOLL_IOC_COMM_CREATE	_IOWR(KCOLL_IOC_MAGIC, 0x01, struct kcoll_comm_create)
#define KCOLL_IOC_MEM_REG	_IOWR(KCOLL_IOC_MAGIC, 0x02, struct kcoll_mem_reg)
#define KCOLL_IOC_MEM_DEREG	_IOWR(KCOLL_IOC_MAGIC, 0x03, struct kcoll_mem_dereg)
#define KCOLL_IOC_SUBMIT	_IOWR(KCOLL_IOC_MAGIC, 0x04, struct kcoll_submit)
#define KCOLL_IOC_REAP		_IOWR(KCOLL_IOC_MAGIC, 0x05, struct kcoll_reap)
#define KCOLL_IOC_ABORT		_IOWR(KCOLL_IOC_MAGIC, 0x06, struct kcoll_abort)
#define KCOLL_IOC_FAULT		_IOWR(KCOLL_IOC_MAGIC, 0x07, struct kcoll_fault)
#define KCOLL_IOC_PEERS		_IOWR(KCOLL_IOC_MAGIC, 0x08, struct kcoll_peers)

#endif /* _UAPI_LINUX_KCOLL_H */
