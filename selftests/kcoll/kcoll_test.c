// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: the ioctl ABI and collectives across the ranks of
 * the virtual cluster: AllReduce sizes and registration, every element type
 * and reduction, 64 MiB, 64 operations in flight, two communicators of
 * two processes at once, the largest chunk from a buffer that starts
 * mid-page.  Every operation x every algorithm is in kcoll_matrix.c, bad
 * input in kcoll_badinput.c, ranks that disagree about an operation in
 * kcoll_mismatch.c, limits and ownership in kcoll_limits.c, process death
 * and unloading in kcoll_lifetime.c, random operations in kcoll_soak.c,
 * injected faults in kcoll_fault.c.
 *
 * Run one copy per rank (tools/vm/kcoll-vm sets KCOLL_RANK, KCOLL_NRANKS,
 * KCOLL_NODE_IPS, KCOLL_PORT, KCOLL_LOCAL_RANK, KCOLL_RANKS_PER_NODE).
 * Without those variables the multi-rank tests run as a single rank.
 * Every rank runs the same tests in the same order; each test opens its
 * own file, so each builds and tears down its own communicator.
 *
 * Skips (exit 4) when /dev/kcoll is missing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_dtype.h"

/* ------------------------------------------------------------ ABI */

TEST(info_reports_abi_and_features)
{
	struct kcoll_info info = { .size = sizeof(info) };
	int fd = kc_open(_metadata);

	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
	EXPECT_EQ(KCOLL_ABI_VERSION, info.abi_version);
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_TRUE(info.features & KCOLL_FEAT_EVENTFD);
	EXPECT_EQ((1u << KCOLL_OP_COUNT) - 1, info.ops);
	EXPECT_TRUE(info.algos & (1u << KCOLL_ALGO_RING));
	EXPECT_LE(1, info.max_ranks);
	EXPECT_LE(4096, info.chunk_bytes);
	TH_LOG("chunk %u slots %u timeout %u ms algos %#x", info.chunk_bytes,
	       info.slots, info.timeout_ms, info.algos);
	close(fd);
}

TEST(info_older_smaller_struct_accepted)
{
	struct kcoll_info info;
	int fd = kc_open(_metadata);

	memset(&info, 0xa5, sizeof(info));
	info.size = 16;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &info));
	EXPECT_EQ(KCOLL_ABI_VERSION, info.abi_version);
	/* Nothing beyond the caller's 16 bytes was written. */
	EXPECT_EQ(0xa5a5a5a5u, info.ops);
	close(fd);
}

TEST(info_larger_struct_with_garbage_is_e2big)
{
	struct { struct kcoll_info i; __u64 extra; } big;
	int fd = kc_open(_metadata);

	memset(&big, 0, sizeof(big));
	big.i.size = sizeof(big);
	big.extra = 1;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_INFO, &big));
	EXPECT_EQ(E2BIG, errno);
	big.extra = 0;
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_INFO, &big));
	close(fd);
}

TEST(unknown_ioctl_is_enotty)
{
	int fd = kc_open(_metadata);
	__u64 x = 0;

	EXPECT_EQ(-1, ioctl(fd, _IOWR(KCOLL_IOC_MAGIC, 0x3f, __u64), &x));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOWR('x', 0x00, struct kcoll_info), &x));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(bad_pointer_is_efault)
{
	int fd = kc_open(_metadata);

	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

/* ------------------------------------------------------- collectives */

FIXTURE(cl) {
	int fd;
	int efd;
	struct cluster c;
};

FIXTURE_SETUP(cl)
{
	self->fd = kc_open(_metadata);
	ASSERT_EQ(0, cluster_get(&self->c));
	self->efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, self->efd);
	ASSERT_EQ(0, comm_create(self->fd, &self->c, self->efd, NULL)) {
		TH_LOG("create rank %u/%u: %s", self->c.rank, self->c.nranks, strerror(errno));
	}
}

FIXTURE_TEARDOWN(cl)
{
	close(self->fd);
	close(self->efd);
}

