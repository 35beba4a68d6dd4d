// SPDX-License-Identifier: GPL-2.0
/*
 * demo_sim: an AllReduce across simulated ranks (ranks in one process, the
 * kernel's executor and plans, real data, in-process message queues), in
 * the nccl-tests table format: `make demo` without VMs or the module.
 * Times are of this machine's CPUs, not of a network.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "tw_case.h"
#include "kc_reduce.h"
#include "size.h"

/* Every rank holds two buffers of the largest size: keep it to memory. */
#define DEMO_MAX_BYTES (1ull << 30)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: demo_sim [-n RANKS] [-b MIN] [-e MAX] [-f FACTOR] [-A ALGO]\n"
		"Run AllReduce (fp32, sum) across RANKS in-process ranks with kcoll's plans and\n"
		"executor and print time, algbw, busbw and #wrong per size.\n\n"
		"  -n, --ranks N       simulated ranks, 1..1024 (default 8)\n"
		"  -b, --minbytes N    smallest size in bytes, 4..1G (default 8)\n"
		"  -e, --maxbytes N    largest size in bytes, 4..1G (default 64M)\n"
		"  -f, --stepfactor N  size multiplier, 2..1024 (default 4)\n"
		"Sizes as every kcoll tool reads them: 4096, 64K, 1.5M, 1G (powers of 1024).\n"
		"  -A, --algo NAME     force one algorithm on every level (default auto)\n"
		"  -h, --help          this text\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "algo", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u64 minb = 8, maxb = 64ull << 20, f = 4, size, wrong_total = 0, v;
	u32 n = 8, algo = KCOLL_ALGO_AUTO, l;
	struct tw_world *w;
	struct kc_topo topo;
	int c;

	while ((c = getopt_long(argc, argv, "n:b:e:f:A:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (arg_ranged("demo_sim", "ranks", optarg, 1, 1024, &v))
				return 2;
			n = (u32)v;
			break;
		case 'b':
			if (arg_size("demo_sim", "minbytes", optarg, 4, DEMO_MAX_BYTES, &minb))
				return 2;
			break;
		case 'e':
			if (arg_size("demo_sim", "maxbytes", optarg, 4, DEMO_MAX_BYTES, &maxb))
				return 2;
			break;
		case 'f':
			if (arg_ranged("demo_sim", "stepfactor", optarg, 2, 1024, &f))
				return 2;
			break;
		case 'A':
			if (kc_algo_by_name(optarg) < 0) {
				fprintf(stderr, "demo_sim: unknown algorithm '%s'\n", optarg);
				return 2;
			}
			algo = (u32)kc_algo_by_name(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (maxb < minb) {
		fprintf(stderr, "demo_sim: --maxbytes %llu is below --minbytes %llu\n",
			(unsigned long long)maxb, (unsigned long long)minb);
		return 2;
	}
	if (kc_topo_init(&topo, n, NULL, NULL, NULL, 0))
		return 1;
	w = tw_create(n);
	printf("# kcoll demo: AllReduce across %u simulated ranks (in-process queues)\n",
	       n);
	printf("# algorithm: %s\n#\n", kc_algo_name(algo));
	printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s %6s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
	       "busbw", "#wrong");
	printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s %6s\n", "(B)",
	       "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
	       "(GB/s)", "");
	for (size = minb; size <= maxb; size *= f) {
		struct tc_case cs = {
			.topo = &topo,
			.op = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32, .redop = KCOLL_SUM,
				.count = size / 4 },
			.chunk_bytes = 65536, .window = 4,
			.iters = size <= (1 << 20) ? 20 : 3,
		};
		struct tc_outcome oop, ip;
		double bus = n > 1 ? 2.0 * (n - 1) / n : 0;

		for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
			cs.cfg.algo[l] = algo;
		cs.cfg.pipe_bytes = 65536;
		tc_run(w, &cs, &oop);
		cs.op.flags = KC_OP_F_INPLACE;
		cs.iters = 1;
		tc_run(w, &cs, &ip);
		if (oop.result == TC_BUILD_ERROR) {
			fprintf(stderr, "demo_sim: %s\n", oop.why);
			return 1;
		}
		wrong_total += oop.nwrong + ip.nwrong + (oop.result != TC_PASS) +
			       (ip.result != TC_PASS);
		printf("  %10llu %12llu %8s %6s %6d %10.1f %8.3f %8.3f %6llu %10.1f %8.3f %8.3f %6llu\n",
		       (unsigned long long)size, (unsigned long long)size / 4, "float", "sum", -1,
		       oop.usec, size / oop.usec / 1e3, size / oop.usec / 1e3 * bus,
		       (unsigned long long)oop.nwrong, ip.usec, size / ip.usec / 1e3,
		       size / ip.usec / 1e3 * bus, (unsigned long long)ip.nwrong);
		fflush(stdout);
	}
	printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong_total,
	       wrong_total ? "FAILED" : "OK");
	tw_destroy(w);
	kc_topo_free(&topo);
	return wrong_total ? 1 : 0;
}
