// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: ranks that disagree about an operation never get a
 * successful wrong result.
 *
 * The first message of an operation to each peer carries the caller's
 * arguments (algo/kc_exec.h), and the receiver compares them with its own
 * before it uses anything from that peer.  Each case here gives some
 * ranks other arguments than the rest:
 *
 *  - AllReduce SUM on the even ranks, MAX on the odd ones;
 *  - AllReduce of fp32 on the even ranks, int32 (same size) on the odd;
 *  - AllReduce of 2 elements, 1 on the last rank, and ReduceScatter of
 *    68 Ki elements per rank, 64 Ki on the last (with two ranks the
 *    smaller side must not succeed with the peer's blocks misplaced);
 *  - Broadcast from root 0 on the lower half, root 1 on the upper half;
 *    and from root 1 on the last rank only (NB).
 *
 * Every rank checks what it got against what its own arguments ask for
 * (every rank's input is a function of its rank); then the ranks trade
 * their verdicts over a second, healthy communicator, and every rank
 * asserts about all of them: no rank succeeded with wrong data, every
 * failure is EPROTO, seen by the rank itself or told by the rank that saw
 * it (KCOLL_CTL_VERDICT), never a bare disconnect (only a rank still
 * connecting when the others are gone may see ECONNRESET, at creation),
 * KCOLL_IOC_FAULT names a rank that called the operation differently from
 * this one, at least one rank found the difference itself, and for the
 * reductions to all (whose result needs every rank) no rank succeeded.  A failed
 * operation ends its communicator, so each case has its own, on ports of
 * its own (cluster_get_port()).
 *
 * Runs with 2 to 4 ranks (-n 2 and -n 4 alike); skips on one.  Skips
 * (exit 4) without /dev/kcoll.
 */
#include <errno.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

/* The verdict communicator at PORT_OFF, case k at PORT_OFF + 4 * (k + 1). */
#define PORT_OFF 200
/* A case's operation timeout: a rank that waits this long has failed the test. */
#define CASE_TIMEOUT_MS 30000

/* What one rank reports about its operation. */
struct verdict {
	__s32 status;	/* completion status, or -errno of a refused submit */
	__u32 wrong;	/* wrong elements, when it succeeded */
	__u32 created;	/* the case's communicator was created */
	__u32 kind;	/* KCOLL_IOC_FAULT: enum kcoll_fault_kind */
	__u32 named;	/* ... the rank at fault */
	__u32 reporter;	/* ... the rank that found it */
	__s32 peers_err;	/* KCOLL_IOC_PEERS failed: -errno */
	__u64 gone;	/* ... bit r: it counts rank r as gone */
};

/*
 * The ranks this one counts as gone (KCOLL_IOC_PEERS), which a shrink
 * would leave out: a disagreement leaves every rank that took part
 * alive.  (One whose creation failed, because the others had already
 * failed, left without a word and is rightly gone.)
 */
static void ranks_gone(int fd, unsigned int nranks, struct verdict *v)
{
	__u8 fates[64];
	struct kcoll_peers p = { .size = sizeof(p), .nranks = nranks,
				 .fates = (uintptr_t)fates };
	unsigned int r;

	if (ioctl(fd, KCOLL_IOC_PEERS, &p)) {
		v->peers_err = -errno;
		return;
	}
	for (r = 0; r < nranks; r++)
		if (fates[r] != KCOLL_FATE_ALIVE && fates[r] != KCOLL_FATE_FAILED)
			v->gone |= 1ull << r;
}

FIXTURE(mm) {
	int vfd;		/* the verdict communicator */
	struct cluster c;
};

FIXTURE_SETUP(mm)
{
	self->vfd = kc_open(_metadata);
	ASSERT_EQ(0, cluster_get_port(&self->c, PORT_OFF));
	if (self->c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	ASSERT_EQ(0, comm_create(self->vfd, &self->c, -1, NULL))
		TH_LOG("verdict communicator: %s", strerror(errno));
}

FIXTURE_TEARDOWN(mm)
{
	if (self->vfd >= 0)
		close(self->vfd);
}

/* Every rank's verdict, in rank order, over the verdict communicator. */
static void trade_verdicts(struct __test_metadata *_metadata, FIXTURE_DATA(mm) *self,
			   const struct verdict *mine, struct verdict *all)
{
	struct kcoll_completion cpl;
	struct kcoll_submit s = {
		.op = KCOLL_OP_ALLGATHER, .dtype = KCOLL_INT32,
		.count = sizeof(*mine) / 4,
		.send.addr = (uintptr_t)mine, .recv.addr = (uintptr_t)all,
	};

	ASSERT_EQ(0, submit(self->vfd, &s)) TH_LOG("verdicts: %s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->vfd, &cpl));
}

/*
 * Create the case's communicator (algo: NULL for the default), submit
 * @s, wait, ask why it failed.  Fills @v but for wrong.
 */
static void run_case(struct __test_metadata *_metadata, unsigned int k, const char *algo,
		     struct kcoll_submit *s, struct verdict *v)
{
	struct kcoll_fault f = { .size = sizeof(f) };
	struct kcoll_comm_create cc = { .size = sizeof(cc) };
	struct kcoll_completion cpl;
	struct cluster c;
	int fd = open(KC_DEV, O_RDWR | O_CLOEXEC), st;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF + 4 * (k + 1)));
	cc.rank = c.rank;
	cc.nranks = c.nranks;
	cc.ranks = (uintptr_t)c.ranks;
	cc.rank_size = sizeof(struct kcoll_rank);
	cc.eventfd = -1;
	cc.algo = (uintptr_t)algo;
	cc.timeout_ms = CASE_TIMEOUT_MS;
	cc.connect_timeout_ms = 60000;
	/*
	 * A rank still connecting to its last peers when the others have
	 * already failed and closed sees their disconnect: it never ran.
	 */
	if (ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc)) {
		st = -errno;
		ASSERT_EQ(-ECONNRESET, st) TH_LOG("case %u: create: %s", k, strerror(-st));
		TH_LOG("rank %u: create: %s", c.rank, strerror(-st));
	} else if (submit(fd, s)) {
		st = -errno;
		TH_LOG("rank %u: submit refused: %s", c.rank, strerror(-st));
	} else {
		st = wait_one(fd, &cpl);
		ASSERT_LT(-1000, st) TH_LOG("reap: %d", st);
		TH_LOG("rank %u: %s after %.1f ms", c.rank, st ? strerror(-st) : "success",
		       (cpl.complete_ns - cpl.submit_ns) / 1e6);
	}
	v->created = st != -ECONNRESET || !ioctl(fd, KCOLL_IOC_FAULT, &f);
	if (v->created && st) {
		ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_FAULT, &f)) TH_LOG("fault: %s", strerror(errno));
		EXPECT_EQ(st, f.status);
		v->kind = f.kind;
		v->named = f.rank;
		v->reporter = f.reporter;
		ranks_gone(fd, c.nranks, v);
		TH_LOG("rank %u: fault kind %u: rank %u, found by rank %u", c.rank, f.kind, f.rank,
		       f.reporter);
	}
	v->status = st;
	close(fd);
}

