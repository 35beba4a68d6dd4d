// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA plumbing: the ib_client that tracks devices (one PD each), the
 * per-communicator rdma_cm listener, and one RC connection per peer.
 *
 * Rank r connects to every rank below it and accepts every rank above it,
 * so each pair has exactly one QP and no side has to guess (the highest
 * rank accepts nothing and does not listen).  The request's private data
 * carries the rank and the parameters both sides must agree on; a
 * mismatch is rejected.  Who may connect is decided here too: a request
 * must come from the address the rank table gives for the rank it claims,
 * and with a secret both sides prove they know it (kmod/kcoll_auth.c,
 * uapi/linux/kcoll_wire.h); the accepting side takes nothing from the QP
 * before the connecting side's proof (KCOLL_CONN_AUTH).
 *
 * Attempts fail under load (a lost ARP reply or CM message, a peer that
 * gives up an attempt): the connecting side retries until the connect
 * timeout, each address and route resolution bounded by KCOLL_RESOLVE_MS,
 * and the accepting side puts a connection whose handshake failed back to
 * IDLE (kcoll_passive_reset()) so that the retry is accepted.
 *
 * rdma_cm handlers run in process context with the id's handler mutex
 * held.  They create the QP (ADDR_RESOLVED or CONNECT_REQUEST), connect
 * (ROUTE_RESOLVED) and report state; they never destroy their own id.
 * Tear-down (process context, comm->conn_lock) follows the order the core
 * requires: rdma_disconnect, ib_drain_qp, rdma_destroy_qp, ib_cq_pool_put,
 * rdma_destroy_id, free the slots.
 *
 * Whoever reaches a listener's port can send it requests, and every user
 * can make connections fail: what that logs is rate-limited
 * (kcoll_info_rl()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "kcoll.h"

#define KCOLL_RETRY_MS		100
/* One address or route resolution; a lost ARP reply is not retried by it. */
#define KCOLL_RESOLVE_MS	2000

/*
 * Fault injection for the tests (selftests/kcoll/kcoll_connect.c): the
 * next N connection attempts of this node are given up right after their
 * request went out, as when a loaded rank gives up an attempt.  The peer
 * has accepted the request and then sees a reject, or (when the reject
 * overtook its reply and so names no connection of the peer's) nothing
 * more, until the next request.
 */
static unsigned int kcoll_fault_abandon_connects;
module_param_named(fault_abandon_connects, kcoll_fault_abandon_connects, uint, 0644);
MODULE_PARM_DESC(fault_abandon_connects,
		 "testing: give up the next N outgoing connection attempts after sending their request (default 0)");

static bool kcoll_fault_abandon(void)
{
	unsigned int n = READ_ONCE(kcoll_fault_abandon_connects), old;

	while (n) {
		old = cmpxchg(&kcoll_fault_abandon_connects, n, n - 1);
		if (old == n)
			return true;
		n = old;
	}
	return false;
}

static LIST_HEAD(kcoll_ibdevs);
static DEFINE_MUTEX(kcoll_ibdevs_lock);

static int kcoll_ib_add(struct ib_device *ibdev);
static void kcoll_ib_remove(struct ib_device *ibdev, void *client_data);

static struct ib_client kcoll_ib_client = {
	.name = "kcoll",
	.add = kcoll_ib_add,
	.remove = kcoll_ib_remove,
};

static int kcoll_ib_add(struct ib_device *ibdev)
{
	struct kcoll_ibdev *kdev;
	int ret;

	kdev = kzalloc(sizeof(*kdev), GFP_KERNEL);
	if (!kdev)
		return -ENOMEM;
	kdev->ibdev = ibdev;
	kdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(kdev->pd)) {
		ret = PTR_ERR(kdev->pd);
		kfree(kdev);
		return ret;
	}
	mutex_lock(&kcoll_ibdevs_lock);
	list_add_tail(&kdev->node, &kcoll_ibdevs);
	mutex_unlock(&kcoll_ibdevs_lock);
	ib_set_client_data(ibdev, &kcoll_ib_client, kdev);
	pr_debug("device %s added\n", dev_name(&ibdev->dev));
	return 0;
}

/*
 * Runs before rdma_cm's own removal (clients go LIFO), so every QP, CQ and
 * cm_id of ours on this device is gone before the core waits for them.
 */
