// SPDX-License-Identifier: GPL-2.0
/*
 * bench_select (make bench-select): regret of automatic selection.  For
 * every topology of a grid and every size from 8 B to 1 GiB, the
 * simulator times the automatic choice (kc_select_cfg on the same link
 * model) and every applicable algorithm (each flat algorithm at the top
 * level, lower levels automatic; Pipeline, AHC, AHC_BROKE); regret is
 * t(auto) / t(best) - 1.  Conformance mode (one message per step,
 * rendezvous), the mode the cost model describes.
 *
 * No algorithm is left out.  Two things keep 4096 ranks affordable, both
 * exact:
 *  - symmetry (sim.h, sim_run_period()): on equal servers in one pod
 *    (or equal pods) whose plans repeat server by server - checked on
 *    every rank's plan - one server is simulated, with the same result
 *    as all of them;
 *  - a bound (sim_op_lower_bound()): in rendezvous mode every round of a
 *    rank lasts at least its slowest receive at full rate, so the sum
 *    over a rank's rounds is a lower bound of the simulated time.  A
 *    candidate whose bound is already at least the best time found is
 *    not simulated: it cannot be the best.  Candidates are tried in the
 *    order of their bounds; every row lists the ones pruned so, with
 *    their bound.
 * The automatic choice itself is always simulated.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "sim.h"
#include "size.h"
#include "kc_cost.h"

struct topo_spec {
	const char *name;
	u32 npods;
	u32 pods[3];	/* servers per pod */
	u32 k;		/* ranks per server */
	double conv;
};

static const struct topo_spec grid[] = {
	{ "2 ranks", 1, { 2 }, 1, 1 },
	{ "3 ranks", 1, { 3 }, 1, 1 },
	{ "5 ranks", 1, { 5 }, 1, 1 },
	{ "8 ranks", 1, { 8 }, 1, 1 },
	{ "33 ranks", 1, { 33 }, 1, 1 },
	{ "100 ranks", 1, { 100 }, 1, 1 },
	{ "256 ranks", 1, { 256 }, 1, 1 },
	{ "1000 ranks", 1, { 1000 }, 1, 1 },
	{ "4096 ranks", 1, { 4096 }, 1, 1 },
	{ "2x8", 1, { 2 }, 8, 1 },
	{ "3x8", 1, { 3 }, 8, 1 },
	{ "12x8", 1, { 12 }, 8, 1 },
	{ "16x8", 1, { 16 }, 8, 1 },
	{ "64x8 (512)", 1, { 64 }, 8, 1 },
	{ "128x8 (1024)", 1, { 128 }, 8, 1 },
	{ "125x8 (1000)", 1, { 125 }, 8, 1 },
	{ "512x8 (4096)", 1, { 512 }, 8, 1 },
	{ "pods 8+16 x8 (64+128) C=1", 2, { 8, 16 }, 8, 1 },
	{ "pods 8+16 x8 (64+128) C=2", 2, { 8, 16 }, 8, 2 },
	{ "pods 8+16 x8 (64+128) C=4", 2, { 8, 16 }, 8, 4 },
	{ "pods 3+5+7 x8 C=1", 3, { 3, 5, 7 }, 8, 1 },
	{ "pods 3+5+7 x8 C=2", 3, { 3, 5, 7 }, 8, 2 },
	{ "pods 3+5+7 x8 C=4", 3, { 3, 5, 7 }, 8, 4 },
	{ "pods 64+128 x1 C=1", 2, { 64, 128 }, 1, 1 },
	{ "pods 64+128 x1 C=2", 2, { 64, 128 }, 1, 2 },
	{ "pods 64+128 x1 C=4", 2, { 64, 128 }, 1, 4 },
	{ "pods 3+5+7 x1 C=4", 3, { 3, 5, 7 }, 1, 4 },
};

struct cand {
	struct kc_algo_cfg cfg;
	double lb;	/* lower bound of its simulated time */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->lb < y->lb ? -1 : x->lb > y->lb;
}

static double sim_time(const struct kc_topo *t, const struct kc_op_desc *d,
		       const struct kc_algo_cfg *cfg, const struct sim_model *m, u32 *period)
{
	struct kc_exec_cfg ec = sim_conformance_cfg();
	struct sim_result res = { 0 };

	if (sim_op(t, d, cfg, m, &ec, &res, NULL, NULL, 0, NULL, 0))
		return NAN;
	if (period)
		*period = res.period;
	return res.time;
}

