// SPDX-License-Identifier: GPL-2.0
/*
 * bench-plan: time and memory to build one rank's plan of a 65,536-rank
 * communicator, for every algorithm.  A benchmark, not a test: it prints
 * numbers and fails only if a plan cannot be built at all.  Plans are
 * compact (repeats of steps): it prints both the records the plan holds
 * and the steps and rounds they expand to.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "kc_coll.h"

struct bench_topo {
	const char *name;
	struct kc_topo t;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bench_plan [-p RANKS] [-r REPEATS] [-o OP]\n"
		"Build the plan of one rank (rank 1) of a large communicator for every\n"
		"algorithm and print build time (median of REPEATS), plan memory, the\n"
		"records the compact plan holds and the steps and rounds they expand to.\n"
		"Without -o, one table per operation (every op but alltoallv, whose\n"
		"per-peer counts are the caller's).\n\n"
		"  -p, --ranks N     communicator size (default 65536, a multiple of 8)\n"
		"  -r, --repeats N   builds per algorithm (default 7)\n"
		"  -o, --op NAME     one operation only: allreduce, reducescatter,\n"
		"                    allgather, broadcast, reduce, scatter, gather,\n"
		"                    alltoall, barrier\n"
		"  -h, --help        this text\n");
}

/* One table: every algorithm building op; returns the number of failures. */
static int bench_op(u32 op, u32 nranks, u32 reps, struct bench_topo *flat,
		    struct bench_topo *hier, struct bench_topo *asym)
{
	int fails = 0;
	u32 a, i;

	printf("# plan of rank 1 of %u ranks, %s%s, median of %u builds\n", nranks,
	       kc_op_name(op), op == KCOLL_OP_BARRIER ? " (no data)" : " of 1 GiB fp32", reps);
	printf("# records: what the compact plan stores; steps, rounds: its expansion\n");
	printf("# %-10s %-13s %8s %9s %9s %7s %10s %10s\n", "algorithm", "topology",
	       "records", "steps", "rounds", "peers", "plan KiB", "build us");
	for (a = 1; a < KCOLL_ALGO_COUNT; a++) {
		const struct kc_algo_ops *ops = kc_algo_get(a);
		struct bench_topo *bt = ops->build ? (a == KCOLL_ALGO_PIPELINE ? hier : asym) :
				       flat;
		struct kc_algo_cfg cfg = { .algo = { a, a, a } };
		struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
					.root = 0, .count = (1ull << 30) / 4 };
		double t[64];
		struct kc_plan *plan = NULL;
		char err[160];
		u64 xsteps;
		u32 xrounds;
		int ret = 0;

		if (op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_REDUCESCATTER ||
		    op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER || op == KCOLL_OP_ALLTOALL)
			d.count /= nranks;	/* counts per rank: 1 GiB in all */
		if (op == KCOLL_OP_BARRIER)
			d.count = 0;
		for (i = 0; i < reps && i < 64; i++) {
			double t0 = now_us();

			kc_plan_free(plan);
			plan = NULL;
			ret = kc_plan_build(&bt->t, 1, &d, &cfg, &plan, err, sizeof(err));
			t[i] = now_us() - t0;
			if (ret)
				break;
		}
		if (ret == -EOPNOTSUPP) {
			printf("  %-10s %-13s %s\n", kc_algo_name(a), bt->name, "not supported");
			continue;
		}
		if (ret) {
			printf("  %-10s %-13s error %d: %s\n", kc_algo_name(a), bt->name, ret, err);
			fails++;
			continue;
		}
		qsort(t, i, sizeof(double), cmp_double);
		kc_plan_expanded_size(plan, &xsteps, &xrounds);
		printf("  %-10s %-13s %8u %9llu %9u %7u %10.1f %10.1f\n", kc_algo_name(a),
		       bt->name, plan->nsteps, (unsigned long long)xsteps, xrounds, plan->npeers,
		       kc_plan_mem_bytes(plan) / 1024.0, t[i / 2]);
		kc_plan_free(plan);
	}
	printf("\n");
	return fails;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ranks", required_argument, NULL, 'p' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "op", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u32 nranks = 65536, reps = 7, o;
	int op = -1;
	struct bench_topo flat = { .name = "flat" }, hier = { .name = "servers of 8" };
	struct bench_topo asym = { .name = "pods 3:5" };
	int c, fails = 0;

	while ((c = getopt_long(argc, argv, "p:r:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			nranks = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = (u32)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			if (kc_op_by_name(optarg) < 0) {
				fprintf(stderr, "bench_plan: unknown op '%s'\n", optarg);
				return 2;
			}
			op = kc_op_by_name(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (nranks < 16 || nranks % 8 || !reps) {
		fprintf(stderr, "bench_plan: ranks must be a multiple of 8 >= 16, repeats >= 1\n");
		return 2;
	}
	{
		u32 pods[2] = { nranks / 8 * 3 / 8, 0 };

		pods[1] = nranks / 8 - pods[0];
		if (kc_topo_init(&flat.t, nranks, NULL, NULL, NULL, 0) ||
		    kc_topo_init_regular(&hier.t, 1, nranks / 8, 8) ||
		    kc_topo_init_pods(&asym.t, 2, pods, 8)) {
			fprintf(stderr, "bench_plan: cannot build topologies\n");
			return 1;
		}
	}
	for (o = 0; o < KCOLL_OP_COUNT; o++) {
		if (o == KCOLL_OP_ALLTOALLV || (op >= 0 && (u32)op != o))
			continue;
		fails += bench_op(o, nranks, reps, &flat, &hier, &asym);
	}
	kc_topo_free(&flat.t);
	kc_topo_free(&hier.t);
	kc_topo_free(&asym.t);
	return fails ? 1 : 0;
}
