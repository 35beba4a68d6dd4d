// SPDX-License-Identifier: GPL-2.0
/*
 * One operation on the simulator: plans for every rank, the run, cleanup.
 */
#include <math.h>
#include <stdio.h>
#include "sim.h"
#include "kc_cost.h"

int sim_op(const struct kc_topo *t, const struct kc_op_desc *op, const struct kc_algo_cfg *cfg,
	   const struct sim_model *m, const struct kc_exec_cfg *ec, struct sim_result *res,
	   u32 algo[KCOLL_LEVEL_COUNT], char *note, u32 notelen, char *err, u32 errlen)
{
	u32 p = t->nranks, r;
	struct kc_plan **plans = calloc(p, sizeof(*plans));
	int ret = 0;

	if (!plans)
		return -ENOMEM;
	for (r = 0; r < p && !ret; r++)
		ret = kc_plan_build(t, r, op, cfg, &plans[r], err, errlen);
	if (!ret) {
		if (algo)
			memcpy(algo, plans[0]->algo, sizeof(plans[0]->algo));
		if (note && notelen)
			snprintf(note, notelen, "%s", plans[0]->note);
		ret = sim_run(t, plans, m, ec, res);
		if (ret && err)
			snprintf(err, errlen, "simulation failed: %s", strerror(-ret));
	}
	for (r = 0; r < p; r++)
		kc_plan_free(plans[r]);
	free(plans);
	return ret;
}

static u64 sim_fs(double s)
{
	double fs = s * 1e15;

	return fs >= 1.8e19 ? KC_COST_INF : (u64)llround(fs);
}

void sim_cost_model(const struct sim_model *m, struct kc_cost_model *out)
{
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		out->lv[l].alpha = sim_fs(m->lv[l].alpha);
		out->lv[l].beta = sim_fs(m->lv[l].beta);
		out->lv[l].gamma = sim_fs(m->lv[l].gamma);
	}
	out->conv_q8 = (u32)llround(m->conv * 256);
}
