// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: every operation x every algorithm across the ranks of
 * the virtual cluster, exact results, at the sizes where plans change
 * shape: 0 elements, 1, p - 1, a count not divisible by p, 1 MiB and (when
 * asked) 64 MiB; out of place and in place (NCCL's convention, see
 * uapi/linux/kcoll.h); fp32 sum of integer values (exact in any order)
 * and int32 sum.  Inputs must not change outside the results (in place,
 * ReduceScatter keeps the caller's other blocks).
 *
 * Sizes in bytes follow nccl-tests: the size is that of the operation's
 * largest buffer, so AllGather, Gather, ReduceScatter, Scatter and
 * AlltoAll(v) move size / p per rank and block; the others move size.
 *
 * The same binary runs on every layout of tools/vm/kcoll-vm: 4 VMs of one
 * rank, 8 ranks as 2 per VM (level0 exists), asymmetric super-nodes.
 * The environment chooses what runs (the same on every rank):
 *   KCOLL_MATRIX_ALGOS  comma-separated variant names (default: all)
 *   KCOLL_MATRIX_SIZES  comma-separated among small,1m,64m
 *                       (default small,1m; 64m needs about 1 GiB per VM)
 * A test not selected is reported as skipped.  An algorithm that cannot
 * run an operation must refuse it with EOPNOTSUPP (on every rank alike).
 *
 * Skips (exit 4) when /dev/kcoll is missing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define MATRIX_OPS 10

static const __u32 matrix_ops[MATRIX_OPS] = {
	KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER, KCOLL_OP_ALLGATHER,
	KCOLL_OP_BROADCAST, KCOLL_OP_REDUCE, KCOLL_OP_SCATTER, KCOLL_OP_GATHER,
	KCOLL_OP_ALLTOALL, KCOLL_OP_ALLTOALLV, KCOLL_OP_BARRIER,
};

static const char *const op_name[KCOLL_OP_COUNT] = {
	[KCOLL_OP_ALLREDUCE] = "AllReduce", [KCOLL_OP_REDUCESCATTER] = "ReduceScatter",
	[KCOLL_OP_ALLGATHER] = "AllGather", [KCOLL_OP_BROADCAST] = "Broadcast",
	[KCOLL_OP_REDUCE] = "Reduce", [KCOLL_OP_SCATTER] = "Scatter",
	[KCOLL_OP_GATHER] = "Gather", [KCOLL_OP_ALLTOALL] = "AlltoAll",
	[KCOLL_OP_ALLTOALLV] = "AlltoAllv", [KCOLL_OP_BARRIER] = "Barrier",
};

/* Is @name in the comma-separated list in environment variable @var? */
static bool env_lists(const char *var, const char *name, const char *def)
{
	const char *l = getenv(var), *p;
	size_t n = strlen(name);

	if (!l || !*l)
		l = def;
	if (!l)
		return true;
	for (p = l; *p; p += strcspn(p, ","), p += *p == ',')
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return true;
	return false;
}

FIXTURE(matrix) {
	int fd;
	bool selected;
	struct cluster c;
};

FIXTURE_VARIANT(matrix) {
	const char *name;
	const char *algo;
};

/*
 * One rank per server: every algorithm runs at level1.  Two per server:
 * level0 is automatic and the named algorithm runs between servers;
 * HCCL's level1:AHC also covers level2 (super-nodes).
 */
FIXTURE_VARIANT_ADD(matrix, auto) { "auto", "level0:NA;level1:NA;level2:NA" };
FIXTURE_VARIANT_ADD(matrix, ring) { "ring", "level1:ring" };
FIXTURE_VARIANT_ADD(matrix, rhd) { "rhd", "level1:H-D_R" };
FIXTURE_VARIANT_ADD(matrix, nhr) { "nhr", "level1:NHR" };
FIXTURE_VARIANT_ADD(matrix, nb) { "nb", "level1:NB" };
FIXTURE_VARIANT_ADD(matrix, mesh) { "mesh", "level1:fullmesh" };
FIXTURE_VARIANT_ADD(matrix, pairwise) { "pairwise", "level1:pairwise" };
FIXTURE_VARIANT_ADD(matrix, tree) { "tree", "level1:tree" };
FIXTURE_VARIANT_ADD(matrix, pipeline) { "pipeline", "level1:pipeline" };
FIXTURE_VARIANT_ADD(matrix, ahc) { "ahc", "level1:AHC" };
FIXTURE_VARIANT_ADD(matrix, ahc_broke) { "ahc_broke", "level1:AHC_BROKE" };

/* The size class of a test, from its name. */
static const char *size_class(const char *test)
{
	return strstr(test, "64mib") ? "64m" : strstr(test, "1mib") ? "1m" : "small";
}

FIXTURE_SETUP(matrix)
{
	/*
	 * Decided before any communicator exists: creating one is collective,
	 * and a rank that tore it down at once would reset its peers.
	 */
	self->fd = -1;
	self->selected = env_lists("KCOLL_MATRIX_ALGOS", variant->name, NULL) &&
			 env_lists("KCOLL_MATRIX_SIZES", size_class(_metadata->name),
				   "small,1m");
	if (!self->selected)
		return;
	self->fd = kc_open(_metadata);
	ASSERT_EQ(0, cluster_get(&self->c));
	ASSERT_EQ(0, comm_create(self->fd, &self->c, -1, variant->algo)) {
		TH_LOG("create with \"%s\": %s", variant->algo, strerror(errno));
	}
}

FIXTURE_TEARDOWN(matrix)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* The value rank @r contributes at element @i: small, exact in fp32. */
static long val(unsigned int r, size_t i)
{
	return (long)r * 1000 + (long)(i % 997);
}

/* AlltoAllv: elements rank s sends to rank d (some 0, all different). */
static size_t a2av_count(unsigned int s, unsigned int d, size_t n)
{
	return n * ((s + 2 * d) % 3 + 1) / 2;
}

static long a2av_val(unsigned int s, unsigned int d, size_t i)
{
	return (long)s * 100000 + (long)d * 1000 + (long)(i % 997);
}

struct opcase {
	__u32 op, dtype;
	bool inplace;
	void *map;			/* what was mapped, and its length */
	size_t maplen;
	void *send, *recv;		/* as submitted */
	size_t sn, rn;			/* elements */
	unsigned char *snap;		/* the input as filled in (see check_input) */
	size_t snaplen;
	__u64 cnt[4][64];		/* AlltoAllv */
};

static void put(void *b, size_t i, __u32 dt, long v)
{
	if (dt == KCOLL_FP32)
		((float *)b)[i] = (float)v;
	else
		((int32_t *)b)[i] = (int32_t)v;
}

/* As a double: a wrong float (even NaN) compares unequal, never traps. */
static double get(const void *b, size_t i, __u32 dt)
{
	return dt == KCOLL_FP32 ? ((const float *)b)[i] : ((const int32_t *)b)[i];
}

/*
 * Lay out operation @op of @n elements for rank @me: out of place two
 * buffers, in place one, with send and receive where NCCL's convention
 * puts them.  Receive areas start as -7, which no result is.
 */
static int fill_case(struct opcase *oc, __u32 op, __u32 dt, bool inplace,
		     unsigned int p, unsigned int me, size_t n)
{
	size_t i, off, sbytes, rbytes, mine = (size_t)me * n;
	unsigned int r;
	char *base;

	memset(oc, 0, sizeof(*oc));
	oc->op = op;
	oc->dtype = dt;
	oc->inplace = inplace;
	switch (op) {
	case KCOLL_OP_ALLREDUCE: case KCOLL_OP_BROADCAST: case KCOLL_OP_REDUCE:
		oc->sn = n; oc->rn = n; break;
	case KCOLL_OP_REDUCESCATTER: case KCOLL_OP_SCATTER:
		oc->sn = n * p; oc->rn = n; break;
	case KCOLL_OP_ALLGATHER: case KCOLL_OP_GATHER:
		oc->sn = n; oc->rn = n * p; break;
	case KCOLL_OP_ALLTOALL:
		oc->sn = n * p; oc->rn = n * p; break;
	case KCOLL_OP_ALLTOALLV:
		for (r = 0, off = 0; r < p; off += a2av_count(me, r, n), r++) {
			oc->cnt[0][r] = a2av_count(me, r, n);
			oc->cnt[1][r] = off;
		}
		oc->sn = off;
		for (r = 0, off = 0; r < p; off += a2av_count(r, me, n), r++) {
			oc->cnt[2][r] = a2av_count(r, me, n);
			oc->cnt[3][r] = off;
		}
		oc->rn = off;
		break;
	}
	sbytes = oc->sn * 4;
	rbytes = oc->rn * 4;
	if (!inplace || op == KCOLL_OP_BARRIER) {
		oc->maplen = sbytes + rbytes;
		oc->map = map_buf(oc->maplen);
		if (!oc->map)
			return -1;
		oc->send = oc->map;
		oc->recv = (char *)oc->map + sbytes;
	} else {
		/* The whole region: the larger of the two, n * p where they differ. */
		oc->maplen = sbytes > rbytes ? sbytes : rbytes;
		oc->map = map_buf(oc->maplen);
		if (!oc->map)
			return -1;
		base = oc->map;
		oc->send = base;
		oc->recv = base;
		if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_SCATTER)
			oc->recv = base + mine * 4;
		if (op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_GATHER)
			oc->send = base + mine * 4;
	}
	for (i = 0; i < oc->rn; i++)
		put(oc->recv, i, dt, -7);
	for (i = 0; i < oc->sn; i++)
		put(oc->send, i, dt, val(me, i));
	if (op == KCOLL_OP_ALLTOALLV)
		for (r = 0; r < p; r++)
			for (i = 0; i < oc->cnt[0][r]; i++)
				put(oc->send, oc->cnt[1][r] + i, dt, a2av_val(me, r, i));
	/* out of place the send buffer (the start of the map), in place all of it */
	oc->snaplen = oc->inplace && op != KCOLL_OP_BARRIER ? oc->maplen : sbytes;
	oc->snap = malloc(oc->snaplen ? oc->snaplen : 1);
	if (!oc->snap)
		return -1;
	memcpy(oc->snap, oc->map, oc->snaplen);
	return 0;
}

