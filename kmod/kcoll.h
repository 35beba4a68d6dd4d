/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll module internals shared by the kmod/ files.
 *
 * Object ownership:
 *   struct kcoll_file     one per open file; owns the registrations and,
 *                         once created, the communicator.
 *   struct kcoll_comm     rank table, listener, one connection per peer,
 *                         the queue of operations and their completions.
 *   struct kcoll_conn     one RC QP to one peer with its receive slots.
 *   struct kcoll_comm_op  one submitted operation ("op"): plan, buffers,
 *                         executor.  (enum kcoll_op, the kind of
 *                         operation, has the shorter name.)
 *   struct kcoll_mr       pinned user pages (or scratch pages) mapped once
 *                         into the kernel (vmap) and for the RDMA device.
 */
#ifndef KCOLL_H
#define KCOLL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/eventfd.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <crypto/sha2.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "kc_coll.h"
#include "kc_cost.h"
#include "kc_exec.h"
#include "kc_topo.h"
#include "uapi/linux/kcoll.h"
#include "uapi/linux/kcoll_genl.h"
#include "uapi/linux/kcoll_wire.h"

#define KCOLL_MAX_RANKS		4096
#define KCOLL_MAX_INFLIGHT	1024
#define KCOLL_MAX_SGE		32
#define KCOLL_MAX_REG_BYTES	BIT_ULL(36)

/* ------------------------------------------------------------ tunables */

struct kcoll_algo_sel {
	struct kc_algo_cfg op[KCOLL_OP_COUNT];
};

/*
 * One level's links for automatic selection: latency, link and reduction
 * throughput.  The rates are kept in Mbit/s (10^6 bit/s) so that a slow
 * link (an emulated one moves a few hundred Mbit/s) has a value; sysfs
 * shows and takes them in Gbit/s with up to three decimals.
 */
struct kcoll_link_tun {
	u32 alpha_ns;
	u32 mbps;
	u32 reduce_mbps;
	u32 auto_mesh;	/* 0 or 1: kc_cost_link.auto_mesh (levels 1, 2) */
};

/*
 * A copy of every tunable of kcoll_tunables.h, as a communicator takes
 * them at creation; sel is algo parsed.
 */
struct kcoll_tunables {
	u32 chunk_bytes;
	u32 slots;
	u32 timeout_ms;
	u32 connect_timeout_ms;
	u32 qp_timeout;			/* local ACK timeout, 4.096 us * 2^qp_timeout */
	u32 qp_retry_count;		/* transport retries before IB_WC_RETRY_EXC_ERR */
	u32 listen_port;
	char algo[KCOLL_ALGO_STR_MAX];
	struct kcoll_algo_sel sel;
	struct kcoll_link_tun link[KCOLL_LEVEL_COUNT];
	u32 conv_pct;			/* level-2 convergence ratio C, percent */
	u64 user_max_bytes;		/* not a default: kcoll_user_max_bytes() */
	u32 history_ops;		/* flight record entries of a new communicator */
	u32 history_keep_ms;		/* not defaults: read when records are pruned */
	u64 history_max_bytes;
	u32 stall_ms;			/* no progress for this long: probe (0: off) */
	u32 fingerprint;		/* 0: first messages carry no header */
	u32 connect_on_need;		/* 1: no full mesh at creation */
};

#define KCOLL_CHUNK_MIN		4096u
/*
 * A chunk goes out in one send of at most KCOLL_MAX_SGE SGEs: the
 * executor's header (first message of an operation), then the pages of
 * the chunk, one more than its size in pages as it may start mid-page.
 */
#define KCOLL_CHUNK_MAX		((u32)((KCOLL_MAX_SGE - 2) * PAGE_SIZE))
/*
 * A receive slot holds the largest message, a chunk after the executor's
 * header: whole pages (alloc_pages_exact()), what kcoll_comm_footprint()
 * counts.
 */
static inline u32 kcoll_rx_slot_bytes(u32 chunk_bytes)
{
	return chunk_bytes + KC_HDR_BYTES;
}

/*
 * The largest message consumed in the completion work (kcoll_rx_done()):
 * a header and a page of data; bigger ones go to feed_work.
 */
#define KCOLL_FEED_INLINE_BYTES	(KC_HDR_BYTES + PAGE_SIZE)

/*
 * Control messages (kcoll_ctl.c) a connection can send at once, and the
 * receive slot kept for the peer's: a control message is copied out and
 * its slot reposted at once, so one more slot than data (slots) and
 * credits (slots) can hold keeps one free for it.
 */
#define KCOLL_CTL_TX		2
#define KCOLL_CTL_RX		1
/*
 * How long a failing communicator lets its control messages out: a
 * verdict or a rank to blame, and (shorter: an abort returns its
 * operations at once, and a peer that is cut off never acknowledges)
 * that it failed with nobody to blame.
 */
#define KCOLL_CTL_WAIT_MS	200
#define KCOLL_CTL_WAIT_NONE_MS	20

/* Receive slots of one connection. */
static inline u32 kcoll_conn_nrx(u32 slots)
{
	return 2 * slots + KCOLL_CTL_RX;
}

