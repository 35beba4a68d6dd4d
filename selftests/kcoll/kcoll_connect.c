// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: connection set-up survives a failed handshake.
 *
 * Under load a rank may give up a connection attempt after its request
 * reached the peer (the peer has accepted it, then sees a reject) and try
 * again.  The accepting rank must take the retry: a connection left
 * FAILED would reject every retry until the connect timeout, and the
 * failure of that pair would then reset every other rank's connections
 * (COMM_CREATE failing with ECONNRESET all over the cluster).
 *
 * The module's fault_abandon_connects parameter gives up the next N
 * outgoing attempts of a node right after their request went out.  Every
 * node but rank 0's sets it to 1, so the first connection attempt of each
 * rank above 0 (to rank 0) fails that way; the communicator must still
 * come up well within its connect timeout and run an AllReduce.
 *
 * Every rank runs this binary; the test skips on one rank.  Skips (exit 4)
 * without /dev/kcoll.
 */
#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT_OFF 70
#define ABANDON_PARAM "/sys/module/kcoll/parameters/fault_abandon_connects"

/*
 * The connect timeout of the test's communicator: 30 s, or
 * KCOLL_TEST_CONNECT_TIMEOUT_MS (the debug kernel sets up connections
 * about ten times slower).  Coming up in less than half of it shows a
 * retry was taken rather than the timeout waited out.
 */
static unsigned int connect_timeout_ms(void)
{
	return env_u32("KCOLL_TEST_CONNECT_TIMEOUT_MS", 30000);
}

static int param_write(unsigned int v)
{
	FILE *f = fopen(ABANDON_PARAM, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%u\n", v) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static int param_read(void)
{
	FILE *f = fopen(ABANDON_PARAM, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

TEST(abandoned_attempt_is_retried_and_accepted)
{
	size_t count = 4096, i;
	float *b = map_buf(count * 4);
	struct kcoll_comm_create cc = { .size = sizeof(cc) };
	struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				  .redop = KCOLL_SUM, .count = count };
	struct kcoll_completion cpl;
	struct cluster c;
	bool inject;
	double t0, took;
	int fd, ret, left;

	ASSERT_NE(NULL, b);
	fd = kc_open(_metadata);
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	if (access(ABANDON_PARAM, W_OK))
		SKIP(return, ABANDON_PARAM " not writable (not root, or an old module)");
	/* One rank per node arms its node; rank 0 only accepts. */
	inject = c.rank > 0 && env_u32("KCOLL_LOCAL_RANK", 0) == 0;
	if (inject)
		ASSERT_EQ(0, param_write(1));

	cc.rank = c.rank;
	cc.nranks = c.nranks;
	cc.ranks = (uintptr_t)c.ranks;
	cc.rank_size = sizeof(struct kcoll_rank);
	cc.eventfd = -1;
	cc.timeout_ms = 60000;
	cc.connect_timeout_ms = connect_timeout_ms();
	t0 = kc_now_s();
	ret = ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
	took = kc_now_s() - t0;
	left = param_read();
	if (inject)
		param_write(0);
	ASSERT_EQ(0, ret) TH_LOG("rank %u: create failed after %.1f s: %s", c.rank, took,
				 strerror(errno));
	TH_LOG("rank %u: communicator up after %.1f s", c.rank, took);
	/* The fault really happened: the armed attempt was used up. */
	if (inject)
		EXPECT_EQ(0, left) TH_LOG("rank %u: no attempt was given up", c.rank);
	/* A retry, not a wait for the timeout, brought it up. */
	EXPECT_GT(connect_timeout_ms() / 2000.0, took);

	for (i = 0; i < count; i++)
		b[i] = (float)(c.rank + 1);
	s.send.addr = (uintptr_t)b;
	s.recv.addr = (uintptr_t)b;
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("submit: %s", strerror(errno));
	ASSERT_EQ(0, wait_one(fd, &cpl));
	for (i = 0; i < count; i++)
		if (b[i] != (float)(c.nranks * (c.nranks + 1) / 2))
			break;
	EXPECT_EQ(count, i) TH_LOG("element %zu is %g", i, b[i < count ? i : 0]);
	close(fd);
}

KC_HARNESS_MAIN
