// SPDX-License-Identifier: GPL-2.0
/*
 * The listener of a communicator: one rdma_cm id bound to the rank's own
 * address and port, which accepts the ranks above this one (the highest
 * rank accepts nothing and does not listen).
 *
 * A request's private data carries the rank and the parameters both sides
 * must agree on; a mismatch is rejected.  It must come from the address
 * the rank table gives for the rank it claims; with a secret, the
 * accepted connection then waits for the peer's proof (kcoll_conn.c).
 * Whoever reaches the port can send requests: what a refusal logs is
 * rate-limited (kcoll_auth_refused()).
 *
 * kcoll_listen_destroy() is called with comm->conn_lock held, as part of
 * the communicator's tear-down of its connections.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <net/net_namespace.h>

#include "kcoll.h"

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
	struct kcoll_conn *conn;
	const char *why;
	int state;
	u32 peer;

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
	return kcoll_conn_accept(conn, id, req);
}

static int kcoll_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_comm *comm = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return kcoll_cm_request(comm, id, ev);
	pr_debug("comm %llu: listener: %s\n", comm->id, rdma_event_msg(ev->event));
	return 0;
}

/*
 * Listen at the rank's own address and port (comm->listen_id).
 * Process context, before any connection is set up.
 */
int kcoll_listen_create(struct kcoll_comm *comm)
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

void kcoll_listen_destroy(struct kcoll_comm *comm)
{
	if (comm->listen_id) {
		rdma_destroy_id(comm->listen_id);
		comm->listen_id = NULL;
	}
}

/* Is the listener on @ibdev?  comm->conn_lock held. */
bool kcoll_listen_on(const struct kcoll_comm *comm, struct ib_device *ibdev)
{
	return comm->listen_id && comm->listen_id->device == ibdev;
}
