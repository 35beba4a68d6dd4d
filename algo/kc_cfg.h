/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HCCL_ALGO configuration strings (Documentation/algorithms.md,
 * "HCCL_ALGO"), parsed in the kernel for sysfs writes and in user space for
 * coll-sim:
 *
 *   level0:NA;level1:H-D_R;level2:NHR                  (global)
 *   allreduce=level0:NA;level1:AHC/allgather=level1:NB  (per operation)
 *   others=level1:ring/broadcast=level1:NHR             (others = default)
 *
 * Spaces are ignored; level, operation and algorithm names are accepted
 * in any case, so HCCL's own strings parse unchanged.  Algorithms: the
 * HCCL tokens ring, H-D_R, NHR, NB, AHC, AHC_BROKE, pipeline, pairwise,
 * fullmesh, NA and null (NA/null: automatic), plus kcoll's mesh and tree.
 * NHR_V1 is refused with a message.  level3 parses and has no effect
 * (kcoll has three levels).
 */
#ifndef KC_CFG_H
#define KC_CFG_H

#include "kc_coll.h"

#define KC_CFG_LEVELS	4			/* level0..level3 */
#define KC_CFG_OTHERS	KCOLL_OP_COUNT		/* the others= entry */
#define KC_CFG_GLOBAL	(KCOLL_OP_COUNT + 1)	/* the global form */
#define KC_CFG_KEYS	(KCOLL_OP_COUNT + 2)
#define KC_CFG_MAX_LEN	1024			/* longest string accepted */

struct kc_algo_conf {
	u8 algo[KC_CFG_KEYS][KC_CFG_LEVELS];	/* enum kcoll_algo; AUTO unset */
	u32 keys;				/* bit k: entry k present */
};

/*
 * Parse @s into @conf.  Returns 0, or -EINVAL with @conf untouched and a
 * message in @err naming the position (0-based, in @s as given) and the
 * expected form.  An empty string is valid and configures nothing.
 */
int kc_cfg_parse(const char *s, struct kc_algo_conf *conf, char *err, u32 errlen);

/*
 * The per-level algorithms @conf gives operation @op, HCCL semantics:
 * the op's own entry, else others=, else the global form; level1 AHC or
 * AHC_BROKE also governs level2.  An algorithm that cannot run @op falls
 * back to automatic selection for this op only; the fallback is reported
 * in @note (may be NULL) and the return value is the number of levels
 * that fell back.  out->conf keeps what was configured before the
 * fallback, for plan building to report (struct kc_algo_cfg).
 */
u32 kc_cfg_for_op(const struct kc_algo_conf *conf, u32 op, struct kc_algo_cfg *out,
		  char *note, u32 notelen);

/* Write @conf back in HCCL_ALGO form (for sysfs reads); returns length. */
u32 kc_cfg_format(const struct kc_algo_conf *conf, char *buf, u32 len);

/* The HCCL_ALGO token of an algorithm ("H-D_R", "NA" for AUTO). */
const char *kc_cfg_algo_token(u32 algo);

#endif /* KC_CFG_H */
