// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_coll_bench: the Open MPI contender of `make bench`.
 *
 * Times MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block and
 * MPI_Bcast (float, sum) the way coll-perf times kcoll: warm-up runs, a
 * barrier, ITERS back-to-back operations, time per operation averaged over
 * the ranks, then one checked run whose every element is compared exactly
 * (integer-valued floats: sums of small integers are exact in fp32).
 * Sizes count like nccl-tests and coll-perf: the AllReduce/Bcast buffer,
 * the AllGather output, the ReduceScatter input.  busbw factors:
 * allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n, broadcast 1.
 *
 * One line per op and size on rank 0, parsed by tools/bench/bench-report.py:
 *   mpi-coll op=allreduce size=8 count=2 iters=20 time_us=123.4
 *            algbw=0.000065 busbw=0.000097 wrong=0
 * (algbw, busbw in GB/s = 1e9 B/s, as coll-perf).  Exit status 1 if any
 * element was wrong.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"

enum op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
	"allreduce", "allgather", "reducescatter", "broadcast",
};

struct cfg {
	int rank, nranks;
	size_t minbytes, maxbytes;
	unsigned int factor;
	int iters, warmup;
	size_t budget;		/* bytes moved per size: fewer iterations for large sizes */
	int ops[OP_COUNT];
};

static const char usage[] =
"Usage: mpirun ... mpi_coll_bench [OPTION]...\n"
"Time MPI collectives like coll-perf times kcoll (float sum, out of place).\n"
"\n"
"  -t, --op NAME        allreduce, allgather, reducescatter, broadcast or all\n"
"                       (default all); may be repeated\n"
"  -b, --minbytes SIZE  smallest size, 1..1T (default 8): 4096, 64K, 1.5M\n"
"                       (powers of 1024, as every kcoll tool reads sizes)\n"
"  -e, --maxbytes SIZE  largest size (default 64M), measured even when the\n"
"                       steps pass over it (8 B by 4: ..., 32M, 64M)\n"
"  -f, --stepfactor F   multiply the size by F each step (default 4)\n"
"  -n, --iters N        most timed iterations per size (default 20)\n"
"  -w, --warmup N       untimed iterations first (default 1)\n"
"  -B, --budget SIZE    timed iterations = max(1, min(N, SIZE / size))\n"
"                       (default 4M) so large sizes run 1-3 iterations\n"
"  -h, --help           this text\n"
"\n"
"Output (rank 0), one line per op and size:\n"
"  mpi-coll op=OP size=B count=C iters=I time_us=T algbw=GB/s busbw=GB/s wrong=W\n"
"Exit status: 0 if every element was right, 1 on a wrong element, 2 on a\n"
"usage error.\n";

