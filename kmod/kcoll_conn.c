// SPDX-License-Identifier: GPL-2.0
/*
 * One RC connection to one peer (struct kcoll_conn): its QP and CQ, the
 * rdma_cm events of its id, the handshake, and its tear-down.
 *
 * The connecting side (the higher rank) starts with kcoll_conn_start()
 * and creates the QP when the address is resolved; the accepting side
 * gets its id from the listener and creates the QP in kcoll_conn_accept().
 * With a secret both sides prove they know it (kmod/kcoll_auth.c,
 * uapi/linux/kcoll_wire.h); the accepting side takes nothing from the QP
 * before the connecting side's proof (KCOLL_CONN_AUTH).
 *
 * rdma_cm handlers run in process context with the id's handler mutex
 * held.  They create the QP (ADDR_RESOLVED or CONNECT_REQUEST), connect
 * (ROUTE_RESOLVED) and report state; they never destroy their own id.
 * Tear-down (process context, comm->conn_lock) follows the order the core
 * requires: rdma_disconnect, ib_drain_qp, rdma_destroy_qp, ib_cq_pool_put,
 * rdma_destroy_id, free the slots.
 *
 * Every user can make connections fail: what that logs is rate-limited
 * (kcoll_info_rl()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "kcoll.h"

/* One address or route resolution; a lost ARP reply is not retried by it. */
#define KCOLL_RESOLVE_MS	2000

/* ------------------------------------------------------------ QP setup */

/*
 * Asynchronous events may be delivered in interrupt context (the driver
 * decides; Documentation/infiniband/core_locking.rst): nothing here may
 * sleep, so a fatal error is handed to qp_err_work, which takes comm->lock.
 * The communicator outlives its QPs, and the work is flushed after they
 * are destroyed.
 */
static void kcoll_qp_event(struct ib_event *ev, void *ctx)
{
	struct kcoll_conn *conn = ctx;
	struct kcoll_comm *comm = conn->comm;

	pr_debug("comm %llu: QP to rank %u: %s\n", comm->id, conn->peer,
		 ib_event_msg(ev->event));
	if (ev->event == IB_EVENT_QP_FATAL || ev->event == IB_EVENT_QP_ACCESS_ERR ||
	    ev->event == IB_EVENT_QP_REQ_ERR)
		queue_work(kcoll_wq_get(), &comm->qp_err_work);
}

/*
 * Send SGEs one message needs: the executor's header (on the first
 * message of an operation), then the chunk, which spans one page more
 * than its size when it starts mid-page.
 */
static u32 kcoll_chunk_sges(u32 chunk_bytes)
{
	return 1 + DIV_ROUND_UP(chunk_bytes, PAGE_SIZE) + 1;
}

/*
 * Every chunk goes out in one send work request, so the device must take
 * as many SGEs as a chunk can span.  Checked when the communicator binds
 * its device (COMM_CREATE fails with EINVAL at once) and again for every
 * QP, as a peer's connection may arrive on another device.
 */
int kcoll_check_dev_sges(struct kcoll_comm *comm, struct ib_device *dev)
{
	u32 need = kcoll_chunk_sges(comm->chunk_bytes);
	u32 have = min_t(u32, dev->attrs.max_send_sge, KCOLL_MAX_SGE);

	if (need <= have)
		return 0;
	kcoll_info_rl("comm %llu: chunk_bytes %u needs %u send SGEs, %s takes %u: at most %lu\n",
		      comm->id, comm->chunk_bytes, need, dev_name(&dev->dev), have,
		      have > 2 ? (have - 2) * PAGE_SIZE : 0);
	return -EINVAL;
}

static void kcoll_conn_destroy_qp(struct kcoll_conn *conn)
{
	if (conn->qp) {
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
	}
	if (conn->cq) {
		ib_cq_pool_put(conn->cq, conn->cq_size);
		conn->cq = NULL;
	}
	kcoll_conn_free_queues(conn);
	conn->kdev = NULL;
}

