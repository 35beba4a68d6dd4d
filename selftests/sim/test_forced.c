// SPDX-License-Identifier: GPL-2.0
/*
 * A forced algorithm runs on the level it names, or on the merged level
 * it belongs to, or the plan says what ran instead and why
 * (Documentation/algorithms.md, "Forced algorithms").  One test per layout
 * of the issue, each through the HCCL_ALGO path the module takes
 * (kc_cfg_parse(), kc_cfg_for_op(), kc_plan_build()) on every rank:
 *
 *  - level0:tree;level1:NA AllReduce on 4 servers x 2 ranks: Tree inside
 *    the servers at every size, never Pipeline or AHC built over it;
 *  - level0:pairwise;level1:NA AlltoAll on 4 x 2: Pairwise over all ranks
 *    (the one phase takes the highest configured level's algorithm);
 *  - level2:ring and level2:tree on super-nodes of 1 and 3 servers (1 and
 *    2 ranks per server), where level1 and level2 merge: Ring and Tree
 *    run on the merged level;
 *
 * and the documented fallbacks, which must be in plan->fallback and the
 * note: an algorithm that cannot run the operation (Ring AlltoAll), or
 * its level's part of it (Tree below the top level of a Broadcast), a
 * merged level's other configuration, a lower level's algorithm in
 * AlltoAll, a builder configured over a level.  A plan that runs what is
 * configured carries no fallback.  Where the running algorithm is named,
 * the plan is also compared step by step with the plan of the same
 * algorithm given directly, so the name cannot hide another algorithm.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kc_cfg.h"
#include "kc_cost.h"
#include "kc_plan.h"

#define L0 KC_LEVEL_BIT(KCOLL_LEVEL0)
#define L1 KC_LEVEL_BIT(KCOLL_LEVEL1)
#define L2 KC_LEVEL_BIT(KCOLL_LEVEL2)

static const u64 sizes[] = { 64, 4096, 65536, 1 << 20, 16 << 20, 64 << 20 };

/* The operation of @bytes (nccl-tests size: per-rank ops move bytes / p each). */
static struct kc_op_desc op_of(u32 op, u64 bytes, u32 nranks)
{
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = bytes / 4, .root = nranks - 1 };

	if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_SCATTER ||
	    op == KCOLL_OP_GATHER || op == KCOLL_OP_ALLTOALL)
		d.count /= nranks;
	return d;
}

/* What HCCL_ALGO @s gives @op, as the module resolves it. */
static struct kc_algo_cfg cfg_of(struct __test_metadata *_metadata, const char *s, u32 op)
{
	struct kc_algo_cfg c = { .pipe_bytes = 0 };
	struct kc_algo_conf conf;
	char err[160];

	EXPECT_EQ(0, kc_cfg_parse(s, &conf, err, sizeof(err))) TH_LOG("%s: %s", s, err);
	kc_cfg_for_op(&conf, op, &c, NULL, 0);
	return c;
}

/* FNV-1a over the expanded steps (peers as global ranks). */
static u64 plan_hash(const struct kc_plan *p)
{
	u64 h = 1469598103934665603ull, v[7];
	struct kc_round_it ri;
	struct kc_step_it it;
	struct kc_step st;
	bool more;
	u32 i;

	for (more = kc_plan_round_first(p, &ri); more; more = kc_plan_round_next(p, &ri)) {
		h = (h ^ 0x5eed) * 1099511628211ull;
		kc_plan_steps_begin(p, &ri, &it);
		while (kc_plan_step_next(p, &it, &st)) {
			v[0] = st.kind;
			v[1] = st.buf;
			v[2] = st.sbuf;
			v[3] = st.kind <= KC_STEP_RECV_REDUCE ? p->peers[st.peer] : 0;
			v[4] = st.off;
			v[5] = st.len;
			v[6] = st.soff;
			for (i = 0; i < 7; i++)
				h = (h ^ v[i]) * 1099511628211ull;
		}
	}
	return h;
}

