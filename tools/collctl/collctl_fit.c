// SPDX-License-Identifier: GPL-2.0
/*
 * Fitting a level's alpha, beta and gamma to timed collectives.
 *
 * kc_cost_op() is (nearly) linear in the three parameters of a flat
 * group's level: a phase costs steps * alpha + bytes * beta + reduced
 * bytes * gamma, and only pipelining and the window make it bend.  So
 * the fit linearises the module's model around the current estimate
 * (finite differences give each sample's step and byte counts), solves
 * the weighted least squares problem for the relative error, and repeats
 * from the new estimate until it stops moving.  A parameter the data
 * push out of its range (a negative latency from noise) is pinned to the
 * bound and the others are solved again, so the result is always a model
 * the module accepts.
 *
 * A fourth unknown is a cost per operation that does not depend on the
 * algorithm (submission, waking the ranks; under emulation, waiting for
 * every VM to be scheduled).  The model has no such term and needs none,
 * since it is the same for every candidate of a choice; left out of the
 * fit it would be charged to alpha.  With two ranks Ring and Mesh take
 * the same steps and it cannot be told from alpha: then it is left out.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collctl_fit.h"
#include "kc_reduce.h"
#include "kc_topo.h"

#define NPAR		4		/* alpha, beta, gamma, overhead */
#define OVERHEAD	3
#define MAX_ITER	12

/* The module's ranges (kmod/kcoll.h): alpha <= 10 ms, rates 0.001..10^6 Gbit/s. */
static const double par_min[NPAR] = { 0.0, 8.0, 8.0, 0.0 };
static const double par_max[NPAR] = { 1e13, 8e9, 8e9, 1e16 };	/* overhead <= 10 s */
/* Smallest finite-difference step per parameter (1 ns, 8 fs/B, 1 ns). */
static const double par_step[NPAR] = { 1e6, 8.0, 8.0, 1e6 };

bool cc_per_rank_op(u32 op)
{
	return op == KCOLL_OP_ALLGATHER || op == KCOLL_OP_REDUCESCATTER ||
	       op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER || op == KCOLL_OP_ALLTOALL;
}

/* A flat group of @p ranks whose only links are those of @level. */
static int flat_topo(struct kc_topo *t, u32 level, u32 p)
{
	switch (level) {
	case KCOLL_LEVEL0:
		return kc_topo_init_regular(t, 1, 1, p);
	case KCOLL_LEVEL1:
		return kc_topo_init_regular(t, 1, p, 1);
	case KCOLL_LEVEL2:
		return kc_topo_init_regular(t, p, 1, 1);
	}
	return -EINVAL;
}

double cc_fit_predict(const struct cc_fit_sample *s, const struct kc_cost_model *m)
{
	struct kc_op_desc d = { .op = s->op, .dtype = KCOLL_FP32, .redop = KCOLL_SUM };
	struct kc_algo_cfg cfg = { .algo = { s->algo, s->algo, s->algo } };
	struct kc_topo t = { 0 };
	u64 fs;

	if (s->p < 2 || flat_topo(&t, s->level, s->p))
		return -1.0;
	d.count = s->bytes / kc_dtype_size(KCOLL_FP32);
	if (cc_per_rank_op(s->op))
		d.count /= s->p;
	fs = kc_cost_op(&t, s->op, kc_cost_bytes(&d, s->p), &cfg, m);
	kc_topo_free(&t);
	return fs == KC_COST_INF ? -1.0 : (double)fs / 1e15;
}

static void set_par(struct kc_cost_model *m, u32 level, const double *x)
{
	m->lv[level].alpha = (u64)llround(x[0]);
	m->lv[level].beta = (u64)llround(x[1]);
	m->lv[level].gamma = (u64)llround(x[2]);
}

/* Relative rms error of the model @x over the samples; < 0 if one cannot run. */
static double rms_rel(const struct cc_fit_sample *s, size_t n, u32 level,
		      const struct kc_cost_model *base, const double *x)
{
	struct kc_cost_model m = *base;
	double sum = 0.0, e;
	size_t i, k = 0;

	set_par(&m, level, x);
	for (i = 0; i < n; i++) {
		if (s[i].level != level)
			continue;
		e = cc_fit_predict(&s[i], &m);
		if (e < 0)
			return -1.0;
		e = (e + x[OVERHEAD] / 1e15 - s[i].seconds) / s[i].seconds;
		sum += e * e;
		k++;
	}
	return k ? sqrt(sum / (double)k) : -1.0;
}

