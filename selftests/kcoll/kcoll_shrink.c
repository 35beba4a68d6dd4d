// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: the survivors of a dead node carry on
 * (coll_comm_shrink()).
 *
 *  - healthy_shrink_is_a_duplicate: with every rank alive, a shrink gives
 *    a communicator of the same ranks, and an AllReduce on it is exact.
 *  - slow_survivor_connects_anew: every rank aborts its communicator
 *    (all alive, all failed), rank 1 shrinks KCOLL_SHRINK_SLOW_MS
 *    (5000 ms) after the others.  A connecting rank gives the taken-over
 *    connection up after a tenth of the connect timeout (2 s here)
 *    without the peer's RESET and connects anew:
 *    the higher ranks' connections to rank 1 are new, every other one is
 *    reused (rank 1 finds the lower ranks' RESETs waiting), and an
 *    AllReduce over all of them is exact.
 *  - survivors_shrink_and_carry_on: every rank runs 256 KiB AllReduces
 *    through libcoll and checks each result; at operation
 *    KCOLL_SHRINK_KILL_AT (10) the highest rank asks the runner to kill
 *    its VM (kill-vm: qemu gets SIGKILL) and goes on until it is gone.
 *    Every survivor's operation must then fail with ECONNRESET or
 *    EHOSTUNREACH naming the dead rank, never before the request; the
 *    survivors shrink and run KCOLL_SHRINK_OPS (100) AllReduces over the
 *    ranks left, each result exact.  From the failure to the end of the
 *    first operation on the new communicator must take less than
 *    KCOLL_SHRINK_MS (1000 ms): its creation waits for the slowest
 *    survivor's failure, which is part of the bound.  The new
 *    communicator must have taken over every connection between the
 *    survivors (collctl's netlink client: no new handshake), where the
 *    healthy shrink above connects anew (its parent still uses its own).
 *
 *  - groups_of_members_only: coll_comm_create_group(), the communicator
 *    of some ranks that only they make, from what the parent knows (no
 *    exchange): ranks n-1 and 1, in that order, make two groups of that
 *    list, and ranks 0 and 1 one of theirs, while the others make none;
 *    each has the listed new ranks, exact AllReduces run on both of the
 *    first two at once, and the parent still works.  Then ranks 0 and 1
 *    pass lists that differ ({0,1} and {1,0}): both fail with ETIMEDOUT
 *    at their connect timeout (2 s) instead of meeting.
 *
 * Each survivor prints what it measured ("shrink:" lines).  Needs 3 or
 * more VMs of one rank each and the runner's fault requests
 * (KCOLL_FAULT_REQ); skips otherwise (exit 4 without /dev/kcoll).  The
 * victim's VM is gone at the end: run it last in a boot.
 *
 *   kcoll-vm run -n 4 --module kcoll.ko --rmmod -- kcoll_shrink
 */
#include <arpa/inet.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_stamp.h"
#include "coll.h"
#include "collctl_fmt.h"
#include "collctl_nl.h"

#define COUNT		(1u << 16)	/* 256 KiB of fp32 */
#define KILL_AT		((uint32_t)env_u32("KCOLL_SHRINK_KILL_AT", 10))
#define OPS_AFTER	((uint32_t)env_u32("KCOLL_SHRINK_OPS", 100))
#define SHRINK_MAX_MS	((double)env_u32("KCOLL_SHRINK_MS", 1000))
/* The victim gives up waiting for its end after this long. */
#define VICTIM_MAX_S	60.0

#define LOG(...) do { ksft_print_msg(__VA_ARGS__); fflush(stdout); } while (0)

static double now_ms(void)
{
	return kc_now_s() * 1e3;
}

/* Rank @r's input to operation @op: small integers, so every sum is exact. */
static float input(uint32_t r, uint32_t op, uint32_t i)
{
	return (float)((r + 1) * (op % 7 + 1) + i % 13);
}

static void fill(float *b, uint32_t r, uint32_t op)
{
	uint32_t i;

	for (i = 0; i < COUNT; i++)
		b[i] = input(r, op, i);
}

/* The first wrong element of the sum over ranks 0..@n-1, or -1. */
static long check(const float *b, uint32_t n, uint32_t op)
{
	uint32_t i, r;

	for (i = 0; i < COUNT; i++) {
		float want = 0;

		for (r = 0; r < n; r++)
			want += input(r, op, i);
		if (b[i] != want)
			return i;
	}
	return -1;
}

/*
 * The cluster's communicator through libcoll: one rank per VM, a server
 * each.  0 or a negative errno (coll_last_error() says why).
 */
static int create(const struct cluster *c, coll_comm_t **comm)
{
	struct coll_comm_opts opts = { .size = sizeof(opts), .timeout_ms = 20000,
				       .connect_timeout_ms = 20000 };
	struct coll_rank_desc d[64];
	unsigned int i;

	for (i = 0; i < c->nranks; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		inet_ntop(AF_INET, c->ranks[i].addr, d[i].addr, sizeof(d[i].addr));
		d[i].port = c->ranks[i].port;
		d[i].server_id = i;
	}
	return coll_comm_init_ranks(d, c->nranks, c->rank, &opts, comm);
}

/*
 * How many of @comm's peers the module says it took over from the
 * communicator it shrank (KCOLL_PEER_A_REUSED), or a negative errno.
 * With @show, what collctl show prints of it goes there.
 */
static int reused_peers(coll_comm_t *comm, FILE *show)
{
	struct cc_comm c;
	struct cc_nl *nl;
	char err[256];
	uint32_t i;
	int ret, n = 0;

	ret = cc_nl_open(&nl, err, sizeof(err));
	if (ret)
		return ret;
	ret = cc_nl_get(nl, coll_comm_id(comm), &c, err, sizeof(err));
	cc_nl_close(nl);
	if (ret)
		return ret;
	for (i = 0; i < c.npeers; i++)
		n += c.peers[i].reused;
	if (show)
		cc_print_comm(show, &c);
	cc_comm_release(&c);
	return n;
}

/* One AllReduce of operation @op on @comm, checked over its @n ranks. */
static int allreduce(coll_comm_t *comm, float *b, uint32_t rank, uint32_t n, uint32_t op,
		     long *bad)
{
	int ret;

	fill(b, rank, op);
	ret = coll_allreduce_sync(comm, b, b, COUNT, COLL_FLOAT, COLL_SUM);
	*bad = ret ? -1 : check(b, n, op);
	return ret;
}

TEST(healthy_shrink_is_a_duplicate)
{
	coll_comm_t *comm = NULL, *nc = NULL;
	struct cluster c;
	long bad;
	float *b;

	if (access(KC_DEV, F_OK))
		SKIP(return, "no %s", KC_DEV);
	if (cluster_get_port(&c, 305) || c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	b = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, create(&c, &comm)) TH_LOG("create: %s", coll_last_error());
	ASSERT_EQ(0, allreduce(comm, b, c.rank, c.nranks, 0, &bad));
	ASSERT_EQ(0, coll_comm_shrink(comm, &nc)) TH_LOG("shrink: %s", coll_last_error());
	EXPECT_EQ((int)c.nranks, coll_comm_size(nc));
	EXPECT_EQ((int)c.rank, coll_comm_rank(nc));
	/* Its parent is alive and keeps its connections: new ones. */
	EXPECT_EQ(0, reused_peers(nc, NULL));
	ASSERT_EQ(0, allreduce(nc, b, c.rank, c.nranks, 1, &bad))
		TH_LOG("on the new communicator: %s", coll_last_error());
	EXPECT_EQ(-1, bad) TH_LOG("element %ld wrong", bad);
	/* The old one still works, and the two stay apart. */
	ASSERT_EQ(0, allreduce(comm, b, c.rank, c.nranks, 2, &bad));
	EXPECT_EQ(-1, bad) TH_LOG("element %ld wrong", bad);
	coll_comm_destroy(nc);
	coll_comm_destroy(comm);
	munmap(b, COUNT * sizeof(float));
}

/* The group of @members (this rank among them), checked: its size and this rank's place. */
static coll_comm_t *group(struct __test_metadata *_metadata, coll_comm_t *comm,
			  const uint32_t *members, uint32_t n, uint32_t rank)
{
	coll_comm_t *g = NULL;
	uint32_t i;

	EXPECT_EQ(0, coll_comm_create_group(comm, members, n, NULL, &g))
		TH_LOG("rank %u: create_group: %s", rank, coll_last_error());
	if (!g)
		return NULL;
	EXPECT_EQ((int)n, coll_comm_size(g));
	for (i = 0; i < n; i++)
		if (members[i] == rank)
			EXPECT_EQ((int)i, coll_comm_rank(g));
	return g;
}

TEST(groups_of_members_only)
{
	coll_comm_t *comm = NULL, *g1 = NULL, *g2 = NULL, *g3 = NULL, *bad_g = NULL;
	struct coll_comm_opts quick = { .size = sizeof(quick), .connect_timeout_ms = 2000 };
	uint32_t pair[2], low[] = { 0, 1 }, wrong[2], me;
	coll_request_t *r1 = NULL, *r2 = NULL;
	float *b, *b2;
	struct cluster c;
	long bad;

	if (access(KC_DEV, F_OK))
		SKIP(return, "no %s", KC_DEV);
	if (cluster_get_port(&c, 312) || c.nranks < 3)
		SKIP(return, "needs 3 or more ranks");
	pair[0] = c.nranks - 1;
	pair[1] = 1;
	b = map_buf(COUNT * sizeof(float));
	b2 = map_buf(COUNT * sizeof(float));
	ASSERT_TRUE(b && b2);
	ASSERT_EQ(0, create(&c, &comm)) TH_LOG("create: %s", coll_last_error());
	if (c.rank == pair[0] || c.rank == pair[1]) {
		g1 = group(_metadata, comm, pair, 2, c.rank);
		g2 = group(_metadata, comm, pair, 2, c.rank);
		ASSERT_TRUE(g1 && g2);
		me = (uint32_t)coll_comm_rank(g1);
		/* Both at once: two communicators, apart. */
		fill(b, me, 3);
		fill(b2, me, 4);
		ASSERT_EQ(0, coll_allreduce(g1, b, b, COUNT, COLL_FLOAT, COLL_SUM, &r1));
		ASSERT_EQ(0, coll_allreduce(g2, b2, b2, COUNT, COLL_FLOAT, COLL_SUM, &r2));
		ASSERT_EQ(0, coll_wait(&r2, NULL)) TH_LOG("%s", coll_last_error());
		ASSERT_EQ(0, coll_wait(&r1, NULL)) TH_LOG("%s", coll_last_error());
		EXPECT_EQ(-1, check(b, 2, 3));
		EXPECT_EQ(-1, check(b2, 2, 4));
	}
	if (c.rank <= 1) {
		g3 = group(_metadata, comm, low, 2, c.rank);
		ASSERT_NE(NULL, g3);
		ASSERT_EQ(0, allreduce(g3, b, c.rank, 2, 5, &bad)) TH_LOG("%s", coll_last_error());
		EXPECT_EQ(-1, bad) TH_LOG("element %ld wrong", bad);
	}
	ASSERT_EQ(0, allreduce(comm, b, c.rank, c.nranks, 6, &bad));
	EXPECT_EQ(-1, bad) TH_LOG("element %ld wrong", bad);
	if (c.rank <= 1) {
		double t0 = now_ms();
		int ret;

		wrong[0] = c.rank ? 1 : 0;
		wrong[1] = c.rank ? 0 : 1;
		ret = coll_comm_create_group(comm, wrong, 2, &quick, &bad_g);
		LOG("shrink: rank %u: group of another list: %d after %.0f ms: %s\n", c.rank,
		    ret, now_ms() - t0, coll_last_error());
		EXPECT_EQ(-ETIMEDOUT, ret);
		EXPECT_EQ(NULL, bad_g);
		EXPECT_NE(NULL, strstr(coll_last_error(), "same list"));
	}
	coll_comm_destroy(g3);
	coll_comm_destroy(g2);
	coll_comm_destroy(g1);
	coll_comm_destroy(comm);
	munmap(b, COUNT * sizeof(float));
	munmap(b2, COUNT * sizeof(float));
}

/* The connections rank @r of @n takes over when rank 1 is late to shrink. */
static int slow_expected(uint32_t r, uint32_t n)
{
	if (r == 1)
		return 1;		/* rank 0's */
	return r < 1 ? (int)n - 1 : (int)n - 2;
}

TEST(slow_survivor_connects_anew)
{
	coll_comm_t *comm = NULL, *nc = NULL;
	struct cluster c;
	int reused;
	long bad;
	float *b;

	if (access(KC_DEV, F_OK))
		SKIP(return, "no %s", KC_DEV);
	if (cluster_get_port(&c, 307) || c.nranks < 3)
		SKIP(return, "needs 3 or more ranks");
	b = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, create(&c, &comm)) TH_LOG("create: %s", coll_last_error());
	ASSERT_EQ(0, allreduce(comm, b, c.rank, c.nranks, 0, &bad));
	ASSERT_EQ(0, coll_comm_abort(comm));
	if (c.rank == 1)
		sleep_ms(env_u32("KCOLL_SHRINK_SLOW_MS", 5000));
	ASSERT_EQ(0, coll_comm_shrink(comm, &nc)) TH_LOG("shrink: %s", coll_last_error());
	ASSERT_EQ((int)c.nranks, coll_comm_size(nc));
	ASSERT_EQ(0, allreduce(nc, b, c.rank, c.nranks, 1, &bad))
		TH_LOG("on the new communicator: %s", coll_last_error());
	EXPECT_EQ(-1, bad) TH_LOG("element %ld wrong", bad);
	reused = reused_peers(nc, NULL);
	LOG("shrink: rank %u (rank 1 late): %d of %u connections reused\n", c.rank, reused,
	    c.nranks - 1);
	EXPECT_EQ(slow_expected(c.rank, c.nranks), reused);
	coll_comm_destroy(nc);
	coll_comm_destroy(comm);
	munmap(b, COUNT * sizeof(float));
}

TEST(survivors_shrink_and_carry_on)
{
	coll_comm_t *comm = NULL, *nc = NULL;
	uint32_t op, victim, n;
	double t_err, t_first, t_shrunk;
	struct cluster c;
	int ret, reused;
	long bad;
	float *b;

	if (access(KC_DEV, F_OK))
		SKIP(return, "no %s", KC_DEV);
	if (cluster_get_port(&c, 310) || c.nranks < 3 ||
	    env_u32("KCOLL_RANKS_PER_NODE", 1) != 1 || !getenv("KCOLL_FAULT_REQ"))
		SKIP(return, "needs 3 or more VMs of one rank and kcoll-vm's fault requests");
	victim = c.nranks - 1;
	n = c.nranks;
	b = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, create(&c, &comm)) TH_LOG("create: %s", coll_last_error());

	if (c.rank == victim) {
		double until = 0;

		for (op = 0;; op++) {
			if (op == KILL_AT) {
				ASSERT_EQ(0, fault_request("kill-vm"));
				LOG("shrink: rank %u: asked for its VM's end at operation %u\n",
				    c.rank, op);
				until = kc_now_s() + VICTIM_MAX_S;
			}
			ret = allreduce(comm, b, c.rank, n, op, &bad);
			ASSERT_TRUE(!until || kc_now_s() < until)
				TH_LOG("the runner did not kill this VM");
			/* The survivors have left for good: wait for the end. */
			while (ret && kc_now_s() < until)
				sleep_ms(1000);
			ASSERT_EQ(0, ret) TH_LOG("the runner did not kill this VM");
		}
	}

	for (op = 0;; op++) {
		ret = allreduce(comm, b, c.rank, n, op, &bad);
		if (ret)
			break;
		ASSERT_EQ(-1, bad) TH_LOG("operation %u: element %ld wrong", op, bad);
	}
	t_err = now_ms();
	LOG("shrink: rank %u: failed after %u operations: %s\n", c.rank, op, coll_last_error());
	ASSERT_LE(KILL_AT, op) TH_LOG("failed before the victim asked for its end");
	ASSERT_TRUE(ret == -ECONNRESET || ret == -EHOSTUNREACH) TH_LOG("%s", coll_strerror(ret));
	{
		char who[32];

		snprintf(who, sizeof(who), "rank %u", victim);
		ASSERT_NE(NULL, strstr(coll_last_error(), who))
			TH_LOG("the error does not name %s", who);
	}

	ASSERT_EQ(0, coll_comm_shrink(comm, &nc)) TH_LOG("shrink: %s", coll_last_error());
	t_shrunk = now_ms();
	ASSERT_EQ((int)n - 1, coll_comm_size(nc));
	ASSERT_EQ((int)c.rank, coll_comm_rank(nc));

	ASSERT_EQ(0, allreduce(nc, b, c.rank, n - 1, 0, &bad))
		TH_LOG("first operation: %s", coll_last_error());
	t_first = now_ms();
	ASSERT_EQ(-1, bad) TH_LOG("first operation: element %ld wrong", bad);
	LOG("shrink: rank %u: shrunk to %u ranks in %.0f ms, first operation done %.0f ms "
	    "after the failure\n", c.rank, n - 1, t_shrunk - t_err, t_first - t_err);
	EXPECT_GT(SHRINK_MAX_MS, t_first - t_err);
	reused = reused_peers(nc, c.rank ? NULL : stdout);
	LOG("shrink: rank %u: %d of %u connections reused\n", c.rank, reused, n - 2);
	EXPECT_EQ((int)n - 2, reused) TH_LOG("not every connection between the survivors was reused");
	for (op = 1; op < OPS_AFTER; op++) {
		ASSERT_EQ(0, allreduce(nc, b, c.rank, n - 1, op, &bad))
			TH_LOG("operation %u: %s", op, coll_last_error());
		ASSERT_EQ(-1, bad) TH_LOG("operation %u: element %ld wrong", op, bad);
	}
	LOG("shrink: rank %u: %u exact AllReduces over %u ranks\n", c.rank, OPS_AFTER, n - 1);
	coll_comm_destroy(nc);
	coll_comm_destroy(comm);
	munmap(b, COUNT * sizeof(float));
}

TEST_HARNESS_MAIN
