// SPDX-License-Identifier: GPL-2.0
/*
 * FPU sections for the algorithm core.  algo/ brackets every piece of
 * floating-point work (at most KC_FPU_CHUNK_BYTES of data) with
 * kc_fpu_begin()/kc_fpu_end(); in the module they map to the x86 kernel
 * FPU API.  The section disables preemption and is not reentrant: no
 * sleeping, no page faults and no nesting inside it.
 */
#include <asm/fpu/api.h>

#include "kc_port.h"

void kc_fpu_begin(void)
{
	kernel_fpu_begin();
}

void kc_fpu_end(void)
{
	kernel_fpu_end();
}