/* AllReduce fp32 sum of small integers (exact), @count elements. */
static void allreduce_check(struct __test_metadata *_metadata, FIXTURE_DATA(cl) *self,
			    size_t count, bool inplace, bool registered)
{
	unsigned int p = self->c.nranks, me = self->c.rank, r;
	size_t bytes = count * sizeof(float), i;
	float *sb = map_buf(bytes), *rb = inplace ? sb : map_buf(bytes);
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	__u64 bad = 0, n;

	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, rb);
	for (i = 0; i < count; i++) {
		sb[i] = (float)((i % 101) + me);
		if (!inplace)
			rb[i] = -1.0f;
	}
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = count;
	s.cookie = 0xc0ffee + count;
	if (registered && bytes) {
		s.send.handle = reg_buf(self->fd, sb, bytes);
		ASSERT_NE(0, s.send.handle);
		s.recv.handle = inplace ? s.send.handle : reg_buf(self->fd, rb, bytes);
		ASSERT_NE(0, s.recv.handle);
	} else {
		s.send.addr = (uintptr_t)sb;
		s.recv.addr = (uintptr_t)rb;
	}
	ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("submit: %s", strerror(errno));
	ASSERT_EQ(sizeof(n), read(self->efd, &n, sizeof(n)));
	EXPECT_EQ(1, n);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ(s.cookie, cpl.cookie);
	EXPECT_EQ(s.op_id, cpl.op_id);
	for (i = 0; i < count; i++) {
		float want = 0;

		for (r = 0; r < p; r++)
			want += (float)((i % 101) + r);
		if (rb[i] != want && bad++ < 4)
			TH_LOG("element %zu: %g, expected %g", i, rb[i], want);
	}
	EXPECT_EQ(0, bad);
	TH_LOG("allreduce %zu B %s %s: %.3f ms", bytes, inplace ? "in place" : "out of place",
	       registered ? "registered" : "user pointer",
	       (cpl.complete_ns - cpl.submit_ns) / 1e6);
	munmap(sb, bytes ? bytes : 1);
	if (!inplace)
		munmap(rb, bytes ? bytes : 1);
}

TEST_F_TIMEOUT(cl, allreduce_fp32_sum_sizes_exact, 600)
{
	static const size_t counts[] = { 0, 1, 1001, 1 << 18 };
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		allreduce_check(_metadata, self, counts[i], false, false);
		allreduce_check(_metadata, self, counts[i], true, true);
	}
	allreduce_check(_metadata, self, 3 << 16, false, true);
}

TEST_F_TIMEOUT(cl, broadcast_allgather_barrier, 300)
{
	unsigned int p = self->c.nranks, me = self->c.rank, r;
	size_t count = 10007, i;
	int *a = map_buf(count * 4), *g = map_buf(count * 4 * p);
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	__u64 bad = 0;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, g);
	for (i = 0; i < count; i++)
		a[i] = me == p - 1 ? (int)(i * 7) : -1;
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_BROADCAST;
	s.dtype = KCOLL_INT32;
	s.root = p - 1;
	s.count = count;
	s.send.addr = (uintptr_t)a;
	s.recv.addr = (uintptr_t)a;
	ASSERT_EQ(0, submit(self->fd, &s));

	for (i = 0; i < count; i++)
		g[me * count + i] = (int)(me * 1000000 + i);
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLGATHER;
	s.dtype = KCOLL_INT32;
	s.count = count;
	s.send.addr = (uintptr_t)(g + me * count);	/* in place */
	s.recv.addr = (uintptr_t)g;
	ASSERT_EQ(0, submit(self->fd, &s));

	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_BARRIER;
	ASSERT_EQ(0, submit(self->fd, &s));

	/* Completions come in submission order. */
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ(1, cpl.op_id);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ(2, cpl.op_id);
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ(3, cpl.op_id);
	for (i = 0; i < count; i++)
		if (a[i] != (int)(i * 7) && bad++ < 4)
			TH_LOG("broadcast element %zu: %d", i, a[i]);
	for (r = 0; r < p; r++)
		for (i = 0; i < count; i++)
			if (g[r * count + i] != (int)(r * 1000000 + i) && bad++ < 8)
				TH_LOG("allgather block %u element %zu: %d", r, i,
				       g[r * count + i]);
	EXPECT_EQ(0, bad);
}

TEST_F(cl, abort_refuses_later_operations)
{
	struct kcoll_abort a = { .size = sizeof(a) };
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	int st;

	/*
	 * Everyone is connected before anyone aborts.  The barrier completes
	 * locally: a rank that leaves it first may abort while another still
	 * waits for its last message, which then ends with ECONNRESET.
	 */
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_BARRIER;
	ASSERT_EQ(0, submit(self->fd, &s));
	st = wait_one(self->fd, &cpl);
	if (st != -ECONNRESET)
		ASSERT_EQ(0, st);

	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_ABORT, &a));
	EXPECT_EQ(-1, submit(self->fd, &s));
	/* A peer's abort may have reached us first. */
	if (errno != ECONNRESET)
		EXPECT_EQ(ECANCELED, errno);
}

