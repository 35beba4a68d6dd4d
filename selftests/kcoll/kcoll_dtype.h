/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact reduction checks for every element type: each rank contributes
 * small integers, chosen so that every result (sum, product, max, min and
 * average of up to 8 ranks) is an integer every type holds exactly, fp16
 * and bf16 included.  Values are stored and read back through doubles.
 */
#ifndef KCOLL_DTYPE_H
#define KCOLL_DTYPE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "uapi/linux/kcoll.h"

static const unsigned int kc_dt_size[KCOLL_DTYPE_COUNT] = {
	1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8,
};

static const char *const kc_dt_name[KCOLL_DTYPE_COUNT] = {
	"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
	"fp16", "bf16", "fp32", "fp64",
};

static const char *const kc_redop_name[KCOLL_REDOP_COUNT] = {
	"sum", "prod", "max", "min", "avg",
};

/* An integer with |v| <= 2048 as IEEE half: exact, no rounding needed. */
static inline uint16_t kc_int_to_fp16(int v)
{
	unsigned int a = v < 0 ? -v : v, e = 0;
	uint16_t sign = v < 0 ? 0x8000 : 0;

	if (!a)
		return sign;
	while ((a >> e) > 1)
		e++;
	return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(((a << 10) >> e) & 0x3ff);
}

static inline double kc_fp16_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (!e)
		v = ldexp(m, -24);
	else
		v = ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}

/* Store @v as element @i of @buf (memcpy: any alignment, no type punning). */
static inline void kc_put(void *buf, size_t i, unsigned int dt, int v)
{
	char *p = (char *)buf + i * kc_dt_size[dt];
	int8_t s8 = (int8_t)v;
	int16_t s16 = (int16_t)v;
	int32_t s32 = v;
	int64_t s64 = v;
	uint16_t h;
	float f = (float)v;
	double d = v;
	uint32_t fb;

	switch (dt) {
	case KCOLL_INT8: case KCOLL_UINT8: memcpy(p, &s8, 1); break;
	case KCOLL_INT16: case KCOLL_UINT16: memcpy(p, &s16, 2); break;
	case KCOLL_INT32: case KCOLL_UINT32: memcpy(p, &s32, 4); break;
	case KCOLL_INT64: case KCOLL_UINT64: memcpy(p, &s64, 8); break;
	case KCOLL_FP16:
		h = kc_int_to_fp16(v);
		memcpy(p, &h, 2);
		break;
	case KCOLL_BF16:
		memcpy(&fb, &f, 4);		/* small integers: the low half is 0 */
		h = (uint16_t)(fb >> 16);
		memcpy(p, &h, 2);
		break;
	case KCOLL_FP32: memcpy(p, &f, 4); break;
	case KCOLL_FP64: memcpy(p, &d, 8); break;
	}
}

/* Element @i of @buf as a double (exact for the values used here). */
static inline double kc_get(const void *buf, size_t i, unsigned int dt)
{
	const char *p = (const char *)buf + i * kc_dt_size[dt];
	union { int8_t s8; uint8_t u8; int16_t s16; uint16_t u16; int32_t s32;
		uint32_t u32; int64_t s64; uint64_t u64; float f; double d; } u;
	uint32_t fb;

	memcpy(&u, p, kc_dt_size[dt]);
	switch (dt) {
	case KCOLL_INT8: return u.s8;
	case KCOLL_UINT8: return u.u8;
	case KCOLL_INT16: return u.s16;
	case KCOLL_UINT16: return u.u16;
	case KCOLL_INT32: return u.s32;
	case KCOLL_UINT32: return u.u32;
	case KCOLL_INT64: return (double)u.s64;
	case KCOLL_UINT64: return (double)u.u64;
	case KCOLL_FP16: return kc_fp16_to_double(u.u16);
	case KCOLL_BF16:
		fb = (uint32_t)u.u16 << 16;
		memcpy(&u.f, &fb, 4);
		return u.f;
	case KCOLL_FP32: return u.f;
	case KCOLL_FP64: return u.d;
	}
	return NAN;
}

/*
 * Rank @r's element @i for @redop among @p ranks.  Sums stay within
 * [0, 8 * 15] for p <= 8 (int8 holds them), products within 2^4 (a
 * factor 2 on at most 4 ranks), and
 * AVG contributions sum to p * a(i), so the average is a(i) exactly (no
 * truncation, no rounding) in every type.  All values are >= 0 so the
 * unsigned types hold them.
 */
static inline int kc_val(unsigned int redop, unsigned int r, unsigned int p, size_t i)
{
	int a = 9 + (int)(i % 7);	/* 9..15 */
	unsigned int mate = p - 1 - r;
	int d;

	switch (redop) {
	case KCOLL_PROD:
		return r < 4 && (i + r) % 3 == 0 ? 2 : 1;
	case KCOLL_AVG:
		/* Rank r and rank p-1-r are a(i) -/+ d: the offsets cancel. */
		if (r == mate)
			return a;
		d = (int)((r < mate ? r : mate) % 8) + 1;
		return r < mate ? a - d : a + d;
	default:
		return (int)((i * 5 + r * 3) % 10);
	}
}

/* What every rank expects at element @i. */
static inline double kc_want(unsigned int redop, unsigned int p, size_t i)
{
	double w = redop == KCOLL_PROD ? 1 : redop == KCOLL_MAX ? -1e9 :
		   redop == KCOLL_MIN ? 1e9 : 0;
	unsigned int r;

	for (r = 0; r < p; r++) {
		double v = kc_val(redop, r, p, i);

		switch (redop) {
		case KCOLL_SUM: case KCOLL_AVG: w += v; break;
		case KCOLL_PROD: w *= v; break;
		case KCOLL_MAX: w = v > w ? v : w; break;
		case KCOLL_MIN: w = v < w ? v : w; break;
		}
	}
	return redop == KCOLL_AVG ? w / p : w;
}

#endif /* KCOLL_DTYPE_H */
