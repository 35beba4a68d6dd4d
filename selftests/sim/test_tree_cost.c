// SPDX-License-Identifier: GPL-2.0
/*
 * The double binary tree's Broadcast and Reduce cost (algo/kc_cost.c,
 * kc_cost_tree(), what automatic selection ranks Tree by) against the
 * simulator on flat communicators of p = 2..300 ranks, conformance mode
 * (one piece per half, rendezvous).  The model is meant to be exact:
 * D = ceil(log2 p) rounds of latency, a half less of bandwidth where the
 * deepest level is thin, and for Reduce the longer of two reduction
 * paths.  Two link models, one where bandwidth dominates the reductions
 * and one where the reductions dominate, so both paths get checked.
 * There is no published formula for Tree (NCCL's), so this test, not
 * test_conformance, holds it.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <math.h>
#include <stdio.h>
#include "kselftest_harness.h"
#include "sim.h"
#include "kc_cost.h"

#define MAX_P 300

/* Simulated and modelled time of Tree for op on p one-rank servers. */
static int tree_times(u32 p, u32 op, double gamma, double *sim, double *model)
{
	struct sim_model m = { .conv = 1, .rendezvous = true, .symmetry = true };
	struct kc_exec_cfg ec = sim_conformance_cfg();
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = 1 << 18 };
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 };
	struct sim_result res = { 0 };
	struct kc_cost_model cm;
	struct kc_topo t;
	int ret;

	m.lv[1] = (struct sim_level){ 1e-6, 1e-9, gamma };
	m.lv[0] = m.lv[1];
	m.lv[2] = m.lv[1];
	ret = kc_topo_init_pods(&t, 1, &p, 1);
	if (ret)
		return ret;
	cfg.algo[KCOLL_LEVEL1] = KCOLL_ALGO_TREE;
	sim_conformance_model(&m, &cm);
	*model = (double)kc_cost_op(&t, op, kc_cost_bytes(&d, t.nranks), &cfg, &cm) / 1e15;
	ret = sim_op(&t, &d, &cfg, &m, &ec, &res, NULL, NULL, 0, NULL, 0);
	*sim = res.time;
	kc_topo_free(&t);
	return ret;
}

static void check_op(struct __test_metadata *_metadata, u32 op)
{
	static const double gammas[] = { 3e-10, 3e-9 };
	double worst = 0;
	u32 p, gi, bad = 0;

	for (gi = 0; gi < ARRAY_SIZE(gammas); gi++)
	for (p = 2; p <= MAX_P; p++) {
		double s, f, e;

		ASSERT_EQ(0, tree_times(p, op, gammas[gi], &s, &f));
		e = fabs(f - s) / s;
		worst = fmax(worst, e);
		if (e > 1e-6 && bad++ < 10)
			TH_LOG("%s p=%u gamma=%g: simulated %.3f us, modelled %.3f us",
			       kc_op_name(op), p, gammas[gi], s * 1e6, f * 1e6);
	}
	TH_LOG("%s: p = 2..%u, worst |model - sim| / sim = %.2e", kc_op_name(op), MAX_P, worst);
	EXPECT_EQ(0, bad);
}

TEST(tree_broadcast_cost_is_exact)
{
	check_op(_metadata, KCOLL_OP_BROADCAST);
}

TEST(tree_reduce_cost_is_exact)
{
	check_op(_metadata, KCOLL_OP_REDUCE);
}

TEST_HARNESS_MAIN