TEST_F_TIMEOUT(cl, allreduce_every_dtype_and_redop_exact, 600)
{
	enum { N = 1003, NDT = KCOLL_DTYPE_COUNT, NRO = KCOLL_REDOP_COUNT };
	unsigned int p = self->c.nranks, me = self->c.rank, dt, ro;
	static void *sb[NDT][NRO], *rb[NDT][NRO];
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	size_t i;

	ASSERT_GE(8, p) TH_LOG("the values are exact for up to 8 ranks");
	/* All 60 queued at once: they run and complete in order. */
	for (dt = 0; dt < NDT; dt++) {
		for (ro = 0; ro < NRO; ro++) {
			sb[dt][ro] = map_buf(N * 8);
			rb[dt][ro] = map_buf(N * 8);
			ASSERT_NE(NULL, sb[dt][ro]);
			ASSERT_NE(NULL, rb[dt][ro]);
			for (i = 0; i < N; i++) {
				kc_put(sb[dt][ro], i, dt, kc_val(ro, me, p, i));
				kc_put(rb[dt][ro], i, dt, 99);
			}
			memset(&s, 0, sizeof(s));
			s.op = KCOLL_OP_ALLREDUCE;
			s.dtype = dt;
			s.redop = ro;
			s.count = N;
			s.cookie = dt * NRO + ro;
			s.send.addr = (uintptr_t)sb[dt][ro];
			/* Every other one in place. */
			s.recv.addr = (uintptr_t)((dt + ro) % 2 ? sb[dt][ro] : rb[dt][ro]);
			ASSERT_EQ(0, submit(self->fd, &s))
				TH_LOG("%s %s: %s", kc_dt_name[dt], kc_redop_name[ro],
				       strerror(errno));
		}
	}
	for (dt = 0; dt < NDT; dt++) {
		for (ro = 0; ro < NRO; ro++) {
			void *res = (dt + ro) % 2 ? sb[dt][ro] : rb[dt][ro];
			__u64 bad = 0;

			ASSERT_EQ(0, wait_one(self->fd, &cpl));
			EXPECT_EQ(dt * NRO + ro, cpl.cookie);
			for (i = 0; i < N; i++) {
				double got = kc_get(res, i, dt), want = kc_want(ro, p, i);

				if (got != want && bad++ < 3)
					TH_LOG("%s %s element %zu: %g, expected %g",
					       kc_dt_name[dt], kc_redop_name[ro], i, got, want);
			}
			EXPECT_EQ(0, bad) TH_LOG("%s %s", kc_dt_name[dt], kc_redop_name[ro]);
			munmap(sb[dt][ro], N * 8);
			munmap(rb[dt][ro], N * 8);
		}
	}
}

