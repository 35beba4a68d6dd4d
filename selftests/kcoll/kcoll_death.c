// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: a node that dies is noticed in seconds, and
 * KCOLL_IOC_ABORT returns at once whatever the peers are doing.
 *
 *  - node_cut_is_noticed_in_seconds: every rank runs 1 MiB AllReduces;
 *    at operation KCOLL_DEATH_OPS (20) the highest rank cuts its own
 *    node's network (eth0 down) in the middle of the operation.  Every
 *    survivor's operation must end with EHOSTUNREACH (its sends to the
 *    node were never acknowledged: qp_timeout, qp_retry_count) or
 *    ECONNRESET (a survivor that noticed first left) within 5 s of the
 *    cut, and no operation may fail before it (no false alarm under
 *    load).
 *  - waiting_rank_notices_when_a_peer_leaves: a survivor that only waits
 *    to receive from the cut-off node learns when another peer leaves:
 *    it probes the peers left and gets EHOSTUNREACH within 5 s (or
 *    ECONNRESET, from another waiting rank that found it first and told
 *    whom to blame); the fault names the cut node.
 *  - abort_*: the survivors' AllReduce waits for the highest rank, which
 *    is stopped (SIGSTOP), killed (SIGKILL) or cut off (eth0 down);
 *    KCOLL_IOC_ABORT must return within 100 ms, and the operation then
 *    complete with ECANCELED (or with the error that beat the abort).
 *
 * KCOLL_DEATH_OPS, KCOLL_DEATH_DETECT_MS and KCOLL_DEATH_ABORT_MS change
 * the operations before the cut and the two bounds.
 *
 * Times across VMs are measured on the host's clock: every rank stamps
 * files in the runner's shared run directory (9p, attributes from the
 * host), the cut node right after the cut, a survivor when its operation
 * ends.  The same files tell the survivors when to abort.  Each rank
 * prints what it measured ("death:" lines).  Needs 3 or more VMs of one
 * rank each; skips (exit 4) without /dev/kcoll.
 *
 *   kcoll-vm run -n 4 --module kcoll.ko --rmmod -- kcoll_death
 */
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_stamp.h"

#define PORT_OFF	300
#define OP_TIMEOUT_MS	20000
/* The bounds, overridable for slower kernels (make check-debug). */
#define DETECT_MAX_S	(env_u32("KCOLL_DEATH_DETECT_MS", 5000) / 1e3)
#define ABORT_MAX_MS	((double)env_u32("KCOLL_DEATH_ABORT_MS", 100))
#define COUNT		(1u << 18)	/* 1 MiB of fp32 */

/* What a rank measured: the child's stdout is a pipe, flushed at once. */
#define LOG(...) do { ksft_print_msg(__VA_ARGS__); fflush(stdout); } while (0)

static double now_ms(void)
{
	return kc_now_s() * 1e3;
}

/* The highest rank is the victim; one rank per node, three or more nodes. */
static bool setup_ok(struct cluster *c, unsigned int off)
{
	if (cluster_get_port(c, PORT_OFF + off) || c->nranks < 3 ||
	    env_u32("KCOLL_RANKS_PER_NODE", 1) != 1 || !getenv("KCOLL_OUTDIR"))
		return false;
	return true;
}

static int submit_allreduce(int fd, float *b);

/* Wait (up to @ms) for every survivor's stamp @name, then join the network again. */
static void rejoin_after(const struct cluster *c, const char *name, unsigned int ms)
{
	unsigned int r;
	double asked;

	for (r = 0; r + 1 < c->nranks; r++)
		stamp_wait(r, name, ms);
	asked = stamp(c->rank, "rejoin");
	link_request(true);
	/* Up again (one rank per node: our node is our rank), and ARP answered. */
	link_done_wait(c->rank, true, asked, 30000);
	sleep_ms(1000);
}

/* Every rank's first operation: all connections are up and used. */
static int warm_up(int fd, float *b)
{
	struct kcoll_completion cpl;

	if (submit_allreduce(fd, b))
		return -errno;
	return wait_one(fd, &cpl);
}

static int create_algo(int fd, const struct cluster *c, const char *algo)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc),
		.rank = c->rank,
		.nranks = c->nranks,
		.ranks = (uintptr_t)c->ranks,
		.rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1,
		.connect_timeout_ms = 60000,
		.timeout_ms = OP_TIMEOUT_MS,
		.algo = (uintptr_t)algo,
	};

	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
}

