// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's symmetry (sim_run_period()) and lower bound
 * (sim_plan_lower_bound()), which make bench-select affordable at 4096
 * ranks, against the full simulation: one server (pod) simulated gives
 * the same time and bytes per rank as every rank simulated, it is used
 * only when every plan repeats (a rooted op or an uneven split runs in
 * full), and the bound never exceeds the simulated time.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <math.h>
#include <stdio.h>
#include "kselftest_harness.h"
#include "sim.h"

static struct sim_model model(bool symmetry, double conv)
{
	struct sim_model m = { .conv = conv, .rendezvous = true, .symmetry = symmetry };

	m.lv[0] = (struct sim_level){ 1e-6, 2e-11, 1e-11 };
	m.lv[1] = (struct sim_level){ 5e-6, 4e-11, 1e-11 };
	m.lv[2] = (struct sim_level){ 7e-6, 5e-11, 1e-11 };
	return m;
}

struct run {
	double time, lb;
	u32 period;
	u64 sent[64], recv[64];
};

static int run(const struct kc_topo *t, u32 op, u32 algo, u64 count, bool symmetry,
	       struct run *out)
{
	struct sim_model m = model(symmetry, 2);
	struct kc_exec_cfg ec = sim_conformance_cfg();
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = count };
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 };
	struct sim_result res = { .sent = out->sent, .recv = out->recv };
	int ret;

	cfg.algo[KCOLL_LEVEL1] = algo;
	ret = sim_op(t, &d, &cfg, &m, &ec, &res, NULL, NULL, 0, NULL, 0);
	out->time = res.time;
	out->period = res.period;
	if (!ret)
		ret = sim_op_lower_bound(t, &d, &cfg, &m, &out->lb);
	return ret;
}

TEST(one_period_equals_every_rank)
{
	static const u32 algos[] = { KCOLL_ALGO_RING, KCOLL_ALGO_RHD, KCOLL_ALGO_NHR,
				     KCOLL_ALGO_NB, KCOLL_ALGO_PIPELINE, KCOLL_ALGO_AHC,
				     KCOLL_ALGO_AHC_BROKE };
	static const u32 ops[] = { KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER,
				   KCOLL_OP_ALLGATHER, KCOLL_OP_BROADCAST };
	static const struct { u32 npods, servers, k; } topos[] = {
		{ 1, 8, 4 }, { 1, 5, 2 }, { 1, 12, 1 }, { 2, 4, 4 }, { 3, 3, 2 },
	};
	u32 ti, a, o, used = 0, total = 0;

	for (ti = 0; ti < ARRAY_SIZE(topos); ti++) {
		struct kc_topo t;

		ASSERT_EQ(0, kc_topo_init_regular(&t, topos[ti].npods, topos[ti].servers,
						  topos[ti].k));
		for (a = 0; a < ARRAY_SIZE(algos); a++) {
			for (o = 0; o < ARRAY_SIZE(ops); o++) {
				u64 counts[2] = { 3, (u64)t.nranks * 4096 }, *c;

				for (c = counts; c < counts + 2; c++) {
					struct run full = { 0 }, sym = { 0 };
					u32 r;

					if (run(&t, ops[o], algos[a], *c, false, &full))
						continue;	/* not applicable */
					ASSERT_EQ(0, run(&t, ops[o], algos[a], *c, true, &sym));
					total++;
					used += sym.period < t.nranks;
					EXPECT_EQ(t.nranks, full.period);
					EXPECT_EQ(full.time, sym.time)
						TH_LOG("%s %s %u ranks count %llu: full %.9g sym %.9g (period %u)",
						       kc_algo_name(algos[a]), kc_op_name(ops[o]),
						       t.nranks, (unsigned long long)*c, full.time,
						       sym.time, sym.period);
					for (r = 0; r < t.nranks; r++) {
						EXPECT_EQ(full.sent[r], sym.sent[r]);
						EXPECT_EQ(full.recv[r], sym.recv[r]);
					}
					EXPECT_LE(full.lb, full.time * (1 + 1e-12));
					EXPECT_LE(sym.lb, full.time * (1 + 1e-12));
				}
			}
		}
		kc_topo_free(&t);
	}
	TH_LOG("symmetry used in %u of %u runs", used, total);
	/* large even splits of symmetric algorithms must use it */
	EXPECT_GE(used * 3, total);
}

TEST(rooted_ops_and_asymmetric_pods_run_every_rank)
{
	static const u32 pods[] = { 2, 3 };
	struct run r = { 0 };
	struct kc_topo t;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 8, 2));
	ASSERT_EQ(0, run(&t, KCOLL_OP_REDUCE, KCOLL_ALGO_RING, 4096, true, &r));
	EXPECT_EQ(t.nranks, r.period);	/* the root breaks the symmetry */
	ASSERT_EQ(0, run(&t, KCOLL_OP_ALLREDUCE, KCOLL_ALGO_RING, 16 * 4096, true, &r));
	EXPECT_EQ(2, r.period);
	kc_topo_free(&t);
	ASSERT_EQ(0, kc_topo_init_pods(&t, 2, pods, 2));
	ASSERT_EQ(t.nranks, sim_symmetry_period(&t));
	kc_topo_free(&t);
}

/* A plan moved by the wrong shift, or another rank's plan, is not "moved". */
TEST(plan_moved_detects_a_different_plan)
{
	struct kc_op_desc d = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				.redop = KCOLL_SUM, .count = 8 * 1024 };
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 };
	struct kc_plan *p0, *p2;
	struct kc_topo t;

	cfg.algo[KCOLL_LEVEL1] = KCOLL_ALGO_RING;
	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	ASSERT_EQ(0, kc_plan_build(&t, 0, &d, &cfg, &p0, NULL, 0));
	ASSERT_EQ(0, kc_plan_build(&t, 2, &d, &cfg, &p2, NULL, 0));
	EXPECT_TRUE(sim_plan_moved(p0, p2, 2));
	EXPECT_FALSE(sim_plan_moved(p0, p2, 4));
	EXPECT_FALSE(sim_plan_moved(p0, p0, 2));
	d.count = 8 * 1024 + 1;	/* uneven: rank 2's blocks differ */
	kc_plan_free(p2);
	ASSERT_EQ(0, kc_plan_build(&t, 2, &d, &cfg, &p2, NULL, 0));
	EXPECT_FALSE(sim_plan_moved(p0, p2, 2));
	kc_plan_free(p0);
	kc_plan_free(p2);
	kc_topo_free(&t);
}

TEST_HARNESS_MAIN