static void label(const struct kc_algo_cfg *c, char *buf, size_t len)
{
	const struct kc_algo_ops *a = kc_algo_get(c->algo[KCOLL_LEVEL1]);

	if (a && a->build)
		snprintf(buf, len, "%s", a->name);
	else
		snprintf(buf, len, "%s/%s/%s", kc_algo_name(c->algo[0]), kc_algo_name(c->algo[1]),
			 kc_algo_name(c->algo[2]));
}

struct worst {
	double regret;
	char line[256];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_select [-o OP] [-f FACTOR] [-e MAXBYTES] [-t SUBSTRING]\n"
		"Regret of automatic selection, 8 B .. MAXBYTES by FACTOR, on a grid of\n"
		"topologies; exit status 1 when any regret is above 5%%.\n"
		"  -o, --op OP            allreduce (default), reducescatter, allgather,\n"
		"                         broadcast, reduce, scatter, gather, alltoall,\n"
		"                         barrier (one row per topology: no size)\n"
		"  -f, --factor F         size step, 2..1024 (default 8)\n"
		"  -e, --max-bytes N      largest size, 8..1T (default 1G; 4096, 64K, 1.5M:\n"
		"                         powers of 1024, as every kcoll tool reads sizes)\n"
		"  -t, --topology STR     only the topologies whose name contains STR\n"
		"  -h, --help             this text\n");
}