#define KCOLL_SLOTS_MIN		1u
#define KCOLL_SLOTS_MAX		64u
#define KCOLL_TIMEOUT_MIN	10u
#define KCOLL_TIMEOUT_MAX	3600000u
#define KCOLL_ALPHA_NS_MAX	10000000u	/* 10 ms */
#define KCOLL_MBPS_MIN		1u		/* 0.001 Gbit/s */
#define KCOLL_MBPS_MAX		1000000000u	/* 1000000 Gbit/s */
#define KCOLL_CONV_PCT_MIN	100u		/* C >= 1 */
#define KCOLL_CONV_PCT_MAX	100000u
#define KCOLL_QP_TIMEOUT_MIN	8u		/* 1.05 ms */
#define KCOLL_QP_TIMEOUT_MAX	24u		/* 68.7 s */
#define KCOLL_QP_RETRY_MAX	7u

/* A consistent copy of the current defaults. */
void kcoll_tunables_get(struct kcoll_tunables *t);
int kcoll_algo_parse(const char *s, struct kcoll_algo_sel *sel);
int kcoll_check_chunk(u32 v);
int kcoll_check_slots(u32 v);
int kcoll_check_timeout(u32 v);
/* The cost model (algo/kc_cost.h) the link tunables in @t describe. */
void kcoll_tunables_model(const struct kcoll_tunables *t, struct kc_cost_model *m);
/* At load, before kcoll_dev_init(): checks the defaults, lists the attributes. */
int kcoll_tunables_init(void);

extern const struct attribute_group *kcoll_sysfs_groups[];

/* --------------------------------------------------------------- memory */

struct kcoll_mr {
	struct page **pages;
	unsigned long npages;
	void *vaddr;			/* vmap of all pages */
	u64 uaddr;			/* user address of the first byte */
	bool user;			/* pinned user pages, else our own */
	bool writable;			/* pinned for writing; else never written */
	u64 len;
	u32 pgoff;			/* offset of the first byte in pages[0] */
	struct mm_struct *mm;		/* charged mm (pinned_vm), NULL for kernel pages */
	struct ib_device *ibdev;	/* dma[] maps pages for this device */
	u64 *dma;
	u32 handle;			/* registration handle, 0 for per-op pins */
	atomic_t users;			/* operations not yet complete using it */
};

/*
 * How kcoll_mr_pin() pins: for writing, for reading only (a send buffer of
 * one operation: the pages as they are now), or for reading only as a
 * registration that must see later writes (writable private memory is
 * made the process's own copy first).
 */
enum kcoll_pin {
	KCOLL_PIN_WRITE,
	KCOLL_PIN_READ,
	KCOLL_PIN_READ_REG,
};

struct kcoll_mr *kcoll_mr_pin(u64 uaddr, u64 len, enum kcoll_pin how);
struct kcoll_mr *kcoll_mr_alloc_kernel(u64 len);
int kcoll_mr_dma_map(struct kcoll_mr *mr, struct ib_device *ibdev);
void kcoll_mr_free(struct kcoll_mr *mr);

/* ----------------------------------------------------------- RDMA device */

struct kcoll_ibdev {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct list_head node;
};

/* kcoll_ibdev.c: the ib_client; a device's PD for as long as it is there. */
int kcoll_ibdev_init(void);
void kcoll_ibdev_exit(void);
struct kcoll_ibdev *kcoll_ibdev_get(struct ib_device *ibdev);

/* ---------------------------------------------------------- connections */

enum kcoll_conn_state {
	KCOLL_CONN_IDLE = 0,
	KCOLL_CONN_CONNECTING,
	KCOLL_CONN_UP,
	KCOLL_CONN_FAILED,
	KCOLL_CONN_CLOSED,
	KCOLL_CONN_AUTH,		/* accepted: waiting for the peer's proof */
};

struct kcoll_conn;

/* One receive slot: a buffer for a chunk and its header, posted to the RQ. */
struct kcoll_rx {
	struct ib_cqe cqe;
	struct kcoll_conn *conn;
	void *buf;
	u64 dma;
	u32 len;			/* bytes that arrived */
	u32 tag;
	bool posted;			/* on the RQ (kcoll_adopt.c reposts the rest) */
};

/* One send work request: header and data (up to KCOLL_MAX_SGE pieces) or a credit. */
struct kcoll_tx {
	struct ib_cqe cqe;
	struct kcoll_conn *conn;
	struct list_head free;
	s8 ctl;				/* the control buffer it sends, or -1 */
	struct ib_sge sge[KCOLL_MAX_SGE];
};

