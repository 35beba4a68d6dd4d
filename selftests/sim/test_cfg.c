// SPDX-License-Identifier: GPL-2.0
/*
 * The HCCL_ALGO parser (algo/kc_cfg.c): valid strings give the expected
 * algorithm per op and level (HCCL semantics: others=, level1 AHC also
 * governing level2, fallback of inapplicable algorithms); malformed ones
 * fail with -EINVAL, a message naming the position, and leave the
 * previous configuration untouched.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kc_cfg.h"

#define AUTO KCOLL_ALGO_AUTO

/* The algorithm conf gives op at level l. */
static u32 at(const struct kc_algo_conf *conf, u32 op, u32 l)
{
	struct kc_algo_cfg c;

	kc_cfg_for_op(conf, op, &c, NULL, 0);
	return c.algo[l];
}

TEST(global_form_sets_levels_for_every_op)
{
	struct kc_algo_conf c;
	char err[256];
	u32 op;

	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:H-D_R;level2:NHR", &c, err, sizeof(err)));
	for (op = 0; op < KCOLL_OP_COUNT; op++) {
		if (op == KCOLL_OP_ALLTOALL || op == KCOLL_OP_ALLTOALLV || op == KCOLL_OP_SCATTER ||
		    op == KCOLL_OP_GATHER)
			continue;
		EXPECT_EQ(AUTO, at(&c, op, 0));
		EXPECT_EQ(KCOLL_ALGO_RHD, at(&c, op, 1));
		EXPECT_EQ(KCOLL_ALGO_NHR, at(&c, op, 2));
	}
}

TEST(every_token_maps_to_its_algorithm)
{
	static const struct { const char *s; u32 algo; } t[] = {
		{ "level1:ring", KCOLL_ALGO_RING }, { "level1:H-D_R", KCOLL_ALGO_RHD },
		{ "level1:NHR", KCOLL_ALGO_NHR }, { "level1:NB", KCOLL_ALGO_NB },
		{ "level1:AHC", KCOLL_ALGO_AHC }, { "level1:AHC_BROKE", KCOLL_ALGO_AHC_BROKE },
		{ "level1:pipeline", KCOLL_ALGO_PIPELINE }, { "level1:pairwise", KCOLL_ALGO_PAIRWISE },
		{ "level1:fullmesh", KCOLL_ALGO_MESH }, { "level1:mesh", KCOLL_ALGO_MESH },
		{ "level1:tree", KCOLL_ALGO_TREE }, { "level1:NA", AUTO }, { "level1:null", AUTO },
		{ "LEVEL1:Ring", KCOLL_ALGO_RING }, { "level1:h-d_r", KCOLL_ALGO_RHD },
		{ "level1:ahc_broke", KCOLL_ALGO_AHC_BROKE }, { " level1 : N H R ", KCOLL_ALGO_NHR },
	};
	struct kc_algo_conf c;
	char err[256];
	u32 i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		ASSERT_EQ(0, kc_cfg_parse(t[i].s, &c, err, sizeof(err))) {
			TH_LOG("'%s': %s", t[i].s, err);
		}
		EXPECT_EQ(t[i].algo, c.algo[KC_CFG_GLOBAL][1]) {
			TH_LOG("'%s'", t[i].s);
		}
	}
}

