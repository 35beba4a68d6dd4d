/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl explain: what the module would run for one operation, and why.
 * The same code the module runs (algo/: kc_select_cfg(), kc_plan_build(),
 * kc_cost_op()) on a topology and a link model, so the answer is the
 * module's answer and not a second implementation of it.
 */
#ifndef COLLCTL_EXPLAIN_H
#define COLLCTL_EXPLAIN_H

#include <json-c/json.h>
#include <stdio.h>

#include "kc_cost.h"
#include "kc_plan.h"

#define CC_EXPLAIN_MAX_ALT	16

/* One candidate automatic selection weighed: a name and its modelled time. */
struct cc_explain_alt {
	char name[48];
	u64 time_fs;		/* KC_COST_INF: cannot run the operation */
};

struct cc_explain {
	u32 op, rank, nranks, nservers, npods;
	u64 bytes;		/* as given: the nccl-tests "size" */
	u64 count;		/* fp32 elements (per rank for per-rank ops) */
	u32 configured[KCOLL_LEVEL_COUNT];	/* as configured (kc_algo_cfg.conf or algo) */
	u32 chosen[KCOLL_LEVEL_COUNT];	/* what the plan runs; 0: level unused */
	u32 fallback;		/* the plan's: bit l, level l's configured algorithm did not run */
	bool any_auto;
	u64 time_fs;		/* modelled time of the choice */
	u32 nsteps, nrounds, npeers;
	u64 sent, received;	/* by this rank */
	char note[KC_PLAN_MAX_NOTE];
	u32 nalt;
	struct cc_explain_alt alt[CC_EXPLAIN_MAX_ALT];	/* fastest first */
	char why[320];
};

/*
 * Explain @op of @bytes on @t for @rank with configuration @cfg (AUTO
 * levels chosen on @model, NULL: kc_cost_default).  0, or a negative
 * errno with a message in @err (unsupported op, plan build failure).
 */
int cc_explain_run(const struct kc_topo *t, u32 rank, u32 op, u64 bytes,
		   const struct kc_algo_cfg *cfg, const struct kc_cost_model *model,
		   struct cc_explain *out, char *err, size_t errlen);
void cc_explain_print(FILE *f, const struct cc_explain *x);
json_object *cc_explain_json(const struct cc_explain *x);

/* "64M" -> 67108864, "1.5K" -> 1536 (size.h's parse_size).  0 or -EINVAL. */
int cc_parse_bytes(const char *s, u64 *out, char *err, size_t errlen);

#endif /* COLLCTL_EXPLAIN_H */