struct kcoll_conn {
	struct kcoll_comm *comm;
	u32 peer;
	bool active;			/* we connect (peer < rank), else accept */
	struct rdma_cm_id *cm_id;
	struct kcoll_ibdev *kdev;
	struct ib_cq *cq;
	u32 cq_size;
	struct ib_qp *qp;
	u32 nsge;
	int state;			/* enum kcoll_conn_state */
	bool stopped;			/* disconnected and drained */
	bool lost;			/* the peer disconnected (cm handler) */
	bool departed;			/* lost and drained: all it sent is here */
	bool lost_notified;		/* the peer-lost event went out */
	/*
	 * Passive side: the peer asked again while this attempt was not up,
	 * so it gave that attempt up (set by the listener, see
	 * kcoll_passive_reset()).
	 */
	bool superseded;
	int cm_err;
	/* the handshake's nonces (uapi/linux/kcoll_wire.h) */
	u8 nonce_active[KCOLL_NONCE_BYTES];
	u8 nonce_passive[KCOLL_NONCE_BYTES];
	struct kcoll_auth_msg *proof;	/* active side with a secret: what it sends */
	u64 proof_dma;
	u32 nrx;
	struct kcoll_rx *rx;		/* [nrx] */
	/* the header of the first message of an operation, see kcoll_xport.c */
	void *hdr;			/* KC_HDR_BYTES */
	u64 hdr_dma;
	u32 ntx;
	struct kcoll_tx *tx;		/* [ntx] */
	struct list_head tx_free;
	u32 tx_busy;			/* posted sends not yet completed */
	/* data that arrived before its operation started, FIFO */
	struct kcoll_rx **early;	/* [nrx] */
	u32 early_head;
	u32 early_n;
	/* control messages out (kcoll_ctl.c): KCOLL_CTL_TX buffers */
	struct kcoll_ctl *ctl;
	u64 ctl_dma;
	u8 ctl_busy;			/* bit i: ctl[i] is posted */
	/*
	 * The peer said it leaves (KCOLL_CTL_BYE, KCOLL_CTL_PEER_FAULT): enum
	 * kcoll_fault_kind, and the rank it is about (itself, or the rank
	 * whose leaving failed its communicator)
	 */
	u32 bye_kind;
	u32 bye_rank;
	u32 bye_pid;
	u32 bye_code;
	/* it said its communicator failed (VERDICT, PEER_FAULT): it is alive */
	bool told;
	u32 fail_err;			/* PEER_FAULT with nobody to blame: its errno */
	/* the peer's answer to this rank's last probe (kcoll_stall.c) */
	bool probed;			/* a probe went out to it */
	bool replied;
	u32 rep_submitted;		/* its last submitted operation */
	u32 rep_active;			/* its active operation, 0: none */
	u32 rep_flags;			/* KCOLL_CTL_REPLY_* */
	u32 rep_pid;
	u32 rep_w[KCOLL_CTL_W_WORDS];	/* what it waits for: KCOLL_CTL_W_* */
	/*
	 * Shrink (kcoll_adopt.c).  parked: the communicator failed and the
	 * connection outlives it for a communicator of the survivors;
	 * adopted: one took it over and waits for the peer's RESET; reused:
	 * it is up that way, without a handshake (for observers).
	 */
	bool parked;
	bool adopted;
	bool reused;
	/* connect on need: how long this rank waited for it to come up, us */
	u32 connect_us;
	bool charged;			/* its footprint is in comm->mem_bytes */
	/* the peer's KCOLL_CTL_RESET, once it arrived: whose connection it is now */
	bool reset_seen;
	u32 reset_rank;			/* the peer's rank in that communicator */
	u32 reset_other;		/* this rank's */
	u32 reset_nranks;
	u8 reset_uid[KCOLL_UID_BYTES];
};

/* kcoll_conn.c: one connection, and the tear-down of all of a communicator's. */
int kcoll_conn_start(struct kcoll_conn *conn);
int kcoll_conn_accept(struct kcoll_conn *conn, struct rdma_cm_id *id,
		      const struct kcoll_cm_req *req);
void kcoll_conn_destroy(struct kcoll_conn *conn, int state);
void kcoll_conn_stop(struct kcoll_conn *conn);
int kcoll_check_dev_sges(struct kcoll_comm *comm, struct ib_device *dev);
int kcoll_conn_wc_err(struct kcoll_conn *conn, const struct ib_wc *wc);
u32 kcoll_cm_flags(const struct kcoll_comm *comm);
bool kcoll_hello_valid(const struct kcoll_cm_req *h);
struct sockaddr_storage kcoll_src_addr(const struct kcoll_comm *comm);
const struct sockaddr *kcoll_conn_peer_addr(const struct rdma_cm_id *id);
void kcoll_conns_stop(struct kcoll_comm *comm);
void kcoll_conns_stop_lost(struct kcoll_comm *comm);
void kcoll_conns_destroy(struct kcoll_comm *comm);
bool kcoll_conns_on_device(struct kcoll_comm *comm, struct ib_device *ibdev);
int kcoll_conns_remove_device(struct kcoll_comm *comm, struct ib_device *ibdev);

/*
 * kcoll_connect.c: connect the full mesh (the creator's thread), or the
 * peers an operation needs (the submitter's, connect_on_need).
 */
int kcoll_conns_connect(struct kcoll_comm *comm);
bool kcoll_conns_ready(struct kcoll_comm *comm, const u32 *peers, u32 n);
int kcoll_conns_need(struct kcoll_comm *comm, const u32 *peers, u32 n);