/* --NAME SIZE (1..1T) and --NAME N (lo..hi): 0, or -1 with the reason said */
static int opt_size(const char *name, const char *s, size_t *out)
{
	uint64_t v;

	if (arg_size("mpi_coll_bench", name, s, 1, 1ull << 40, &v))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int opt_int(const char *name, const char *s, int lo, int hi, int *out)
{
	uint64_t v;

	if (arg_ranged("mpi_coll_bench", name, s, (uint64_t)lo, (uint64_t)hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

static double bus_factor(enum op op, int n)
{
	switch (op) {
	case OP_ALLREDUCE: return 2.0 * (n - 1) / n;
	case OP_ALLGATHER:
	case OP_REDUCESCATTER: return (double)(n - 1) / n;
	default: return 1.0;
	}
}

/* Input element i of rank r: a small integer, so every sum is exact. */
static float gen(int r, size_t i)
{
	return (float)((r + 1) * (int)(i % 61 + 1));
}

static void submit(enum op op, const struct cfg *c, float *s, float *r, size_t count)
{
	switch (op) {
	case OP_ALLREDUCE:
		MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	case OP_ALLGATHER:	/* count: elements per rank */
		MPI_Allgather(s, (int)count, MPI_FLOAT, r, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case OP_REDUCESCATTER:	/* count: elements each rank receives */
		MPI_Reduce_scatter_block(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	default:
		MPI_Bcast(c->rank == 0 ? s : r, (int)count, MPI_FLOAT, 0, MPI_COMM_WORLD);
		break;
	}
}

/* The checked run; returns the wrong elements of this rank. */
static uint64_t check(enum op op, const struct cfg *c, float *s, float *r, size_t count,
		      size_t rbytes)
{
	int n = c->nranks, k;
	size_t i, nsend = op == OP_REDUCESCATTER ? count * n : count, nrecv;
	uint64_t wrong = 0;
	float want;

	for (i = 0; i < nsend; i++)
		s[i] = gen(c->rank, i);
	memset(r, 0x5a, rbytes);
	if (op == OP_BROADCAST && c->rank == 0)
		memcpy(r, s, count * sizeof(float));
	submit(op, c, s, r, count);
	nrecv = op == OP_ALLGATHER ? count * n : count;
	for (i = 0; i < nrecv; i++) {
		switch (op) {
		case OP_ALLREDUCE:
			want = 0;
			for (k = 0; k < n; k++)
				want += gen(k, i);
			break;
		case OP_REDUCESCATTER:
			want = 0;
			for (k = 0; k < n; k++)
				want += gen(k, c->rank * count + i);
			break;
		case OP_ALLGATHER:
			want = gen((int)(i / count), i % count);
			break;
		default:
			want = gen(0, i);
			break;
		}
		if (r[i] != want)
			wrong++;
	}
	return wrong;
}

static uint64_t one_size(enum op op, const struct cfg *c, float *s, float *r, size_t bytes,
			 size_t bufbytes)
{
	int n = c->nranks, k, iters;
	size_t count;
	double t0, us, sum;
	uint64_t wrong, total;

	/* Elements per call, as nccl-tests counts the size. */
	if (op == OP_ALLGATHER || op == OP_REDUCESCATTER)
		count = bytes / sizeof(float) / n;
	else
		count = bytes / sizeof(float);
	if (!count)
		return 0;
	bytes = (op == OP_ALLGATHER || op == OP_REDUCESCATTER ? count * n : count) * sizeof(float);
	iters = c->budget / bytes > (size_t)c->iters ? c->iters : (int)(c->budget / bytes);
	if (iters < 1)
		iters = 1;
	for (k = 0; k < c->warmup; k++)
		submit(op, c, s, r, count);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (k = 0; k < iters; k++)
		submit(op, c, s, r, count);
	us = (MPI_Wtime() - t0) * 1e6 / iters;
	MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	us = sum / n;
	wrong = check(op, c, s, r, count, bufbytes);
	MPI_Allreduce(&wrong, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (c->rank == 0) {
		double algbw = bytes / (us * 1e3);

		printf("mpi-coll op=%s size=%zu count=%zu iters=%d time_us=%.2f algbw=%.6g busbw=%.6g wrong=%llu\n",
		       op_names[op], bytes, bytes / sizeof(float), iters, us, algbw,
		       algbw * bus_factor(op, n), (unsigned long long)total);
		fflush(stdout);
	}
	return total;
}

static int parse_args(struct cfg *c, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, 't' },
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "budget", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o, i, any = 0, f;

	while ((o = getopt_long(argc, argv, "t:b:e:f:n:w:B:h", lo, NULL)) != -1) {
		switch (o) {
		case 't':
			for (i = 0; i < OP_COUNT; i++)
				if (!strcmp(optarg, op_names[i]) || !strcmp(optarg, "all"))
					c->ops[i] = any = 1;
			if (!any) {
				fprintf(stderr, "mpi_coll_bench: unknown op '%s'\n", optarg);
				return -1;
			}
			break;
		case 'b': if (opt_size("minbytes", optarg, &c->minbytes)) goto bad; break;
		case 'e': if (opt_size("maxbytes", optarg, &c->maxbytes)) goto bad; break;
		case 'B': if (opt_size("budget", optarg, &c->budget)) goto bad; break;
		case 'f':
			if (opt_int("stepfactor", optarg, 2, 1024, &f))
				goto bad;
			c->factor = (unsigned int)f;
			break;
		case 'n': if (opt_int("iters", optarg, 1, INT32_MAX, &c->iters)) goto bad; break;
		case 'w': if (opt_int("warmup", optarg, 0, INT32_MAX, &c->warmup)) goto bad; break;
		case 'h': fputs(usage, stdout); return 1;
		default: goto bad;
		}
	}
	if (optind < argc || c->minbytes > c->maxbytes)
		goto bad;
	if (!any)
		for (i = 0; i < OP_COUNT; i++)
			c->ops[i] = 1;
	return 0;
bad:
	fprintf(stderr, "mpi_coll_bench: bad arguments; see --help\n");
	return -1;
}

/*
 * The size after BYTES: times the factor, but the largest size itself
 * where the factor steps over it, so that an -e off the grid of -b and -f
 * is measured (make bench: 8 B by 4 to 64 MiB); 0 after the largest.
 */
static size_t next_bytes(const struct cfg *c, size_t bytes)
{
	if (bytes >= c->maxbytes)
		return 0;
	return bytes * c->factor > c->maxbytes ? c->maxbytes : bytes * c->factor;
}

int main(int argc, char **argv)
{
	struct cfg c = { .minbytes = 8, .maxbytes = 64 << 20, .factor = 4, .iters = 20,
			 .warmup = 1, .budget = 4 << 20 };
	size_t bytes, bufbytes;
	uint64_t wrong = 0;
	float *s, *r;
	int ret, i;

	ret = parse_args(&c, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
	/* Room for the largest AllGather output and ReduceScatter input. */
	bufbytes = c.maxbytes + (size_t)c.nranks * sizeof(float);
	s = malloc(bufbytes);
	r = malloc(bufbytes);
	if (!s || !r) {
		fprintf(stderr, "mpi_coll_bench: out of memory for %zu bytes\n", bufbytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;	/* not reached: MPI_Abort does not return */
	}
	memset(s, 0, bufbytes);
	memset(r, 0, bufbytes);
	for (i = 0; i < OP_COUNT; i++) {
		if (!c.ops[i])
			continue;
		for (bytes = c.minbytes; bytes; bytes = next_bytes(&c, bytes))
			wrong += one_size((enum op)i, &c, s, r, bytes, bufbytes);
	}
	free(s);
	free(r);
	MPI_Finalize();
	return wrong ? 1 : 0;
}
