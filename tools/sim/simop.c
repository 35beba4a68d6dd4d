// SPDX-License-Identifier: GPL-2.0
/*
 * One operation on the simulator: plans for every rank, the run, cleanup.
 */
#include <math.h>
#include <stdio.h>
#include "sim.h"
#include "kc_cost.h"

u32 sim_symmetry_period(const struct kc_topo *t)
{
	if (!t->server_size || !t->pod_ranks)
		return t->nranks;
	return t->npods == 1 ? t->server_size : t->pod_ranks;
}

static bool sim_is_xfer(const struct kc_step *st)
{
	return st->kind <= KC_STEP_RECV_REDUCE;
}

bool sim_plan_moved(const struct kc_plan *a, const struct kc_plan *b, u32 shift)
{
	struct kc_round_it ra, rb;
	bool ma, mb;
	u32 p = a->nranks;

	if (b->nranks != p || a->npeers != b->npeers || (a->rank + shift) % p != b->rank)
		return false;
	ma = kc_plan_round_first(a, &ra);
	mb = kc_plan_round_first(b, &rb);
	for (; ma && mb; ma = kc_plan_round_next(a, &ra), mb = kc_plan_round_next(b, &rb)) {
		struct kc_step_it ia, ib;
		struct kc_step sa, sb;
		bool na, nb;

		kc_plan_steps_begin(a, &ra, &ia);
		kc_plan_steps_begin(b, &rb, &ib);
		for (;;) {
			na = kc_plan_step_next(a, &ia, &sa);
			nb = kc_plan_step_next(b, &ib, &sb);
			if (na != nb)
				return false;
			if (!na)
				break;
			if (sa.kind != sb.kind || sa.flags != sb.flags || sa.len != sb.len)
				return false;
			if (sim_is_xfer(&sa) &&
			    (a->peers[sa.peer] + shift) % p != b->peers[sb.peer])
				return false;
		}
	}
	return ma == mb;
}

double sim_plan_lower_bound(const struct kc_topo *t, const struct kc_plan *p,
			    const struct sim_model *m)
{
	struct kc_round_it ri;
	struct kc_step_it it;
	struct kc_step st;
	double lb = 0;
	bool more;

	for (more = kc_plan_round_first(p, &ri); more; more = kc_plan_round_next(p, &ri)) {
		double round = 0;

		kc_plan_steps_begin(p, &ri, &it);
		while (kc_plan_step_next(p, &it, &st)) {
			u32 lvl;
			double beta, x;

			if (st.kind != KC_STEP_RECV && st.kind != KC_STEP_RECV_REDUCE)
				continue;
			lvl = sim_level_of(t, p->rank, p->peers[st.peer]);
			beta = m->lv[lvl].beta * (lvl == KCOLL_LEVEL2 ? m->conv : 1);
			x = m->lv[lvl].alpha + (double)st.len * beta;
			if (st.kind == KC_STEP_RECV_REDUCE)
				x += (double)st.len * m->lv[lvl].gamma;
			round = fmax(round, x);
		}
		lb += round;
	}
	return lb;
}

int sim_op_lower_bound(const struct kc_topo *t, const struct kc_op_desc *op,
		       const struct kc_algo_cfg *cfg, const struct sim_model *m, double *lb)
{
	u32 r, period = m->symmetry ? sim_symmetry_period(t) : t->nranks;
	int ret = 0;

	*lb = 0;
	/* any ranks give a bound; one period's give the symmetric one */
	for (r = 0; r < period && !ret; r++) {
		struct kc_plan *pl = NULL;

		ret = kc_plan_build(t, r, op, cfg, &pl, NULL, 0);
		if (!ret)
			*lb = fmax(*lb, sim_plan_lower_bound(t, pl, m));
		kc_plan_free(pl);
	}
	return ret;
}

/*
 * Build the plans of one period and check that every other rank's plan
 * is its representative's, moved.  Returns the period that holds
 * (t->nranks when none does: plans[] then holds every rank's plan).
 */