TEST_F_TIMEOUT(cl, sixty_four_in_flight_complete_in_order, 600)
{
	enum { OPS = 64, N = 4099 };
	unsigned int p = self->c.nranks, me = self->c.rank, r, k;
	static int32_t *buf[OPS];
	struct kcoll_completion cpl[OPS];
	struct kcoll_reap rp;
	struct kcoll_submit s;
	__u64 first = 0, bad = 0;
	unsigned int got = 0;
	size_t i;

	for (k = 0; k < OPS; k++) {
		buf[k] = map_buf(N * 4);
		ASSERT_NE(NULL, buf[k]);
		for (i = 0; i < N; i++)
			buf[k][i] = (int32_t)(k * 100000 + me * 1000 + i % 1000);
		memset(&s, 0, sizeof(s));
		s.op = KCOLL_OP_ALLREDUCE;
		s.dtype = KCOLL_INT32;
		s.redop = KCOLL_SUM;
		s.count = N;
		s.cookie = 1000 + k;
		s.send.addr = (uintptr_t)buf[k];
		s.recv.addr = (uintptr_t)buf[k];
		ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("op %u: %s", k, strerror(errno));
		if (!k)
			first = s.op_id;
		EXPECT_EQ(first + k, s.op_id);
	}
	/* Reap in batches as they come: oldest first, in submission order. */
	while (got < OPS) {
		memset(&rp, 0, sizeof(rp));
		rp.size = sizeof(rp);
		rp.flags = KCOLL_REAP_WAIT;
		rp.entries = (uintptr_t)(cpl + got);
		rp.max = OPS - got;
		rp.entry_size = sizeof(cpl[0]);
		rp.timeout_ms = 120000;
		ASSERT_EQ(0, ioctl(self->fd, KCOLL_IOC_REAP, &rp)) TH_LOG("%s", strerror(errno));
		ASSERT_LE(1, rp.count);
		got += rp.count;
	}
	for (k = 0; k < OPS; k++) {
		EXPECT_EQ(0, cpl[k].status);
		EXPECT_EQ(first + k, cpl[k].op_id);
		EXPECT_EQ(1000 + k, cpl[k].cookie);
		EXPECT_LE(cpl[k].submit_ns, cpl[k].complete_ns);
		if (k)
			EXPECT_LE(cpl[k - 1].complete_ns, cpl[k].complete_ns);
		for (i = 0; i < N; i++) {
			int32_t want = 0;

			for (r = 0; r < p; r++)
				want += (int32_t)(k * 100000 + r * 1000 + i % 1000);
			if (buf[k][i] != want && bad++ < 3)
				TH_LOG("op %u element %zu: %d, expected %d", k, i, buf[k][i], want);
		}
		munmap(buf[k], N * 4);
	}
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(cl, sixty_four_mib_allreduce_and_broadcast_exact, 900)
{
	size_t count = (64u << 20) / 4, i;
	unsigned int p = self->c.nranks, me = self->c.rank, r;
	float *b = map_buf(count * 4);
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	__u64 bad = 0;

	ASSERT_NE(NULL, b);
	/* fp32 sum, in place: integers below 2^24 stay exact. */
	for (i = 0; i < count; i++)
		b[i] = (float)((i % 4093) + me);
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = count;
	s.send.addr = (uintptr_t)b;
	s.recv.addr = (uintptr_t)b;
	ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	TH_LOG("allreduce 64 MiB: %.1f ms", (cpl.complete_ns - cpl.submit_ns) / 1e6);
	for (i = 0; i < count; i++) {
		float want = 0;

		for (r = 0; r < p; r++)
			want += (float)((i % 4093) + r);
		if (b[i] != want && bad++ < 3)
			TH_LOG("allreduce element %zu: %g, expected %g", i, b[i], want);
	}
	EXPECT_EQ(0, bad);

	/* Broadcast of 64 MiB from the last rank. */
	for (i = 0; i < count; i++)
		b[i] = me == p - 1 ? (float)(i % 65521) : -1.0f;
	s.op = KCOLL_OP_BROADCAST;
	s.root = p - 1;
	ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	TH_LOG("broadcast 64 MiB: %.1f ms", (cpl.complete_ns - cpl.submit_ns) / 1e6);
	for (i = 0; i < count; i++)
		if (b[i] != (float)(i % 65521) && bad++ < 3)
			TH_LOG("broadcast element %zu: %g", i, b[i]);
	EXPECT_EQ(0, bad);
	munmap(b, count * 4);
}

TEST_F_TIMEOUT(cl, deregister_while_in_use_is_ebusy, 300)
{
	struct kcoll_mem_dereg dr = { .size = sizeof(dr) };
	size_t count = 1 << 18, i;
	float *b = map_buf(count * 4);
	struct kcoll_completion cpl;
	struct kcoll_submit s;

	ASSERT_NE(NULL, b);
	for (i = 0; i < count; i++)
		b[i] = 1.0f;
	dr.handle = reg_buf(self->fd, b, count * 4);
	ASSERT_NE(0, dr.handle);
	/*
	 * The other ranks join 300 ms late: rank 0's operation cannot have
	 * completed when it asks to deregister right after submitting.
	 */
	if (self->c.rank)
		sleep_ms(300);
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = count;
	s.send.handle = dr.handle;
	s.recv.handle = dr.handle;
	ASSERT_EQ(0, submit(self->fd, &s)) TH_LOG("%s", strerror(errno));
	if (!self->c.rank && self->c.nranks > 1) {
		EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_MEM_DEREG, &dr));
		EXPECT_EQ(EBUSY, errno);
	}
	ASSERT_EQ(0, wait_one(self->fd, &cpl));
	EXPECT_EQ((float)self->c.nranks, b[count - 1]);
	/* Complete: now it goes, once. */
	EXPECT_EQ(0, ioctl(self->fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(-1, ioctl(self->fd, KCOLL_IOC_MEM_DEREG, &dr));
	EXPECT_EQ(ENOENT, errno);
	munmap(b, count * 4);
}

/*
 * Run @iters AllReduces (int64 sum, distinct per communicator @tag) on
 * file @fd; returns the number of wrong elements or failed operations.
 */
static long run_tagged(int fd, unsigned int p, unsigned int me, int tag, int iters)
{
	size_t n = 20011, i;
	int64_t *b = map_buf(n * 8);
	struct kcoll_completion cpl;
	long bad = 0;
	int it;

	if (!b)
		return 1;
	for (it = 0; it < iters; it++) {
		struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT64,
					  .redop = KCOLL_SUM, .count = n };

		for (i = 0; i < n; i++)
			b[i] = (int64_t)tag * 1000000000 + it * 100000 + me * 10 + (i % 7);
		s.send.addr = (uintptr_t)b;
		s.recv.addr = (uintptr_t)b;
		if (submit(fd, &s) || wait_one(fd, &cpl)) {
			bad++;
			break;
		}
		for (i = 0; i < n; i++) {
			int64_t want = 0;
			unsigned int r;

			for (r = 0; r < p; r++)
				want += (int64_t)tag * 1000000000 + it * 100000 + r * 10 + (i % 7);
			bad += b[i] != want;
		}
	}
	munmap(b, n * 8);
	return bad;
}

