// SPDX-License-Identifier: GPL-2.0
/*
 * The algorithm suite: every operation with every algorithm on the
 * threaded transport, checked bit for bit against the reference, plus
 * dtype/redop coverage, asymmetric topologies, faults, ranks that
 * disagree about the operation (mismatch_*) and bad input.
 *
 * Environment: KC_TEST_QUICK=1 runs a reduced sweep (rank counts
 * 1..9, 16, 33) and KC_TEST_ALGO=<name> one algorithm, for a fast
 * edit-compile-test loop; KC_TEST_ONLY=<text> runs only the tests whose
 * name contains text (this harness takes no -t / -r).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
/*
 * The harness's macros expand to functions without prototypes, unused
 * parameters and mixed-sign comparisons; keep -Werror for our own code.
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "tw_case.h"
#include "kc_reduce.h"

/* Case counters shared by the forked tests. */
struct tally {
	unsigned long long passed, failed;
};
static struct tally *tally;
static pid_t main_pid;

/* Every algorithm of the table, in enum order (filled before the tests run). */
static u32 all_algos[KCOLL_ALGO_COUNT];
static u32 nalgos;
#define NALGOS nalgos

__attribute__((constructor)) static void fill_all_algos(void)
{
	u32 a;

	for (a = 0; a < KCOLL_ALGO_COUNT; a++)
		if (kc_algo_get(a))
			all_algos[nalgos++] = a;
}

static bool quick(void)
{
	const char *q = getenv("KC_TEST_QUICK");

	return q && *q == '1';
}

/* KC_TEST_ALGO=name limits the sweeps to one algorithm (development aid). */
static bool algo_selected(u32 algo)
{
	const char *only = getenv("KC_TEST_ALGO");

	return !only || !*only || !strcmp(only, kc_algo_name(algo));
}

/* Under KC_TEST_ALGO, a mix of algorithms per level runs only if it names that one. */
static bool mix_selected(const u32 *algo)
{
	const char *only = getenv("KC_TEST_ALGO");
	u32 l;

	if (!only || !*only)
		return true;
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		if (algo[l] && !strcmp(only, kc_algo_name(algo[l])))
			return true;
	return false;
}

static u32 rank_counts(u32 *out)
{
	static const u32 extra[] = { 48, 64, 100, 128 };
	u32 n = 0, p;

	if (quick()) {
		for (p = 1; p <= 9; p++)
			out[n++] = p;
		out[n++] = 16;
		out[n++] = 33;
		return n;
	}
	for (p = 1; p <= 33; p++)
		out[n++] = p;
	for (p = 0; p < sizeof(extra) / sizeof(extra[0]); p++)
		out[n++] = extra[p];
	return n;
}

static void set_all_levels(struct kc_algo_cfg *cfg, u32 algo)
{
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		cfg->algo[l] = algo;
}

/*
 * Run one case; a supported case must pass, an unsupported one must be
 * refused with -EOPNOTSUPP.  Returns false on a failure (already logged).
 */
