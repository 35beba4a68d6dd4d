// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of algo/kc_reduce.c and algo/kc_reduce_fpu.c.
 *
 * Every result is compared with a reference computed here independently:
 * integers in 128-bit arithmetic truncated to the element width, fp32/fp64
 * with C float operations, fp16/bf16 exactly in double and rounded by a
 * generic frexp/ldexp/nearbyint routine that shares no code with the
 * library's bit manipulation.
 *
 * Prints one line per check group and ends with "N passed, M failed";
 * exits non-zero if anything failed.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kc_port.h"
#include "kc_reduce.h"
#include "kc_reduce_fpu.h"

#define MAX_FAIL_PRINT	10
#define __printf(a, b)	__attribute__((format(printf, a, b)))

static unsigned long n_passed, n_failed;
static unsigned long g_passed, g_failed;
static const char *g_name;

static void group_begin(const char *name)
{
	g_name = name;
	g_passed = 0;
	g_failed = 0;
}

static void group_end(void)
{
	if (g_failed)
		printf("FAIL %s: %lu of %lu checks failed\n", g_name, g_failed,
		       g_passed + g_failed);
	else
		printf("ok   %s: %lu checks\n", g_name, g_passed);
}

static bool __printf(2, 3) check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		n_passed++;
		g_passed++;
		return true;
	}
	n_failed++;
	g_failed++;
	if (g_failed <= MAX_FAIL_PRINT) {
		printf("  FAIL [%s] ", g_name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	return false;
}

/* ------------------------------------------------------------ helpers */

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 rnd(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double rnd_unit(void)
{
	return (double)(rnd() >> 11) * 0x1p-52 - 1.0;
}

static const u32 all_dtypes[] = {
	KCOLL_INT8, KCOLL_UINT8, KCOLL_INT16, KCOLL_UINT16,
	KCOLL_INT32, KCOLL_UINT32, KCOLL_INT64, KCOLL_UINT64,
	KCOLL_FP16, KCOLL_BF16, KCOLL_FP32, KCOLL_FP64,
};

static const u32 all_redops[] = {
	KCOLL_SUM, KCOLL_PROD, KCOLL_MAX, KCOLL_MIN, KCOLL_AVG,
};

static bool is_signed_int(u32 dt)
{
	return dt == KCOLL_INT8 || dt == KCOLL_INT16 || dt == KCOLL_INT32 ||
	       dt == KCOLL_INT64;
}

static u32 esize(u32 dt)
{
	static const u32 sz[] = { 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8 };

	return sz[dt];
}

/* Raw element bits, zero-extended. */
static u64 ld(const void *p, size_t i, u32 dt)
{
	switch (esize(dt)) {
	case 1:
		return ((const u8 *)p)[i];
	case 2:
		return ((const u16 *)p)[i];
	case 4:
		return ((const u32 *)p)[i];
	default:
		return ((const u64 *)p)[i];
	}
}

static void st(void *p, size_t i, u32 dt, u64 v)
{
	switch (esize(dt)) {
	case 1:
		((u8 *)p)[i] = (u8)v;
		break;
	case 2:
		((u16 *)p)[i] = (u16)v;
		break;
	case 4:
		((u32 *)p)[i] = (u32)v;
		break;
	default:
		((u64 *)p)[i] = v;
		break;
	}
}

static __int128_t int_val(u32 dt, u64 raw)
{
	unsigned int bits = esize(dt) * 8;

	if (is_signed_int(dt) && bits < 64 && (raw >> (bits - 1)) & 1)
		return (__int128_t)raw - ((__int128_t)1 << bits);
	if (is_signed_int(dt) && bits == 64)
		return (__int128_t)(s64)raw;
	return raw;
}

static float bits_f(u32 u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static u32 f_bits(float f)
{
	u32 u;

	memcpy(&u, &f, 4);
	return u;
}

static double bits_d(u64 u)
{
	double f;

	memcpy(&f, &u, 8);
	return f;
}

static u64 d_bits(double f)
{
	u64 u;

	memcpy(&u, &f, 8);
	return u;
}

/* Small binary formats: fp16 is (10, 5), bf16 is (7, 8). */
struct small_fmt {
	int mbits, ebits;
};

static const struct small_fmt fmt_h = { 10, 5 };
static const struct small_fmt fmt_bf = { 7, 8 };

static double small_to_d(u16 h, struct small_fmt f)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	int e = (h >> f.mbits) & ((1 << f.ebits) - 1);
	int m = h & ((1 << f.mbits) - 1);
	double v;

	if (e == (1 << f.ebits) - 1)
		v = m ? NAN : INFINITY;
	else if (!e)
		v = ldexp(m, 1 - bias - f.mbits);
	else
		v = ldexp(m + (1 << f.mbits), e - bias - f.mbits);
	return (h >> 15) ? -v : v;
}

static bool small_isnan(u16 h, struct small_fmt f)
{
	u16 inf = (u16)(((1 << f.ebits) - 1) << f.mbits);

	return (h & 0x7fff) > inf;
}

static bool small_isquiet(u16 h, struct small_fmt f)
{
	return small_isnan(h, f) && (h >> (f.mbits - 1)) & 1;
}

/* Round a double to the nearest small_fmt value, ties to even. */
static u16 d_to_small(double x, struct small_fmt f)
{
	int bias = (1 << (f.ebits - 1)) - 1;
	int emin = 1 - bias;
	u16 inf = (u16)(((1 << f.ebits) - 1) << f.mbits);
	u16 sign = signbit(x) ? 0x8000 : 0;
	double a = fabs(x), q;
	int e;

	if (isnan(x))
		return sign | inf | (1 << (f.mbits - 1));
	if (a >= ldexp(2.0 - ldexp(1.0, -f.mbits - 1), bias))
		return sign | inf;
	if (a < ldexp(1.0, emin))	/* subnormal: units of 2^(emin - mbits) */
		return sign | (u16)nearbyint(ldexp(a, f.mbits - emin));
	frexp(a, &e);
	e--;				/* a = 1.xxx * 2^e */
	q = nearbyint(ldexp(a, f.mbits - e));
	if (q == ldexp(1.0, f.mbits + 1)) {
		q /= 2;
		e++;
	}
	return sign | (u16)((e + bias) << f.mbits) | ((u16)q - (1 << f.mbits));
}

/* Reference max/min: NaN if either is NaN, -0 < +0. */
static double ref_max(double a, double b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static double ref_min(double a, double b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}

static float ref_maxf(float a, float b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static float ref_minf(float a, float b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (a == 0 && b == 0)
		return signbit(a) ? a : b;
	return a < b ? a : b;
}

static u64 ref_int(u32 dt, u32 op, u64 a, u64 b)
{
	__int128_t x = int_val(dt, a), y = int_val(dt, b), r = 0;

	switch (op) {
	case KCOLL_SUM:
		r = x + y;
		break;
	case KCOLL_PROD:
		/* |x|, |y| <= 2^64: the product fits unsigned 128 bits */
		r = (__int128_t)((__uint128_t)x * (__uint128_t)y);
		break;
	case KCOLL_MAX:
		r = x > y ? x : y;
		break;
	case KCOLL_MIN:
		r = x < y ? x : y;
		break;
	}
	return (u64)r;	/* st() truncates to the element width */
}

/* fp16/bf16 operands are exact in double; one rounding at the end. */
static u64 ref_small(struct small_fmt f, u32 op, u64 a, u64 b)
{
	double x = small_to_d((u16)a, f), y = small_to_d((u16)b, f), r = 0;

	switch (op) {
	case KCOLL_SUM:
		r = x + y;
		break;
	case KCOLL_PROD:
		r = x * y;
		break;
	case KCOLL_MAX:
		r = ref_max(x, y);
		break;
	case KCOLL_MIN:
		r = ref_min(x, y);
		break;
	}
	return d_to_small(r, f);
}

static u64 ref_f32(u32 op, u64 a, u64 b)
{
	float x = bits_f((u32)a), y = bits_f((u32)b), r = 0;

	switch (op) {
	case KCOLL_SUM:
		r = x + y;
		break;
	case KCOLL_PROD:
		r = x * y;
		break;
	case KCOLL_MAX:
		r = ref_maxf(x, y);
		break;
	case KCOLL_MIN:
		r = ref_minf(x, y);
		break;
	}
	return f_bits(r);
}

static u64 ref_f64(u32 op, u64 a, u64 b)
{
	double x = bits_d(a), y = bits_d(b), r = 0;

	switch (op) {
	case KCOLL_SUM:
		r = x + y;
		break;
	case KCOLL_PROD:
		r = x * y;
		break;
	case KCOLL_MAX:
		r = ref_max(x, y);
		break;
	case KCOLL_MIN:
		r = ref_min(x, y);
		break;
	}
	return d_bits(r);
}

/* Expected raw bits of a OP b for element type dt. */
static u64 ref_op(u32 dt, u32 op, u64 a, u64 b)
{
	if (op == KCOLL_AVG)
		op = KCOLL_SUM;

	switch (dt) {
	case KCOLL_FP16:
		return ref_small(fmt_h, op, a, b);
	case KCOLL_BF16:
		return ref_small(fmt_bf, op, a, b);
	case KCOLL_FP32:
		return ref_f32(op, a, b);
	case KCOLL_FP64:
		return ref_f64(op, a, b);
	default:
		return ref_int(dt, op, a, b);
	}
}

static bool raw_isnan(u32 dt, u64 v)
{
	switch (dt) {
	case KCOLL_FP16:
		return small_isnan((u16)v, fmt_h);
	case KCOLL_BF16:
		return small_isnan((u16)v, fmt_bf);
	case KCOLL_FP32:
		return (v & 0x7fffffff) > 0x7f800000;
	case KCOLL_FP64:
		return (v & ~(1ull << 63)) > 0x7ff0000000000000ull;
	}
	return false;
}

static bool raw_isquiet(u32 dt, u64 v)
{
	switch (dt) {
	case KCOLL_FP16:
		return small_isquiet((u16)v, fmt_h);
	case KCOLL_BF16:
		return small_isquiet((u16)v, fmt_bf);
	case KCOLL_FP32:
		return raw_isnan(dt, v) && (v & 0x00400000);
	case KCOLL_FP64:
		return raw_isnan(dt, v) && (v & 0x0008000000000000ull);
	}
	return false;
}

static u64 trunc_raw(u32 dt, u64 v)
{
	return esize(dt) == 8 ? v : v & ((1ull << (esize(dt) * 8)) - 1);
}

/*
 * Same value: identical bits, or both NaN.  NaN results of an operation
 * (quiet_nan) must also be quiet.
 */
static bool same_raw(u32 dt, u64 got, u64 exp, bool quiet_nan)
{
	got = trunc_raw(dt, got);
	exp = trunc_raw(dt, exp);
	if (raw_isnan(dt, exp))
		return quiet_nan ? raw_isquiet(dt, got) : raw_isnan(dt, got);
	return got == exp;
}

/* Compare n elements; report the first mismatch. */
static void check_buf(const char *what, u32 dt, u32 op, const void *got,
		      const void *exp, size_t n, bool quiet_nan)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < n; i++) {
		if (!same_raw(dt, ld(got, i, dt), ld(exp, i, dt), quiet_nan)) {
			if (!bad++)
				first = i;
		}
	}
	if (!bad) {
		check(true, "%s", what);
		return;
	}
	check(false, "%s %s/%s n=%zu: %zu wrong, first [%zu] got 0x%" PRIx64
	      " want 0x%" PRIx64, what, kc_dtype_name(dt), kc_redop_name(op), n,
	      bad, first, ld(got, first, dt), ld(exp, first, dt));
}

/* ---------------------------------------------------------- test data */

static const u64 int_specials[] = {
	0, 1, 2, 0xffffffffffffffffull, 0x7f, 0x80, 0xff, 0x7fff, 0x8000,
	0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xfffffffffffffffeull, 0x81, 0x8001,
};

static const u16 h_specials[] = {
	0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe00, 0x0001,
	0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3800,
};

static const u16 bf_specials[] = {
	0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc0, 0x0001,
	0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3f00,
};

static const u32 f_specials[] = {
	0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
	0xffc00000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff,
	0xff7fffff, 0x3f800000, 0xbf800000, 0x477fe000,
};

static const u64 d_specials[] = {
	0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull,
	0xfff0000000000000ull, 0x7ff8000000000000ull, 0x7ff0000000000001ull,
	0xfff8000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
	0x000fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull,
	0xffefffffffffffffull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
};

static u64 rnd_elem(u32 dt)
{
	u64 r = rnd(), sel = r & 7;
	double v = rnd_unit();

	r = rnd();
	switch (dt) {
	case KCOLL_FP16:
		if (sel == 0)
			return h_specials[r % ARRAY_SIZE(h_specials)];
		if (sel < 4)
			return r & 0xffff;
		return d_to_small(ldexp(v, (int)(r % 30) - 20), fmt_h);
	case KCOLL_BF16:
		if (sel == 0)
			return bf_specials[r % ARRAY_SIZE(bf_specials)];
		if (sel < 4)
			return r & 0xffff;
		return d_to_small(ldexp(v, (int)(r % 280) - 140), fmt_bf);
	case KCOLL_FP32:
		if (sel == 0)
			return f_specials[r % ARRAY_SIZE(f_specials)];
		if (sel < 4)
			return r & 0xffffffff;
		return f_bits((float)ldexp(v, (int)(r % 280) - 140));
	case KCOLL_FP64:
		if (sel == 0)
			return d_specials[r % ARRAY_SIZE(d_specials)];
		if (sel < 4)
			return r;
		return d_bits(ldexp(v, (int)(r % 2200) - 1100));
	default:
		if (sel < 2)
			return int_specials[r % ARRAY_SIZE(int_specials)];
		if (sel < 4)
			return r & 0xff;
		return r;
	}
}

static void *fill_rnd(u32 dt, size_t n)
{
	void *p = malloc(n * esize(dt) + 1);
	size_t i;

	if (!p) {
		perror("malloc");
		exit(2);
	}
	for (i = 0; i < n; i++)
		st(p, i, dt, rnd_elem(dt));
	return p;
}

static void *dup_buf(const void *p, size_t bytes)
{
	void *q = malloc(bytes + 1);

	if (!q) {
		perror("malloc");
		exit(2);
	}
	memcpy(q, p, bytes);
	return q;
}

/* ------------------------------------------------------------- groups */

static void test_names(void)
{
	static const char * const dn[] = {
		"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
		"uint64", "fp16", "bf16", "fp32", "fp64",
	};
	static const char * const rn[] = { "sum", "prod", "max", "min", "avg" };
	u32 i;

	group_begin("names, sizes, validity");
	for (i = 0; i < ARRAY_SIZE(all_dtypes); i++) {
		u32 dt = all_dtypes[i];

		check(kc_dtype_size(dt) == esize(dt), "size of %u", dt);
		check(!strcmp(kc_dtype_name(dt), dn[i]), "name of %u: %s", dt,
		      kc_dtype_name(dt));
		check(kc_dtype_is_float(dt) == (dt >= KCOLL_FP16), "is_float %u", dt);
	}
	for (i = 0; i < ARRAY_SIZE(all_redops); i++) {
		check(!strcmp(kc_redop_name(all_redops[i]), rn[i]), "redop name %u",
		      all_redops[i]);
		check(kc_redop_valid(all_redops[i]), "redop valid %u", all_redops[i]);
	}
	check(kc_dtype_size(KCOLL_DTYPE_COUNT) == 0, "size of DTYPE_COUNT");
	check(kc_dtype_size(U32_MAX) == 0, "size of U32_MAX");
	check(!kc_dtype_is_float(KCOLL_DTYPE_COUNT), "is_float DTYPE_COUNT");
	check(kc_dtype_name(KCOLL_DTYPE_COUNT) != NULL, "name of bad dtype");
	check(kc_redop_name(KCOLL_REDOP_COUNT) != NULL, "name of bad redop");
	check(!kc_redop_valid(KCOLL_REDOP_COUNT), "REDOP_COUNT invalid");
	check(!kc_redop_valid(U32_MAX), "U32_MAX invalid");
	group_end();
}

static void test_einval(void)
{
	u32 a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 };
	u32 bad_dt[] = { KCOLL_DTYPE_COUNT, 100, U32_MAX };
	u32 bad_op[] = { KCOLL_REDOP_COUNT, 77, U32_MAX };
	u32 i;

	group_begin("-EINVAL for bad dtype/redop/divisor");
	for (i = 0; i < ARRAY_SIZE(bad_dt); i++) {
		check(kc_reduce(a, b, 4, bad_dt[i], KCOLL_SUM) == -EINVAL,
		      "reduce dtype %u", bad_dt[i]);
		check(kc_reduce(a, b, 0, bad_dt[i], KCOLL_SUM) == -EINVAL,
		      "reduce count 0 dtype %u", bad_dt[i]);
		check(kc_reduce_avg_finish(a, 4, bad_dt[i], 2) == -EINVAL,
		      "avg dtype %u", bad_dt[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad_op); i++) {
		check(kc_reduce(a, b, 4, KCOLL_INT32, bad_op[i]) == -EINVAL,
		      "reduce int32 redop %u", bad_op[i]);
		check(kc_reduce(a, b, 4, KCOLL_FP32, bad_op[i]) == -EINVAL,
		      "reduce fp32 redop %u", bad_op[i]);
	}
	check(kc_reduce_avg_finish(a, 4, KCOLL_INT32, 0) == -EINVAL, "avg int32 divisor 0");
	check(kc_reduce_avg_finish(a, 4, KCOLL_FP32, 0) == -EINVAL, "avg fp32 divisor 0");
	check(a[0] == 1 && a[1] == 2 && a[2] == 3 && a[3] == 4, "buffer untouched");
	group_end();
}

/* Every dtype x redop on random data, dst != src, several counts. */
static void test_all_ops(void)
{
	static const size_t counts[] = { 1, 2, 3, 7, 64, 1031, 10007 };
	size_t ci, i;
	u32 di, oi;

	group_begin("every dtype x redop vs reference (counts 1..10007)");
	for (di = 0; di < ARRAY_SIZE(all_dtypes); di++) {
		u32 dt = all_dtypes[di];

		for (oi = 0; oi < ARRAY_SIZE(all_redops); oi++) {
			u32 op = all_redops[oi];

			for (ci = 0; ci < ARRAY_SIZE(counts); ci++) {
				size_t n = counts[ci], bytes = n * esize(dt);
				u8 *dst = fill_rnd(dt, n);
				u8 *src = fill_rnd(dt, n);
				u8 *src0 = dup_buf(src, bytes);
				u8 *exp = dup_buf(dst, bytes);
				int rc;

				for (i = 0; i < n; i++)
					st(exp, i, dt, ref_op(dt, op, ld(dst, i, dt),
							      ld(src, i, dt)));
				rc = kc_reduce(dst, src, n, dt, op);
				check(rc == 0, "%s/%s rc %d", kc_dtype_name(dt),
				      kc_redop_name(op), rc);
				check_buf("reduce", dt, op, dst, exp, n, true);
				check(!memcmp(src, src0, bytes), "%s/%s src modified",
				      kc_dtype_name(dt), kc_redop_name(op));
				free(dst);
				free(src);
				free(src0);
				free(exp);
			}
		}
	}
	group_end();
}

/* AVG reduces exactly like SUM. */
static void test_avg_is_sum(void)
{
	const size_t n = 5000;
	u32 di;

	group_begin("AVG reduce == SUM reduce");
	for (di = 0; di < ARRAY_SIZE(all_dtypes); di++) {
		u32 dt = all_dtypes[di];
		u8 *a = fill_rnd(dt, n), *b = fill_rnd(dt, n);
		u8 *a2 = dup_buf(a, n * esize(dt));

		kc_reduce(a, b, n, dt, KCOLL_SUM);
		kc_reduce(a2, b, n, dt, KCOLL_AVG);
		check_buf("avg vs sum", dt, KCOLL_AVG, a2, a, n, false);
		free(a);
		free(b);
		free(a2);
	}
	group_end();
}

static void test_self(void)
{
	const size_t n = 4099;
	size_t i;
	u32 di, oi;

	group_begin("dst == src");
	for (di = 0; di < ARRAY_SIZE(all_dtypes); di++) {
		u32 dt = all_dtypes[di];

		for (oi = 0; oi < ARRAY_SIZE(all_redops); oi++) {
			u32 op = all_redops[oi];
			u8 *buf = fill_rnd(dt, n);
			u8 *exp = dup_buf(buf, n * esize(dt));

			for (i = 0; i < n; i++)
				st(exp, i, dt, ref_op(dt, op, ld(buf, i, dt), ld(buf, i, dt)));
			check(kc_reduce(buf, buf, n, dt, op) == 0, "rc");
			check_buf("self", dt, op, buf, exp, n, true);
			free(buf);
			free(exp);
		}
	}
	group_end();
}

/* count 0 is a no-op; elements past count are never touched. */
static void test_bounds(void)
{
	static const size_t counts[] = { 0, 1, 5, 2047, 2049, 10001 };
	const size_t guard = 9;
	size_t ci;
	u32 di, oi;

	group_begin("count 0 no-op, no write past count");
	for (di = 0; di < ARRAY_SIZE(all_dtypes); di++) {
		u32 dt = all_dtypes[di];

		check(kc_reduce(NULL, NULL, 0, dt, KCOLL_SUM) == 0, "NULL, 0 %s",
		      kc_dtype_name(dt));
		check(kc_reduce_avg_finish(NULL, 0, dt, 3) == 0, "avg NULL, 0 %s",
		      kc_dtype_name(dt));
		for (ci = 0; ci < ARRAY_SIZE(counts); ci++) {
			size_t n = counts[ci], sz = esize(dt);

			for (oi = 0; oi < ARRAY_SIZE(all_redops); oi++) {
				u32 op = all_redops[oi];
				u8 *dst = fill_rnd(dt, n + guard);
				u8 *src = fill_rnd(dt, n + guard);
				u8 *orig = dup_buf(dst, (n + guard) * sz);

				check(kc_reduce(dst, src, n, dt, op) == 0, "rc");
				if (!n)
					check(!memcmp(dst, orig, guard * sz), "%s/%s count 0 wrote",
					      kc_dtype_name(dt), kc_redop_name(op));
				check(!memcmp(dst + n * sz, orig + n * sz, guard * sz),
				      "%s/%s n=%zu wrote past count", kc_dtype_name(dt),
				      kc_redop_name(op), n);
				free(dst);
				free(src);
				free(orig);
			}
			{
				u8 *buf = fill_rnd(dt, n + guard);
				u8 *orig = dup_buf(buf, (n + guard) * sz);

				check(kc_reduce_avg_finish(buf, n, dt, 3) == 0, "avg rc");
				check(!memcmp(buf + n * sz, orig + n * sz, guard * sz),
				      "avg %s n=%zu wrote past count", kc_dtype_name(dt), n);
				free(buf);
				free(orig);
			}
		}
	}
	group_end();
}

/* Reduce one pair of elements. */
static u64 red1(u32 dt, u32 op, u64 a, u64 b)
{
	u64 d = 0, s = 0;

	st(&d, 0, dt, a);
	st(&s, 0, dt, b);
	if (kc_reduce(&d, &s, 1, dt, op))
		return 0xdeadbeefdeadbeefull;
	return ld(&d, 0, dt);
}

#define CHECK_RED(dt, op, a, b, want)					\
	check(red1(dt, op, a, b) == trunc_raw(dt, want),			\
	      "%s %s(0x%" PRIx64 ", 0x%" PRIx64 ") = 0x%" PRIx64 " want 0x%" PRIx64,	\
	      kc_dtype_name(dt), kc_redop_name(op), (u64)(a), (u64)(b),	\
	      red1(dt, op, a, b), trunc_raw(dt, want))

static void test_int_wrap(void)
{
	group_begin("integer wrap and signed/unsigned compare");
	CHECK_RED(KCOLL_INT8, KCOLL_SUM, 127, 1, (u64)-128);
	CHECK_RED(KCOLL_INT8, KCOLL_SUM, (u64)-128, (u64)-1, 127);
	CHECK_RED(KCOLL_UINT8, KCOLL_SUM, 255, 1, 0);
	CHECK_RED(KCOLL_INT8, KCOLL_PROD, 16, 16, 0);
	CHECK_RED(KCOLL_INT8, KCOLL_PROD, (u64)-128, (u64)-1, (u64)-128);
	CHECK_RED(KCOLL_INT16, KCOLL_SUM, 32767, 1, (u64)-32768);
	CHECK_RED(KCOLL_UINT16, KCOLL_PROD, 65535, 65535, 1);
	CHECK_RED(KCOLL_INT16, KCOLL_PROD, (u64)-32768, (u64)-32768, 0);
	CHECK_RED(KCOLL_INT32, KCOLL_PROD, 65536, 65536, 0);
	CHECK_RED(KCOLL_INT32, KCOLL_PROD, 0x7fffffff, 2, (u64)-2);
	CHECK_RED(KCOLL_INT32, KCOLL_PROD, 0x80000000u, (u64)-1, 0x80000000u);
	CHECK_RED(KCOLL_INT32, KCOLL_SUM, 0x7fffffff, 1, 0x80000000u);
	CHECK_RED(KCOLL_UINT32, KCOLL_PROD, 0xffffffffu, 0xffffffffu, 1);
	CHECK_RED(KCOLL_INT64, KCOLL_SUM, INT64_MAX, 1, (u64)INT64_MIN);
	CHECK_RED(KCOLL_INT64, KCOLL_PROD, INT64_MAX, 2, (u64)-2);
	CHECK_RED(KCOLL_INT64, KCOLL_PROD, (u64)INT64_MIN, (u64)-1, (u64)INT64_MIN);
	CHECK_RED(KCOLL_UINT64, KCOLL_SUM, UINT64_MAX, 2, 1);
	CHECK_RED(KCOLL_INT64, KCOLL_MAX, (u64)INT64_MIN, INT64_MAX, INT64_MAX);
	CHECK_RED(KCOLL_INT64, KCOLL_MIN, (u64)INT64_MIN, INT64_MAX, (u64)INT64_MIN);
	CHECK_RED(KCOLL_INT64, KCOLL_MAX, (u64)-1, 0, 0);
	CHECK_RED(KCOLL_INT64, KCOLL_MIN, (u64)-1, 0, (u64)-1);
	CHECK_RED(KCOLL_UINT64, KCOLL_MAX, UINT64_MAX, 1, UINT64_MAX);
	CHECK_RED(KCOLL_UINT64, KCOLL_MIN, UINT64_MAX, 1, 1);
	CHECK_RED(KCOLL_INT8, KCOLL_MAX, 0xff, 1, 1);
	CHECK_RED(KCOLL_UINT8, KCOLL_MAX, 0xff, 1, 0xff);
	CHECK_RED(KCOLL_INT16, KCOLL_MIN, 0x8000, 0x7fff, 0x8000);
	CHECK_RED(KCOLL_UINT16, KCOLL_MIN, 0x8000, 0x7fff, 0x7fff);
	CHECK_RED(KCOLL_INT32, KCOLL_MIN, 0x80000000u, 0, 0x80000000u);
	CHECK_RED(KCOLL_UINT32, KCOLL_MIN, 0x80000000u, 0, 0);
	group_end();
}

/* ----------------------------------------------------- average finish */

static u64 avg1(u32 dt, u64 v, u32 divisor)
{
	u64 d = 0;

	st(&d, 0, dt, v);
	if (kc_reduce_avg_finish(&d, 1, dt, divisor))
		return 0xdeadbeefdeadbeefull;
	return ld(&d, 0, dt);
}

#define CHECK_AVG(dt, v, div, want)					\
	check(avg1(dt, v, div) == trunc_raw(dt, want),			\
	      "%s avg(0x%" PRIx64 ", %u) = 0x%" PRIx64 " want 0x%" PRIx64,	\
	      kc_dtype_name(dt), (u64)(v), (u32)(div), avg1(dt, v, div),	\
	      trunc_raw(dt, want))

/*
 * fp16/bf16 average is specified as fp32 x / (float)divisor, rounded: the
 * divisor is not a narrow-format value, so double rounding through fp32 is
 * part of the definition and the reference follows it.
 */
static u16 ref_avg_small(u16 x, u32 d, struct small_fmt f)
{
	float q = (float)small_to_d(x, f) / (float)d;

	return d_to_small(q, f);
}

/* Reference: exact rational x / d rounded toward zero, via magnitudes. */
static u64 ref_avg_int(u32 dt, u64 raw, u32 d)
{
	__int128_t x = int_val(dt, raw);
	__uint128_t m = x < 0 ? (__uint128_t)-x : (__uint128_t)x;

	m /= d;
	return (u64)(x < 0 ? -(__int128_t)m : (__int128_t)m);
}

static u64 ref_avg(u32 dt, u64 raw, u32 d)
{
	switch (dt) {
	case KCOLL_FP16:
		return ref_avg_small((u16)raw, d, fmt_h);
	case KCOLL_BF16:
		return ref_avg_small((u16)raw, d, fmt_bf);
	case KCOLL_FP32:
		return f_bits(bits_f((u32)raw) / (float)d);
	case KCOLL_FP64:
		return d_bits(bits_d(raw) / (double)d);
	default:
		return ref_avg_int(dt, raw, d);
	}
}

static void test_avg_finish(void)
{
	static const u32 divs[] = { 1, 2, 3, 7, 8, 10, 255, 1000, 65535, 65536, 0x7fffffff,
				    0xffffffffu };
	const size_t n = 6007;
	size_t i;
	u32 di, vi;

	group_begin("avg finish: known values");
	CHECK_AVG(KCOLL_INT8, (u64)-7, 2, (u64)-3);
	CHECK_AVG(KCOLL_INT8, (u64)-128, 3, (u64)-42);
	CHECK_AVG(KCOLL_INT8, (u64)-128, 0xffffffffu, 0);
	CHECK_AVG(KCOLL_INT8, 127, 2, 63);
	CHECK_AVG(KCOLL_UINT8, 255, 2, 127);
	CHECK_AVG(KCOLL_INT16, (u64)-32768, 7, (u64)-4681);
	CHECK_AVG(KCOLL_INT32, (u64)-7, 2, (u64)-3);
	CHECK_AVG(KCOLL_INT32, (u64)INT32_MIN, 0x80000000u, (u64)-1);
	CHECK_AVG(KCOLL_INT32, (u64)INT32_MIN, 0xffffffffu, 0);
	CHECK_AVG(KCOLL_UINT32, 0xffffffffu, 0xffffffffu, 1);
	CHECK_AVG(KCOLL_UINT32, 0xfffffffeu, 2, 0x7fffffffu);
	CHECK_AVG(KCOLL_INT64, (u64)INT64_MIN, 3, (u64)(INT64_MIN / 3));
	CHECK_AVG(KCOLL_INT64, (u64)-1, 2, 0);
	CHECK_AVG(KCOLL_UINT64, UINT64_MAX, 0xffffffffu, 0x100000001ull);
	CHECK_AVG(KCOLL_FP32, f_bits(1.0f), 3, f_bits(1.0f / 3.0f));
	CHECK_AVG(KCOLL_FP32, f_bits(-6.0f), 4, f_bits(-1.5f));
	CHECK_AVG(KCOLL_FP64, d_bits(1.0), 3, d_bits(1.0 / 3.0));
	CHECK_AVG(KCOLL_FP16, 0x3c00, 3, 0x3555);	/* 1/3 */
	CHECK_AVG(KCOLL_FP16, 0x4200, 2, 0x3e00);	/* 3 / 2 = 1.5 */
	CHECK_AVG(KCOLL_FP16, 0x0001, 2, 0x0000);	/* 2^-25 ties to 0 */
	CHECK_AVG(KCOLL_FP16, 0x0003, 2, 0x0002);	/* 1.5 ulp ties to 2 */
	CHECK_AVG(KCOLL_FP16, 0x7c00, 3, 0x7c00);
	CHECK_AVG(KCOLL_BF16, 0x3f80, 3, 0x3eab);	/* 1/3 */
	CHECK_AVG(KCOLL_BF16, 0xff80, 3, 0xff80);
	check(raw_isquiet(KCOLL_FP16, avg1(KCOLL_FP16, 0x7c01, 3)), "fp16 sNaN / 3 quiet NaN");
	check(raw_isquiet(KCOLL_BF16, avg1(KCOLL_BF16, 0x7f81, 3)), "bf16 sNaN / 3 quiet NaN");
	group_end();

	group_begin("avg finish: every dtype x divisor vs reference");
	for (di = 0; di < ARRAY_SIZE(all_dtypes); di++) {
		u32 dt = all_dtypes[di];

		for (vi = 0; vi < ARRAY_SIZE(divs); vi++) {
			u32 d = divs[vi];
			u8 *buf = fill_rnd(dt, n);
			u8 *exp = dup_buf(buf, n * esize(dt));

			/* divisor 1 is exact: even NaN payloads must survive */
			if (d != 1)
				for (i = 0; i < n; i++)
					st(exp, i, dt, ref_avg(dt, ld(buf, i, dt), d));
			check(kc_reduce_avg_finish(buf, n, dt, d) == 0, "rc");
			check_buf(d == 1 ? "avg /1" : "avg", dt, KCOLL_AVG, buf, exp, n,
				  d != 1);
			if (d == 1)
				check(!memcmp(buf, exp, n * esize(dt)), "%s /1 not bit-exact",
				      kc_dtype_name(dt));
			free(buf);
			free(exp);
		}
	}
	group_end();
}

/* ----------------------------------------------------------- fp16, bf16 */

static void test_fp16_conv(void)
{
	u32 h, bad_rt = 0, bad_dec = 0, bad_nan = 0, first = 0;
	u64 x, bad = 0, nsamp = 0, firstx = 0;

	group_begin("fp16 <-> fp32 conversion");
	for (h = 0; h < 0x10000; h++) {
		u32 f = kc_fp16_to_fp32((u16)h);
		u16 back = kc_fp32_to_fp16(f);

		if (small_isnan((u16)h, fmt_h)) {
			/* NaN: quiet NaN both ways, sign kept */
			if (!raw_isquiet(KCOLL_FP32, f) || !small_isquiet(back, fmt_h) ||
			    (f >> 31) != (h >> 15) || (back >> 15) != (h >> 15))
				bad_nan++;
			continue;
		}
		if (back != h && !bad_rt++)
			first = h;
		if (f != f_bits((float)small_to_d((u16)h, fmt_h)))
			bad_dec++;
	}
	check(!bad_rt, "round trip: %u patterns differ, first 0x%04x", bad_rt, first);
	check(!bad_dec, "fp16 -> fp32 value: %u wrong", bad_dec);
	check(!bad_nan, "NaN handling: %u wrong", bad_nan);

	/* fp32 -> fp16 on a stride through all fp32 patterns */
	for (x = 0; x < 0x100000000ull; x += 997) {
		u16 got = kc_fp32_to_fp16((u32)x);
		u16 want = d_to_small(bits_f((u32)x), fmt_h);

		nsamp++;
		if (!same_raw(KCOLL_FP16, got, want, true) && !bad++)
			firstx = x;
	}
	check(!bad, "fp32 -> fp16 on %" PRIu64 " samples: %" PRIu64
	      " wrong, first 0x%08" PRIx64, nsamp, bad, firstx);

	/* every halfway point between fp16 neighbours, and one fp32 ulp off */
	bad = 0;
	for (h = 0; h < 0x7c00; h++) {
		float lo = (float)small_to_d((u16)h, fmt_h);
		float hi = h == 0x7bff ? 65536.0f : (float)small_to_d((u16)(h + 1), fmt_h);
		float mid = lo + (hi - lo) / 2;
		float probes[3] = { mid, nextafterf(mid, 0), nextafterf(mid, INFINITY) };
		u32 k, s;

		for (k = 0; k < 3; k++) {
			for (s = 0; s < 2; s++) {
				float v = s ? -probes[k] : probes[k];
				u16 got = kc_fp32_to_fp16(f_bits(v));

				if (got != d_to_small(v, fmt_h) && !bad++)
					firstx = f_bits(v);
			}
		}
	}
	check(!bad, "halfway points: %" PRIu64 " wrong, first 0x%08" PRIx64, bad, firstx);

	/* known values, independent of d_to_small */
	check(kc_fp32_to_fp16(f_bits(65520.0f)) == 0x7c00, "65520 -> inf");
	check(kc_fp32_to_fp16(f_bits(-65520.0f)) == 0xfc00, "-65520 -> -inf");
	check(kc_fp32_to_fp16(f_bits(65519.99f)) == 0x7bff, "65519.99 -> 65504");
	check(kc_fp32_to_fp16(f_bits(65504.0f)) == 0x7bff, "65504 exact");
	check(kc_fp32_to_fp16(f_bits(1e10f)) == 0x7c00, "1e10 -> inf");
	check(kc_fp32_to_fp16(f_bits(INFINITY)) == 0x7c00, "inf");
	check(kc_fp32_to_fp16(f_bits(-INFINITY)) == 0xfc00, "-inf");
	check(kc_fp32_to_fp16(f_bits(0x1p-24f)) == 0x0001, "2^-24 smallest subnormal");
	check(kc_fp32_to_fp16(f_bits(0x1p-25f)) == 0x0000, "2^-25 ties to 0");
	check(kc_fp32_to_fp16(f_bits(nextafterf(0x1p-25f, 1))) == 0x0001,
	      "just above 2^-25 -> 2^-24");
	check(kc_fp32_to_fp16(f_bits(0x1.8p-24f)) == 0x0002, "1.5 * 2^-24 ties to 2");
	check(kc_fp32_to_fp16(f_bits(0x1.4p-23f)) == 0x0002, "2.5 * 2^-24 ties to 2");
	check(kc_fp32_to_fp16(f_bits(0x1p-14f)) == 0x0400, "2^-14 smallest normal");
	check(kc_fp32_to_fp16(f_bits(0x1.ffcp-15f)) == 0x0400,
	      "1023.5 * 2^-24 ties up to smallest normal");
	check(kc_fp32_to_fp16(f_bits(1e-10f)) == 0x0000, "1e-10 -> 0");
	check(kc_fp32_to_fp16(f_bits(-1e-10f)) == 0x8000, "-1e-10 -> -0");
	check(kc_fp32_to_fp16(f_bits(-0.0f)) == 0x8000, "-0");
	check(kc_fp32_to_fp16(f_bits(1.0f + 0x1p-11f)) == 0x3c00, "1 + half ulp ties down");
	check(kc_fp32_to_fp16(f_bits(1.0f + 0x3p-11f)) == 0x3c02, "1 + 1.5 ulp ties up");
	check(kc_fp32_to_fp16(f_bits(2049.0f)) == 0x6800, "2049 -> 2048");
	check(kc_fp32_to_fp16(f_bits(2051.0f)) == 0x6802, "2051 -> 2052");
	check(small_isquiet(kc_fp32_to_fp16(0x7f800001), fmt_h), "fp32 sNaN -> quiet NaN");
	check(small_isquiet(kc_fp32_to_fp16(0xffc00000), fmt_h) &&
	      (kc_fp32_to_fp16(0xffc00000) & 0x8000), "-NaN keeps sign");
	check(kc_fp16_to_fp32(0x0001) == f_bits(0x1p-24f), "0x0001 -> 2^-24");
	check(kc_fp16_to_fp32(0x03ff) == f_bits(0x1.ff8p-15f), "largest subnormal");
	check(kc_fp16_to_fp32(0x7bff) == f_bits(65504.0f), "65504");
	check(kc_fp16_to_fp32(0xfc00) == f_bits(-INFINITY), "-inf");
	group_end();
}

static void test_bf16_conv(void)
{
	u32 h, bad_rt = 0, bad_nan = 0, first = 0;
	u64 x, bad = 0, firstx = 0;

	group_begin("bf16 <-> fp32 conversion");
	for (h = 0; h < 0x10000; h++) {
		u32 f = kc_bf16_to_fp32((u16)h);
		u16 back = kc_fp32_to_bf16(f);

		if (small_isnan((u16)h, fmt_bf)) {
			if (!raw_isquiet(KCOLL_FP32, f) || !small_isquiet(back, fmt_bf) ||
			    (back >> 15) != (h >> 15))
				bad_nan++;
			continue;
		}
		if ((back != h || f != (h << 16)) && !bad_rt++)
			first = h;
	}
	check(!bad_rt, "round trip: %u patterns differ, first 0x%04x", bad_rt, first);
	check(!bad_nan, "NaN handling: %u wrong", bad_nan);

	for (x = 0; x < 0x100000000ull; x += 1009) {
		u16 got = kc_fp32_to_bf16((u32)x);

		if (!same_raw(KCOLL_BF16, got, d_to_small(bits_f((u32)x), fmt_bf), true) &&
		    !bad++)
			firstx = x;
	}
	check(!bad, "fp32 -> bf16 samples: %" PRIu64 " wrong, first 0x%08" PRIx64, bad,
	      firstx);

	bad = 0;
	for (h = 0; h < 0x7f80; h++) {
		u32 mid = (h << 16) | 0x8000;	/* exactly halfway to the next */
		u32 probes[3] = { mid, mid - 1, mid + 1 };
		u32 k, s;

		for (k = 0; k < 3; k++) {
			for (s = 0; s < 2; s++) {
				u32 v = probes[k] | (s << 31);

				if (kc_fp32_to_bf16(v) != d_to_small(bits_f(v), fmt_bf) && !bad++)
					firstx = v;
			}
		}
	}
	check(!bad, "halfway points: %" PRIu64 " wrong, first 0x%08" PRIx64, bad, firstx);

	check(kc_fp32_to_bf16(0x3f808000) == 0x3f80, "1 + half ulp ties to even (down)");
	check(kc_fp32_to_bf16(0x3f818000) == 0x3f82, "1 + 1.5 ulp ties to even (up)");
	check(kc_fp32_to_bf16(0x3f808001) == 0x3f81, "above half rounds up");
	check(kc_fp32_to_bf16(0x3f807fff) == 0x3f80, "below half rounds down");
	check(kc_fp32_to_bf16(0x7f7fffff) == 0x7f80, "FLT_MAX -> inf");
	check(kc_fp32_to_bf16(0xff7fffff) == 0xff80, "-FLT_MAX -> -inf");
	check(kc_fp32_to_bf16(0x7f7f7fff) == 0x7f7f, "largest that stays finite");
	check(kc_fp32_to_bf16(0x7f800000) == 0x7f80, "inf");
	check(kc_fp32_to_bf16(0xff800000) == 0xff80, "-inf");
	check(kc_fp32_to_bf16(0x7f800001) == 0x7fc0, "sNaN low payload -> 0x7fc0");
	check(kc_fp32_to_bf16(0x7fc00000) == 0x7fc0, "qNaN");
	check(kc_fp32_to_bf16(0xffc00000) == 0xffc0, "-qNaN");
	check(kc_fp32_to_bf16(0x7fff0000) == 0x7fff, "NaN with payload kept");
	check(kc_fp32_to_bf16(0x00008000) == 0x0000, "subnormal tie to even 0");
	check(kc_fp32_to_bf16(0x00018000) == 0x0002, "subnormal tie to even 2");
	check(kc_fp32_to_bf16(0x80000000) == 0x8000, "-0");
	check(kc_bf16_to_fp32(0x7f81) == 0x7fc10000, "sNaN widened to quiet");
	group_end();
}

static void test_half_known(void)
{
	const u16 h1 = 0x3c00, h2048 = 0x6800, h2050 = 0x6801, hnan = 0x7e00;

	group_begin("fp16/bf16 reduce known values");
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, h2048, h1, h2048);	/* 2049 ties to 2048 */
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, h2050, h1, 0x6802);	/* 2051 ties to 2052 */
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x7bff, 0x4c00, 0x7c00);	/* 65504+16 -> inf */
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x7bff, 0x4800, 0x7bff);	/* 65504+8 -> 65504 */
	CHECK_RED(KCOLL_FP16, KCOLL_PROD, 0x0001, 0x3800, 0x0000);	/* 2^-25 -> 0 */
	CHECK_RED(KCOLL_FP16, KCOLL_PROD, 0x0003, 0x3800, 0x0002);	/* 1.5 ulp -> 2 */
	CHECK_RED(KCOLL_FP16, KCOLL_PROD, 0x0001, 0x3e00, 0x0002);	/* 1.5 ulp -> 2 */
	CHECK_RED(KCOLL_FP16, KCOLL_PROD, 0x5c00, 0x5c00, 0x7c00);	/* 256^2 -> inf */
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x0001, 0x0001, 0x0002);
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x7c00, 0x3c00, 0x7c00);
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x8000, 0x8000, 0x8000);	/* -0 + -0 */
	CHECK_RED(KCOLL_FP16, KCOLL_SUM, 0x8000, 0x0000, 0x0000);	/* -0 + +0 */
	CHECK_RED(KCOLL_FP16, KCOLL_MAX, 0x8000, 0x0000, 0x0000);
	CHECK_RED(KCOLL_FP16, KCOLL_MAX, 0x0000, 0x8000, 0x0000);
	CHECK_RED(KCOLL_FP16, KCOLL_MIN, 0x8000, 0x0000, 0x8000);
	CHECK_RED(KCOLL_FP16, KCOLL_MIN, 0x0000, 0x8000, 0x8000);
	CHECK_RED(KCOLL_FP16, KCOLL_MAX, 0xfc00, 0xfbff, 0xfbff);
	CHECK_RED(KCOLL_FP16, KCOLL_MIN, 0xbc00, 0x3c00, 0xbc00);
	CHECK_RED(KCOLL_FP16, KCOLL_MIN, 0xfc00, 0x7c00, 0xfc00);
	check(small_isquiet((u16)red1(KCOLL_FP16, KCOLL_SUM, 0x7c00, 0xfc00), fmt_h),
	      "fp16 inf + -inf is NaN");
	check(small_isquiet((u16)red1(KCOLL_FP16, KCOLL_MAX, hnan, h1), fmt_h),
	      "fp16 max(NaN, 1) is NaN");
	check(small_isquiet((u16)red1(KCOLL_FP16, KCOLL_MAX, h1, hnan), fmt_h),
	      "fp16 max(1, NaN) is NaN");
	check(small_isquiet((u16)red1(KCOLL_FP16, KCOLL_MIN, 0xfc00, 0x7c01), fmt_h),
	      "fp16 min(-inf, sNaN) is quiet NaN");
	check(small_isquiet((u16)red1(KCOLL_FP16, KCOLL_PROD, 0x0000, 0x7c00), fmt_h),
	      "fp16 0 * inf is NaN");

	CHECK_RED(KCOLL_BF16, KCOLL_SUM, 0x3f80, 0x3b80, 0x3f80);	/* 1 + 2^-8 ties down */
	CHECK_RED(KCOLL_BF16, KCOLL_SUM, 0x3f81, 0x3b80, 0x3f82);	/* ties up to even */
	CHECK_RED(KCOLL_BF16, KCOLL_SUM, 0x7f7f, 0x7f7f, 0x7f80);	/* overflow -> inf */
	CHECK_RED(KCOLL_BF16, KCOLL_SUM, 0xff80, 0xff7f, 0xff80);
	CHECK_RED(KCOLL_BF16, KCOLL_PROD, 0x0001, 0x3f00, 0x0000);	/* 2^-134 ties to 0 */
	CHECK_RED(KCOLL_BF16, KCOLL_MAX, 0x8000, 0x0000, 0x0000);
	CHECK_RED(KCOLL_BF16, KCOLL_MIN, 0x0000, 0x8000, 0x8000);
	check(small_isquiet((u16)red1(KCOLL_BF16, KCOLL_MAX, 0x7f81, 0x3f80), fmt_bf),
	      "bf16 max(sNaN, 1) is quiet NaN");
	check(small_isquiet((u16)red1(KCOLL_BF16, KCOLL_MIN, 0x3f80, 0xffc0), fmt_bf),
	      "bf16 min(1, -NaN) is NaN");
	check(small_isquiet((u16)red1(KCOLL_BF16, KCOLL_SUM, 0x7f80, 0xff80), fmt_bf),
	      "bf16 inf + -inf is NaN");

	check(raw_isquiet(KCOLL_FP32, red1(KCOLL_FP32, KCOLL_MAX, f_bits(1.0f), 0x7f800001)),
	      "fp32 max(1, sNaN) is quiet NaN");
	check(raw_isquiet(KCOLL_FP32, red1(KCOLL_FP32, KCOLL_MIN, f_bits(NAN), f_bits(-INFINITY))),
	      "fp32 min(NaN, -inf) is NaN");
	CHECK_RED(KCOLL_FP32, KCOLL_MAX, f_bits(-0.0f), f_bits(0.0f), f_bits(0.0f));
	CHECK_RED(KCOLL_FP32, KCOLL_MIN, f_bits(0.0f), f_bits(-0.0f), f_bits(-0.0f));
	CHECK_RED(KCOLL_FP32, KCOLL_MAX, f_bits(-INFINITY), f_bits(-FLT_MAX), f_bits(-FLT_MAX));
	check(raw_isquiet(KCOLL_FP64, red1(KCOLL_FP64, KCOLL_MAX, d_bits(NAN), d_bits(1.0))),
	      "fp64 max(NaN, 1) is NaN");
	check(raw_isquiet(KCOLL_FP64, red1(KCOLL_FP64, KCOLL_MIN, d_bits(1.0),
					   0x7ff0000000000001ull)),
	      "fp64 min(1, sNaN) is quiet NaN");
	CHECK_RED(KCOLL_FP64, KCOLL_MAX, d_bits(-0.0), d_bits(0.0), d_bits(0.0));
	CHECK_RED(KCOLL_FP64, KCOLL_MIN, d_bits(-1.0), d_bits(DBL_TRUE_MIN), d_bits(-1.0));
	group_end();
}