static void kcoll_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct kcoll_ibdev *kdev = client_data;

	kcoll_comms_remove_device(ibdev);
	mutex_lock(&kcoll_ibdevs_lock);
	list_del(&kdev->node);
	mutex_unlock(&kcoll_ibdevs_lock);
	ib_dealloc_pd(kdev->pd);
	kfree(kdev);
	pr_debug("device %s removed\n", dev_name(&ibdev->dev));
}

struct kcoll_ibdev *kcoll_ibdev_get(struct ib_device *ibdev)
{
	return ib_get_client_data(ibdev, &kcoll_ib_client);
}

int kcoll_rdma_init(void)
{
	return ib_register_client(&kcoll_ib_client);
}

void kcoll_rdma_exit(void)
{
	ib_unregister_client(&kcoll_ib_client);
}

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
static int kcoll_check_dev_sges(struct kcoll_comm *comm, struct ib_device *dev)
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

/* The parameters both sides of a connection must agree on. */
static u32 kcoll_cm_flags(const struct kcoll_comm *comm)
{
	return comm->auth_tfm ? KCOLL_CM_F_AUTH : 0;
}

/* What both sides say of themselves, with a fresh @nonce (kept in @conn). */
static void kcoll_hello_fill(const struct kcoll_comm *comm, struct kcoll_cm_req *r, u8 *nonce)
{
	memset(r, 0, sizeof(*r));
	r->magic = cpu_to_le32(KCOLL_CM_MAGIC);
	r->version = cpu_to_le32(KCOLL_CM_VERSION);
	r->rank = cpu_to_le32(comm->rank);
	r->nranks = cpu_to_le32(comm->nranks);
	r->chunk_bytes = cpu_to_le32(comm->chunk_bytes);
	r->slots = cpu_to_le32(comm->slots);
	r->flags = cpu_to_le32(kcoll_cm_flags(comm));
	kcoll_auth_nonce(nonce);
	memcpy(r->nonce, nonce, sizeof(r->nonce));
}

/* The accept: our nonce and, with a secret, our proof for the request's. */
static int kcoll_rep_fill(struct kcoll_conn *conn, struct kcoll_cm_rep *r)
{
	memset(r, 0, sizeof(*r));
	kcoll_hello_fill(conn->comm, &r->hello, conn->nonce_passive);
	return conn->comm->auth_tfm ? kcoll_auth_mac(conn, 'P', r->mac) : 0;
}

