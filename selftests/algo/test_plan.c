// SPDX-License-Identifier: GPL-2.0
/*
 * Compact plans expand to exactly the steps they stand for.
 *
 * Two oracles.  First, every plan built compact (repeats of steps) is
 * walked with the plan iterators and compared, round by round and step by
 * step (kind, peer rank, buffers, offsets, lengths, flags), against the
 * same plan written out by the builder (kc_plan_build_explicit()), over
 * every algorithm, op, topology shape, size and rank of a sweep.  That
 * checks the records, the iterators, empty steps and empty rounds, and the
 * peer indices.  Second, independent rules: the AllReduce transfers of
 * Ring, Pairwise and Mesh computed here from the published step rules
 * (not through the builder) must be the transfers of the plan.  The data
 * tests (test_algo) then check that what the executor does with the
 * expansion reduces bit for bit.  kc_plan_writes_buf() must say of each
 * buffer what the written-out steps do (the kernel pins a send buffer the
 * plan never writes for reading only).
 */
#include <stdio.h>
#include <stdlib.h>
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kc_coll.h"

static u64 ncases, ncompact;

/* A flat list of one plan's expansion: the round of each step and the step. */
struct flat {
	u32 n, cap;
	u32 *round;
	struct kc_step *st;
};

static int flat_push(struct flat *f, u32 round, const struct kc_step *s)
{
	if (f->n == f->cap) {
		u32 cap = f->cap ? 2 * f->cap : 64;
		u32 *r = realloc(f->round, cap * sizeof(*r));
		struct kc_step *st;

		if (!r)
			return -ENOMEM;
		f->round = r;
		st = realloc(f->st, cap * sizeof(*st));
		if (!st)
			return -ENOMEM;
		f->st = st;
		f->cap = cap;
	}
	f->round[f->n] = round;
	f->st[f->n++] = *s;
	return 0;
}

static void flat_free(struct flat *f)
{
	free(f->round);
	free(f->st);
	memset(f, 0, sizeof(*f));
}

/*
 * Expand a plan, peers as global ranks.  xfer_only keeps transfers only
 * and numbers only the rounds that have one.
 */
static int flatten(const struct kc_plan *p, bool xfer_only, struct flat *f)
{
	struct kc_round_it r;
	struct kc_step_it it;
	struct kc_step s;
	u32 round = 0;
	bool more;

	for (more = kc_plan_round_first(p, &r); more; more = kc_plan_round_next(p, &r)) {
		bool any = false;

		kc_plan_steps_begin(p, &r, &it);
		while (kc_plan_step_next(p, &it, &s)) {
			if (s.kind <= KC_STEP_RECV_REDUCE) {
				if (s.peer >= p->npeers)
					return -EPROTO;
				s.peer = p->peers[s.peer];
			} else if (xfer_only) {
				continue;
			}
			if (s.kind >= KC_STEP_KIND_COUNT || (s.flags & ~KC_STEP_F_SYNC) ||
			    (!s.len && !(s.flags & KC_STEP_F_SYNC)))
				return -EPROTO;
			if (flat_push(f, round, &s))
				return -ENOMEM;
			any = true;
		}
		if (any || !xfer_only)
			round++;
	}
	return 0;
}

static bool step_eq(const struct kc_step *a, const struct kc_step *b)
{
	return a->kind == b->kind && a->buf == b->buf && a->flags == b->flags &&
	       a->peer == b->peer && a->off == b->off && a->len == b->len &&
	       (a->kind < KC_STEP_COPY || (a->sbuf == b->sbuf && a->soff == b->soff));
}

static void print_step(const char *who, u32 round, const struct kc_step *s)
{
	fprintf(stderr, "#   %s: round %u kind %u peer %u buf %u off %llu len %llu flags %u\n",
		who, round, s->kind, s->peer, s->buf, (unsigned long long)s->off,
		(unsigned long long)s->len, s->flags);
}

