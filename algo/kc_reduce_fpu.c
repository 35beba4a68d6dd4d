// SPDX-License-Identifier: GPL-2.0
/*
 * Floating-point reduction loops: the only object of the module built with
 * FPU (SSE) code generation.  Entered from kc_reduce.c inside an FPU
 * section; only pointers and integers cross the interface.
 *
 * fp16 and bf16 are converted with integer bit manipulation: no _Float16,
 * no libgcc helpers (__extendhfsf2 does not exist for kernels built without
 * F16C) and no libm.  They are reduced in fp32 and rounded back to nearest
 * even.  fp32 has 24 >= 2 * 11 + 2 bits, so a sum or product of two such
 * values rounded twice (to fp32, then back) is the correctly rounded one.
 * The average is defined as fp32 x / (float)divisor, then rounded.
 *
 * max/min propagate NaN: if either operand is NaN the result is NaN
 * (IEEE 754-2019 maximum/minimum, not the NaN-dropping maxNum of fmax()),
 * so a NaN on any rank reaches the result whatever the reduction order.
 * -0 orders below +0 so that max/min are commutative.  The NaN tests use
 * x != x: never build this file with -ffast-math.
 *
 * Loops are plain indexed loops over restrict pointers so gcc vectorizes
 * them; dst == src, which restrict forbids, takes separate in-place loops.
 */
#include "kc_port.h"
#include "kc_reduce_fpu.h"
#include "../uapi/linux/kcoll.h"

union kc_f32 {
	float f;
	u32 u;
};

union kc_f64 {
	double f;
	u64 u;
};

static inline float kc_u2f(u32 u)
{
	union kc_f32 v = { .u = u };

	return v.f;
}

static inline u32 kc_f2u(float f)
{
	union kc_f32 v = { .f = f };

	return v.u;
}

static inline double kc_u2d(u64 u)
{
	union kc_f64 v = { .u = u };

	return v.f;
}

static inline u64 kc_d2u(double f)
{
	union kc_f64 v = { .f = f };

	return v.u;
}

/* ------------------------------------------------------ format conversion */

static inline u32 kc_h2f_bits(u32 h)
{
	u32 sign = (h & 0x8000) << 16;
	u32 em = h & 0x7fff;
	u32 sh;

	if (em >= 0x7c00)		/* inf, or NaN made quiet */
		return sign | 0x7f800000 | (em & 0x3ff) << 13 |
		       (em > 0x7c00 ? 0x00400000 : 0);
	if (em >= 0x0400)		/* normal: rebias exponent 15 -> 127 */
		return sign | ((em << 13) + ((127 - 15) << 23));
	if (!em)
		return sign;
	/* subnormal m * 2^-24: shift the leading one up to the implicit bit */
	sh = (u32)__builtin_clz(em) - 21;
	return sign | (113 - sh) << 23 | ((em << sh) & 0x3ff) << 13;
}

static inline u32 kc_f2h_bits(u32 x)
{
	u32 sign = (x >> 16) & 0x8000;
	u32 a = x & 0x7fffffff;
	u32 m, sh;

	if (a > 0x7f800000)		/* NaN: quiet, keep the top payload bits */
		return sign | 0x7e00 | ((a >> 13) & 0x3ff);
	if (a >= 0x477ff000)		/* >= 65520 (max 65504 + half ulp): inf */
		return sign | 0x7c00;
	if (a >= 0x38800000)		/* normal: rebias, add half - 1 + lsb, cut */
		return sign | (a - ((127 - 15) << 23) + 0xfff + ((a >> 13) & 1)) >> 13;
	if (a <= 0x33000000)		/* <= 2^-25, half the smallest subnormal */
		return sign;
	/* subnormal result: units of 2^-24, same rounding on a variable cut */
	m = (a & 0x7fffff) | 0x800000;
	sh = 126 - (a >> 23);		/* 14..24 */
	return sign | (m + (1u << (sh - 1)) - 1 + ((m >> sh) & 1)) >> sh;
}

static inline u32 kc_bf2f_bits(u32 b)
{
	u32 u = b << 16;

	if ((u & 0x7fffffff) > 0x7f800000)
		u |= 0x00400000;
	return u;
}

static inline u32 kc_f2bf_bits(u32 u)
{
	if ((u & 0x7fffffff) > 0x7f800000)
		return (u >> 16) | 0x40;
	/* overflow carries into the exponent and ends at inf, as it should */
	return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
}

u32 kc_fp16_to_fp32(u16 h)
{
	return kc_h2f_bits(h);
}

u16 kc_fp32_to_fp16(u32 f)
{
	return (u16)kc_f2h_bits(f);
}

u32 kc_bf16_to_fp32(u16 b)
{
	return kc_bf2f_bits(b);
}

u16 kc_fp32_to_bf16(u32 f)
{
	return (u16)kc_f2bf_bits(f);
}

