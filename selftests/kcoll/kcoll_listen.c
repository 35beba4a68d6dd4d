// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: one listener per node, communicators named by id.
 *
 * Two ranks on this node (rxe loopback, KCOLL_IP) at the same address and
 * the same port, so every communicator here goes through one listener:
 *  - many communicators alive at once on one port, each exact, destroyed
 *    in any order and created again;
 *  - what the listener must refuse, played by a user-space endpoint that
 *    speaks the handshake (kcoll_impostor.h), each refused with the reason
 *    the wire gives (struct kcoll_cm_rej), counted where collctl show
 *    finds it and never handed to a communicator: an unknown id, a
 *    destroyed one, a request that is not kcoll's, a rank already
 *    connected, an id that lives at another port; and a duplicate id at
 *    creation (EEXIST).
 * Skips without KCOLL_IP (tools/vm/kcoll-vm sets it).
 *
 * KCOLL_LISTEN_NCOMMS (default 16, at most 4096), KCOLL_LISTEN_CHUNK and
 * KCOLL_LISTEN_SLOTS (default the module's) size the first test, which
 * logs how long the creations took and how much memory they took from
 * the node (MemAvailable), to measure many communicators per node.
 */
#include <pthread.h>
#include <sys/random.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_impostor.h"
#include "kcoll_refused.h"

#define NCOMMS_MAX	4096
#define CONNECT_MS	20000
#define IMP_MS		5000

/* The 6.1 harness runs the body after a SKIP() in the fixture's setup. */
#define SETUP_SKIPPED() do { if (_metadata->skip) return; } while (0)

/* Two ranks of one communicator: one file each, both ranks in this process. */
struct pair {
	int fd[2];
	__u64 id[2];
	unsigned char uid[KCOLL_UID_BYTES];
};

struct creation {
	pthread_t t;
	int fd;
	unsigned int rank;
	const struct kcoll_rank *ranks;
	const unsigned char *uid;
	__u64 id;
	int ret;
};

static int create_rank(int fd, unsigned int rank, const struct kcoll_rank *r,
		       const unsigned char *uid, unsigned int ms, __u64 *id)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = rank, .nranks = 2, .ranks = (uintptr_t)r,
		.rank_size = sizeof(*r), .eventfd = -1, .connect_timeout_ms = ms,
		.timeout_ms = kc_op_timeout_ms(),
		.chunk_bytes = env_u32("KCOLL_LISTEN_CHUNK", 0),
		.slots = env_u32("KCOLL_LISTEN_SLOTS", 0),
	};

	return kc_comm_create_named(fd, &cc, uid, id);
}

static void *creation_run(void *arg)
{
	struct creation *c = arg;

	c->ret = create_rank(c->fd, c->rank, c->ranks, c->uid, CONNECT_MS, &c->id);
	return NULL;
}

/* Both ranks at this node's @ip and one @port. */
static void table_fill(struct kcoll_rank r[2], const unsigned char ip[4], unsigned int port)
{
	unsigned int i;

	memset(r, 0, 2 * sizeof(*r));
	for (i = 0; i < 2; i++) {
		r[i].family = KCOLL_AF_INET;
		r[i].port = port;
		memcpy(r[i].addr, ip, 4);
	}
}

/* Create both ranks of a communicator named by a fresh random id; 0 or -errno. */
static int pair_up(struct pair *p, const struct kcoll_rank r[2])
{
	struct creation c = { .rank = 0, .ranks = r };
	int ret;

	p->fd[0] = open(KC_DEV, O_RDWR | O_CLOEXEC);
	p->fd[1] = open(KC_DEV, O_RDWR | O_CLOEXEC);
	if (p->fd[0] < 0 || p->fd[1] < 0 ||
	    getrandom(p->uid, sizeof(p->uid), 0) != sizeof(p->uid))
		return -EIO;
	c.fd = p->fd[0];
	c.uid = p->uid;
	if (pthread_create(&c.t, NULL, creation_run, &c))
		return -EAGAIN;
	ret = create_rank(p->fd[1], 1, r, p->uid, CONNECT_MS, &p->id[1]);
	pthread_join(c.t, NULL);
	p->id[0] = c.id;
	return ret ? ret : c.ret;
}

static void pair_down(struct pair *p)
{
	close(p->fd[0]);
	close(p->fd[1]);
	p->fd[0] = p->fd[1] = -1;
}

