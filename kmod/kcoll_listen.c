// SPDX-License-Identifier: GPL-2.0
/*
 * One rdma_cm listener per network namespace and port, shared by every
 * communicator of the node, and the demultiplexing of its requests.
 *
 * A communicator is named by its 128-bit id (struct kcoll_comm.unique_id)
 * and registered, with its own rank, in the table of its network
 * namespace (struct kcoll_net).  A rank that accepts connections (every
 * rank but the highest) also holds a reference on the listener of its
 * port, bound to the wildcard address of its family and created by the
 * first communicator that needs it.  A request's private data
 * (struct kcoll_cm_req) names the communicator and the rank it wants: the
 * listener looks them up and hands the request to that communicator only
 * (kcoll_cm_request()), or rejects it with a reason the peer can act on
 * (struct kcoll_cm_rej): ENOENT while that communicator is not created
 * yet (the peer retries), ESTALE once it was destroyed (the peer gives
 * up).  Whoever reaches the port can send requests: every refusal is
 * counted (per namespace or per communicator, collctl show) and what one
 * logs is rate-limited.
 *
 * Locking.  kn->lock guards the table and the ids of destroyed
 * communicators; the request handler holds it from the look-up until the
 * request is accepted or refused, so a communicator leaves the table
 * (kcoll_listen_detach(), with comm->conn_lock held) only between two
 * requests and no request reaches it after that.  The handler never takes
 * comm->conn_lock.  kn->listen_lock guards the listeners and is held
 * across their creation and destruction, so a port is never bound twice;
 * rdma_destroy_id() of a listener waits for its running handlers, which
 * may wait for kn->lock: it is called without kn->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "kcoll.h"

/* Ids of destroyed communicators remembered per namespace, for ESTALE. */
#define KCOLL_GONE_IDS		64
#define KCOLL_LISTEN_BACKLOG	1024

struct kcoll_listener {
	struct list_head node;		/* kcoll_net.listeners */
	struct kcoll_net *kn;
	struct rdma_cm_id *id;
	sa_family_t family;
	u16 port;
	u32 users;			/* communicators attached */
};

/* What one network namespace has of kcoll (net_generic()). */
struct kcoll_net {
	struct net *net;
	struct mutex listen_lock;	/* listeners */
	struct list_head listeners;
	struct mutex lock;		/* comms, gone; request handling */
	DECLARE_HASHTABLE(comms, 8);	/* by (unique_id, rank) */
	u32 ncomms;
	u8 gone[KCOLL_GONE_IDS][KCOLL_UID_BYTES];
	u32 gone_next;
	struct kcoll_net_stats stats;
};

static unsigned int kcoll_net_id;

static struct kcoll_net *kcoll_net(const struct net *net)
{
	return net_generic(net, kcoll_net_id);
}

static u32 kcoll_uid_hash(const u8 *uid, u32 rank)
{
	return jhash(uid, KCOLL_UID_BYTES, rank);
}

/* The communicator (@uid, @rank) of @kn, or NULL.  kn->lock held. */
static struct kcoll_comm *kcoll_net_find(struct kcoll_net *kn, const u8 *uid, u32 rank)
{
	struct kcoll_comm *comm;

	hash_for_each_possible(kn->comms, comm, net_node, kcoll_uid_hash(uid, rank))
		if (comm->rank == rank && !memcmp(comm->unique_id, uid, KCOLL_UID_BYTES))
			return comm;
	return NULL;
}

/* Slot of @uid among the destroyed ones, or -1.  kn->lock held. */
static int kcoll_net_gone(const struct kcoll_net *kn, const u8 *uid)
{
	int i;

	for (i = 0; i < KCOLL_GONE_IDS; i++)
		if (!memcmp(kn->gone[i], uid, KCOLL_UID_BYTES))
			return i;
	return -1;
}

/* ------------------------------------------------------------- requests */