/*
 * The verdicts of all ranks: nobody succeeded with wrong data, every
 * failure of a created communicator is EPROTO naming a rank of the other
 * group (@grp[r]: the ranks of one group called alike), someone found it
 * itself; with @all_fail (the result needs every rank) nobody succeeded.
 */
static void judge(struct __test_metadata *_metadata, const struct verdict *v, unsigned int p,
		  const unsigned int *grp, bool all_fail)
{
	unsigned int r, found = 0, ok = 0;
	__u64 took_part = 0;

	for (r = 0; r < p; r++) {
		TH_LOG("rank %u: %s, %u wrong, fault %u naming rank %u (found by %u)", r,
		       v[r].status ? strerror(-v[r].status) : "success", v[r].wrong, v[r].kind,
		       v[r].named, v[r].reporter);
		if (!v[r].status) {
			ok++;
			EXPECT_EQ(0, v[r].wrong) TH_LOG("rank %u succeeded with wrong data", r);
			continue;
		}
		if (!v[r].created) {
			EXPECT_EQ(-ECONNRESET, v[r].status);
			continue;
		}
		EXPECT_EQ(-EPROTO, v[r].status) TH_LOG("rank %u: status %d", r, v[r].status);
		EXPECT_EQ(KCOLL_FAULT_MISMATCH, v[r].kind) TH_LOG("rank %u", r);
		ASSERT_GT(p, v[r].named) TH_LOG("rank %u", r);
		EXPECT_NE(grp[r], grp[v[r].named])
			TH_LOG("rank %u names rank %u, which called as it did", r, v[r].named);
		found += v[r].reporter == r;
	}
	EXPECT_LT(0, found) TH_LOG("no rank found the disagreement itself");
	if (!all_fail)
		return;
	EXPECT_EQ(0, ok) TH_LOG("%u ranks completed an AllReduce that needs every rank", ok);
	/* Every rank that took part failed on purpose and said so: a shrink keeps them. */
	for (r = 0; r < p; r++)
		took_part |= v[r].created ? 1ull << r : 0;
	for (r = 0; r < p; r++) {
		if (!v[r].created)
			continue;
		EXPECT_EQ(0, v[r].peers_err) TH_LOG("rank %u: KCOLL_IOC_PEERS: %d", r, v[r].peers_err);
		EXPECT_EQ(0, v[r].gone & took_part)
			TH_LOG("rank %u counts ranks %#llx as gone after a disagreement", r,
			       (unsigned long long)(v[r].gone & took_part));
	}
}

