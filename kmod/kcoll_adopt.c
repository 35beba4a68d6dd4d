// SPDX-License-Identifier: GPL-2.0
/*
 * A shrink reuses the survivors' connections.
 *
 * A failure used to stop every QP of the communicator (fail_work), so
 * that no DMA reads a buffer after its operation ended; a stopped RC QP
 * comes back only through a new connection, and the survivors of a
 * failure spent most of a shrink connecting anew.  Now fail_work parks
 * the connection to every peer that is up, has not said it leaves, and
 * has acknowledged everything sent to it (kcoll_conns_park()): with no
 * send posted, no DMA reads a user buffer any more, which is all that
 * stopping guaranteed, as receives land only in the connection's own
 * slots.  The others are stopped as before.  A parked connection drops
 * whatever arrives (kcoll_xport.c), but keeps a RESET.
 *
 * A communicator created with a parent (KCOLL_CREATE_F_PARENT, from
 * coll_comm_shrink()) takes the parked connection to each of its peers
 * over before it listens (kcoll_conns_adopt()): the QP, its CQ and slots
 * move, renumbered, and it sends RESET: its id, its own rank and the
 * peer's, its size.  RC delivers in order, so what the peer sent before
 * its RESET is the failed communicator's and is dropped, and what
 * follows is the new one's.  The connection is up once the peer's RESET
 * names the same id, ranks and size.
 *
 * Credits need no reconciling: neither side credits what it drops, every
 * slot goes back to the receive queue when it arrives or at the take
 * over, and neither side sends data before it has the other's RESET,
 * sent after the take over: by then every slot of the receiver is posted
 * again, and both windows start full, as on a new connection.
 *
 * Anything else is a new connection, as at any creation.  A peer whose
 * end is not parked has disconnected it; a RESET that names another
 * communicator (the peer saw other survivors) fails the connection; a
 * connecting side that has no RESET after a tenth of the connect timeout
 * (at least KCOLL_ADOPT_WAIT_MIN_MS) gives it up (the peer may not shrink
 * at all).  kcoll_connect.c then returns it to
 * IDLE and connects or accepts anew; the peer sees the disconnect and
 * does the same.
 *
 * Locking: parent->conn_lock, then the new communicator's conn_lock, the
 * rdma_cm id's handler mutex, parent->lock, the new comm->lock.  The
 * completion handlers find their connection's communicator again under
 * its lock (kcoll_conn_lock()), and the take-over waits for any handler
 * that may still hold the old pointer (flush_work() of the CQ's poll
 * work).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/workqueue.h>

#include "kcoll.h"

/*
 * Lock the communicator of the connection *@owner points to (an rx or tx
 * slot's), found again under its lock: a take-over changes the pointer
 * under both communicators' locks.
 */
struct kcoll_conn *kcoll_conn_lock(struct kcoll_conn *const *owner)
{
	struct kcoll_conn *conn;

	for (;;) {
		conn = READ_ONCE(*owner);
		mutex_lock(&conn->comm->lock);
		if (READ_ONCE(*owner) == conn)
			return conn;
		mutex_unlock(&conn->comm->lock);
	}
}

/* May @conn outlive its failing communicator?  Lockless for wait_event(). */
static bool kcoll_conn_parkable(const struct kcoll_conn *conn)
{
	return conn->cm_id && !conn->stopped && kcoll_ctl_conn_usable(conn);
}

/*
 * What fail_work waits for, at most ctl_wait_ms (a wait_event()
 * condition, lockless): the control messages are out, and every
 * connection that may be parked has no send left.  A peer that
 * disconnected acknowledges nothing more, and neither does the rank this
 * one blames for leaving (its node is gone, or its process): neither is
 * waited for.
 */
bool kcoll_conns_parkable_quiet(struct kcoll_comm *comm)
{
	u32 kind = READ_ONCE(comm->fault.kind), gone = U32_MAX;
	u32 i;

	if (kind >= KCOLL_FAULT_PEER_EXIT && kind <= KCOLL_FAULT_PEER_LOST)
		gone = READ_ONCE(comm->fault.rank);
	for (i = 0; i < comm->nranks; i++) {
		const struct kcoll_conn *conn = &comm->conns[i];

		if (i == comm->rank || i == gone || READ_ONCE(conn->lost))
			continue;
		if (READ_ONCE(conn->ctl_busy) ||
		    (kcoll_conn_parkable(conn) && READ_ONCE(conn->tx_busy)))
			return false;
	}
	return true;
}

/*
 * fail_work: park what a shrink may take over, stop the rest (as
 * kcoll_conns_stop()).  Without comm->lock: stopping drains, and the
 * completion handlers take it.
 */