/* First difference between two expansions, or -1. */
static long flat_diff(const struct flat *a, const struct flat *b)
{
	u32 i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (a->round[i] != b->round[i] || !step_eq(&a->st[i], &b->st[i]))
			return i;
	return a->n == b->n ? -1 : (long)i;
}

static void report_diff(const char *what, const struct flat *a, const struct flat *b, long i)
{
	fprintf(stderr, "# %s: %u vs %u steps, first difference at step %ld\n", what, a->n,
		b->n, i);
	if (i < a->n)
		print_step("compact ", a->round[i], &a->st[i]);
	if (i < b->n)
		print_step("expected", b->round[i], &b->st[i]);
}

struct shape {
	const char *name;
	u32 npods, servers, per_server;	/* npods 0: flat */
};

/* Compare compact and written-out builds of one case; 1 if they differ. */
static int compare_case(const struct kc_topo *t, const char *tname, u32 rank,
			const struct kc_op_desc *op, u32 algo)
{
	struct kc_algo_cfg cfg = { .algo = { algo, algo, algo } };
	struct kc_plan *pc = NULL, *pe = NULL;
	struct flat fc = { 0 }, fe = { 0 };
	int rc, re, bad = 0;
	char what[200];
	long d;

	snprintf(what, sizeof(what), "%s %s %s p=%u rank=%u count=%llu root=%u flags=%u",
		 kc_algo_name(algo), kc_op_name(op->op), tname, t->nranks, rank,
		 (unsigned long long)op->count, op->root, op->flags);
	rc = kc_plan_build(t, rank, op, &cfg, &pc, NULL, 0);
	re = kc_plan_build_explicit(t, rank, op, &cfg, &pe, NULL, 0);
	if (rc != re) {
		fprintf(stderr, "# %s: compact build %d, explicit build %d\n", what, rc, re);
		bad = 1;
		goto out;
	}
	if (rc)
		goto out;	/* the same refusal both ways (-EOPNOTSUPP) */
	ncases++;
	if (pc->nprogs)
		ncompact++;
	if (flatten(pc, false, &fc) || flatten(pe, false, &fe)) {
		fprintf(stderr, "# %s: a plan does not expand\n", what);
		bad = 1;
		goto out;
	}
	d = flat_diff(&fc, &fe);
	if (d >= 0) {
		report_diff(what, &fc, &fe, d);
		bad = 1;
	}
	/* kc_plan_writes_buf() of either build: what the written-out steps write. */
	for (u8 b = 0; b < KC_BUF_COUNT; b++) {
		bool w = false;

		for (u32 i = 0; i < fe.n && !w; i++)
			w = fe.st[i].kind != KC_STEP_SEND && fe.st[i].buf == b;
		if (kc_plan_writes_buf(pc, b) != w || kc_plan_writes_buf(pe, b) != w) {
			fprintf(stderr, "# %s: kc_plan_writes_buf(%u) %d/%d, steps say %d\n",
				what, b, kc_plan_writes_buf(pc, b), kc_plan_writes_buf(pe, b), w);
			bad = 1;
		}
	}
	if (pe->nprogs || pc->scratch_bytes != pe->scratch_bytes ||
	    kc_plan_bytes_sent(pc) != kc_plan_bytes_sent(pe) ||
	    kc_plan_bytes_received(pc) != kc_plan_bytes_received(pe)) {
		fprintf(stderr, "# %s: records %u vs %u, scratch or byte totals differ\n", what,
			pc->nsteps, pe->nsteps);
		bad = 1;
	}
out:
	flat_free(&fc);
	flat_free(&fe);
	kc_plan_free(pc);
	kc_plan_free(pe);
	return bad;
}

static bool quick(void)
{
	const char *q = getenv("KC_TEST_QUICK");

	return q && q[0] == '1';
}