static int kcoll_conn_create_qp(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct kcoll_comm *comm = conn->comm;
	struct ib_qp_init_attr attr = {};
	int ret;

	conn->kdev = kcoll_ibdev_get(id->device);
	if (!conn->kdev)
		return -ENODEV;
	ret = kcoll_check_dev_sges(comm, id->device);
	if (ret) {
		conn->kdev = NULL;
		return ret;
	}
	conn->nsge = kcoll_chunk_sges(comm->chunk_bytes);
	ret = kcoll_conn_alloc_queues(conn);
	if (ret) {
		conn->kdev = NULL;
		return ret;
	}
	/* +1 on each queue for the drain work request. */
	conn->cq_size = conn->ntx + 1 + conn->nrx + 1;
	conn->cq = ib_cq_pool_get(id->device, conn->cq_size, -1, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		goto err;
	}
	attr.event_handler = kcoll_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.cap.max_send_wr = conn->ntx + 1;
	attr.cap.max_recv_wr = conn->nrx + 1;
	attr.cap.max_send_sge = conn->nsge;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, conn->kdev->pd, &attr);
	if (ret)
		goto err;
	conn->qp = id->qp;
	ret = kcoll_conn_post_rx_all(conn);
	if (ret)
		goto err;
	return 0;

err:
	kcoll_conn_destroy_qp(conn);
	return ret;
}

/* --------------------------------------------------------- the handshake */

u32 kcoll_cm_flags(const struct kcoll_comm *comm)
{
	return (comm->auth_tfm ? KCOLL_CM_F_AUTH : 0) |
	       (comm->no_fingerprint ? KCOLL_CM_F_NOFP : 0) |
	       (comm->on_need ? KCOLL_CM_F_ON_NEED : 0);
}

/* Our side of the handshake to rank @dst (struct kcoll_cm_req); draws @nonce. */
/* Is @h kcoll's handshake of this version (the fields both directions share)? */
bool kcoll_hello_valid(const struct kcoll_cm_req *h)
{
	return le32_to_cpu(h->magic) == KCOLL_CM_MAGIC && h->version == KCOLL_CM_VERSION &&
	       h->len == sizeof(*h);
}

static void kcoll_hello_fill(const struct kcoll_comm *comm, u32 dst, struct kcoll_cm_req *r,
			     u8 *nonce)
{
	memset(r, 0, sizeof(*r));
	r->magic = cpu_to_le32(KCOLL_CM_MAGIC);
	r->version = KCOLL_CM_VERSION;
	r->len = sizeof(*r);
	r->slots = comm->slots;
	r->flags = kcoll_cm_flags(comm);
	memcpy(r->uid, comm->unique_id, sizeof(r->uid));
	r->rank = cpu_to_le32(comm->rank);
	r->dst = cpu_to_le32(dst);
	r->nranks = cpu_to_le32(comm->nranks);
	r->chunk_bytes = cpu_to_le32(comm->chunk_bytes);
	kcoll_auth_nonce(nonce);
	memcpy(r->nonce, nonce, sizeof(r->nonce));
}

static int kcoll_rep_fill(struct kcoll_conn *conn, struct kcoll_cm_rep *r)
{
	memset(r, 0, sizeof(*r));
	kcoll_hello_fill(conn->comm, conn->peer, &r->hello, conn->nonce_passive);
	return conn->comm->auth_tfm ? kcoll_auth_mac(conn, 'P', r->mac) : 0;
}

/*
 * The connection's parameters, and the local ACK timeout of @id's QP.
 * A send the peer does not acknowledge is retried qp_retry_count times,
 * qp_timeout apart, then completes with IB_WC_RETRY_EXC_ERR: that is how
 * a dead node or a cut network is noticed, so both are tunables
 * (kcoll_tunables.h).  The retry count travels in the request, and the
 * CM gives the connecting side's to both ends (the accepting side's
 * retry_count is ignored); the ACK timeout is each side's own.  The RNR
 * retry count stays 7, unlimited: credits keep a receive posted for every
 * message, and a receiver late in reposting must not fail the sender.
 */
