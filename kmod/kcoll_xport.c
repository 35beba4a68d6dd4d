// SPDX-License-Identifier: GPL-2.0
/*
 * The transport under the shared executor: kc_xport_ops over RC QPs.
 *
 * Wire protocol, per connection:
 *  - data: SEND_WITH_IMM straight from the registered (or per-operation
 *    pinned) pages, immediate = executor tag (operation sequence number
 *    and message sequence number), at most chunk_bytes; the first message
 *    of an operation starts with the executor's header (KC_HDR_BYTES, see
 *    algo/kc_exec.h), gathered as the first SGE from the connection's
 *    small DMA-mapped header buffer;
 *  - credit: a SEND without immediate and without payload, sent when the
 *    receiver has consumed a data message and reposted its slot.  The
 *    sender turns it into kc_exec_send_done(), which is what bounds the
 *    executor's window;
 *  - control: a SEND without immediate and with a payload, struct
 *    kcoll_ctl (kcoll_ctl.c), from one of KCOLL_CTL_TX small DMA-mapped
 *    buffers of the connection; the receiver copies it out and reposts
 *    the slot at once;
 *  - proof: on a communicator with a secret, the connecting side's first
 *    message is a SEND without immediate carrying struct kcoll_auth_msg;
 *    the accepting side takes nothing else from the QP before it has
 *    checked it (uapi/linux/kcoll_wire.h);
 *  - probe: a zero-length RDMA WRITE, which only the transport sees: the
 *    peer's acknowledgment, or IB_WC_RETRY_EXC_ERR when its node is gone
 *    (kcoll_conn_probe()).
 *
 * Every receive WR owns a slot of chunk_bytes + KC_HDR_BYTES (one
 * physically contiguous allocation of whole pages), and hands the whole
 * message to the executor, which checks and strips the header.  Data from
 * one peer in flight is bounded by the window (slots) and credits in
 * flight by the slots we hold, so 2 * slots receive WRs never run out;
 * one more (KCOLL_CTL_RX) is there for a control message, which holds its
 * slot only while it is copied out.  (A second control message in flight
 * at the same time waits for a slot in RNR retries, which never run out.)
 * Data for an operation that has not started here yet waits in the
 * connection's "early" FIFO.  A connection parked by a failure, or taken
 * over by a shrink and not reset yet, drops what arrives
 * (kcoll_rx_stale(), kcoll_adopt.c).
 *
 * The header buffer is rewritten by the first send of each operation to
 * the peer.  The previous operation's header message was consumed by then
 * (an operation ends only when all its sends are credited), or the
 * connection was lost and drained, or the communicator failed: the device
 * no longer reads it.
 *
 * Completions run on ib_comp_wq (IB_POLL_WORKQUEUE): process context, so
 * the executor may reduce (kernel_fpu sections) and take comm->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "kcoll.h"

static void kcoll_rx_done(struct ib_cq *cq, struct ib_wc *wc);
static void kcoll_tx_done(struct ib_cq *cq, struct ib_wc *wc);

/* A receive slot: the largest message, a chunk after its header. */
static u32 kcoll_rx_bytes(const struct kcoll_comm *comm)
{
	return kcoll_rx_slot_bytes(comm->chunk_bytes);
}

/*
 * The slots and descriptors of a connection: kcoll_comm_footprint() counts
 * exactly these.  Called from rdma_cm handlers (a kernel thread), so the
 * charge goes to the communicator's creator explicitly.
 */