TEST(compact_plans_expand_to_the_written_out_plans)
{
	static const struct shape shapes[] = {
		{ "flat", 0, 0, 0 },
		{ "servers of 2", 1, 0, 2 },
		{ "servers of 4", 1, 0, 4 },
		{ "2 pods, servers of 2", 2, 0, 2 },
	};
	static const u32 flat_p[] = { 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 33 };
	u32 fails = 0, si, pi, algo, opc, ci, rank, inplace;

	for (si = 0; si < ARRAY_SIZE(shapes); si++) {
		for (pi = 0; pi < ARRAY_SIZE(flat_p); pi++) {
			u32 p = flat_p[pi];
			const struct shape *sh = &shapes[si];
			struct kc_topo t;
			u64 counts[5] = { 0, 1, p ? p - 1 : 0, 3 * (u64)p + 2, 1000 };
			u32 step = quick() && p > 9 ? 5 : 1;

			if (sh->npods) {
				u32 per = sh->per_server, per_pod = p / per / sh->npods;

				if (!per_pod || p % (per * sh->npods))
					continue;
				ASSERT_EQ(0, kc_topo_init_regular(&t, sh->npods, per_pod, per));
			} else {
				ASSERT_EQ(0, kc_topo_init(&t, p, NULL, NULL, NULL, 0));
			}
			for (algo = 1; algo < KCOLL_ALGO_COUNT; algo++)
			for (opc = 0; opc < KCOLL_OP_COUNT; opc++)
			for (ci = 0; ci < ARRAY_SIZE(counts); ci++)
			for (inplace = 0; inplace < 2; inplace++)
			for (rank = 0; rank < p; rank += step) {
				struct kc_op_desc op = {
					.op = opc, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
					.root = (rank + 1) % p, .count = counts[ci],
					.flags = inplace ? KC_OP_F_INPLACE : 0,
				};

				if (opc == KCOLL_OP_ALLTOALLV)
					continue;	/* arrays of counts, never compact */
				if (opc == KCOLL_OP_BARRIER && (ci || inplace))
					continue;
				fails += compare_case(&t, sh->name, rank, &op, algo);
			}
			kc_topo_free(&t);
		}
	}
	printf("# %llu plans compared, %llu of them compact\n", (unsigned long long)ncases,
	       (unsigned long long)ncompact);
	fflush(stdout);
	EXPECT_EQ(0, fails);
	EXPECT_LT(1000, ncompact);
}

/* ----------------------------------------------------- reference rules */

static u32 mod(s64 i, u32 p)
{
	s64 r = i % p;

	return (u32)(r < 0 ? r + p : r);
}

/* Block i of count elements cut into p blocks, the first count % p longer. */
static void blk(u64 count, u32 p, u32 i, u64 *off, u64 *len)
{
	u64 q = count / p, r = count % p;
	u64 a = i * q + (i < r ? i : r), z = (i + 1) * q + (i + 1 < r ? i + 1 : r);

	*off = a * 4;
	*len = (z - a) * 4;
}

static int ref_push(struct flat *f, u32 round, u8 kind, u32 peer, u64 count, u32 p, u32 b)
{
	struct kc_step s = { .kind = kind, .buf = KC_BUF_RECV, .peer = peer };

	blk(count, p, b, &s.off, &s.len);
	if (!s.len)
		return 0;
	return flat_push(f, round, &s);
}

/* Close a reference round: rounds with no transfer do not count. */
static void ref_round(const struct flat *f, u32 *round)
{
	if (f->n && f->round[f->n - 1] == *round)
		(*round)++;
}

/*
 * In-place AllReduce of count fp32 on the receive buffer, transfers only,
 * from the published step rules of Mesh, Ring and Pairwise.
 */