static void kcoll_conn_param(struct rdma_conn_param *param, const void *priv, u8 len)
{
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = len;
	param->flow_control = 1;
	param->retry_count = 7;
	param->rnr_retry_count = 7;
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

	if (!READ_ONCE(kcoll_fault_abandon_connects) || !mutex_trylock(&comm->conn_lock))
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

/* The peer's address as rdma_cm knows it, for messages. */
static const struct sockaddr *kcoll_conn_peer_addr(const struct rdma_cm_id *id)
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

	if (!r || ev->param.conn.private_data_len < sizeof(*r) ||
	    le32_to_cpu(h->magic) != KCOLL_CM_MAGIC ||
	    le32_to_cpu(h->version) != KCOLL_CM_VERSION ||
	    le32_to_cpu(h->rank) != conn->peer ||
	    le32_to_cpu(h->nranks) != comm->nranks ||
	    le32_to_cpu(h->chunk_bytes) != comm->chunk_bytes ||
	    le32_to_cpu(h->slots) != comm->slots ||
	    le32_to_cpu(h->flags) != kcoll_cm_flags(comm)) {
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
		kcoll_hello_fill(comm, &req, conn->nonce_active);
		kcoll_conn_param(&param, &req, sizeof(req));
		ret = rdma_connect_locked(id, &param);
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
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		kcoll_conn_set(conn, KCOLL_CONN_FAILED, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (conn->state == KCOLL_CONN_UP) {
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

/*
 * Is this request one of ours, from the rank it claims?  Returns the
 * request (its rank in *@peer), or NULL with the reason in *@why.
 */
static const struct kcoll_cm_req *kcoll_req_check(struct kcoll_comm *comm,
						  const struct rdma_cm_id *id,
						  const struct rdma_cm_event *ev, u32 *peer,
						  const char **why)
{
	const struct kcoll_cm_req *r = ev->param.conn.private_data;

	*peer = U32_MAX;
	if (!r || ev->param.conn.private_data_len < sizeof(*r) ||
	    le32_to_cpu(r->magic) != KCOLL_CM_MAGIC ||
	    le32_to_cpu(r->version) != KCOLL_CM_VERSION) {
		*why = "not a kcoll request of this version";
		return NULL;
	}
	*peer = le32_to_cpu(r->rank);
	if (le32_to_cpu(r->nranks) != comm->nranks ||
	    le32_to_cpu(r->chunk_bytes) != comm->chunk_bytes ||
	    le32_to_cpu(r->slots) != comm->slots) {
		*why = "rank count, chunk_bytes or slots differ";
		return NULL;
	}
	/* Only higher ranks connect to us. */
	if (*peer <= comm->rank || *peer >= comm->nranks) {
		*why = "that rank does not connect to this one";
		return NULL;
	}
	if (le32_to_cpu(r->flags) != kcoll_cm_flags(comm)) {
		*why = comm->auth_tfm ? "it has no secret" :
			"it has a secret and this communicator has none";
		return NULL;
	}
	if (!kcoll_auth_addr_ok(comm, *peer, kcoll_conn_peer_addr(id))) {
		*why = "not that rank's address in the rank table";
		return NULL;
	}
	return r;
}

/*
 * CONNECT_REQUEST on a child of the listener; id->context is the comm.
 *
 * Requests run one at a time (under the listener's handler mutex) and may
 * not take comm->conn_lock (tear-down destroys the listener under it), so
 * the connection is handed over through its state: the listener may set up
 * only an IDLE connection, and the creator's thread (kcoll_passive_reset(),
 * under conn_lock) returns a failed one to IDLE.
 */
static int kcoll_cm_request(struct kcoll_comm *comm, struct rdma_cm_id *id,
			    struct rdma_cm_event *ev)
{
	const struct kcoll_cm_req *req;
	struct rdma_conn_param param;
	struct kcoll_cm_rep rep;
	struct kcoll_conn *conn;
	const char *why;
	int state;
	u32 peer;
	int ret;

	req = kcoll_req_check(comm, id, ev, &peer, &why);
	if (!req) {
		kcoll_auth_refused(comm, peer, kcoll_conn_peer_addr(id), why);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -EINVAL;
	}
	conn = &comm->conns[peer];
	/* Pairs with the release in kcoll_conn_destroy(). */
	state = smp_load_acquire(&conn->state);
	if (state != KCOLL_CONN_IDLE) {
		/*
		 * The peer tries one attempt at a time: a new request means
		 * it gave up the one that is not up yet, even if no reject
		 * of that one reached us.  Its next retry finds it IDLE.
		 */
		if ((state == KCOLL_CONN_CONNECTING || state == KCOLL_CONN_AUTH ||
		     state == KCOLL_CONN_FAILED) && !READ_ONCE(conn->lost)) {
			if (state == KCOLL_CONN_AUTH)
				kcoll_auth_refused(comm, peer, kcoll_conn_peer_addr(id),
						   "an earlier attempt never proved the secret");
			WRITE_ONCE(conn->superseded, true);
			wake_up_all(&comm->conn_wq);
		}
		pr_debug("comm %llu: rank %u connects again (state %d); rejected\n",
			 comm->id, peer, state);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -EBUSY;
	}
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
	kcoll_conn_param(&param, &rep, sizeof(rep));
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

static int kcoll_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_comm *comm = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return kcoll_cm_request(comm, id, ev);
	pr_debug("comm %llu: listener: %s\n", comm->id, rdma_event_msg(ev->event));
	return 0;
}

int kcoll_listen(struct kcoll_comm *comm)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, kcoll_listen_handler, comm, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (comm->addrs[comm->rank].ss_family == AF_INET6) {
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto err;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&comm->addrs[comm->rank]);
	if (ret) {
		kcoll_info_rl("comm %llu: cannot bind rank %u's address and port: %d\n",
			      comm->id, comm->rank, ret);
		goto err;
	}
	/* Bound to one address, the id knows its device: check it now. */
	if (id->device) {
		ret = kcoll_check_dev_sges(comm, id->device);
		if (ret)
			goto err;
	}
	ret = rdma_listen(id, min_t(u32, comm->nranks, 128));
	if (ret)
		goto err;
	comm->listen_id = id;
	return 0;

err:
	rdma_destroy_id(id);
	return ret;
}

/* ------------------------------------------------------------ teardown */

/* Stop traffic: nothing completes on this QP any more afterwards. */
static void kcoll_conn_stop(struct kcoll_conn *conn)
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
}

static void kcoll_conn_destroy(struct kcoll_conn *conn, int state)
{
	if (!conn->cm_id)
		return;
	kcoll_conn_stop(conn);
	kcoll_conn_destroy_qp(conn);
	rdma_destroy_id(conn->cm_id);
	conn->cm_id = NULL;
	conn->stopped = false;
	conn->cm_err = 0;
	/* IDLE hands the connection to the listener (kcoll_cm_request()). */
	smp_store_release(&conn->state, state);
}

static void kcoll_listen_destroy(struct kcoll_comm *comm)
{
	if (comm->listen_id) {
		rdma_destroy_id(comm->listen_id);
		comm->listen_id = NULL;
	}
}

void kcoll_conns_stop(struct kcoll_comm *comm)
{
	u32 i;

	mutex_lock(&comm->conn_lock);
	kcoll_listen_destroy(comm);
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
	kcoll_listen_destroy(comm);
	for (i = 0; i < comm->nranks; i++)
		kcoll_conn_destroy(&comm->conns[i], KCOLL_CONN_CLOSED);
	mutex_unlock(&comm->conn_lock);
}

static bool kcoll_conn_on(const struct kcoll_conn *conn, struct ib_device *ibdev)
{
	return conn->cm_id && (conn->cm_id->device == ibdev ||
			       (conn->kdev && conn->kdev->ibdev == ibdev));
}

bool kcoll_rdma_uses_device(struct kcoll_comm *comm, struct ib_device *ibdev)
{
	bool uses = false;
	u32 i;

	mutex_lock(&comm->conn_lock);
	if (comm->listen_id && comm->listen_id->device == ibdev)
		uses = true;
	for (i = 0; i < comm->nranks && !uses; i++)
		uses = kcoll_conn_on(&comm->conns[i], ibdev);
	mutex_unlock(&comm->conn_lock);
	return uses;
}

/* Release everything of @comm on @ibdev; the comm is dead already. */
int kcoll_rdma_remove_device(struct kcoll_comm *comm, struct ib_device *ibdev)
{
	int n = 0;
	u32 i;

	mutex_lock(&comm->conn_lock);
	if (comm->listen_id && comm->listen_id->device == ibdev) {
		kcoll_listen_destroy(comm);
		n++;
	}
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

/* ------------------------------------------------------------- connect */

static struct sockaddr_storage kcoll_src_addr(const struct kcoll_comm *comm)
{
	struct sockaddr_storage src = comm->addrs[comm->rank];

	/* Any local port: the listener owns the rank's port. */
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	return src;
}

static int kcoll_conn_start(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct sockaddr_storage src = kcoll_src_addr(comm);
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, kcoll_conn_handler, conn, RDMA_PS_TCP, IB_QPT_RC);
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

/* A peer left while we were still connecting: give up at once. */
static int kcoll_comm_broken(const struct kcoll_comm *comm)
{
	int err = READ_ONCE(comm->err);

	return err ? err : READ_ONCE(comm->lost_err);
}

static bool kcoll_conn_settled(const struct kcoll_conn *conn)
{
	return READ_ONCE(conn->state) != KCOLL_CONN_CONNECTING ||
	       kcoll_comm_broken(conn->comm);
}

/*
 * An accepted connection that will not come up: its handshake failed, or
 * the peer has given it up for a new attempt.  One that was up and went
 * away (lost) is the peer leaving, which fails the creation instead.
 */
static bool kcoll_passive_failed(const struct kcoll_conn *conn)
{
	/* Pairs with the release in kcoll_cm_request(). */
	int state = smp_load_acquire(&conn->state);

	if (READ_ONCE(conn->lost))
		return false;
	return state == KCOLL_CONN_FAILED ||
	       ((state == KCOLL_CONN_CONNECTING || state == KCOLL_CONN_AUTH) &&
		READ_ONCE(conn->superseded));
}

/*
 * Return the failed accepted connections to IDLE, so that the listener
 * takes the peer's next attempt: left FAILED, every retry would be
 * rejected until the connect timeout, and that rank's failure would then
 * reset the connections of all the others.
 */
static void kcoll_passive_reset(struct kcoll_comm *comm)
{
	u32 i;

	for (i = comm->rank + 1; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (!kcoll_passive_failed(conn))
			continue;
		mutex_lock(&comm->conn_lock);
		if (kcoll_passive_failed(conn)) {
			pr_debug("comm %llu: accepted connection from rank %u failed (%d); waiting for its retry\n",
				 comm->id, i, conn->cm_err);
			kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
		}
		mutex_unlock(&comm->conn_lock);
	}
}

/* Connect to @conn->peer, retrying refused attempts until @deadline. */
static int kcoll_conn_connect(struct kcoll_conn *conn, unsigned long deadline)
{
	struct kcoll_comm *comm = conn->comm;
	int ret;

	for (;;) {
		long left = (long)(deadline - jiffies);

		if (left <= 0)
			return -ETIMEDOUT;
		ret = kcoll_comm_broken(comm);
		if (ret)
			return ret;
		/* Higher ranks may retry meanwhile: take their next attempt. */
		kcoll_passive_reset(comm);
		mutex_lock(&comm->conn_lock);
		ret = kcoll_conn_start(conn);
		mutex_unlock(&comm->conn_lock);
		if (!ret) {
			/* Interruptible: a signal or a cancellation ends it. */
			left = wait_event_interruptible_timeout(comm->conn_wq,
								kcoll_conn_settled(conn), left);
			if (left >= 0 && READ_ONCE(conn->state) == KCOLL_CONN_UP)
				return 0;
			if (left < 0)
				ret = -EINTR;
			else
				ret = conn->cm_err ? conn->cm_err : -ETIMEDOUT;
			mutex_lock(&comm->conn_lock);
			kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
			mutex_unlock(&comm->conn_lock);
		}
		if (ret == -EINTR || signal_pending(current))
			return -EINTR;
		/*
		 * Our own address is not on this node, or whoever listens at
		 * the peer's cannot prove the secret: no retry changes that.
		 */
		if (ret == -EADDRNOTAVAIL || ret == -EKEYREJECTED)
			return ret;
		/* The peer may not listen yet: try again a little later. */
		if (time_after(jiffies + msecs_to_jiffies(KCOLL_RETRY_MS), deadline))
			return ret;
		if (msleep_interruptible(KCOLL_RETRY_MS) || signal_pending(current))
			return -EINTR;
	}
}

static bool kcoll_passive_up(const struct kcoll_comm *comm)
{
	u32 i;

	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (READ_ONCE(comm->conns[i].state) != KCOLL_CONN_UP)
			return false;
	return true;
}

/* Wake the creator: all up, a peer left, or an accepted connection failed. */
static bool kcoll_passive_settled(const struct kcoll_comm *comm)
{
	u32 i;

	if (kcoll_comm_broken(comm) || kcoll_passive_up(comm))
		return true;
	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (kcoll_passive_failed(&comm->conns[i]))
			return true;
	return false;
}

/*
 * Connect the full mesh: actively to lower ranks, then wait for the
 * higher ones, all within the connect timeout.
 */
int kcoll_conns_connect(struct kcoll_comm *comm)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(comm->connect_timeout_ms);
	long left;
	u32 i;
	int ret;

	for (i = 0; i < comm->rank; i++) {
		comm->conns[i].active = true;
		ret = kcoll_conn_connect(&comm->conns[i], deadline);
		if (ret) {
			kcoll_info_rl("comm %llu: rank %u cannot connect to rank %u: %d\n",
				      comm->id, comm->rank, i, ret);
			return ret;
		}
	}
	for (;;) {
		left = (long)(deadline - jiffies);
		if (left <= 0)
			left = 1;
		left = wait_event_interruptible_timeout(comm->conn_wq,
							kcoll_passive_settled(comm), left);
		if (left < 0)
			return -EINTR;
		ret = kcoll_comm_broken(comm);
		if (ret) {
			/* Cancelled by the owner (ECANCELED) is not news. */
			if (ret != -ECANCELED)
				kcoll_info_rl("comm %llu: rank %u: a peer left during set-up: %d\n",
					      comm->id, comm->rank, ret);
			return ret;
		}
		if (kcoll_passive_up(comm))
			return 0;
		kcoll_passive_reset(comm);
		if (!left || time_after_eq(jiffies, deadline))
			break;
	}
	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (READ_ONCE(comm->conns[i].state) != KCOLL_CONN_UP)
			break;
	kcoll_info_rl("comm %llu: rank %u: no connection from rank %u in %u ms\n",
		      comm->id, comm->rank, i, comm->connect_timeout_ms);
	return -ETIMEDOUT;
}
