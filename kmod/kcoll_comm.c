// SPDX-License-Identifier: GPL-2.0
/*
 * Communicators: creation from a rank table, the queue of operations, the
 * executor's life cycle, completions, failure and tear-down.
 *
 * Operations run one at a time in submission order: the next starts when
 * the active one completes, so completions are in order and the executor
 * of each operation sees only its own messages (the transport keeps
 * messages that arrive early).  Submitting does the expensive part
 * (pinning, plan building, DMA mapping) in the caller's context.
 *
 * comm->lock serialises everything that touches the executor; it is taken
 * from the ioctl and from CQ completion work (process context).  A fatal
 * error first stops the QPs, or parks those with no send left for a
 * shrink to take over (fail_work, without comm->lock, since draining waits
 * for completion work that needs it; kcoll_adopt.c), then completes every
 * outstanding operation: no DMA can touch a buffer after its operation
 * completed.
 *
 * A peer that disconnects is not by itself an error: ranks finish an
 * operation at different times, and one that has finished may close while
 * another still collects its last credits or talks to third ranks.  The
 * peer's connection is drained (lost_work), and then each operation asks
 * its executor whether it still needs that peer; only one that does fails,
 * with -ECONNRESET.  New submissions are refused from the disconnect on.
 *
 * What a communicator holds is charged to its creator: its worst case to
 * the owner's user_max_bytes at creation, every allocation to the
 * creator's memory cgroup, also from the kernel threads that start
 * operations or set up connections (kcoll_guard.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/nsproxy.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "kcoll.h"
#include "kcoll_compat.h"

static LIST_HEAD(kcoll_comms);
static DEFINE_MUTEX(kcoll_comms_lock);
static atomic64_t kcoll_comm_ids = ATOMIC64_INIT(0);

/* ------------------------------------------------------------ operations */

/* Count the operation, keep it for observers, tell listeners what they must know. */
static void kcoll_op_account(struct kcoll_comm *comm, const struct kcoll_comm_op *op)
{
	const struct kcoll_lastop *l = kcoll_stats_record(&comm->stats, op);
	int status = op->cpl.status;

	/*
	 * A configured algorithm that did not run: said once per kind of
	 * operation (the last-ops ring shows every one), so a loop of them
	 * does not flood listeners.  l->op < KCOLL_OP_COUNT: validated.
	 */
	if (l->fallback && !(comm->fallback_notified & BIT(l->op)) && !comm->closing) {
		comm->fallback_notified |= BIT(l->op);
		kcoll_genl_notify_algo_fallback(comm, l);
	}
	if (!status)
		return;
	/* Only the first: a failed communicator fails everything after it. */
	if (status != -ECANCELED && !comm->fail_notified && !comm->closing) {
		comm->fail_notified = true;
		kcoll_genl_notify_op_fail(comm, l);
	}
}

/*
 * @op ends with @status for its caller.  Its buffers go with it, unless a
 * send may still read them (@linger: it failed before fail_work parked
 * or stopped the connections): then they stay until the communicator is
 * dead (kcoll_comm_unlinger()), and the caller need not wait for that.
 */
static void kcoll_op_complete(struct kcoll_comm *comm, struct kcoll_comm_op *op, int status,
			      bool linger)
{
	op->cpl.status = status;
	op->cpl.complete_ns = ktime_get_ns();
	if (op->ex_ready)
		op->cpl.bytes = op->ex.bytes_sent + op->ex.bytes_received;
	op->linger = linger;
	if (!linger)
		kcoll_op_release(op);
	list_add_tail(&op->node, &comm->done);
	kcoll_op_account(comm, op);
	kcoll_history_complete(comm, op);
	pr_debug("comm %llu: op %llu done: %d\n", comm->id, op->id, status);
	if (comm->efd)
		kcoll_eventfd_signal(comm->efd);
	wake_up_all(&comm->done_wq);
}

/*
 * Tell the operation about every peer that has left: drained after a
 * disconnect, said farewell, or said its communicator failed (all it sent
 * came before that).  The one whose leaving fails it is named.
 * comm->lock held.
 */
/*
 * Deliver what rank @peer sent before it left if that may be all @op
 * needs of it: a chunk can still wait in the connection's FIFO for
 * feed_work (kcoll_xport.c), and kc_exec_peer_gone() and kc_exec_needs()
 * count only what was delivered.  When @op needs more of @peer than
 * waits there, nothing is consumed: it fails at once.  comm->lock held.
 */
static void kcoll_op_take_rest(struct kcoll_comm *comm, struct kcoll_comm_op *op, u32 peer)
{
	struct kcoll_conn *conn = &comm->conns[peer];
	u32 n = kcoll_conn_pending(conn, op->seq);

	if (n && !kc_exec_lacks(&op->ex, peer, n))
		kcoll_conn_feed_early(conn);
}