static bool check_case(struct __test_metadata *_metadata, struct tw_world *w,
		       const struct tc_case *c, bool supported)
{
	struct tc_outcome o;
	char d[256];

	tc_run(w, c, &o);
	if (supported ? o.result == TC_PASS :
	    (o.result == TC_BUILD_ERROR && o.build_err == -EOPNOTSUPP)) {
		__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_add_fetch(&tally->failed, 1, __ATOMIC_RELAXED);
	tc_describe(c, d, sizeof(d));
	TH_LOG("FAIL %s: %s%s", d, supported ? "" : "expected -EOPNOTSUPP: ",
	       o.result == TC_PASS ? "it ran" : o.why);
	return false;
}

/* A case that must run right or be refused with -EOPNOTSUPP; false on a failure. */
static bool check_case_or_refused(struct __test_metadata *_metadata, struct tw_world *w,
				  const struct tc_case *c)
{
	struct tc_outcome o;
	char d[256];

	tc_run(w, c, &o);
	if (o.result == TC_PASS || (o.result == TC_BUILD_ERROR && o.build_err == -EOPNOTSUPP)) {
		__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
		return true;
	}
	__atomic_add_fetch(&tally->failed, 1, __ATOMIC_RELAXED);
	tc_describe(c, d, sizeof(d));
	TH_LOG("FAIL %s: %s", d, o.why);
	return false;
}

/* Counts for the size classes: 0, 1, p - 1, not divisible by p, ~1 MiB. */
static u32 size_counts(u32 op, u32 p, u64 *counts, u32 *chunks)
{
	bool per_rank = op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER ||
			op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER ||
			op == KCOLL_OP_ALLTOALL || op == KCOLL_OP_ALLTOALLV;
	u64 mib = 1 << 20;

	counts[0] = 0;
	counts[1] = 1;
	counts[2] = p > 1 ? p - 1 : 2;
	counts[3] = 3 * (u64)p + 1;
	counts[4] = per_rank ? mib / 4 / p + 1 : mib / 4 + 3;
	if (op == KCOLL_OP_ALLTOALLV)
		counts[4] = mib / 4 / p / 3 + 1;	/* per-pair scale of the a2av layout */
	chunks[0] = chunks[1] = chunks[2] = chunks[3] = 64;
	chunks[4] = 65536;
	return op == KCOLL_OP_BARRIER ? 1 : 5;
}

static u32 roots_for(u32 p, bool large, u32 *roots)
{
	u32 n = 0, r;

	if (p <= 8 && !large) {
		for (r = 0; r < p; r++)
			roots[n++] = r;
		return n;
	}
	roots[n++] = 0;
	if (p > 1)
		roots[n++] = p - 1;
	if (p > 2 && !large)
		roots[n++] = p / 2;
	return n;
}

static int run_matrix(struct __test_metadata *_metadata, u32 op)
{
	u32 ps[64], np = rank_counts(ps), pi, ai, si, ri, ip;
	int fails = 0;

	for (pi = 0; pi < np; pi++) {
		u32 p = ps[pi];
		struct tw_world *w = tw_create(p);
		struct kc_topo topo;

		ASSERT_NE(NULL, w);
		ASSERT_EQ(0, kc_topo_init(&topo, p, NULL, NULL, NULL, 0));
		for (ai = 0; ai < NALGOS; ai++) {
			u64 counts[5];
			u32 chunks[5], nsz = size_counts(op, p, counts, chunks);
			/* one rank uses no level, so no algorithm: everything runs */
			bool sup = p == 1 || kc_algo_supports(kc_algo_get(all_algos[ai]), op);

			if (!algo_selected(all_algos[ai]))
				continue;
			for (si = 0; si < nsz; si++) {
				u32 roots[64], nr = kc_op_rooted(op) ? roots_for(p, si == 4, roots) : 1;

				if (!kc_op_rooted(op))
					roots[0] = 0;
				for (ri = 0; ri < nr; ri++) {
					for (ip = 0; ip < 2; ip++) {
						struct tc_case c = {
							.topo = &topo,
							.op = { .op = op, .dtype = KCOLL_FP32,
								.redop = KCOLL_SUM, .root = roots[ri],
								.count = counts[si],
								.flags = ip ? KC_OP_F_INPLACE : 0 },
							.chunk_bytes = chunks[si],
							.window = 4,
						};

						if (ip && (op == KCOLL_OP_ALLTOALLV ||
							   op == KCOLL_OP_BARRIER))
							continue;
						set_all_levels(&c.cfg, all_algos[ai]);
						c.cfg.pipe_bytes = chunks[si] * 4;
						if (!check_case(_metadata, w, &c, sup) && ++fails > 20)
							goto out;
						if (!sup)
							goto next_algo;
					}
				}
			}
next_algo:
			;
		}
out:
		kc_topo_free(&topo);
		tw_destroy(w);
		if (fails > 20)
			break;
	}
	return fails;
}

FIXTURE(algo) {
	int unused;
};

FIXTURE_SETUP(algo)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(algo)
{
}

#define MATRIX_TEST(name, op) \
	TEST_F_TIMEOUT(algo, name, 3600) \
	{ \
		ASSERT_EQ(0, run_matrix(_metadata, op)); \
	}

MATRIX_TEST(matrix_allreduce, KCOLL_OP_ALLREDUCE)
MATRIX_TEST(matrix_reducescatter, KCOLL_OP_REDUCESCATTER)
MATRIX_TEST(matrix_allgather, KCOLL_OP_ALLGATHER)
MATRIX_TEST(matrix_broadcast, KCOLL_OP_BROADCAST)
MATRIX_TEST(matrix_reduce, KCOLL_OP_REDUCE)
MATRIX_TEST(matrix_scatter, KCOLL_OP_SCATTER)
MATRIX_TEST(matrix_gather, KCOLL_OP_GATHER)
MATRIX_TEST(matrix_alltoall, KCOLL_OP_ALLTOALL)
MATRIX_TEST(matrix_alltoallv, KCOLL_OP_ALLTOALLV)
MATRIX_TEST(matrix_barrier, KCOLL_OP_BARRIER)

/* Every dtype x every reduce op, on the reducing ops, a representative subset. */
TEST_F_TIMEOUT(algo, every_dtype_and_redop_reduces_exactly, 1200)
{
	static const u32 ps[] = { 2, 3, 5, 8, 13 };
	static const u32 ops[] = { KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER, KCOLL_OP_REDUCE };
	u32 pi, ai, oi, dt, ro;
	int fails = 0;

	for (pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++) {
		struct tw_world *w = tw_create(ps[pi]);
		struct kc_topo topo;

		ASSERT_EQ(0, kc_topo_init(&topo, ps[pi], NULL, NULL, NULL, 0));
		for (ai = 0; ai < NALGOS; ai++)
			for (oi = 0; oi < sizeof(ops) / sizeof(ops[0]) && algo_selected(all_algos[ai]);
			     oi++)
				for (dt = 0; dt < KCOLL_DTYPE_COUNT; dt++)
					for (ro = 0; ro < KCOLL_REDOP_COUNT; ro++) {
						struct tc_case c = {
							.topo = &topo,
							.op = { .op = ops[oi], .dtype = dt, .redop = ro,
								.root = ps[pi] - 1,
								.count = 4 * ps[pi] + 3 },
							.chunk_bytes = 24, .window = 3,
						};
						bool sup = kc_algo_supports(kc_algo_get(all_algos[ai]),
									    ops[oi]);

						set_all_levels(&c.cfg, all_algos[ai]);
						c.cfg.pipe_bytes = 40;
						if (!check_case(_metadata, w, &c, sup))
							fails++;
					}
		kc_topo_free(&topo);
		tw_destroy(w);
	}
	ASSERT_EQ(0, fails);
}

/*
 * In place, ReduceScatter's receive buffer is the caller's block of its
 * send buffer, and the other blocks stay as they were (tc_run() compares
 * every byte outside the result; the matrix checks the same for every
 * algorithm and rank count with fp32 sum): every algorithm, every reduce
 * op (AVG divides after the result is in place) with the dtypes in turn,
 * flat and on two servers (the hierarchical compositions); then at 66
 * (and, not quick, 100) ranks.  Quick, each algorithm and rank count runs
 * one reduce op, in turn, so that every op still runs with every dtype.
 */
TEST_F_TIMEOUT(algo, reducescatter_in_place_keeps_the_other_blocks, 600)
{
	static const u32 ps[] = { 2, 3, 5, 8 };
	static const u32 dts[] = { KCOLL_FP32, KCOLL_INT32, KCOLL_BF16, KCOLL_INT8 };
	u32 pi, sh, ai, ro, nbig = quick() ? 1 : 2;
	int fails = 0;

	for (pi = 0; pi < ARRAY_SIZE(ps); pi++) {
		for (sh = 0; sh < 2; sh++) {
			struct tw_world *w = tw_create(sh ? 2 * ps[pi] : ps[pi]);
			struct kc_topo topo;

			ASSERT_EQ(0, sh ? kc_topo_init_regular(&topo, 1, 2, ps[pi]) :
				     kc_topo_init(&topo, ps[pi], NULL, NULL, NULL, 0));
			for (ai = 0; ai < NALGOS; ai++)
				for (ro = 0; ro < KCOLL_REDOP_COUNT; ro++) {
					/* every reduce op (quick: one, in turn), the dtypes in turn */
					u32 dt = dts[(ro + ai + pi) % ARRAY_SIZE(dts)];
					struct tc_case c = {
						.topo = &topo,
						.op = { .op = KCOLL_OP_REDUCESCATTER,
							.dtype = dt, .redop = ro,
							.count = 4 * ps[pi] + 3,
							.flags = KC_OP_F_INPLACE },
						.chunk_bytes = 24, .window = 3,
					};
					bool sup = kc_algo_supports(kc_algo_get(all_algos[ai]),
								    KCOLL_OP_REDUCESCATTER);

					if (quick() && ro != (ai + 2 * pi + sh) % KCOLL_REDOP_COUNT)
						continue;
					if (!algo_selected(all_algos[ai]))
						continue;
					set_all_levels(&c.cfg, all_algos[ai]);
					c.cfg.pipe_bytes = 40;
					/* on two servers: run right, or refuse */
					if (sh ? !check_case_or_refused(_metadata, w, &c) :
					    !check_case(_metadata, w, &c, sup))
						fails++;
				}
			kc_topo_free(&topo);
			tw_destroy(w);
		}
	}
	/* past 64 members the builder no longer steps through a repeat to see its extent */
	for (pi = 0; pi < nbig; pi++) {
		u32 p = pi ? 100 : 66;
		struct tw_world *w = tw_create(p);
		struct kc_topo topo;

		ASSERT_EQ(0, kc_topo_init(&topo, p, NULL, NULL, NULL, 0));
		for (ai = 0; ai < NALGOS; ai++) {
			struct tc_case c = {
				.topo = &topo,
				.op = { .op = KCOLL_OP_REDUCESCATTER, .dtype = KCOLL_INT32,
					.redop = KCOLL_SUM, .count = 3, .flags = KC_OP_F_INPLACE },
				.chunk_bytes = 64, .window = 2,
			};

			if (!algo_selected(all_algos[ai]))
				continue;
			set_all_levels(&c.cfg, all_algos[ai]);
			if (!check_case(_metadata, w, &c,
					kc_algo_supports(kc_algo_get(all_algos[ai]),
							 KCOLL_OP_REDUCESCATTER)))
				fails++;
		}
		kc_topo_free(&topo);
		tw_destroy(w);
	}
	ASSERT_EQ(0, fails);
}

/*
 * npods pods of servers[i] servers of per_server ranks each; per_server 0:
 * one pod of npods servers of servers[i] ranks each (servers of unequal
 * size, whose AHC groups are the servers).
 */
struct shape {
	const char *name;
	u32 npods;
	u32 servers[4];
	u32 per_server;
};

/* Hierarchical configurations and AHC on symmetric and asymmetric clusters. */
TEST_F_TIMEOUT(algo, asymmetric_topologies_compose_exactly, 3600)
{
	static const struct shape shapes[] = {
		{ "2+3 servers", 2, { 2, 3 }, 1 },
		{ "1+4 servers", 2, { 1, 4 }, 1 },
		{ "3+5+7 servers", 3, { 3, 5, 7 }, 1 },
		{ "8+16+8 servers", 3, { 8, 16, 8 }, 1 },
		{ "2+3 servers of 2", 2, { 2, 3 }, 2 },
		{ "4x2 servers of 4", 2, { 2, 2 }, 4 },
		{ "3 servers of 4", 1, { 3 }, 4 },
		{ "2+2+2 servers of 2", 3, { 2, 2, 2 }, 2 },
		{ "64+128 (one rank per server)", 2, { 64, 128 }, 1 },
		{ "servers of 2+3 ranks", 2, { 2, 3 }, 0 },
		{ "servers of 1+4 ranks", 2, { 1, 4 }, 0 },
		{ "servers of 3+5+7 ranks", 3, { 3, 5, 7 }, 0 },
		{ "servers of 8+16+8 ranks", 3, { 8, 16, 8 }, 0 },
	};
	static const u32 ops[] = { KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER, KCOLL_OP_ALLGATHER,
				   KCOLL_OP_BROADCAST, KCOLL_OP_REDUCE, KCOLL_OP_SCATTER,
				   KCOLL_OP_GATHER, KCOLL_OP_ALLTOALL, KCOLL_OP_BARRIER };
	/* level0/level1/level2 mixes of flat algorithms, then the special ones */
	static const u32 mixes[][3] = {
		{ KCOLL_ALGO_MESH, KCOLL_ALGO_RING, KCOLL_ALGO_RHD },
		{ KCOLL_ALGO_RING, KCOLL_ALGO_NHR, KCOLL_ALGO_NB },
		{ KCOLL_ALGO_MESH, KCOLL_ALGO_RHD, KCOLL_ALGO_TREE },
		{ KCOLL_ALGO_AUTO, KCOLL_ALGO_AUTO, KCOLL_ALGO_AUTO },
		{ KCOLL_ALGO_AUTO, KCOLL_ALGO_PIPELINE, KCOLL_ALGO_AUTO },
		{ KCOLL_ALGO_AUTO, KCOLL_ALGO_AHC, KCOLL_ALGO_AUTO },
		{ KCOLL_ALGO_AUTO, KCOLL_ALGO_AHC_BROKE, KCOLL_ALGO_AUTO },
	};
	u32 si, mi, oi, k, ip;
	int fails = 0;

	for (si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		const struct shape *sh = &shapes[si];
		struct kc_topo topo;
		struct tw_world *w;

		if (sh->per_server) {
			ASSERT_EQ(0, kc_topo_init_pods(&topo, sh->npods, sh->servers,
						       sh->per_server));
		} else {
			u32 n = 0, i;

			for (i = 0; i < sh->npods; i++)
				n += sh->servers[i];
			ASSERT_EQ(0, kc_topo_init_sizes(&topo, n, sh->npods, sh->servers,
							NULL, 0));
		}
		w = tw_create(topo.nranks);
		for (mi = 0; mi < sizeof(mixes) / sizeof(mixes[0]); mi++) {
			if (!mix_selected(mixes[mi]))
				continue;
			for (oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
				u64 counts[] = { 1, 3 * (u64)topo.nranks + 5, 20000 };

				for (k = 0; k < 3; k++)
					for (ip = 0; ip < 2; ip++) {
						struct tc_case c = {
							.topo = &topo,
							.op = { .op = ops[oi], .dtype = KCOLL_INT32,
								.redop = KCOLL_SUM,
								.root = (topo.nranks * 2) / 3,
								.count = topo.nranks > 64 && k == 2 ?
									 300 : counts[k],
								.flags = ip ? KC_OP_F_INPLACE : 0 },
							.chunk_bytes = k == 2 ? 4096 : 64,
							.window = 2,
						};
						const struct kc_algo_ops *sp =
							kc_algo_get(mixes[mi][1]);
						struct tc_outcome o;
						bool sup = true;

						c.cfg.algo[0] = mixes[mi][0];
						c.cfg.algo[1] = mixes[mi][1];
						c.cfg.algo[2] = mixes[mi][2];
						c.cfg.pipe_bytes = c.chunk_bytes * 2;
						/*
						 * The pipeline overlaps a ring of same-index
						 * ranks across servers: it must refuse servers
						 * of different sizes.
						 */
						if (!sh->per_server &&
						    mixes[mi][1] == KCOLL_ALGO_PIPELINE) {
							if (!check_case(_metadata, w, &c, false))
								fails++;
							continue;
						}
						if (sp && sp->build) {
							sup = kc_algo_supports(sp, ops[oi]);
						} else {
							u32 l;

							/* flat mixes: every named algorithm can */
							for (l = 0; l < 3; l++)
								if (mixes[mi][l] != KCOLL_ALGO_AUTO &&
								    !kc_algo_supports(kc_algo_get(mixes[mi][l]),
										      ops[oi]))
									sup = false;
						}
						if (sup) {
							if (!check_case(_metadata, w, &c, true))
								fails++;
							continue;
						}
						/*
						 * Otherwise the plan must be refused with
						 * -EOPNOTSUPP, or (when the level that cannot
						 * is not used on this shape) run right.
						 */
						tc_run(w, &c, &o);
						if (o.result == TC_FAIL ||
						    (o.result == TC_BUILD_ERROR &&
						     o.build_err != -EOPNOTSUPP)) {
							char d[256];

							tc_describe(&c, d, sizeof(d));
							TH_LOG("FAIL %s: %s: %s", sh->name, d, o.why);
							__atomic_add_fetch(&tally->failed, 1,
									   __ATOMIC_RELAXED);
							fails++;
						} else {
							__atomic_add_fetch(&tally->passed, 1,
									   __ATOMIC_RELAXED);
						}
					}
			}
		}
		kc_topo_free(&topo);
		tw_destroy(w);
	}
	ASSERT_EQ(0, fails);
}

/* A rank that dies mid-operation: every rank still waiting gets an error. */
TEST_F_TIMEOUT(algo, peer_death_fails_every_waiting_rank, 600)
{
	static const u32 algos[] = { KCOLL_ALGO_RING, KCOLL_ALGO_RHD, KCOLL_ALGO_NHR,
				     KCOLL_ALGO_MESH, KCOLL_ALGO_TREE, KCOLL_ALGO_AHC };
	u32 ai, p = 6, r;
	struct kc_topo topo;
	struct tw_world *w = tw_create(p);

	ASSERT_EQ(0, kc_topo_init(&topo, p, NULL, NULL, NULL, 0));
	for (ai = 0; ai < sizeof(algos) / sizeof(algos[0]); ai++) {
		struct tc_case c = {
			.topo = &topo,
			.op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				.redop = KCOLL_SUM, .count = 4096 },
			.chunk_bytes = 256, .window = 2,
			.kill_rank = 2, .kill_after = 3,
		};
		struct tc_outcome o;

		set_all_levels(&c.cfg, algos[ai]);
		tc_run(w, &c, &o);
		ASSERT_EQ(TC_FAIL, o.result)
			TH_LOG("%s: a dead rank went unnoticed", kc_algo_name(algos[ai]));
		/* the dead rank and at least one survivor report, none hang */
		ASSERT_GE(o.nfailed_ranks, 2);
		for (r = 0; r < o.nfailed_ranks && r < ARRAY_SIZE(o.status); r++)
			ASSERT_TRUE(o.status[r] == -ECONNRESET || o.status[r] == -ECONNABORTED)
				TH_LOG("%s: status %d", kc_algo_name(algos[ai]), o.status[r]);
		__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
	}
	kc_topo_free(&topo);
	tw_destroy(w);
}