struct outcome {
	u32 algo[KCOLL_LEVEL_COUNT];	/* rank 0's plan */
	u32 fallback;
	char note[KC_PLAN_MAX_NOTE];
	u64 hash[8];			/* the first ranks' plans */
	bool ok;
};

/*
 * Build every rank's plan of @d under @cfg; they must agree on what runs
 * and on the fallback.  Returns rank 0's view in *o.
 */
static void build_all(struct __test_metadata *_metadata, const struct kc_topo *t,
		      const struct kc_op_desc *d, const struct kc_algo_cfg *cfg,
		      struct outcome *o)
{
	char err[160];
	u32 r;

	memset(o, 0, sizeof(*o));
	for (r = 0; r < t->nranks; r++) {
		struct kc_plan *p;

		ASSERT_EQ(0, kc_plan_build(t, r, d, cfg, &p, err, sizeof(err)))
			TH_LOG("%s rank %u: %s", kc_op_name(d->op), r, err);
		if (!r) {
			memcpy(o->algo, p->algo, sizeof(o->algo));
			o->fallback = p->fallback;
			memcpy(o->note, p->note, sizeof(o->note));
		}
		EXPECT_EQ(0, memcmp(o->algo, p->algo, sizeof(o->algo))) TH_LOG("rank %u differs", r);
		EXPECT_EQ(o->fallback, p->fallback) TH_LOG("rank %u differs", r);
		if (r < 8)
			o->hash[r] = plan_hash(p);
		kc_plan_free(p);
	}
	o->ok = true;
}

/* The plans of @want given directly (no HCCL_ALGO) are the same steps. */
static void same_as(struct __test_metadata *_metadata, const struct kc_topo *t,
		    const struct kc_op_desc *d, const struct outcome *o, u32 l0, u32 l1, u32 l2)
{
	struct kc_algo_cfg direct = { .algo = { l0, l1, l2 } };
	struct outcome x;
	u32 r;

	build_all(_metadata, t, d, &direct, &x);
	for (r = 0; r < t->nranks && r < 8; r++)
		EXPECT_EQ(x.hash[r], o->hash[r])
			TH_LOG("%s: rank %u does not run %s/%s/%s", kc_op_name(d->op), r,
			       kc_algo_name(l0), kc_algo_name(l1), kc_algo_name(l2));
}

static bool is_builder(u32 algo)
{
	const struct kc_algo_ops *a = kc_algo_get(algo);

	return a && a->build;
}

/* Case 1: level0:tree;level1:NA AllReduce on 4 servers x 2 ranks. */
TEST(allreduce_level0_tree_4x2)
{
	struct kc_topo t;
	u32 i;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct kc_op_desc d = op_of(KCOLL_OP_ALLREDUCE, sizes[i], t.nranks);
		struct kc_algo_cfg cfg = cfg_of(_metadata, "level0:tree;level1:NA",
						KCOLL_OP_ALLREDUCE), out;
		struct outcome o;

		kc_select_cfg(&t, &d, &cfg, NULL, &out);
		build_all(_metadata, &t, &d, &cfg, &o);
		EXPECT_EQ(KCOLL_ALGO_TREE, o.algo[KCOLL_LEVEL0])
			TH_LOG("%llu B: level0 runs %s", (unsigned long long)sizes[i],
			       kc_algo_name(o.algo[KCOLL_LEVEL0]));
		EXPECT_FALSE(is_builder(o.algo[KCOLL_LEVEL1]))
			TH_LOG("%llu B: %s built over level0:tree", (unsigned long long)sizes[i],
			       kc_algo_name(o.algo[KCOLL_LEVEL1]));
		EXPECT_NE(KCOLL_ALGO_AUTO, o.algo[KCOLL_LEVEL1]);
		/* selection (explain's prediction) and the plan agree */
		EXPECT_EQ(out.algo[KCOLL_LEVEL1], o.algo[KCOLL_LEVEL1]);
		EXPECT_EQ(0, o.fallback) TH_LOG("note: %s", o.note);
		EXPECT_EQ('\0', o.note[0]) TH_LOG("note: %s", o.note);
		same_as(_metadata, &t, &d, &o, KCOLL_ALGO_TREE, o.algo[KCOLL_LEVEL1],
			KCOLL_ALGO_AUTO);
	}
	kc_topo_free(&t);
}