static int kcoll_conn_param(struct kcoll_comm *comm, struct rdma_cm_id *id,
			    struct rdma_conn_param *param, const void *priv, u8 len)
{
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = len;
	param->flow_control = 1;
	param->retry_count = comm->qp_retry_count;
	param->rnr_retry_count = 7;
	return rdma_set_ack_timeout(id, comm->qp_timeout);
}

/*
 * The errno a failed work completion ends the communicator with; 0 for a
 * flush (the QP was stopped: not news).  A send the peer never
 * acknowledged is the peer's node or the network between us gone
 * (-EHOSTUNREACH), and is logged with the peer's rank; any other error
 * is the local device's or the QP's (-EIO).  Process context.
 */
int kcoll_conn_wc_err(struct kcoll_conn *conn, const struct ib_wc *wc)
{
	struct kcoll_comm *comm = conn->comm;

	switch (wc->status) {
	case IB_WC_SUCCESS:
	case IB_WC_WR_FLUSH_ERR:
		return 0;
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		kcoll_warn_rl("comm %llu: rank %u unreachable: %s (%u retries %lu ms apart)\n",
			      comm->id, conn->peer, ib_wc_status_msg(wc->status),
			      comm->qp_retry_count,
			      (unsigned long)((4096ull << comm->qp_timeout) / NSEC_PER_MSEC));
		return -EHOSTUNREACH;
	default:
		pr_debug("comm %llu: rank %u: %s\n", comm->id, conn->peer,
			 ib_wc_status_msg(wc->status));
		return -EIO;
	}
}

static void kcoll_conn_set(struct kcoll_conn *conn, int state, int err)
{
	/* A failure's first cause is the one to report, not the fallout. */
	if (state != KCOLL_CONN_FAILED || conn->state != KCOLL_CONN_FAILED || !conn->cm_err)
		conn->cm_err = err;
	/* After cm_err and lost, for kcoll_passive_failed() and the creator. */
	smp_store_release(&conn->state, state);
	wake_up_all(&conn->comm->conn_wq);
}

static u32 kcoll_resolve_ms(const struct kcoll_comm *comm)
{
	return min_t(u32, comm->connect_timeout_ms, KCOLL_RESOLVE_MS);
}

/*
 * An established connection went away: the communicator takes no new
 * operations, and the ones under way go on only if they need nothing more
 * of the peer (kcoll_comm_lost()).
 */
static void kcoll_conn_lost(struct kcoll_conn *conn, int err)
{
	struct kcoll_comm *comm = conn->comm;

	conn->lost = true;
	kcoll_conn_set(conn, KCOLL_CONN_FAILED, err);
	pr_debug("comm %llu: connection to rank %u lost: %d\n", comm->id, conn->peer, err);
	kcoll_comm_lost(comm, err);
}

/*
 * fault_abandon_connects: give this attempt up right after its request
 * went out, still under the handler mutex so that no reply can complete
 * the handshake first.  The caller returns non-zero: the core destroys
 * the id, which cancels the request and sends the peer a reject.
 * conn_lock (only tried: tear-down takes the handler mutex under it)
 * keeps everyone else off conn->cm_id meanwhile.
 */
static bool kcoll_fault_abandon_attempt(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	if (!kcoll_fault_abandon_armed() || !mutex_trylock(&comm->conn_lock))
		return false;
	if (!kcoll_fault_abandon()) {
		mutex_unlock(&comm->conn_lock);
		return false;
	}
	pr_info("comm %llu: fault injection: giving up the connection attempt to rank %u\n",
		comm->id, conn->peer);
	if (conn->qp)
		ib_drain_qp(conn->qp);
	kcoll_conn_destroy_qp(conn);
	conn->cm_id = NULL;
	kcoll_conn_set(conn, KCOLL_CONN_FAILED, -ECONNABORTED);
	mutex_unlock(&comm->conn_lock);
	return true;
}