/* Ranks that disagree about the operation get -EPROTO, not a hang or garbage. */
TEST(mismatched_plans_fail_with_eproto)
{
	struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_RING, KCOLL_ALGO_RING, KCOLL_ALGO_RING } };
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT32,
				 .redop = KCOLL_SUM, .count = 100 };
	struct kc_op_desc op1 = op;
	struct kc_exec_cfg ec = { .chunk_bytes = 64, .window = 2, .op_seq = 1 };
	struct tw_job jobs[2] = { 0 };
	struct kc_plan *pl[2];
	struct kc_topo topo;
	struct tw_world *w = tw_create(2);
	s32 a[101], b[101];
	u32 r;

	ASSERT_EQ(0, kc_topo_init(&topo, 2, NULL, NULL, NULL, 0));
	ASSERT_EQ(0, kc_plan_build(&topo, 0, &op, &cfg, &pl[0], NULL, 0));
	op1.count = 101;
	ASSERT_EQ(0, kc_plan_build(&topo, 1, &op1, &cfg, &pl[1], NULL, 0));
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	jobs[0].plan = pl[0];
	jobs[0].desc = &op;
	jobs[1].desc = &op1;
	jobs[0].bufs[KC_BUF_SEND] = a;
	jobs[0].bufs[KC_BUF_RECV] = a;
	jobs[1].plan = pl[1];
	jobs[1].bufs[KC_BUF_SEND] = b;
	jobs[1].bufs[KC_BUF_RECV] = b;
	tw_run(w, jobs, &ec, 2000);
	for (r = 0; r < 2; r++)
		EXPECT_NE(0, jobs[r].status);
	EXPECT_TRUE(jobs[0].status == -EPROTO || jobs[1].status == -EPROTO);
	kc_plan_free(pl[0]);
	kc_plan_free(pl[1]);
	kc_topo_free(&topo);
	tw_destroy(w);
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------ ranks that disagree */