/*
 * kcoll_listen.c: the node's listeners, one per network namespace and
 * port, and the table of communicators they hand requests to.  Attach
 * in the creator's context; detach with comm->conn_lock held.
 */
struct kcoll_listener;

/* Refusals no communicator can be charged with, per namespace. */
struct kcoll_net_stats {
	atomic64_t refused_unknown;	/* no such id and rank (yet) */
	atomic64_t refused_stale;	/* the id was destroyed */
	atomic64_t refused_bad;		/* not a kcoll request of this version */
	atomic64_t dup_ids;		/* creations refused: id and rank exist */
};

/* The namespace's totals (port 0) or one listener, for observers. */
struct kcoll_listen_info {
	u16 port;
	u16 family;			/* AF_INET, AF_INET6; 0 for the totals */
	u32 users;			/* communicators attached (totals: registered) */
	u64 refused_unknown;
	u64 refused_stale;
	u64 refused_bad;
	u64 dup_ids;
};

int kcoll_listen_init(void);
void kcoll_listen_exit(void);
int kcoll_listen_attach(struct kcoll_comm *comm, bool port_given);
void kcoll_listen_detach(struct kcoll_comm *comm);
int kcoll_listen_report(struct net *net,
			int (*fill)(const struct kcoll_listen_info *li, void *arg), void *arg);

/* kcoll_fault.c: fault_abandon_connects, for the tests. */
bool kcoll_fault_abandon_armed(void);
bool kcoll_fault_abandon(void);

/* ----------------------------------------------------------- membership */

void kcoll_auth_name(struct kcoll_comm *comm, const u8 uid[KCOLL_UID_BYTES]);
int kcoll_auth_init(struct kcoll_comm *comm, const u8 *secret, u32 len);
void kcoll_auth_free(struct kcoll_comm *comm);
void kcoll_auth_nonce(u8 nonce[KCOLL_NONCE_BYTES]);
int kcoll_auth_mac(const struct kcoll_conn *conn, u8 role, u8 mac[KCOLL_MAC_BYTES]);
bool kcoll_auth_check(const struct kcoll_conn *conn, u8 role, const u8 mac[KCOLL_MAC_BYTES]);
bool kcoll_auth_addr_ok(const struct kcoll_comm *comm, u32 peer, const struct sockaddr *from);
void kcoll_auth_refused(struct kcoll_comm *comm, u32 peer, const struct sockaddr *from,
			const char *why);

/* ------------------------------------------------------------ transport */

extern const struct kc_xport_ops kcoll_xport_ops;
int kcoll_conn_alloc_queues(struct kcoll_conn *conn);
void kcoll_conn_free_queues(struct kcoll_conn *conn);
int kcoll_conn_post_rx_all(struct kcoll_conn *conn);
int kcoll_rx_post(struct kcoll_rx *rx);
int kcoll_conn_send_proof(struct kcoll_conn *conn);
void kcoll_conn_probe(struct kcoll_conn *conn);
void kcoll_conn_feed_early(struct kcoll_conn *conn);
u32 kcoll_conn_pending(const struct kcoll_conn *conn, u8 op_seq);
void kcoll_comm_feed_work(struct work_struct *work);
int kcoll_conn_send_ctl(struct kcoll_conn *conn, const struct kcoll_ctl *m);

/*
 * kcoll_adopt.c: a shrink takes the failed parent's connections over.
 * KCOLL_CREATE_F_PARENT: @comm the parent (its file held), @ranks each
 * new rank's rank in it.
 */
struct kcoll_parent {
	struct kcoll_comm *comm;
	u32 *ranks;
};

/*
 * How long a connecting side waits for the peer's RESET before it
 * connects anew: a tenth of the connect timeout, at least this long.
 */
#define KCOLL_ADOPT_WAIT_MIN_MS	1000

void kcoll_conns_park(struct kcoll_comm *comm);
bool kcoll_conns_parkable_quiet(struct kcoll_comm *comm);
u32 kcoll_conns_adopt(struct kcoll_comm *comm, const struct kcoll_parent *parent);
void kcoll_adopt_ctl(struct kcoll_conn *conn, const struct kcoll_ctl *m);
void kcoll_adopt_failed(struct kcoll_conn *conn, int err);
struct kcoll_conn *kcoll_conn_lock(struct kcoll_conn *const *owner);

struct kcoll_comm_op;

