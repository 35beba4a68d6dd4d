// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: only the job's ranks join a communicator.
 *
 * Each test plays an impostor against a real communicator of the cluster
 * and then checks that the impostor was refused (and counted), that the
 * real rank still joins, and that an AllReduce is exact:
 *  - an unprivileged process on the last rank's own node claims that rank
 *    first, without the secret and with a wrong one;
 *  - it also holds the last rank's rdma_cm port, as it did before the
 *    real rank started (unless kcoll's listener holds it: a lower rank
 *    on the same node);
 *  - a process on another node claims the last rank with a forged rank
 *    table, against a communicator without a secret (the address check);
 *  - a handshake recorded from a genuine exchange (this test knows the
 *    secret and takes part in it, kcoll_impostor.h) is replayed, in both
 *    directions.
 * The real ranks wait for the impostor through a second communicator's
 * barrier, so the impostor always comes first.  Needs the cluster's rank
 * table (2..4 ranks) for the first three, the node's own address for the
 * last; skips otherwise.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_impostor.h"
#include "kcoll_refused.h"

#define SECRET		"kcoll-auth-test: the job's own secret"
#define WRONG		"kcoll-auth-test: an impostor's guess"
#define CHUNK		65536
#define SLOTS		8
#define IMPOSTOR_MS	3000

/* The 6.1 harness runs the body after a SKIP() in the fixture's setup. */
#define SETUP_SKIPPED() do { if (_metadata->skip) return; } while (0)

static unsigned int connect_ms(void)
{
	return (unsigned int)env_u32("KCOLL_TEST_CONNECT_TIMEOUT_MS", 60000);
}

/*
 * COMM_CREATE with the tests' parameters, named @uid (NULL: by the rank
 * table); 0 or -errno, the id in *@id.
 */
static int create_named(int fd, const struct cluster *c, const char *secret, unsigned int ms,
			const unsigned char *uid, __u64 *id)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = c->rank, .nranks = c->nranks,
		.ranks = (uintptr_t)c->ranks, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1, .connect_timeout_ms = ms, .timeout_ms = kc_op_timeout_ms(),
		.chunk_bytes = CHUNK, .slots = SLOTS,
	};

	if (secret) {
		cc.secret = (uintptr_t)secret;
		cc.secret_len = strlen(secret);
	}
	return kc_comm_create_named(fd, &cc, uid, id);
}

static int create_as(int fd, const struct cluster *c, const char *secret, unsigned int ms,
		     __u64 *id)
{
	return create_named(fd, c, secret, ms, NULL, id);
}

/* AllReduce of rank + 1: 0 when every element is n(n+1)/2. */
static int allreduce_exact(int fd, unsigned int nranks, unsigned int rank)
{
	enum { N = 4096 };
	static int32_t sb[N], rb[N];
	struct kcoll_submit s = {
		.op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32, .redop = KCOLL_SUM, .count = N,
		.send.addr = (uintptr_t)sb, .recv.addr = (uintptr_t)rb,
	};
	struct kcoll_completion cpl;
	int i, st;

	for (i = 0; i < N; i++) {
		sb[i] = (int32_t)rank + 1;
		rb[i] = -1;
	}
	if (submit(fd, &s))
		return -errno;
	st = wait_one(fd, &cpl);
	if (st)
		return st;
	for (i = 0; i < N; i++)
		if (rb[i] != (int32_t)(nranks * (nranks + 1) / 2))
			return -EBADMSG;
	return 0;
}

static int barrier(int fd)
{
	struct kcoll_submit s = { .op = KCOLL_OP_BARRIER };
	struct kcoll_completion cpl;

	if (submit(fd, &s))
		return -errno;
	return wait_one(fd, &cpl);
}

/*
 * Wait up to @ms for a communicator of this process to count a refusal;
 * the refusal is the module's to report (the impostor may not even see
 * its connection end: the refusal can overtake the CM's own handshake).
 */
static bool refused_here(unsigned int ms)
{
	struct cc_comm *cs;
	struct cc_nl *nl;
	char err[256];
	bool seen = false;
	size_t n, i;

	if (cc_nl_open(&nl, err, sizeof(err)))
		return false;
	for (; !seen && ms >= 100; ms -= 100) {
		if (cc_nl_list(nl, &cs, &n, err, sizeof(err)))
			break;
		for (i = 0; i < n; i++)
			seen |= cs[i].pid == (uint32_t)getpid() && cs[i].refused;
		cc_comms_free(cs, n);
		if (!seen)
			sleep_ms(100);
	}
	cc_nl_close(nl);
	return seen;
}

/*
 * Run @c's rank as an unprivileged impostor in a child with @secret, for
 * IMPOSTOR_MS, naming the communicator @uid (NULL: by @c's table); returns
 * its create's result (-errno, or 0 if admitted).
 */
