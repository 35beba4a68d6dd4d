// SPDX-License-Identifier: GPL-2.0
/*
 * collctl doctor --ranktable FILE / --hosts LIST: whether every pair of a
 * job's nodes can connect, run on every node at once (as a job runs).
 *
 * Each node listens with librdmacm on its doctor port, connects to every
 * rank above its own (one RC connection per pair, as kcoll connects) and
 * accepts the ranks below.  Over each connection the lower rank sends a
 * message and the higher answers: a connection alone does not prove the
 * data path, and the RoCE mistakes users make most (the GID index, the
 * traffic class, the MTU; nccl#769, nccl#1573) show as address or route
 * resolution that works and a connection or data that does not.  So each
 * pair's outcome names the stage that failed:
 *
 *   listen              this node cannot listen on its address (no RDMA
 *                       device holds it)
 *   address resolution  no RDMA device here reaches the peer's address
 *   route resolution    no RoCE path (GID) to the peer
 *   connect             rejected, unreachable or no answer
 *   data exchange       connected, but the message did not come through
 *
 * A peer that is not running doctor (yet) rejects the connection with
 * "invalid service id": the connecting side retries until --wait passes
 * and then says "peer did not answer within N s", which is not a route
 * failure.  The accepting side waits as long, plus each stage's timeout.
 *
 * The lower ranks' connections are accepted on a thread of their own while
 * the main thread connects to the higher ranks, so no order of starting
 * deadlocks; the two write disjoint entries of p->pair[].
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "collctl_fmt.h"
#include "collctl_pairs.h"
#include "size.h"

#define PAIRS_MAGIC		0x4b434452u	/* "KCDR" */
#define PAIRS_MAX_HOSTS		4096u
/* IB CM rejection reasons (IBTA 12.6.7.2) as rdma_cm events report them */
#define REJ_INVALID_SERVICE_ID	8
#define RETRY_MS		250
/* hello.to of a rejection that means "not now, retry": that pair is still busy */
#define PAIRS_BUSY		0xffffffffu

