// SPDX-License-Identifier: GPL-2.0
/*
 * The caller's link model reaches automatic selection:
 * kc_plan_build_model() chooses the AUTO levels on the model it is given
 * (the kernel passes the communicator's snapshot of the sysfs link
 * model), NULL and kc_plan_build() mean kc_cost_default, and a configured
 * level is never overridden by it.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kc_cost.h"
#include "kc_plan.h"

/* Latency everything, bandwidth free: few rounds win over few bytes. */
static struct kc_cost_model latency_bound(void)
{
	struct kc_cost_model m = kc_cost_default;
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		m.lv[l].alpha = 1000000000000ull;	/* 1 ms */
		m.lv[l].beta = 1;
		m.lv[l].gamma = 1;
	}
	return m;
}

/* Reduce of 4 MiB to rank 0 among 8 servers, one rank each. */
static struct kc_op_desc reduce_4m(void)
{
	struct kc_op_desc d = { .op = KCOLL_OP_REDUCE, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = (4u << 20) / 4 };

	return d;
}

/* The level-1 algorithm every rank's plan runs; fails the test if they differ. */
static u32 plan_level1(struct __test_metadata *_metadata, const struct kc_topo *t,
		       const struct kc_op_desc *d, const struct kc_algo_cfg *cfg,
		       const struct kc_cost_model *m)
{
	u32 r, algo = KCOLL_ALGO_COUNT;

	for (r = 0; r < t->nranks; r++) {
		struct kc_plan *p;
		char err[160];

		EXPECT_EQ(0, kc_plan_build_model(t, r, d, cfg, m, &p, err, sizeof(err))) {
			TH_LOG("rank %u: %s", r, err);
			return KCOLL_ALGO_COUNT;
		}
		if (r == 0)
			algo = p->algo[KCOLL_LEVEL1];
		EXPECT_EQ(algo, p->algo[KCOLL_LEVEL1]);
		kc_plan_free(p);
	}
	return algo;
}

TEST(a_different_model_changes_the_choice)
{
	struct kc_cost_model lat = latency_bound();
	struct kc_op_desc d = reduce_4m();
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 }, on_default, on_lat;
	struct kc_plan *p;
	struct kc_topo t;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 8, 1));
	kc_select_cfg(&t, &d, &cfg, NULL, &on_default);
	kc_select_cfg(&t, &d, &cfg, &lat, &on_lat);
	/* bandwidth matters at 4 MiB by default; latency-bound wants the tree */
	EXPECT_EQ(KCOLL_ALGO_NHR, on_default.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(KCOLL_ALGO_TREE, on_lat.algo[KCOLL_LEVEL1]);

	/* and the plan follows the model it is given, on every rank */
	EXPECT_EQ(on_default.algo[KCOLL_LEVEL1], plan_level1(_metadata, &t, &d, &cfg, NULL));
	EXPECT_EQ(on_default.algo[KCOLL_LEVEL1],
		  plan_level1(_metadata, &t, &d, &cfg, &kc_cost_default));
	EXPECT_EQ(on_lat.algo[KCOLL_LEVEL1], plan_level1(_metadata, &t, &d, &cfg, &lat));
	/* kc_plan_build() is the default model */
	ASSERT_EQ(0, kc_plan_build(&t, 0, &d, &cfg, &p, NULL, 0));
	EXPECT_EQ(on_default.algo[KCOLL_LEVEL1], p->algo[KCOLL_LEVEL1]);
	kc_plan_free(p);
	kc_topo_free(&t);
}

TEST(a_configured_level_ignores_the_model)
{
	struct kc_cost_model lat = latency_bound();
	struct kc_op_desc d = reduce_4m();
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 };
	struct kc_topo t;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 8, 1));
	cfg.algo[KCOLL_LEVEL1] = KCOLL_ALGO_RING;
	EXPECT_EQ(KCOLL_ALGO_RING, plan_level1(_metadata, &t, &d, &cfg, &lat));
	EXPECT_EQ(KCOLL_ALGO_RING, plan_level1(_metadata, &t, &d, &cfg, NULL));
	kc_topo_free(&t);
}

TEST(the_model_reaches_every_level_of_a_hierarchy)
{
	struct kc_cost_model lat = latency_bound();
	struct kc_op_desc d = reduce_4m();
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 }, want, def;
	struct kc_topo t;
	struct kc_plan *p, *q;
	u32 l, differ = 0;

	/* 2 pods of 2 servers of 2 ranks: three levels to choose */
	ASSERT_EQ(0, kc_topo_init_regular(&t, 2, 2, 2));
	kc_select_cfg(&t, &d, &cfg, &lat, &want);
	kc_select_cfg(&t, &d, &cfg, NULL, &def);
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		differ += want.algo[l] != def.algo[l];
	EXPECT_LT(0, differ);	/* else this test would prove nothing */
	/* the automatic plan on the model is the plan of what the model chose */
	ASSERT_EQ(0, kc_plan_build_model(&t, 0, &d, &cfg, &lat, &p, NULL, 0));
	ASSERT_EQ(0, kc_plan_build(&t, 0, &d, &want, &q, NULL, 0));
	EXPECT_EQ(0, memcmp(p->algo, q->algo, sizeof(p->algo)));
	EXPECT_EQ(q->nsteps, p->nsteps);
	EXPECT_EQ(q->nrounds, p->nrounds);
	kc_plan_free(q);
	/* and not the default model's plan */
	ASSERT_EQ(0, kc_plan_build(&t, 0, &d, &def, &q, NULL, 0));
	EXPECT_TRUE(memcmp(p->algo, q->algo, sizeof(p->algo)) || p->nsteps != q->nsteps);
	kc_plan_free(q);
	kc_plan_free(p);
	kc_topo_free(&t);
}

TEST_HARNESS_MAIN