/*
 * Ways ranks can disagree about one operation, each applied to one rank
 * (the last) and, separately, to half of them (the even ranks, the root
 * 0 among them).  Every case must end with at least one rank failing and
 * every rank that succeeds holding exactly what its own arguments ask for.
 */
enum mis_kind {
	MIS_REDOP,	/* SUM against MAX */
	MIS_DTYPE,	/* fp32 against int32: same size, other bits */
	MIS_COUNT_LESS,	/* count - 1 (AlltoAllv: half the scale) */
	MIS_COUNT_MORE,	/* count + 1 (AlltoAllv: scale + 1) */
	MIS_ROOT,	/* root 1 against 0 */
	MIS_A2AV_PAIR,	/* one pair's AlltoAllv count, +1 (one) or -1 (half) */
	MIS_OP,		/* another operation: Barrier (AllReduce for Barrier) */
	MIS_KINDS
};

static const char *const mis_names[MIS_KINDS] = {
	"redop", "dtype", "count-1", "count+1", "root", "a2av-pair", "op",
};

static bool mis_applies(u32 op, enum mis_kind k)
{
	switch (k) {
	case MIS_REDOP:
		return kc_op_reduces(op);
	case MIS_DTYPE:
	case MIS_COUNT_LESS:
	case MIS_COUNT_MORE:
		return op != KCOLL_OP_BARRIER;
	case MIS_ROOT:
		return kc_op_rooted(op);
	case MIS_A2AV_PAIR:
		return op == KCOLL_OP_ALLTOALLV;
	default:
		return true;
	}
}