int kcoll_conn_alloc_queues(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct ib_device *ibdev = conn->kdev->ibdev;
	struct mem_cgroup *old_memcg;
	u32 i;

	old_memcg = kcoll_memcg_enter(comm);
	conn->nrx = kcoll_conn_nrx(comm->slots);
	conn->ntx = 4 * comm->slots;
	conn->rx = kcalloc(conn->nrx, sizeof(*conn->rx), GFP_KERNEL_ACCOUNT);
	conn->tx = kcalloc(conn->ntx, sizeof(*conn->tx), GFP_KERNEL_ACCOUNT);
	conn->early = kcalloc(conn->nrx, sizeof(*conn->early), GFP_KERNEL_ACCOUNT);
	if (!conn->rx || !conn->tx || !conn->early)
		goto err;
	INIT_LIST_HEAD(&conn->tx_free);
	conn->tx_busy = 0;
	for (i = 0; i < conn->ntx; i++) {
		conn->tx[i].conn = conn;
		conn->tx[i].cqe.done = kcoll_tx_done;
		conn->tx[i].ctl = -1;
		list_add_tail(&conn->tx[i].free, &conn->tx_free);
	}
	conn->hdr = kzalloc(KC_HDR_BYTES, GFP_KERNEL_ACCOUNT);
	if (!conn->hdr)
		goto err;
	conn->hdr_dma = ib_dma_map_single(ibdev, conn->hdr, KC_HDR_BYTES, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, conn->hdr_dma)) {
		kfree(conn->hdr);
		conn->hdr = NULL;
		goto err;
	}
	for (i = 0; i < conn->nrx; i++) {
		struct kcoll_rx *rx = &conn->rx[i];

		rx->conn = conn;
		rx->cqe.done = kcoll_rx_done;
		/*
		 * Whole pages, not kmalloc(): a power-of-two chunk plus the
		 * header would take twice the chunk from kmalloc.
		 */
		rx->buf = alloc_pages_exact(kcoll_rx_bytes(comm),
					    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!rx->buf)
			goto err;
		rx->dma = ib_dma_map_single(ibdev, rx->buf, kcoll_rx_bytes(comm),
					    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, rx->dma)) {
			free_pages_exact(rx->buf, kcoll_rx_bytes(comm));
			rx->buf = NULL;
			goto err;
		}
	}
	conn->early_head = 0;
	conn->early_n = 0;
	conn->ctl_busy = 0;
	conn->ctl = kcalloc(KCOLL_CTL_TX, sizeof(*conn->ctl), GFP_KERNEL_ACCOUNT);
	if (!conn->ctl)
		goto err;
	conn->ctl_dma = ib_dma_map_single(ibdev, conn->ctl, KCOLL_CTL_TX * sizeof(*conn->ctl),
					  DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, conn->ctl_dma)) {
		kfree(conn->ctl);
		conn->ctl = NULL;
		goto err;
	}
	if (conn->active && comm->auth_tfm) {
		conn->proof = kzalloc(sizeof(*conn->proof), GFP_KERNEL_ACCOUNT);
		if (!conn->proof)
			goto err;
		conn->proof_dma = ib_dma_map_single(ibdev, conn->proof, sizeof(*conn->proof),
						    DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, conn->proof_dma)) {
			kfree(conn->proof);
			conn->proof = NULL;
			goto err;
		}
	}
	kcoll_memcg_exit(old_memcg);
	return 0;

err:
	kcoll_memcg_exit(old_memcg);
	kcoll_conn_free_queues(conn);
	return -ENOMEM;
}

void kcoll_conn_free_queues(struct kcoll_conn *conn)
{
	u32 i;

	for (i = 0; conn->rx && i < conn->nrx; i++) {
		struct kcoll_rx *rx = &conn->rx[i];

		if (!rx->buf)
			continue;
		ib_dma_unmap_single(conn->kdev->ibdev, rx->dma,
				    kcoll_rx_bytes(conn->comm), DMA_FROM_DEVICE);
		free_pages_exact(rx->buf, kcoll_rx_bytes(conn->comm));
	}
	if (conn->hdr) {
		ib_dma_unmap_single(conn->kdev->ibdev, conn->hdr_dma, KC_HDR_BYTES,
				    DMA_TO_DEVICE);
		kfree(conn->hdr);
		conn->hdr = NULL;
	}
	if (conn->ctl) {
		ib_dma_unmap_single(conn->kdev->ibdev, conn->ctl_dma,
				    KCOLL_CTL_TX * sizeof(*conn->ctl), DMA_TO_DEVICE);
		kfree(conn->ctl);
		conn->ctl = NULL;
	}
	if (conn->proof) {
		ib_dma_unmap_single(conn->kdev->ibdev, conn->proof_dma, sizeof(*conn->proof),
				    DMA_TO_DEVICE);
		kfree(conn->proof);
		conn->proof = NULL;
	}
	kfree(conn->rx);
	kfree(conn->tx);
	kfree(conn->early);
	conn->rx = NULL;
	conn->tx = NULL;
	conn->early = NULL;
	conn->early_n = 0;
	conn->nrx = 0;
	conn->ntx = 0;
}

