// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: an operation that makes no progress names the rank
 * to blame on every survivor, within 2 x stall_ms of its last progress.
 *
 * stall_ms is set to STALL_MS through sysfs on every node (restored at
 * the end).  Every rank runs a small AllReduce (operation 1); then the
 * last rank holds back:
 *
 *   - skip: it does not submit operation 2 at all;
 *   - stop: its process (a child of the test) submits operation 2 and
 *     stops itself with SIGSTOP in the middle of it.  Operation 2 runs in
 *     the kernel and completes anyway; operation 3, which the stopped
 *     process cannot submit, stalls;
 *   - cut: its node is cut off the network (the runner's link-down, as
 *     in kcoll_death.c) and the survivors submit operation 2: the probe
 *     goes unanswered.  qp_retry_count is 7 (unlimited on soft-RoCE) for
 *     this case, so that the transport does not fail the operation with
 *     EHOSTUNREACH first; the survivors then close, the operation ending
 *     with ECANCELED.
 *
 * Each survivor submits the operation that will stall, then reads its
 * communicator's stall record through generic netlink (collctl's client,
 * KCOLL_CMD_COMM_GET) until a culprit is named, and asserts the rank, the
 * operation, the reason and the time from the operation's last progress
 * to the name (under 2 x stall_ms, or KCOLL_STALL_NAME_MS; a rank that
 * still exchanged with another after the culprit fell silent stalls
 * later than the others).  Once every survivor stamped that it is done
 * (kcoll_stamp.h), the last rank submits (or is continued, or joins the
 * network again) and every operation completes; with the node cut off
 * the survivors close only then, since a rank that closes with the
 * operation outstanding ends it on the others.
 *
 * Runs with 2 to 4 ranks; skips on one.  Skips (exit 4) without
 * /dev/kcoll.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_stamp.h"
#include "collctl_nl.h"

#define PORT_OFF	500	/* case k at PORT_OFF + 4 * k */
#define STALL_MS	500
/* The bound on naming the culprit: 2 x stall_ms, or more for a slow kernel (check-debug). */
#define NAME_MAX_MS	((double)env_u32("KCOLL_STALL_NAME_MS", 2 * STALL_MS))
#define COUNT		(256u << 10)	/* floats: 1 MiB */
#define HOLD_MAX_MS	60000	/* the last rank waits for the survivors at most this */

static int allreduce(int fd, float *b, size_t n)
{
	struct kcoll_submit s = {
		.op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
		.count = n, .send.addr = (uintptr_t)b, .recv.addr = (uintptr_t)b,
	};

	return submit(fd, &s) ? -errno : 0;
}

/* COMM_CREATE as comm_create() does; the module's id of it, 0 on error. */
static __u64 create(int fd, const struct cluster *c)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = c->rank, .nranks = c->nranks,
		.ranks = (uintptr_t)c->ranks, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1, .connect_timeout_ms = 60000, .timeout_ms = kc_op_timeout_ms(),
	};

	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? 0 : cc.comm_id;
}

/* Poll communicator @id's stall record until a culprit is named or @ms passed. */
static int stall_wait(__u64 id, struct kcoll_stall *out, unsigned int ms)
{
	double until = kc_now_s() + ms / 1e3;
	struct cc_comm c;
	struct cc_nl *nl;
	char err[256];
	int ret;

	ret = cc_nl_open(&nl, err, sizeof(err));
	if (ret)
		return ret;
	for (;;) {
		ret = cc_nl_get(nl, id, &c, err, sizeof(err));
		if (ret)
			break;
		*out = c.stall;
		cc_comm_release(&c);
		if (c.has_stall && out->culprit != UINT32_MAX)
			break;
		if (kc_now_s() > until) {
			ret = -ETIMEDOUT;
			break;
		}
		sleep_ms(10);
	}
	cc_nl_close(nl);
	return ret;
}

enum hold { HOLD_SKIP, HOLD_STOP, HOLD_CUT };

/* Wait for stamp @done of every survivor (every rank but the last of @nranks). */
static void survivors_done(struct __test_metadata *_metadata, unsigned int nranks,
			   const char *done)
{
	unsigned int r;

	for (r = 0; r + 1 < nranks; r++) {
		EXPECT_LT(0, stamp_wait(r, done, HOLD_MAX_MS)) TH_LOG("rank %u never finished", r);
	}
}