/* Statuses of the failed ranks over every mismatch case, for the log. */
struct mis_tally {
	unsigned long long cases, skipped, ranks_ok, eproto, reset, timedout;
};

/*
 * Sizes: a count that leaves uneven blocks and part-filled messages, and
 * one whose blocks are whole messages (64-byte chunks of 16 elements),
 * where a count that differs by one used to go unnoticed.
 */
static u64 mis_count(u32 op, u32 p, bool aligned)
{
	if (op == KCOLL_OP_ALLTOALLV)
		return aligned ? 16 : 2;	/* the scale of tc_a2av_layout() */
	return aligned ? 16 * (u64)p : 3 * (u64)p + 1;
}

static void mis_case(struct __test_metadata *_metadata, struct tw_world *w,
		     const struct kc_topo *topo, u32 op, u32 algo, enum mis_kind k, bool half,
		     bool aligned, struct mis_tally *t, int *fails)
{
	u32 p = topo->nranks;
	u64 count = mis_count(op, p, aligned);
	struct kc_op_desc alt;
	struct tc_case c = {
		.topo = topo,
		.op = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM, .root = 0,
			.count = op == KCOLL_OP_BARRIER ? 0 : count },
		.chunk_bytes = 64,
		.window = 3,
		.alt = &alt,
		.alt_first = half ? 0 : p - 1,
		.alt_every = half ? 2 : 0,
	};
	struct tc_outcome o;
	char d[512];

	alt = c.op;
	switch (k) {
	case MIS_REDOP:
		alt.redop = KCOLL_MAX;
		break;
	case MIS_DTYPE:
		alt.dtype = KCOLL_INT32;
		break;
	case MIS_COUNT_LESS:
		alt.count = op == KCOLL_OP_ALLTOALLV ? count / 2 : count - 1;
		break;
	case MIS_COUNT_MORE:
		alt.count = count + 1;
		break;
	case MIS_ROOT:
		alt.root = 1;
		break;
	case MIS_A2AV_PAIR:
		c.a2av_delta = half ? -1 : 1;
		break;
	default:
		alt.op = op == KCOLL_OP_BARRIER ? KCOLL_OP_ALLREDUCE : KCOLL_OP_BARRIER;
		alt.count = op == KCOLL_OP_BARRIER ? count : 0;
		break;
	}
	set_all_levels(&c.cfg, algo);
	c.cfg.pipe_bytes = 128;
	tc_run(w, &c, &o);
	if (o.result == TC_BUILD_ERROR && o.build_err == -EOPNOTSUPP) {
		t->skipped++;	/* the other operation is not this algorithm's */
		return;
	}
	t->cases++;
	t->ranks_ok += p - o.nfailed_ranks;
	t->eproto += o.neproto;
	t->reset += o.nreset;
	t->timedout += o.ntimedout;
	if (o.result == TC_PASS) {
		__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&tally->failed, 1, __ATOMIC_RELAXED);
	(*fails)++;
	tc_describe(&c, d, sizeof(d));
	TH_LOG("FAIL %s (%s%s, %s): %s", mis_names[k], half ? "half" : "one",
	       aligned ? ", whole messages" : "", d, o.why);
}

