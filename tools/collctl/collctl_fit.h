/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl calibrate's arithmetic: fit one level's link model (alpha, beta,
 * gamma of algo/kc_cost.h) to collectives timed on a flat group of ranks
 * that only use that level's links.  The model is the module's own
 * (kc_cost_op()), so a fitted model predicts what the module's automatic
 * selection will weigh, not a second formula of it.
 */
#ifndef COLLCTL_FIT_H
#define COLLCTL_FIT_H

#include <stddef.h>

#include "kc_cost.h"

/* One timed operation on a flat group. */
struct cc_fit_sample {
	u32 level;		/* KCOLL_LEVEL0/1/2: whose links the group used */
	u32 p;			/* members, >= 2 */
	u32 op;			/* enum kcoll_op (AllGather, ReduceScatter, ...) */
	u32 algo;		/* the flat algorithm forced on the group */
	u64 bytes;		/* nccl-tests size (per-rank ops: the whole region) */
	double seconds;		/* measured time of one operation */
};

struct cc_fit_result {
	struct kc_cost_link link;	/* alpha, beta, gamma in fs, fs/B */
	double overhead_s;	/* per operation, any algorithm: not in the model */
	double rms_rel;		/* rms of (model + overhead - measured) / measured */
	double rms_rel_start;	/* the same for the starting model */
	bool gamma_fitted;	/* false: no sample reduces, gamma kept */
	int auto_mesh;		/* cc_fit_mesh(): 1, 0, or -1 (no evidence, kept) */
	double mesh_ratio;	/* its worst Mesh / Ring time */
};

/* Ops whose count is per rank: their region is count * ranks elements. */
bool cc_per_rank_op(u32 op);

/*
 * The modelled time in seconds of @s's operation on @s's flat group under
 * @m, or a negative value when the model cannot run it.
 */
double cc_fit_predict(const struct cc_fit_sample *s, const struct kc_cost_model *m);

/*
 * Fit level @level of @start (its other levels, window and C kept) and a
 * cost per operation that is the same for every algorithm to the @n
 * samples of that level in @s, minimising the relative error; decide
 * auto_mesh with cc_fit_mesh().  Needs
 * samples of at least two sizes; gamma is fitted only when some sample
 * reduces, the overhead only when the samples tell it from alpha (more
 * than two ranks).  0, or -EINVAL with the reason in @err.
 */
int cc_fit_level(const struct cc_fit_sample *s, size_t n, u32 level,
		 const struct kc_cost_model *start, struct cc_fit_result *out,
		 char *err, size_t errlen);

/*
 * Whether automatic selection should run Mesh through level @level's ports
 * (kc_cost_link.auto_mesh).  The model prices Mesh there as overlapping
 * messages, never dearer than Ring; admit it only where the group's
 * samples agree: at every size, Mesh's times (AllGather plus
 * ReduceScatter) sum to no more than Ring's.  1 admit, 0 refuse, -1 no
 * evidence: level 0 (no port), two ranks (Mesh and Ring exchange alike),
 * or a size not timed with both.  @worst: the largest Mesh / Ring ratio.
 */
int cc_fit_mesh(const struct cc_fit_sample *s, size_t n, u32 level, double *worst);

#endif /* COLLCTL_FIT_H */
