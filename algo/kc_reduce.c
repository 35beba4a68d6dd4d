// SPDX-License-Identifier: GPL-2.0
/*
 * Element types, reduction dispatch and the integer reductions.
 *
 * In the kernel this object is built without FPU code generation, so no
 * floating-point type may appear here.  Floating types are handed to
 * kc_reduce_fpu.c in pieces of at most KC_FPU_CHUNK_BYTES, each inside its
 * own kc_fpu_begin()/kc_fpu_end() section to bound preempt-off time.
 *
 * Buffers must be aligned to their element size.
 */
#include "kc_port.h"
#include "kc_reduce.h"
#include "kc_reduce_fpu.h"

static const u8 kc_dtype_sizes[KCOLL_DTYPE_COUNT] = {
	[KCOLL_INT8]	= 1,
	[KCOLL_UINT8]	= 1,
	[KCOLL_INT16]	= 2,
	[KCOLL_UINT16]	= 2,
	[KCOLL_INT32]	= 4,
	[KCOLL_UINT32]	= 4,
	[KCOLL_INT64]	= 8,
	[KCOLL_UINT64]	= 8,
	[KCOLL_FP16]	= 2,
	[KCOLL_BF16]	= 2,
	[KCOLL_FP32]	= 4,
	[KCOLL_FP64]	= 8,
};

static const char * const kc_dtype_names[KCOLL_DTYPE_COUNT] = {
	[KCOLL_INT8]	= "int8",
	[KCOLL_UINT8]	= "uint8",
	[KCOLL_INT16]	= "int16",
	[KCOLL_UINT16]	= "uint16",
	[KCOLL_INT32]	= "int32",
	[KCOLL_UINT32]	= "uint32",
	[KCOLL_INT64]	= "int64",
	[KCOLL_UINT64]	= "uint64",
	[KCOLL_FP16]	= "fp16",
	[KCOLL_BF16]	= "bf16",
	[KCOLL_FP32]	= "fp32",
	[KCOLL_FP64]	= "fp64",
};

static const char * const kc_redop_names[KCOLL_REDOP_COUNT] = {
	[KCOLL_SUM]	= "sum",
	[KCOLL_PROD]	= "prod",
	[KCOLL_MAX]	= "max",
	[KCOLL_MIN]	= "min",
	[KCOLL_AVG]	= "avg",
};

u32 kc_dtype_size(u32 dtype)
{
	return dtype < KCOLL_DTYPE_COUNT ? kc_dtype_sizes[dtype] : 0;
}

bool kc_dtype_is_float(u32 dtype)
{
	return dtype == KCOLL_FP16 || dtype == KCOLL_BF16 ||
	       dtype == KCOLL_FP32 || dtype == KCOLL_FP64;
}

const char *kc_dtype_name(u32 dtype)
{
	return dtype < KCOLL_DTYPE_COUNT ? kc_dtype_names[dtype] : "unknown";
}

const char *kc_redop_name(u32 redop)
{
	return redop < KCOLL_REDOP_COUNT ? kc_redop_names[redop] : "unknown";
}

bool kc_redop_valid(u32 redop)
{
	return redop < KCOLL_REDOP_COUNT;
}

/*
 * One set of loops per integer type T.  Sum and product are computed in the
 * unsigned type W, at least as wide as unsigned int, so they wrap instead of
 * overflowing: u16 * u16 would otherwise promote to (signed) int.  Storing W
 * back into a signed T keeps the low bits (gcc and the kernel rely on this).
 * No restrict: dst may equal src.
 */
#define KC_INT_REDUCE(name, T, W)					\
static void kc_reduce_##name(void *dst, const void *src, u64 n, u32 redop)	\
{									\
	T *d = dst;							\
	const T *s = src;						\
	u64 i;								\
									\
	switch (redop) {						\
	case KCOLL_SUM:							\
		for (i = 0; i < n; i++)					\
			d[i] = (T)((W)d[i] + (W)s[i]);			\
		break;							\
	case KCOLL_PROD:						\
		for (i = 0; i < n; i++)					\
			d[i] = (T)((W)d[i] * (W)s[i]);			\
		break;							\
	case KCOLL_MAX:							\
		for (i = 0; i < n; i++)					\
			d[i] = d[i] > s[i] ? d[i] : s[i];		\
		break;							\
	case KCOLL_MIN:							\
		for (i = 0; i < n; i++)					\
			d[i] = d[i] < s[i] ? d[i] : s[i];		\
		break;							\
	}								\
}

KC_INT_REDUCE(s8, s8, u32)
KC_INT_REDUCE(u8, u8, u32)
KC_INT_REDUCE(s16, s16, u32)
KC_INT_REDUCE(u16, u16, u32)
KC_INT_REDUCE(s32, s32, u32)
KC_INT_REDUCE(u32, u32, u32)
KC_INT_REDUCE(s64, s64, u64)
KC_INT_REDUCE(u64, u64, u64)