static int reference(u32 algo, u32 p, u32 me, u64 count, struct flat *f)
{
	u32 r = 0, k, pass;
	int err = 0;

	for (pass = 0; pass < 2; pass++) {
		bool rs = pass == 0;
		u8 rx = rs ? KC_STEP_RECV_REDUCE : KC_STEP_RECV;

		switch (algo) {
		case KCOLL_ALGO_RING:
			/* RS: send block me - 1 - k, reduce me - 2 - k; AG: me - k, me - k - 1 */
			for (k = 0; k + 1 < p; k++) {
				s64 x = (s64)me - (rs ? 1 : 0) - k;

				err |= ref_push(f, r, KC_STEP_SEND, mod(me + 1, p), count, p, mod(x, p));
				err |= ref_push(f, r, rx, mod((s64)me - 1, p), count, p, mod(x - 1, p));
				ref_round(f, &r);
			}
			break;
		case KCOLL_ALGO_PAIRWISE:
			for (k = 1; k < p; k++) {
				u32 to = mod(me + k, p), from = mod((s64)me - k, p);

				err |= ref_push(f, r, KC_STEP_SEND, to, count, p, rs ? to : me);
				err |= ref_push(f, r, rx, from, count, p, rs ? me : from);
				ref_round(f, &r);
			}
			break;
		case KCOLL_ALGO_MESH:
			for (k = 1; k < p; k++) {
				u32 j = mod(me + k, p);

				err |= ref_push(f, r, KC_STEP_SEND, j, count, p, rs ? j : me);
				err |= ref_push(f, r, rx, j, count, p, rs ? me : j);
			}
			ref_round(f, &r);
			break;
		}
	}
	return err;
}

TEST(allreduce_follows_the_published_step_rules)
{
	static const u32 algos[] = { KCOLL_ALGO_RING, KCOLL_ALGO_PAIRWISE, KCOLL_ALGO_MESH };
	static const u32 ps[] = { 2, 3, 5, 8, 13, 64, 100, 1000 };
	u32 ai, pi, fails = 0, n = 0;

	for (ai = 0; ai < ARRAY_SIZE(algos); ai++) {
		for (pi = 0; pi < ARRAY_SIZE(ps); pi++) {
			u32 p = ps[pi], ci, rank;
			u64 counts[4] = { 1, p - 1, 7 * (u64)p + 3, 1 << 20 };
			struct kc_topo t;

			ASSERT_EQ(0, kc_topo_init(&t, p, NULL, NULL, NULL, 0));
			for (ci = 0; ci < ARRAY_SIZE(counts); ci++) {
				for (rank = 0; rank < p; rank += p > 16 ? p / 7 : 1) {
					struct kc_algo_cfg cfg = { .algo = { algos[ai], algos[ai],
									     algos[ai] } };
					struct kc_op_desc op = { .op = KCOLL_OP_ALLREDUCE,
								 .dtype = KCOLL_FP32,
								 .redop = KCOLL_SUM,
								 .count = counts[ci],
								 .flags = KC_OP_F_INPLACE };
					struct flat got = { 0 }, want = { 0 };
					struct kc_plan *plan = NULL;
					char what[160];
					long d;

					snprintf(what, sizeof(what), "%s allreduce p=%u rank=%u count=%llu",
						 kc_algo_name(algos[ai]), p, rank,
						 (unsigned long long)counts[ci]);
					ASSERT_EQ(0, kc_plan_build(&t, rank, &op, &cfg, &plan, NULL, 0));
					ASSERT_EQ(0, flatten(plan, true, &got));
					ASSERT_EQ(0, reference(algos[ai], p, rank, counts[ci], &want));
					d = flat_diff(&got, &want);
					if (d >= 0) {
						report_diff(what, &got, &want, d);
						fails++;
					}
					/* the rule is O(p): the plan must not be */
					if (p >= 64 && plan->nsteps > 16) {
						fprintf(stderr, "# %s: %u records\n", what, plan->nsteps);
						fails++;
					}
					n++;
					flat_free(&got);
					flat_free(&want);
					kc_plan_free(plan);
				}
			}
			kc_topo_free(&t);
		}
	}
	printf("# %u plans checked against the step rules\n", n);
	fflush(stdout);
	EXPECT_EQ(0, fails);
}

/*
 * Bruck's AlltoAll moves about p / 2 blocks in each of its S steps, in
 * runs with gaps: the sweep above stops at p = 33, so check compact ==
 * written out at larger and odd sizes too, and that the plan holds
 * O(S) records, not O(p log p).
 */