/* The connection's private data and the messages: network byte order. */
struct hello {
	uint32_t magic, from, to, nranks;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct hello msg[2];		/* [0] sent, [1] received */
	uint32_t peer;
	double t0;
	bool sent;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void __attribute__((format(printf, 4, 5)))
fail(struct cc_pair *pr, const char *stage, const char *hint, const char *fmt, ...)
{
	va_list ap;

	pr->ok = false;
	pr->stage = stage;
	va_start(ap, fmt);
	vsnprintf(pr->reason, sizeof(pr->reason), fmt, ap);
	va_end(ap);
	snprintf(pr->hint, sizeof(pr->hint), "%s", hint);
}

/* ------------------------------------------------------------ set-up */

static int to_sockaddr(const char *addr, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICHOST }, *ai;
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	if (getaddrinfo(addr, p, &hints, &ai))
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static int alloc_ranks(struct cc_pairs *p, uint32_t n)
{
	p->nranks = n;
	p->addr = calloc(n, sizeof(*p->addr));
	p->port = calloc(n, sizeof(*p->port));
	p->pair = calloc(n, sizeof(*p->pair));
	return p->addr && p->port && p->pair ? 0 : -ENOMEM;
}

/* "a,b,c": rank i is the i-th address. */
static int parse_hosts(struct cc_pairs *p, const char *list, char *err, size_t len)
{
	struct sockaddr_storage ss;
	const char *s, *e;
	uint32_t n = 1, i = 0;

	if (!*list) {
		snprintf(err, len, "--hosts: empty host list (expected addresses separated by "
			 "commas, rank i the i-th, e.g. 10.0.0.1,10.0.0.2)");
		return -EINVAL;
	}
	for (s = list; *s; s++)
		n += *s == ',';
	if (n > PAIRS_MAX_HOSTS) {
		snprintf(err, len, "--hosts: %u hosts, at most %u", n, PAIRS_MAX_HOSTS);
		return -EINVAL;
	}
	if (alloc_ranks(p, n))
		return -ENOMEM;
	for (s = list; i < n; s = e + 1, i++) {
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		if (e == s) {
			snprintf(err, len, "--hosts: host %u of '%s' is empty (expected an IPv4 "
				 "or IPv6 address)", i, list);
			return -EINVAL;
		}
		snprintf(p->addr[i], sizeof(p->addr[i]), "%.*s", (int)(e - s), s);
		if ((size_t)(e - s) >= sizeof(p->addr[i]) || to_sockaddr(p->addr[i], 0, &ss)) {
			snprintf(err, len, "--hosts: '%.*s' (host %u) is not an IPv4 or IPv6 "
				 "address", (int)(e - s > 64 ? 64 : e - s), s, i);
			return -EINVAL;
		}
	}
	return 0;
}

static int load_table(struct cc_pairs *p, const char *file, char *err, size_t len)
{
	struct coll_ranktable *rt;
	uint32_t i;

	if (coll_ranktable_load(file, &rt)) {
		snprintf(err, len, "%s", coll_last_error());
		return -EINVAL;
	}
	if (alloc_ranks(p, rt->nranks)) {
		coll_ranktable_free(rt);
		return -ENOMEM;
	}
	for (i = 0; i < rt->nranks; i++)
		snprintf(p->addr[i], sizeof(p->addr[i]), "%s", rt->ranks[i].addr);
	coll_ranktable_free(rt);
	return 0;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (!a || a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
	return a->sa_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/*
 * No --rank and no KCOLL_RANK (pdsh, clush, ssh in a loop): this node's
 * rank is the one rank whose address is an address of this node.
 */
static int local_rank(struct cc_pairs *p, const struct cc_pairs_opts *o, char *err, size_t len)
{
	struct sockaddr_storage ss;
	struct ifaddrs *ifa, *i;
	uint32_t r, found = 0;

	if (getifaddrs(&ifa)) {
		snprintf(err, len, "cannot list this node's addresses: %s", strerror(errno));
		return -EINVAL;
	}
	for (r = 0; r < p->nranks; r++) {
		if (to_sockaddr(p->addr[r], 0, &ss))
			continue;
		for (i = ifa; i; i = i->ifa_next)
			if (same_addr(i->ifa_addr, &ss))
				break;
		if (i && !found++)
			p->rank = r;
	}
	freeifaddrs(ifa);
	if (found == 1)
		return 0;
	snprintf(err, len, "%s: %s of its ranks %s an address of this node: give this node's "
		 "rank (--rank R or KCOLL_RANK)", o->hosts ? "the host list" : o->ranktable,
		 found ? "more than one" : "none", found ? "have" : "has");
	return -EINVAL;
}

int cc_pairs_setup(struct cc_pairs *p, const struct cc_pairs_opts *o, char *err, size_t len)
{
	uint64_t v;
	uint32_t i, j;
	int ret;
	char e[160];

	memset(p, 0, sizeof(*p));
	p->timeout_s = o->timeout_s;
	p->wait_s = o->wait_s;
	if (o->ranktable && o->hosts) {
		snprintf(err, len, "--ranktable and --hosts: give one of them");
		return -EINVAL;
	}
	ret = o->hosts ? parse_hosts(p, o->hosts, err, len) : load_table(p, o->ranktable, err, len);
	if (ret)
		goto out;
	if (!o->rank || !*o->rank) {
		ret = local_rank(p, o, err, len);
		if (ret)
			goto out;
	} else if (parse_ranged(o->rank, 0, p->nranks - 1, &v, e, sizeof(e))) {
		snprintf(err, len, "--rank %s (%s has %u rank%s)", e,
			 o->hosts ? "the host list" : o->ranktable, p->nranks,
			 p->nranks == 1 ? "" : "s");
		ret = -EINVAL;
		goto out;
	} else {
		p->rank = (uint32_t)v;
	}
	for (i = 0; i < p->nranks; i++) {
		p->port[i] = o->port;
		for (j = 0; j < i; j++)
			p->port[i] += !strcmp(p->addr[i], p->addr[j]);
		if (p->port[i] > 65535) {
			snprintf(err, len, "--port %u: rank %u would listen on port %u, above "
				 "65535", o->port, i, p->port[i]);
			ret = -EINVAL;
			goto out;
		}
	}
	return 0;
out:
	if (ret == -ENOMEM)
		snprintf(err, len, "%s", strerror(ENOMEM));
	cc_pairs_free(p);
	return ret;
}

void cc_pairs_free(struct cc_pairs *p)
{
	free(p->addr);
	free(p->port);
	free(p->pair);
	p->addr = NULL;
	p->port = NULL;
	p->pair = NULL;
}

/* ------------------------------------------------------- connections */

static void conn_free(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	free(c);
}

/* An RC QP on @c->id with one receive posted: 0 or -errno. */
static int conn_qp(struct conn *c)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = c->pd ? ibv_create_cq(c->id->verbs, 4, NULL, NULL, 0) : NULL;
	if (!c->cq)
		return -errno;
	qa.send_cq = qa.recv_cq = c->cq;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -errno;
	c->mr = ibv_reg_mr(c->pd, c->msg, sizeof(c->msg), IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || rdma_post_recv(c->id, NULL, &c->msg[1], sizeof(c->msg[1]), c->mr))
		return -errno;
	return 0;
}

static void set_hello(struct hello *h, uint32_t from, uint32_t to, uint32_t n)
{
	h->magic = htonl(PAIRS_MAGIC);
	h->from = htonl(from);
	h->to = htonl(to);
	h->nranks = htonl(n);
}

static bool is_hello(const struct hello *h, uint32_t from, uint32_t to, uint32_t n)
{
	return ntohl(h->magic) == PAIRS_MAGIC && ntohl(h->from) == from &&
	       ntohl(h->to) == to && ntohl(h->nranks) == n;
}

static int post_send(struct conn *c, uint32_t from, uint32_t to, uint32_t n)
{
	set_hello(&c->msg[0], from, to, n);
	return rdma_post_send(c->id, NULL, &c->msg[0], sizeof(c->msg[0]), c->mr,
			      IBV_SEND_SIGNALED) ? -errno : 0;
}

/* ------------------------------------------------- the connecting side */

/*
 * The next event of @ch within @ms: 0 with *@type, *@status and (@pd not
 * NULL) the private data that came with it, or -ETIMEDOUT.
 */
static int next_event(struct rdma_event_channel *ch, int ms, enum rdma_cm_event_type *type,
		      int *status, struct hello *pd)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms < 0 ? 0 : ms) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(ch, &ev))
		return -errno;
	*type = ev->event;
	*status = ev->status;
	if (pd && ev->param.conn.private_data && ev->param.conn.private_data_len >= sizeof(*pd))
		memcpy(pd, ev->param.conn.private_data, sizeof(*pd));
	rdma_ack_cm_event(ev);
	return 0;
}

