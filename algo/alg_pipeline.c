// SPDX-License-Identifier: GPL-2.0
/* STUB: being written. */
#include "kc_algo.h"

const struct kc_algo_ops kc_alg_pipeline = {
	.name = "pipeline",
	.hccl = "pipeline",
};