TEST(two_communicators_from_two_processes_at_once)
{
	struct cluster c1, c2;
	int fd, status;
	long bad;
	pid_t pid;

	ASSERT_EQ(0, cluster_get(&c1));
	ASSERT_EQ(0, cluster_get_port(&c2, 50));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The second process: a communicator of its own, its own ports. */
		int cfd = open(KC_DEV, O_RDWR | O_CLOEXEC);

		if (cfd < 0 || comm_create(cfd, &c2, -1, NULL))
			_exit(100);
		bad = run_tagged(cfd, c2.nranks, c2.rank, 2, 16);
		close(cfd);
		_exit(bad ? 1 : 0);
	}
	fd = kc_open(_metadata);
	ASSERT_EQ(0, comm_create(fd, &c1, -1, NULL)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, run_tagged(fd, c1.nranks, c1.rank, 1, 16));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("second process: %d", WEXITSTATUS(status));
	close(fd);
}

/*
 * The largest chunk, 30 pages, sent from a buffer that starts mid-page:
 * the first message of the operation to each peer takes one SGE for the
 * executor's header and 31 for the pages of its data, the 32 rxe has.
 * The even pages are faulted in before the odd ones, so that no two
 * neighbours are physically adjacent (adjacent pages share an SGE).
 */
TEST(largest_chunk_from_mid_page_exact)
{
	unsigned int pg = getpagesize(), r;
	size_t count = (30 * (size_t)pg * 5 + 100) / 4, i, bytes = count * 4;
	struct kcoll_comm_create cc = { .size = sizeof(cc) };
	char *mem = map_buf(bytes + 2 * pg);
	float *b = (void *)(mem + 100);	/* 4-aligned, mid-page */
	struct kcoll_completion cpl;
	struct kcoll_submit s = { 0 };
	struct cluster c;
	__u64 bad = 0;
	int fd = kc_open(_metadata);

	ASSERT_NE(NULL, mem);
	for (r = 0; r < 2; r++)
		for (i = r * pg; i < bytes + 2 * pg; i += 2 * pg)
			mem[i] = 1;
	ASSERT_EQ(0, cluster_get_port(&c, 230));
	cc.rank = c.rank;
	cc.nranks = c.nranks;
	cc.ranks = (uintptr_t)c.ranks;
	cc.rank_size = sizeof(struct kcoll_rank);
	cc.eventfd = -1;
	cc.algo = (uintptr_t)"level0:ring;level1:ring;level2:ring";
	cc.timeout_ms = kc_op_timeout_ms();
	cc.connect_timeout_ms = 60000;
	cc.chunk_bytes = 30 * pg;
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < count; i++)
		b[i] = (float)((i % 13) + c.rank);
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = count;
	s.send.addr = (uintptr_t)b;
	s.recv.addr = (uintptr_t)b;
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_one(fd, &cpl));
	for (i = 0; i < count; i++) {
		float want = 0;

		for (r = 0; r < c.nranks; r++)
			want += (float)((i % 13) + r);
		bad += b[i] != want;
	}
	EXPECT_EQ(0, bad);
	close(fd);
	munmap(mem, bytes + 2 * pg);
}

KC_HARNESS_MAIN