/* Refuse @id with @err for the peer (struct kcoll_cm_rej); cma frees the child. */
static int kcoll_reject(struct rdma_cm_id *id, int err)
{
	struct kcoll_cm_rej rej = {
		.magic = cpu_to_le32(KCOLL_CM_MAGIC),
		.version = cpu_to_le32(KCOLL_CM_VERSION),
		.err = cpu_to_le32(err),
	};

	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	return -err;
}

/*
 * Is this request, for @comm, from the rank it claims?  Returns that rank
 * or U32_MAX with the reason in *@why.
 */
static u32 kcoll_req_check(struct kcoll_comm *comm, const struct rdma_cm_id *id,
			   const struct kcoll_cm_req *r, const char **why)
{
	u32 peer = le32_to_cpu(r->rank);

	if (le32_to_cpu(r->nranks) != comm->nranks ||
	    le32_to_cpu(r->chunk_bytes) != comm->chunk_bytes || r->slots != comm->slots) {
		*why = "rank count, chunk_bytes or slots differ";
		return U32_MAX;
	}
	/* Only higher ranks connect to us. */
	if (peer <= comm->rank || peer >= comm->nranks) {
		*why = "that rank does not connect to this one";
		return U32_MAX;
	}
	if ((r->flags ^ kcoll_cm_flags(comm)) & KCOLL_CM_F_AUTH) {
		*why = comm->auth_tfm ? "it has no secret" :
			"it has a secret and this communicator has none";
		return U32_MAX;
	}
	if ((r->flags ^ kcoll_cm_flags(comm)) & KCOLL_CM_F_NOFP) {
		*why = "the tunable fingerprint differs between the two nodes";
		return U32_MAX;
	}
	if (r->flags != kcoll_cm_flags(comm)) {
		*why = "the tunable connect_on_need differs between the two nodes";
		return U32_MAX;
	}
	if (!kcoll_auth_addr_ok(comm, peer, kcoll_conn_peer_addr(id))) {
		*why = "not that rank's address in the rank table";
		return U32_MAX;
	}
	return peer;
}

/*
 * A request for @comm (found by the listener, kn->lock held).
 *
 * Requests run one at a time and may not take comm->conn_lock (tear-down
 * detaches under it), so the connection is handed over through its state:
 * the listener may set up only an IDLE connection, and the creator's
 * thread (kcoll_passive_reset(), under conn_lock) returns a failed one to
 * IDLE.
 */
static int kcoll_cm_request(struct kcoll_comm *comm, struct rdma_cm_id *id,
			    const struct kcoll_cm_req *req)
{
	struct kcoll_conn *conn;
	const char *why;
	int state;
	u32 peer;

	peer = kcoll_req_check(comm, id, req, &why);
	if (peer == U32_MAX) {
		kcoll_auth_refused(comm, le32_to_cpu(req->rank), kcoll_conn_peer_addr(id), why);
		return kcoll_reject(id, EACCES);
	}
	conn = &comm->conns[peer];
	/* Pairs with the release in kcoll_conn_destroy(). */
	state = smp_load_acquire(&conn->state);
	if (state == KCOLL_CONN_UP) {
		kcoll_auth_refused(comm, peer, kcoll_conn_peer_addr(id),
				   "that rank is connected already");
		return kcoll_reject(id, EBUSY);
	}
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
		return kcoll_reject(id, EBUSY);
	}
	return kcoll_conn_accept(conn, id, req);
}

static bool kcoll_req_ours(const struct rdma_cm_event *ev)
{
	const struct kcoll_cm_req *r = ev->param.conn.private_data;

	return r && ev->param.conn.private_data_len >= sizeof(*r) && kcoll_hello_valid(r);
}

