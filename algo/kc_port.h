/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place in algo/ that knows whether it is built into the kernel
 * module or into a user-space program.  Every other file in algo/ includes
 * this header and nothing from libc, the kernel or RDMA.
 */
#ifndef KC_PORT_H
#define KC_PORT_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/kernel.h>
#include <linux/sort.h>

#define kc_snprintf snprintf

/*
 * Plans, topologies and executors are made for a process: charged to its
 * memory cgroup (the module makes the creator's the active one where the
 * work runs in a kernel thread).
 */
static inline void *kc_malloc(size_t n)
{
	return kvmalloc(n, GFP_KERNEL_ACCOUNT);
}

static inline void *kc_zalloc(size_t n)
{
	return kvzalloc(n, GFP_KERNEL_ACCOUNT);
}

static inline void kc_free(void *p)
{
	kvfree(p);
}

/* qsort()'s contract; the kernel's sort() is a heapsort, without recursion. */
static inline void kc_sort(void *base, size_t num, size_t size,
			   int (*cmp)(const void *, const void *))
{
	sort(base, num, size, cmp, NULL);
}

/* Bracket floating-point work; defined in the module (kernel_fpu_begin). */
void kc_fpu_begin(void);
void kc_fpu_end(void);

#else /* user space */

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#define kc_snprintf snprintf

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef U32_MAX
#define U32_MAX UINT32_MAX
#endif
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif

static inline void *kc_malloc(size_t n)
{
	return malloc(n ? n : 1);
}

static inline void *kc_zalloc(size_t n)
{
	return calloc(1, n ? n : 1);
}

static inline void kc_free(void *p)
{
	free(p);
}

static inline void kc_sort(void *base, size_t num, size_t size,
			   int (*cmp)(const void *, const void *))
{
	qsort(base, num, size, cmp);
}

static inline void kc_fpu_begin(void) { }
static inline void kc_fpu_end(void) { }

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define check_mul_overflow(a, b, d) __builtin_mul_overflow(a, b, d)
#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)

#endif /* __KERNEL__ */

/* Largest amount of data one FPU section reduces (bounded preempt-off time). */
#define KC_FPU_CHUNK_BYTES	4096u

static inline u64 kc_min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static inline u64 kc_max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

static inline u32 kc_min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

/* floor(log2(x)) for x >= 1 */
static inline u32 kc_ilog2(u64 x)
{
	u32 r = 0;

	while (x >>= 1)
		r++;
	return r;
}

/* ceil(log2(x)) for x >= 1: the bit length of x - 1 */
static inline u32 kc_clog2(u64 x)
{
	return x <= 1 ? 0 : kc_ilog2(x - 1) + 1;
}

static inline bool kc_is_pow2(u64 x)
{
	return x && !(x & (x - 1));
}

/* Greatest common divisor (0 when both are 0). */
static inline u64 kc_gcd(u64 a, u64 b)
{
	while (b) {
		u64 r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* Number of set bits. */
static inline u32 kc_hweight32(u32 x)
{
	u32 n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

#endif /* KC_PORT_H */