/*
 * Solve the @nf x @nf system @a (row-major, NPAR columns) y = @b by
 * Gaussian elimination with partial pivoting.  -EINVAL when singular.
 */
static int solve(double a[NPAR][NPAR], double *b, int nf)
{
	int i, j, k, piv;
	double f, tmp;

	for (k = 0; k < nf; k++) {
		piv = k;
		for (i = k + 1; i < nf; i++)
			if (fabs(a[i][k]) > fabs(a[piv][k]))
				piv = i;
		if (fabs(a[piv][k]) < 1e-12)
			return -EINVAL;
		for (j = 0; j < nf; j++) {
			tmp = a[k][j];
			a[k][j] = a[piv][j];
			a[piv][j] = tmp;
		}
		tmp = b[k];
		b[k] = b[piv];
		b[piv] = tmp;
		for (i = k + 1; i < nf; i++) {
			f = a[i][k] / a[k][k];
			for (j = k; j < nf; j++)
				a[i][j] -= f * a[k][j];
			b[i] -= f * b[k];
		}
	}
	for (k = nf - 1; k >= 0; k--) {
		for (j = k + 1; j < nf; j++)
			b[k] -= a[k][j] * b[j];
		b[k] /= a[k][k];
	}
	return 0;
}

/*
 * One linearised step: the new estimate of the parameters @free marks,
 * given each sample's coefficients @c and offset @off.  Parameters that
 * leave their range are pinned and the rest solved again.
 */
static int ls_step(const double (*c)[NPAR], const double *off, const double *t, size_t k,
		   bool *fit, double *x)
{
	double a[NPAR][NPAR], b[NPAR], scale[NPAR], r;
	int idx[NPAR], nf, i, j, again;
	size_t s;

	do {
		nf = 0;
		for (j = 0; j < NPAR; j++)
			if (fit[j])
				idx[nf++] = j;
		if (!nf)
			return 0;
		/* columns scaled to 1: alpha's counts and beta's bytes differ by 10^6 */
		for (i = 0; i < nf; i++) {
			scale[i] = 0.0;
			for (s = 0; s < k; s++)
				scale[i] = fmax(scale[i], fabs(c[s][idx[i]]) / t[s]);
			if (scale[i] == 0.0)
				return -EINVAL;
		}
		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		for (s = 0; s < k; s++) {
			/* the pinned parameters move into the target */
			r = t[s] - off[s];
			for (j = 0; j < NPAR; j++)
				if (!fit[j])
					r -= c[s][j] * x[j];
			for (i = 0; i < nf; i++) {
				double ui = c[s][idx[i]] / t[s] / scale[i];

				for (j = 0; j < nf; j++)
					a[i][j] += ui * c[s][idx[j]] / t[s] / scale[j];
				b[i] += ui * r / t[s];
			}
		}
		if (solve(a, b, nf))
			return -EINVAL;
		again = 0;
		for (i = 0; i < nf; i++) {
			double v = b[i] / scale[i];

			j = idx[i];
			if (v < par_min[j] || v > par_max[j]) {
				x[j] = v < par_min[j] ? par_min[j] : par_max[j];
				fit[j] = false;
				again = 1;
			}
		}
		if (!again)
			for (i = 0; i < nf; i++)
				x[idx[i]] = b[i] / scale[i];
	} while (again);
	return 0;
}

/* Mesh's and Ring's summed times at one size of a level; false if either is missing. */
static bool mesh_ring_at(const struct cc_fit_sample *s, size_t n, u32 level, u64 bytes,
			 double *mesh, double *ring)
{
	u32 nm = 0, nr = 0;
	size_t i;

	*mesh = *ring = 0.0;
	for (i = 0; i < n; i++) {
		if (s[i].level != level || s[i].bytes != bytes)
			continue;
		if (s[i].algo == KCOLL_ALGO_MESH) {
			*mesh += s[i].seconds;
			nm++;
		} else if (s[i].algo == KCOLL_ALGO_RING) {
			*ring += s[i].seconds;
			nr++;
		}
	}
	return nm && nm == nr && *ring > 0.0;
}

int cc_fit_mesh(const struct cc_fit_sample *s, size_t n, u32 level, double *worst)
{
	double mesh, ring;
	bool any = false;
	size_t i;

	*worst = 0.0;
	if (level == KCOLL_LEVEL0)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i].level != level || s[i].algo != KCOLL_ALGO_MESH)
			continue;
		/* two ranks: Mesh and Ring are the same exchange */
		if (s[i].p <= 2 || !mesh_ring_at(s, n, level, s[i].bytes, &mesh, &ring))
			return -1;
		*worst = fmax(*worst, mesh / ring);
		any = true;
	}
	return any ? *worst <= 1.0 : -1;
}