static int impostor_named(const struct cluster *c, const char *secret, const unsigned char *uid)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1000;
	if (!pid) {
		int fd = open(KC_DEV, O_RDWR | O_CLOEXEC);

		if (fd < 0 || kc_become(65534, true))
			_exit(255);
		_exit(-create_named(fd, c, secret, IMPOSTOR_MS, uid, NULL) & 0xff);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1001;
	return -WEXITSTATUS(st);
}

static int impostor(const struct cluster *c, const char *secret)
{
	return impostor_named(c, secret, NULL);
}

/* The real communicator's create, in a thread while the impostor plays. */
struct creator {
	pthread_t t;
	int fd;
	struct cluster c;
	const char *secret;
	unsigned int ms;	/* connect timeout, 0: connect_ms() */
	__u64 id;
	int ret;
	int done;
};

static void *creator_run(void *arg)
{
	struct creator *cr = arg;

	cr->ret = create_as(cr->fd, &cr->c, cr->secret, cr->ms ? cr->ms : connect_ms(), &cr->id);
	__atomic_store_n(&cr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A refusal seen from the refused side: rejected, or no answer in time. */
static bool refused_errno(int ret)
{
	return ret == -ECONNREFUSED || ret == -ETIMEDOUT;
}

/* The setting of one impostor test: the real communicator and the barrier's. */
FIXTURE(job) {
	struct cluster c;	/* the real communicator's ranks */
	unsigned int last;	/* the rank impostors claim */
	int sync;		/* the barrier's file */
	struct creator cr;
};

FIXTURE_VARIANT(job) {
	unsigned int port_off;
};

FIXTURE_VARIANT_ADD(job, a) { .port_off = 100 };

FIXTURE_SETUP(job)
{
	struct cluster s;

	self->sync = -1;
	ASSERT_EQ(0, cluster_get_port(&self->c, variant->port_off));
	if (self->c.nranks < 2)
		SKIP(return, "needs a cluster of 2 or more ranks");
	self->last = self->c.nranks - 1;
	ASSERT_EQ(0, cluster_get_port(&s, variant->port_off + 50));
	self->sync = kc_open(_metadata);
	ASSERT_EQ(0, create_as(self->sync, &s, NULL, connect_ms(), NULL));
	self->cr.fd = kc_open(_metadata);
	self->cr.c = self->c;
}

FIXTURE_TEARDOWN(job)
{
	if (self->sync >= 0)
		close(self->sync);
	if (self->cr.fd > 0)
		close(self->cr.fd);
}

/* Ranks below the last start creating the real communicator now. */
static void start_creator(FIXTURE_DATA(job) *self, const char *secret)
{
	if (self->c.rank == self->last)
		return;
	self->cr.secret = secret;
	if (pthread_create(&self->cr.t, NULL, creator_run, &self->cr))
		self->cr.ret = -EAGAIN;
}

/*
 * Past the barrier (the impostor has played), the last rank joins; the
 * others' creates end.  Returns this rank's create result.
 */
static int join_after_impostor(struct __test_metadata *_metadata, FIXTURE_DATA(job) *self,
			       const char *secret)
{
	EXPECT_EQ(0, barrier(self->sync));
	if (self->c.rank != self->last) {
		pthread_join(self->cr.t, NULL);
		return self->cr.ret;
	}
	return create_as(self->cr.fd, &self->c, secret, connect_ms(), &self->cr.id);
}

TEST_F(job, an_impostor_on_the_ranks_own_node_is_refused)
{
	int ret;

	SETUP_SKIPPED();
	start_creator(self, SECRET);
	if (self->c.rank == self->last) {
		/* Without a secret the request itself is refused ... */
		EXPECT_TRUE(refused_errno(impostor(&self->c, NULL)));
		/* ... with a wrong one, the proofs fail both ways. */
		EXPECT_EQ(-EKEYREJECTED, impostor(&self->c, WRONG));
	}
	ret = join_after_impostor(_metadata, self, SECRET);
	ASSERT_EQ(0, ret) TH_LOG("rank %u: %s", self->c.rank, strerror(-ret));
	ASSERT_EQ(0, allreduce_exact(self->cr.fd, self->c.nranks, self->c.rank));
	/* The impostor asks rank 0 first and gives up when it is refused. */
	if (self->c.rank == 0)
		EXPECT_LE(2, kc_comm_refused(self->cr.id));
}

TEST_F(job, an_impostor_holding_the_ranks_port_is_refused)
{
	int ready[2], done[2], ret;
	pid_t holder = -1;
	char b = 0;

	SETUP_SKIPPED();
	start_creator(self, SECRET);
	if (self->c.rank == self->last) {
		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(done));
		holder = fork();
		ASSERT_LE(0, holder);
		if (!holder) {
			struct imp m;

			/*
			 * Any user may take a free port; this one keeps it.
			 * A lower rank on this node has kcoll's listener
			 * there already: then nobody can (b = 2).
			 */
			b = imp_listen(&m, self->c.ranks[self->last].addr,
				       self->c.ranks[self->last].port) ? 2 : 1;
			if (write(ready[1], &b, 1) != 1 || read(done[0], &b, 1) != 1)
				_exit(1);
			imp_close(&m);
			_exit(0);
		}
		ASSERT_EQ(1, read(ready[0], &b, 1));
		if (b == 2)
			TH_LOG("rank %u: kcoll's listener holds the port here", self->last);
		else
			ASSERT_EQ(1, b);
		EXPECT_EQ(-EKEYREJECTED, impostor(&self->c, WRONG));
	}
	ret = join_after_impostor(_metadata, self, SECRET);
	if (holder > 0) {
		EXPECT_EQ(1, write(done[1], &b, 1));
		waitpid(holder, NULL, 0);
	}
	ASSERT_EQ(0, ret) TH_LOG("rank %u: %s", self->c.rank, strerror(-ret));
	ASSERT_EQ(0, allreduce_exact(self->cr.fd, self->c.nranks, self->c.rank));
}

TEST_F(job, a_forged_rank_table_from_another_node_is_refused)
{
	int ret;

	SETUP_SKIPPED();
	/* No secret: the rank table's addresses are all that keeps it out. */
	start_creator(self, NULL);
	if (self->c.rank == 0) {
		struct cluster forged = self->c;

		unsigned char real[32];

		/*
		 * Rank 0's node claims the last rank, at its own address, under
		 * the real communicator's name (ids are no secret: the real
		 * table's digest names it).
		 */
		imp_table_digest(self->c.ranks, self->c.nranks, real);
		forged.rank = self->last;
		memcpy(forged.ranks[self->last].addr, self->c.ranks[0].addr, 16);
		forged.ranks[self->last].port = self->c.ranks[0].port + 1;
		EXPECT_TRUE(refused_errno(impostor_named(&forged, NULL, real)));
	}
	ret = join_after_impostor(_metadata, self, NULL);
	ASSERT_EQ(0, ret) TH_LOG("rank %u: %s", self->c.rank, strerror(-ret));
	ASSERT_EQ(0, allreduce_exact(self->cr.fd, self->c.nranks, self->c.rank));
	if (self->c.rank == 0)
		EXPECT_LE(1, kc_comm_refused(self->cr.id));
}

/* ---------------------------------------------------- replay, one node */

/* Two ranks on this node (rxe loopback), at ports @port and @port + 1. */
static int local_pair(struct cluster *c, unsigned int rank, unsigned int port)
{
	const char *ip = getenv("KCOLL_IP");
	unsigned int i;

	memset(c, 0, sizeof(*c));
	if (!ip)
		return -1;
	c->rank = rank;
	c->nranks = 2;
	for (i = 0; i < 2; i++) {
		c->ranks[i].family = KCOLL_AF_INET;
		c->ranks[i].port = port + i;
		if (inet_pton(AF_INET, ip, c->ranks[i].addr) != 1)
			return -1;
	}
	return 0;
}

/* Rank @rank's request to rank @dst of the communicator @uid. */
static void req_fill(struct kcoll_cm_req *r, const unsigned char *uid, unsigned int rank,
		     unsigned int dst)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->magic = htole32(KCOLL_CM_MAGIC);
	r->version = KCOLL_CM_VERSION;
	r->len = sizeof(*r);
	r->slots = SLOTS;
	r->flags = KCOLL_CM_F_AUTH;
	memcpy(r->uid, uid, sizeof(r->uid));
	r->rank = htole32(rank);
	r->dst = htole32(dst);
	r->nranks = htole32(2);
	r->chunk_bytes = htole32(CHUNK);
	for (i = 0; i < KCOLL_NONCE_BYTES; i++)
		r->nonce[i] = (unsigned char)rand();
}