/*
 * Tree cannot run a Broadcast below the top level (it has no Scatter and
 * AllGather): the documented fallback, said in the plan.
 */
TEST(broadcast_level0_tree_4x2_falls_back_with_a_note)
{
	struct kc_topo t;
	u32 i;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct kc_op_desc d = op_of(KCOLL_OP_BROADCAST, sizes[i], t.nranks);
		struct kc_algo_cfg cfg = cfg_of(_metadata, "level0:tree;level1:NA",
						KCOLL_OP_BROADCAST);
		struct outcome o;

		build_all(_metadata, &t, &d, &cfg, &o);
		EXPECT_NE(KCOLL_ALGO_TREE, o.algo[KCOLL_LEVEL0]);
		EXPECT_EQ(L0, o.fallback) TH_LOG("note: %s", o.note);
		EXPECT_NE(NULL, strstr(o.note, "level0 tree cannot run broadcast below the top level"))
			TH_LOG("note: %s", o.note);
	}
	kc_topo_free(&t);
}

/* Case 2: level0:pairwise;level1:NA AlltoAll on 4 servers x 2 ranks. */
TEST(alltoall_level0_pairwise_4x2)
{
	struct kc_topo t;
	u32 i;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct kc_op_desc d = op_of(KCOLL_OP_ALLTOALL, sizes[i], t.nranks);
		struct kc_algo_cfg cfg = cfg_of(_metadata, "level0:pairwise;level1:NA",
						KCOLL_OP_ALLTOALL), out;
		struct outcome o;

		kc_select_cfg(&t, &d, &cfg, NULL, &out);
		build_all(_metadata, &t, &d, &cfg, &o);
		EXPECT_EQ(KCOLL_ALGO_PAIRWISE, o.algo[KCOLL_LEVEL0])
			TH_LOG("%llu B: level0 shows %s", (unsigned long long)sizes[i],
			       kc_algo_name(o.algo[KCOLL_LEVEL0]));
		EXPECT_EQ(KCOLL_ALGO_PAIRWISE, o.algo[KCOLL_LEVEL1])
			TH_LOG("%llu B: the phase runs %s", (unsigned long long)sizes[i],
			       kc_algo_name(o.algo[KCOLL_LEVEL1]));
		EXPECT_EQ(KCOLL_ALGO_PAIRWISE, out.algo[KCOLL_LEVEL1]);
		EXPECT_EQ(0, o.fallback) TH_LOG("note: %s", o.note);
		same_as(_metadata, &t, &d, &o, KCOLL_ALGO_AUTO, KCOLL_ALGO_PAIRWISE,
			KCOLL_ALGO_AUTO);
	}
	kc_topo_free(&t);
}

