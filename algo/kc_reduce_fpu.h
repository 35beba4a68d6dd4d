/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of the floating-point object kc_reduce_fpu.c.  Only void
 * pointers and integers cross it: the rest of the module is built without
 * SSE, so no float may be passed by value.  Callers hold an FPU section.
 */
#ifndef KC_REDUCE_FPU_H
#define KC_REDUCE_FPU_H

#include "kc_port.h"

void kc_fpu_reduce(void *dst, const void *src, u64 count, u32 dtype, u32 redop);
void kc_fpu_avg(void *buf, u64 count, u32 dtype, u32 divisor);

/*
 * Bit-pattern conversions (NaN stays a quiet NaN, fp32 to fp16/bf16 rounds
 * to nearest even).  Integer code, but compiled in the FPU object: callers
 * hold an FPU section here too.
 */
u32 kc_fp16_to_fp32(u16 h);
u16 kc_fp32_to_fp16(u32 f);
u32 kc_bf16_to_fp32(u16 b);
u16 kc_fp32_to_bf16(u32 f);

#endif /* KC_REDUCE_FPU_H */