TEST(bruck_alltoall_stays_compact_at_large_p)
{
	static const u32 ps[] = { 63, 64, 65, 100, 1000, 4097 };
	u32 pi, fails = 0, n = 0;

	for (pi = 0; pi < ARRAY_SIZE(ps); pi++) {
		u32 p = ps[pi], s = 0, rank, ip;
		struct kc_topo t;

		while ((1u << s) < p)
			s++;
		ASSERT_EQ(0, kc_topo_init(&t, p, NULL, NULL, NULL, 0));
		for (rank = 0; rank < p; rank += p / 5 + 1) {
			for (ip = 0; ip < 2; ip++) {
				struct kc_algo_cfg cfg = { .algo = { KCOLL_ALGO_NB, KCOLL_ALGO_NB,
								     KCOLL_ALGO_NB } };
				struct kc_op_desc op = { .op = KCOLL_OP_ALLTOALL,
							 .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
							 .count = 3,
							 .flags = ip ? KC_OP_F_INPLACE : 0 };
				struct kc_plan *plan = NULL;

				fails += compare_case(&t, "flat", rank, &op, KCOLL_ALGO_NB);
				ASSERT_EQ(0, kc_plan_build(&t, rank, &op, &cfg, &plan, NULL, 0));
				if (plan->nsteps > 12 * s + 4) {
					fprintf(stderr, "# nb alltoall p=%u rank=%u: %u records\n", p,
						rank, plan->nsteps);
					fails++;
				}
				kc_plan_free(plan);
				n++;
			}
		}
		kc_topo_free(&t);
	}
	printf("# %u bruck plans checked\n", n);
	fflush(stdout);
	EXPECT_EQ(0, fails);
}

/* ------------------------------------------------- what plans write */

/*
 * The topologies of the algorithm matrix (test_algo): flat, regular
 * servers and pods, and the asymmetric shapes.
 */
struct wtopo {
	char name[48];
	struct kc_topo t;
};

static u32 wtopos(struct wtopo *out, u32 max)
{
	/* past 64 members a repeat's extent is no longer found by stepping through it */
	static const u32 flat[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33, 66, 100, 130 };
	static const u32 reg[][3] = { { 1, 2, 2 }, { 1, 3, 4 }, { 1, 4, 2 }, { 2, 2, 2 },
				      { 2, 2, 4 }, { 2, 3, 3 }, { 1, 65, 2 }, { 2, 33, 2 } };
	static const struct { u32 npods, servers[3], per; } pods[] = {
		{ 2, { 2, 3 }, 1 }, { 2, { 1, 4 }, 1 }, { 3, { 3, 5, 7 }, 1 },
		{ 2, { 2, 3 }, 2 }, { 3, { 2, 2, 2 }, 2 },
	};
	static const struct { u32 n, nsrv, sizes[3]; } sizes[] = {
		{ 5, 2, { 2, 3 } }, { 5, 2, { 1, 4 } }, { 15, 3, { 3, 5, 7 } },
	};
	u32 n = 0, i;

	for (i = 0; i < ARRAY_SIZE(flat) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "flat");
		if (kc_topo_init(&out[n].t, flat[i], NULL, NULL, NULL, 0))
			return 0;
	}
	for (i = 0; i < ARRAY_SIZE(reg) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "%u pods of %u servers of %u",
			 reg[i][0], reg[i][1], reg[i][2]);
		if (kc_topo_init_regular(&out[n].t, reg[i][0], reg[i][1], reg[i][2]))
			return 0;
	}
	for (i = 0; i < ARRAY_SIZE(pods) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "pods of %u+%u+%u servers of %u",
			 pods[i].servers[0], pods[i].servers[1],
			 pods[i].npods > 2 ? pods[i].servers[2] : 0, pods[i].per);
		if (kc_topo_init_pods(&out[n].t, pods[i].npods, pods[i].servers, pods[i].per))
			return 0;
	}
	for (i = 0; i < ARRAY_SIZE(sizes) && n < max; i++, n++) {
		snprintf(out[n].name, sizeof(out[n].name), "servers of %u+%u+%u ranks",
			 sizes[i].sizes[0], sizes[i].sizes[1],
			 sizes[i].nsrv > 2 ? sizes[i].sizes[2] : 0);
		if (kc_topo_init_sizes(&out[n].t, sizes[i].n, sizes[i].nsrv, sizes[i].sizes,
				       NULL, 0))
			return 0;
	}
	return n;
}