/* AllReduce of rank + 1 + @salt over the pair: 0 when exact. */
static int pair_allreduce(struct pair *p, int salt)
{
	enum { N = 1024 };
	static int32_t sb[2][N], rb[2][N];
	struct kcoll_completion cpl;
	int i, k, st;

	for (k = 0; k < 2; k++) {
		struct kcoll_submit s = {
			.op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32, .redop = KCOLL_SUM,
			.count = N, .send.addr = (uintptr_t)sb[k], .recv.addr = (uintptr_t)rb[k],
		};

		for (i = 0; i < N; i++) {
			sb[k][i] = k + 1 + salt + i;
			rb[k][i] = -1;
		}
		if (submit(p->fd[k], &s))
			return -errno;
	}
	for (k = 0; k < 2; k++) {
		st = wait_one(p->fd[k], &cpl);
		if (st)
			return st;
		for (i = 0; i < N; i++)
			if (rb[k][i] != 3 + 2 * (salt + i))
				return -EBADMSG;
	}
	return 0;
}

static int node_get(struct cc_node *nd)
{
	struct cc_nl *nl;
	char err[256];
	int ret;

	if (cc_nl_open(&nl, err, sizeof(err)))
		return -1;
	ret = cc_nl_node(nl, nd, err, sizeof(err));
	cc_nl_close(nl);
	return ret;
}

/* Communicators the listener of @port serves, or -1. */
static int node_port_comms(unsigned int port)
{
	struct cc_node nd;
	unsigned int i;

	if (node_get(&nd))
		return -1;
	for (i = 0; i < nd.nlisteners && i < CC_NODE_LISTENERS; i++)
		if (nd.listeners[i].port == port && nd.listeners[i].family == KCOLL_AF_INET)
			return (int)nd.listeners[i].comms;
	return 0;
}

/* A request of "rank" @rank for rank @dst of the communicator @uid. */
static void req_fill(struct kcoll_cm_req *r, const unsigned char *uid, unsigned int rank,
		     unsigned int dst)
{
	memset(r, 0, sizeof(*r));
	r->magic = htole32(KCOLL_CM_MAGIC);
	r->version = KCOLL_CM_VERSION;
	r->len = sizeof(*r);
	memcpy(r->uid, uid, sizeof(r->uid));
	r->rank = htole32(rank);
	r->dst = htole32(dst);
	r->nranks = htole32(2);
}

/*
 * Send @req (@len bytes) to this node's @port from its own address: the
 * errno of the refusal the wire carried (positive), 0 if accepted, -1 if
 * it ended otherwise.
 */
static int imp_refusal(const unsigned char ip[4], unsigned int port, const void *req, size_t len)
{
	const struct kcoll_cm_rej *rej;
	struct imp m;
	int ev, err = -1;

	ev = imp_connect_once(&m, ip, ip, port, req, len, IMP_MS);
	rej = (const struct kcoll_cm_rej *)m.priv;
	if (!ev)
		err = 0;
	else if (ev == RDMA_CM_EVENT_REJECTED && m.priv_len >= sizeof(*rej) &&
		 le32toh(rej->magic) == KCOLL_CM_MAGIC &&
		 le32toh(rej->version) == KCOLL_CM_VERSION)
		err = (int)le32toh(rej->err);
	imp_close(&m);
	return err;
}

FIXTURE(node) {
	unsigned char ip[4];
	unsigned int port;
	struct kcoll_rank r[2];
};

FIXTURE_SETUP(node)
{
	const char *ip = getenv("KCOLL_IP");

	if (!ip || inet_pton(AF_INET, ip, self->ip) != 1)
		SKIP(return, "needs KCOLL_IP, the node's RoCE address (tools/vm/kcoll-vm)");
	/* Two local ranks of the cluster run this at once: ports of their own. */
	self->port = 17600 + 10 * env_u32("KCOLL_LOCAL_RANK", 0);
	table_fill(self->r, self->ip, self->port);
}

FIXTURE_TEARDOWN(node)
{
}

