// SPDX-License-Identifier: GPL-2.0
/*
 * collctl calibrate's fit without a cluster: times made by the module's
 * own model from a known link (an emulated one: 0.8 ms, 0.16 Gbit/s,
 * reduction 1.5 Gbit/s), disturbed by a few percent of noise, must give
 * that link back, on every level; too few distinct sizes, and samples
 * without a reduction, are handled as the header says.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "collctl_fit.h"

#define ALPHA	8e11	/* 0.8 ms in fs */
#define BETA	5e7	/* 0.16 Gbit/s: 50 ns per byte */
#define GAMMA	5.3e6	/* 1.5 Gbit/s */

static const u64 sizes[] = { 4096, 262144, 4194304 };

/*
 * AllGather and ReduceScatter (or AllGather only), Ring and Mesh, three
 * sizes, on @p ranks of @level, timed by @truth plus @overhead seconds,
 * times 1 +- @noise.
 */
static size_t make_samples(struct cc_fit_sample *s, u32 level, u32 p,
			   const struct kc_cost_model *truth, double noise, bool reduce,
			   double overhead)
{
	static const u32 ops[] = { KCOLL_OP_ALLGATHER, KCOLL_OP_REDUCESCATTER };
	static const u32 algos[] = { KCOLL_ALGO_RING, KCOLL_ALGO_MESH };
	size_t n = 0, o, a, z;

	for (o = 0; o < (reduce ? 2 : 1); o++)
		for (a = 0; a < 2; a++)
			for (z = 0; z < 3; z++) {
				s[n] = (struct cc_fit_sample){ .level = level, .p = p,
					.op = ops[o], .algo = algos[a], .bytes = sizes[z] };
				s[n].seconds = (cc_fit_predict(&s[n], truth) + overhead) *
					       (1.0 + (n % 2 ? noise : -noise));
				n++;
			}
	return n;
}

static struct kc_cost_model emulated(u32 level)
{
	struct kc_cost_model m = kc_cost_default;

	m.lv[level].alpha = (u64)ALPHA;
	m.lv[level].beta = (u64)BETA;
	m.lv[level].gamma = (u64)GAMMA;
	return m;
}

TEST(the_fit_gives_back_the_link_on_every_level)
{
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	u32 level, p;

	for (level = 0; level < KCOLL_LEVEL_COUNT; level++) {
		for (p = 2; p <= 8; p *= 2) {
			struct kc_cost_model truth = emulated(level);
			size_t n = make_samples(s, level, p, &truth, 0.03, true, 0.0);

			ASSERT_GT(cc_fit_predict(&s[0], &truth), 0.0);
			ASSERT_EQ(0, cc_fit_level(s, n, level, &kc_cost_default, &r, err,
						  sizeof(err))) TH_LOG("%s", err);
			EXPECT_LT(fabs((double)r.link.alpha / ALPHA - 1.0), 0.10)
				TH_LOG("level %u p %u alpha %llu", level, p,
				       (unsigned long long)r.link.alpha);
			EXPECT_LT(fabs((double)r.link.beta / BETA - 1.0), 0.10)
				TH_LOG("level %u p %u beta %llu", level, p,
				       (unsigned long long)r.link.beta);
			EXPECT_LT(fabs((double)r.link.gamma / GAMMA - 1.0), 0.25)
				TH_LOG("level %u p %u gamma %llu", level, p,
				       (unsigned long long)r.link.gamma);
			EXPECT_TRUE(r.gamma_fitted);
			/* the noise is 3%: the fitted model explains the rest */
			EXPECT_LT(r.rms_rel, 0.05) TH_LOG("level %u p %u rms %g", level, p,
							  r.rms_rel);
			/* and the built-in model (a fast fabric) is far off */
			EXPECT_GT(r.rms_rel_start, 0.9);
		}
	}
}

TEST(exact_times_give_the_link_exactly)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	size_t n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, true, 0.0);

	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_LT(fabs((double)r.link.alpha / ALPHA - 1.0), 0.001);
	EXPECT_LT(fabs((double)r.link.beta / BETA - 1.0), 0.001);
	EXPECT_LT(fabs((double)r.link.gamma / GAMMA - 1.0), 0.01);
	EXPECT_LT(r.rms_rel, 0.001);
	/* the other levels, the window and C are the starting model's */
	EXPECT_EQ(kc_cost_default.lv[KCOLL_LEVEL1].window, r.link.window);
}

/*
 * Under emulation every operation pays ~20 ms whatever the algorithm (all
 * VMs must get the CPU): the fit puts it in the overhead, not in alpha.
 * 1% noise: a 4K Ring's 3 latencies are 2.4 ms of 22, more blurs alpha.
 * With two ranks it cannot, and says so by leaving the overhead at 0.
 */