/* kcoll_ctl.c: control messages, and why the first operation failed. comm->lock held. */
void kcoll_ctl_init(struct kcoll_ctl *m, u8 type, u32 op_num);
bool kcoll_ctl_conn_usable(const struct kcoll_conn *conn);
void kcoll_ctl_recv(struct kcoll_conn *conn, const void *buf, u32 len);
void kcoll_ctl_mismatch(struct kcoll_comm *comm, struct kcoll_comm_op *op);
void kcoll_ctl_tell(struct kcoll_comm *comm);
void kcoll_comm_fail_conn(struct kcoll_conn *conn, int err);
void kcoll_ctl_blame_lost(struct kcoll_comm *comm, struct kcoll_comm_op *op);
void kcoll_ctl_op_start(struct kcoll_comm *comm, struct kcoll_comm_op *op);
void kcoll_ctl_peer_gone(struct kcoll_comm *comm, struct kcoll_comm_op *op, u32 peer);
void kcoll_ctl_bye(struct kcoll_comm *comm, u32 why, u32 code);
u32 kcoll_ctl_leave_reason(u32 *code);
void kcoll_ctl_bye_if_doomed(struct kcoll_comm *comm);
void kcoll_comm_fault(struct kcoll_comm *comm, struct kcoll_fault *out);
void kcoll_comm_peers(struct kcoll_comm *comm, u8 *fates);
void kcoll_ctl_watch(struct kcoll_comm *comm, struct mm_struct *mm);
void kcoll_ctl_unwatch(struct kcoll_comm *comm);

/*
 * kcoll_stall.c: an operation that makes no progress for stall_ms is
 * recorded, the peers are probed and the rank to blame named.
 * Start/stop: comm->lock held; init and sync: process context.
 */
#define KCOLL_STALL_MAX		3600000u
int kcoll_check_stall(u32 v);
void kcoll_stall_init(struct kcoll_comm *comm, u32 stall_ms);
void kcoll_stall_op_start(struct kcoll_comm *comm);
void kcoll_stall_sync(struct kcoll_comm *comm);
void kcoll_stall_free(struct kcoll_comm *comm);
void kcoll_stall_probe_recv(struct kcoll_conn *conn, const struct kcoll_ctl *m);
void kcoll_stall_reply_recv(struct kcoll_conn *conn, const struct kcoll_ctl *m);

/* ----------------------------------------------------------- operations */

struct kcoll_comm_op {
	struct list_head node;
	struct kcoll_comm *comm;
	u64 id;
	u64 cookie;
	u8 seq;
	struct kc_op_desc desc;
	u64 *a2av;			/* AlltoAllv counts/displacements, 4 * nranks */
	struct kc_plan *plan;
	struct kcoll_mr *mr[KC_BUF_COUNT];	/* per buffer: mapping (may repeat) */
	u64 mroff[KC_BUF_COUNT];	/* byte offset from the first page start */
	struct kcoll_mr *own[KC_BUF_COUNT];	/* per-op pins and scratch to free */
	struct kc_exec ex;
	bool ex_ready;
	u64 start_ns;
	u8 algo[KCOLL_LEVEL_COUNT];	/* what the plan runs per level, for observers */
	u32 fallback;			/* the plan's: configured levels not run */
	char note[KC_PLAN_MAX_NOTE];	/* the plan's note, kept only with a fallback */
	struct kcoll_completion cpl;
	/* Completed before its sends ended: it keeps its buffers until then. */
	bool linger;
};

struct kcoll_file;

struct kcoll_comm_op *kcoll_op_alloc(void);
int kcoll_op_prepare(struct kcoll_comm_op *op, struct kcoll_file *kf, struct kcoll_comm *comm,
		     const struct kcoll_submit *arg);
int kcoll_op_dma_map(struct kcoll_comm_op *op, struct kcoll_comm *comm);
void kcoll_op_release(struct kcoll_comm_op *op);
void kcoll_op_free(struct kcoll_comm_op *op);

/* ---------------------------------------------------------- statistics */

/* A completed operation as observers see it (KCOLL_A_COMM_LAST_OP). */
struct kcoll_lastop {
	u64 id;
	u64 count;
	u64 bytes;
	u64 duration_ns;
	u32 op;
	u32 status;			/* positive errno, 0: success */
	u8 algo[KCOLL_LEVEL_COUNT];
	u32 fallback;			/* KCOLL_LASTOP_A_FALLBACK */
	char note[KC_PLAN_MAX_NOTE];	/* KCOLL_LASTOP_A_NOTE, with a fallback */
};

/*
 * kcoll_stats.c: what a communicator has done, for observers (generic
 * netlink): counters and a ring of the last completed operations.
 * comm->lock held.
 */
struct kcoll_stats {
	u64 ops_done;
	u64 bytes_done;
	u64 ops_failed;
	u64 ops_timed_out;
	struct kcoll_lastop last[KCOLL_GENL_LAST_OPS];	/* ring of the last ops */
	u32 last_next;			/* slot the next completion takes */
	u32 last_n;			/* valid entries */
};

/* Count the completed @op and keep it in the ring; returns its entry. */
const struct kcoll_lastop *kcoll_stats_record(struct kcoll_stats *st,
					      const struct kcoll_comm_op *op);
/* The @i-th oldest of the kept operations, @i < st->last_n. */
const struct kcoll_lastop *kcoll_stats_last(const struct kcoll_stats *st, u32 i);

/* --------------------------------------------------------- flight record */