static const char HINT_UCM[] =
	"load rdma_ucm ('modprobe rdma_ucm'): /dev/infiniband/rdma_cm is librdmacm's way to "
	"the kernel";
static const char HINT_NODEV[] =
	"no RDMA device of this node holds the address: 'rdma link' must show an ACTIVE "
	"port on the net device that has it";
static const char HINT_ADDR[] =
	"no RDMA device of this node reaches that address: is the address in the table "
	"right, the peer's link up, and this node's RoCE device on the same network "
	"('rdma link', 'ip addr')?";
static const char HINT_ROUTE[] =
	"no RoCE path to the peer: is the GID index right (the RoCE v2 GID of the IPv4 "
	"address; 'rdma link', /sys/class/infiniband/DEV/ports/1/gids), the same RoCE "
	"version on both ends, the VLAN right?";
static const char HINT_CONNECT[] =
	"the peer's RDMA device does not answer on its address: is RoCE up there ('rdma "
	"link' on that node; its own doctor output), the GID/RoCE version the same on "
	"both ends, UDP port 4791 open between the nodes?";
static const char HINT_DATA[] =
	"the connection was set up but data does not flow: an RDMA MTU larger than the "
	"path's (the switch's or the net devices' MTU), or a traffic class / PFC / ECN "
	"setting that drops RoCE data packets";
