// SPDX-License-Identifier: GPL-2.0
/*
 * collctl explain (see collctl_explain.h).  The candidates shown are the
 * ones automatic selection weighs: each flat algorithm on every level the
 * configuration leaves automatic, and the whole-operation builders
 * (Pipeline, AHC, AHC_BROKE) when level1 and level2 both are and they run
 * what the other levels configure (kc_select_whole_ok()), after the
 * configured algorithms that cannot run their level's part fell back
 * (kc_select_prepare()); Mesh only
 * inside one server, as kc_cost.c never picks it between servers; the choice
 * itself may mix flat algorithms per level, which is why it is computed
 * by kc_select_cfg() and not taken from the list.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collctl_explain.h"
#include "collctl_fit.h"
#include "size.h"
#include "kc_cfg.h"
#include "kc_reduce.h"

static const char *const level_names[KCOLL_LEVEL_COUNT] = { "level0", "level1", "level2" };

/* The tools' one size parser (tools/common/size.c); @err names @s when bad. */
int cc_parse_bytes(const char *s, u64 *out, char *err, size_t errlen)
{
	uint64_t v;
	int ret = parse_size(s, &v, err, errlen);

	if (!ret)
		*out = v;
	return ret ? -EINVAL : 0;
}

static int alt_cmp(const void *a, const void *b)
{
	const struct cc_explain_alt *x = a, *y = b;

	return x->time_fs < y->time_fs ? -1 : x->time_fs > y->time_fs;
}

