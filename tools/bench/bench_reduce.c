// SPDX-License-Identifier: GPL-2.0
/*
 * bench_reduce: reduction throughput of algo/'s kernels (kc_reduce(), the
 * same loops the module runs inside its FPU sections) against memcpy()
 * throughput on the same buffers, in the same run.  `make bench` runs it
 * inside a VM next to the collectives so the report can say how much of a
 * collective's time the reduction can explain.
 *
 * One line per dtype:
 *   bench-reduce dtype=float bytes=B reduce_gbs=X memcpy_gbs=Y ratio=X/Y
 * (GB/s of input = 1e9 B/s; reduce reads dst and src and writes dst,
 * memcpy reads src and writes dst).  The result of one reduction is
 * checked exactly; exit status 1 if it is wrong.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kc_reduce.h"
#include "size.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of @reps runs of @passes operations on @bytes, in GB/s. */
static double rate(int is_reduce, void *dst, const void *src, size_t bytes, u32 dtype,
		   int passes, int reps)
{
	double best = 0, t, gbs;
	int r, p;

	for (r = 0; r < reps; r++) {
		t = now_s();
		for (p = 0; p < passes; p++) {
			if (is_reduce)
				kc_reduce(dst, src, bytes / kc_dtype_size(dtype), dtype, KCOLL_SUM);
			else
				memcpy(dst, src, bytes);
		}
		t = now_s() - t;
		gbs = (double)bytes * passes / t / 1e9;
		if (gbs > best)
			best = gbs;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const u32 dtypes[] = { KCOLL_FP32, KCOLL_FP64, KCOLL_INT32, KCOLL_BF16 };
	uint64_t v = 4 << 20;
	char err[160] = "";
	size_t bytes, i, n;
	unsigned int d;
	float *a, *b;
	int bad = 0;

	/* BYTES as every kcoll tool reads a size (tools/common/size.h) */
	if (argc > 2 || (argc == 2 && parse_size(argv[1], &v, err, sizeof(err))) || v < 64 ||
	    v % 8 || v > (1ull << 30)) {
		if (err[0])
			fprintf(stderr, "bench_reduce: %s\n", err);
		fprintf(stderr, "usage: bench_reduce [BYTES]  (a multiple of 8 in 64..1G; "
			"4096, 64K, 1.5M: powers of 1024; default 4M)\n");
		return 2;
	}
	bytes = (size_t)v;
	a = malloc(bytes);
	b = malloc(bytes);
	if (!a || !b) {
		fprintf(stderr, "bench_reduce: out of memory for %zu bytes\n", bytes);
		return 1;
	}
	/* Exact check: float small integers, one SUM. */
	n = bytes / sizeof(float);
	for (i = 0; i < n; i++) {
		a[i] = (float)(i % 97);
		b[i] = (float)(i % 89);
	}
	kc_reduce(a, b, n, KCOLL_FP32, KCOLL_SUM);
	for (i = 0; i < n; i++)
		if (a[i] != (float)(i % 97 + i % 89))
			bad = 1;
	if (bad)
		fprintf(stderr, "bench_reduce: float sum gave a wrong element\n");
	for (d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
		double red, cpy;

		memset(a, 0, bytes);
		memset(b, 0, bytes);
		red = rate(1, a, b, bytes, dtypes[d], 4, 3);
		cpy = rate(0, a, b, bytes, dtypes[d], 4, 3);
		printf("bench-reduce dtype=%s bytes=%zu reduce_gbs=%.3f memcpy_gbs=%.3f ratio=%.3f\n",
		       kc_dtype_name(dtypes[d]), bytes, red, cpy, cpy > 0 ? red / cpy : 0);
	}
	free(a);
	free(b);
	return bad;
}