void kcoll_conns_park(struct kcoll_comm *comm)
{
	u32 i;

	mutex_lock(&comm->conn_lock);
	kcoll_listen_detach(comm);
	mutex_lock(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (i != comm->rank && kcoll_conn_parkable(conn) && !conn->tx_busy)
			conn->parked = true;
	}
	mutex_unlock(&comm->lock);
	for (i = 0; i < comm->nranks; i++)
		if (!comm->conns[i].parked)
			kcoll_conn_stop(&comm->conns[i]);
	mutex_unlock(&comm->conn_lock);
}

/*
 * @conn, taken over, waits for the peer's RESET; once it is there the
 * connection is up, or fails if the RESET names another communicator.
 * comm->lock held.
 */
static void kcoll_adopt_settle(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	if (!conn->adopted || !conn->reset_seen)
		return;
	conn->adopted = false;
	if (!memcmp(conn->reset_uid, comm->unique_id, KCOLL_UID_BYTES) &&
	    conn->reset_rank == conn->peer && conn->reset_other == comm->rank &&
	    conn->reset_nranks == comm->nranks) {
		conn->reused = true;
		/* After reused: pairs with the creator's acquire (kcoll_connect.c). */
		smp_store_release(&conn->state, KCOLL_CONN_UP);
		wake_up_all(&comm->conn_wq);
		return;
	}
	kcoll_info_rl("comm %llu: rank %u reset its connection for another communicator\n",
		      comm->id, conn->peer);
	kcoll_adopt_failed(conn, -ESTALE);
}

/*
 * A taken-over connection failed before it was up: kcoll_connect.c puts
 * it back to IDLE and connects anew.  comm->lock held.
 */
void kcoll_adopt_failed(struct kcoll_conn *conn, int err)
{
	conn->adopted = false;
	conn->cm_err = err;
	/* After cm_err: pairs with kcoll_passive_failed()'s acquire. */
	smp_store_release(&conn->state, KCOLL_CONN_FAILED);
	wake_up_all(&conn->comm->conn_wq);
}

/*
 * A control message on a parked or taken-over connection: a RESET is
 * kept (the peer may shrink before this rank does), anything else
 * belongs to the failed communicator and is dropped.  comm->lock held.
 */
void kcoll_adopt_ctl(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	if (le32_to_cpu(m->magic) != KCOLL_CTL_MAGIC || m->version != KCOLL_CM_VERSION ||
	    le16_to_cpu(m->len) != sizeof(*m) || m->type != KCOLL_CTL_RESET)
		return;
	conn->reset_rank = le32_to_cpu(m->rank);
	conn->reset_other = le32_to_cpu(m->other);
	conn->reset_nranks = le32_to_cpu(m->code);
	memcpy(conn->reset_uid, m->fp_rank, KCOLL_UID_BYTES);
	conn->reset_seen = true;
	kcoll_adopt_settle(conn);
}

/* Move @from's QP, CQ, slots and buffers to @to.  Both communicators' locks held. */
static void kcoll_conn_move(struct kcoll_conn *to, struct kcoll_conn *from)
{
	u32 i;

	/* Everything kcoll_conn_create_qp() and kcoll_conn_alloc_queues() set up. */
	to->cm_id = from->cm_id;
	to->kdev = from->kdev;
	to->cq = from->cq;
	to->cq_size = from->cq_size;
	to->qp = from->qp;
	to->nsge = from->nsge;
	to->nrx = from->nrx;
	to->rx = from->rx;
	to->hdr = from->hdr;
	to->hdr_dma = from->hdr_dma;
	to->ntx = from->ntx;
	to->tx = from->tx;
	INIT_LIST_HEAD(&to->tx_free);
	list_splice_init(&from->tx_free, &to->tx_free);
	to->tx_busy = from->tx_busy;
	to->early = from->early;
	to->ctl = from->ctl;
	to->ctl_dma = from->ctl_dma;
	to->ctl_busy = from->ctl_busy;
	to->proof = from->proof;
	to->proof_dma = from->proof_dma;
	to->reset_seen = from->reset_seen;
	to->reset_rank = from->reset_rank;
	to->reset_other = from->reset_other;
	to->reset_nranks = from->reset_nranks;
	memcpy(to->reset_uid, from->reset_uid, KCOLL_UID_BYTES);
	for (i = 0; i < to->nrx; i++)
		WRITE_ONCE(to->rx[i].conn, to);
	for (i = 0; i < to->ntx; i++)
		WRITE_ONCE(to->tx[i].conn, to);
	to->cm_id->context = to;
	/* kcoll_qp_event()'s context */
	to->qp->qp_context = to;

	/* The parent keeps what its peer said (its fate), not the connection. */
	from->cm_id = NULL;
	from->kdev = NULL;
	from->cq = NULL;
	from->qp = NULL;
	from->rx = NULL;
	from->nrx = 0;
	from->tx = NULL;
	from->ntx = 0;
	from->tx_busy = 0;
	from->early = NULL;
	from->early_n = 0;
	from->hdr = NULL;
	from->ctl = NULL;
	from->ctl_busy = 0;
	from->proof = NULL;
	from->parked = false;
	from->reset_seen = false;
	from->state = KCOLL_CONN_CLOSED;
}