static void add_alt(struct cc_explain *x, const struct kc_topo *t, u64 n,
		    const struct kc_algo_cfg *c, const struct kc_cost_model *m, const char *name)
{
	struct cc_explain_alt *a;

	if (x->nalt >= CC_EXPLAIN_MAX_ALT)
		return;
	a = &x->alt[x->nalt++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->time_fs = kc_cost_op(t, x->op, n, c, m);
}

/* Whether selection may run Mesh on every level of @t between servers. */
static bool mesh_admitted(const struct kc_topo *t, const struct kc_cost_model *m)
{
	if (!m)
		m = &kc_cost_default;
	if (t->nservers > 1 && !m->lv[KCOLL_LEVEL1].auto_mesh)
		return false;
	return t->npods <= 1 || m->lv[KCOLL_LEVEL2].auto_mesh;
}

static void weigh_candidates(struct cc_explain *x, const struct kc_topo *t,
			     const struct kc_algo_cfg *cfg, const struct kc_cost_model *m, u64 n)
{
	u32 flat[KCOLL_ALGO_COUNT], whole[KCOLL_ALGO_COUNT], i, l;
	u32 nflat = kc_algo_auto_list(false, flat), nwhole = kc_algo_auto_list(true, whole);

	for (i = 0; i < nflat; i++) {
		struct kc_algo_cfg c = *cfg;
		char name[48];

		/* as kc_cost_pick(): Mesh between servers only where admitted */
		if (kc_algo_get(flat[i])->auto_port_measured && !mesh_admitted(t, m))
			continue;
		for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
			if (c.algo[l] == KCOLL_ALGO_AUTO)
				c.algo[l] = flat[i];
		snprintf(name, sizeof(name), "%s on every automatic level",
			 kc_cfg_algo_token(flat[i]));
		add_alt(x, t, n, &c, m, name);
	}
	for (i = 0; i < nwhole; i++) {
		struct kc_algo_cfg c = *cfg;

		if (cfg->algo[KCOLL_LEVEL1] != KCOLL_ALGO_AUTO ||
		    cfg->algo[KCOLL_LEVEL2] != KCOLL_ALGO_AUTO ||
		    !kc_algo_supports(kc_algo_get(whole[i]), x->op) ||
		    !kc_select_whole_ok(t, cfg, whole[i]))
			continue;
		c.algo[KCOLL_LEVEL1] = whole[i];
		add_alt(x, t, n, &c, m, kc_cfg_algo_token(whole[i]));
	}
	qsort(x->alt, x->nalt, sizeof(x->alt[0]), alt_cmp);
}

static void explain_why(struct cc_explain *x)
{
	const struct cc_explain_alt *next = NULL;
	char ties[64] = "";
	u32 i, tied = 0;

	if (!x->any_auto) {
		snprintf(x->why, sizeof(x->why), "every level is configured: the algo string "
			 "decides, the model only predicts the time");
		return;
	}
	/*
	 * The best candidate slower than the choice: what it beat.  Candidates
	 * as fast as the choice (the choice itself among them) are counted, not
	 * named, so that "next best" never names one the model rates equal.
	 */
	for (i = 0; i < x->nalt; i++) {
		if (x->alt[i].time_fs == x->time_fs)
			tied++;
		else if (!next && x->alt[i].time_fs != KC_COST_INF &&
			 x->alt[i].time_fs > x->time_fs)
			next = &x->alt[i];
	}
	if (tied > 1)
		snprintf(ties, sizeof(ties), " (%u of them equally fast)",
			 tied);
	if (next && x->time_fs)
		snprintf(x->why, sizeof(x->why), "least modelled time of the %u candidates%s; the "
			 "next best, %s, is %.1f%% slower", x->nalt, ties, next->name,
			 100.0 * ((double)next->time_fs / (double)x->time_fs - 1.0));
	else
		snprintf(x->why, sizeof(x->why), "least modelled time of the %u candidates%s",
			 x->nalt, ties);
}

int cc_explain_run(const struct kc_topo *t, u32 rank, u32 op, u64 bytes,
		   const struct kc_algo_cfg *cfg, const struct kc_cost_model *model,
		   struct cc_explain *x, char *err, size_t errlen)
{
	struct kc_op_desc d = { .op = op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM };
	struct kc_algo_cfg resolved, prep;
	struct kc_plan *plan;
	char msg[160] = "";
	u32 l;
	int ret;

	memset(x, 0, sizeof(*x));
	if (op == KCOLL_OP_ALLTOALLV) {
		snprintf(err, errlen, "explain does not model alltoallv (its per-peer counts); "
			 "explain alltoall of the same size instead");
		return -EOPNOTSUPP;
	}
	if (rank >= t->nranks) {
		snprintf(err, errlen, "rank %u out of range for %u ranks", rank, t->nranks);
		return -EINVAL;
	}
	x->op = op;
	x->rank = rank;
	x->nranks = t->nranks;
	x->nservers = t->nservers;
	x->npods = t->npods;
	x->bytes = bytes;
	d.count = op == KCOLL_OP_BARRIER ? 0 : bytes / kc_dtype_size(KCOLL_FP32);
	if (cc_per_rank_op(op))
		d.count /= t->nranks;
	if (op == KCOLL_OP_BARRIER)
		d.dtype = KCOLL_UINT8;
	x->count = d.count;
	/* what selection weighs: after the fallbacks (kc_select_prepare()) */
	prep = *cfg;
	kc_select_prepare(t, op, &prep);
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		x->configured[l] = cfg->conf[l] ? cfg->conf[l] : cfg->algo[l];
		x->any_auto |= prep.algo[l] == KCOLL_ALGO_AUTO;
	}
	x->time_fs = kc_select_cfg(t, &d, cfg, model, &resolved);
	ret = kc_plan_build_model(t, rank, &d, cfg, model, &plan, msg, sizeof(msg));
	if (ret) {
		snprintf(err, errlen, "%s of %" PRIu64 " bytes on %u ranks: %s", kc_op_name(op),
			 bytes, t->nranks, msg[0] ? msg : strerror(-ret));
		return ret;
	}
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		x->chosen[l] = plan->algo[l];
	x->fallback = plan->fallback;
	x->nsteps = plan->nsteps;
	x->nrounds = plan->nrounds;
	x->npeers = plan->npeers;
	x->sent = kc_plan_bytes_sent(plan);
	x->received = kc_plan_bytes_received(plan);
	snprintf(x->note, sizeof(x->note), "%s", plan->note);
	kc_plan_free(plan);
	weigh_candidates(x, t, &prep, model, kc_cost_bytes(&d, t->nranks));
	explain_why(x);
	return 0;
}

static double fs_to_us(u64 fs)
{
	return (double)fs / 1e9;
}