/* ----------------------------------------------------------- the operators */

static inline float kc_sum_f(float a, float b)
{
	return a + b;
}

static inline float kc_prod_f(float a, float b)
{
	return a * b;
}

static inline double kc_sum_d(double a, double b)
{
	return a + b;
}

static inline double kc_prod_d(double a, double b)
{
	return a * b;
}

/* fp16 and bf16 sum and product: widen to fp32, apply op, round back. */
#define KC_HALF_OP(fmt, op)						\
static inline u16 kc_##op##_##fmt(u16 a, u16 b)			\
{									\
	float r = kc_##op##_f(kc_u2f(kc_##fmt##2f_bits(a)),		\
			      kc_u2f(kc_##fmt##2f_bits(b)));		\
									\
	return (u16)kc_f2##fmt##_bits(kc_f2u(r));			\
}

KC_HALF_OP(h, sum)
KC_HALF_OP(h, prod)
KC_HALF_OP(bf, sum)
KC_HALF_OP(bf, prod)

/*
 * max/min work on the bit patterns (semantics at the top of the file).  The
 * key maps a float to a signed integer in the same order, with -0 < +0, by
 * flipping the magnitude bits of negative values.  Integer compares and
 * selects let gcc if-convert and vectorize, which -ftrapping-math forbids
 * for float compares.  The result is one operand, or a NaN operand made
 * quiet, so for fp16/bf16 it is bit-identical to widen, compare, round.
 */
static inline s16 kc_key16(u16 u)
{
	return (s16)(u ^ ((0u - (u >> 15)) & 0x7fff));
}

static inline s32 kc_key32(u32 u)
{
	return (s32)(u ^ ((0u - (u >> 31)) >> 1));
}

static inline s64 kc_key64(u64 u)
{
	return (s64)(u ^ ((0ull - (u >> 63)) >> 1));
}

static inline bool kc_isnan16(u16 u, u16 inf)
{
	return (u & 0x7fff) > inf;
}

static inline u16 kc_max16(u16 a, u16 b, u16 inf, u16 quiet)
{
	u16 r = kc_key16(a) > kc_key16(b) ? a : b;

	r = kc_isnan16(b, inf) ? b | quiet : r;
	return kc_isnan16(a, inf) ? a | quiet : r;
}

static inline u16 kc_min16(u16 a, u16 b, u16 inf, u16 quiet)
{
	u16 r = kc_key16(a) < kc_key16(b) ? a : b;

	r = kc_isnan16(b, inf) ? b | quiet : r;
	return kc_isnan16(a, inf) ? a | quiet : r;
}

#define KC_F32_INF	0x7f800000u
#define KC_F32_QUIET	0x00400000u
#define KC_F64_INF	0x7ff0000000000000ull
#define KC_F64_QUIET	0x0008000000000000ull

static inline u32 kc_max32(u32 a, u32 b)
{
	u32 r = kc_key32(a) > kc_key32(b) ? a : b;

	r = (b & 0x7fffffff) > KC_F32_INF ? b | KC_F32_QUIET : r;
	return (a & 0x7fffffff) > KC_F32_INF ? a | KC_F32_QUIET : r;
}

static inline u32 kc_min32(u32 a, u32 b)
{
	u32 r = kc_key32(a) < kc_key32(b) ? a : b;

	r = (b & 0x7fffffff) > KC_F32_INF ? b | KC_F32_QUIET : r;
	return (a & 0x7fffffff) > KC_F32_INF ? a | KC_F32_QUIET : r;
}

static inline u64 kc_max64(u64 a, u64 b)
{
	u64 r = kc_key64(a) > kc_key64(b) ? a : b;

	r = (b & 0x7fffffffffffffffull) > KC_F64_INF ? b | KC_F64_QUIET : r;
	return (a & 0x7fffffffffffffffull) > KC_F64_INF ? a | KC_F64_QUIET : r;
}

static inline u64 kc_min64(u64 a, u64 b)
{
	u64 r = kc_key64(a) < kc_key64(b) ? a : b;

	r = (b & 0x7fffffffffffffffull) > KC_F64_INF ? b | KC_F64_QUIET : r;
	return (a & 0x7fffffffffffffffull) > KC_F64_INF ? a | KC_F64_QUIET : r;
}

static inline u16 kc_max_h(u16 a, u16 b)
{
	return kc_max16(a, b, 0x7c00, 0x0200);
}

static inline u16 kc_min_h(u16 a, u16 b)
{
	return kc_min16(a, b, 0x7c00, 0x0200);
}

static inline u16 kc_max_bf(u16 a, u16 b)
{
	return kc_max16(a, b, 0x7f80, 0x0040);
}

static inline u16 kc_min_bf(u16 a, u16 b)
{
	return kc_min16(a, b, 0x7f80, 0x0040);
}

static inline float kc_max_f(float a, float b)
{
	return kc_u2f(kc_max32(kc_f2u(a), kc_f2u(b)));
}

static inline float kc_min_f(float a, float b)
{
	return kc_u2f(kc_min32(kc_f2u(a), kc_f2u(b)));
}

static inline double kc_max_d(double a, double b)
{
	return kc_u2d(kc_max64(kc_d2u(a), kc_d2u(b)));
}

static inline double kc_min_d(double a, double b)
{
	return kc_u2d(kc_min64(kc_d2u(a), kc_d2u(b)));
}

/* -------------------------------------------------------------- the loops */

/* __typeof__(T) only so that checkpatch parses T as a type. */
#define KC_FPU_LOOP(name, T, OP)					\
static void kc_loop_##name(__typeof__(T) *restrict d,			\
			   const __typeof__(T) *restrict s, u64 n)	\
{									\
	u64 i;								\
									\
	for (i = 0; i < n; i++)						\
		d[i] = OP(d[i], s[i]);					\
}									\
									\