static const char HINT_ABSENT[] =
	"run collctl doctor with the same table on every node at the same time (mpirun, "
	"srun); if it runs there, see its output: that node may not reach this one";

/*
 * The end of a resolution (@ret: what starting it returned): true when
 * @want came, else false with pair @j failed at @stage.
 */
static bool resolved(struct cc_pairs *p, uint32_t j, struct rdma_event_channel *ch, int ret,
		     enum rdma_cm_event_type want, const char *stage, const char *hint)
{
	struct cc_pair *pr = &p->pair[j];
	enum rdma_cm_event_type type;
	int status;

	if (ret) {
		fail(pr, stage, hint, "from %s to %s: %s", p->addr[p->rank], p->addr[j],
		     strerror(errno));
		return false;
	}
	if (next_event(ch, (int)p->timeout_s * 1000 + 500, &type, &status, NULL)) {
		fail(pr, stage, hint, "from %s to %s timed out after %u s", p->addr[p->rank],
		     p->addr[j], p->timeout_s);
		return false;
	}
	if (type != want) {
		fail(pr, stage, hint, "from %s to %s: %s (%s)", p->addr[p->rank], p->addr[j],
		     rdma_event_str(type), strerror(status < 0 ? -status : status));
		return false;
	}
	return true;
}

/*
 * One attempt to connect to rank @j and exchange the message.  Returns 1
 * when the peer rejected it as "no such service" (nothing listens there
 * yet: the caller retries), else 0 with p->pair[j] filled.
 */