int kcoll_rx_post(struct kcoll_rx *rx)
{
	struct kcoll_conn *conn = rx->conn;
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret;

	ib_dma_sync_single_for_device(conn->kdev->ibdev, rx->dma,
				      kcoll_rx_bytes(conn->comm), DMA_FROM_DEVICE);
	sge.addr = rx->dma;
	sge.length = kcoll_rx_bytes(conn->comm);
	sge.lkey = conn->kdev->pd->local_dma_lkey;
	wr.wr_cqe = &rx->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_recv(conn->qp, &wr, NULL);
	rx->posted = !ret;
	return ret;
}

int kcoll_conn_post_rx_all(struct kcoll_conn *conn)
{
	u32 i;
	int ret;

	for (i = 0; i < conn->nrx; i++) {
		ret = kcoll_rx_post(&conn->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static struct kcoll_tx *kcoll_tx_get(struct kcoll_conn *conn)
{
	struct kcoll_tx *tx;

	tx = list_first_entry_or_null(&conn->tx_free, struct kcoll_tx, free);
	if (tx) {
		list_del(&tx->free);
		conn->tx_busy++;
	}
	return tx;
}

static void kcoll_tx_put(struct kcoll_conn *conn, struct kcoll_tx *tx)
{
	if (tx->ctl >= 0)
		conn->ctl_busy &= ~BIT(tx->ctl);
	tx->ctl = -1;
	list_add(&tx->free, &conn->tx_free);
	conn->tx_busy--;
}

static int kcoll_post(struct kcoll_conn *conn, struct kcoll_tx *tx, u32 nsge,
		      bool imm, u32 tag)
{
	struct ib_send_wr wr = {};
	int ret;

	wr.wr_cqe = &tx->cqe;
	wr.sg_list = nsge ? tx->sge : NULL;
	wr.num_sge = nsge;
	wr.send_flags = IB_SEND_SIGNALED;
	if (imm) {
		wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.ex.imm_data = cpu_to_be32(tag);
	} else {
		wr.opcode = IB_WR_SEND;
	}
	ret = ib_post_send(conn->qp, &wr, NULL);
	if (ret)
		kcoll_tx_put(conn, tx);
	return ret;
}

/*
 * The connecting side proves it knows the secret: the first message on
 * the QP, so it arrives before any data.  From the cm handler, connected.
 */
int kcoll_conn_send_proof(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct ib_device *ibdev = conn->kdev->ibdev;
	struct kcoll_tx *tx;
	int ret;

	conn->proof->magic = cpu_to_le32(KCOLL_AUTH_MAGIC);
	conn->proof->version = cpu_to_le32(KCOLL_CM_VERSION);
	ret = kcoll_auth_mac(conn, 'A', conn->proof->mac);
	if (ret)
		return ret;
	ib_dma_sync_single_for_device(ibdev, conn->proof_dma, sizeof(*conn->proof),
				      DMA_TO_DEVICE);
	mutex_lock(&comm->lock);
	tx = kcoll_tx_get(conn);
	if (tx) {
		tx->sge[0].addr = conn->proof_dma;
		tx->sge[0].length = sizeof(*conn->proof);
		tx->sge[0].lkey = conn->kdev->pd->local_dma_lkey;
		ret = kcoll_post(conn, tx, 1, false, 0);
	} else {
		ret = -ENOBUFS;
	}
	mutex_unlock(&comm->lock);
	return ret ? -EIO : 0;
}

/*
 * A control message to the peer, from a free control buffer.  0, or
 * -ENOBUFS when every buffer or send descriptor is busy, or the post's
 * error.  comm->lock held.
 */
int kcoll_conn_send_ctl(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	struct kcoll_tx *tx;
	u64 dma;
	u32 i;

	if (!conn->ctl)
		return -ENOTCONN;
	for (i = 0; i < KCOLL_CTL_TX && (conn->ctl_busy & BIT(i)); i++)
		;
	if (i == KCOLL_CTL_TX)
		return -ENOBUFS;
	tx = kcoll_tx_get(conn);
	if (!tx)
		return -ENOBUFS;
	conn->ctl[i] = *m;
	dma = conn->ctl_dma + i * sizeof(*m);
	ib_dma_sync_single_for_device(conn->kdev->ibdev, dma, sizeof(*m), DMA_TO_DEVICE);
	tx->sge[0].addr = dma;
	tx->sge[0].length = sizeof(*m);
	tx->sge[0].lkey = conn->kdev->pd->local_dma_lkey;
	tx->ctl = i;
	conn->ctl_busy |= BIT(i);
	return kcoll_post(conn, tx, 1, false, 0);
}

/*
 * The accepting side, before the peer's proof: the first message must be
 * it, and nothing reaches the executor until it checked out.  Returns
 * whether the slot goes back to the RQ.  comm->lock held.
 */
static bool kcoll_rx_proof(struct kcoll_conn *conn, struct kcoll_rx *rx, const struct ib_wc *wc)
{
	struct kcoll_comm *comm = conn->comm;
	const struct kcoll_auth_msg *m = rx->buf;
	const char *why = NULL;

	ib_dma_sync_single_for_cpu(conn->kdev->ibdev, rx->dma, wc->byte_len, DMA_FROM_DEVICE);
	if ((wc->wc_flags & IB_WC_WITH_IMM) || wc->byte_len != sizeof(*m) ||
	    le32_to_cpu(m->magic) != KCOLL_AUTH_MAGIC ||
	    le32_to_cpu(m->version) != KCOLL_CM_VERSION)
		why = "its first message is not a proof";
	else if (!kcoll_auth_check(conn, 'A', m->mac))
		why = "it cannot prove the communicator's secret";

	if (!why) {
		if (cmpxchg(&conn->state, KCOLL_CONN_AUTH, KCOLL_CONN_UP) != KCOLL_CONN_AUTH)
			return false;	/* the cm handler failed it meanwhile */
		wake_up_all(&comm->conn_wq);
		return true;
	}
	kcoll_auth_refused(comm, conn->peer,
			   (const struct sockaddr *)&conn->cm_id->route.addr.dst_addr, why);
	/* The creator puts it back to IDLE for the real peer's next attempt. */
	conn->cm_err = -EKEYREJECTED;
	if (cmpxchg(&conn->state, KCOLL_CONN_AUTH, KCOLL_CONN_FAILED) == KCOLL_CONN_AUTH)
		wake_up_all(&comm->conn_wq);
	return false;
}

/* Credit one consumed slot back to the peer.  comm->lock held. */
static void kcoll_credit(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_tx *tx = kcoll_tx_get(conn);

	if (!tx || kcoll_post(conn, tx, 0, false, 0)) {
		pr_debug("comm %llu: cannot credit rank %u\n", comm->id, conn->peer);
		kcoll_comm_fail(comm, -EIO);
	}
}

/*
 * kc_xport_ops.send: one message of one step, after the header if there
 * is one.  comm->lock held.
 */
static int kcoll_xport_send(void *ctx, u32 peer, u32 tag, const void *hdr, u32 hdr_len,
			    u8 buf, u64 off, const void *data, u32 len)
{
	struct kcoll_comm_op *op = ctx;
	struct kcoll_comm *comm = op->comm;
	struct kcoll_conn *conn;
	struct kcoll_mr *mr;
	struct kcoll_tx *tx;
	u32 nsge = 0, first = 0;	/* first: the first data SGE */
	u64 pos;
	int ret;

	if (peer >= comm->nranks || peer == comm->rank)
		return -EPROTO;
	conn = &comm->conns[peer];
	if (READ_ONCE(conn->lost))
		return -ECONNRESET;
	if (comm->dead || conn->state != KCOLL_CONN_UP)
		return -ENOTCONN;
	tx = kcoll_tx_get(conn);
	if (!tx)
		return -ENOBUFS;

	mr = op->mr[buf];
	if ((len && (!mr || !mr->dma)) || hdr_len > KC_HDR_BYTES) {
		kcoll_tx_put(conn, tx);
		return -EFAULT;
	}
	if (hdr_len) {
		memcpy(conn->hdr, hdr, hdr_len);
		ib_dma_sync_single_for_device(conn->kdev->ibdev, conn->hdr_dma, hdr_len,
					      DMA_TO_DEVICE);
		tx->sge[0].addr = conn->hdr_dma;
		tx->sge[0].length = hdr_len;
		tx->sge[0].lkey = conn->kdev->pd->local_dma_lkey;
		nsge = 1;
		first = 1;
	}
	pos = len ? op->mroff[buf] + off : 0;
	while (len) {
		u64 idx = pos >> PAGE_SHIFT;
		u32 pgo = offset_in_page(pos);
		u32 n = min_t(u32, PAGE_SIZE - pgo, len);
		u64 addr = mr->dma[idx] + pgo;

		if (nsge > first && tx->sge[nsge - 1].addr + tx->sge[nsge - 1].length == addr) {
			tx->sge[nsge - 1].length += n;
		} else {
			if (nsge == conn->nsge) {
				kcoll_tx_put(conn, tx);
				return -EMSGSIZE;
			}
			tx->sge[nsge].addr = addr;
			tx->sge[nsge].length = n;
			tx->sge[nsge].lkey = conn->kdev->pd->local_dma_lkey;
			nsge++;
		}
		pos += n;
		len -= n;
	}
	ret = kcoll_post(conn, tx, nsge, true, tag);
	if (ret)
		pr_debug("comm %llu: post send to rank %u failed: %d\n", comm->id, peer, ret);
	return ret ? -EIO : 0;
}

/*
 * Ask @conn's peer for an acknowledgment and nothing else: a zero-length
 * RDMA WRITE touches none of its memory (IBA C9-88) and consumes no
 * receive.  A peer whose node died or is cut off never acknowledges it:
 * the QP's retries run out (kcoll_conn_wc_err()), as for any send.
 * Skipped when no descriptor is free: sends in flight ask already.
 * comm->lock held.
 */
void kcoll_conn_probe(struct kcoll_conn *conn)
{
	struct ib_rdma_wr wr = {};
	struct kcoll_tx *tx;

	if (conn->comm->dead || conn->state != KCOLL_CONN_UP || READ_ONCE(conn->lost))
		return;
	tx = kcoll_tx_get(conn);
	if (!tx)
		return;
	wr.wr.wr_cqe = &tx->cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(conn->qp, &wr.wr, NULL))
		kcoll_tx_put(conn, tx);
}

/* kc_xport_ops.release: the executor is done with a slot.  comm->lock held. */
static void kcoll_xport_release(void *ctx, u32 peer, void *slot)
{
	struct kcoll_comm_op *op = ctx;
	struct kcoll_rx *rx = slot;
	struct kcoll_conn *conn;

	/* Once dead, the slots may be gone with their device. */
	if (op->comm->dead)
		return;
	conn = rx->conn;
	if (conn->state != KCOLL_CONN_UP)
		return;
	if (kcoll_rx_post(rx)) {
		kcoll_comm_fail(op->comm, -EIO);
		return;
	}
	kcoll_credit(conn);
}

const struct kc_xport_ops kcoll_xport_ops = {
	.send = kcoll_xport_send,
	.release = kcoll_xport_release,
};

/*
 * Hand the active operation the oldest message of @conn's FIFO if it
 * belongs to it.  Whether one was handed.  comm->lock held.
 */
static bool kcoll_conn_feed_one(struct kcoll_conn *conn)
{
	struct kcoll_comm_op *op = conn->comm->active;
	struct kcoll_rx *rx;

	if (!conn->early_n || !op || !op->ex_ready || kc_exec_status(&op->ex) != -EINPROGRESS)
		return false;
	rx = conn->early[conn->early_head];
	if (kc_tag_op_seq(rx->tag) != op->seq)
		return false;
	conn->early_head = (conn->early_head + 1) % conn->nrx;
	conn->early_n--;
	kc_exec_recv(&op->ex, conn->peer, rx->tag, rx->buf, rx->len, rx);
	return true;
}

/*
 * Hand the active operation the messages of @conn's FIFO that belong to
 * it, in arrival order.  comm->lock held.
 */
void kcoll_conn_feed_early(struct kcoll_conn *conn)
{
	while (kcoll_conn_feed_one(conn))
		;
}

/* How many messages of @conn's FIFO belong to operation @op_seq.  comm->lock held. */
u32 kcoll_conn_pending(const struct kcoll_conn *conn, u8 op_seq)
{
	u32 n = 0;

	while (n < conn->early_n &&
	       kc_tag_op_seq(conn->early[(conn->early_head + n) % conn->nrx]->tag) == op_seq)
		n++;
	return n;
}

/*
 * feed_work: the chunks of every connection's FIFO, one message per
 * connection and turn, comm->lock dropped in between so that a
 * completion (a control message above all) never waits for more than one
 * message's copy or reduction.
 */
void kcoll_comm_feed_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(work, struct kcoll_comm, feed_work);
	bool fed = true;
	u32 i;

	while (fed) {
		fed = false;
		mutex_lock(&comm->lock);
		for (i = 0; i < comm->nranks; i++)
			if (i != comm->rank && kcoll_conn_feed_one(&comm->conns[i]))
				fed = true;
		kcoll_comm_advance(comm);
		mutex_unlock(&comm->lock);
		cond_resched();
	}
}

/*
 * A parked connection, or one a shrink took over that has not had the
 * peer's RESET yet (kcoll_adopt.c): what arrives is the failed
 * communicator's.  The slot goes straight back and nothing is credited.
 * A control message still tells the failed communicator who is alive
 * (a peer that failed later than this rank says so now); on a connection
 * taken over only a RESET counts.  comm->lock held.
 */
static void kcoll_rx_stale(struct kcoll_conn *conn, struct kcoll_rx *rx, const struct ib_wc *wc)
{
	struct kcoll_ctl m;
	bool ctl = !(wc->wc_flags & IB_WC_WITH_IMM) && wc->byte_len == sizeof(m);

	if (ctl) {
		ib_dma_sync_single_for_cpu(conn->kdev->ibdev, rx->dma, sizeof(m), DMA_FROM_DEVICE);
		memcpy(&m, rx->buf, sizeof(m));
	}
	if (kcoll_rx_post(rx)) {
		if (conn->adopted)
			kcoll_adopt_failed(conn, -EIO);
		return;
	}
	if (ctl && conn->parked)
		kcoll_ctl_recv(conn, &m, sizeof(m));
	else if (ctl)
		kcoll_adopt_ctl(conn, &m);
}

static void kcoll_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_rx *rx = container_of(wc->wr_cqe, struct kcoll_rx, cqe);
	struct kcoll_conn *conn = kcoll_conn_lock(&rx->conn);
	struct kcoll_comm *comm = conn->comm;

	kcoll_ctl_bye_if_doomed(comm);
	rx->posted = false;
	if (wc->status != IB_WC_SUCCESS) {
		int err = kcoll_conn_wc_err(conn, wc);

		/* A parked connection fails nobody; a taken-over one connects anew. */
		if (err && conn->adopted)
			kcoll_adopt_failed(conn, err);
		else if (err && !conn->parked)
			kcoll_comm_fail_conn(conn, err);
		goto out;
	}
	if (conn->parked || conn->adopted) {
		kcoll_rx_stale(conn, rx, wc);
		goto out;
	}
	if (comm->dead)
		goto out;
	if (READ_ONCE(conn->state) == KCOLL_CONN_AUTH) {
		/* Unproven: the proof or nothing. */
		if (kcoll_rx_proof(conn, rx, wc) && kcoll_rx_post(rx))
			kcoll_comm_fail(comm, -EIO);
		goto out;
	}
	if (!(wc->wc_flags & IB_WC_WITH_IMM) && wc->byte_len) {
		u8 msg[sizeof(struct kcoll_ctl)];
		u32 len = min_t(u32, wc->byte_len, sizeof(msg));

		/* A control message: copied out, and the slot goes back. */
		ib_dma_sync_single_for_cpu(conn->kdev->ibdev, rx->dma, len, DMA_FROM_DEVICE);
		memcpy(msg, rx->buf, len);
		if (kcoll_rx_post(rx)) {
			kcoll_comm_fail(comm, -EIO);
			goto out;
		}
		kcoll_ctl_recv(conn, msg, wc->byte_len);
	} else if (!(wc->wc_flags & IB_WC_WITH_IMM)) {
		struct kcoll_comm_op *op = comm->active;

		/* A credit: the slot goes straight back to the RQ. */
		if (kcoll_rx_post(rx)) {
			kcoll_comm_fail(comm, -EIO);
			goto out;
		}
		if (op && op->ex_ready)
			kc_exec_send_done(&op->ex, conn->peer);
	} else {
		ib_dma_sync_single_for_cpu(conn->kdev->ibdev, rx->dma, wc->byte_len,
					   DMA_FROM_DEVICE);
		rx->len = wc->byte_len;
		rx->tag = be32_to_cpu(wc->ex.imm_data);
		if (conn->early_n == conn->nrx) {
			kcoll_comm_fail(comm, -EPROTO);
			goto out;
		}
		conn->early[(conn->early_head + conn->early_n) % conn->nrx] = rx;
		conn->early_n++;
		/*
		 * A small message alone is consumed here.  A chunk (5-25 ms
		 * of copying or reducing under TCG), or one behind others,
		 * goes to feed_work: this work runs at high priority and in
		 * completion order, so a farewell behind a backlog of chunks
		 * waited for all of it, and the owner's process (a dying one
		 * on its way to kcoll_ctl_mm_release()) got no CPU meanwhile.
		 */
		if (conn->early_n == 1 && rx->len <= KCOLL_FEED_INLINE_BYTES)
			kcoll_conn_feed_early(conn);
		else
			queue_work(kcoll_feed_wq_get(), &comm->feed_work);
	}
	kcoll_comm_advance(comm);
out:
	mutex_unlock(&comm->lock);
}

static void kcoll_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_tx *tx = container_of(wc->wr_cqe, struct kcoll_tx, cqe);
	struct kcoll_conn *conn = kcoll_conn_lock(&tx->conn);
	struct kcoll_comm *comm = conn->comm;
	int err = kcoll_conn_wc_err(conn, wc);

	kcoll_ctl_bye_if_doomed(comm);
	kcoll_tx_put(conn, tx);
	if (!conn->tx_busy || !conn->ctl_busy)
		wake_up_all(&comm->done_wq);
	/* A parked connection fails nobody; a taken-over one connects anew. */
	if (err && conn->adopted)
		kcoll_adopt_failed(conn, err);
	else if (err && !conn->parked)
		kcoll_comm_fail_conn(conn, err);
	mutex_unlock(&comm->lock);
}