/* CONNECT_REQUEST on a child of the listener: whose is it? */
static int kcoll_listen_request(struct kcoll_listener *l, struct rdma_cm_id *id,
				const struct rdma_cm_event *ev)
{
	const struct kcoll_cm_req *r = ev->param.conn.private_data;
	struct kcoll_net *kn = l->kn;
	struct kcoll_comm *comm;
	int ret;

	if (!kcoll_req_ours(ev)) {
		atomic64_inc(&kn->stats.refused_bad);
		kcoll_info_rl("port %u: refused %pISc: not a kcoll request of version %u\n",
			      l->port, kcoll_conn_peer_addr(id), KCOLL_CM_VERSION);
		return kcoll_reject(id, EPROTO);
	}
	mutex_lock(&kn->lock);
	comm = kcoll_net_find(kn, r->uid, le32_to_cpu(r->dst));
	/* Registered at another port: not the one the peer's table names. */
	if (comm && comm->listener != l)
		comm = NULL;
	if (comm) {
		ret = kcoll_cm_request(comm, id, r);
	} else if (kcoll_net_gone(kn, r->uid) >= 0) {
		atomic64_inc(&kn->stats.refused_stale);
		kcoll_info_rl("port %u: refused rank %u from %pISc: %*phN was destroyed\n",
			      l->port, le32_to_cpu(r->rank), kcoll_conn_peer_addr(id),
			      KCOLL_UID_BYTES, r->uid);
		ret = kcoll_reject(id, ESTALE);
	} else {
		/* Usually a peer faster than us: it retries. */
		atomic64_inc(&kn->stats.refused_unknown);
		pr_debug("port %u: no communicator %*phN rank %u (yet) for %pISc\n", l->port,
			 KCOLL_UID_BYTES, r->uid, le32_to_cpu(r->dst), kcoll_conn_peer_addr(id));
		ret = kcoll_reject(id, ENOENT);
	}
	mutex_unlock(&kn->lock);
	return ret;
}

static int kcoll_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_listener *l = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return kcoll_listen_request(l, id, ev);
	pr_debug("listener on port %u: %s\n", l->port, rdma_event_msg(ev->event));
	return 0;
}

/* ------------------------------------------------------------ listeners */

static void kcoll_any_addr(struct sockaddr_storage *ss, sa_family_t family, u16 port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	}
}

/* A new listener on the wildcard address of @family, @port.  listen_lock held. */
static struct kcoll_listener *kcoll_listener_new(struct kcoll_net *kn, sa_family_t family,
						 u16 port)
{
	struct sockaddr_storage any;
	struct kcoll_listener *l;
	struct rdma_cm_id *id;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return ERR_PTR(-ENOMEM);
	l->kn = kn;
	l->family = family;
	l->port = port;
	id = rdma_create_id(kn->net, kcoll_listen_handler, l, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(l);
		return ERR_CAST(id);
	}
	/* One listener per family: IPv6 without the mapped IPv4 addresses. */
	ret = family == AF_INET6 ? rdma_set_afonly(id, 1) : 0;
	kcoll_any_addr(&any, family, port);
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (ret) {
		/* Somebody else holds the port, at some address (cma_check_port()). */
		if (ret == -EADDRNOTAVAIL)
			ret = -EADDRINUSE;
		kcoll_info_rl("cannot listen on port %u: %d\n", port, ret);
		goto err;
	}
	ret = rdma_listen(id, KCOLL_LISTEN_BACKLOG);
	if (ret)
		goto err;
	l->id = id;
	list_add_tail(&l->node, &kn->listeners);
	pr_debug("listening on port %u (%s)\n", port, family == AF_INET6 ? "IPv6" : "IPv4");
	return l;

err:
	rdma_destroy_id(id);
	kfree(l);
	return ERR_PTR(ret);
}

static struct kcoll_listener *kcoll_listener_get(struct kcoll_net *kn, sa_family_t family,
						 u16 port)
{
	struct kcoll_listener *l;

	mutex_lock(&kn->listen_lock);
	list_for_each_entry(l, &kn->listeners, node) {
		if (l->family == family && l->port == port) {
			l->users++;
			goto out;
		}
	}
	l = kcoll_listener_new(kn, family, port);
	if (!IS_ERR(l))
		l->users = 1;
out:
	mutex_unlock(&kn->listen_lock);
	return l;
}

