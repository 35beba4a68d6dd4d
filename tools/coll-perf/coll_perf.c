// SPDX-License-Identifier: GPL-2.0
/*
 * coll-perf: nccl-tests for kcoll.  One rank per process, started on every
 * node by a launcher (tools/vm/kcoll-vm run, mpirun, srun) with the rank
 * table from KCOLL_RANKTABLE (or --ranktable) and the rank from
 * KCOLL_RANK or the launcher's variables.  It takes nccl-tests' command
 * lines (all_reduce_perf -b 8 -e 128M -f 2 -g 1): what a CPU library can
 * do it does, the rest (threads, GPUs, CUDA graphs) it refuses and says
 * why.  Prints the
 * nccl-tests table: out of place and
 * in place time, algbw, busbw and #wrong per size, with nccl-tests' byte
 * counts and bus bandwidth factors, and checks every result exactly.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "size.h"
#include "version.h"

struct perf {
	coll_comm_t *comm;
	uint32_t rank, nranks;
	coll_op_t op;
	size_t minb, maxb, stepb;
	double factor;
	int iters, warmup, check, avg_mode;
	int agg;		/* operations per timed iteration (-m) */
	bool blocking;		/* wait for each operation before the next (-z 1) */
	uint32_t inflight;	/* most operations outstanding at once */
	FILE *csv;		/* -F, rank 0 */
	bool all_dtypes, all_redops, all_roots, quiet_progress;
	coll_dtype_t dtype;
	coll_redop_t redop;
	uint32_t root;
	char *sendbuf, *recvbuf;
	size_t bufbytes;
	json_object *rows;
	double bw_sum;
	int bw_count;
	uint64_t wrong_total;	/* over every rank */
	uint64_t wrong_local;	/* this rank's */
	int err;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Measure and check kcoll collective operations, nccl-tests style.  Start one\n"
"process per rank on every node (e.g. tools/vm/kcoll-vm run -n 2 -- %s).\n"
"\n"
"      --op NAME            allreduce (default), reducescatter, allgather,\n"
"                           broadcast, reduce, scatter, gather, alltoall; the\n"
"                           program name all_reduce_perf etc. sets it too\n"
"  -t, --nthreads N         threads per process: 1 (kcoll runs one rank per\n"
"                           process; start more processes); -t NAME is --op\n"
"  -g, --ngpus N            GPUs per thread: 1 (kcoll moves host memory)\n"
"  -b, --minbytes SIZE      smallest size (default 32M); K, M, G suffixes\n"
"  -e, --maxbytes SIZE      largest size (default 32M)\n"
"  -f, --stepfactor F       multiply the size by F each step (default 1:\n"
"                           use --stepbytes)\n"
"  -i, --stepbytes SIZE     add SIZE each step when F is 1 (default 1M)\n"
"  -n, --iters N            timed iterations per size (default 20)\n"
"  -w, --warmup_iters N     untimed iterations first (default 5)\n"
"  -m, --agg_iters N        operations per timed iteration, submitted back to\n"
"                           back (default 1); time is per operation\n"
"  -z, --blocking 0|1       1: wait for each operation before submitting the\n"
"                           next; 0 (default): submit a whole iteration's\n"
"                           operations, then wait for them\n"
"  -c, --check N            check the results of N runs (default 1; 0: off,\n"
"                           #wrong shows N/A)\n"
"  -o, --op_type OP         sum (default), prod, min, max, avg, or all\n"
"  -d, --datatype TYPE      float (default), double, half, bfloat16, int8,\n"
"                           uint8, int16, uint16, int32, uint32, int64,\n"
"                           uint64, or all\n"
"  -r, --root R             root of rooted operations (default 0), or all\n"
"  -a, --average N          time reported: 0 rank 0's, 1 average of the\n"
"                           ranks (default), 2 minimum, 3 maximum\n"
"  -A, --algo STRING        force algorithms, HCCL_ALGO syntax, e.g.\n"
"                           'level0:NA;level1:ring' (default: $KCOLL_ALGO,\n"
"                           then $HCCL_ALGO, then the module's sysfs setting)\n"
"  -R, --local_register 0|1 1 (default): register both buffers once; 0: pin\n"
"                           them for every operation\n"
"  -T, --timeout SEC        operation timeout in seconds (default: the\n"
"                           module's, timeout_ms in sysfs)\n"
"  -p, --parallel_init 0    nccl-tests' default; 1 is refused (no threads)\n"
"  -G, --cudagraph 0        nccl-tests' default; others refused (no CUDA)\n"
"  -y, --stream_null 0      nccl-tests' default; 1 is refused (no CUDA)\n"
"      --rank R             this process's rank (default $KCOLL_RANK, else\n"
"                           $OMPI_COMM_WORLD_RANK, $PMI_RANK, $PMIX_RANK,\n"
"                           $SLURM_PROCID)\n"
"      --ranktable FILE     rank table (default $KCOLL_RANKTABLE)\n"
"  -J, --json FILE          also write the rows as JSON to FILE (rank 0)\n"
"  -F, --output_file FILE   also write the rows as CSV to FILE (rank 0)\n"
"  -V, --version            versions of coll-perf, libcoll and the loaded module\n"
"  -h, --help               this text\n"
"\n"
"Sizes: 4096, 64K, 1.5M, 2GiB (K M G T are powers of 1024; a fraction must\n"
"give whole bytes), at most 1T.  A value out of range is named with the\n"
"range: coll-perf: --root 9 out of range 0..7.\n"
"\n"
"Columns: size (B) and count (elements) as nccl-tests count them, type,\n"
"redop, root (-1 when not rooted), then for out of place and in place:\n"
"time (us, per iteration), algbw = size/time and busbw = algbw x factor\n"
"(GB/s, 1e9), #wrong (mismatching elements summed over the ranks).  busbw\n"
"factors: allreduce 2(n-1)/n; reducescatter, allgather, alltoall, gather,\n"
"scatter (n-1)/n; broadcast, reduce 1.\n"
"\n"
"nccl-tests' command lines run unchanged, e.g. under kcoll-vm or mpirun:\n"
"  all_reduce_perf -b 8 -e 128M -f 2 -g 1\n"
"\n"
"Exit status: 0 when every value was right, 1 on a wrong value or an error,\n"
"2 on a usage error.\n", prog, prog);
}