static void kc_self_##name(__typeof__(T) *d, u64 n)			\
{									\
	u64 i;								\
									\
	for (i = 0; i < n; i++)						\
		d[i] = OP(d[i], d[i]);					\
}

#define KC_FPU_LOOPS(fmt, T)						\
KC_FPU_LOOP(sum_##fmt, T, kc_sum_##fmt)					\
KC_FPU_LOOP(prod_##fmt, T, kc_prod_##fmt)				\
KC_FPU_LOOP(max_##fmt, T, kc_max_##fmt)					\
KC_FPU_LOOP(min_##fmt, T, kc_min_##fmt)					\
									\
static void kc_reduce_##fmt(void *dst, const void *src, u64 n, u32 redop)	\
{									\
	bool self = dst == src;						\
									\
	switch (redop) {						\
	case KCOLL_SUM:							\
	case KCOLL_AVG:							\
		if (self)						\
			kc_self_sum_##fmt(dst, n);			\
		else							\
			kc_loop_sum_##fmt(dst, src, n);			\
		break;							\
	case KCOLL_PROD:						\
		if (self)						\
			kc_self_prod_##fmt(dst, n);			\
		else							\
			kc_loop_prod_##fmt(dst, src, n);		\
		break;							\
	case KCOLL_MAX:							\
		if (self)						\
			kc_self_max_##fmt(dst, n);			\
		else							\
			kc_loop_max_##fmt(dst, src, n);			\
		break;							\
	case KCOLL_MIN:							\
		if (self)						\
			kc_self_min_##fmt(dst, n);			\
		else							\
			kc_loop_min_##fmt(dst, src, n);			\
		break;							\
	}								\
}

KC_FPU_LOOPS(h, u16)
KC_FPU_LOOPS(bf, u16)
KC_FPU_LOOPS(f, float)
KC_FPU_LOOPS(d, double)

void kc_fpu_reduce(void *dst, const void *src, u64 count, u32 dtype, u32 redop)
{
	switch (dtype) {
	case KCOLL_FP16:
		kc_reduce_h(dst, src, count, redop);
		break;
	case KCOLL_BF16:
		kc_reduce_bf(dst, src, count, redop);
		break;
	case KCOLL_FP32:
		kc_reduce_f(dst, src, count, redop);
		break;
	case KCOLL_FP64:
		kc_reduce_d(dst, src, count, redop);
		break;
	}
}

/* ---------------------------------------------------------------- average */

static void kc_avg_h(u16 *restrict d, u64 n, float q)
{
	u64 i;

	for (i = 0; i < n; i++)
		d[i] = (u16)kc_f2h_bits(kc_f2u(kc_u2f(kc_h2f_bits(d[i])) / q));
}

static void kc_avg_bf(u16 *restrict d, u64 n, float q)
{
	u64 i;

	for (i = 0; i < n; i++)
		d[i] = (u16)kc_f2bf_bits(kc_f2u(kc_u2f(kc_bf2f_bits(d[i])) / q));
}

static void kc_avg_f(float *restrict d, u64 n, float q)
{
	u64 i;

	for (i = 0; i < n; i++)
		d[i] = d[i] / q;
}

static void kc_avg_d(double *restrict d, u64 n, double q)
{
	u64 i;

	for (i = 0; i < n; i++)
		d[i] = d[i] / q;
}

void kc_fpu_avg(void *buf, u64 count, u32 dtype, u32 divisor)
{
	switch (dtype) {
	case KCOLL_FP16:
		kc_avg_h(buf, count, (float)divisor);
		break;
	case KCOLL_BF16:
		kc_avg_bf(buf, count, (float)divisor);
		break;
	case KCOLL_FP32:
		kc_avg_f(buf, count, (float)divisor);
		break;
	case KCOLL_FP64:
		kc_avg_d(buf, count, (double)divisor);
		break;
	}
}