/*
 * Elements of rank @me's input that changed outside its result: out of
 * place the send buffer is only read; in place only the receive area is
 * written (ReduceScatter and the root of Scatter keep the other blocks
 * of their buffer), and nothing at all where there is no result (Reduce
 * and Gather off the root).
 */
static __u64 check_input(struct __test_metadata *_metadata, const struct opcase *oc,
			 unsigned int p, unsigned int me, const char *what)
{
	size_t lo = 0, hi = 0, i;
	__u64 bad = 0;

	if (oc->inplace && oc->op != KCOLL_OP_BARRIER &&
	    !((oc->op == KCOLL_OP_REDUCE || oc->op == KCOLL_OP_GATHER) && me != p - 1)) {
		lo = (size_t)((char *)oc->recv - (char *)oc->map);
		hi = lo + oc->rn * 4;
	}
	for (i = 0; i + 4 <= oc->snaplen; i += 4) {
		if (i >= lo && i < hi)
			continue;
		if (memcmp((char *)oc->map + i, oc->snap + i, 4) && bad++ < 3)
			TH_LOG("%s %s: element %zu of the %s changed (%g, was %g)", what,
			       op_name[oc->op], i / 4, oc->inplace ? "buffer" : "send buffer",
			       get((char *)oc->map + i, 0, oc->dtype), get(oc->snap + i, 0, oc->dtype));
	}
	return bad;
}