/* A level above configures AlltoAll's one phase: the lower level is told. */
TEST(alltoall_higher_level_wins_with_a_note)
{
	struct kc_algo_cfg cfg;
	struct kc_op_desc d;
	struct kc_topo t;
	struct outcome o;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	d = op_of(KCOLL_OP_ALLTOALL, 65536, t.nranks);
	cfg = cfg_of(_metadata, "level0:pairwise;level1:NB", KCOLL_OP_ALLTOALL);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_EQ(KCOLL_ALGO_NB, o.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(L0, o.fallback);
	EXPECT_NE(NULL, strstr(o.note, "level0 pairwise not run: alltoall is one phase, NB"))
		TH_LOG("note: %s", o.note);
	/*
	 * No level configures one: automatic, nothing to report, and no
	 * algorithm shown at level0, which a flat phase does not run on its own
	 */
	d = op_of(KCOLL_OP_ALLTOALL, 64, t.nranks);
	cfg = cfg_of(_metadata, "", KCOLL_OP_ALLTOALL);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_EQ(0, o.fallback);
	EXPECT_FALSE(is_builder(o.algo[KCOLL_LEVEL1]));
	EXPECT_EQ(KCOLL_ALGO_AUTO, o.algo[KCOLL_LEVEL0]) TH_LOG("level0 shows %s",
								kc_algo_name(o.algo[KCOLL_LEVEL0]));
	kc_topo_free(&t);
}

/* Case 3: super-nodes of 1 and 3 servers; level1 and level2 merge. */
static void merged_level2(struct __test_metadata *_metadata, u32 per_server, const char *algo,
			  u32 want)
{
	static const u32 ops[] = {
		KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER, KCOLL_OP_ALLGATHER,
		KCOLL_OP_BROADCAST, KCOLL_OP_REDUCE, KCOLL_OP_SCATTER, KCOLL_OP_GATHER,
		KCOLL_OP_BARRIER,
	};
	static const u32 pods[] = { 1, 3 };
	const struct kc_algo_ops *a = kc_algo_get(want);
	struct kc_topo t;
	u32 i, k;

	ASSERT_EQ(0, kc_topo_init_pods(&t, 2, pods, per_server));
	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i += 2) {
			struct kc_op_desc d = op_of(ops[k], sizes[i], t.nranks);
			struct kc_algo_cfg cfg = cfg_of(_metadata, algo, ops[k]);
			struct outcome o;

			build_all(_metadata, &t, &d, &cfg, &o);
			if (!kc_algo_supports(a, ops[k])) {
				/* e.g. Tree has no AllGather: the documented fallback */
				EXPECT_EQ(L2, o.fallback);
				EXPECT_NE(NULL, strstr(o.note, "level2 ")) TH_LOG("%s", o.note);
				EXPECT_NE(NULL, strstr(o.note, "cannot run")) TH_LOG("%s", o.note);
				continue;
			}
			EXPECT_EQ(want, o.algo[KCOLL_LEVEL2])
				TH_LOG("%s %s on %ux%u: level2 shows %s", algo, kc_op_name(ops[k]),
				       per_server, t.nservers, kc_algo_name(o.algo[KCOLL_LEVEL2]));
			EXPECT_EQ(want, o.algo[KCOLL_LEVEL1])
				TH_LOG("%s %s: the merged level runs %s", algo, kc_op_name(ops[k]),
				       kc_algo_name(o.algo[KCOLL_LEVEL1]));
			EXPECT_EQ(0, o.fallback) TH_LOG("note: %s", o.note);
			same_as(_metadata, &t, &d, &o, o.algo[KCOLL_LEVEL0], want, KCOLL_ALGO_AUTO);
		}
	}
	kc_topo_free(&t);
}

TEST(merged_level2_ring_pods_1_3)
{
	merged_level2(_metadata, 1, "level0:NA;level1:NA;level2:ring", KCOLL_ALGO_RING);
	merged_level2(_metadata, 2, "level0:NA;level1:NA;level2:ring", KCOLL_ALGO_RING);
}

TEST(merged_level2_tree_pods_1_3)
{
	merged_level2(_metadata, 1, "level0:NA;level1:NA;level2:tree", KCOLL_ALGO_TREE);
	merged_level2(_metadata, 2, "level0:NA;level1:NA;level2:tree", KCOLL_ALGO_TREE);
}