/* Small integers, exact in int32 and fp32: rank r's element i. */
static int input(unsigned int r, size_t i)
{
	return (int)((i * 7 + r * 3) % 23) - 11;
}

/*
 * An AllReduce or ReduceScatter of @count elements (per rank), where the
 * odd ranks use @odd_redop and @odd_dtype and the last rank @last_count
 * elements.
 */
static void reduce_case(struct __test_metadata *_metadata, FIXTURE_DATA(mm) *self,
			unsigned int k, __u32 op, const char *algo, __u32 odd_redop,
			__u32 odd_dtype, size_t count, size_t last_count)
{
	unsigned int p = self->c.nranks, me = self->c.rank, r;
	__u32 redop = me % 2 ? odd_redop : KCOLL_SUM, dtype = me % 2 ? odd_dtype : KCOLL_FP32;
	size_t n = me == p - 1 ? last_count : count, i;
	size_t ns = op == KCOLL_OP_REDUCESCATTER ? n * p : n;
	size_t base = op == KCOLL_OP_REDUCESCATTER ? n * me : 0;
	struct verdict mine = { 0 }, all[64];
	unsigned int grp[64];
	struct kcoll_submit s = { 0 };
	void *sb = map_buf(ns * 4), *rb = map_buf(n * 4);

	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, rb);
	for (i = 0; i < ns; i++) {
		if (dtype == KCOLL_INT32)
			((int32_t *)sb)[i] = input(me, i);
		else
			((float *)sb)[i] = (float)input(me, i);
	}
	memset(rb, 0x5a, n * 4);
	s.op = op;
	s.dtype = dtype;
	s.redop = redop;
	s.count = n;
	s.send.addr = (uintptr_t)sb;
	s.recv.addr = (uintptr_t)rb;
	run_case(_metadata, k, algo, &s, &mine);
	for (r = 0; r < p; r++)
		grp[r] = last_count != count ? r == p - 1 : r % 2;
	/* What this rank's own arguments ask for, every rank's input being a function of it. */
	for (i = 0; !mine.status && i < n; i++) {
		long want = input(0, base + i), got;

		for (r = 1; r < p; r++) {
			long x = input(r, base + i);

			want = redop == KCOLL_MAX ? (x > want ? x : want) : want + x;
		}
		got = dtype == KCOLL_INT32 ? ((int32_t *)rb)[i] : (long)((float *)rb)[i];
		if (got != want || (dtype == KCOLL_FP32 && ((float *)rb)[i] != (float)want))
			mine.wrong++;
	}
	trade_verdicts(_metadata, self, &mine, all);
	judge(_metadata, all, p, grp, true);
	munmap(sb, ns * 4);
	munmap(rb, n * 4);
}