static int create(int fd, const struct cluster *c)
{
	return create_algo(fd, c, NULL);
}

static int submit_allreduce(int fd, float *b)
{
	struct kcoll_submit s = {
		.op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
		.count = COUNT, .send.addr = (uintptr_t)b, .recv.addr = (uintptr_t)b,
	};
	size_t i;

	for (i = 0; i < COUNT; i++)
		b[i] = 1.0f;
	return submit(fd, &s);
}

/* A completion ready now?  Its status, or 1 when none is. */
static int peek_one(int fd)
{
	struct kcoll_completion cpl = {};
	struct kcoll_reap r = {
		.size = sizeof(r), .entries = (uintptr_t)&cpl, .max = 1,
		.entry_size = sizeof(cpl),
	};

	if (ioctl(fd, KCOLL_IOC_REAP, &r) || r.count != 1)
		return 1;
	return cpl.status;
}

/* ----------------------------------------------------- abort is prompt */

enum victim_kind { STOPPED, KILLED, CUT };

/*
 * The victim's side: create, give the survivors time to submit, then
 * become @kind and stamp "gone-@kind".  A killed victim is a child
 * process of the test, so that its death is not the test's.
 */
static void victim_run(struct __test_metadata *_metadata, const struct cluster *c,
		       enum victim_kind kind, const char *name)
{
	float *b = map_buf(COUNT * sizeof(float));
	char x, done[64];
	int fd, pfd[2];
	pid_t pid;

	ASSERT_NE(NULL, b);
	snprintf(done, sizeof(done), "%s-done", name);
	if (kind == KILLED) {
		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(pfd[0]);
			fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
			if (fd < 0 || create(fd, c) || warm_up(fd, b))
				_exit(1);
			if (write(pfd[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &x, 1)) TH_LOG("the victim's creation failed");
		close(pfd[0]);
		sleep_ms(500);
		kill(pid, SIGKILL);
		stamp(c->rank, name);
		waitpid(pid, NULL, 0);
		return;
	}
	fd = kc_open(_metadata);
	ASSERT_EQ(0, create(fd, c)) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, warm_up(fd, b));
	sleep_ms(500);
	if (kind == STOPPED) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			unsigned int r;

			/* Wake the victim once the survivors are done with it. */
			for (r = 0; r + 1 < c->nranks; r++)
				stamp_wait(r, done, 30000);
			kill(getppid(), SIGCONT);
			_exit(0);
		}
		stamp(c->rank, name);
		raise(SIGSTOP);
		waitpid(pid, NULL, 0);
	} else {
		stamp(c->rank, name);
		ASSERT_EQ(0, link_request(false));
		/* Closed once back: nothing of ours reaches them meanwhile. */
		rejoin_after(c, done, 30000);
		close(fd);
		snprintf(done, sizeof(done), "%s-up", name);
		stamp(c->rank, done);
		return;
	}
	close(fd);
}