static int attempt(struct cc_pairs *p, uint32_t j)
{
	struct cc_pair *pr = &p->pair[j];
	const char *dst = p->addr[j];
	int tmo = (int)p->timeout_s * 1000, status, ret = 0;
	struct sockaddr_storage src, dest;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_event_channel *ch;
	enum rdma_cm_event_type type;
	struct hello hello;
	struct ibv_wc wc;
	struct conn *c;
	double end;
	int got = 0;

	to_sockaddr(p->addr[p->rank], 0, &src);
	to_sockaddr(dst, p->port[j], &dest);
	ch = rdma_create_event_channel();
	c = calloc(1, sizeof(*c));
	if (!ch || !c || rdma_create_id(ch, &c->id, NULL, RDMA_PS_TCP)) {
		fail(pr, "local", errno == ENODEV ? HINT_NODEV : HINT_UCM, "cannot use rdma_cm: %s",
		     strerror(errno));
		goto out;
	}
	/* stages 1 and 2: from this rank's own address, so its device and GID are used */
	if (!resolved(p, j, ch, rdma_resolve_addr(c->id, (struct sockaddr *)&src,
						   (struct sockaddr *)&dest, tmo),
		      RDMA_CM_EVENT_ADDR_RESOLVED, "address resolution", HINT_ADDR) ||
	    !resolved(p, j, ch, rdma_resolve_route(c->id, tmo), RDMA_CM_EVENT_ROUTE_RESOLVED,
		      "route resolution", HINT_ROUTE))
		goto out;
	/* stage 3: the connection, the ranks in its private data */
	ret = conn_qp(c);
	if (ret) {
		fail(pr, "local", "the RDMA device refused a small RC queue pair: see dmesg",
		     "cannot set up a queue pair on %s: %s", ibv_get_device_name(c->id->verbs->device),
		     strerror(-ret));
		ret = 0;
		goto out;
	}
	set_hello(&hello, p->rank, j, p->nranks);
	cp.private_data = &hello;
	cp.private_data_len = sizeof(hello);
	c->t0 = now_ms();
	if (rdma_connect(c->id, &cp)) {
		fail(pr, "connect", HINT_CONNECT, "to %s port %u: %s", dst, p->port[j],
		     strerror(errno));
		goto out;
	}
	memset(&hello, 0, sizeof(hello));
	if (next_event(ch, tmo, &type, &status, &hello)) {
		fail(pr, "connect", HINT_CONNECT, "to %s port %u: no answer within %u s", dst,
		     p->port[j], p->timeout_s);
		goto out;
	}
	/* nothing listens there yet, or a doctor still busy with this pair's last run */
	if (type == RDMA_CM_EVENT_REJECTED && (status == REJ_INVALID_SERVICE_ID ||
	    (ntohl(hello.magic) == PAIRS_MAGIC && ntohl(hello.to) == PAIRS_BUSY))) {
		ret = 1;
		goto out;
	}
	if (type == RDMA_CM_EVENT_REJECTED) {
		fail(pr, "connect", "the peer's doctor runs with another rank table, host list "
		     "or rank: give every node the same one", "rejected by %s port %u (status %d)",
		     dst, p->port[j], status);
		goto out;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		fail(pr, "connect", HINT_CONNECT, "to %s port %u: %s (status %d)", dst, p->port[j],
		     rdma_event_str(type), status);
		goto out;
	}
	/* stage 4: our message, then the peer's answer */
	c->t0 = now_ms();
	if (post_send(c, p->rank, j, p->nranks)) {
		fail(pr, "data exchange", HINT_DATA, "cannot post a send: %s", strerror(errno));
		goto out;
	}
	for (end = c->t0 + tmo; got < 2 && now_ms() < end;) {
		int n = ibv_poll_cq(c->cq, 1, &wc);

		if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) {
			fail(pr, "data exchange", HINT_DATA, "the %s to %s failed: %s",
			     n == 1 && wc.opcode == IBV_WC_SEND ? "message" : "answer", dst,
			     n < 0 ? "cannot poll the completion queue" :
			     ibv_wc_status_str(wc.status));
			goto out;
		}
		if (n == 1 && wc.opcode == IBV_WC_RECV &&
		    !is_hello(&c->msg[1], j, p->rank, p->nranks)) {
			fail(pr, "data exchange", HINT_DATA, "the answer from %s is not the one sent "
			     "(%u bytes)", dst, wc.byte_len);
			goto out;
		}
		got += n;
		if (!n)
			usleep(100);	/* one vCPU may run both ends' soft-RoCE */
	}
	if (got < 2) {
		fail(pr, "data exchange", HINT_DATA, "connected to %s port %u, but the %s did not "
		     "come through within %u s", dst, p->port[j], got ? "answer" : "message",
		     p->timeout_s);
		goto out;
	}
	pr->ok = true;
	pr->ms = now_ms() - c->t0;
	rdma_disconnect(c->id);
out:
	if (c)
		conn_free(c);
	if (ch)
		rdma_destroy_event_channel(ch);
	return ret;
}

static void connect_to(struct cc_pairs *p, uint32_t j, double wait_end)
{
	while (attempt(p, j)) {
		if (now_ms() >= wait_end) {
			fail(&p->pair[j], "connect", HINT_ABSENT, "peer did not answer within %u s "
			     "(nothing listens on %s port %u: is collctl doctor running there?)",
			     p->wait_s, p->addr[j], p->port[j]);
			return;
		}
		usleep(RETRY_MS * 1000);
	}
}

/* --------------------------------------------------- the accepting side */