/* One operation of a flight record (KCOLL_A_HIST_OP); times CLOCK_MONOTONIC. */
struct kcoll_hist_ent {
	u64 id;				/* the submit id; 0: unused slot */
	u64 count;
	u64 bytes;
	u64 submit_ns;
	u64 start_ns;			/* 0: not started */
	u64 end_ns;			/* 0: not completed */
	u32 op, dtype, redop, root;
	u32 status;			/* positive errno, 0: success */
	u8 state;			/* enum kcoll_hist_state */
	u8 algo[KCOLL_LEVEL_COUNT];
};

/*
 * kcoll_history.c: a communicator's flight record, the last @cap
 * operations (history_ops at creation) with the communicator's identity;
 * after its destruction a compact copy joins the module's retained
 * records.  A live one is under comm->lock.
 */
struct kcoll_hist {
	struct list_head node;		/* retained records */
	u64 seq;			/* retained: order of destruction */
	u64 comm_id;
	u8 unique_id[KCOLL_UID_BYTES];
	u32 rank, nranks;
	pid_t pid;
	kuid_t uid;
	char task[TASK_COMM_LEN];	/* current->comm of the creator */
	u64 created_real_ns;		/* CLOCK_REALTIME */
	u64 real_off_ns;		/* CLOCK_REALTIME - CLOCK_MONOTONIC at creation */
	u64 destroyed_real_ns;		/* 0 while it lives */
	u64 destroyed_ns;		/* CLOCK_MONOTONIC, for history_keep_ms */
	int err;			/* the error it ended with (negative), 0 if none */
	u64 recorded;			/* operations recorded in all */
	size_t bytes;			/* retained: its allocation */
	u32 ops_max;			/* history_ops at creation */
	u32 cap;			/* entries in ent[] */
	struct kcoll_hist_ent ent[];
};

struct kcoll_comm;
struct kcoll_comm_op;

int kcoll_check_history_ops(u32 v);
int kcoll_check_history_keep(u32 v);
/* At creation (the creator's context): comm->hist, NULL with history_ops 0. */
int kcoll_history_init(struct kcoll_comm *comm);
/* comm->lock held: an operation queued, started, completed. */
void kcoll_history_submit(struct kcoll_comm *comm, const struct kcoll_comm_op *op);
void kcoll_history_start(struct kcoll_comm *comm, const struct kcoll_comm_op *op);
void kcoll_history_complete(struct kcoll_comm *comm, const struct kcoll_comm_op *op);
/* Destruction begins (comm->lock held): the error it ended with. */
void kcoll_history_closing(struct kcoll_comm *comm);
/* Destruction ends, every operation completed: keep a compact copy. */
void kcoll_history_retire(struct kcoll_comm *comm);
/* With the communicator (kcoll_comm_free()). */
void kcoll_history_free(struct kcoll_comm *comm);
/* The @i-th oldest entry, @i < kcoll_history_len(h). */
u32 kcoll_history_len(const struct kcoll_hist *h);
const struct kcoll_hist_ent *kcoll_history_ent(const struct kcoll_hist *h, u32 i);
/*
 * Call @fill on the retained record of least seq above *@after (pruned
 * first) with the retained records' lock held, and set *@after to its
 * seq.  Returns 1 when one was visited, 0 when none is left, or fill's
 * error.
 */
int kcoll_history_visit_next(u64 *after, int (*fill)(const struct kcoll_hist *h, void *arg),
			     void *arg);
void kcoll_history_exit(void);

/* ---------------------------------------------------------- communicator */

struct mem_cgroup;

struct kcoll_comm {
	u64 id;
	struct list_head node;		/* kcoll_comms */
	u32 rank;
	u32 nranks;
	struct kcoll_rank *ranks;
	struct sockaddr_storage *addrs;
	struct kc_topo topo;
	struct kcoll_algo_sel sel;
	u32 chunk_bytes;
	u32 slots;
	u32 timeout_ms;
	u32 connect_timeout_ms;
	u8 qp_timeout;			/* the tunables at creation (kcoll_conn.c) */
	u8 qp_retry_count;
	bool no_fingerprint;		/* fingerprint=0: first messages carry no header */
	struct eventfd_ctx *efd;

	/* naming: the node's listener finds it by (unique_id, rank) in net */
	u8 unique_id[KCOLL_UID_BYTES];
	bool uid_given;			/* the caller's id, not the table's digest */
	struct net *net;		/* the creator's network namespace, held */
	struct hlist_node net_node;	/* kcoll_net.comms, while attached */
	bool attached;
	bool connected;			/* its creation succeeded */
	struct kcoll_listener *listener;	/* NULL for the highest rank */

	/* set-up and tear-down of connections (process context only) */
	struct mutex conn_lock;
	struct kcoll_conn *conns;	/* [nranks], conns[rank] unused */
	wait_queue_head_t conn_wq;
	/*
	 * connect_on_need: no connection at creation; a submission connects
	 * what its operation needs first, one at a time (need_lock).
	 */
	bool on_need;
	struct mutex need_lock;		/* one submission connects at a time */