static void kcoll_op_peers_gone(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	u32 i;

	for (i = 0; i < comm->nranks && op->ex_ready; i++) {
		const struct kcoll_conn *conn = &comm->conns[i];
		u32 named = conn->bye_rank;

		if (i == comm->rank || kc_exec_status(&op->ex) != -EINPROGRESS ||
		    (!READ_ONCE(conn->departed) && !READ_ONCE(conn->bye_kind) && !conn->told))
			continue;
		kcoll_op_take_rest(comm, op, i);
		if (kc_exec_peer_gone(&op->ex, i, -ECONNRESET) == -ECONNRESET) {
			kcoll_ctl_peer_gone(comm, op, i);
			continue;
		}
		/*
		 * An operation that still waits for the rank it blames fails
		 * now: a node that died is otherwise noticed only when this
		 * rank's own sends to it run out of retries, seconds after the
		 * teller's.  (Only fails: that rank's connection still stands,
		 * so nothing of the operation is given up as delivered.)
		 */
		if (!conn->bye_kind || named == i || named == comm->rank || named >= comm->nranks)
			continue;
		kcoll_op_take_rest(comm, op, named);
		if (kc_exec_needs(&op->ex, named)) {
			kc_exec_fail(&op->ex, -ECONNRESET);
			kcoll_ctl_peer_gone(comm, op, i);
		}
	}
}

/* @peer said it leaves (kcoll_ctl.c): as a drained disconnect, at once. */
void kcoll_comm_peer_left(struct kcoll_comm *comm, u32 peer)
{
	if (comm->active && !comm->dead)
		kcoll_op_peers_gone(comm, comm->active);
}

/*
 * A peer left while @op still runs.  If it left because it failed, what
 * it ran into may be a node that died, and a rank that only waits to
 * receive from that node has no send of its own whose retries would run
 * out: ask every remaining peer for an acknowledgment, so that a dead
 * one ends @op with -EHOSTUNREACH within the QP's retries rather than
 * at the operation timeout.  A live peer acknowledges and nothing else
 * happens.  comm->lock held.
 */
static void kcoll_op_probe(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	u32 i;

	if (!op->ex_ready || kc_exec_status(&op->ex) != -EINPROGRESS)
		return;
	for (i = 0; i < comm->nranks; i++)
		if (i != comm->rank)
			kcoll_conn_probe(&comm->conns[i]);
}

static void kcoll_op_start(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	struct kc_exec_cfg cfg = {
		.chunk_bytes = comm->chunk_bytes,
		.window = comm->slots,
		.op_seq = op->seq,
		.op_num = (u32)op->id,
		.flags = comm->no_fingerprint ? KC_EXEC_F_NOHDR : 0,
		.desc = &op->desc,
	};
	void *bufs[KC_BUF_COUNT] = {};
	struct mem_cgroup *old_memcg;
	u32 i;
	int ret;

	for (i = 0; i < KC_BUF_COUNT; i++)
		if (op->mr[i])
			bufs[i] = (u8 *)op->mr[i]->vaddr + op->mroff[i];
	comm->active = op;
	op->start_ns = ktime_get_ns();
	kcoll_history_start(comm, op);
	/* Maybe from completion work: charge the creator, not the kworker. */
	old_memcg = kcoll_memcg_enter(comm);
	ret = kc_exec_init(&op->ex, op->plan, bufs, &cfg, &kcoll_xport_ops, op);
	kcoll_memcg_exit(old_memcg);
	if (ret) {
		kcoll_comm_fail(comm, ret);
		return;
	}
	op->ex_ready = true;
	kcoll_ctl_op_start(comm, op);
	kc_exec_start(&op->ex);
	for (i = 0; i < comm->nranks; i++)
		if (i != comm->rank)
			kcoll_conn_feed_early(&comm->conns[i]);
	kcoll_op_peers_gone(comm, op);
	mod_delayed_work(kcoll_wq_get(), &comm->timeout_work,
			 msecs_to_jiffies(comm->timeout_ms));
	kcoll_stall_op_start(comm);
}

/* A peer disconnected whose connection lost_work has not drained yet. */
static bool kcoll_comm_draining(const struct kcoll_comm *comm)
{
	u32 i;

	if (comm->fault.kind != KCOLL_FAULT_NONE)
		return false;
	for (i = 0; i < comm->nranks; i++)
		if (READ_ONCE(comm->conns[i].lost) && !READ_ONCE(comm->conns[i].departed))
			return true;
	return false;
}

/*
 * Once dead (no connection can send any more), the failed operations
 * completed early let go of their buffers.  comm->lock held.
 */
static void kcoll_comm_unlinger(struct kcoll_comm *comm)
{
	struct kcoll_comm_op *op, *tmp;

	list_for_each_entry(op, &comm->done, node)
		if (op->linger) {
			kcoll_op_release(op);
			op->linger = false;
		}
	list_for_each_entry_safe(op, tmp, &comm->lingering, node) {
		list_del(&op->node);
		kcoll_op_free(op);
	}
}

