// SPDX-License-Identifier: GPL-2.0
/*
 * The HCCL_ALGO parser (algo/kc_cfg.c): valid strings give the expected
 * algorithm per op and level (HCCL semantics: others=, level1 AHC also
 * governing level2, fallback of inapplicable algorithms); malformed ones
 * fail with -EINVAL, leave the previous configuration untouched and name
 * the fault: its kind, offset and length, the nearest known name, and the
 * message every tool shows (the string echoed, a caret under the fault).
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
	ASSERT_EQ(0, kc_cfg_parse("level1:NHR;level2:ring", &c, err, sizeof(err)));
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

/*
 * Malformed strings: the fault's kind, 0-based offset and length in the
 * string as given, the known name suggested (NULL: none) and a phrase the
 * rendered message must hold.
 */
#define E(k) KC_CFG_E_##k
static const struct {
	const char *s;
	u32 kind, off, len;
	const char *hint;
	const char *what;
} bad[] = {
	{ "level1", E(COLON), 6, 1, NULL, "missing ':' after \"level1\" at column 7" },
	{ "level1 ring", E(COLON), 6, 1, NULL, "missing ':' after \"level1\" at column 7" },
	{ "level1 = ring", E(COLON), 6, 1, NULL, "missing ':' after \"level1\"" },
	{ "allreduce=level1", E(COLON), 16, 1, NULL, "missing ':' after \"level1\"" },
	{ "allreduce=level1=ring", E(COLON), 16, 1, NULL, "missing ':'" },
	{ "level1:", E(NO_ALGO), 7, 1, NULL, "missing algorithm after \"level1:\" at column 8" },
	{ "level0:;level1:ring", E(NO_ALGO), 7, 1, NULL, "missing algorithm after \"level0:\"" },
	{ ":ring", E(SEPARATOR), 0, 1, NULL, "misplaced \":\" at column 1" },
	{ "level1:ring;", E(TRAILING), 11, 1, NULL, "trailing ';' at column 12" },
	{ " level0:ring ; ", E(TRAILING), 13, 1, NULL, "trailing ';' at column 14" },
	{ "level2:NHR;", E(TRAILING), 10, 1, NULL, "trailing ';'" },
	{ "allgather=level1:NB/others=level1:ring;", E(TRAILING), 38, 1, NULL, "trailing ';'" },
	{ "allreduce=level1:ring;/others=level1:NB", E(TRAILING), 21, 1, NULL, "trailing ';'" },
	{ ";level1:ring", E(EMPTY_LEVEL), 0, 1, NULL, "empty level entry at column 1" },
	{ "level0:NA;;level1:ring", E(EMPTY_LEVEL), 10, 1, NULL, "empty level entry at column 11" },
	{ "level4:ring", E(LEVEL), 0, 6, "level0", "unknown level \"level4\" at column 1" },
	{ "leve1:ring", E(LEVEL), 0, 5, "level1", "unknown level \"leve1\"" },
	{ "lvl1:ring", E(LEVEL), 0, 4, "level1", "did you mean \"level1\"?" },
	{ "bogus:ring", E(LEVEL), 0, 5, NULL, "unknown level \"bogus\"" },
	{ "level3:ring", E(LEVEL3), 0, 6, NULL,
	  "level3 is not used by kcoll (levels are 0 server, 1 super-node, 2 cluster)" },
	{ "level1:NHR;level2:ring;level3:NA", E(LEVEL3), 23, 6, NULL, "level3 is not used" },
	{ "level0:rign", E(ALGO), 7, 4, "ring", "unknown algorithm \"rign\" at column 8" },
	{ "level1:rings", E(ALGO), 7, 5, "ring", "did you mean \"ring\"?" },
	{ "level1:HD_R", E(ALGO), 7, 4, "H-D_R", "unknown algorithm \"HD_R\"" },
	{ "level1:zzzzzz", E(ALGO), 7, 6, NULL, "expected one of ring, H-D_R" },
	{ "  level1:  bogus", E(ALGO), 11, 5, NULL, "unknown algorithm \"bogus\" at column 12" },
	{ "level1:ring level2:NHR", E(ALGO), 7, 11, NULL, "unknown algorithm" },
	{ "level1:NHR_V1", E(NHR_V1), 7, 6, NULL, "NHR_V1 is not implemented" },
	{ "level1:ring;level1:NHR", E(LEVEL_TWICE), 12, 6, NULL,
	  "level \"level1\" given twice at column 13" },
	{ "level0:NA;level1:ring;level0:NA", E(LEVEL_TWICE), 22, 6, NULL, "given twice" },
	{ "level1:ring:NHR", E(SEPARATOR), 11, 1, NULL, "unexpected \":\" at column 12" },
	{ "level1:ring/level2:NHR", E(SLASH), 11, 1, NULL, "'/' without per-operation" },
	{ "level1:ri#ng", E(CHAR), 9, 1, NULL, "unexpected character \"#\" at column 10" },
	{ "level1,ring", E(CHAR), 6, 1, NULL, "unexpected character \",\"" },
	{ "allreduce=", E(EMPTY_LEVEL), 10, 1, NULL, "empty level entry at column 11" },
	{ "allreduce=level1:ring/", E(EMPTY_OP), 22, 1, NULL, "empty operation entry" },
	{ "/allreduce=level1:ring", E(EMPTY_OP), 0, 1, NULL, "empty operation entry" },
	{ "=level1:ring", E(SEPARATOR), 0, 1, NULL, "misplaced \"=\"" },
	{ "allreduce==level1:ring", E(SEPARATOR), 10, 1, NULL, "misplaced \"=\" at column 11" },
	{ "allreduce:level1:ring", E(LEVEL), 0, 9, NULL, "unknown level \"allreduce\"" },
	{ "level1:ring/allreduce=level1:NHR", E(MIXED), 0, 6, NULL, "forms mixed" },
	{ "allreduce level1:ring=x", E(MIXED), 0, 16, NULL, "forms mixed" },
	{ "bogus=level1:ring", E(OP), 0, 5, NULL, "unknown operation \"bogus\"" },
	{ "alreduce=level1:ring", E(OP), 0, 8, "allreduce", "did you mean \"allreduce\"?" },
	{ "level1=ring", E(COLON), 6, 1, NULL, "missing ':' after \"level1\"" },
	{ "allreduce/others=level1:ring", E(EQUALS), 9, 1, NULL,
	  "missing '=' after \"allreduce\" at column 10" },
	{ "allreduce=level1:ring/allreduce=level1:NHR", E(OP_TWICE), 22, 9, NULL,
	  "operation \"allreduce\" given twice" },
	{ "allreduce=level0:null;level1:ring", E(NULL), 17, 4, NULL, "level0:null" },
	{ "allreduce=level1:ring;broadcast=level1:NHR", E(LEVEL), 22, 9, NULL, "unknown level" },
	{ "allreduce=level1:ring=x", E(SEPARATOR), 21, 1, NULL, "unexpected \"=\"" },
	{ "level0:AHC", E(LEVEL0), 7, 3, NULL, "multi-level algorithm \"AHC\" at level0" },
	{ "level0:pipeline;level1:ring", E(LEVEL0), 7, 8, NULL, "at level1 or level2" },
	{ "level1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", E(NAME_LONG), 7, 32, NULL,
	  "name too long" },
};