TEST_F_TIMEOUT(mm, allreduce_sum_against_max, 180)
{
	reduce_case(_metadata, self, 0, KCOLL_OP_ALLREDUCE, NULL, KCOLL_MAX, KCOLL_FP32,
		    10007, 10007);
}

TEST_F_TIMEOUT(mm, allreduce_fp32_against_int32, 180)
{
	reduce_case(_metadata, self, 1, KCOLL_OP_ALLREDUCE, NULL, KCOLL_SUM, KCOLL_INT32,
		    10007, 10007);
}

/* The last rank reduces one element, the others two. */
TEST_F_TIMEOUT(mm, allreduce_count_against_larger_count, 180)
{
	reduce_case(_metadata, self, 2, KCOLL_OP_ALLREDUCE, NULL, KCOLL_SUM, KCOLL_FP32, 2, 1);
}

/*
 * The last rank's blocks are whole chunks (64 Ki elements of 4 bytes,
 * four 64 KiB chunks), the others' 4 Ki elements longer: the smaller side
 * receives only whole chunks of the length it expects.
 */
TEST_F_TIMEOUT(mm, reducescatter_count_against_larger_count, 180)
{
	reduce_case(_metadata, self, 4, KCOLL_OP_REDUCESCATTER, NULL, KCOLL_SUM, KCOLL_FP32,
		    (64 << 10) + (4 << 10), 64 << 10);
}

/* A Broadcast from root 0, or from root 1 on the ranks from @first on. */
static void broadcast_case(struct __test_metadata *_metadata, FIXTURE_DATA(mm) *self,
			   unsigned int k, const char *algo, unsigned int first)
{
	unsigned int p = self->c.nranks, me = self->c.rank;
	__u32 root = me < first ? 0 : 1;
	size_t n = 20011, i;
	struct verdict mine = { 0 }, all[64];
	unsigned int grp[64];
	struct kcoll_submit s = { 0 };
	int32_t *b = map_buf(n * 4);

	ASSERT_NE(NULL, b);
	/* Every rank's buffer holds its own pattern: the root's is sent. */
	for (i = 0; i < n; i++)
		b[i] = (int32_t)(me * 1000003u + i);
	s.op = KCOLL_OP_BROADCAST;
	s.dtype = KCOLL_INT32;
	s.root = root;
	s.count = n;
	s.send.addr = (uintptr_t)b;
	s.recv.addr = (uintptr_t)b;
	run_case(_metadata, k, algo, &s, &mine);
	for (i = 0; i < p; i++)
		grp[i] = i >= first;
	for (i = 0; !mine.status && i < n; i++)
		mine.wrong += b[i] != (int32_t)(root * 1000003u + i);
	trade_verdicts(_metadata, self, &mine, all);
	judge(_metadata, all, p, grp, false);
	munmap(b, n * 4);
}

/* Root 0 on the lower half of the ranks, root 1 on the upper half. */
TEST_F_TIMEOUT(mm, broadcast_root0_against_root1, 180)
{
	broadcast_case(_metadata, self, 3, NULL, self->c.nranks / 2);
}

/*
 * Root 1 on the last rank only, Bruck's broadcast (NB): the last rank
 * must not take its block from a rank that had it from root 0, as if root
 * 1 had sent it, with every rank succeeding.
 */
TEST_F_TIMEOUT(mm, broadcast_root1_on_the_last_rank, 180)
{
	broadcast_case(_metadata, self, 5, "level0:NB;level1:NB;level2:NB", self->c.nranks - 1);
}

KC_HARNESS_MAIN