TEST(per_op_form_and_others)
{
	struct kc_algo_conf c;
	char err[256];

	ASSERT_EQ(0, kc_cfg_parse("allreduce=level0:NA;level1:ring/allgather=level0:NA;level1:H-D_R",
				  &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_RING, at(&c, KCOLL_OP_ALLREDUCE, 1));
	EXPECT_EQ(KCOLL_ALGO_RHD, at(&c, KCOLL_OP_ALLGATHER, 1));
	EXPECT_EQ(AUTO, at(&c, KCOLL_OP_BROADCAST, 1));	/* no entry: automatic */

	ASSERT_EQ(0, kc_cfg_parse("others=level1:NB/Broadcast=level1:NHR", &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_NHR, at(&c, KCOLL_OP_BROADCAST, 1));
	EXPECT_EQ(KCOLL_ALGO_NB, at(&c, KCOLL_OP_ALLREDUCE, 1));
	EXPECT_EQ(KCOLL_ALGO_NB, at(&c, KCOLL_OP_REDUCESCATTER, 1));

	/* the brief's capitalised form, and HCCL's p2p keys, parse */
	ASSERT_EQ(0, kc_cfg_parse("AllReduce=level0:NA;level1:AHC/send=level1:ring", &c, err,
				  sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_AHC, at(&c, KCOLL_OP_ALLREDUCE, 1));
	/* alltoall governs alltoallv */
	ASSERT_EQ(0, kc_cfg_parse("alltoall=level1:pairwise", &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_PAIRWISE, at(&c, KCOLL_OP_ALLTOALLV, 1));
}

TEST(level1_ahc_governs_level2)
{
	struct kc_algo_conf c;
	char err[256];

	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:AHC;level2:ring", &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_AHC, at(&c, KCOLL_OP_ALLREDUCE, 2));
	ASSERT_EQ(0, kc_cfg_parse("level1:AHC_BROKE", &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_AHC_BROKE, at(&c, KCOLL_OP_REDUCESCATTER, 2));
	ASSERT_EQ(0, kc_cfg_parse("level1:NHR;level2:ring;level3:NA", &c, err, sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_RING, at(&c, KCOLL_OP_ALLREDUCE, 2));
}

TEST(inapplicable_algorithm_falls_back_for_that_op_only)
{
	struct kc_algo_conf c;
	struct kc_algo_cfg out;
	char err[256], note[256];

	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:AHC", &c, err, sizeof(err)));
	EXPECT_EQ(2, kc_cfg_for_op(&c, KCOLL_OP_SCATTER, &out, note, sizeof(note)));
	EXPECT_EQ(AUTO, out.algo[1]);
	EXPECT_NE(NULL, strstr(note, "cannot run scatter")) {
		TH_LOG("note: %s", note);
	}
	EXPECT_EQ(0, kc_cfg_for_op(&c, KCOLL_OP_ALLREDUCE, &out, note, sizeof(note)));
	EXPECT_EQ(KCOLL_ALGO_AHC, out.algo[1]);
	EXPECT_EQ('\0', note[0]);
	ASSERT_EQ(0, kc_cfg_parse("level1:tree", &c, err, sizeof(err)));
	EXPECT_EQ(1, kc_cfg_for_op(&c, KCOLL_OP_ALLGATHER, &out, note, sizeof(note)));
	EXPECT_EQ(KCOLL_ALGO_TREE, at(&c, KCOLL_OP_ALLREDUCE, 1));
}

TEST(empty_string_configures_nothing)
{
	struct kc_algo_conf c;
	char err[64];

	ASSERT_EQ(0, kc_cfg_parse("", &c, err, sizeof(err)));
	EXPECT_EQ(0, c.keys);
	ASSERT_EQ(0, kc_cfg_parse("   ", &c, err, sizeof(err)));
	EXPECT_EQ(0, c.keys);
}

TEST(format_round_trips)
{
	static const char *const s[] = {
		"level0:NA;level1:H-D_R;level2:NHR",
		"allreduce=level0:NA;level1:AHC/allgather=level0:NA;level1:NB/others=level0:NA;level1:ring",
	};
	struct kc_algo_conf a, b;
	char err[256], buf[512];
	u32 i;

	for (i = 0; i < ARRAY_SIZE(s); i++) {
		ASSERT_EQ(0, kc_cfg_parse(s[i], &a, err, sizeof(err)));
		kc_cfg_format(&a, buf, sizeof(buf));
		ASSERT_EQ(0, kc_cfg_parse(buf, &b, err, sizeof(err))) {
			TH_LOG("'%s' -> '%s': %s", s[i], buf, err);
		}
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) {
			TH_LOG("'%s' -> '%s'", s[i], buf);
		}
	}
}

/* Malformed strings: expected position (0-based, in the string as given). */
static const struct {
	const char *s;
	u32 pos;
	const char *what;	/* a word the message must contain */
} bad[] = {
	{ "level1", 6, "missing ':'" },
	{ "level1:", 7, "missing algorithm" },
	{ ":ring", 0, "misplaced" },
	{ "level1:ring;", 12, "empty level" },
	{ ";level1:ring", 0, "empty level" },
	{ "level0:NA;;level1:ring", 10, "empty level" },
	{ "level4:ring", 0, "unknown level" },
	{ "lvl1:ring", 0, "unknown level" },
	{ "level1:rings", 7, "unknown algorithm" },
	{ "level1:HD_R", 7, "unknown algorithm" },
	{ "level1:NHR_V1", 7, "NHR_V1" },
	{ "level1:ring;level1:NHR", 12, "twice" },
	{ "level0:NA;level1:ring;level0:NA", 22, "twice" },
	{ "level1:ring:NHR", 11, "unexpected separator" },
	{ "level1:ring/level2:NHR", 11, "'/'" },
	{ "level1 ring", 0, "unknown level" },
	{ "level1:ri#ng", 9, "unexpected character" },
	{ "level1,ring", 6, "unexpected character" },
	{ "allreduce=", 10, "empty level" },
	{ "allreduce=level1:ring/", 22, "empty operation" },
	{ "/allreduce=level1:ring", 0, "empty operation" },
	{ "=level1:ring", 0, "misplaced" },
	{ "allreduce==level1:ring", 10, "misplaced" },
	{ "allreduce:level1:ring", 0, "unknown level" },
	{ "level1:ring/allreduce=level1:NHR", 0, "mixed" },
	{ "bogus=level1:ring", 0, "unknown operation" },
	{ "allreduce=level1:ring/allreduce=level1:NHR", 22, "twice" },
	{ "allreduce=level0:null;level1:ring", 17, "level0:null" },
	{ "allreduce level1:ring=x", 0, "mixed" },
	{ "allreduce=level1:ring;broadcast=level1:NHR", 22, "unknown level" },
	{ "allreduce=level1:ring=x", 21, "unexpected separator" },
	{ "level0:AHC", 7, "multi-level" },
	{ "level0:pipeline;level1:ring", 7, "multi-level" },
	{ "allreduce=level1", 16, "missing ':'" },
	{ "level1:ring level2:NHR", 7, "unknown algorithm" },
	{ "level1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 7, "too long" },
	{ "allgather=level1:NB/others=level1:ring;", 39, "empty level" },
	{ "level2:NHR;", 11, "empty level" },
	{ "  level1:  bogus", 11, "unknown algorithm" },
};

TEST(malformed_strings_fail_with_position_and_keep_previous)
{
	struct kc_algo_conf c, before;
	char err[512], want[32];
	u32 i;

	ASSERT_GE(ARRAY_SIZE(bad), 30);
	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:NB", &c, err, sizeof(err)));
	before = c;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, kc_cfg_parse(bad[i].s, &c, err, sizeof(err))) {
			TH_LOG("'%s' was accepted", bad[i].s);
			continue;
		}
		snprintf(want, sizeof(want), "position %u;", bad[i].pos);
		EXPECT_NE(NULL, strstr(err, want)) {
			TH_LOG("'%s': '%s', expected %s", bad[i].s, err, want);
		}
		EXPECT_NE(NULL, strstr(err, bad[i].what)) {
			TH_LOG("'%s': '%s', expected '%s'", bad[i].s, err, bad[i].what);
		}
		EXPECT_NE(NULL, strstr(err, "expected")) {
			TH_LOG("'%s': no expected form in '%s'", bad[i].s, err);
		}
		EXPECT_EQ(0, memcmp(&c, &before, sizeof(c)));
	}
	TH_LOG("%zu malformed strings", ARRAY_SIZE(bad));
}

TEST(overlong_string_is_refused)
{
	static char s[KC_CFG_MAX_LEN + 16];
	struct kc_algo_conf c;
	char err[256];

	memset(s, ' ', sizeof(s) - 1);
	memcpy(s, "level1:ring", 11);
	EXPECT_EQ(-EINVAL, kc_cfg_parse(s, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "too long"));
}

TEST_HARNESS_MAIN