static void abort_when_gone(struct __test_metadata *_metadata, enum victim_kind kind,
			    unsigned int off, const char *name)
{
	static const char *const what[] = { "stopped", "killed", "cut off" };
	struct kcoll_abort ab = { .size = sizeof(ab) };
	struct kcoll_completion cpl;
	double t0, t_abort, t_done;
	char done[64];
	struct cluster c;
	float *b;
	int fd, st, before;

	if (!setup_ok(&c, off))
		SKIP(return, "needs 3 or more VMs of one rank (kcoll-vm -n 3)");
	if (c.rank == c.nranks - 1) {
		victim_run(_metadata, &c, kind, name);
		return;
	}
	b = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, b);
	fd = kc_open(_metadata);
	ASSERT_EQ(0, create(fd, &c)) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, warm_up(fd, b));
	/* It waits for the victim, which never takes part. */
	ASSERT_EQ(0, submit_allreduce(fd, b)) TH_LOG("submit: %s", strerror(errno));
	t0 = stamp_wait(c.nranks - 1, name, 60000);
	ASSERT_LT(0, t0) TH_LOG("the victim never went");
	/* Stopped for sure; cut off for sure (the runner polls for requests). */
	if (kind == STOPPED)
		sleep_ms(200);
	if (kind == CUT)
		ASSERT_LT(0, link_done_wait(c.nranks - 1, false, t0, 10000));
	before = peek_one(fd);
	t0 = now_ms();
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab)) TH_LOG("abort: %s", strerror(errno));
	t_abort = now_ms() - t0;
	st = before == 1 ? wait_one(fd, &cpl) : before;
	t_done = now_ms() - t0;
	LOG("death: rank %u: peer %s: abort took %.2f ms, the operation %s %d (%s) %.1f ms after it\n",
		       c.rank, what[kind], t_abort,
		       before == 1 ? "then ended with" : "had already ended with", st,
		       strerror(st < 0 ? -st : 0), before == 1 ? t_done : 0.0);
	EXPECT_GT(ABORT_MAX_MS, t_abort);
	/*
	 * ECANCELED, or ECONNRESET when another survivor's abort (its
	 * disconnect) ended our operation between the peek and ours.
	 */
	if (before == 1) {
		EXPECT_TRUE(st == -ECANCELED || st == -ECONNRESET) TH_LOG("%d", st);
	} else {
		EXPECT_NE(0, st);
	}
	EXPECT_EQ(-1, submit_allreduce(fd, b));
	EXPECT_EQ(ECANCELED, errno);
	close(fd);
	snprintf(done, sizeof(done), "%s-done", name);
	stamp(c.rank, done);
	munmap(b, COUNT * sizeof(float));
	if (kind == CUT) {
		snprintf(done, sizeof(done), "%s-up", name);
		stamp_wait(c.nranks - 1, done, 60000);
	}
}

TEST(abort_with_a_stopped_peer)
{
	abort_when_gone(_metadata, STOPPED, 10, "gone-stopped");
}

TEST(abort_with_a_killed_peer)
{
	abort_when_gone(_metadata, KILLED, 20, "gone-killed");
}

/* ----------------------------------------------- a dead node is noticed */

TEST(node_cut_is_noticed_in_seconds)
{
	unsigned int ops = env_u32("KCOLL_DEATH_OPS", 20), it;
	double t_asked, t_cut, t_err, t_sub = 0, took;
	struct kcoll_completion cpl;
	struct cluster c;
	unsigned int victim;
	float *b;
	int fd, st = 0;

	if (!setup_ok(&c, 0))
		SKIP(return, "needs 3 or more VMs of one rank (kcoll-vm -n 3)");
	victim = c.nranks - 1;
	b = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, b);
	fd = kc_open(_metadata);
	ASSERT_EQ(0, create(fd, &c)) TH_LOG("create: %s", strerror(errno));

	/* Until one fails: the cut comes in the middle of some operation. */
	for (it = 0; it < ops + 1000 && !st; it++) {
		t_sub = now_ms();
		ASSERT_EQ(0, submit_allreduce(fd, b)) TH_LOG("submit %u: %s", it, strerror(errno));
		if (c.rank == victim && it == ops) {
			stamp(c.rank, "cut");
			ASSERT_EQ(0, link_request(false));
		}
		st = wait_one(fd, &cpl);
		if (!st) {
			ASSERT_EQ((float)c.nranks, b[0]);
			ASSERT_EQ((float)c.nranks, b[COUNT - 1]);
		}
	}
	it--;
	took = now_ms() - t_sub;
	if (c.rank == victim) {
		LOG("death: rank %u (cut off): op %u ended with %d (%s) %.0f ms after its submission\n",
		    c.rank, it, st, strerror(st < 0 ? -st : 0), took);
		close(fd);
		rejoin_after(&c, "err", 30000);
		stamp(c.rank, "cut-up");
		return;
	}
	t_err = stamp(c.rank, "err");
	t_asked = stamp_wait(victim, "cut", 10000);
	ASSERT_NE(0, st) TH_LOG("no operation failed");
	ASSERT_LT(0, t_asked) TH_LOG("op %u failed (%d), and rank %u cut nothing", it, st, victim);
	/* From the cut itself: the runner may be slow to poll on a busy host. */
	t_cut = link_done_wait(victim, false, t_asked, 10000);
	ASSERT_LT(0, t_cut) TH_LOG("the runner did not cut node %u off within 10 s", victim);
	ASSERT_LT(0, t_err);
	LOG("death: rank %u: op %u ended with %d (%s) %.3f s after the cut (asked for %.3f s before it; %.0f ms after its submission)\n",
	    c.rank, it, st, strerror(-st), t_err - t_cut, t_cut - t_asked, took);
	if (t_err - t_cut >= DETECT_MAX_S) {
		struct kcoll_fault f = { .size = sizeof(f) };

		/* Which path told this rank, for a slow notice. */
		if (!ioctl(fd, KCOLL_IOC_FAULT, &f))
			LOG("death: rank %u: fault kind %u names rank %u, told by rank %u\n",
			    c.rank, f.kind, f.rank, f.reporter);
	}
	EXPECT_LE(ops, it) TH_LOG("op %u failed before the cut", it);
	EXPECT_TRUE(st == -EHOSTUNREACH || st == -ECONNRESET) TH_LOG("%s", strerror(-st));
	EXPECT_GT(DETECT_MAX_S, t_err - t_cut);
	close(fd);
	/* The next test needs the network whole. */
	stamp_wait(victim, "cut-up", 60000);
}