static void kcoll_listener_put(struct kcoll_listener *l)
{
	struct kcoll_net *kn = l->kn;

	mutex_lock(&kn->listen_lock);
	if (--l->users) {
		mutex_unlock(&kn->listen_lock);
		return;
	}
	list_del(&l->node);
	/* Waits for its running request handlers (which take kn->lock). */
	rdma_destroy_id(l->id);
	mutex_unlock(&kn->listen_lock);
	pr_debug("stopped listening on port %u\n", l->port);
	kfree(l);
}

/* -------------------------------------------------------- communicators */

/* A probe is bound and destroyed at once: nothing to handle. */
static int kcoll_probe_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return 0;
}

/*
 * Is the rank's own address one of this node's (in its namespace), and
 * does its device take the communicator's messages?  A bind to it says
 * both, with the errors creation has always reported.
 */
static int kcoll_listen_probe(struct kcoll_comm *comm)
{
	struct sockaddr_storage src = kcoll_src_addr(comm);
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(comm->net, kcoll_probe_handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&src);
	if (ret)
		kcoll_info_rl("comm %llu: rank %u's address is not this node's: %d\n",
			      comm->id, comm->rank, ret);
	else if (id->device)
		ret = kcoll_check_dev_sges(comm, id->device);
	rdma_destroy_id(id);
	return ret;
}