static int run_mismatch(struct __test_metadata *_metadata, u32 op)
{
	static const u32 quick_ps[] = { 2, 3, 4, 5, 6, 7, 8, 9, 16, 33 };
	static const u32 extra[] = { 48, 64 };
	u32 ps[64], np = 0, pi, ai, k, h;
	struct mis_tally t = { 0 };
	int fails = 0;

	if (quick()) {
		for (pi = 0; pi < ARRAY_SIZE(quick_ps); pi++)
			ps[np++] = quick_ps[pi];
	} else {
		for (pi = 2; pi <= 33; pi++)
			ps[np++] = pi;
		for (pi = 0; pi < ARRAY_SIZE(extra); pi++)
			ps[np++] = extra[pi];
	}
	for (pi = 0; pi < np && fails <= 20; pi++) {
		u32 p = ps[pi];
		struct tw_world *w = tw_create(p);
		struct kc_topo topo;

		ASSERT_NE(NULL, w);
		ASSERT_EQ(0, kc_topo_init(&topo, p, NULL, NULL, NULL, 0));
		for (ai = 0; ai < NALGOS && fails <= 20; ai++) {
			if (!algo_selected(all_algos[ai]) ||
			    !kc_algo_supports(kc_algo_get(all_algos[ai]), op))
				continue;
			for (k = 0; k < MIS_KINDS; k++)
				for (h = 0; h < 4 && mis_applies(op, k); h++)
					mis_case(_metadata, w, &topo, op, all_algos[ai], k, h & 1,
						 h & 2, &t, &fails);
		}
		kc_topo_free(&topo);
		tw_destroy(w);
	}
	printf("# %s: %llu cases (%llu skipped: the other op is not the algorithm's), %llu ranks succeeded, failed ranks: %llu EPROTO, %llu ECONNRESET, %llu ETIMEDOUT\n",
	       kc_op_name(op), t.cases, t.skipped, t.ranks_ok, t.eproto, t.reset, t.timedout);
	fflush(stdout);
	return fails;
}