/* Exhaustive fp16 round trip through the reduce API: max(x, x) == x. */
static void test_fp16_api_roundtrip(void)
{
	u16 *buf = malloc(0x10000 * sizeof(*buf));
	u32 h, bad = 0;

	if (!buf)
		exit(2);
	group_begin("fp16/bf16 all patterns through kc_reduce(max, x, x)");
	for (h = 0; h < 0x10000; h++)
		buf[h] = (u16)h;
	check(kc_reduce(buf, buf, 0x10000, KCOLL_FP16, KCOLL_MAX) == 0, "rc");
	for (h = 0; h < 0x10000; h++) {
		if (small_isnan((u16)h, fmt_h) ? !small_isquiet(buf[h], fmt_h) : buf[h] != h)
			bad++;
	}
	check(!bad, "fp16: %u patterns changed", bad);
	for (h = 0; h < 0x10000; h++)
		buf[h] = (u16)h;
	bad = 0;
	check(kc_reduce(buf, buf, 0x10000, KCOLL_BF16, KCOLL_MIN) == 0, "rc");
	for (h = 0; h < 0x10000; h++) {
		if (small_isnan((u16)h, fmt_bf) ? !small_isquiet(buf[h], fmt_bf) : buf[h] != h)
			bad++;
	}
	check(!bad, "bf16: %u patterns changed", bad);
	free(buf);
	group_end();
}

int main(void)
{
	test_names();
	test_einval();
	test_int_wrap();
	test_fp16_conv();
	test_bf16_conv();
	test_half_known();
	test_fp16_api_roundtrip();
	test_all_ops();
	test_avg_is_sum();
	test_self();
	test_bounds();
	test_avg_finish();

	printf("%lu passed, %lu failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