/*
 * Complete what can be completed and start what can be started.
 * comm->lock held.
 */
void kcoll_comm_advance(struct kcoll_comm *comm)
{
	if (comm->dead)
		kcoll_comm_unlinger(comm);
	for (;;) {
		struct kcoll_comm_op *op = comm->active;
		int st;

		if (op) {
			st = op->ex_ready ? kc_exec_status(&op->ex) : comm->err;
			if (st == -EINPROGRESS && !comm->dead)
				return;
			/*
			 * A send to a peer that disconnected: what it said
			 * before it went (why it left) may still wait in
			 * the CQ; lost_work drains it and comes back here.
			 */
			if (st == -ECONNRESET && !comm->dead && kcoll_comm_draining(comm))
				return;
			/*
			 * A failure: the peers learn why, fail_work parks or
			 * stops the connections, and the caller learns now:
			 * the buffers stay until nothing can send from them.
			 */
			if (st == -EINPROGRESS || (st && !comm->dead)) {
				if (!comm->dead) {
					if (st == -EPROTO)
						kcoll_ctl_mismatch(comm, op);
					else if (st == -ECONNRESET)
						kcoll_ctl_blame_lost(comm, op);
					kcoll_comm_fail(comm, st);
				}
				st = comm->err;
			}
			comm->active = NULL;
			kcoll_op_complete(comm, op, st, st && !comm->dead);
			if (list_empty(&comm->queued))
				cancel_delayed_work(&comm->timeout_work);
		}
		op = list_first_entry_or_null(&comm->queued, struct kcoll_comm_op, node);
		if (!op)
			return;
		list_del(&op->node);
		/* Never started: nothing sends from its buffers. */
		if (comm->err) {
			kcoll_op_complete(comm, op, comm->err, false);
			continue;
		}
		kcoll_op_start(comm, op);
	}
}

/*
 * Record a fatal error: the active operation ends with it and every later
 * one is refused.  The QPs are stopped from fail_work.  comm->lock held.
 */
void kcoll_comm_fail(struct kcoll_comm *comm, int err)
{
	if (!err)
		err = -EIO;
	if (!comm->err) {
		comm->err = err;
		pr_debug("comm %llu: failed: %d\n", comm->id, err);
		/* the peers learn why before fail_work stops the QPs */
		kcoll_ctl_tell(comm);
	}
	if (comm->active && comm->active->ex_ready)
		kc_exec_fail(&comm->active->ex, comm->err);
	if (!comm->dead)
		queue_work(kcoll_wq_get(), &comm->fail_work);
	/* A submission connecting on need ends with it (kcoll_conns_need()). */
	wake_up_all(&comm->conn_wq);
}

/*
 * A peer disconnected.  Its last messages (often the final credits of an
 * operation it has finished) may still wait in our CQ, so the verdict is
 * left to lost_work, which drains that connection first.
 */
void kcoll_comm_lost(struct kcoll_comm *comm, int err)
{
	mutex_lock(&comm->lock);
	if (!comm->lost_err)
		comm->lost_err = err;
	if (!comm->dead)
		queue_work(kcoll_wq_get(), &comm->lost_work);
	mutex_unlock(&comm->lock);
}

static void kcoll_comm_lost_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(work, struct kcoll_comm, lost_work);
	u32 i;

	kcoll_conns_stop_lost(comm);
	mutex_lock(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		/* Peers leave as a matter of course while we close: not news. */
		if (READ_ONCE(conn->lost) && !conn->lost_notified && !comm->closing) {
			conn->lost_notified = true;
			kcoll_genl_notify_peer_lost(comm, i, comm->lost_err);
		}
	}
	if (comm->active && !comm->dead) {
		kcoll_op_peers_gone(comm, comm->active);
		kcoll_op_probe(comm, comm->active);
	}
	kcoll_comm_advance(comm);
	mutex_unlock(&comm->lock);
}

/* A QP reported a fatal error (kcoll_qp_event(), maybe in atomic context). */
static void kcoll_comm_qp_err_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(work, struct kcoll_comm, qp_err_work);

	mutex_lock(&comm->lock);
	kcoll_comm_fail(comm, -EIO);
	kcoll_comm_advance(comm);
	mutex_unlock(&comm->lock);
}

static void kcoll_comm_fail_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(work, struct kcoll_comm, fail_work);

	/*
	 * A verdict for the peers goes out before the QPs stop, and the
	 * connections a shrink may reuse settle (bounded; kcoll_adopt.c).
	 */
	wait_event_timeout(comm->done_wq, kcoll_conns_parkable_quiet(comm),
			   msecs_to_jiffies(READ_ONCE(comm->ctl_wait_ms)));
	kcoll_conns_park(comm);
	mutex_lock(&comm->lock);
	comm->dead = true;
	kcoll_comm_advance(comm);
	mutex_unlock(&comm->lock);
}