/* Per-level mixes: one algorithm everywhere (1..COUNT-1), then these. */
static const u32 wmixes[][3] = {
	{ KCOLL_ALGO_MESH, KCOLL_ALGO_RING, KCOLL_ALGO_RHD },
	{ KCOLL_ALGO_RING, KCOLL_ALGO_NHR, KCOLL_ALGO_NB },
	{ KCOLL_ALGO_MESH, KCOLL_ALGO_RHD, KCOLL_ALGO_TREE },
	{ KCOLL_ALGO_AUTO, KCOLL_ALGO_AUTO, KCOLL_ALGO_AUTO },
};

static void wmix(u32 i, struct kc_algo_cfg *cfg)
{
	u32 l;

	memset(cfg, 0, sizeof(*cfg));
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		cfg->algo[l] = i + 1 < KCOLL_ALGO_COUNT ? i + 1 :
			       wmixes[i + 1 - KCOLL_ALGO_COUNT][l];
}

#define NWMIXES (KCOLL_ALGO_COUNT - 1 + ARRAY_SIZE(wmixes))

/* Does a step reach past the end of a buffer (as kc_op_buf_bytes() sizes them)? */
static bool out_of_bounds(const struct kc_plan *p, const struct kc_op_desc *op)
{
	struct flat f = { 0 };
	u64 size[KC_BUF_COUNT];
	bool out = false;
	u32 i;

	if (flatten(p, false, &f))
		return true;
	kc_op_buf_bytes(op, p->nranks, p->rank, &size[KC_BUF_SEND], &size[KC_BUF_RECV]);
	size[KC_BUF_SCRATCH] = p->scratch_bytes;
	for (i = 0; i < f.n; i++) {
		const struct kc_step *st = &f.st[i];

		if (st->buf >= KC_BUF_COUNT || st->off > size[st->buf] ||
		    st->len > size[st->buf] - st->off)
			out = true;
		if ((st->kind == KC_STEP_COPY || st->kind == KC_STEP_REDUCE) &&
		    (st->sbuf >= KC_BUF_COUNT || st->soff > size[st->sbuf] ||
		     st->len > size[st->sbuf] - st->soff))
			out = true;
	}
	flat_free(&f);
	return out;
}

/* Does the plan write @buf outside [lo, hi)?  (Independent of kc_plan_writes_buf().) */
static bool writes_outside(const struct kc_plan *p, u8 buf, u64 lo, u64 hi)
{
	struct flat f = { 0 };
	bool out = false;
	u32 i;

	if (flatten(p, false, &f))
		return true;
	for (i = 0; i < f.n; i++)
		if (f.st[i].kind != KC_STEP_SEND && f.st[i].buf == buf &&
		    (f.st[i].off < lo || f.st[i].off + f.st[i].len > hi))
			out = true;
	flat_free(&f);
	return out;
}

/*
 * Out of place no plan writes the send buffer (the module may pin it read
 * only), for every op x algorithm (or per-level mix) x topology of the
 * matrix, some ranks and roots, every size class; in place ReduceScatter
 * writes it only in the caller's receive block (the other blocks are the
 * caller's).  No step reaches past its buffer.  And kc_plan_writes_buf()
 * does see writes: every AllReduce writes the receive buffer (but a lone
 * rank in place), every out-of-place ReduceScatter among several ranks
 * its scratch work region (in repeat bodies with Ring, Mesh, Pipeline).
 */