#define MISMATCH_TEST(name, op) \
	TEST_F_TIMEOUT(algo, name, 3600) \
	{ \
		ASSERT_EQ(0, run_mismatch(_metadata, op)); \
	}

MISMATCH_TEST(mismatch_allreduce, KCOLL_OP_ALLREDUCE)
MISMATCH_TEST(mismatch_reducescatter, KCOLL_OP_REDUCESCATTER)
MISMATCH_TEST(mismatch_allgather, KCOLL_OP_ALLGATHER)
MISMATCH_TEST(mismatch_broadcast, KCOLL_OP_BROADCAST)
MISMATCH_TEST(mismatch_reduce, KCOLL_OP_REDUCE)
MISMATCH_TEST(mismatch_scatter, KCOLL_OP_SCATTER)
MISMATCH_TEST(mismatch_gather, KCOLL_OP_GATHER)
MISMATCH_TEST(mismatch_alltoall, KCOLL_OP_ALLTOALL)
MISMATCH_TEST(mismatch_alltoallv, KCOLL_OP_ALLTOALLV)
MISMATCH_TEST(mismatch_barrier, KCOLL_OP_BARRIER)

/* ----------------------------------------------------------- bad input */

static int build_err(const struct kc_op_desc *op, u32 nranks, u32 algo, char *msg)
{
	struct kc_algo_cfg cfg = { .algo = { algo, algo, algo } };
	struct kc_plan *plan = NULL;
	struct kc_topo topo;
	int ret;

	if (kc_topo_init(&topo, nranks, NULL, NULL, NULL, 0))
		return -1000;
	ret = kc_plan_build(&topo, 0, op, &cfg, &plan, msg, 160);
	kc_plan_free(plan);
	kc_topo_free(&topo);
	return ret;
}

#define EXPECT_BUILD_ERR(want, opdesc, n, algo, needle) do { \
	char m_[160] = ""; \
	EXPECT_EQ(want, build_err(opdesc, n, algo, m_)); \
	EXPECT_NE(NULL, strstr(m_, needle)) TH_LOG("message was: \"%s\"", m_); \
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED); \
} while (0)

TEST(plan_rejects_unknown_op)
{
	struct kc_op_desc op = { .op = KCOLL_OP_COUNT, .dtype = KCOLL_FP32, .count = 1 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_RING, "unknown operation");
}

TEST(plan_rejects_unknown_dtype)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_DTYPE_COUNT,
				 .count = 1 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_RING, "unknown datatype");
}

TEST(plan_rejects_unknown_redop)
{
	struct kc_op_desc op = { .op = KCOLL_OP_REDUCESCATTER, .dtype = KCOLL_FP32,
				 .redop = KCOLL_REDOP_COUNT, .count = 1 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_RING, "unknown reduce operation");
}