/*
 * A rank that only waits to receive from the dead node has no send of
 * its own to retry.  A Scatter from the victim over a full mesh: each
 * survivor needs the victim alone.  The victim's node is cut before it
 * sends anything, then rank 1 leaves (closes): the others, which need
 * nothing of rank 1, probe who is left and must notice the victim
 * (EHOSTUNREACH) within 5 s of rank 1's departure, not at the
 * operation timeout.
 */
TEST(waiting_rank_notices_when_a_peer_leaves)
{
	size_t n = COUNT / 4;
	struct kcoll_submit s = {
		.op = KCOLL_OP_SCATTER, .dtype = KCOLL_FP32, .count = n,
	};
	struct kcoll_completion cpl;
	double t_left, t_err;
	unsigned int victim;
	struct cluster c;
	float *sb, *rb;
	int fd, st;

	if (!setup_ok(&c, 40))
		SKIP(return, "needs 3 or more VMs of one rank (kcoll-vm -n 3)");
	victim = c.nranks - 1;
	sb = map_buf(n * c.nranks * sizeof(float));
	rb = map_buf(COUNT * sizeof(float));
	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, rb);
	fd = kc_open(_metadata);
	ASSERT_EQ(0, create_algo(fd, &c, "level1:fullmesh")) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, warm_up(fd, rb));
	if (c.rank == victim) {
		sleep_ms(500);
		stamp(c.rank, "wait-cut");
		ASSERT_EQ(0, link_request(false));
		rejoin_after(&c, "wait-done", 30000);
		close(fd);
		stamp(c.rank, "wait-up");
		return;
	}
	s.root = victim;
	s.send.addr = (uintptr_t)sb;
	s.recv.addr = (uintptr_t)rb;
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("submit: %s", strerror(errno));
	t_left = stamp_wait(victim, "wait-cut", 60000);
	ASSERT_LT(0, t_left);
	/* Cut for sure: the runner polls for requests. */
	ASSERT_LT(0, link_done_wait(victim, false, t_left, 10000));
	if (c.rank == 1) {
		close(fd);
		stamp(c.rank, "wait-left");
	} else {
		st = wait_one(fd, &cpl);
		t_err = stamp(c.rank, "wait-err");
		t_left = stamp_wait(1, "wait-left", 10000);
		ASSERT_LT(0, t_left);
		LOG("death: rank %u: waiting for rank %u alone, ended with %d (%s) %.3f s after rank 1 left\n",
		    c.rank, victim, st, strerror(st < 0 ? -st : 0), t_err - t_left);
		/*
		 * Its own probe's retries ran out, or another waiting rank's
		 * did first and it told this one whom to blame: either way
		 * the fault names the cut node.
		 */
		EXPECT_TRUE(st == -EHOSTUNREACH || st == -ECONNRESET) TH_LOG("%d", st);
		{
			struct kcoll_fault f = { .size = sizeof(f) };

			EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_FAULT, &f));
			EXPECT_EQ(victim, f.rank) TH_LOG("fault kind %u names rank %u", f.kind,
							 f.rank);
		}
		EXPECT_GT(DETECT_MAX_S, t_err - t_left);
		close(fd);
	}
	stamp(c.rank, "wait-done");
	stamp_wait(victim, "wait-up", 60000);
}

TEST(abort_with_a_cut_off_peer)
{
	abort_when_gone(_metadata, CUT, 30, "gone-cut");
}

KC_HARNESS_MAIN