/* The largest size coll-perf takes: two buffers of it are mapped. */
#define PERF_MAX_BYTES (1ull << 40)

/* A size (tools/common/size.c), up to PERF_MAX_BYTES; @err says why not. */
static int perf_size(const char *s, size_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (parse_size(s, &v, err, errlen))
		return -EINVAL;
	if (v > PERF_MAX_BYTES) {
		snprintf(err, errlen, "%s out of range 0..1T", s);
		return -ERANGE;
	}
	*out = (size_t)v;
	return 0;
}

/*
 * This process's rank: $KCOLL_RANK, else the launcher's (Open MPI's mpirun,
 * MPICH's and Intel's PMI, PMIx, Slurm's srun), else NULL.
 */
static const char *launcher_rank(void)
{
	static const char *const vars[] = { "KCOLL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "PMIX_RANK", "SLURM_PROCID" };
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}

/* A whole number in lo..hi; @err (when not NULL) names the value and the range. */
static int parse_int(const char *s, long lo, long hi, long *out, char *err, size_t errlen)
{
	char tmp[160] = "";	/* written, never read: "" for cppcheck */
	uint64_t v;

	if (parse_ranged(s, (uint64_t)lo, (uint64_t)hi, &v, err ? err : tmp,
			 err ? errlen : sizeof(tmp)))
		return -EINVAL;
	*out = (long)v;
	return 0;
}

/* The long name of short option @opt, for messages: --root for 'r'. */
static const char *long_name(const struct option *lo, int opt)
{
	for (; lo->name; lo++)
		if (lo->val == opt)
			return lo->name;
	return "?";
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------ values */

static bool is_float(coll_dtype_t t)
{
	return t == COLL_FLOAT16 || t == COLL_BFLOAT16 || t == COLL_FLOAT || t == COLL_DOUBLE;
}

static bool is_unsigned(coll_dtype_t t)
{
	return t == COLL_UINT8 || t == COLL_UINT16 || t == COLL_UINT32 || t == COLL_UINT64;
}

static bool reducing(coll_op_t op)
{
	return op == COLL_OP_ALLREDUCE || op == COLL_OP_REDUCESCATTER || op == COLL_OP_REDUCE;
}

static bool rooted(coll_op_t op)
{
	return op == COLL_OP_BROADCAST || op == COLL_OP_REDUCE || op == COLL_OP_SCATTER ||
	       op == COLL_OP_GATHER;
}

/*
 * Input element @i of rank @r: small integers, so every partial sum,
 * product, minimum and maximum is exact in every type (fp16 included)
 * and the result does not depend on the order of reduction.
 */
static int64_t gen(const struct perf *p, coll_dtype_t t, uint32_t r, size_t i)
{
	uint64_t h = (uint64_t)i * 2654435761u + (uint64_t)r * 40503u;
	bool u = is_unsigned(t);

	if (!reducing(p->op))
		return u ? (int64_t)((i * 3 + r * 17) % 101) : (int64_t)((i * 3 + r * 17) % 101) - 50;
	switch (p->redop) {
	case COLL_PROD:
		if (r == 0)
			return 1 + (int64_t)((h >> 7) % 3);		/* 1, 2, 3 */
		return (!u && ((h >> 9) & 1)) ? -1 : 1;
	case COLL_AVG:
		/* the same on every rank: the mean is exact */
		return u ? (int64_t)(i % 9) : (int64_t)(i % 9) - 4;
	default:
		return u ? (int64_t)((h >> 5) % 9) : (int64_t)((h >> 5) % 9) - 4;
	}
}

static int64_t expect_reduced(const struct perf *p, coll_dtype_t t, size_t i)
{
	int64_t acc = gen(p, t, 0, i), v;
	uint32_t r;

	for (r = 1; r < p->nranks; r++) {
		v = gen(p, t, r, i);
		switch (p->redop) {
		case COLL_SUM: case COLL_AVG: acc += v; break;
		case COLL_PROD: acc *= v; break;
		case COLL_MAX: acc = v > acc ? v : acc; break;
		case COLL_MIN: acc = v < acc ? v : acc; break;
		default: break;
		}
	}
	if (p->redop == COLL_AVG)
		acc /= (int64_t)p->nranks;
	return acc;
}

static uint16_t f2h(float f)
{
	uint32_t x, s, m;
	int e;

	memcpy(&x, &f, 4);
	s = (x >> 16) & 0x8000;
	if (!((x >> 23) & 0xff))
		return (uint16_t)s;
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	m = x & 0x7fffff;
	if (e >= 31)
		return (uint16_t)(s | 0x7c00);
	if (e <= 0)
		return (uint16_t)s;
	return (uint16_t)(s | ((uint32_t)e << 10) | (m >> 13));
}

static double h2d(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	double v = e ? ldexp(1.0 + (h & 0x3ff) / 1024.0, e - 15) : ldexp((h & 0x3ff) / 1024.0, -14);

	return h & 0x8000 ? -v : v;
}

static void store(coll_dtype_t t, void *buf, size_t i, int64_t v)
{
	char *b = buf;
	float f = (float)v;
	uint32_t x;
	uint16_t h;
	double d = (double)v;

	switch (t) {
	case COLL_INT8: case COLL_UINT8: b[i] = (char)(uint8_t)v; break;
	case COLL_INT16: case COLL_UINT16: h = (uint16_t)v; memcpy(b + 2 * i, &h, 2); break;
	case COLL_INT32: case COLL_UINT32: x = (uint32_t)v; memcpy(b + 4 * i, &x, 4); break;
	case COLL_INT64: case COLL_UINT64: memcpy(b + 8 * i, &v, 8); break;
	case COLL_FLOAT16: h = f2h(f); memcpy(b + 2 * i, &h, 2); break;
	case COLL_BFLOAT16: memcpy(&x, &f, 4); h = (uint16_t)(x >> 16); memcpy(b + 2 * i, &h, 2); break;
	case COLL_FLOAT: memcpy(b + 4 * i, &f, 4); break;
	case COLL_DOUBLE: memcpy(b + 8 * i, &d, 8); break;
	default: break;
	}
}

static double load_float(coll_dtype_t t, const void *buf, size_t i)
{
	const char *b = buf;
	uint16_t h;
	uint32_t x;
	float f;
	double d;

	switch (t) {
	case COLL_FLOAT16: memcpy(&h, b + 2 * i, 2); return h2d(h);
	case COLL_BFLOAT16: memcpy(&h, b + 2 * i, 2); x = (uint32_t)h << 16; memcpy(&f, &x, 4); return f;
	case COLL_FLOAT: memcpy(&f, b + 4 * i, 4); return f;
	default: memcpy(&d, b + 8 * i, 8); return d;
	}
}

/* Compare @n elements of @got with what element j should be; count the wrong ones. */
static uint64_t compare(const struct perf *p, coll_dtype_t t, const void *got, size_t n,
			int64_t (*want)(const struct perf *, coll_dtype_t, size_t, const void *),
			const void *ctx)
{
	size_t es = coll_dtype_size(t), j;
	unsigned char exp[8];
	uint64_t wrong = 0;

	for (j = 0; j < n; j++) {
		int64_t w = want(p, t, j, ctx);

		if (is_float(t) && p->redop == COLL_AVG && reducing(p->op)) {
			double g = load_float(t, got, j);

			wrong += fabs(g - (double)w) > 1e-2 * fmax(1.0, fabs((double)w));
			continue;
		}
		store(t, exp, 0, w);
		wrong += memcmp((const char *)got + j * es, exp, es) != 0;
	}
	return wrong;
}

struct want_ctx {
	size_t param;	/* per-rank count */
};

static int64_t want_reduced(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	(void)ctx;
	return expect_reduced(p, t, j);
}

static int64_t want_rs(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	const struct want_ctx *w = ctx;

	return expect_reduced(p, t, p->rank * w->param + j);
}

static int64_t want_gathered(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	const struct want_ctx *w = ctx;

	return gen(p, t, (uint32_t)(j / w->param), j % w->param);
}

static int64_t want_root(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	(void)ctx;
	return gen(p, t, p->root, j);
}

static int64_t want_scattered(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	const struct want_ctx *w = ctx;

	return gen(p, t, p->root, p->rank * w->param + j);
}

static int64_t want_a2a(const struct perf *p, coll_dtype_t t, size_t j, const void *ctx)
{
	const struct want_ctx *w = ctx;

	return gen(p, t, (uint32_t)(j / w->param), p->rank * w->param + j % w->param);
}

/* ------------------------------------------------------ one run */

struct counts {
	size_t param, send, recv;	/* elements */
};

static struct counts op_counts(const struct perf *p, size_t bytes, coll_dtype_t t)
{
	size_t es = coll_dtype_size(t), count = bytes / es, n = p->nranks, base;
	size_t align = es >= 16 ? 1 : 16 / es;
	struct counts c = { 0, 0, 0 };

	base = count / n / align * align;
	switch (p->op) {
	case COLL_OP_ALLREDUCE: case COLL_OP_BROADCAST: case COLL_OP_REDUCE:
		c.param = c.send = c.recv = count;
		break;
	case COLL_OP_REDUCESCATTER: case COLL_OP_SCATTER:
		c.param = base; c.send = base * n; c.recv = base;
		break;
	case COLL_OP_ALLGATHER: case COLL_OP_GATHER:
		c.param = base; c.send = base; c.recv = base * n;
		break;
	case COLL_OP_ALLTOALL:
		c.param = base; c.send = c.recv = base * n;
		break;
	default:
		break;
	}
	return c;
}

static double bus_factor(const struct perf *p)
{
	double n = p->nranks;

	switch (p->op) {
	case COLL_OP_ALLREDUCE: return 2 * (n - 1) / n;
	case COLL_OP_BROADCAST: case COLL_OP_REDUCE: return 1;
	default: return (n - 1) / n;
	}
}

static int submit_async(struct perf *p, coll_dtype_t t, const void *s, void *r, size_t param,
			coll_request_t **q)
{
	coll_comm_t *c = p->comm;

	switch (p->op) {
	case COLL_OP_ALLREDUCE: return coll_allreduce(c, s, r, param, t, p->redop, q);
	case COLL_OP_REDUCESCATTER: return coll_reducescatter(c, s, r, param, t, p->redop, q);
	case COLL_OP_ALLGATHER: return coll_allgather(c, s, r, param, t, q);
	case COLL_OP_BROADCAST: return coll_broadcast(c, s, r, param, t, p->root, q);
	case COLL_OP_REDUCE: return coll_reduce(c, s, r, param, t, p->redop, p->root, q);
	case COLL_OP_SCATTER: return coll_scatter(c, s, r, param, t, p->root, q);
	case COLL_OP_GATHER: return coll_gather(c, s, r, param, t, p->root, q);
	case COLL_OP_ALLTOALL: return coll_alltoall(c, s, r, param, t, q);
	default: return -EOPNOTSUPP;
	}
}

/* One operation, waited for. */
static int submit(struct perf *p, coll_dtype_t t, const void *s, void *r, size_t param)
{
	coll_request_t *q = NULL;
	int ret = submit_async(p, t, s, r, param, &q);

	return ret ? ret : coll_wait(&q, NULL);
}

/*
 * @n operations as nccl-tests times them: each waited for at once with
 * -z 1, else submitted back to back with at most p->inflight outstanding
 * (the module's limit), the oldest waited for when it is reached.
 */
static int submit_many(struct perf *p, coll_dtype_t t, const void *s, void *r, size_t param,
		       int n)
{
	coll_request_t *q[64] = { NULL };
	uint32_t head = 0, used = 0, cap = p->blocking ? 1 : p->inflight;
	int k, ret = 0, w;

	for (k = 0; k < n && !ret; k++) {
		if (used == cap) {
			ret = coll_wait(&q[head], NULL);
			head = (head + 1) % cap;
			used--;
			if (ret)
				break;
		}
		ret = submit_async(p, t, s, r, param, &q[(head + used) % cap]);
		if (!ret)
			used++;
	}
	/* Every request is waited for, even after a failure: they are ours to free. */
	for (; used; used--, head = (head + 1) % cap) {
		w = coll_wait(&q[head], NULL);
		if (!ret)
			ret = w;
	}
	return ret;
}

static void fail(struct perf *p, const char *what, int err)
{
	const char *d = coll_last_error();

	fprintf(stderr, "coll-perf: rank %u: %s: %s%s%s\n", p->rank, what, coll_strerror(err),
		*d ? ": " : "", d);
	if (!p->err)
		p->err = err;
}

/* Run out of place (@inplace false) or in place; time in us, wrong elements of this rank. */
static int run(struct perf *p, coll_dtype_t t, struct counts c, bool inplace, double *us,
	       uint64_t *wrong)
{
	size_t es = coll_dtype_size(t), i;
	struct want_ctx w = { c.param };
	char *sp = p->sendbuf, *rp = p->recvbuf, *chk;
	size_t nchk = 0;
	double t0;
	int k, ret;
	int64_t (*want)(const struct perf *, coll_dtype_t, size_t, const void *) = NULL;
	bool is_root = rooted(p->op) && p->root == p->rank;

	if (inplace) {
		switch (p->op) {
		case COLL_OP_REDUCESCATTER: case COLL_OP_SCATTER:
			sp = p->recvbuf; rp = p->recvbuf + p->rank * c.param * es; break;
		case COLL_OP_ALLGATHER: case COLL_OP_GATHER:
			rp = p->recvbuf; sp = p->recvbuf + p->rank * c.param * es; break;
		default:
			sp = rp = p->recvbuf; break;
		}
	}
	for (k = 0; k < p->warmup; k++) {
		ret = submit_many(p, t, sp, rp, c.param, p->agg);
		if (ret)
			return ret;
	}
	ret = coll_barrier_sync(p->comm);
	if (ret)
		return ret;
	t0 = now_us();
	for (k = 0; k < p->iters; k++) {
		ret = submit_many(p, t, sp, rp, c.param, p->agg);
		if (ret)
			return ret;
	}
	*us = p->iters ? (now_us() - t0) / ((double)p->iters * p->agg) : 0;

	*wrong = 0;
	chk = rp;
	switch (p->op) {
	case COLL_OP_ALLREDUCE: want = want_reduced; nchk = c.recv; break;
	case COLL_OP_REDUCE: want = want_reduced; nchk = is_root ? c.recv : 0; break;
	case COLL_OP_REDUCESCATTER: want = want_rs; nchk = c.recv; break;
	case COLL_OP_ALLGATHER: want = want_gathered; nchk = c.recv; break;
	case COLL_OP_GATHER: want = want_gathered; nchk = is_root ? c.recv : 0; break;
	case COLL_OP_BROADCAST: want = want_root; nchk = c.recv; break;
	case COLL_OP_SCATTER: want = want_scattered; nchk = c.recv; break;
	case COLL_OP_ALLTOALL: want = want_a2a; nchk = c.recv; break;
	default: break;
	}
	for (k = 0; k < p->check; k++) {
		/* Fill the input (in place: inside the receive buffer), poison the output. */
		memset(p->recvbuf, 0x5a, p->bufbytes);
		if (!(p->op == COLL_OP_SCATTER && !is_root) &&
		    !(p->op == COLL_OP_BROADCAST && !is_root))
			for (i = 0; i < c.send; i++)
				store(t, sp, i, gen(p, t, p->rank, i));
		ret = submit(p, t, sp, rp, c.param);
		if (ret)
			return ret;
		*wrong += compare(p, t, chk, nchk, want, &w);
	}
	return 0;
}

/* Combine over the ranks with an allreduce of one double / uint64. */
static int combine_time(struct perf *p, double *us)
{
	double v = *us;
	int ret = 0;

	switch (p->avg_mode) {
	case 0: return 0;
	case 1: ret = coll_allreduce_sync(p->comm, &v, &v, 1, COLL_DOUBLE, COLL_SUM);
		v /= p->nranks; break;
	case 2: ret = coll_allreduce_sync(p->comm, &v, &v, 1, COLL_DOUBLE, COLL_MIN); break;
	default: ret = coll_allreduce_sync(p->comm, &v, &v, 1, COLL_DOUBLE, COLL_MAX); break;
	}
	if (!ret)
		*us = v;
	return ret;
}

static void fmt_time(char *buf, size_t len, double us)
{
	snprintf(buf, len, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
}

static void one_size(struct perf *p, coll_dtype_t t, size_t bytes)
{
	struct counts c = op_counts(p, bytes, t);
	size_t es = coll_dtype_size(t), sbytes = (c.send > c.recv ? c.send : c.recv) * es;
	double us[2] = { 0, 0 }, algbw[2], busbw[2];
	uint64_t wrong[2] = { 0, 0 };
	json_object *row = NULL;
	char ts[2][32], ws[2][32];
	int ip, ret;

	if (sbytes > p->bufbytes)
		return;
	for (ip = 0; ip < 2; ip++) {
		ret = run(p, t, c, ip, &us[ip], &wrong[ip]);
		p->wrong_local += wrong[ip];
		if (!ret)
			ret = combine_time(p, &us[ip]);
		if (!ret && p->check)
			ret = coll_allreduce_sync(p->comm, &wrong[ip], &wrong[ip], 1, COLL_UINT64,
						  COLL_SUM);
		if (ret) {
			fail(p, ip ? "in place" : "out of place", ret);
			return;
		}
		algbw[ip] = us[ip] > 0 ? sbytes / (us[ip] * 1e3) : 0;
		busbw[ip] = algbw[ip] * bus_factor(p);
		fmt_time(ts[ip], sizeof(ts[ip]), us[ip]);
		if (p->check)
			snprintf(ws[ip], sizeof(ws[ip]), "%5llu", (unsigned long long)wrong[ip]);
		else
			snprintf(ws[ip], sizeof(ws[ip]), "%5s", "N/A");
		p->wrong_total += wrong[ip];
	}
	p->bw_sum += busbw[1];
	p->bw_count++;
	if (p->rank)
		return;
	if (p->quiet_progress == false)
		fprintf(stderr, "\r\033[K");
	printf("%12zu  %12zu  %8s  %6s  %6d", sbytes, sbytes / es, coll_dtype_name(t),
	       reducing(p->op) ? coll_redop_name(p->redop) : "none",
	       rooted(p->op) ? (int)p->root : -1);
	for (ip = 0; ip < 2; ip++)
		printf("  %7s  %6.2f  %6.2f  %5s", ts[ip], algbw[ip], busbw[ip], ws[ip]);
	printf("\n");
	fflush(stdout);
	if (p->rows) {
		row = json_object_new_object();
		json_object_object_add(row, "size", json_object_new_int64((int64_t)sbytes));
		json_object_object_add(row, "count", json_object_new_int64((int64_t)(sbytes / es)));
		json_object_object_add(row, "type", json_object_new_string(coll_dtype_name(t)));
		json_object_object_add(row, "redop", json_object_new_string(
			reducing(p->op) ? coll_redop_name(p->redop) : "none"));
		json_object_object_add(row, "root", json_object_new_int(
			rooted(p->op) ? (int)p->root : -1));
		for (ip = 0; ip < 2; ip++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "time", json_object_new_double(us[ip]));
			json_object_object_add(o, "alg_bw", json_object_new_double(algbw[ip]));
			json_object_object_add(o, "bus_bw", json_object_new_double(busbw[ip]));
			json_object_object_add(o, "nwrong", p->check ?
				json_object_new_int64((int64_t)wrong[ip]) : NULL);
			json_object_object_add(row, ip ? "in_place" : "out_of_place", o);
		}
		json_object_array_add(p->rows, row);
	}
	if (p->csv) {
		fprintf(p->csv, "%zu,%zu,%s,%s,%d", sbytes, sbytes / es, coll_dtype_name(t),
			reducing(p->op) ? coll_redop_name(p->redop) : "none",
			rooted(p->op) ? (int)p->root : -1);
		for (ip = 0; ip < 2; ip++) {
			fprintf(p->csv, ",%.2f,%.4f,%.4f,", us[ip], algbw[ip], busbw[ip]);
			if (p->check)
				fprintf(p->csv, "%llu", (unsigned long long)wrong[ip]);
			else
				fputs("N/A", p->csv);
		}
		fputc('\n', p->csv);
	}
}

static void sweep(struct perf *p, coll_dtype_t t)
{
	size_t b, prev;

	for (b = p->minb; b <= p->maxb && !p->err; ) {
		if (p->rank == 0 && !p->quiet_progress)
			fprintf(stderr, "\r\033[K# %s %s %zu bytes...", coll_op_name(p->op),
				coll_dtype_name(t), b);
		one_size(p, t, b);
		prev = b;
		if (p->factor > 1)
			b = (size_t)((double)b * p->factor);
		else
			b += p->stepb;
		if (b <= prev)
			break;
	}
}

int main(int argc, char **argv)
{
	enum { O_OP = 256, O_RANK, O_TABLE };
	static const struct option lo[] = {
		{ "op", required_argument, NULL, O_OP },
		{ "nthreads", required_argument, NULL, 't' },
		{ "ngpus", required_argument, NULL, 'g' },
		{ "agg_iters", required_argument, NULL, 'm' },
		{ "blocking", required_argument, NULL, 'z' },
		{ "parallel_init", required_argument, NULL, 'p' },
		{ "cudagraph", required_argument, NULL, 'G' },
		{ "stream_null", required_argument, NULL, 'y' },
		{ "local_register", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "output_file", required_argument, NULL, 'F' },
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "stepbytes", required_argument, NULL, 'i' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "check", required_argument, NULL, 'c' },
		{ "op_type", required_argument, NULL, 'o' },
		{ "datatype", required_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "average", required_argument, NULL, 'a' },
		{ "algo", required_argument, NULL, 'A' },
		{ "rank", required_argument, NULL, O_RANK },
		{ "ranktable", required_argument, NULL, O_TABLE },
		{ "json", required_argument, NULL, 'J' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf p = {
		.op = COLL_OP_ALLREDUCE, .minb = 32 << 20, .maxb = 32 << 20, .stepb = 1 << 20,
		.factor = 1, .iters = 20, .warmup = 5, .check = 1, .avg_mode = 1, .agg = 1,
		.dtype = COLL_FLOAT, .redop = COLL_SUM,
	};
	struct coll_comm_opts opts = { .size = sizeof(opts) };
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const char *rankstr = launcher_rank(), *table = getenv("KCOLL_RANKTABLE");
	const char *json_path = NULL, *csv_path = NULL;
	bool do_register = true;
	const char *want = NULL;	/* the expected form, for a bad value */
	struct coll_module_info info;
	coll_mr_t *mrs = NULL, *mrr = NULL;
	int opt, ret, d, o, r;
	long v;
	char *end, aerr[160];

	if (strstr(prog, "_perf"))
		coll_op_parse(prog, &p.op);
	while ((opt = getopt_long(argc, argv, "t:g:b:e:f:i:n:w:m:z:p:G:y:c:o:d:r:a:A:R:T:J:F:Vh",
				  lo, NULL)) != -1) {
		want = NULL;
		aerr[0] = '\0';
		switch (opt) {
		case 't':
			/* nccl-tests' thread count; a name is the op, as before. */
			if (!parse_int(optarg, 1, 1, &v, NULL, 0))
				break;
			if (!parse_int(optarg, 0, INT_MAX, &v, NULL, 0)) {
				fprintf(stderr, "%s: -t %s: kcoll runs one rank per process and "
					"one thread per rank: -t 1 (start more processes for more "
					"ranks)\n", prog, optarg);
				return 2;
			}
			/* fall through */
		case O_OP:
			if (coll_op_parse(optarg, &p.op))
				goto bad;
			if (p.op == COLL_OP_ALLTOALLV || p.op == COLL_OP_BARRIER) {
				fprintf(stderr, "%s: -t %s: coll-perf measures allreduce, "
					"reducescatter, allgather, broadcast, reduce, scatter, "
					"gather and alltoall\n", prog, optarg);
				return 2;
			}
			break;
		case 'b': if (perf_size(optarg, &p.minb, aerr, sizeof(aerr))) goto bad; break;
		case 'e': if (perf_size(optarg, &p.maxb, aerr, sizeof(aerr))) goto bad; break;
		case 'i':
			if (perf_size(optarg, &p.stepb, aerr, sizeof(aerr)))
				goto bad;
			if (!p.stepb) {
				snprintf(aerr, sizeof(aerr), "%s out of range 1..1T", optarg);
				goto bad;
			}
			break;
		case 'f':
			want = "a factor >= 1";
			p.factor = strtod(optarg, &end);
			if (end == optarg || *end || !(p.factor >= 1) || isinf(p.factor))
				goto bad;
			break;
		case 'n':
			if (parse_int(optarg, 0, INT_MAX, &v, aerr, sizeof(aerr)))
				goto bad;
			p.iters = (int)v;
			break;
		case 'w':
			if (parse_int(optarg, 0, INT_MAX, &v, aerr, sizeof(aerr)))
				goto bad;
			p.warmup = (int)v;
			break;
		case 'c':
			if (parse_int(optarg, 0, INT_MAX, &v, aerr, sizeof(aerr)))
				goto bad;
			p.check = (int)v;
			break;
		case 'a':
			if (parse_int(optarg, 0, 3, &v, aerr, sizeof(aerr)))
				goto bad;
			p.avg_mode = (int)v;
			break;
		case 'o':
			if (!strcmp(optarg, "all"))
				p.all_redops = true;
			else if (coll_redop_parse(optarg, &p.redop))
				goto bad;
			break;
		case 'd':
			if (!strcmp(optarg, "all"))
				p.all_dtypes = true;
			else if (coll_dtype_parse(optarg, &p.dtype))
				goto bad;
			break;
		case 'r':
			if (!strcmp(optarg, "all"))
				p.all_roots = true;
			else if (parse_int(optarg, 0, INT32_MAX, &v, aerr, sizeof(aerr)))
				goto bad;
			else
				p.root = (uint32_t)v;
			break;
		case 'g':
			if (parse_int(optarg, 1, 1, &v, NULL, 0)) {
				fprintf(stderr, "%s: -g %s: kcoll moves host memory, one buffer "
					"pair per process: -g 1\n", prog, optarg);
				return 2;
			}
			break;
		case 'm':
			if (parse_int(optarg, 1, 1 << 20, &v, aerr, sizeof(aerr)))
				goto bad;
			p.agg = (int)v;
			break;
		case 'z':
			if (parse_int(optarg, 0, 1, &v, aerr, sizeof(aerr)))
				goto bad;
			p.blocking = v;
			break;
		case 'R':
			/* 2 as 1 */
			if (parse_int(optarg, 0, 2, &v, aerr, sizeof(aerr)))
				goto bad;
			do_register = v;
			break;
		case 'T':
			if (parse_int(optarg, 1, 3600, &v, aerr, sizeof(aerr)))
				goto bad;
			opts.timeout_ms = (uint32_t)v * 1000;
			break;
		case 'p':
		case 'G':
		case 'y':
			if (parse_int(optarg, 0, 0, &v, NULL, 0)) {
				fprintf(stderr, "%s: -%c %s: %s\n", prog, opt, optarg,
					opt == 'p' ? "one thread per process: nothing to "
					"initialise in parallel (-p 0)" : opt == 'G' ?
					"no CUDA graphs without CUDA (-G 0)" :
					"no CUDA streams without CUDA (-y 0)");
				return 2;
			}
			break;
		case 'A': opts.algo = optarg; break;
		case O_RANK: rankstr = optarg; break;
		case O_TABLE: table = optarg; break;
		case 'J': json_path = optarg; break;
		case 'F': csv_path = optarg; break;
		case 'V': tool_print_version(stdout, prog, NULL); return 0;
		case 'h': usage(stdout, prog); return 0;
		default: usage(stderr, prog); return 2;
		}
		continue;
bad:
		if (aerr[0]) {
			/* "coll-perf: --root 9 out of range 0..7": the value and its range */
			fprintf(stderr, "%s: --%s %s\nTry '%s --help'.\n", prog,
				long_name(lo, opt), aerr, prog);
			return 2;
		}
		fprintf(stderr, "%s: invalid value '%s' for -%c%s%s%s%s\nTry '%s --help'.\n", prog,
			optarg, opt, *coll_last_error() ? ": " : "", coll_last_error(),
			want ? ": expected " : "", want ? want : "", prog);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\nTry '%s --help'.\n", prog,
			argv[optind], prog);
		return 2;
	}
	if (p.minb > p.maxb) {
		fprintf(stderr, "%s: -b %zu is larger than -e %zu\n", prog, p.minb, p.maxb);
		return 2;
	}
	if (!table || !rankstr) {
		fprintf(stderr, "%s: need a rank table and a rank: --ranktable FILE --rank RANK, "
			"or KCOLL_RANKTABLE and KCOLL_RANK (kcoll-vm run sets both; under mpirun "
			"or srun, KCOLL_RANKTABLE and the launcher's rank)\n", prog);
		return 2;
	}
	if (parse_int(rankstr, 0, INT32_MAX, &v, aerr, sizeof(aerr))) {
		fprintf(stderr, "%s: --rank %s\n", prog, aerr);
		return 2;
	}
	p.rank = (uint32_t)v;
	p.quiet_progress = !isatty(2);

	ret = coll_comm_init_ranktable_opts(table, p.rank, &opts, &p.comm);
	if (ret) {
		fprintf(stderr, "%s: rank %u: %s\n", prog, p.rank, coll_last_error());
		return 1;
	}
	p.nranks = (uint32_t)coll_comm_size(p.comm);
	/* Outstanding operations: the module's limit, and the ring of submit_many(). */
	p.inflight = 64;
	if (!coll_module_info(opts.device, &info) && info.max_inflight &&
	    info.max_inflight < p.inflight)
		p.inflight = info.max_inflight;
	if (p.root >= p.nranks) {
		fprintf(stderr, "%s: --root %u out of range 0..%u\n", prog, p.root, p.nranks - 1);
		coll_comm_destroy(p.comm);
		return 2;
	}
	/* Buffers: the size column is max(send, recv) bytes, so maxbytes each. */
	p.bufbytes = p.maxb + 64;
	p.sendbuf = mmap(NULL, p.bufbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	p.recvbuf = mmap(NULL, p.bufbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (p.sendbuf == MAP_FAILED || p.recvbuf == MAP_FAILED) {
		fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", prog, p.bufbytes);
		ret = -ENOMEM;
		goto out;
	}
	memset(p.sendbuf, 0, p.bufbytes);
	memset(p.recvbuf, 0, p.bufbytes);
	ret = do_register ? coll_mem_register(p.comm, p.sendbuf, p.bufbytes, &mrs) : 0;
	if (!ret && do_register)
		ret = coll_mem_register(p.comm, p.recvbuf, p.bufbytes, &mrr);
	if (ret) {
		fprintf(stderr, "%s: rank %u: %s\n", prog, p.rank, coll_last_error());
		goto out;
	}
	if (json_path && p.rank == 0)
		p.rows = json_object_new_array();
	if (csv_path && p.rank == 0) {
		p.csv = fopen(csv_path, "w");
		if (!p.csv) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog, csv_path,
				strerror(errno));
			ret = -errno;
			goto out;
		}
		fputs("size,count,type,redop,root,oop_time_us,oop_algbw,oop_busbw,oop_wrong,"
		      "ip_time_us,ip_algbw,ip_busbw,ip_wrong\n", p.csv);
	}

	if (p.rank == 0) {
		char host[64] = "?";

		gethostname(host, sizeof(host) - 1);
		printf("# coll-perf (kcoll): %s, %u ranks, communicator %llu\n",
		       coll_op_name(p.op), p.nranks, (unsigned long long)coll_comm_id(p.comm));
		printf("# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %g(%s) warmup "
		       "iters: %d iters: %d agg iters: %d validation: %d graph: 0\n", p.minb,
		       p.maxb, p.factor > 1 ? p.factor : (double)p.stepb,
		       p.factor > 1 ? "factor" : "bytes", p.warmup, p.iters, p.agg, p.check);
		printf("#\n# Using devices\n#  Rank %2u Group  0 Pid %6d on %10s device  0 "
		       "[kcoll]\n#\n", p.rank, (int)getpid(), host);
		printf("#%*s%s%*s%s\n", 59, "", "out-of-place", 23, "", "in-place");
		printf("#       size         count      type   redop    root     time   algbw   "
		       "busbw #wrong     time   algbw   busbw #wrong\n");
		printf("#        (B)    (elements)                               (us)  (GB/s)  "
		       "(GB/s)            (us)  (GB/s)  (GB/s)       \n");
		fflush(stdout);
	}
	{
		int d_lo = p.all_dtypes ? 0 : (int)p.dtype;
		int d_hi = p.all_dtypes ? COLL_DTYPE_COUNT - 1 : (int)p.dtype;
		int o_lo = p.all_redops && reducing(p.op) ? 0 : (int)p.redop;
		int o_hi = p.all_redops && reducing(p.op) ? COLL_REDOP_COUNT - 1 : (int)p.redop;
		int r_lo = p.all_roots && rooted(p.op) ? 0 : (int)p.root;
		int r_hi = p.all_roots && rooted(p.op) ? (int)p.nranks - 1 : (int)p.root;

		for (d = d_lo; d <= d_hi && !p.err; d++)
			for (o = o_lo; o <= o_hi && !p.err; o++)
				for (r = r_lo; r <= r_hi && !p.err; r++) {
					p.redop = o;
					p.root = (uint32_t)r;
					sweep(&p, d);
				}
	}
	if (p.wrong_local)
		fprintf(stderr, "rank=%u #wrong=%llu\n", p.rank,
			(unsigned long long)p.wrong_local);
	if (p.rank == 0 && !p.err) {
		printf("# Out of bounds values : %llu %s\n", (unsigned long long)p.wrong_total,
		       p.wrong_total ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g \n#\n",
		       p.bw_count ? p.bw_sum / p.bw_count : 0.0);
	}
	if (p.rows && json_object_to_file_ext(json_path, p.rows, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, json_path,
			json_util_get_last_err());
		p.err = -EIO;
	}
	ret = p.err;
out:
	if (p.csv && fclose(p.csv) && !ret) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, csv_path, strerror(errno));
		ret = -EIO;
	}
	json_object_put(p.rows);
	if (mrr)
		coll_mem_deregister(p.comm, mrr);
	if (mrs)
		coll_mem_deregister(p.comm, mrs);
	coll_comm_destroy(p.comm);
	if (p.sendbuf && p.sendbuf != MAP_FAILED)
		munmap(p.sendbuf, p.bufbytes);
	if (p.recvbuf && p.recvbuf != MAP_FAILED)
		munmap(p.recvbuf, p.bufbytes);
	return ret || p.wrong_total || p.wrong_local ? 1 : 0;
}