/* The stopped rank's process: operation 1, operation 2 and SIGSTOP, then 3. */
static void stopper(const struct cluster *c, float *b)
{
	struct kcoll_completion cpl;
	int fd = open(KC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 || !create(fd, c) || allreduce(fd, b, COUNT) || wait_one(fd, &cpl) ||
	    allreduce(fd, b, COUNT))
		_exit(100);
	raise(SIGSTOP);
	if (wait_one(fd, &cpl) || cpl.status || allreduce(fd, b, COUNT) ||
	    wait_one(fd, &cpl) || cpl.status)
		_exit(101);
	_exit(0);
}

/* The last rank: hold back as @how says until every survivor stamped @done. */
static void hold_back(struct __test_metadata *_metadata, const struct cluster *c, float *b,
		      enum hold how, const char *done)
{
	struct kcoll_completion cpl;
	unsigned int r;
	pid_t pid = 0;
	int fd = -1, ws;

	if (how == HOLD_STOP) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			stopper(c, b);
		ASSERT_EQ(pid, waitpid(pid, &ws, WUNTRACED));
		ASSERT_TRUE(WIFSTOPPED(ws)) TH_LOG("%#x", ws);
	} else {
		fd = kc_open(_metadata);
		ASSERT_NE(0, create(fd, c)) TH_LOG("create: %s", strerror(errno));
		ASSERT_EQ(0, allreduce(fd, b, COUNT));
		ASSERT_EQ(0, wait_one(fd, &cpl));
	}
	if (how == HOLD_CUT) {
		/* Every survivor completed operation 1; its last credits out. */
		for (r = 0; r + 1 < c->nranks; r++)
			ASSERT_LT(0, stamp_wait(r, "stall-ready", HOLD_MAX_MS));
		sleep_ms(300);
		stamp(c->rank, "stall-cut");
		ASSERT_EQ(0, link_request(false));
	}
	survivors_done(_metadata, c->nranks, done);
	if (how == HOLD_CUT) {
		double asked = stamp(c->rank, "stall-rejoin");

		link_request(true);
		/* Up again, and ARP answered. */
		link_done_wait(env_u32("KCOLL_NODE", 0), true, asked, 30000);
		sleep_ms(1000);
		close(fd);
		return;
	}
	if (how == HOLD_STOP) {
		ASSERT_EQ(0, kill(pid, SIGCONT));
		ASSERT_EQ(pid, waitpid(pid, &ws, 0));
		EXPECT_TRUE(WIFEXITED(ws) && !WEXITSTATUS(ws)) TH_LOG("%#x", ws);
		return;
	}
	ASSERT_EQ(0, allreduce(fd, b, COUNT));
	EXPECT_EQ(0, wait_one(fd, &cpl));
	EXPECT_EQ(0, cpl.status);
	close(fd);
}