TEST(malformed_strings_name_the_fault_and_keep_previous)
{
	struct kc_algo_conf c, before;
	struct kc_cfg_err e;
	char err[KC_CFG_ERR_LEN], want[32];
	u32 i;

	ASSERT_GE(ARRAY_SIZE(bad), 40);
	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:NB", &c, err, sizeof(err)));
	before = c;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, kc_cfg_parse_ex(bad[i].s, &c, &e)) {
			TH_LOG("'%s' was accepted", bad[i].s);
			continue;
		}
		EXPECT_EQ(bad[i].kind, e.kind) TH_LOG("'%s': kind %u", bad[i].s, e.kind);
		EXPECT_EQ(bad[i].off, e.off) TH_LOG("'%s': offset %u", bad[i].s, e.off);
		EXPECT_EQ(bad[i].len, e.len) TH_LOG("'%s': length %u", bad[i].s, e.len);
		EXPECT_STREQ(bad[i].hint ?: "(none)", e.hint ?: "(none)") {
			TH_LOG("'%s': hint", bad[i].s);
		}
		EXPECT_EQ(-EINVAL, kc_cfg_parse(bad[i].s, &c, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, bad[i].what)) {
			TH_LOG("'%s': '%s', expected '%s'", bad[i].s, err, bad[i].what);
		}
		snprintf(want, sizeof(want), "at column %u\n", bad[i].off + 1);
		EXPECT_NE(NULL, strstr(err, want)) TH_LOG("'%s': '%s'", bad[i].s, err);
		EXPECT_NE(NULL, strstr(err, "\n  expected ")) {
			TH_LOG("'%s': no expected form in '%s'", bad[i].s, err);
		}
		EXPECT_EQ(0, memcmp(&c, &before, sizeof(c)));
	}
	TH_LOG("%zu malformed strings", ARRAY_SIZE(bad));
}