TEST(plan_rejects_root_out_of_range)
{
	struct kc_op_desc op = { .op = KCOLL_OP_BROADCAST, .dtype = KCOLL_FP32, .root = 9,
				 .count = 1 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 8, KCOLL_ALGO_RING, "root 9 out of range for 8 ranks");
}

TEST(plan_rejects_byte_size_overflow)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP64,
				 .count = U64_MAX / 4 };

	EXPECT_BUILD_ERR(-EOVERFLOW, &op, 4, KCOLL_ALGO_RING, "overflows");
}

TEST(plan_rejects_per_rank_size_overflow)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLGATHER, .dtype = KCOLL_INT8,
				 .count = U64_MAX / 3 };

	EXPECT_BUILD_ERR(-EOVERFLOW, &op, 4, KCOLL_ALGO_RING, "overflows");
}

TEST(plan_rejects_alltoallv_without_counts)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLTOALLV, .dtype = KCOLL_INT8 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_PAIRWISE, "alltoallv needs");
}

TEST(plan_rejects_unknown_flags)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT8, .flags = 0x80 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_RING, "unknown operation flags");
}

TEST(plan_rejects_unknown_algorithm)
{
	struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_INT8, .count = 3 };

	EXPECT_BUILD_ERR(-EINVAL, &op, 4, KCOLL_ALGO_COUNT, "unknown algorithm");
}

TEST(plan_refuses_op_the_algorithm_cannot_run)
{
	struct kc_op_desc op = { .op = KCOLL_OP_BROADCAST, .dtype = KCOLL_INT8, .count = 3 };

	EXPECT_BUILD_ERR(-EOPNOTSUPP, &op, 4, KCOLL_ALGO_PAIRWISE, "cannot run broadcast");
}

/* Bruck relays blocks whose lengths only their owners know in AlltoAllv. */
TEST(plan_refuses_alltoallv_with_bruck)
{
	u64 counts[4] = { 1, 2, 3, 4 }, displs[4] = { 0, 1, 3, 6 };
	struct kc_op_desc op = { .op = KCOLL_OP_ALLTOALLV, .dtype = KCOLL_INT8,
				 .scounts = counts, .sdispls = displs,
				 .rcounts = counts, .rdispls = displs };

	EXPECT_BUILD_ERR(-EOPNOTSUPP, &op, 4, KCOLL_ALGO_NB, "nb cannot run alltoallv");
}

TEST(topology_rejects_groups_that_do_not_cover_every_rank)
{
	u32 sizes[] = { 2, 3 };
	struct kc_topo t;
	char m[160] = "";

	EXPECT_EQ(-EINVAL, kc_topo_init_sizes(&t, 6, 2, sizes, m, sizeof(m)));
	EXPECT_NE(NULL, strstr(m, "cover 5 of 6 ranks")) TH_LOG("message: %s", m);
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
}

TEST(topology_rejects_non_contiguous_server)
{
	u32 srv[] = { 0, 0, 1, 0 };
	struct kc_topo t;
	char m[160] = "";

	EXPECT_EQ(-EINVAL, kc_topo_init(&t, 4, srv, NULL, m, sizeof(m)));
	EXPECT_NE(NULL, strstr(m, "not contiguous")) TH_LOG("message: %s", m);
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
}

TEST(topology_rejects_server_spanning_pods)
{
	u32 srv[] = { 0, 0, 1, 1 }, pod[] = { 0, 1, 1, 1 };
	struct kc_topo t;
	char m[160] = "";

	EXPECT_EQ(-EINVAL, kc_topo_init(&t, 4, srv, pod, m, sizeof(m)));
	EXPECT_NE(NULL, strstr(m, "spans super-nodes")) TH_LOG("message: %s", m);
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
}

TEST(topology_rejects_zero_ranks)
{
	struct kc_topo t;

	EXPECT_EQ(-EINVAL, kc_topo_init(&t, 0, NULL, NULL, NULL, 0));
	__atomic_add_fetch(&tally->passed, 1, __ATOMIC_RELAXED);
}

static void print_tally(void)
{
	if (getpid() != main_pid || !tally)
		return;
	printf("# algorithm suite: %llu cases\n", tally->passed + tally->failed);
	printf("%llu passed, %llu failed\n", tally->passed, tally->failed);
	fflush(stdout);
}

static void __attribute__((constructor)) constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

/* KC_TEST_ONLY=text: drop the tests whose name does not contain text. */
static void only_tests(void)
{
	const char *only = getenv("KC_TEST_ONLY");
	struct __fixture_metadata *f;

	if (!only || !*only)
		return;
	for (f = __fixture_list; f; f = f->next) {
		struct __test_metadata **t = &f->tests;

		while (*t) {
			if (strstr((*t)->name, only))
				t = &(*t)->next;
			else
				*t = (*t)->next;
		}
	}
}

int main(int argc, char **argv)
{
	only_tests();
	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		return 1;
	main_pid = getpid();
	atexit(print_tally);
	return test_harness_run(argc, argv);
}