TEST(a_cost_per_operation_is_not_taken_for_latency)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	u32 p;

	for (p = 4; p <= 16; p *= 2) {
		size_t n = make_samples(s, KCOLL_LEVEL1, p, &truth, 0.01, true, 0.02);

		ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err,
					  sizeof(err))) TH_LOG("%s", err);
		EXPECT_LT(fabs(r.overhead_s / 0.02 - 1.0), 0.15) TH_LOG("p %u overhead %g", p,
									 r.overhead_s);
		EXPECT_LT(fabs((double)r.link.alpha / ALPHA - 1.0), 0.15)
			TH_LOG("p %u alpha %llu", p, (unsigned long long)r.link.alpha);
		EXPECT_LT(fabs((double)r.link.beta / BETA - 1.0), 0.10);
		EXPECT_LT(r.rms_rel, 0.04);
	}
	/* two ranks: Ring and Mesh both take one step */
	{
		size_t n = make_samples(s, KCOLL_LEVEL1, 2, &truth, 0.0, true, 0.0);

		ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err,
					  sizeof(err))) TH_LOG("%s", err);
		EXPECT_EQ(0.0, r.overhead_s);
		EXPECT_LT(fabs((double)r.link.alpha / ALPHA - 1.0), 0.001);
	}
}

TEST(without_a_reduction_gamma_is_kept)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	size_t n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, false, 0.0);

	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_FALSE(r.gamma_fitted);
	EXPECT_EQ(kc_cost_default.lv[KCOLL_LEVEL1].gamma, r.link.gamma);
	EXPECT_LT(fabs((double)r.link.beta / BETA - 1.0), 0.001);
}

TEST(one_size_is_refused_with_a_reason)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	size_t n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, true, 0.0), i, k = 0;

	for (i = 0; i < n; i++)
		if (s[i].bytes == sizes[2])
			s[k++] = s[i];
	EXPECT_EQ(-EINVAL, cc_fit_level(s, k, KCOLL_LEVEL1, &kc_cost_default, &r, err,
					sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "at least two sizes")) TH_LOG("%s", err);
	/* no sample of the level at all is the same error, not a crash */
	EXPECT_EQ(-EINVAL, cc_fit_level(s, k, KCOLL_LEVEL0, &kc_cost_default, &r, err,
					sizeof(err)));
	/* a time of zero (a broken timer) is named */
	s[0].seconds = 0.0;
	s[1].bytes = sizes[0];
	EXPECT_EQ(-EINVAL, cc_fit_level(s, k, KCOLL_LEVEL1, &kc_cost_default, &r, err,
					sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot be fitted")) TH_LOG("%s", err);
}

TEST(noise_that_makes_latency_negative_pins_it_at_zero)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	size_t n, i;

	/* a link without latency, and the small sizes measured 30% fast */
	truth.lv[KCOLL_LEVEL1].alpha = 0;
	n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, true, 0.0);
	for (i = 0; i < n; i++)
		if (s[i].bytes == sizes[0])
			s[i].seconds *= 0.7;
	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, r.link.alpha);
	EXPECT_GT(r.link.beta, 8);
}

TEST(mesh_between_servers_is_admitted_only_where_it_measured_no_slower_than_ring)
{
	struct kc_cost_model truth = emulated(KCOLL_LEVEL1);
	struct cc_fit_sample s[16];
	struct cc_fit_result r;
	char err[256] = "";
	double worst;
	size_t n, i;

	/* the model's port: Mesh pays one latency where Ring pays p - 1 */
	n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, true, 0.0);
	EXPECT_EQ(1, cc_fit_mesh(s, n, KCOLL_LEVEL1, &worst));
	EXPECT_LT(worst, 1.0);
	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1, r.auto_mesh);
	EXPECT_TRUE(r.link.auto_mesh);
	/* incast: Mesh three times slower at the largest size only */
	for (i = 0; i < n; i++)
		if (s[i].algo == KCOLL_ALGO_MESH && s[i].bytes == sizes[2])
			s[i].seconds *= 3.0;
	EXPECT_EQ(0, cc_fit_mesh(s, n, KCOLL_LEVEL1, &worst));
	EXPECT_GT(worst, 2.0);
	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, r.auto_mesh);
	EXPECT_FALSE(r.link.auto_mesh);
	/* the same on level 2 */
	truth = emulated(KCOLL_LEVEL2);
	n = make_samples(s, KCOLL_LEVEL2, 3, &truth, 0.0, false, 0.0);
	EXPECT_EQ(1, cc_fit_mesh(s, n, KCOLL_LEVEL2, &worst));
	/* no evidence, the node's value is kept: two ranks, level 0, a size without Ring */
	n = make_samples(s, KCOLL_LEVEL1, 2, &truth, 0.0, true, 0.0);
	EXPECT_EQ(-1, cc_fit_mesh(s, n, KCOLL_LEVEL1, &worst));
	ASSERT_EQ(0, cc_fit_level(s, n, KCOLL_LEVEL1, &kc_cost_default, &r, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(-1, r.auto_mesh);
	EXPECT_FALSE(r.link.auto_mesh);
	truth = emulated(KCOLL_LEVEL0);
	n = make_samples(s, KCOLL_LEVEL0, 4, &truth, 0.0, true, 0.0);
	EXPECT_EQ(-1, cc_fit_mesh(s, n, KCOLL_LEVEL0, &worst));
	truth = emulated(KCOLL_LEVEL1);
	n = make_samples(s, KCOLL_LEVEL1, 4, &truth, 0.0, false, 0.0);
	for (i = 0; i < n; i++)
		if (s[i].algo == KCOLL_ALGO_RING && s[i].bytes == sizes[1])
			s[i].level = KCOLL_LEVEL2;
	EXPECT_EQ(-1, cc_fit_mesh(s, n, KCOLL_LEVEL1, &worst));
}

TEST_HARNESS_MAIN