struct acceptor {
	struct cc_pairs *p;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct conn **conns;		/* [nranks]: the connection from each lower rank */
	bool *done;			/* [nranks] */
	double end;
	/*
	 * Set when this node's connecting is over: till then the listener keeps
	 * answering, "busy" to a lower rank that is done, so a peer's next run
	 * of doctor is told to retry rather than left without an answer.
	 */
	atomic_bool stop;
};

static void on_request(struct acceptor *a, struct rdma_cm_event *ev)
{
	const struct hello *h = ev->param.conn.private_data;
	struct cc_pairs *p = a->p;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	uint32_t from;
	struct conn *c;
	int ret;

	if (!h || ev->param.conn.private_data_len < sizeof(*h) ||
	    ntohl(h->magic) != PAIRS_MAGIC) {
		rdma_reject(ev->id, NULL, 0);	/* not a doctor: not ours to judge */
		rdma_destroy_id(ev->id);
		return;
	}
	from = ntohl(h->from);
	if (from < p->rank && ntohl(h->to) == p->rank && ntohl(h->nranks) == p->nranks &&
	    (a->conns[from] || a->done[from])) {
		/* that rank's next run of doctor while this one still runs: later */
		struct hello busy;

		set_hello(&busy, p->rank, PAIRS_BUSY, p->nranks);
		rdma_reject(ev->id, &busy, sizeof(busy));
		rdma_destroy_id(ev->id);
		return;
	}
	if (from >= p->rank || ntohl(h->to) != p->rank || ntohl(h->nranks) != p->nranks) {
		if (from < p->rank && !a->done[from]) {
			fail(&p->pair[from], "connect", "give every node the same rank table or "
			     "host list, and each its own rank", "rank %u connected as if this "
			     "were rank %u of %u (this is rank %u of %u)", from, ntohl(h->to),
			     ntohl(h->nranks), p->rank, p->nranks);
			a->done[from] = true;
		}
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	c->id = ev->id;
	c->peer = from;
	c->t0 = now_ms();
	ret = conn_qp(c);
	if (!ret && rdma_accept(c->id, &cp))
		ret = -errno;
	if (ret) {
		fail(&p->pair[from], "connect", "see dmesg: the RDMA device refused a small RC "
		     "queue pair", "cannot accept rank %u: %s", from, strerror(-ret));
		a->done[from] = true;
		rdma_reject(c->id, NULL, 0);
		conn_free(c);
		return;
	}
	c->id->context = c;
	a->conns[from] = c;
}

static int poll_conn(struct acceptor *a, struct conn *c);

static void on_event(struct acceptor *a, struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(a, ev);
		return;
	}
	if (!c || a->done[c->peer] || ev->event == RDMA_CM_EVENT_ESTABLISHED)
		return;
	/*
	 * The peer disconnects once it has the answer, which may be before
	 * the answer's completion is polled here: the completion queue decides
	 * (success, or flushed), after the message that may wait there too.
	 */
	while (!c->sent && !a->done[c->peer] && poll_conn(a, c) > 0)
		;
	if (c->sent || a->done[c->peer])
		return;
	/* anything else before the exchange ends the pair */
	fail(&a->p->pair[c->peer], ev->event == RDMA_CM_EVENT_DISCONNECTED ?
	     "data exchange" : "connect", ev->event == RDMA_CM_EVENT_DISCONNECTED ? HINT_DATA :
	     HINT_CONNECT, "rank %u (%s): %s (status %d) before the exchange", c->peer,
	     a->p->addr[c->peer], rdma_event_str(ev->event), ev->status);
	a->done[c->peer] = true;
}

/*
 * The peer's message arrived: answer it; the answer's completion ends the
 * pair.  The number of completions polled (0 or 1), or -1.
 */