/*
 * A wait_event() condition: it runs with the task no longer running, so
 * it may not sleep on comm->lock.  The writers change these fields under
 * the lock and wake done_wq afterwards; the waiter re-checks after every
 * wake-up, so a lockless snapshot is enough.
 */
static bool kcoll_comm_quiet(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks && !READ_ONCE(comm->dead); i++)
		if (READ_ONCE(comm->conns[i].tx_busy))
			return false;
	return true;
}

static void kcoll_comm_timeout_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(to_delayed_work(work), struct kcoll_comm,
					       timeout_work);

	mutex_lock(&comm->lock);
	if (comm->active && comm->active->ex_ready &&
	    kc_exec_status(&comm->active->ex) == -EINPROGRESS) {
		u64 age_ms = (ktime_get_ns() - comm->active->start_ns) / NSEC_PER_MSEC;

		if (age_ms >= comm->timeout_ms) {
			kcoll_info_rl("comm %llu: op %llu timed out after %u ms\n", comm->id,
				      comm->active->id, comm->timeout_ms);
			kcoll_comm_fail(comm, -ETIMEDOUT);
			kcoll_comm_advance(comm);
		} else {
			mod_delayed_work(kcoll_wq_get(), &comm->timeout_work,
					 msecs_to_jiffies(comm->timeout_ms - age_ms));
		}
	}
	mutex_unlock(&comm->lock);
}

u64 kcoll_comm_next_id(struct kcoll_comm *comm)
{
	u64 id;

	mutex_lock(&comm->lock);
	id = comm->next_id + 1;
	mutex_unlock(&comm->lock);
	return id;
}

int kcoll_comm_submit(struct kcoll_comm *comm, struct kcoll_comm_op *op, u64 id)
{
	int ret = 0;
	u32 i;

	mutex_lock(&comm->lock);
	/* After a local abort, ECANCELED whatever ended the communicator first. */
	if (comm->aborted) {
		ret = -ECANCELED;
		goto out;
	}
	/*
	 * A peer that left does not refuse submissions by itself: a rank may
	 * free its communicator as soon as its own part of the last operation
	 * is done (MPI_Comm_free may), while a slower rank has still to submit
	 * that operation, and what it needs from the leaver is already here.
	 * The operation that does need a departed peer fails when it starts
	 * (kcoll_op_peers_gone()), and that ends the communicator.
	 */
	if (comm->err) {
		ret = comm->err;
		goto out;
	}
	if (comm->nops >= KCOLL_MAX_INFLIGHT) {
		ret = -EAGAIN;
		goto out;
	}
	/* The caller wrote @id out already: submissions are serialised. */
	if (WARN_ON_ONCE(id != comm->next_id + 1)) {
		ret = -EIO;
		goto out;
	}
	op->comm = comm;
	op->id = ++comm->next_id;
	op->seq = comm->next_seq++;
	op->cpl.op_id = op->id;
	op->cpl.cookie = op->cookie;
	op->cpl.submit_ns = ktime_get_ns();
	if (op->plan) {
		for (i = 0; i < KCOLL_LEVEL_COUNT; i++)
			op->algo[i] = op->plan->algo[i];
		/* what algo/ put in the plan, passed along as it is */
		op->fallback = op->plan->fallback;
		if (op->fallback)
			strscpy(op->note, op->plan->note, sizeof(op->note));
	}
	comm->nops++;
	kcoll_history_submit(comm, op);
	list_add_tail(&op->node, &comm->queued);
	if (!comm->active)
		kcoll_comm_advance(comm);
out:
	mutex_unlock(&comm->lock);
	return ret;
}

/* A wait_event() condition, lockless as kcoll_comm_quiet() is. */
static bool kcoll_reap_ready(struct kcoll_comm *comm)
{
	return !list_empty_careful(&comm->done) || !READ_ONCE(comm->nops);
}

/*
 * Wait until a completion is ready or nothing is outstanding.  -ENOENT
 * when nothing is outstanding to begin with, -EINTR at a signal,
 * -ETIMEDOUT when *@left (jiffies, updated) runs out.
 */
int kcoll_comm_reap_wait(struct kcoll_comm *comm, long *left)
{
	u32 nops;
	long t;

	mutex_lock(&comm->lock);
	nops = comm->nops;
	mutex_unlock(&comm->lock);
	if (!nops)
		return -ENOENT;
	t = wait_event_interruptible_timeout(comm->done_wq, kcoll_reap_ready(comm), *left);
	if (t < 0)
		return -EINTR;
	if (!t)
		return -ETIMEDOUT;
	if (*left != MAX_SCHEDULE_TIMEOUT)
		*left = t;
	return 0;
}

/* Copy the oldest (at most @max) completions to @out, leaving them queued. */
u32 kcoll_comm_reap_peek(struct kcoll_comm *comm, struct kcoll_completion *out, u32 max)
{
	struct kcoll_comm_op *op;
	u32 n = 0;

	mutex_lock(&comm->lock);
	list_for_each_entry(op, &comm->done, node) {
		if (n == max)
			break;
		out[n++] = op->cpl;
	}
	mutex_unlock(&comm->lock);
	return n;
}