const struct sockaddr *kcoll_conn_peer_addr(const struct rdma_cm_id *id)
{
	return (const struct sockaddr *)&id->route.addr.dst_addr;
}

/*
 * The connecting side, connected: is the accepting side the rank we
 * asked for, with our parameters, and (with a secret) does it prove it
 * knows the secret?  Then send our own proof, ahead of any data.
 */
static int kcoll_conn_accepted(struct kcoll_conn *conn, struct rdma_cm_id *id,
			       const struct rdma_cm_event *ev)
{
	const struct kcoll_cm_rep *r = ev->param.conn.private_data;
	const struct kcoll_cm_req *h = r ? &r->hello : NULL;
	struct kcoll_comm *comm = conn->comm;

	if (!r || ev->param.conn.private_data_len < sizeof(*r) || !kcoll_hello_valid(h) ||
	    memcmp(h->uid, comm->unique_id, sizeof(h->uid)) ||
	    le32_to_cpu(h->rank) != conn->peer || le32_to_cpu(h->dst) != comm->rank ||
	    le32_to_cpu(h->nranks) != comm->nranks ||
	    le32_to_cpu(h->chunk_bytes) != comm->chunk_bytes ||
	    h->slots != comm->slots || h->flags != kcoll_cm_flags(comm)) {
		kcoll_auth_refused(comm, conn->peer, kcoll_conn_peer_addr(id),
				   "its accept does not match this communicator");
		return -ECONNREFUSED;
	}
	if (!comm->auth_tfm)
		return 0;
	memcpy(conn->nonce_passive, h->nonce, KCOLL_NONCE_BYTES);
	if (!kcoll_auth_check(conn, 'P', r->mac)) {
		kcoll_auth_refused(comm, conn->peer, kcoll_conn_peer_addr(id),
				   "it cannot prove the communicator's secret");
		return -EKEYREJECTED;
	}
	return kcoll_conn_send_proof(conn);
}

/*
 * Why the peer's node refused us (struct kcoll_cm_rej): ESTALE (its
 * communicator of this id was destroyed) ends the creation; everything
 * else, ENOENT above all (not created there yet), is retried as the
 * refusal it always was.
 */
static int kcoll_conn_reject_err(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct kcoll_cm_rej *rej;
	u8 len = 0;

	rej = rdma_consumer_reject_data(id, ev, &len);
	if (rej && len >= sizeof(*rej) && le32_to_cpu(rej->magic) == KCOLL_CM_MAGIC &&
	    le32_to_cpu(rej->version) == KCOLL_CM_VERSION &&
	    le32_to_cpu(rej->err) == ESTALE)
		return -ESTALE;
	return -ECONNREFUSED;
}

static int kcoll_conn_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_conn *conn = id->context;
	struct kcoll_comm *comm = conn->comm;
	struct rdma_conn_param param;
	struct kcoll_cm_req req;
	int ret;

	pr_debug("comm %llu: rank %u: %s (%d)\n", comm->id, conn->peer,
		 rdma_event_msg(ev->event), ev->status);
	if (conn->state == KCOLL_CONN_CLOSED)
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = kcoll_conn_create_qp(conn, id);
		if (!ret)
			ret = rdma_resolve_route(id, kcoll_resolve_ms(comm));
		if (ret)
			kcoll_conn_set(conn, KCOLL_CONN_FAILED, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		kcoll_hello_fill(comm, conn->peer, &req, conn->nonce_active);
		/* After the route: the packet lifetime stays rdma_cm's. */
		ret = kcoll_conn_param(comm, id, &param, &req, sizeof(req)) ?:
		      rdma_connect_locked(id, &param);
		if (!ret && kcoll_fault_abandon_attempt(conn))
			return -ECONNABORTED;	/* the core destroys the id */
		if (ret)
			kcoll_conn_set(conn, KCOLL_CONN_FAILED, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!conn->active) {
			/* With a secret, the peer's proof makes it UP (kcoll_rx_proof()). */
			if (!comm->auth_tfm)
				kcoll_conn_set(conn, KCOLL_CONN_UP, 0);
			break;
		}
		ret = kcoll_conn_accepted(conn, id, ev);
		kcoll_conn_set(conn, ret ? KCOLL_CONN_FAILED : KCOLL_CONN_UP, ret);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, kcoll_conn_reject_err(id, ev));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * An accepted connection a shrink took over, gone before the
		 * creation ended: the connecting peer gave it up after its
		 * RESET went out (kcoll_adopt.c) and connects anew.
		 */
		if (conn->state == KCOLL_CONN_UP &&
		    !(conn->reused && !conn->active && !READ_ONCE(comm->connected))) {
			kcoll_conn_lost(conn, -ECONNRESET);
			break;
		}
		/* The peer gave up before the handshake ended. */
		if (conn->state == KCOLL_CONN_AUTH)
			kcoll_auth_refused(comm, conn->peer, kcoll_conn_peer_addr(id),
					   "it left without proving the communicator's secret");
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* kcoll_ib_remove() has already torn this connection down. */
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------- connect, accept */