static int poll_conn(struct acceptor *a, struct conn *c)
{
	struct cc_pairs *p = a->p;
	struct cc_pair *pr = &p->pair[c->peer];
	struct ibv_wc wc;
	int n = ibv_poll_cq(c->cq, 1, &wc);

	if (!n || a->done[c->peer])
		return n;
	a->done[c->peer] = true;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fail(pr, "data exchange", HINT_DATA, "the %s rank %u (%s) failed: %s",
		     c->sent ? "answer to" : "message from", c->peer,
		     p->addr[c->peer], n < 0 ? "cannot poll the completion queue" :
		     ibv_wc_status_str(wc.status));
		return n;
	}
	if (wc.opcode == IBV_WC_SEND) {
		pr->ok = true;
		pr->ms = now_ms() - c->t0;
		return n;
	}
	if (!is_hello(&c->msg[1], c->peer, p->rank, p->nranks)) {
		fail(pr, "data exchange", HINT_DATA, "the message from rank %u (%s) is not the "
		     "one sent (%u bytes)", c->peer, p->addr[c->peer], wc.byte_len);
		return n;
	}
	c->t0 = now_ms();
	if (post_send(c, p->rank, c->peer, p->nranks)) {
		fail(pr, "data exchange", HINT_DATA, "cannot answer rank %u: %s", c->peer,
		     strerror(errno));
		return n;
	}
	c->sent = true;
	a->done[c->peer] = false;	/* until the answer's completion */
	return n;
}

static bool all_done(const struct acceptor *a)
{
	uint32_t i;

	for (i = 0; i < a->p->rank; i++)
		if (!a->done[i])
			return false;
	return true;
}

/* The time is over: every lower pair not done failed. */
static void give_up(struct acceptor *a)
{
	uint32_t i;

	for (i = 0; i < a->p->rank; i++) {
		if (!a->done[i] && !a->conns[i])
			fail(&a->p->pair[i], "connect", HINT_ABSENT, "peer did not answer within "
			     "%u s (no connection from rank %u at %s)", a->p->wait_s, i,
			     a->p->addr[i]);
		else if (!a->done[i])
			fail(&a->p->pair[i], "data exchange", HINT_DATA, "connected from %s, but "
			     "the message did not come through", a->p->addr[i]);
		a->done[i] = true;
	}
}