/*
 * Remove the @n oldest completions, the ones kcoll_comm_reap_peek() gave:
 * only reapers remove completions, one at a time, and new ones go to the
 * tail.
 */
void kcoll_comm_reap_consume(struct kcoll_comm *comm, u32 n)
{
	struct kcoll_comm_op *op;

	mutex_lock(&comm->lock);
	while (n--) {
		op = list_first_entry_or_null(&comm->done, struct kcoll_comm_op, node);
		if (WARN_ON_ONCE(!op))
			break;
		list_del(&op->node);
		comm->nops--;
		if (op->linger)
			list_add_tail(&op->node, &comm->lingering);
		else
			kcoll_op_free(op);
	}
	mutex_unlock(&comm->lock);
}

/*
 * KCOLL_IOC_ABORT returns within this (and the locks' short holds),
 * whatever the peers do: it waits for nothing else.
 */
#define KCOLL_ABORT_QUIET_MS	20

void kcoll_comm_abort(struct kcoll_comm *comm)
{
	bool idle;

	/*
	 * With nothing running, what is still posted are credits for the
	 * peers' last messages: give them a moment to go out, so that live
	 * peers complete that operation at once rather than after draining
	 * our disconnect.  Only a moment: a peer needs no credit of a rank
	 * that left once it has everything of it (kc_exec_peer_gone()), and
	 * a dead or cut peer never acknowledges them.
	 */
	mutex_lock(&comm->lock);
	idle = !comm->active;
	mutex_unlock(&comm->lock);
	if (idle)
		wait_event_timeout(comm->done_wq, kcoll_comm_quiet(comm),
				   msecs_to_jiffies(KCOLL_ABORT_QUIET_MS));

	mutex_lock(&comm->lock);
	comm->aborted = true;
	kcoll_comm_fail(comm, -ECANCELED);
	kcoll_comm_advance(comm);
	mutex_unlock(&comm->lock);
}

/* ------------------------------------------------------ create, destroy */

/* @r as a socket address; port 0 is the module's @listen_port. */
static int kcoll_rank_to_sockaddr(const struct kcoll_rank *r, u32 i, u32 listen_port,
				  struct sockaddr_storage *ss)
{
	u32 port = r->port ? r->port : listen_port;

	memset(ss, 0, sizeof(*ss));
	if (r->port > 65535) {
		kcoll_info_rl("rank %u: port %u out of range 0..65535\n", i, r->port);
		return -EINVAL;
	}
	if (r->family == KCOLL_AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, r->addr, 4);
		return 0;
	}
	if (r->family == KCOLL_AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, r->addr, 16);
		return 0;
	}
	kcoll_info_rl("rank %u: address family %u, expected %u (IPv4) or %u (IPv6)\n",
		      i, r->family, KCOLL_AF_INET, KCOLL_AF_INET6);
	return -EINVAL;
}

static int kcoll_comm_topo(struct kcoll_comm *comm)
{
	char err[128] = "";
	const char *msg;
	u32 *labels;
	u32 i;
	int ret;

	labels = kvcalloc(2 * comm->nranks, sizeof(*labels), GFP_KERNEL_ACCOUNT);
	if (!labels)
		return -ENOMEM;
	for (i = 0; i < comm->nranks; i++) {
		labels[i] = comm->ranks[i].server_id;
		labels[comm->nranks + i] = comm->ranks[i].pod_id;
	}
	ret = kc_topo_init(&comm->topo, comm->nranks, labels, labels + comm->nranks,
			   err, sizeof(err));
	if (ret) {
		msg = err[0] ? err : "invalid topology";
		kcoll_info_rl("rank table: %*pE\n", (int)strlen(msg), msg);
	}
	kvfree(labels);
	return ret;
}

static void kcoll_comm_free(struct kcoll_comm *comm)
{
	kcoll_auth_free(comm);
	kcoll_history_free(comm);
	kcoll_stall_free(comm);
	if (comm->net)
		put_net(comm->net);
	kcoll_comm_uncharge(comm);
	if (comm->topo.server_of)
		kc_topo_free(&comm->topo);
	if (comm->efd)
		eventfd_ctx_put(comm->efd);
	kvfree(comm->conns);
	kvfree(comm->addrs);
	kvfree(comm->ranks);
	kfree(comm);
}

/*
 * Destroy the connections of a communicator that never came up, with the
 * work they may have queued.
 */
static void kcoll_comm_drop_conns(struct kcoll_comm *comm)
{
	/*
	 * A peer that went away while we connected has queued lost_work or
	 * fail_work; neither may run on the freed communicator.  Once dead is
	 * set nothing queues them again (kcoll_comm_lost(), kcoll_comm_fail()).
	 */
	mutex_lock(&comm->lock);
	comm->dead = true;
	mutex_unlock(&comm->lock);
	cancel_work_sync(&comm->fail_work);
	cancel_work_sync(&comm->lost_work);
	cancel_work_sync(&comm->feed_work);
	kcoll_conns_destroy(comm);
	/* No QP is left to report an error; dead: it queues nothing more. */
	cancel_work_sync(&comm->qp_err_work);
}

