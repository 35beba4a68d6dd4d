/* SPDX-License-Identifier: GPL-2.0 */
/* Topology from an HCCL rank table file (v1.0 / v1.2), for coll-sim. */
#ifndef KC_SIM_RANKTABLE_H
#define KC_SIM_RANKTABLE_H

#include "kc_topo.h"

/* 0, or -EINVAL / -ENOMEM with a message in err. */
int rt_load(const char *path, struct kc_topo *t, char *err, u32 errlen);

#endif