/*
 * Take @from (the parent's, parked) over as @to and send the RESET.
 * Returns whether it did.  Both communicators' conn_lock held.
 */
static bool kcoll_conn_adopt(struct kcoll_conn *to, struct kcoll_conn *from)
{
	struct kcoll_comm *comm = to->comm, *parent = from->comm;
	struct rdma_cm_id *id = from->cm_id;
	struct kcoll_ctl m;
	bool took = false;
	struct ib_cq *cq;
	u32 i;

	if (!id || !READ_ONCE(from->parked))
		return false;
	/* The cm handler sees the new context, or runs before the move. */
	rdma_lock_handler(id);
	mutex_lock(&parent->lock);
	mutex_lock_nested(&comm->lock, SINGLE_DEPTH_NESTING);
	if (from->parked && parent->dead && !READ_ONCE(from->lost) &&
	    from->state == KCOLL_CONN_UP && !from->stopped && from->active == to->active &&
	    to->state == KCOLL_CONN_IDLE) {
		kcoll_conn_move(to, from);
		to->adopted = true;
		to->state = KCOLL_CONN_CONNECTING;
		/* What the failed operation held or kept early goes back to the RQ. */
		to->early_head = 0;
		to->early_n = 0;
		for (i = 0; i < to->nrx; i++)
			if (!to->rx[i].posted && kcoll_rx_post(&to->rx[i]))
				break;
		kcoll_ctl_init(&m, KCOLL_CTL_RESET, 0);
		m.rank = cpu_to_le32(comm->rank);
		m.other = cpu_to_le32(to->peer);
		m.code = cpu_to_le32(comm->nranks);
		memcpy(m.fp_rank, comm->unique_id, KCOLL_UID_BYTES);
		if (i < to->nrx || kcoll_conn_send_ctl(to, &m))
			kcoll_adopt_failed(to, -EIO);
		else
			kcoll_adopt_settle(to);
		took = true;
	}
	cq = to->cq;
	mutex_unlock(&comm->lock);
	mutex_unlock(&parent->lock);
	rdma_unlock_handler(id);
	/*
	 * A completion handler that read the old connection before the move
	 * finds the new one under its lock (kcoll_conn_lock()); wait for any
	 * such handler, so that none touches the parent once it is gone.
	 */
	if (took)
		flush_work(&cq->work);
	return took;
}

/*
 * Before @comm listens: take over the parent's parked connection to each
 * of @comm's peers, if the two communicators' connections are alike.
 * Returns how many it took.  The creator's context.
 */
u32 kcoll_conns_adopt(struct kcoll_comm *comm, const struct kcoll_parent *parent)
{
	struct kcoll_comm *p = parent->comm;
	u32 i, n = 0;

	if (comm->chunk_bytes != p->chunk_bytes || comm->slots != p->slots ||
	    kcoll_cm_flags(comm) != kcoll_cm_flags(p) || !net_eq(comm->net, p->net)) {
		pr_debug("comm %llu: its parent %llu's connections differ: connecting anew\n",
			 comm->id, p->id);
		return 0;
	}
	/*
	 * An abort returns before fail_work has parked anything (its
	 * operations end there): let it finish, a bounded wait.
	 */
	flush_work(&p->fail_work);
	mutex_lock(&p->conn_lock);
	mutex_lock_nested(&comm->conn_lock, SINGLE_DEPTH_NESTING);
	for (i = 0; i < comm->nranks; i++) {
		if (i == comm->rank)
			continue;
		comm->conns[i].active = i < comm->rank;
		n += kcoll_conn_adopt(&comm->conns[i], &p->conns[parent->ranks[i]]);
	}
	mutex_unlock(&comm->conn_lock);
	mutex_unlock(&p->conn_lock);
	pr_debug("comm %llu: took %u connections over from comm %llu\n", comm->id, n, p->id);
	return n;
}