/*
 * Create the communicator of a file, up to listening: nothing here waits
 * for a peer (kcoll_comm_connect() does).  @ranks (taken over) was copied
 * from user space; @algo is NULL for the sysfs default; @secret
 * (arg->secret_len bytes) NULL for none; @parent NULL unless a shrink
 * gives the failed communicator whose connections it may take over.
 */
struct kcoll_comm *kcoll_comm_create(const struct kcoll_comm_create *arg,
				     struct kcoll_rank *ranks, const char *algo, const u8 *secret,
				     const struct kcoll_parent *parent)
{
	struct kcoll_tunables *tun;
	struct kcoll_comm *comm;
	bool adopted = false;
	u32 i;
	int ret;

	comm = kzalloc(sizeof(*comm), GFP_KERNEL_ACCOUNT);
	tun = kzalloc(sizeof(*tun), GFP_KERNEL_ACCOUNT);
	if (!comm || !tun) {
		kfree(comm);
		kfree(tun);
		kvfree(ranks);
		return ERR_PTR(-ENOMEM);
	}
	comm->ranks = ranks;
	comm->rank = arg->rank;
	comm->nranks = arg->nranks;
	mutex_init(&comm->conn_lock);
	mutex_init(&comm->need_lock);
	mutex_init(&comm->lock);
	init_waitqueue_head(&comm->conn_wq);
	init_waitqueue_head(&comm->done_wq);
	INIT_LIST_HEAD(&comm->queued);
	INIT_LIST_HEAD(&comm->done);
	INIT_LIST_HEAD(&comm->lingering);
	INIT_LIST_HEAD(&comm->node);
	INIT_DELAYED_WORK(&comm->timeout_work, kcoll_comm_timeout_work);
	INIT_WORK(&comm->fail_work, kcoll_comm_fail_work);
	INIT_WORK(&comm->lost_work, kcoll_comm_lost_work);
	INIT_WORK(&comm->qp_err_work, kcoll_comm_qp_err_work);
	INIT_WORK(&comm->feed_work, kcoll_comm_feed_work);
	atomic64_set(&comm->refused, 0);

	kcoll_tunables_get(tun);
	comm->chunk_bytes = arg->chunk_bytes ? arg->chunk_bytes : tun->chunk_bytes;
	comm->slots = arg->slots ? arg->slots : tun->slots;
	comm->timeout_ms = arg->timeout_ms ? arg->timeout_ms : tun->timeout_ms;
	comm->connect_timeout_ms = arg->connect_timeout_ms ? arg->connect_timeout_ms :
				   tun->connect_timeout_ms;
	comm->qp_timeout = tun->qp_timeout;
	comm->qp_retry_count = tun->qp_retry_count;
	kcoll_stall_init(comm, tun->stall_ms);
	comm->no_fingerprint = !tun->fingerprint;
	comm->on_need = tun->connect_on_need;
	comm->ctl_wait_ms = KCOLL_CTL_WAIT_MS;
	comm->sel = tun->sel;
	kcoll_tunables_model(tun, &comm->model);
	comm->model.window = comm->slots;
	comm->pid = task_tgid_nr(current);
	comm->uid = current_euid();
	ret = kcoll_check_chunk(comm->chunk_bytes) ?: kcoll_check_slots(comm->slots) ?:
	      kcoll_check_timeout(comm->timeout_ms) ?:
	      kcoll_check_timeout(comm->connect_timeout_ms);
	if (ret)
		goto err_free;
	/* The string is the caller's: never echoed (kcoll_algo_parse() says where). */
	if (algo) {
		ret = kcoll_algo_parse(algo, &comm->sel);
		if (ret)
			goto err_free;
	}
	/* Before anything sized by nranks, slots and chunk_bytes. */
	ret = kcoll_comm_charge(comm) ?: kcoll_history_init(comm);
	if (ret)
		goto err_free;

	comm->addrs = kvcalloc(comm->nranks, sizeof(*comm->addrs), GFP_KERNEL_ACCOUNT);
	comm->conns = kvcalloc(comm->nranks, sizeof(*comm->conns), GFP_KERNEL_ACCOUNT);
	if (!comm->addrs || !comm->conns) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < comm->nranks; i++) {
		ret = kcoll_rank_to_sockaddr(&ranks[i], i, tun->listen_port, &comm->addrs[i]);
		if (ret)
			goto err_free;
		comm->conns[i].comm = comm;
		comm->conns[i].peer = i;
	}
	ret = kcoll_comm_topo(comm);
	if (ret)
		goto err_free;
	/* -1 is "none"; any other number must be an eventfd (EBADF). */
	if (arg->eventfd != -1) {
		comm->efd = arg->eventfd < 0 ? ERR_PTR(-EBADF) : eventfd_ctx_fdget(arg->eventfd);
		if (IS_ERR(comm->efd)) {
			pr_debug("create: eventfd %d is not an eventfd descriptor\n",
				 arg->eventfd);
			ret = -EBADF;
			comm->efd = NULL;
			goto err_free;
		}
	}
	comm->id = atomic64_inc_return(&kcoll_comm_ids);
	kcoll_auth_name(comm, arg->uid);
	ret = kcoll_auth_init(comm, secret, arg->secret_len);
	if (ret)
		goto err_free;

	comm->net = get_net(current->nsproxy->net_ns);
	/* Before it listens: the listener sets up only connections left IDLE. */
	adopted = parent && kcoll_conns_adopt(comm, parent);
	/* Last: from here on the node's listener hands it requests. */
	mutex_lock(&comm->conn_lock);
	ret = kcoll_listen_attach(comm, ranks[comm->rank].port != 0);
	mutex_unlock(&comm->conn_lock);
	if (ret && adopted) {
		kcoll_comm_drop_conns(comm);
		goto err_free;
	}
	if (ret)
		goto err_free;
	mutex_lock(&kcoll_comms_lock);
	list_add_tail(&comm->node, &kcoll_comms);
	mutex_unlock(&kcoll_comms_lock);
	kfree(tun);
	return comm;