TEST_F(node, many_communicators_share_one_port)
{
	int n = env_u32("KCOLL_LISTEN_NCOMMS", 16), i, ret, base;
	struct rlimit rl = { 2 * (rlim_t)n + 64, 2 * (rlim_t)n + 64 };
	long long mem0, mem1;
	struct pair *p;
	double t0, t1;

	SETUP_SKIPPED();
	ASSERT_LE(2, n);
	ASSERT_GE(NCOMMS_MAX, n);
	/* Two files per communicator. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max = 2 * (rlim_t)n + 64;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	p = calloc(n, sizeof(*p));
	ASSERT_NE(NULL, p);
	base = node_port_comms(self->port);
	ASSERT_LE(0, base);
	mem0 = kc_mem_available_kib();
	t0 = kc_now_s();
	for (i = 0; i < n; i++) {
		ret = pair_up(&p[i], self->r);
		ASSERT_EQ(0, ret) TH_LOG("communicator %d: %s", i, strerror(-ret));
	}
	t1 = kc_now_s();
	mem1 = kc_mem_available_kib();
	TH_LOG("%d communicators (2 ranks each) on port %u: %.3f s, %.2f ms each; "
	       "%lld KiB of MemAvailable, %lld KiB each", n, self->port, t1 - t0,
	       1000 * (t1 - t0) / n, mem0 - mem1, (mem0 - mem1) / n);
	/* Only rank 0 accepts: one registration per pair at the listener. */
	EXPECT_EQ(base + n, node_port_comms(self->port));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pair_allreduce(&p[i], i)) TH_LOG("communicator %d", i);
	/* The odd ones go, the even ones still work, the odd ones come back. */
	for (i = 1; i < n; i += 2)
		pair_down(&p[i]);
	EXPECT_EQ(base + (n + 1) / 2, node_port_comms(self->port));
	for (i = 0; i < n; i += 2)
		ASSERT_EQ(0, pair_allreduce(&p[i], 100 + i)) TH_LOG("communicator %d", i);
	for (i = 1; i < n; i += 2)
		ASSERT_EQ(0, pair_up(&p[i], self->r)) TH_LOG("communicator %d again", i);
	for (i = n - 1; i >= 0; i--) {
		ASSERT_EQ(0, pair_allreduce(&p[i], 200 + i)) TH_LOG("communicator %d", i);
		pair_down(&p[i]);
	}
	EXPECT_EQ(base, node_port_comms(self->port));
	free(p);
}

TEST_F(node, an_unknown_id_is_refused_and_counted)
{
	struct kcoll_cm_req req;
	struct cc_node a, b;
	unsigned char uid[KCOLL_UID_BYTES];
	struct pair p;

	SETUP_SKIPPED();
	/* A communicator keeps the listener up. */
	ASSERT_EQ(0, pair_up(&p, self->r));
	ASSERT_EQ(0, node_get(&a));
	ASSERT_EQ(sizeof(uid), getrandom(uid, sizeof(uid), 0));
	req_fill(&req, uid, 1, 0);
	EXPECT_EQ(ENOENT, imp_refusal(self->ip, self->port, &req, sizeof(req)));
	ASSERT_EQ(0, node_get(&b));
	EXPECT_LE(a.refused_unknown + 1, b.refused_unknown);
	/* Nothing reached the communicator, which still works. */
	EXPECT_EQ(0, kc_comm_refused(p.id[0]));
	EXPECT_EQ(0, pair_allreduce(&p, 7));
	pair_down(&p);
}

TEST_F(node, a_destroyed_id_is_stale_until_created_again)
{
	unsigned char uid[KCOLL_UID_BYTES];
	struct kcoll_cm_req req;
	struct cc_node a, b;
	struct pair p, keep;
	struct kcoll_rank r2[2];

	SETUP_SKIPPED();
	/* Another port's communicator keeps a listener up at self->port + 1. */
	table_fill(r2, self->ip, self->port + 1);
	ASSERT_EQ(0, pair_up(&keep, r2));
	ASSERT_EQ(0, pair_up(&p, r2));
	memcpy(uid, p.uid, sizeof(uid));
	pair_down(&p);
	ASSERT_EQ(0, node_get(&a));
	req_fill(&req, uid, 1, 0);
	EXPECT_EQ(ESTALE, imp_refusal(self->ip, self->port + 1, &req, sizeof(req)));
	ASSERT_EQ(0, node_get(&b));
	EXPECT_LE(a.refused_stale + 1, b.refused_stale);
	/* The caller may reuse its id: the communicator comes up again. */
	{
		struct creation c = { .rank = 0, .ranks = r2, .uid = uid };

		p.fd[0] = open(KC_DEV, O_RDWR | O_CLOEXEC);
		p.fd[1] = open(KC_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, p.fd[0]);
		ASSERT_LE(0, p.fd[1]);
		c.fd = p.fd[0];
		ASSERT_EQ(0, pthread_create(&c.t, NULL, creation_run, &c));
		EXPECT_EQ(0, create_rank(p.fd[1], 1, r2, uid, CONNECT_MS, NULL));
		pthread_join(c.t, NULL);
		EXPECT_EQ(0, c.ret);
		EXPECT_EQ(0, pair_allreduce(&p, 3));
		pair_down(&p);
	}
	pair_down(&keep);
}