	/* data path: executor, operation queue, completions */
	struct mutex lock;
	int err;			/* first fatal error, then refused */
	bool aborted;			/* KCOLL_IOC_ABORT: refused with -ECANCELED */
	int lost_err;			/* a peer left (what its leaving gave) */
	bool dead;			/* QPs stopped: nothing may be posted */
	u8 next_seq;
	u64 next_id;
	struct kcoll_comm_op *active;
	struct list_head queued;
	struct list_head done;
	/*
	 * Failed operations the caller has reaped whose buffers a send may
	 * still read: freed once fail_work has parked or stopped every
	 * connection (kcoll_comm_unlinger()).
	 */
	struct list_head lingering;
	u32 nops;			/* queued + active + done */
	wait_queue_head_t done_wq;
	struct delayed_work timeout_work;
	struct work_struct fail_work;
	struct work_struct lost_work;	/* a peer left: does the op need it? */
	struct work_struct qp_err_work;	/* a QP reported a fatal error */
	struct work_struct feed_work;	/* chunks for the executor (kcoll_xport.c) */
	struct kcoll_stats stats;
	u32 reused;			/* connections taken over from a parent, up */
	struct kcoll_hist *hist;	/* flight record (kcoll_history.c), may be NULL */
	bool fail_notified;		/* the op-failure event went out */
	/* why the first operation failed (kcoll_ctl.c), KCOLL_IOC_FAULT */
	struct kcoll_fault fault;
	bool fault_told;		/* the peers were told (kcoll_ctl_tell()) */
	bool bye_sent;			/* this rank said it leaves (kcoll_ctl_bye()) */
	u32 ctl_wait_ms;		/* fail_work lets what they say out this long */
	/* the owner's address space, watched for its process's end */
	struct mmu_notifier mm_watch;
	struct mm_struct *mm;
	/* a peer's verdict on an operation not started here yet */
	struct kcoll_ctl verdict;
	u32 verdict_from;
	bool verdict_pending;
	u32 fallback_notified;		/* bit op: the algo-fallback event went out */
	/* stall detection (kcoll_stall.c) */
	u32 stall_ms;			/* the tunable at creation, 0: off */
	struct delayed_work stall_work;
	struct pid *owner;		/* the creator's thread group, held */
	struct kcoll_stall stall;	/* the last stall, KCOLL_A_COMM_STALL */
	u64 stall_seen_op;		/* the op and progress last looked at ... */
	u64 stall_seen_progress;
	u64 stall_seen_ns;		/* ... and when that progress was first seen */
	u64 stall_probe_ns;		/* probes out since, 0: none */
	bool closing;			/* destroyed: no more events about it */

	/* membership (kmod/kcoll_auth.c) */
	struct crypto_shash *auth_tfm;	/* HMAC-SHA256 keyed with the secret, or NULL */
	u8 table_digest[SHA256_DIGEST_SIZE];
	atomic64_t refused;		/* connections refused: address or proof */

	/* for observers and automatic selection; fixed at creation */
	pid_t pid;			/* tgid of the creator */
	kuid_t uid;			/* effective uid of the creator: the owner */
	/* what it is charged (kcoll_guard.c); fixed at creation */
	u64 mem_bytes;			/* worst-case footprint against user_max_bytes */
	struct mem_cgroup *memcg;	/* the creator's, for work done on its behalf */
	struct kc_cost_model model;	/* sysfs link model for automatic selection */
};

/*
 * Creation in two steps: kcoll_comm_create() checks the arguments, builds
 * the communicator, takes over what @parent (NULL: none) can give
 * (kcoll_adopt.c) and listens (it does not wait); kcoll_comm_connect()
 * waits for every peer (interruptibly; kcoll_comm_cancel() from another
 * thread ends it with -ECANCELED).  A communicator whose connect failed
 * is freed with kcoll_comm_discard().
 */
struct kcoll_comm *kcoll_comm_create(const struct kcoll_comm_create *arg,
				     struct kcoll_rank *ranks, const char *algo, const u8 *secret,
				     const struct kcoll_parent *parent);
int kcoll_comm_connect(struct kcoll_comm *comm);
void kcoll_comm_cancel(struct kcoll_comm *comm);
void kcoll_comm_discard(struct kcoll_comm *comm);
void kcoll_comm_destroy(struct kcoll_comm *comm);
/* The id the next submission gets (stable while the caller serialises submissions). */
u64 kcoll_comm_next_id(struct kcoll_comm *comm);
/* Queue @op as operation @id (kcoll_comm_next_id()); @op belongs to the comm after 0. */
int kcoll_comm_submit(struct kcoll_comm *comm, struct kcoll_comm_op *op, u64 id);
void kcoll_comm_fail(struct kcoll_comm *comm, int err);
void kcoll_comm_lost(struct kcoll_comm *comm, int err);
void kcoll_comm_peer_left(struct kcoll_comm *comm, u32 peer);
void kcoll_comm_destroy_why(struct kcoll_comm *comm, u32 why, u32 code);
void kcoll_comm_advance(struct kcoll_comm *comm);
/*
 * Reaping in three steps, so that nothing is lost to a failed copy-out:
 * wait (interruptibly) until a completion is there (*@left: jiffies, or
 * MAX_SCHEDULE_TIMEOUT), copy the oldest ones without removing them,
 * then remove exactly those.  The caller keeps other reapers out between
 * peek and consume (kcoll_file.reap_lock).
 */