/* Both merged levels configured: level1's runs, level2's is reported. */
TEST(merged_levels_both_configured_with_a_note)
{
	static const u32 pods[] = { 1, 3 };
	struct kc_algo_cfg cfg;
	struct kc_op_desc d;
	struct kc_topo t;
	struct outcome o;

	ASSERT_EQ(0, kc_topo_init_pods(&t, 2, pods, 2));
	d = op_of(KCOLL_OP_ALLREDUCE, 1 << 20, t.nranks);
	cfg = cfg_of(_metadata, "level1:NHR;level2:ring", KCOLL_OP_ALLREDUCE);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_EQ(KCOLL_ALGO_NHR, o.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(L2, o.fallback);
	EXPECT_NE(NULL, strstr(o.note, "level2 ring not run: merged into level1, which runs NHR"))
		TH_LOG("note: %s", o.note);
	kc_topo_free(&t);
}

/* An algorithm that cannot run the operation at all: kc_cfg_for_op()'s fallback. */
TEST(op_fallback_is_in_the_plan)
{
	struct kc_algo_cfg cfg;
	struct kc_op_desc d;
	struct kc_topo t;
	struct outcome o;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 1));
	d = op_of(KCOLL_OP_ALLTOALL, 4096, t.nranks);
	cfg = cfg_of(_metadata, "level1:ring", KCOLL_OP_ALLTOALL);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_NE(KCOLL_ALGO_RING, o.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(L1, o.fallback);
	EXPECT_NE(NULL, strstr(o.note, "level1 ring cannot run alltoall, "))
		TH_LOG("note: %s", o.note);
	/* a level the topology does not have runs nothing: nothing to report */
	d = op_of(KCOLL_OP_ALLREDUCE, 4096, t.nranks);
	cfg = cfg_of(_metadata, "level0:tree;level1:ring", KCOLL_OP_ALLREDUCE);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_EQ(KCOLL_ALGO_RING, o.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(0, o.fallback) TH_LOG("note: %s", o.note);
	kc_topo_free(&t);
}

/* A whole-operation builder configured over a level that runs something else. */
TEST(builder_over_a_configured_level_is_reported)
{
	struct kc_algo_cfg cfg;
	struct kc_op_desc d;
	struct kc_topo t;
	struct outcome o;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	d = op_of(KCOLL_OP_ALLREDUCE, 1 << 20, t.nranks);
	cfg = cfg_of(_metadata, "level0:ring;level1:AHC", KCOLL_OP_ALLREDUCE);
	build_all(_metadata, &t, &d, &cfg, &o);
	EXPECT_EQ(KCOLL_ALGO_AHC, o.algo[KCOLL_LEVEL1]);
	EXPECT_EQ(L0, o.fallback);
	EXPECT_NE(NULL, strstr(o.note, "level0 ring not run: AHC builds the whole operation"))
		TH_LOG("note: %s", o.note);
	/* the builder's own note follows */
	EXPECT_NE(NULL, strstr(o.note, "; AHC 4 groups")) TH_LOG("note: %s", o.note);
	kc_topo_free(&t);
}

/* What is configured and runs, and what is automatic, carries no fallback. */
TEST(no_fallback_where_nothing_is_dropped)
{
	static const char *const algos[] = {
		"", "level0:NA;level1:ring", "level1:H-D_R", "level1:AHC", "level1:pipeline",
		"level0:fullmesh;level1:NHR",
	};
	static const u32 ops[] = { KCOLL_OP_ALLREDUCE, KCOLL_OP_REDUCESCATTER,
				   KCOLL_OP_ALLGATHER };
	struct kc_topo t;
	u32 a, k;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	for (a = 0; a < ARRAY_SIZE(algos); a++)
		for (k = 0; k < ARRAY_SIZE(ops); k++) {
			struct kc_op_desc d = op_of(ops[k], 1 << 20, t.nranks);
			struct kc_algo_cfg cfg = cfg_of(_metadata, algos[a], ops[k]);
			struct outcome o;

			build_all(_metadata, &t, &d, &cfg, &o);
			EXPECT_EQ(0, o.fallback) TH_LOG("'%s' %s: %s", algos[a],
							kc_op_name(ops[k]), o.note);
		}
	kc_topo_free(&t);
}

TEST_HARNESS_MAIN