int cc_fit_level(const struct cc_fit_sample *s, size_t n, u32 level,
		 const struct kc_cost_model *start, struct cc_fit_result *out,
		 char *err, size_t errlen)
{
	double (*c)[NPAR] = NULL, *off = NULL, *t = NULL, x[NPAR], base, d, moved;
	struct kc_cost_model m = *start;
	bool fit[NPAR] = { true, true, false, true }, two_sizes = false;
	u64 size0 = 0;
	size_t i, k = 0;
	int it, j, bad, ret = -EINVAL;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		if (s[i].level != level)
			continue;
		if (!(s[i].seconds > 0.0) || cc_fit_predict(&s[i], start) < 0) {
			snprintf(err, errlen, "a sample of level %u cannot be fitted (%s of %llu "
				 "bytes on %u ranks, %g s)", level, kc_op_name(s[i].op),
				 (unsigned long long)s[i].bytes, s[i].p, s[i].seconds);
			return -EINVAL;
		}
		if (k && s[i].bytes != size0)
			two_sizes = true;
		size0 = s[i].bytes;
		if (s[i].op == KCOLL_OP_REDUCESCATTER || s[i].op == KCOLL_OP_ALLREDUCE ||
		    s[i].op == KCOLL_OP_REDUCE)
			fit[2] = true;
		k++;
	}
	if (!two_sizes) {
		snprintf(err, errlen, "level %u: the fit needs samples of at least two sizes",
			 level);
		return -EINVAL;
	}
	c = calloc(k, sizeof(*c));
	off = calloc(k, sizeof(*off));
	t = calloc(k, sizeof(*t));
	if (!c || !off || !t) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	x[0] = (double)start->lv[level].alpha;
	x[1] = (double)start->lv[level].beta;
	x[2] = (double)start->lv[level].gamma;
	x[OVERHEAD] = 0.0;
	out->gamma_fitted = fit[2];
	out->rms_rel_start = rms_rel(s, n, level, start, x);
	for (it = 0; it < MAX_ITER; it++) {
		double old[NPAR];
		bool fr[NPAR];

		memcpy(old, x, sizeof(old));
		memcpy(fr, fit, sizeof(fr));
		set_par(&m, level, x);
		for (i = 0, k = 0; i < n; i++) {
			if (s[i].level != level)
				continue;
			t[k] = s[i].seconds;
			base = cc_fit_predict(&s[i], &m);
			off[k] = base;
			/* the overhead adds to every sample as it is */
			c[k][OVERHEAD] = 1e-15;
			for (j = 0; j < OVERHEAD; j++) {
				struct kc_cost_model mj = m;
				double xj[NPAR];

				memcpy(xj, x, sizeof(xj));
				d = fmax(x[j], par_step[j]);
				xj[j] += d;
				set_par(&mj, level, xj);
				c[k][j] = (cc_fit_predict(&s[i], &mj) - base) / d;
				off[k] -= c[k][j] * x[j];
			}
			k++;
		}
		bad = ls_step((const double (*)[NPAR])c, off, t, k, fr, x);
		if (bad && fit[OVERHEAD]) {
			/* two ranks: the overhead is alpha's twin; fit without it */
			fit[OVERHEAD] = false;
			memcpy(x, old, sizeof(old));
			x[OVERHEAD] = 0.0;
			continue;
		}
		if (bad) {
			snprintf(err, errlen, "level %u: the samples do not determine the "
				 "latency and the bandwidth apart (use more distinct sizes)", level);
			goto out;
		}
		moved = 0.0;
		for (j = 0; j < NPAR; j++)
			moved = fmax(moved, fabs(x[j] - old[j]) / fmax(old[j], par_step[j]));
		if (moved < 1e-4)
			break;
	}
	out->link = start->lv[level];
	out->link.alpha = (u64)llround(x[0]);
	out->link.beta = (u64)llround(x[1]);
	out->link.gamma = (u64)llround(x[2]);
	out->overhead_s = x[OVERHEAD] / 1e15;
	out->rms_rel = rms_rel(s, n, level, start, x);
	out->auto_mesh = cc_fit_mesh(s, n, level, &out->mesh_ratio);
	if (out->auto_mesh >= 0)
		out->link.auto_mesh = out->auto_mesh;
	ret = 0;
out:
	free(c);
	free(off);
	free(t);
	return ret;
}