err_free:
	kfree(tun);
	kcoll_comm_free(comm);
	return ERR_PTR(ret);
}

/*
 * Wait for every peer, at most connect_timeout_ms.  The waits are
 * interruptible (-EINTR), and kcoll_comm_cancel() ends them with
 * -ECANCELED.  On an error the caller frees with kcoll_comm_discard().
 */
int kcoll_comm_connect(struct kcoll_comm *comm)
{
	u32 i;
	int ret;

	/* On need, operations connect what they use (kcoll_conns_need()). */
	if (comm->nranks > 1 && !comm->on_need) {
		ret = kcoll_conns_connect(comm);
		if (ret)
			return ret;
	}
	comm->connected = true;
	for (i = 0; i < comm->nranks; i++)
		comm->reused += comm->conns[i].reused;
	pr_debug("comm %llu: rank %u of %u up (%u connections reused)\n", comm->id, comm->rank,
		 comm->nranks, comm->reused);
	kcoll_genl_notify_comm(comm, KCOLL_CMD_EVENT_COMM_NEW);
	return 0;
}

/*
 * KCOLL_IOC_ABORT or close() while the communicator connects: the
 * connect sees comm->err (kcoll_comm_broken()) and ends with it.
 */
void kcoll_comm_cancel(struct kcoll_comm *comm)
{
	mutex_lock(&comm->lock);
	comm->aborted = true;
	if (!comm->err)
		comm->err = -ECANCELED;
	mutex_unlock(&comm->lock);
	wake_up_all(&comm->conn_wq);
}

/* Free a communicator whose kcoll_comm_connect() failed. */
void kcoll_comm_discard(struct kcoll_comm *comm)
{
	mutex_lock(&kcoll_comms_lock);
	list_del(&comm->node);
	mutex_unlock(&kcoll_comms_lock);
	kcoll_comm_drop_conns(comm);
	kcoll_comm_free(comm);
}

void kcoll_comm_destroy(struct kcoll_comm *comm)
{
	kcoll_comm_destroy_why(comm, KCOLL_FAULT_NONE, 0);
}

/*
 * Destroy @comm; @why (enum kcoll_fault_kind PEER_*, with @code) is what
 * its peers are told if this rank leaves with work outstanding.
 */
void kcoll_comm_destroy_why(struct kcoll_comm *comm, u32 why, u32 code)
{
	struct kcoll_comm_op *op, *tmp;

	/* A release of the owner's mm still running finishes (its farewell) first. */
	kcoll_ctl_unwatch(comm);

	mutex_lock(&kcoll_comms_lock);
	list_del(&comm->node);
	mutex_unlock(&kcoll_comms_lock);

	/* The counters as the owner left them, before tear-down cancels the rest. */
	mutex_lock(&comm->lock);
	kcoll_genl_notify_comm(comm, KCOLL_CMD_EVENT_COMM_DEL);
	kcoll_history_closing(comm);
	comm->closing = true;
	/* Peers waiting for this rank learn why now, not at their timeout. */
	if (why != KCOLL_FAULT_NONE)
		kcoll_ctl_bye(comm, why, code);
	mutex_unlock(&comm->lock);

	/*
	 * Let posted sends (the credits for the peers' last messages above
	 * all) reach the peers before disconnecting, or their operations
	 * would miss them.  Bounded: a dead peer does not hold us.
	 */
	wait_event_timeout(comm->done_wq, kcoll_comm_quiet(comm), HZ);

	mutex_lock(&comm->lock);
	kcoll_comm_fail(comm, -ECANCELED);
	mutex_unlock(&comm->lock);
	cancel_work_sync(&comm->fail_work);
	cancel_work_sync(&comm->lost_work);
	cancel_delayed_work_sync(&comm->timeout_work);

	/* Stop DMA, then complete (and so release) every operation. */
	kcoll_conns_stop(comm);
	mutex_lock(&comm->lock);
	comm->dead = true;
	kcoll_comm_advance(comm);
	mutex_unlock(&comm->lock);
	cancel_delayed_work_sync(&comm->timeout_work);
	cancel_work_sync(&comm->fail_work);
	cancel_work_sync(&comm->lost_work);
	/* The QPs are stopped and dead is set: nothing queues it again. */
	cancel_work_sync(&comm->feed_work);
	kcoll_stall_sync(comm);

	kcoll_conns_destroy(comm);
	/* No QP is left to report an error; dead: it queues nothing more. */
	cancel_work_sync(&comm->qp_err_work);
	list_for_each_entry_safe(op, tmp, &comm->done, node) {
		list_del(&op->node);
		kcoll_op_free(op);
	}
	kcoll_history_retire(comm);
	pr_debug("comm %llu destroyed\n", comm->id);
	kcoll_comm_free(comm);
}