static int sim_build_plans(const struct kc_topo *t, const struct kc_op_desc *op,
			   const struct kc_algo_cfg *cfg, bool symmetry, struct kc_plan **plans,
			   u32 *period, char *err, u32 errlen)
{
	u32 p = t->nranks, per = symmetry ? sim_symmetry_period(t) : p, r;
	int ret = 0;

	for (r = 0; r < per && !ret; r++)
		ret = kc_plan_build(t, r, op, cfg, &plans[r], err, errlen);
	for (r = per; r < p && !ret; r++) {
		ret = kc_plan_build(t, r, op, cfg, &plans[r], err, errlen);
		if (ret || per == p)
			continue;
		if (sim_plan_moved(plans[r % per], plans[r], r - r % per)) {
			kc_plan_free(plans[r]);
			plans[r] = NULL;
		} else {
			per = p;	/* not symmetric: every plan is needed */
		}
	}
	if (!ret && per == p) {
		for (r = 0; r < p && !ret; r++)
			if (!plans[r])
				ret = kc_plan_build(t, r, op, cfg, &plans[r], err, errlen);
	}
	*period = per;
	return ret;
}

int sim_op(const struct kc_topo *t, const struct kc_op_desc *op, const struct kc_algo_cfg *cfg,
	   const struct sim_model *m, const struct kc_exec_cfg *ec, struct sim_result *res,
	   u32 algo[KCOLL_LEVEL_COUNT], char *note, u32 notelen, char *err, u32 errlen)
{
	u32 p = t->nranks, r, period;
	struct kc_plan **plans = calloc(p, sizeof(*plans));
	int ret;

	if (!plans)
		return -ENOMEM;
	ret = sim_build_plans(t, op, cfg, m->symmetry, plans, &period, err, errlen);
	if (!ret) {
		if (algo)
			memcpy(algo, plans[0]->algo, sizeof(plans[0]->algo));
		if (note && notelen)
			snprintf(note, notelen, "%s", plans[0]->note);
		ret = sim_run_period(t, plans, period, m, ec, res);
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

void sim_cost_model(const struct sim_model *m, const struct kc_exec_cfg *ec,
		    struct kc_cost_model *out)
{
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		out->lv[l].alpha = sim_fs(m->lv[l].alpha);
		out->lv[l].beta = sim_fs(m->lv[l].beta);
		out->lv[l].gamma = sim_fs(m->lv[l].gamma);
		out->lv[l].auto_mesh = false;	/* the default model's value */
	}
	out->conv_q8 = (u32)llround(m->conv * 256);
	out->window = ec->window;
}

void sim_conformance_model(const struct sim_model *m, struct kc_cost_model *out)
{
	struct kc_exec_cfg ec = sim_conformance_cfg();

	sim_cost_model(m, &ec, out);
}

u32 sim_candidates(const struct kc_topo *t, u32 op, struct kc_algo_cfg *c, const char **name)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 nl = kc_topo_levels(t, 0, lv), n = 0, id, top;
	const struct kc_algo_ops *a;

	top = nl ? lv[nl - 1].cfg_level : KCOLL_LEVEL0;
	for (id = 0; id < KCOLL_ALGO_COUNT; id++) {
		a = kc_algo_get(id);
		if (!a || a->build)
			continue;
		if (a->auto_port_measured && top != KCOLL_LEVEL0)
			continue;	/* HCCL: no fullmesh between servers */
		memset(&c[n], 0, sizeof(c[n]));
		c[n].algo[top] = id;
		name[n++] = a->name;
	}
	for (id = 0; id < KCOLL_ALGO_COUNT && t->nservers > 1; id++) {
		a = kc_algo_get(id);
		if (!a || !a->build || !kc_algo_supports(a, op))
			continue;
		memset(&c[n], 0, sizeof(c[n]));
		c[n].algo[KCOLL_LEVEL1] = id;
		name[n++] = a->name;
	}
	return n;
}