TEST_F(node, a_duplicate_id_is_eexist)
{
	struct cc_node a, b;
	struct pair p;
	int fd;

	SETUP_SKIPPED();
	ASSERT_EQ(0, pair_up(&p, self->r));
	ASSERT_EQ(0, node_get(&a));
	fd = kc_open(_metadata);
	/* Rank 0 of the same id again: refused at once. */
	EXPECT_EQ(-EEXIST, create_rank(fd, 0, self->r, p.uid, CONNECT_MS, NULL));
	close(fd);
	ASSERT_EQ(0, node_get(&b));
	EXPECT_EQ(a.dup_ids + 1, b.dup_ids);
	EXPECT_EQ(0, pair_allreduce(&p, 5));
	pair_down(&p);
}

TEST_F(node, a_rank_already_connected_is_refused)
{
	struct kcoll_cm_req req;
	struct pair p;

	SETUP_SKIPPED();
	ASSERT_EQ(0, pair_up(&p, self->r));
	/* Rank 1 again, from rank 1's own address, with the right parameters. */
	req_fill(&req, p.uid, 1, 0);
	{
		struct kcoll_info info = { .size = sizeof(info) };
		int fd = kc_open(_metadata);

		/* The communicator's parameters: the test's, else the module's. */
		ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
		close(fd);
		req.slots = (__u8)(env_u32("KCOLL_LISTEN_SLOTS", 0) ?: (int)info.slots);
		req.chunk_bytes = htole32(env_u32("KCOLL_LISTEN_CHUNK", 0) ?: (int)info.chunk_bytes);
	}
	EXPECT_EQ(EBUSY, imp_refusal(self->ip, self->port, &req, sizeof(req)));
	EXPECT_EQ(1, kc_comm_refused(p.id[0]));
	EXPECT_EQ(0, pair_allreduce(&p, 9));
	pair_down(&p);
}

TEST_F(node, a_request_that_is_not_kcolls_is_refused)
{
	unsigned char junk[40];
	struct kcoll_cm_req req;
	struct cc_node a, b;
	struct pair p;

	SETUP_SKIPPED();
	ASSERT_EQ(0, pair_up(&p, self->r));
	ASSERT_EQ(0, node_get(&a));
	memset(junk, 0x5a, sizeof(junk));
	EXPECT_EQ(EPROTO, imp_refusal(self->ip, self->port, junk, sizeof(junk)));
	/* Another version of the handshake. */
	req_fill(&req, p.uid, 1, 0);
	req.version = KCOLL_CM_VERSION + 1;
	EXPECT_EQ(EPROTO, imp_refusal(self->ip, self->port, &req, sizeof(req)));
	ASSERT_EQ(0, node_get(&b));
	EXPECT_LE(a.refused_bad + 2, b.refused_bad);
	EXPECT_EQ(0, kc_comm_refused(p.id[0]));
	pair_down(&p);
}

TEST_F(node, an_id_at_another_port_is_not_handed_over)
{
	struct kcoll_rank r2[2];
	struct kcoll_cm_req req;
	struct pair p, q;

	SETUP_SKIPPED();
	ASSERT_EQ(0, pair_up(&p, self->r));
	table_fill(r2, self->ip, self->port + 2);
	ASSERT_EQ(0, pair_up(&q, r2));
	/* q's listener is asked for p: p lives at the other port. */
	req_fill(&req, p.uid, 1, 0);
	EXPECT_EQ(ENOENT, imp_refusal(self->ip, self->port + 2, &req, sizeof(req)));
	EXPECT_EQ(0, kc_comm_refused(p.id[0]));
	EXPECT_EQ(0, kc_comm_refused(q.id[0]));
	EXPECT_EQ(0, pair_allreduce(&p, 1));
	EXPECT_EQ(0, pair_allreduce(&q, 2));
	pair_down(&q);
	pair_down(&p);
}

KC_HARNESS_MAIN