TEST(plans_write_the_send_buffer_only_in_place)
{
	static struct wtopo tp[40];
	u32 nt = wtopos(tp, ARRAY_SIZE(tp)), ti, mi, opc, ci, ip, rank, fails = 0, n = 0;

	ASSERT_LT(20, nt);
	for (ti = 0; ti < nt; ti++)
		ASSERT_GE(256, tp[ti].t.nranks);
	for (ti = 0; ti < nt; ti++) {
		const struct kc_topo *t = &tp[ti].t;
		/* quick (and under ASan in the 30 s of a TEST) fewer ranks of the larger shapes */
		u32 p = t->nranks, step = p > 33 ? (quick() ? 29 : 13) : quick() && p > 9 ? 8 : 1;
		u64 counts[4] = { 1, p > 1 ? p - 1 : 2, 3 * (u64)p + 2, 1000 };

		for (mi = 0; mi < NWMIXES; mi++)
		for (opc = 0; opc < KCOLL_OP_COUNT; opc++)
		for (ci = 0; ci < ARRAY_SIZE(counts); ci++)
		for (ip = 0; ip < 2; ip++)
		for (rank = 0; rank < p; rank += step) {
			u64 scounts[256], displs[256], es = 4, own;
			struct kc_op_desc op = {
				.op = opc, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.root = (rank + ci) % p, .count = counts[ci],
				.flags = ip ? KC_OP_F_INPLACE : 0,
			};
			struct kc_algo_cfg cfg;
			struct kc_plan *plan = NULL;
			char what[200];
			u32 j;

			if (ip && (opc == KCOLL_OP_ALLTOALLV || opc == KCOLL_OP_BARRIER))
				continue;
			if (opc == KCOLL_OP_ALLTOALLV) {
				for (j = 0; j < p; j++) {
					scounts[j] = (j + ci) % 3 * counts[ci];
					displs[j] = j ? displs[j - 1] + scounts[j - 1] + 1 : 0;
				}
				op.scounts = op.rcounts = scounts;
				op.sdispls = op.rdispls = displs;
			}
			wmix(mi, &cfg);
			if (kc_plan_build(t, rank, &op, &cfg, &plan, NULL, 0))
				continue;	/* refused (-EOPNOTSUPP): test_algo checks which */
			n++;
			snprintf(what, sizeof(what), "%.47s p=%u %s/%s/%s %s rank=%u count=%llu root=%u%s",
				 tp[ti].name, p, kc_algo_name(cfg.algo[0]),
				 kc_algo_name(cfg.algo[1]), kc_algo_name(cfg.algo[2]),
				 kc_op_name(opc), rank, (unsigned long long)op.count, op.root,
				 ip ? " in place" : "");
			own = (u64)rank * op.count * es;
			if (out_of_bounds(plan, &op)) {
				fprintf(stderr, "# %s: a step reaches past its buffer\n", what);
				fails++;
			}
			if (!ip && kc_plan_writes_buf(plan, KC_BUF_SEND)) {
				fprintf(stderr, "# %s: writes the send buffer\n", what);
				fails++;
			}
			if (ip && opc == KCOLL_OP_REDUCESCATTER &&
			    writes_outside(plan, KC_BUF_SEND, own, own + op.count * es)) {
				fprintf(stderr, "# %s: writes the send buffer outside block %u\n",
					what, rank);
				fails++;
			}
			if ((opc == KCOLL_OP_ALLREDUCE && (!ip || p > 1) &&
			     !kc_plan_writes_buf(plan, KC_BUF_RECV)) ||
			    (opc == KCOLL_OP_REDUCESCATTER && !ip && p > 1 &&
			     !kc_plan_writes_buf(plan, KC_BUF_SCRATCH))) {
				fprintf(stderr, "# %s: kc_plan_writes_buf() misses a write\n", what);
				fails++;
			}
			kc_plan_free(plan);
			if (fails > 50)
				goto out;
		}
	}
out:
	for (ti = 0; ti < nt; ti++)
		kc_topo_free(&tp[ti].t);
	printf("# %u plans checked\n", n);
	fflush(stdout);
	EXPECT_EQ(0, fails);
}

/*
 * In place, ReduceScatter keeps what it writes of the caller's buffer in
 * scratch.  It must move exactly what out of place moves (the same
 * transfers in the same rounds: the same time in the simulator, the price
 * of kc_cost_op()), and never use more scratch; the totals show what the
 * in-place plans save.
 */