FIXTURE(pair) {
	struct cluster c0, c1;	/* the same two ranks, seen by rank 0 and by rank 1 */
	struct creator cr;	/* rank 0 */
	unsigned char table[32];	/* its digest; the first 16 bytes name it */
	struct kcoll_cm_req req;	/* recorded from the genuine exchange */
	struct kcoll_cm_rep rep;
	struct kcoll_auth_msg proof;
};

FIXTURE_SETUP(pair)
{
	unsigned int port = 17400 + 10 * env_u32("KCOLL_LOCAL_RANK", 0);

	if (local_pair(&self->c0, 0, port) || local_pair(&self->c1, 1, port))
		SKIP(return, "needs KCOLL_IP, the node's RoCE address (tools/vm/kcoll-vm)");
	imp_table_digest(self->c0.ranks, 2, self->table);
	self->cr.c = self->c0;
	self->cr.secret = SECRET;
}

FIXTURE_TEARDOWN(pair)
{
}

/*
 * Take part in a genuine handshake with rank 0 (knowing the secret) and
 * record it: the request, the accept, the proof.
 */
static void genuine(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *self)
{
	unsigned char mac[KCOLL_MAC_BYTES];
	struct imp m;

	self->cr.fd = kc_open(_metadata);
	ASSERT_EQ(0, pthread_create(&self->cr.t, NULL, creator_run, &self->cr));
	req_fill(&self->req, self->table, 1, 0);
	ASSERT_EQ(0, imp_connect(&m, self->c0.ranks[0].addr, self->c0.ranks[0].addr,
				 self->c0.ranks[0].port, &self->req, sizeof(self->req), 5000));
	ASSERT_LE(sizeof(self->rep), m.priv_len);
	memcpy(&self->rep, m.priv, sizeof(self->rep));
	/* Our side of the protocol computes what the module computes. */
	imp_mac(SECRET, strlen(SECRET), 'P', 1, 0, 2, CHUNK, SLOTS, self->table, self->table,
		self->req.nonce, self->rep.hello.nonce, mac);
	ASSERT_EQ(0, memcmp(mac, self->rep.mac, sizeof(mac)));
	self->proof.magic = htole32(KCOLL_AUTH_MAGIC);
	self->proof.version = htole32(KCOLL_CM_VERSION);
	imp_mac(SECRET, strlen(SECRET), 'A', 1, 0, 2, CHUNK, SLOTS, self->table, self->table,
		self->req.nonce, self->rep.hello.nonce, self->proof.mac);
	memcpy(m.buf, &self->proof, sizeof(self->proof));
	ASSERT_EQ(0, imp_send(&m, sizeof(self->proof), 5000));
	/* Proven: rank 0's create completes with us as rank 1. */
	pthread_join(self->cr.t, NULL);
	ASSERT_EQ(0, self->cr.ret);
	close(self->cr.fd);
	imp_close(&m);
}