static void *accept_loop(void *arg)
{
	struct acceptor *a = arg;
	struct pollfd pfd = { .fd = a->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	uint32_t i;

	while (!all_done(a) || !atomic_load(&a->stop)) {
		if (!all_done(a) && now_ms() >= a->end)
			give_up(a);
		if (poll(&pfd, 1, 1) == 1 && !rdma_get_cm_event(a->ch, &ev)) {
			on_event(a, ev);
			rdma_ack_cm_event(ev);
		}
		for (i = 0; i < a->p->rank; i++)
			if (a->conns[i])
				poll_conn(a, a->conns[i]);
	}
	return NULL;
}

/* Listen on this rank's address and port; 0 or a failure for every lower pair. */
static int listen_here(struct acceptor *a)
{
	struct cc_pairs *p = a->p;
	struct sockaddr_storage ss;
	const char *what = "rdma_cm";
	uint32_t i;

	int err;

	to_sockaddr(p->addr[p->rank], p->port[p->rank], &ss);
	a->ch = rdma_create_event_channel();
	if (a->ch && !rdma_create_id(a->ch, &a->listen, NULL, RDMA_PS_TCP)) {
		what = "bind";
		if (!rdma_bind_addr(a->listen, (struct sockaddr *)&ss)) {
			what = "listen";
			if (!rdma_listen(a->listen, (int)p->rank + 1))
				return 0;
		}
	}
	err = errno;
	for (i = 0; i < p->rank; i++)
		fail(&p->pair[i], "listen", err == EADDRINUSE ? "another program holds the "
		     "port: choose another with --port (the same on every node)" :
		     err == ENODEV || err == EADDRNOTAVAIL ? HINT_NODEV : HINT_UCM,
		     "%s on %s port %u: %s", what,
		     p->addr[p->rank], p->port[p->rank], strerror(err));
	return -1;
}

void cc_pairs_run(struct cc_pairs *p)
{
	double start = now_ms();
	struct acceptor a = { .p = p };
	pthread_t th;
	bool thread = false;
	uint32_t j;

	a.conns = calloc(p->nranks, sizeof(*a.conns));
	a.done = calloc(p->nranks, sizeof(*a.done));
	if (!a.conns || !a.done) {
		for (j = 0; j < p->nranks; j++)
			fail(&p->pair[j], "local", "", "%s", strerror(ENOMEM));
		goto out;
	}
	/* the connecting side may retry until wait_s, then take each stage's time */
	a.end = start + (p->wait_s + 4.0 * p->timeout_s + 1) * 1000;
	if (p->rank && !listen_here(&a)) {
		thread = !pthread_create(&th, NULL, accept_loop, &a);
		if (!thread) {
			atomic_store(&a.stop, true);
			accept_loop(&a);	/* no thread: accept first, then connect */
		}
	}
	for (j = p->rank + 1; j < p->nranks; j++)
		connect_to(p, j, start + p->wait_s * 1000.0);
	if (thread) {
		atomic_store(&a.stop, true);
		pthread_join(th, NULL);
	}
out:
	for (j = 0; a.conns && j < p->rank; j++)
		if (a.conns[j])
			conn_free(a.conns[j]);
	if (a.listen)
		rdma_destroy_id(a.listen);
	if (a.ch)
		rdma_destroy_event_channel(a.ch);
	free(a.conns);
	free(a.done);
}

/* ------------------------------------------------------------ output */

int cc_pairs_report(const struct cc_pairs *p, json_object *o)
{
	json_object *arr = o ? json_object_new_array() : NULL;
	int bad = 0;
	uint32_t j, lo, hi;

	for (j = 0; j < p->nranks; j++) {
		const struct cc_pair *pr = &p->pair[j];

		if (j == p->rank)
			continue;
		bad += !pr->ok;
		lo = j < p->rank ? j : p->rank;
		hi = j < p->rank ? p->rank : j;
		if (arr) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "rank", json_object_new_int64(lo));
			json_object_object_add(e, "peer_rank", json_object_new_int64(hi));
			json_object_object_add(e, "addr", json_object_new_string(p->addr[lo]));
			json_object_object_add(e, "peer_addr", json_object_new_string(p->addr[hi]));
			json_object_object_add(e, "port", json_object_new_int(p->port[hi]));
			json_object_object_add(e, "status", json_object_new_string(pr->ok ? "ok" :
									   "failed"));
			if (pr->ok) {
				json_object_object_add(e, "ms", json_object_new_double(round(pr->ms * 1e3) / 1e3));
			} else {
				json_object_object_add(e, "stage", json_object_new_string(pr->stage));
				json_object_object_add(e, "reason", json_object_new_string(pr->reason));
				json_object_object_add(e, "hint", json_object_new_string(pr->hint));
			}
			json_object_array_add(arr, e);
			continue;
		}
		printf("pair %u-%u (%s -> %s): ", lo, hi, p->addr[lo], p->addr[hi]);
		if (pr->ok)
			printf("ok %.1f ms\n", pr->ms);
		else
			printf("FAILED: %s: %s\n%-12s %-8s hint: %s\n", pr->stage, pr->reason, "", "",
			       pr->hint);
	}
	if (arr) {
		json_object_object_add(o, "rank", json_object_new_int64(p->rank));
		json_object_object_add(o, "pairs", arr);
		json_object_object_add(o, "failed_pairs", json_object_new_int(bad));
	} else {
		printf("%u pair%s of rank %u, %d failed\n", p->nranks - 1, p->nranks == 2 ? "" : "s",
		       p->rank, bad);
	}
	return bad;
}
