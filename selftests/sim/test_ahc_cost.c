// SPDX-License-Identifier: GPL-2.0
/*
 * The AHC cost function (algo/kc_cost.c, what automatic selection ranks
 * AHC and AHC_BROKE by) against the simulator on groups of coprime sizes
 * (2+3, 3+5, 3+5+7 servers; one or eight ranks per server; C = 1, 2, 4):
 * LCM slicing gives T = sum of sizes minus shared boundaries segments,
 * run one after the other in the inter-group Ring.  The test logs the
 * table simulated vs modelled and fails when the model leaves its
 * measured band:
 *  - AHC_BROKE's AllReduce, Broadcast and Reduce (root 0) are exact
 *    (within 1%): the scatter (gather) in the root's group, the Ring
 *    among the cards, and the RS and AG of the larger groups, of which
 *    only mmin members hold a block, priced by the busiest member of
 *    each NHR step (kc_cost_nhr_uneven()).  Charged (s - 1)/s n, the
 *    even cut, AllReduce read up to 34% low on 3+9 one-rank pods and
 *    selection took AHC_BROKE at 1.63x RHD's time on 2+6;
 *  - AHC_BROKE's RS and AG deal each region in windows of s blocks, the
 *    last one short and priced like the uneven cut above: exact on two
 *    groups (were 17% low on 2+3), 0.88-1.21 of the model on 3+5+7,
 *    where selection does not rank it for them;
 *  - AHC's AllReduce, Broadcast and Reduce charge the inter stage for
 *    the chain of segments it is (every n / gcd of the group sizes), and
 *    overestimate by at most 15%, where the intra stages overlap that
 *    chain; AllReduce within 2.5x, Broadcast and Reduce within 2x above;
 *  - ReduceScatter and AllGather within 12x.
 * The gap: the model lets the segments of different cards overlap and
 * counts about T/m Ring latencies per card; the plans run every segment
 * in rounds of their own, in an order that differs from card to card, so
 * in rendezvous mode a card waits for the slowest partner of each
 * segment (a convoy), the more so for RS/AG on planes of eight, whose
 * inter stage is the whole operation.  Closing that gap needs a model of
 * the convoy (or plans that order segments alike); it is left open.
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

struct ahc_case {
	u32 npods;
	u32 pods[3];
	u32 k;
};

static const struct ahc_case cases[] = {
	{ 2, { 2, 3 }, 1 }, { 2, { 3, 5 }, 1 }, { 3, { 3, 5, 7 }, 1 },
	{ 2, { 2, 3 }, 8 }, { 3, { 3, 5, 7 }, 8 },
	/* not coprime: a larger group three times the smallest, or not a multiple */
	{ 2, { 2, 6 }, 1 }, { 2, { 4, 6 }, 1 },
};

/* simulated / modelled time of algo for op, n bytes (whole region) */
static int ratio(const struct ahc_case *c, double conv, u32 algo, u32 op, u64 n, double *sim,
		 double *model)
{
	struct sim_model m = sim_bench_model(conv);
	struct kc_exec_cfg ec = sim_conformance_cfg();
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM };
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 };
	struct sim_result res = { 0 };
	struct kc_cost_model cm;
	struct kc_topo t;
	int ret;

	if (kc_topo_init_pods(&t, c->npods, c->pods, c->k))
		return -EINVAL;
	cfg.algo[KCOLL_LEVEL1] = algo;
	d.count = n / 4;
	if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER)
		d.count /= t.nranks;
	sim_conformance_model(&m, &cm);
	*model = (double)kc_cost_op(&t, op, kc_cost_bytes(&d, t.nranks), &cfg, &cm) / 1e15;
	ret = sim_op(&t, &d, &cfg, &m, &ec, &res, NULL, NULL, 0, NULL, 0);
	*sim = res.time;
	kc_topo_free(&t);
	return ret;
}

TEST(ahc_cost_function_tracks_the_simulator_on_coprime_groups)
{
	static const u32 ops[] = { KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER, KCOLL_OP_ALLGATHER,
				    KCOLL_OP_BROADCAST, KCOLL_OP_REDUCE };
	static const u32 algos[] = { KCOLL_ALGO_AHC, KCOLL_ALGO_AHC_BROKE };
	static const u64 sizes[] = { 4096, 1 << 20, 64 << 20, 1ull << 30 };
	static const double convs[] = { 1, 2, 4 };
	double lo = INFINITY, hi = 0;
	u32 ci, a, o, si, vi;

	for (ci = 0; ci < ARRAY_SIZE(cases); ci++)
	for (vi = 0; vi < ARRAY_SIZE(convs); vi++)
	for (a = 0; a < ARRAY_SIZE(algos); a++)
	for (o = 0; o < ARRAY_SIZE(ops); o++)
	for (si = 0; si < ARRAY_SIZE(sizes); si++) {
		const struct ahc_case *c = &cases[ci];
		bool rooted = ops[o] == KCOLL_OP_BROADCAST || ops[o] == KCOLL_OP_REDUCE;
		double s, f, r;

		ASSERT_EQ(0, ratio(c, convs[vi], algos[a], ops[o], sizes[si], &s, &f));
		r = s / f;
		TH_LOG("%-9s %-13s pods %u+%u%s%s x%u C=%.0f %10llu B: simulated %10.2f us, model %10.2f us, sim/model %.3f",
		       kc_algo_name(algos[a]), kc_op_name(ops[o]), c->pods[0], c->pods[1],
		       c->npods > 2 ? "+" : "", c->npods > 2 ? "7" : "", c->k, convs[vi],
		       (unsigned long long)sizes[si], s * 1e6, f * 1e6, r);
		lo = fmin(lo, r);
		hi = fmax(hi, r);
		if (algos[a] == KCOLL_ALGO_AHC_BROKE && (c->npods == 2 || rooted ||
							 ops[o] == KCOLL_OP_ALLREDUCE)) {
			EXPECT_GE(r, 0.99);
			EXPECT_LE(r, 1.01);
		} else if (algos[a] == KCOLL_ALGO_AHC_BROKE) {
			/* RS, AG on three coprime groups: not ranked by selection */
			EXPECT_GE(r, 0.85);
			EXPECT_LE(r, 1.25);
		} else if (ops[o] == KCOLL_OP_REDUCESCATTER || ops[o] == KCOLL_OP_ALLGATHER) {
			EXPECT_GE(s, f * (1 - 1e-6));
			EXPECT_LE(r, 12);
		} else {
			EXPECT_GE(r, 0.85);
			EXPECT_LE(r, rooted ? 2 : 2.5);
		}
	}
	TH_LOG("sim/model in [%.3f, %.3f]", lo, hi);
}

TEST_HARNESS_MAIN