/*
 * Average: divide in s64 or u64 so that a u32 divisor never turns a negative
 * signed value into a huge unsigned one; s64 division truncates toward zero.
 */
#define KC_INT_AVG(name, T, W)						\
static void kc_avg_##name(void *buf, u64 n, u32 divisor)		\
{									\
	T *d = buf;							\
	u64 i;								\
									\
	for (i = 0; i < n; i++)						\
		d[i] = (T)((W)d[i] / (W)divisor);			\
}

KC_INT_AVG(s8, s8, s64)
KC_INT_AVG(u8, u8, u64)
KC_INT_AVG(s16, s16, s64)
KC_INT_AVG(u16, u16, u64)
KC_INT_AVG(s32, s32, s64)
KC_INT_AVG(u32, u32, u64)
KC_INT_AVG(s64, s64, s64)
KC_INT_AVG(u64, u64, u64)

static u64 kc_fpu_chunk_elems(u32 dtype)
{
	return KC_FPU_CHUNK_BYTES / kc_dtype_size(dtype);
}

static void kc_reduce_float(u8 *d, const u8 *s, u64 count, u32 dtype, u32 redop)
{
	u32 size = kc_dtype_size(dtype);
	u64 step = kc_fpu_chunk_elems(dtype);

	while (count) {
		u64 n = kc_min_u64(count, step);

		kc_fpu_begin();
		kc_fpu_reduce(d, s, n, dtype, redop);
		kc_fpu_end();
		d += n * size;
		s += n * size;
		count -= n;
	}
}

static void kc_avg_float(u8 *d, u64 count, u32 dtype, u32 divisor)
{
	u32 size = kc_dtype_size(dtype);
	u64 step = kc_fpu_chunk_elems(dtype);

	while (count) {
		u64 n = kc_min_u64(count, step);

		kc_fpu_begin();
		kc_fpu_avg(d, n, dtype, divisor);
		kc_fpu_end();
		d += n * size;
		count -= n;
	}
}

int kc_reduce(void *dst, const void *src, u64 count, u32 dtype, u32 redop)
{
	if (!kc_dtype_size(dtype) || !kc_redop_valid(redop))
		return -EINVAL;
	/* The division of AVG happens once, in kc_reduce_avg_finish(). */
	if (redop == KCOLL_AVG)
		redop = KCOLL_SUM;

	switch (dtype) {
	case KCOLL_INT8:
		kc_reduce_s8(dst, src, count, redop);
		break;
	case KCOLL_UINT8:
		kc_reduce_u8(dst, src, count, redop);
		break;
	case KCOLL_INT16:
		kc_reduce_s16(dst, src, count, redop);
		break;
	case KCOLL_UINT16:
		kc_reduce_u16(dst, src, count, redop);
		break;
	case KCOLL_INT32:
		kc_reduce_s32(dst, src, count, redop);
		break;
	case KCOLL_UINT32:
		kc_reduce_u32(dst, src, count, redop);
		break;
	case KCOLL_INT64:
		kc_reduce_s64(dst, src, count, redop);
		break;
	case KCOLL_UINT64:
		kc_reduce_u64(dst, src, count, redop);
		break;
	default:
		kc_reduce_float(dst, src, count, dtype, redop);
		break;
	}
	return 0;
}

int kc_reduce_avg_finish(void *buf, u64 count, u32 dtype, u32 divisor)
{
	/* Dividing by zero would trap (integers) or make inf/NaN: refuse it. */
	if (!kc_dtype_size(dtype) || !divisor)
		return -EINVAL;
	/* x / 1 == x for every type; skipping it also keeps NaN payloads. */
	if (divisor == 1)
		return 0;

	switch (dtype) {
	case KCOLL_INT8:
		kc_avg_s8(buf, count, divisor);
		break;
	case KCOLL_UINT8:
		kc_avg_u8(buf, count, divisor);
		break;
	case KCOLL_INT16:
		kc_avg_s16(buf, count, divisor);
		break;
	case KCOLL_UINT16:
		kc_avg_u16(buf, count, divisor);
		break;
	case KCOLL_INT32:
		kc_avg_s32(buf, count, divisor);
		break;
	case KCOLL_UINT32:
		kc_avg_u32(buf, count, divisor);
		break;
	case KCOLL_INT64:
		kc_avg_s64(buf, count, divisor);
		break;
	case KCOLL_UINT64:
		kc_avg_u64(buf, count, divisor);
		break;
	default:
		kc_avg_float(buf, count, dtype, divisor);
		break;
	}
	return 0;
}