int main(int argc, char **argv)
{
	u32 ids[KCOLL_ALGO_COUNT], nids = 0, op = KCOLL_OP_ALLREDUCE, ti, i, factor = 8;
	u32 nworst = 0;
	u64 maxb = 1ull << 30, nsim = 0, npruned = 0, v;
	struct worst worst[8] = { { 0 } };
	const char *only = NULL;
	double overall = 0;
	bool barrier;
	int c;

	static const struct option longopts[] = {
		{ "op", required_argument, NULL, 'o' },
		{ "factor", required_argument, NULL, 'f' },
		{ "max-bytes", required_argument, NULL, 'e' },
		{ "topology", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = getopt_long(argc, argv, "o:f:e:t:h", longopts, NULL)) != -1) {
		if (c == 'f') {
			if (arg_ranged("bench_select", "factor", optarg, 2, 1024, &v))
				return 2;
			factor = (u32)v;
		} else if (c == 'e') {
			if (arg_size("bench_select", "max-bytes", optarg, 8, 1ull << 40, &maxb))
				return 2;
		} else if (c == 't') {
			only = optarg;
		} else if (c == 'o') {
			int o = kc_op_by_name(optarg);

			if (o < 0) {
				fprintf(stderr, "bench_select: unknown operation '%s'\n", optarg);
				return 2;
			}
			if (o == KCOLL_OP_ALLTOALLV) {
				fprintf(stderr, "bench_select: alltoallv takes per-pair counts; its model is alltoall's, use -o alltoall\n");
				return 2;
			}
			op = (u32)o;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	barrier = op == KCOLL_OP_BARRIER;
	/* the candidates: flat algorithms, then builders, each in enum order */
	for (i = 0; i < 2 * KCOLL_ALGO_COUNT; i++) {
		const struct kc_algo_ops *a = kc_algo_get(i % KCOLL_ALGO_COUNT);

		if (a && !a->build == (i < KCOLL_ALGO_COUNT))
			ids[nids++] = a->id;
	}
	printf("# bench-select: %s fp32, conformance mode; level0 alpha 1us beta 1/50GB/s,"
	       " levels 1-2 alpha 5us beta 1/25GB/s, gamma 1/100GB/s\n", kc_op_name(op));
	printf("# every applicable algorithm is simulated unless its lower bound (sum over\n"
	       "# rounds of the slowest receive at full rate) is already >= the best time:\n"
	       "# 'pruned' lists those as name>=bound(us).  'sim' = ranks simulated\n"
	       "# (one server or pod when the plans repeat, checked; else all).\n");
	printf("# %-28s %10s %-22s %12s %-22s %12s %8s %5s %s\n", "topology", "bytes", "auto",
	       "t_auto(us)", "best", "t_best(us)", "regret", "sim", "pruned");
	for (ti = 0; ti < ARRAY_SIZE(grid); ti++) {
		const struct topo_spec *g = &grid[ti];
		struct sim_model m = sim_bench_model(g->conv);
		struct kc_cost_model cm;
		struct kc_topo t;
		double tworst = 0;
		u64 b;

		if (only && !strstr(g->name, only))
			continue;
		sim_conformance_model(&m, &cm);
		if (kc_topo_init_pods(&t, g->npods, g->pods, g->k))
			return 1;
		/* a barrier moves no data: one row, b = 0 */
		for (b = barrier ? 0 : 8; b <= (barrier ? 0 : maxb); b = barrier ? 1 : b * factor) {
			struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
						.count = b / 4 };
			struct kc_algo_cfg in = { .pipe_bytes = 0 }, ac, bc = { .pipe_bytes = 0 };
			struct kc_level lv[KC_MAX_LEVELS];
			u32 nl = kc_topo_levels(&t, 0, lv), top = lv[nl - 1].cfg_level, nc = 0, per = 0;
			struct cand cands[KCOLL_ALGO_COUNT];
			char la[64], lb[64], pruned[512] = "";
			size_t plen = 0;
			double ta, tb, r;

			if (op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER ||
			    op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER ||
			    op == KCOLL_OP_ALLTOALL)
				d.count = b / 4 / t.nranks;	/* b: the whole region */
			if (!d.count && !barrier) {
				printf("  %-28s %10llu (less than one element per rank: no row)\n",
				       g->name, (unsigned long long)b);
				continue;
			}
			kc_select_cfg(&t, &d, &in, &cm, &ac);
			ta = sim_time(&t, &d, &ac, &m, &per);
			if (isnan(ta)) {
				label(&ac, la, sizeof(la));
				printf("  %-28s %10llu auto %s cannot run\n", g->name,
				       (unsigned long long)b, la);
				overall = INFINITY;
				continue;
			}
			tb = ta;
			bc = ac;
			for (i = 0; i < nids; i++) {
				const struct kc_algo_ops *a = kc_algo_get(ids[i]);
				struct kc_algo_cfg cc = in;

				if (!a->build) {
					if (a->auto_port_measured && top != KCOLL_LEVEL0)
						continue;	/* not a level1/2 algorithm */
					cc.algo[top] = ids[i];
				} else {
					if (t.nservers < 2)
						continue;
					cc.algo[KCOLL_LEVEL1] = ids[i];
				}
				if (sim_op_lower_bound(&t, &d, &cc, &m, &cands[nc].lb))
					continue;	/* cannot build: not applicable */
				cands[nc++].cfg = cc;
			}
			qsort(cands, nc, sizeof(cands[0]), cand_cmp);
			for (i = 0; i < nc; i++) {
				double x;

				if (cands[i].lb >= tb) {
					label(&cands[i].cfg, lb, sizeof(lb));
					if (plen < sizeof(pruned) - 1)
						plen += (size_t)snprintf(pruned + plen,
									 sizeof(pruned) - plen,
									 "%s%s>=%.1f", plen ? " " : "",
									 lb, cands[i].lb * 1e6);
					npruned++;
					continue;
				}
				x = sim_time(&t, &d, &cands[i].cfg, &m, NULL);
				nsim++;
				if (x < tb) {
					tb = x;
					bc = cands[i].cfg;
				}
			}
			r = ta / tb - 1;
			label(&ac, la, sizeof(la));
			label(&bc, lb, sizeof(lb));
			printf("  %-28s %10llu %-22s %12.2f %-22s %12.2f %7.2f%% %5u %s\n", g->name,
			       (unsigned long long)b, la, ta * 1e6, lb, tb * 1e6, r * 100, per,
			       pruned[0] ? pruned : "-");
			fflush(stdout);
			tworst = fmax(tworst, r);
			if (r > overall)
				overall = r;
			/* keep the worst rows */
			for (i = 0; i < ARRAY_SIZE(worst); i++) {
				if (i < nworst && worst[i].regret >= r)
					continue;
				memmove(&worst[i + 1], &worst[i],
					(ARRAY_SIZE(worst) - i - 1) * sizeof(worst[0]));
				worst[i].regret = r;
				snprintf(worst[i].line, sizeof(worst[i].line),
					 "%-28s %10llu auto %-20s %10.2f us, best %-20s %10.2f us",
					 g->name, (unsigned long long)b, la, ta * 1e6, lb, tb * 1e6);
				if (nworst < ARRAY_SIZE(worst))
					nworst++;
				break;
			}
		}
		printf("# %s: worst regret %.2f%%\n", g->name, tworst * 100);
		kc_topo_free(&t);
	}
	printf("# candidates simulated %llu, pruned by their lower bound %llu\n",
	       (unsigned long long)nsim, (unsigned long long)npruned);
	printf("# worst rows:\n");
	for (i = 0; i < nworst; i++)
		printf("#  %6.2f%%  %s\n", worst[i].regret * 100, worst[i].line);
	printf("# overall worst regret %.2f%% (target 5%%): %s\n", overall * 100,
	       overall <= 0.05 ? "met" : "NOT met");
	return overall <= 0.05 ? 0 : 1;
}