/* ib_client.remove: fail and disconnect every communicator on @ibdev. */
void kcoll_comms_remove_device(struct ib_device *ibdev)
{
	struct kcoll_comm *comm;

	mutex_lock(&kcoll_comms_lock);
	list_for_each_entry(comm, &kcoll_comms, node) {
		if (!kcoll_conns_on_device(comm, ibdev))
			continue;
		pr_info("comm %llu: RDMA device %s removed\n", comm->id,
			dev_name(&ibdev->dev));
		/* What fail_work does, synchronously: the device goes now. */
		mutex_lock(&comm->lock);
		kcoll_comm_fail(comm, -ENODEV);
		mutex_unlock(&comm->lock);
		kcoll_conns_stop(comm);
		mutex_lock(&comm->lock);
		comm->dead = true;
		kcoll_comm_advance(comm);
		mutex_unlock(&comm->lock);
		kcoll_conns_remove_device(comm, ibdev);
	}
	mutex_unlock(&kcoll_comms_lock);
}

/* ------------------------------------------------------------ observers */

u32 kcoll_comm_state(const struct kcoll_comm *comm)
{
	if (comm->err)
		return KCOLL_COMM_STATE_FAILED;
	if (comm->lost_err)
		return KCOLL_COMM_STATE_PEER_LOST;
	return KCOLL_COMM_STATE_READY;
}

u32 kcoll_peer_state(const struct kcoll_comm *comm, u32 peer)
{
	const struct kcoll_conn *conn = &comm->conns[peer];

	if (READ_ONCE(conn->lost))
		return KCOLL_PEER_STATE_LOST;
	switch (READ_ONCE(conn->state)) {
	case KCOLL_CONN_CONNECTING:
		return KCOLL_PEER_STATE_CONNECTING;
	case KCOLL_CONN_UP:
		return KCOLL_PEER_STATE_UP;
	case KCOLL_CONN_FAILED:
		return KCOLL_PEER_STATE_FAILED;
	case KCOLL_CONN_CLOSED:
		return KCOLL_PEER_STATE_CLOSED;
	case KCOLL_CONN_AUTH:
		return KCOLL_PEER_STATE_AUTH;
	}
	return KCOLL_PEER_STATE_IDLE;
}

static int kcoll_comm_visit_locked(struct kcoll_comm *comm,
				   int (*fill)(struct kcoll_comm *comm, void *arg), void *arg)
{
	int ret;

	mutex_lock(&comm->lock);
	ret = fill(comm, arg);
	mutex_unlock(&comm->lock);
	return ret;
}

int kcoll_comm_visit_next(u64 *after, int (*fill)(struct kcoll_comm *comm, void *arg),
			  void *arg)
{
	struct kcoll_comm *comm, *next = NULL;
	int ret = 0;

	mutex_lock(&kcoll_comms_lock);
	list_for_each_entry(comm, &kcoll_comms, node)
		if (comm->id > *after && (!next || comm->id < next->id))
			next = comm;
	if (next) {
		ret = kcoll_comm_visit_locked(next, fill, arg);
		if (!ret) {
			*after = next->id;
			ret = 1;
		}
	}
	mutex_unlock(&kcoll_comms_lock);
	return ret;
}

int kcoll_comm_visit(u64 id, int (*fill)(struct kcoll_comm *comm, void *arg), void *arg)
{
	struct kcoll_comm *comm;
	int ret = -ENOENT;

	mutex_lock(&kcoll_comms_lock);
	list_for_each_entry(comm, &kcoll_comms, node) {
		if (comm->id == id) {
			ret = kcoll_comm_visit_locked(comm, fill, arg);
			break;
		}
	}
	mutex_unlock(&kcoll_comms_lock);
	return ret;
}