/* Wrong elements in rank @me's result (the root checks rooted results). */
static __u64 check_case(struct __test_metadata *_metadata, const struct opcase *oc,
			unsigned int p, unsigned int me, size_t n, const char *what)
{
	unsigned int root = p - 1, r;
	__u64 bad = 0;
	size_t i;

	if ((oc->op == KCOLL_OP_REDUCE || oc->op == KCOLL_OP_GATHER) && me != root)
		return 0;
	for (i = 0; i < oc->rn; i++) {
		long want = 0;
		double got;

		switch (oc->op) {
		case KCOLL_OP_ALLREDUCE:
		case KCOLL_OP_REDUCE:
			for (r = 0; r < p; r++)
				want += val(r, i);
			break;
		case KCOLL_OP_REDUCESCATTER:
			for (r = 0; r < p; r++)
				want += val(r, me * n + i);
			break;
		case KCOLL_OP_BROADCAST:
			want = val(root, i);
			break;
		case KCOLL_OP_SCATTER:
			want = val(root, me * n + i);
			break;
		case KCOLL_OP_ALLGATHER:
		case KCOLL_OP_GATHER:
			want = val(i / n, i % n);
			break;
		case KCOLL_OP_ALLTOALL:
			want = val(i / n, me * n + i % n);
			break;
		case KCOLL_OP_ALLTOALLV:
			for (r = 0; r + 1 < p && i >= oc->cnt[3][r + 1]; r++)
				;
			want = a2av_val(r, me, i - oc->cnt[3][r]);
			break;
		}
		got = get(oc->recv, i, oc->dtype);
		if (got != (double)want && bad++ < 3)
			TH_LOG("%s %s: element %zu is %g, expected %ld", what,
			       op_name[oc->op], i, got, want);
	}
	return bad;
}