/* The rank's own address with any local port: the listener owns the rank's port. */
struct sockaddr_storage kcoll_src_addr(const struct kcoll_comm *comm)
{
	struct sockaddr_storage src = comm->addrs[comm->rank];

	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	return src;
}

/*
 * The connecting side: start one attempt at @conn->peer; the cm handler
 * carries it on.  comm->conn_lock held.
 */
int kcoll_conn_start(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct sockaddr_storage src = kcoll_src_addr(comm);
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(comm->net, kcoll_conn_handler, conn, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	conn->cm_id = id;
	conn->stopped = false;
	kcoll_conn_set(conn, KCOLL_CONN_CONNECTING, 0);
	/*
	 * Bounded: a lost ARP reply leaves the neighbour FAILED and the
	 * resolution waiting for its whole timeout; a new attempt asks again.
	 */
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&comm->addrs[conn->peer],
				kcoll_resolve_ms(comm));
	if (ret) {
		conn->cm_id = NULL;
		conn->state = KCOLL_CONN_IDLE;
		rdma_destroy_id(id);
	}
	return ret;
}

/*
 * The accepting side: set up @conn on the listener's child @id for the
 * checked request @req and accept it.  From the listener's request
 * handler, with @conn IDLE (see kcoll_cm_request()); on an error the
 * request is rejected and @conn is IDLE again.
 */