static void stall_case(struct __test_metadata *_metadata, unsigned int k, enum hold how)
{
	/* the operation that stalls, and what the culprit has submitted then */
	const __u64 stalled = how == HOLD_STOP ? 3 : 2;
	static const __u32 whys[] = { KCOLL_STALL_WHY_NOT_SUBMITTED, KCOLL_STALL_WHY_STOPPED,
				      KCOLL_STALL_WHY_NO_ANSWER };
	const __u32 want_why = whys[how];
	struct kcoll_completion cpl;
	struct kcoll_stall s = { 0 };
	struct cluster c;
	float *b = map_buf(COUNT * sizeof(float));
	char old[32] = "", old_retry[32] = "", done[32];
	unsigned int last;
	double t0, ms;
	__u64 id, i;
	int fd, ret;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF + 4 * k));
	if (c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	if (kc_file_read(KC_SYSFS "stall_ms", old, sizeof(old)))
		SKIP(return, "no stall_ms tunable");
	ASSERT_EQ(0, kc_file_write(KC_SYSFS "stall_ms", "500"));
	if (how == HOLD_CUT) {
		if (!getenv("KCOLL_FAULT_REQ"))
			SKIP(goto out, "needs the runner's link requests (kcoll-vm run)");
		ASSERT_EQ(0, kc_file_read(KC_SYSFS "qp_retry_count", old_retry,
					  sizeof(old_retry)));
		ASSERT_EQ(0, kc_file_write(KC_SYSFS "qp_retry_count", "7"));
	}
	last = c.nranks - 1;
	snprintf(done, sizeof(done), "stall-done-%u", k);
	if (c.rank == last) {
		hold_back(_metadata, &c, b, how, done);
		goto out;
	}
	fd = kc_open(_metadata);
	id = create(fd, &c);
	ASSERT_NE(0, id) TH_LOG("create: %s", strerror(errno));
	for (i = 1; i < stalled; i++) {
		ASSERT_EQ(0, allreduce(fd, b, COUNT));
		ASSERT_EQ(0, wait_one(fd, &cpl));
		ASSERT_EQ(0, cpl.status) TH_LOG("operation %llu", (unsigned long long)i);
	}
	if (how == HOLD_CUT) {
		stamp(c.rank, "stall-ready");
		t0 = stamp_wait(last, "stall-cut", HOLD_MAX_MS);
		ASSERT_LT(0, t0);
		/* Cut for sure: the runner polls for requests. */
		ASSERT_LT(0, link_done_wait(last / env_u32("KCOLL_RANKS_PER_NODE", 1), false,
					    t0, 10000));
	}
	ASSERT_EQ(0, allreduce(fd, b, COUNT));
	t0 = kc_now_s();
	ret = stall_wait(id, &s, 10 * STALL_MS);
	ms = (kc_now_s() - t0) * 1e3;
	stamp(c.rank, done);
	ASSERT_EQ(0, ret) TH_LOG("no culprit named after %.0f ms: %s", ms, strerror(-ret));
	TH_LOG("rank %u: operation %llu: named rank %u (reason %u, submitted %u, done %u, pid %u) after %.0f ms; waits for rank %u, %u/%u answered, stalled for %u ms, named %u ms later",
	       c.rank, (unsigned long long)s.op_id, s.culprit, s.why, s.culprit_submitted,
	       s.culprit_done, s.culprit_pid, ms, s.wait_peer, s.replied, s.probed, s.stall_ms,
	       s.named_ms);
	EXPECT_EQ(last, s.culprit) TH_LOG("the wrong rank was named");
	EXPECT_EQ(stalled, s.op_id) TH_LOG("the wrong operation");
	EXPECT_EQ(want_why, s.why);
	if (how != HOLD_CUT) {
		EXPECT_EQ(stalled - 1, s.culprit_submitted);
		EXPECT_EQ(stalled - 1, s.culprit_done);
	}
	EXPECT_EQ(KCOLL_OP_ALLREDUCE, s.op);
	EXPECT_EQ(COUNT * sizeof(float), s.bytes);
	EXPECT_GT(NAME_MAX_MS, s.stall_ms + s.named_ms)
		TH_LOG("named %u ms after the last progress, stall_ms %u", s.stall_ms + s.named_ms,
		       STALL_MS);
	if (how != HOLD_CUT) {
		/* The last rank goes on: the operation completes. */
		EXPECT_EQ(0, wait_one(fd, &cpl));
		EXPECT_EQ(0, cpl.status);
	} else {
		/*
		 * Closing with the operation outstanding tells the others this
		 * rank left, which ends their operation before they name the
		 * cut rank if they are slower to find the stall (a rank that
		 * still exchanged with another when the cut one fell silent):
		 * close only once every survivor is done.
		 */
		survivors_done(_metadata, c.nranks, done);
	}
	close(fd);
out:
	if (*old_retry)
		kc_file_write(KC_SYSFS "qp_retry_count", old_retry);
	kc_file_write(KC_SYSFS "stall_ms", old);
	munmap(b, COUNT * sizeof(float));
}

TEST(rank_that_skips_an_operation_is_named)
{
	stall_case(_metadata, 0, HOLD_SKIP);
}

TEST(rank_stopped_by_sigstop_is_named)
{
	stall_case(_metadata, 1, HOLD_STOP);
}

/*
 * A rank that waits for a neighbour of the cut node names the cut node
 * too: it probes every peer, and the cut one does not answer.
 */
TEST(rank_whose_node_is_cut_off_is_named)
{
	stall_case(_metadata, 2, HOLD_CUT);
}

KC_HARNESS_MAIN
