/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Element types and elementwise reductions.
 *
 * Integer types wrap like C unsigned arithmetic.  fp16 and bf16 are
 * reduced through fp32 and rounded back to nearest-even; NaN stays NaN and
 * infinities follow IEEE 754.  AVG reduces as SUM; the caller divides once
 * at the end with kc_reduce_avg_finish(), so the result does not depend on
 * how the sum was split across ranks.
 *
 * The floating-point loops live in kc_reduce_fpu.c, the only object built
 * with FPU code generation in the kernel; they are entered here inside
 * kc_fpu_begin()/kc_fpu_end() sections of at most KC_FPU_CHUNK_BYTES.
 */
#ifndef KC_REDUCE_H
#define KC_REDUCE_H

#include "kc_port.h"
#include "../uapi/linux/kcoll.h"

/* Bytes per element of @dtype, or 0 if @dtype is not a known type. */
u32 kc_dtype_size(u32 dtype);
bool kc_dtype_is_float(u32 dtype);
const char *kc_dtype_name(u32 dtype);
const char *kc_redop_name(u32 redop);
bool kc_redop_valid(u32 redop);

/*
 * dst[i] = dst[i] OP src[i] for i < count.  dst and src may be the same
 * but must not otherwise overlap.  Returns 0, or -EINVAL for an unknown
 * dtype or redop.
 */
int kc_reduce(void *dst, const void *src, u64 count, u32 dtype, u32 redop);

/*
 * Final step of AVG: buf[i] = buf[i] / divisor.  Integers divide with C
 * semantics (truncation toward zero for signed types); floating types
 * divide in their own precision (fp16/bf16 in fp32, then round).
 */
int kc_reduce_avg_finish(void *buf, u64 count, u32 dtype, u32 divisor);

#endif /* KC_REDUCE_H */