/* Elements per rank and block for a size in bytes (nccl-tests' convention). */
static size_t count_of(__u32 op, size_t bytes, unsigned int p)
{
	switch (op) {
	case KCOLL_OP_REDUCESCATTER: case KCOLL_OP_SCATTER: case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_GATHER: case KCOLL_OP_ALLTOALL: case KCOLL_OP_ALLTOALLV:
		return bytes / 4 / p;
	default:
		return bytes / 4;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Operations @from..@to - 1 of matrix_ops at @count elements each (or,
 * when @bytes, at that size), submitted back to back (they queue and run
 * in order), then reaped and checked.  Refusals must be EOPNOTSUPP.
 */
static void run_window(struct __test_metadata *_metadata, FIXTURE_DATA(matrix) *self,
		       const char *what, __u32 dt, bool inplace, size_t count, size_t bytes,
		       size_t from, size_t to)
{
	static struct opcase oc[MATRIX_OPS];
	unsigned int p = self->c.nranks, me = self->c.rank;
	bool ok[MATRIX_OPS] = { 0 };
	size_t j, n[MATRIX_OPS];

	for (j = from; j < to; j++) {
		struct kcoll_submit s;

		n[j] = bytes ? count_of(matrix_ops[j], bytes, p) : count;
		ASSERT_EQ(0, fill_case(&oc[j], matrix_ops[j], dt, inplace, p, me, n[j]))
			TH_LOG("%s: no memory for %s", what, op_name[matrix_ops[j]]);
		memset(&s, 0, sizeof(s));
		s.op = matrix_ops[j];
		s.dtype = dt;
		s.redop = KCOLL_SUM;
		s.root = p - 1;
		s.count = n[j];
		s.send.addr = (uintptr_t)oc[j].send;
		s.recv.addr = (uintptr_t)oc[j].recv;
		s.scounts = (uintptr_t)oc[j].cnt[0];
		s.sdispls = (uintptr_t)oc[j].cnt[1];
		s.rcounts = (uintptr_t)oc[j].cnt[2];
		s.rdispls = (uintptr_t)oc[j].cnt[3];
		s.cookie = j;
		if (submit(self->fd, &s)) {
			/* Refused the same way on every rank: not runnable. */
			EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("%s: %s refused: %s", what,
							   op_name[s.op], strerror(errno));
			continue;
		}
		ok[j] = true;
	}
	for (j = from; j < to; j++) {
		struct kcoll_completion cpl;

		if (!ok[j])
			continue;
		ASSERT_EQ(0, wait_one(self->fd, &cpl))
			TH_LOG("%s: %s", what, op_name[matrix_ops[j]]);
		EXPECT_EQ(j, cpl.cookie);
		if (bytes)
			TH_LOG("%s: %s %.1f ms", what, op_name[matrix_ops[j]],
			       (cpl.complete_ns - cpl.submit_ns) / 1e6);
	}
	for (j = from; j < to; j++) {
		if (ok[j]) {
			EXPECT_EQ(0, check_case(_metadata, &oc[j], p, me, n[j], what));
			EXPECT_EQ(0, check_input(_metadata, &oc[j], p, me, what));
		}
		munmap(oc[j].map, oc[j].maplen ? oc[j].maplen : 1);
		free(oc[j].snap);
	}
}

/*
 * Every operation, all queued at once up to 1 MiB; above, one at a time
 * (their buffers together would not fit a VM).
 */
static void run_ops(struct __test_metadata *_metadata, FIXTURE_DATA(matrix) *self,
		    const FIXTURE_VARIANT(matrix) *variant, __u32 dt, bool inplace,
		    size_t count, size_t bytes)
{
	size_t j, w = bytes > (1 << 20) ? 1 : MATRIX_OPS;
	double t0 = now_s();
	char what[96];

	snprintf(what, sizeof(what), "%s %s %s %zu %s", variant->name,
		 dt == KCOLL_FP32 ? "fp32" : "int32", inplace ? "in place" : "out of place",
		 bytes ? bytes : count, bytes ? "B" : "elements");
	for (j = 0; j < MATRIX_OPS; j += w)
		run_window(_metadata, self, what, dt, inplace, count, bytes, j, j + w);
	if (bytes)
		TH_LOG("%s: %.1f s", what, now_s() - t0);
}

/* Skip unless this variant and size class were asked for. */
#define MATRIX_SELECT()								\
	do {									\
		if (!self->selected)						\
			SKIP(return, "%s %s: not in KCOLL_MATRIX_ALGOS/SIZES",	\
			     variant->name, size_class(_metadata->name));	\
	} while (0)

TEST_F_TIMEOUT(matrix, every_op_int32_sum_small_exact, 600)
{
	unsigned int p = self->c.nranks;
	const size_t counts[] = { 0, 1, p - 1, 1003, 70001 };
	size_t k;

	MATRIX_SELECT();
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		run_ops(_metadata, self, variant, KCOLL_INT32, false, counts[k], 0);
		run_ops(_metadata, self, variant, KCOLL_INT32, true, counts[k], 0);
	}
}

TEST_F_TIMEOUT(matrix, every_op_fp32_sum_small_exact, 600)
{
	unsigned int p = self->c.nranks;
	/* 1003 and 4 * p + 3: not divisible by p for any p of the cluster. */
	const size_t counts[] = { 0, 1, p - 1, 1003, 4 * p + 3 };
	size_t k;

	MATRIX_SELECT();
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		run_ops(_metadata, self, variant, KCOLL_FP32, false, counts[k], 0);
		run_ops(_metadata, self, variant, KCOLL_FP32, true, counts[k], 0);
	}
}

TEST_F_TIMEOUT(matrix, every_op_fp32_sum_1mib_exact, 900)
{
	MATRIX_SELECT();
	run_ops(_metadata, self, variant, KCOLL_FP32, false, 0, 1 << 20);
	run_ops(_metadata, self, variant, KCOLL_FP32, true, 0, 1 << 20);
}

TEST_F_TIMEOUT(matrix, every_op_fp32_sum_64mib_exact, 3600)
{
	MATRIX_SELECT();
	run_ops(_metadata, self, variant, KCOLL_FP32, false, 0, 64u << 20);
	run_ops(_metadata, self, variant, KCOLL_FP32, true, 0, 64u << 20);
}

KC_HARNESS_MAIN