int kcoll_conn_accept(struct kcoll_conn *conn, struct rdma_cm_id *id,
		      const struct kcoll_cm_req *req)
{
	struct kcoll_comm *comm = conn->comm;
	struct rdma_conn_param param;
	struct kcoll_cm_rep rep;
	int ret;

	/* The QP is created on the child id; teardown finds it there. */
	conn->cm_id = id;
	ret = kcoll_conn_create_qp(conn, id);
	if (ret) {
		conn->cm_id = NULL;
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	memcpy(conn->nonce_active, req->nonce, KCOLL_NONCE_BYTES);
	ret = kcoll_rep_fill(conn, &rep);
	if (ret) {
		kcoll_conn_destroy_qp(conn);
		conn->cm_id = NULL;
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	ret = kcoll_conn_param(comm, id, &param, &rep, sizeof(rep));
	if (ret) {
		kcoll_conn_destroy_qp(conn);
		conn->cm_id = NULL;
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return ret;
	}
	id->context = conn;
	id->event_handler = kcoll_conn_handler;
	WRITE_ONCE(conn->superseded, false);
	/*
	 * Ordered after the line above for kcoll_passive_failed().  With a
	 * secret, unproven from here on: the proof may overtake the CM's
	 * own news that the connection is established.
	 */
	smp_store_release(&conn->state, comm->auth_tfm ? KCOLL_CONN_AUTH : KCOLL_CONN_CONNECTING);
	ret = rdma_accept(id, &param);
	if (ret) {
		kcoll_conn_destroy_qp(conn);
		conn->cm_id = NULL;
		kcoll_conn_set(conn, KCOLL_CONN_IDLE, 0);
		/* Non-zero: the core destroys the child id. */
		return ret;
	}
	return 0;
}

/* ------------------------------------------------------------ teardown */

/* Disconnect and drain @conn (parked or not).  comm->conn_lock held, not comm->lock. */
void kcoll_conn_stop(struct kcoll_conn *conn)
{
	int prev;

	if (!conn->cm_id || conn->stopped)
		return;
	/* Exclude the cm handler while the state changes under it. */
	rdma_lock_handler(conn->cm_id);
	prev = conn->state;
	conn->state = KCOLL_CONN_CLOSED;
	rdma_unlock_handler(conn->cm_id);
	if (prev == KCOLL_CONN_UP)
		rdma_disconnect(conn->cm_id);
	if (conn->qp)
		ib_drain_qp(conn->qp);
	conn->stopped = true;
	WRITE_ONCE(conn->parked, false);
}

/* Tear @conn down and leave it in @state.  comm->conn_lock held. */
void kcoll_conn_destroy(struct kcoll_conn *conn, int state)
{
	if (!conn->cm_id)
		return;
	kcoll_conn_stop(conn);
	kcoll_conn_destroy_qp(conn);
	rdma_destroy_id(conn->cm_id);
	conn->cm_id = NULL;
	conn->stopped = false;
	conn->cm_err = 0;
	conn->adopted = false;
	conn->reused = false;
	conn->reset_seen = false;
	/* IDLE hands the connection to the listener (kcoll_cm_request()). */
	smp_store_release(&conn->state, state);
}

void kcoll_conns_stop(struct kcoll_comm *comm)
{
	u32 i;

	mutex_lock(&comm->conn_lock);
	kcoll_listen_detach(comm);
	for (i = 0; i < comm->nranks; i++)
		kcoll_conn_stop(&comm->conns[i]);
	mutex_unlock(&comm->conn_lock);
}

/*
 * Disconnect and drain the connections whose peers left, so that every
 * message they sent has been handed over before anyone judges what is
 * missing.  Process context, without comm->lock (draining waits for the
 * completion handlers, which take it).
 */
void kcoll_conns_stop_lost(struct kcoll_comm *comm)
{
	u32 i;

	mutex_lock(&comm->conn_lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (!READ_ONCE(conn->lost) || conn->departed)
			continue;
		kcoll_conn_stop(conn);
		WRITE_ONCE(conn->departed, true);
	}
	mutex_unlock(&comm->conn_lock);
}

void kcoll_conns_destroy(struct kcoll_comm *comm)
{
	u32 i;

	mutex_lock(&comm->conn_lock);
	kcoll_listen_detach(comm);
	for (i = 0; i < comm->nranks; i++)
		kcoll_conn_destroy(&comm->conns[i], KCOLL_CONN_CLOSED);
	mutex_unlock(&comm->conn_lock);
}

static bool kcoll_conn_on(const struct kcoll_conn *conn, struct ib_device *ibdev)
{
	return conn->cm_id && (conn->cm_id->device == ibdev ||
			       (conn->kdev && conn->kdev->ibdev == ibdev));
}

bool kcoll_conns_on_device(struct kcoll_comm *comm, struct ib_device *ibdev)
{
	bool uses = false;
	u32 i;

	/* The listeners, on every device, are rdma_cm's to move. */
	mutex_lock(&comm->conn_lock);
	for (i = 0; i < comm->nranks && !uses; i++)
		uses = kcoll_conn_on(&comm->conns[i], ibdev);
	mutex_unlock(&comm->conn_lock);
	return uses;
}

int kcoll_conns_remove_device(struct kcoll_comm *comm, struct ib_device *ibdev)
{
	int n = 0;
	u32 i;

	mutex_lock(&comm->conn_lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (kcoll_conn_on(conn, ibdev)) {
			kcoll_conn_destroy(conn, KCOLL_CONN_CLOSED);
			n++;
		}
	}
	mutex_unlock(&comm->conn_lock);
	return n;
}