static u16 kcoll_comm_port(const struct kcoll_comm *comm)
{
	const struct sockaddr_storage *ss = &comm->addrs[comm->rank];

	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/*
 * Enter @comm in its namespace's table and, when it accepts connections,
 * attach it to the listener of its port.  Process context (the creator),
 * with everything a request needs set up; from here on requests reach it.
 * @port_given: the rank table named the port (not the module's default).
 *
 * The highest rank accepts nothing: named by its rank table it stays out
 * of the table, as it always kept out of the port (any number of them
 * may exist, and nobody looks them up); named by the caller, it is
 * entered so that the same id twice is refused.
 */
int kcoll_listen_attach(struct kcoll_comm *comm, bool port_given)
{
	struct kcoll_net *kn = kcoll_net(comm->net);
	bool accepts = comm->rank + 1 < comm->nranks;
	u16 port = kcoll_comm_port(comm);
	struct kcoll_listener *l = NULL;
	int ret, gone;

	if (!accepts && !comm->uid_given)
		return 0;
	if (accepts) {
		ret = kcoll_listen_probe(comm);
		if (ret)
			return ret;
		/* A shared listener: the port check bind would do for this caller. */
		if (port_given && port < PROT_SOCK &&
		    !ns_capable(comm->net->user_ns, CAP_NET_BIND_SERVICE)) {
			kcoll_info_rl("comm %llu: port %u needs CAP_NET_BIND_SERVICE\n",
				      comm->id, port);
			return -EACCES;
		}
		l = kcoll_listener_get(kn, comm->addrs[comm->rank].ss_family, port);
		if (IS_ERR(l))
			return PTR_ERR(l);
	}
	mutex_lock(&kn->lock);
	if (kcoll_net_find(kn, comm->unique_id, comm->rank)) {
		mutex_unlock(&kn->lock);
		atomic64_inc(&kn->stats.dup_ids);
		kcoll_info_rl("comm %llu: communicator %*phN already has a rank %u here\n",
			      comm->id, KCOLL_UID_BYTES, comm->unique_id, comm->rank);
		if (l)
			kcoll_listener_put(l);
		return -EEXIST;
	}
	/* The id lives again (the caller reuses it): no longer stale. */
	gone = kcoll_net_gone(kn, comm->unique_id);
	if (gone >= 0)
		memset(kn->gone[gone], 0, KCOLL_UID_BYTES);
	comm->listener = l;
	hash_add(kn->comms, &comm->net_node, kcoll_uid_hash(comm->unique_id, comm->rank));
	kn->ncomms++;
	comm->attached = true;
	mutex_unlock(&kn->lock);
	return 0;
}

/*
 * Take @comm out of the table (no request reaches it after this) and
 * drop its listener.  A communicator that was up and named by the
 * caller's id is remembered as destroyed, so that peers still connecting
 * to it learn it at once (ESTALE).  Not one named by its rank table: the
 * next communicator of that table is the same id, and its peers must not
 * give up on it.  comm->conn_lock held; idempotent.
 */
void kcoll_listen_detach(struct kcoll_comm *comm)
{
	struct kcoll_net *kn;
	struct kcoll_listener *l;

	if (!comm->attached)
		return;
	kn = kcoll_net(comm->net);
	mutex_lock(&kn->lock);
	hash_del(&comm->net_node);
	kn->ncomms--;
	if (comm->uid_given && comm->connected && kcoll_net_gone(kn, comm->unique_id) < 0) {
		memcpy(kn->gone[kn->gone_next], comm->unique_id, KCOLL_UID_BYTES);
		kn->gone_next = (kn->gone_next + 1) % KCOLL_GONE_IDS;
	}
	l = comm->listener;
	comm->listener = NULL;
	comm->attached = false;
	mutex_unlock(&kn->lock);
	if (l)
		kcoll_listener_put(l);
}

/* ---------------------------------------------------------- observers */

/*
 * Call @fill once with @port 0 for the namespace's totals, then for each
 * of its listeners (generic netlink).  Stops at fill's error.
 */
int kcoll_listen_report(struct net *net,
			int (*fill)(const struct kcoll_listen_info *li, void *arg), void *arg)
{
	struct kcoll_net *kn = kcoll_net(net);
	struct kcoll_listen_info li = {};
	struct kcoll_listener *l;
	int ret;

	mutex_lock(&kn->lock);
	li.users = kn->ncomms;
	mutex_unlock(&kn->lock);
	li.refused_unknown = atomic64_read(&kn->stats.refused_unknown);
	li.refused_stale = atomic64_read(&kn->stats.refused_stale);
	li.refused_bad = atomic64_read(&kn->stats.refused_bad);
	li.dup_ids = atomic64_read(&kn->stats.dup_ids);
	ret = fill(&li, arg);
	if (ret)
		return ret;
	memset(&li, 0, sizeof(li));
	mutex_lock(&kn->listen_lock);
	list_for_each_entry(l, &kn->listeners, node) {
		li.port = l->port;
		li.family = l->family;
		li.users = l->users;
		ret = fill(&li, arg);
		if (ret)
			break;
	}
	mutex_unlock(&kn->listen_lock);
	return ret;
}

/* ------------------------------------------------------------ namespaces */

static int __net_init kcoll_net_init(struct net *net)
{
	struct kcoll_net *kn = kcoll_net(net);

	kn->net = net;
	mutex_init(&kn->listen_lock);
	mutex_init(&kn->lock);
	INIT_LIST_HEAD(&kn->listeners);
	hash_init(kn->comms);
	return 0;
}

static void __net_exit kcoll_net_exit(struct net *net)
{
	struct kcoll_net *kn = kcoll_net(net);

	/* Listeners and communicators hold the namespace: none is left. */
	WARN_ON(!list_empty(&kn->listeners) || kn->ncomms);
	mutex_destroy(&kn->lock);
	mutex_destroy(&kn->listen_lock);
}

static struct pernet_operations kcoll_net_ops = {
	.init = kcoll_net_init,
	.exit = kcoll_net_exit,
	.id = &kcoll_net_id,
	.size = sizeof(struct kcoll_net),
};

int kcoll_listen_init(void)
{
	BUILD_BUG_ON(sizeof(struct kcoll_cm_req) > 56);
	BUILD_BUG_ON(KCOLL_UID_BYTES != KCOLL_COMM_UID_BYTES);
	return register_pernet_subsys(&kcoll_net_ops);
}

void kcoll_listen_exit(void)
{
	unregister_pernet_subsys(&kcoll_net_ops);
}