void cc_explain_print(FILE *f, const struct cc_explain *x)
{
	u32 l, i;

	fprintf(f, "%s of %" PRIu64 " bytes (%" PRIu64 " float elements%s) on %u ranks "
		"(%u servers, %u super pods), as rank %u\n", kc_op_name(x->op), x->bytes,
		x->count, cc_per_rank_op(x->op) ? " per rank" : "", x->nranks, x->nservers,
		x->npods, x->rank);
	fprintf(f, "%-8s %-11s %s\n", "level", "configured", "runs");
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		fprintf(f, "%-8s %-11s %s%s\n", level_names[l],
			kc_cfg_algo_token(x->configured[l]),
			x->chosen[l] ? kc_cfg_algo_token(x->chosen[l]) : "-",
			x->fallback & (1u << l) ? " (not as configured: see the note)" : "");
	fprintf(f, "plan: %u steps in %u rounds with %u peers; this rank sends %" PRIu64
		" and receives %" PRIu64 " bytes%s%s\n", x->nsteps, x->nrounds, x->npeers,
		x->sent, x->received, x->note[0] ? "; " : "", x->note);
	if (x->nranks > 1)
		fprintf(f, "connections: %u of the %u peers (connect_on_need=1: made when an operation first needs them; 0: all %u at creation)\n",
			x->npeers, x->nranks - 1, x->nranks - 1);
	if (x->time_fs == KC_COST_INF)
		fprintf(f, "predicted time: not modelled\n");
	else
		fprintf(f, "predicted time: %.3f us\n", fs_to_us(x->time_fs));
	fprintf(f, "why: %s\n", x->why);
	if (!x->any_auto)
		return;
	fprintf(f, "candidates (modelled time):\n");
	for (i = 0; i < x->nalt; i++) {
		if (x->alt[i].time_fs == KC_COST_INF)
			fprintf(f, "  %14s  %s\n", "cannot run", x->alt[i].name);
		else
			fprintf(f, "  %11.3f us  %s\n", fs_to_us(x->alt[i].time_fs),
				x->alt[i].name);
	}
}

json_object *cc_explain_json(const struct cc_explain *x)
{
	json_object *o = json_object_new_object(), *lv = json_object_new_object();
	json_object *a = json_object_new_array();
	u32 l, i;

	json_object_object_add(o, "op", json_object_new_string(kc_op_name(x->op)));
	json_object_object_add(o, "bytes", json_object_new_uint64(x->bytes));
	json_object_object_add(o, "count", json_object_new_uint64(x->count));
	json_object_object_add(o, "nranks", json_object_new_uint64(x->nranks));
	json_object_object_add(o, "nservers", json_object_new_uint64(x->nservers));
	json_object_object_add(o, "npods", json_object_new_uint64(x->npods));
	json_object_object_add(o, "rank", json_object_new_uint64(x->rank));
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "configured", json_object_new_string(
			kc_cfg_algo_token(x->configured[l])));
		json_object_object_add(e, "runs", x->chosen[l] ? json_object_new_string(
			kc_cfg_algo_token(x->chosen[l])) : NULL);
		json_object_object_add(e, "fallback",
				       json_object_new_boolean(x->fallback & (1u << l)));
		json_object_object_add(lv, level_names[l], e);
	}
	json_object_object_add(o, "levels", lv);
	json_object_object_add(o, "steps", json_object_new_uint64(x->nsteps));
	json_object_object_add(o, "rounds", json_object_new_uint64(x->nrounds));
	json_object_object_add(o, "peers", json_object_new_uint64(x->npeers));
	json_object_object_add(o, "bytes_sent", json_object_new_uint64(x->sent));
	json_object_object_add(o, "bytes_received", json_object_new_uint64(x->received));
	json_object_object_add(o, "note", json_object_new_string(x->note));
	json_object_object_add(o, "predicted_us", x->time_fs == KC_COST_INF ? NULL :
			       json_object_new_double(fs_to_us(x->time_fs)));
	json_object_object_add(o, "why", json_object_new_string(x->why));
	for (i = 0; x->any_auto && i < x->nalt; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "candidate", json_object_new_string(x->alt[i].name));
		json_object_object_add(e, "predicted_us", x->alt[i].time_fs == KC_COST_INF ?
				       NULL : json_object_new_double(fs_to_us(x->alt[i].time_fs)));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "candidates", a);
	return o;
}