/* The caret sits under the fault, as long as the faulty token. */
TEST(message_echoes_the_string_with_a_caret)
{
	struct kc_algo_conf c;
	char err[KC_CFG_ERR_LEN];

	ASSERT_EQ(-EINVAL, kc_cfg_parse("level0:rign", &c, err, sizeof(err)));
	EXPECT_STREQ("HCCL_ALGO \"level0:rign\": unknown algorithm \"rign\" at column 8\n"
		     "  level0:rign\n"
		     "         ^~~~\n"
		     "  expected one of ring, H-D_R, NHR, NB, AHC, AHC_BROKE, pipeline, pairwise, "
		     "fullmesh, mesh, tree, NA or null; did you mean \"ring\"?", err);
	/* a tab shows as a space, so the caret still lines up */
	ASSERT_EQ(-EINVAL, kc_cfg_parse("level1:\tring;", &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "\n  level1: ring;\n              ^\n")) TH_LOG("%s", err);
}

/* The kernel's form: one line, nothing of the string, column and expected form. */
TEST(short_form_quotes_nothing)
{
	struct kc_algo_conf c;
	struct kc_cfg_err e;
	char err[256];

	ASSERT_EQ(-EINVAL, kc_cfg_parse_ex("level1 ring", &c, &e));
	kc_cfg_strerror(NULL, &e, err, sizeof(err));
	EXPECT_STREQ("HCCL_ALGO: missing ':' after the level at column 7; expected levelN:<algo>",
		     err);
	ASSERT_EQ(-EINVAL, kc_cfg_parse_ex("level1:secretname", &c, &e));
	kc_cfg_strerror(NULL, &e, err, sizeof(err));
	EXPECT_EQ(NULL, strstr(err, "secret")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
	/* truncation keeps a terminated string */
	kc_cfg_strerror(NULL, &e, err, 20);
	EXPECT_EQ(19, strlen(err));
}

/* Spaces around any token and inside names are ignored, as HCCL strips them. */
TEST(spaces_are_ignored_everywhere)
{
	struct kc_algo_conf a, b;
	char err[KC_CFG_ERR_LEN];

	ASSERT_EQ(0, kc_cfg_parse("level0:NA;level1:NHR", &a, err, sizeof(err)));
	ASSERT_EQ(0, kc_cfg_parse(" level0 : NA ;\tlevel1:N HR ", &b, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
}

TEST(overlong_string_is_refused)
{
	static char s[KC_CFG_MAX_LEN + 16];
	struct kc_algo_conf c;
	char err[KC_CFG_ERR_LEN];

	memset(s, ' ', sizeof(s) - 1);
	memcpy(s, "level1:ring", 11);
	EXPECT_EQ(-EINVAL, kc_cfg_parse(s, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "string too long at column 1025\n")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "expected at most 1024 characters")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