int kcoll_comm_reap_wait(struct kcoll_comm *comm, long *left);
u32 kcoll_comm_reap_peek(struct kcoll_comm *comm, struct kcoll_completion *out, u32 max);
void kcoll_comm_reap_consume(struct kcoll_comm *comm, u32 n);
void kcoll_comm_abort(struct kcoll_comm *comm);
void kcoll_comms_remove_device(struct ib_device *ibdev);
/*
 * Call @fill on the communicator of least id above *@after with
 * kcoll_comms_lock and comm->lock held, and set *@after to its id.
 * Returns 1 when one was visited (0 when none is left) or fill's error.
 */
int kcoll_comm_visit_next(u64 *after, int (*fill)(struct kcoll_comm *comm, void *arg),
			  void *arg);
/* The same for the communicator @id; -ENOENT when there is none. */
int kcoll_comm_visit(u64 id, int (*fill)(struct kcoll_comm *comm, void *arg), void *arg);
/* enum kcoll_comm_state, enum kcoll_peer_state of @peer.  comm->lock held. */
u32 kcoll_comm_state(const struct kcoll_comm *comm);
u32 kcoll_peer_state(const struct kcoll_comm *comm, u32 peer);

/* ------------------------------------------------------- sharing a node */

/*
 * kcoll_guard.c: what keeps one user of a shared node from hurting the
 * others -- the per-user bound on communicators' kernel memory
 * (user_max_bytes), the creator's memory cgroup for allocations made
 * outside its context, and one rate limit for every log message a local
 * user or a remote peer can cause.
 */
u64 kcoll_comm_footprint(u32 nranks, u32 slots, u32 chunk_bytes);
u64 kcoll_conn_footprint(u32 slots, u32 chunk_bytes);
u64 kcoll_comm_base_footprint(u32 nranks);
int kcoll_comm_charge(struct kcoll_comm *comm);
int kcoll_conn_charge(struct kcoll_conn *conn);
void kcoll_comm_uncharge(struct kcoll_comm *comm);
struct mem_cgroup *kcoll_memcg_enter(struct kcoll_comm *comm);
void kcoll_memcg_exit(struct mem_cgroup *old);

/* kcoll_tunables.c: user_max_bytes, 0 for no limit. */
u64 kcoll_user_max_bytes(void);

/*
 * Messages about what a local user or a remote peer did go through one
 * shared rate limit, so that no mix of causes floods the log; text that
 * came from them is escaped (%*pE) or not printed at all: the errno tells
 * the caller.  Every line starts with "kcoll: " (pr_fmt).
 */
extern struct ratelimit_state kcoll_user_rs;
#define kcoll_info_rl(fmt, ...)						\
	do {								\
		if (__ratelimit(&kcoll_user_rs))			\
			pr_info(fmt, ##__VA_ARGS__);			\
	} while (0)
#define kcoll_warn_rl(fmt, ...)						\
	do {								\
		if (__ratelimit(&kcoll_user_rs))			\
			pr_warn(fmt, ##__VA_ARGS__);			\
	} while (0)

/* ------------------------------------------------------ generic netlink */

int kcoll_genl_init(void);
void kcoll_genl_exit(void);
/* Notifications on the "events" group; cheap when nobody listens. */
void kcoll_genl_notify_comm(struct kcoll_comm *comm, u8 cmd);
void kcoll_genl_notify_op_fail(struct kcoll_comm *comm, const struct kcoll_lastop *op);
void kcoll_genl_notify_algo_fallback(struct kcoll_comm *comm, const struct kcoll_lastop *op);
void kcoll_genl_notify_peer_lost(struct kcoll_comm *comm, u32 peer, int err);
void kcoll_genl_notify_stall(struct kcoll_comm *comm);

/* ---------------------------------------------------------------- file */

/*
 * kcoll_file.lock is held only briefly: never across a wait for a peer,
 * so no ioctl of the file waits for another one.  A creation in progress
 * is marked (creating), connects without the lock and installs the
 * communicator at the end.
 */
struct kcoll_file {
	struct mutex lock;		/* the fields below, submissions */
	struct mm_struct *mm;		/* of the opener: the only user (grabbed) */
	struct kcoll_comm *comm;
	bool creating;			/* a KCOLL_IOC_COMM_CREATE is under way */
	bool create_cancel;		/* ABORT or close asked it to stop */
	struct kcoll_comm *connecting;	/* its communicator while it connects */
	wait_queue_head_t create_wq;	/* woken when creating is cleared */
	struct mutex reap_lock;		/* one reaper between peek and consume */
	struct xarray regs;		/* handle -> struct kcoll_mr */
	u32 next_handle;
};

int kcoll_dev_init(void);
void kcoll_dev_exit(void);

/* ---------------------------------------------------------------- module */

/* kcoll_main.c: the workqueue of every communicator's deferred work. */
struct workqueue_struct *kcoll_wq_get(void);
struct workqueue_struct *kcoll_feed_wq_get(void);

#endif /* KCOLL_H */