TEST(reducescatter_in_place_moves_what_out_of_place_moves)
{
	static struct wtopo tp[40];
	u32 nt = wtopos(tp, ARRAY_SIZE(tp)), ti, mi, ci, rank, fails = 0, n = 0;
	u64 scr_ip[NWMIXES] = { 0 }, scr_oop[NWMIXES] = { 0 };

	ASSERT_LT(20, nt);
	for (ti = 0; ti < nt; ti++) {
		const struct kc_topo *t = &tp[ti].t;
		u32 p = t->nranks, step = p > 33 ? (quick() ? 29 : 7) : quick() && p > 9 ? 8 : 1;
		u64 counts[4] = { 1, p > 1 ? p - 1 : 2, 3 * (u64)p + 2, 1000 };

		for (mi = 0; mi < NWMIXES; mi++)
		for (ci = 0; ci < ARRAY_SIZE(counts); ci++)
		for (rank = 0; rank < p; rank += step) {
			struct kc_op_desc op = { .op = KCOLL_OP_REDUCESCATTER, .dtype = KCOLL_FP32,
						 .redop = KCOLL_SUM, .count = counts[ci] };
			struct kc_plan *pi = NULL, *po = NULL;
			struct flat fi = { 0 }, fo = { 0 };
			struct kc_algo_cfg cfg;
			char what[200];
			u32 i;

			wmix(mi, &cfg);
			if (kc_plan_build(t, rank, &op, &cfg, &po, NULL, 0))
				continue;
			op.flags = KC_OP_F_INPLACE;
			snprintf(what, sizeof(what), "%.47s p=%u %s/%s/%s rank=%u count=%llu",
				 tp[ti].name, p, kc_algo_name(cfg.algo[0]),
				 kc_algo_name(cfg.algo[1]), kc_algo_name(cfg.algo[2]), rank,
				 (unsigned long long)op.count);
			if (kc_plan_build(t, rank, &op, &cfg, &pi, NULL, 0) ||
			    flatten(pi, true, &fi) || flatten(po, true, &fo)) {
				fprintf(stderr, "# %s: in place does not build or expand\n", what);
				fails++;
				goto next;
			}
			n++;
			for (i = 0; i < fi.n && i < fo.n; i++)
				if (fi.round[i] != fo.round[i] || fi.st[i].kind != fo.st[i].kind ||
				    fi.st[i].peer != fo.st[i].peer || fi.st[i].len != fo.st[i].len)
					break;
			if (i < fi.n || i < fo.n) {
				fprintf(stderr, "# %s: transfer %u differs from out of place\n",
					what, i);
				fails++;
			}
			if (pi->scratch_bytes > po->scratch_bytes) {
				fprintf(stderr, "# %s: %llu bytes of scratch, %llu out of place\n",
					what, (unsigned long long)pi->scratch_bytes,
					(unsigned long long)po->scratch_bytes);
				fails++;
			}
			scr_ip[mi] += pi->scratch_bytes;
			scr_oop[mi] += po->scratch_bytes;
next:
			flat_free(&fi);
			flat_free(&fo);
			kc_plan_free(pi);
			kc_plan_free(po);
			if (fails > 50)
				goto out;
		}
	}
out:
	for (ti = 0; ti < nt; ti++)
		kc_topo_free(&tp[ti].t);
	for (mi = 0; mi < NWMIXES; mi++) {
		struct kc_algo_cfg cfg;

		wmix(mi, &cfg);
		printf("# scratch in place / out of place, %s/%s/%s: %llu / %llu bytes\n",
		       kc_algo_name(cfg.algo[0]), kc_algo_name(cfg.algo[1]),
		       kc_algo_name(cfg.algo[2]), (unsigned long long)scr_ip[mi],
		       (unsigned long long)scr_oop[mi]);
	}
	printf("# %u plan pairs compared\n", n);
	fflush(stdout);
	EXPECT_EQ(0, fails);
}

TEST_HARNESS_MAIN