TEST_F(pair, a_replayed_request_and_proof_are_refused)
{
	struct creator real = { .c = self->c1, .secret = SECRET };
	struct imp m;
	long long n;

	SETUP_SKIPPED();
	genuine(_metadata, self);
	/* A new communicator of the same job: replay the recorded handshake. */
	self->cr.fd = kc_open(_metadata);
	ASSERT_EQ(0, pthread_create(&self->cr.t, NULL, creator_run, &self->cr));
	ASSERT_EQ(0, imp_connect(&m, self->c0.ranks[0].addr, self->c0.ranks[0].addr,
				 self->c0.ranks[0].port, &self->req, sizeof(self->req), 5000));
	memcpy(m.buf, &self->proof, sizeof(self->proof));
	ASSERT_EQ(0, imp_send(&m, sizeof(self->proof), 5000));
	EXPECT_TRUE(refused_here(10000));
	imp_close(&m);
	/* Refused and counted; the real rank 1 still joins. */
	real.fd = kc_open(_metadata);
	ASSERT_EQ(0, create_as(real.fd, &real.c, SECRET, connect_ms(), &real.id));
	pthread_join(self->cr.t, NULL);
	ASSERT_EQ(0, self->cr.ret);
	n = kc_comm_refused(self->cr.id);
	EXPECT_LE(1, n);
	close(real.fd);
	close(self->cr.fd);
}

TEST_F(pair, a_replayed_accept_is_refused)
{
	struct imp m;
	int fd;

	SETUP_SKIPPED();
	genuine(_metadata, self);
	/* Pose as rank 0 and answer rank 1 with the recorded accept. */
	ASSERT_EQ(0, imp_listen(&m, self->c0.ranks[0].addr, self->c0.ranks[0].port));
	fd = kc_open(_metadata);
	self->cr.fd = fd;
	self->cr.c = self->c1;
	self->cr.ms = 10000;
	self->cr.done = 0;
	ASSERT_EQ(0, pthread_create(&self->cr.t, NULL, creator_run, &self->cr));
	/* Whatever nonce rank 1 sends, the recorded answer does not prove it. */
	while (!__atomic_load_n(&self->cr.done, __ATOMIC_ACQUIRE))
		imp_accept(&m, &self->rep, sizeof(self->rep), 500);
	imp_close(&m);
	pthread_join(self->cr.t, NULL);
	EXPECT_EQ(-EKEYREJECTED, self->cr.ret);
	close(fd);
}

KC_HARNESS_MAIN
