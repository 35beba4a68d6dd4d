// SPDX-License-Identifier: GPL-2.0
/*
 * collctl calibrate: automatic selection ranks algorithms on a link model
 * per level (sysfs levelN_alpha_ns, levelN_gbps, levelN_reduce_gbps,
 * level{1,2}_auto_mesh).  Its defaults describe a fast fabric; on a slower
 * or emulated one the module weighs latency against bandwidth wrongly and
 * picks losers.  This measures the links the way the module uses them and
 * fits the model to them.  The same times say whether Mesh between servers
 * pays (its messages overlap on the port): then auto_mesh admits it.
 *
 * Every rank of the rank table runs it.  For each level the table has, one
 * flat group of ranks that only uses that level's links (the ranks of one
 * server; one rank per server of one super pod; one rank per super pod)
 * times AllGather and ReduceScatter with Ring (many small steps) and Mesh
 * (one step) forced, at a few sizes: latency, bandwidth and the cost of
 * reducing come apart.  Then every rank joins one communicator, the times
 * are summed over it so that every rank holds the same numbers, and every
 * rank fits the same model from them (collctl_fit.c, deterministic): with
 * --write every node gets the same values, which selection needs to agree.
 *
 * Groups of one level run one after the other; a rank outside a group
 * waits in the next communicator's set-up (hence the long connect timeout).
 * A peer's request for the next communicator that reaches this rank's
 * previous one is refused by the module and retried (kmod/kcoll_connect.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibrate.h"
#include "coll.h"
#include "collctl_explain.h"
#include "collctl_fmt.h"
#include "collctl_fit.h"
#include "collctl_persist.h"
#include "collctl_sysfs.h"
#include "kc_cfg.h"
#include "size.h"

#define NOPS		2
#define NALGOS		2
#define MAX_SIZES	8
#define MAX_ITERS	1000
#define NFIELDS		4

static const u32 cal_ops[NOPS] = { KCOLL_OP_ALLGATHER, KCOLL_OP_REDUCESCATTER };
static const u32 cal_algos[NALGOS] = { KCOLL_ALGO_RING, KCOLL_ALGO_MESH };
static const char *const level_what[KCOLL_LEVEL_COUNT] = {
	"the ranks of one server", "one rank per server of one super pod",
	"one rank per super pod",
};

struct calib {
	const struct cc_calib_env *env;
	const char *table;
	struct coll_ranktable *rt;
	u32 rank;
	u64 sizes[MAX_SIZES];
	size_t nsizes;
	int iters;
	bool write;
	bool persist;			/* --persist: what --write sets, also in modprobe.d */
	bool measure_failed;		/* this rank's groups did not finish */
	u32 timeout_ms;
	u32 *members[KCOLL_LEVEL_COUNT];	/* world ranks of each level's group */
	u32 nmembers[KCOLL_LEVEL_COUNT];	/* 0: the table has no such level */
	struct cc_fit_sample *s;		/* [level][algo][op][size] */
	size_t ns;
	char *sendbuf, *recvbuf;
	struct cc_fit_result fit[KCOLL_LEVEL_COUNT];
};

static size_t sample_index(const struct calib *c, u32 level, size_t a, size_t o, size_t z)
{
	return ((level * NALGOS + a) * NOPS + o) * c->nsizes + z;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------- arguments */

static int parse_sizes(struct calib *c, const char *arg)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	u64 v;
	size_t i;
	bool distinct = false;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	c->nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char err[160];

		if (c->nsizes == MAX_SIZES || cc_parse_bytes(tok, &v, err, sizeof(err)) || !v ||
		    v > (1ull << 30)) {
			ret = -EINVAL;
			break;
		}
		c->sizes[c->nsizes++] = v;
	}
	free(dup);
	for (i = 1; i < c->nsizes; i++)
		distinct |= c->sizes[i] != c->sizes[0];
	if (!ret && !distinct)
		ret = -EINVAL;
	if (ret)
		fprintf(stderr, "%s: calibrate: --sizes '%s': expected 2 to %d sizes of 1 byte "
			"to 1G, not all equal, separated by commas (e.g. 4K,256K,4M)\n",
			c->env->prog, arg, MAX_SIZES);
	return ret;
}

/* the tools' one number parser (size.h), so the words are coll-perf's */
static int parse_uint(const struct calib *c, const char *name, const char *s, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	uint64_t v;
	int ret = cmd_arg_ranged(c->env->prog, "calibrate", name, s, min, max, &v);

	if (!ret)
		*out = (unsigned long)v;
	return ret;
}

static int parse_args(struct calib *c, int argc, char **argv)
{
	/*
	 * -n and -T as coll-perf's iterations and timeout; coll-perf's -R, -t
	 * and -w mean other things and coll-sim's -s is servers per pod, so
	 * those are long only (collctl.8, COMPATIBILITY).
	 */
	enum { O_TABLE = 256, O_RANK, O_SIZES, O_WRITE, O_PERSIST };
	static const struct option lo[] = {
		{ "ranktable", required_argument, NULL, O_TABLE },
		{ "rank", required_argument, NULL, O_RANK },
		{ "sizes", required_argument, NULL, O_SIZES },
		{ "iters", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "write", no_argument, NULL, O_WRITE },
		{ "persist", no_argument, NULL, O_PERSIST },
		{ NULL, 0, NULL, 0 },
	};
	const char *rank = getenv("KCOLL_RANK");
	unsigned long v;
	int opt;

	c->table = getenv("KCOLL_RANKTABLE");
	c->iters = 5;
	c->timeout_ms = 600000;
	if (parse_sizes(c, "4K,256K,4M"))
		return -EINVAL;
	optind = 0;	/* rescan: argv[0] is the command */
	argc++;
	argv--;
	while ((opt = getopt_long(argc, argv, "n:T:", lo, NULL)) != -1) {
		switch (opt) {
		case O_TABLE: c->table = optarg; break;
		case O_RANK: rank = optarg; break;
		case O_SIZES: if (parse_sizes(c, optarg)) return -EINVAL; break;
		case 'n':
			if (parse_uint(c, "iters", optarg, 1, MAX_ITERS, &v))
				return -EINVAL;
			c->iters = (int)v;
			break;
		case 'T':
			if (parse_uint(c, "timeout", optarg, 1, 86400, &v))
				return -EINVAL;
			c->timeout_ms = (u32)v * 1000;
			break;
		case O_WRITE: c->write = true; break;
		case O_PERSIST: c->persist = true; break;
		default:
			fprintf(stderr, "Try '%s calibrate --help'.\n", c->env->prog);
			return -EINVAL;
		}
	}
	if (c->persist && !c->write) {
		fprintf(stderr, "%s: calibrate: --persist records what --write sets: give both\n",
			c->env->prog);
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: calibrate: unexpected '%s'\n", c->env->prog, argv[optind]);
		return -EINVAL;
	}
	if (!c->table || !rank) {
		fprintf(stderr, "%s: calibrate needs the rank table and this process's rank: "
			"--ranktable FILE --rank R, or KCOLL_RANKTABLE and KCOLL_RANK\n",
			c->env->prog);
		return -EINVAL;
	}
	if (parse_uint(c, "rank", rank, 0, UINT32_MAX, &v))
		return -EINVAL;
	c->rank = (u32)v;
	return 0;
}

/* ------------------------------------------------------------- groups */

/*
 * Each level's group: level 0 the first server with two ranks or more,
 * level 1 the first rank of every server of the first super pod with two
 * servers or more, level 2 the first rank of every super pod.
 */
static int find_groups(struct calib *c)
{
	const struct coll_ranktable *rt = c->rt;
	u32 n = rt->nranks, r, l, pick;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		c->members[l] = calloc(n, sizeof(u32));
		if (!c->members[l])
			return -ENOMEM;
	}
	/* level 0: a server is a run of equal server_id */
	for (r = 0; r < n && !c->nmembers[0]; r++) {
		u32 e = r;

		while (e + 1 < n && rt->ranks[e + 1].server_id == rt->ranks[r].server_id)
			e++;
		if (e > r)
			for (; r <= e; r++)
				c->members[0][c->nmembers[0]++] = r;
		r = e;
	}
	/* level 1: the first pod holding two servers */
	for (pick = 0; pick < rt->npods && c->nmembers[1] < 2; pick++) {
		c->nmembers[1] = 0;
		for (r = 0; r < n; r++)
			if (rt->ranks[r].pod_id == pick &&
			    (!r || rt->ranks[r].server_id != rt->ranks[r - 1].server_id))
				c->members[1][c->nmembers[1]++] = r;
	}
	if (c->nmembers[1] < 2)
		c->nmembers[1] = 0;
	/* level 2 */
	for (r = 0; r < n && rt->npods > 1; r++)
		if (!r || rt->ranks[r].pod_id != rt->ranks[r - 1].pod_id)
			c->members[2][c->nmembers[2]++] = r;
	return 0;
}

/* The samples' descriptions, the same on every rank; times come later. */
static int describe_samples(struct calib *c)
{
	size_t a, o, z;
	u32 l, p;

	c->ns = KCOLL_LEVEL_COUNT * NALGOS * NOPS * c->nsizes;
	c->s = calloc(c->ns, sizeof(*c->s));
	if (!c->s)
		return -ENOMEM;
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		for (a = 0; a < NALGOS; a++)
			for (o = 0; o < NOPS; o++)
				for (z = 0; z < c->nsizes; z++) {
					struct cc_fit_sample *s = &c->s[sample_index(c, l, a, o, z)];

					p = c->nmembers[l];
					s->level = l;
					s->p = p;
					s->op = cal_ops[o];
					s->algo = cal_algos[a];
					/* a whole number of float elements per rank */
					s->bytes = p ? (c->sizes[z] + 4 * p - 1) / (4 * p) * 4 * p : 0;
				}
	return 0;
}

/* ---------------------------------------------------------- measuring */

static int run_op(coll_comm_t *comm, const struct cc_fit_sample *s, const struct calib *c)
{
	size_t count = s->bytes / 4 / s->p;

	if (s->op == KCOLL_OP_ALLGATHER)
		return coll_allgather_sync(comm, c->sendbuf, c->recvbuf, count, COLL_FLOAT);
	return coll_reducescatter_sync(comm, c->sendbuf, c->recvbuf, count, COLL_FLOAT, COLL_SUM);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Time one sample on @comm: each rank times every operation and keeps the
 * median (one slow operation, a VM descheduled under emulation, does not
 * move it), and the group averages the ranks' medians.
 */
static int time_sample(coll_comm_t *comm, struct cc_fit_sample *s, const struct calib *c,
		       bool leader)
{
	double t[MAX_ITERS], t0, mine, sum;
	int i, ret;

	ret = run_op(comm, s, c);	/* warm-up: first touch, registration */
	if (!ret)
		ret = coll_barrier_sync(comm);
	for (i = 0; !ret && i < c->iters; i++) {
		t0 = now_s();
		ret = run_op(comm, s, c);
		t[i] = now_s() - t0;
	}
	if (ret)
		return ret;
	qsort(t, (size_t)c->iters, sizeof(t[0]), cmp_double);
	mine = c->iters % 2 ? t[c->iters / 2] : (t[c->iters / 2 - 1] + t[c->iters / 2]) / 2;
	ret = coll_allreduce_sync(comm, &mine, &sum, 1, COLL_DOUBLE, COLL_SUM);
	if (ret)
		return ret;
	/* only the group's first rank contributes to the sum over the world */
	s->seconds = leader ? sum / s->p : 0.0;
	if (leader && !c->env->json)
		fprintf(stderr, "%s: calibrate: level%u, %u ranks, %s %-13s %10" PRIu64
			" bytes: %12.1f us\n", c->env->prog, s->level, s->p,
			kc_cfg_algo_token(s->algo), kc_op_name(s->op), s->bytes,
			sum / s->p * 1e6);
	return 0;
}

static int measure_level(struct calib *c, u32 level)
{
	struct coll_comm_opts opts = { .size = sizeof(opts), .connect_timeout_ms = c->timeout_ms,
				       .device = c->env->device };
	struct coll_rank_desc *descs;
	coll_comm_t *comm;
	u32 p = c->nmembers[level], idx, i;
	char algo[96];
	size_t a, o, z;
	int ret = 0;

	for (idx = 0; idx < p && c->members[level][idx] != c->rank; idx++)
		;
	if (idx == p)
		return 0;	/* not in this level's group */
	descs = calloc(p, sizeof(*descs));
	if (!descs)
		return -ENOMEM;
	for (i = 0; i < p; i++)
		descs[i] = c->rt->ranks[c->members[level][i]];
	for (a = 0; !ret && a < NALGOS; a++) {
		const char *tok = kc_cfg_algo_token(cal_algos[a]);

		snprintf(algo, sizeof(algo), "level0:%s;level1:%s;level2:%s", tok, tok, tok);
		opts.algo = algo;
		ret = coll_comm_init_ranks(descs, p, idx, &opts, &comm);
		if (ret) {
			fprintf(stderr, "%s: calibrate: rank %u: level%u group of %u ranks (%s): "
				"%s\n", c->env->prog, c->rank, level, p, tok, coll_last_error());
			break;
		}
		for (o = 0; !ret && o < NOPS; o++)
			for (z = 0; !ret && z < c->nsizes; z++)
				ret = time_sample(comm, &c->s[sample_index(c, level, a, o, z)], c,
						  idx == 0);
		if (ret)
			fprintf(stderr, "%s: calibrate: rank %u: level%u, %s: %s\n", c->env->prog,
				c->rank, level, tok, coll_last_error());
		coll_comm_destroy(comm);
	}
	free(descs);
	return ret;
}

/* ------------------------------------------------------------ output */

/* The sysfs values of a fitted link: alpha_ns, Gbit/s with three decimals, 0/1. */
static void link_values(const struct kc_cost_link *l, char v[NFIELDS][32])
{
	double mbps[2] = { 8e9 / (double)l->beta, 8e9 / (double)l->gamma };
	int i;

	snprintf(v[0], 32, "%lld", llround(fmin((double)l->alpha / 1e6, 10000000.0)));
	for (i = 0; i < 2; i++) {
		long long m = llround(fmax(1.0, fmin(mbps[i], 1e9)));

		snprintf(v[i + 1], 32, "%lld.%03lld", m / 1000, m % 1000);
	}
	snprintf(v[3], 32, "%d", l->auto_mesh);
}

static const char *const field_names[NFIELDS] = {
	"alpha_ns", "gbps", "reduce_gbps", "auto_mesh"
};

/* A value the measurement did not decide, which the node keeps. */
static bool field_kept(const struct calib *c, u32 l, int i)
{
	return (i == 2 && !c->fit[l].gamma_fitted) || (i == 3 && c->fit[l].auto_mesh < 0);
}

/*
 * Write every fitted value to this node's sysfs; on a failure put back
 * what was written so far, so the node keeps a model it had.  With
 * --persist, once all are written, record them in modprobe.d too.
 */
static int write_model(const struct calib *c)
{
	char old[KCOLL_LEVEL_COUNT][NFIELDS][32], val[NFIELDS][32], name[64];
	char set[KCOLL_LEVEL_COUNT * NFIELDS][2][64];	/* name, value written */
	int done = 0, nset = 0, ret = 0, i, k;
	u32 l;

	for (l = 0; l < KCOLL_LEVEL_COUNT && !ret; l++) {
		if (!c->nmembers[l])
			continue;
		link_values(&c->fit[l].link, val);
		for (i = 0; i < NFIELDS && !ret; i++) {
			if (field_kept(c, l, i))
				continue;
			snprintf(name, sizeof(name), "level%u_%s", l, field_names[i]);
			ret = cc_sysfs_read(c->env->sysfs, name, old[l][i], sizeof(old[l][i]));
			if (!ret)
				ret = cc_sysfs_write(c->env->sysfs, name, val[i]);
			if (ret)
				fprintf(stderr, "%s: calibrate: rank %u: cannot write %s/%s = %s: %s%s\n",
					c->env->prog, c->rank, c->env->sysfs, name, val[i],
					strerror(-ret), ret == -EACCES ? " (run as root)" : "");
			else {
				done = (int)(l * NFIELDS) + i + 1;
				snprintf(set[nset][0], sizeof(set[nset][0]), "%s", name);
				snprintf(set[nset][1], sizeof(set[nset][1]), "%s", val[i]);
				nset++;
			}
		}
	}
	if (!ret) {
		/* Written stays written if the file cannot be: its message says so. */
		for (k = 0; c->persist && !ret && k < nset; k++)
			ret = cc_persist_put(c->env->prog, set[k][0], set[k][1]);
		return ret;
	}
	for (k = 0; k < done; k++) {
		l = (u32)k / NFIELDS;
		i = k % NFIELDS;
		if (!c->nmembers[l] || field_kept(c, l, i))
			continue;
		snprintf(name, sizeof(name), "level%u_%s", l, field_names[i]);
		cc_sysfs_write(c->env->sysfs, name, old[l][i]);
	}
	return ret;
}

static double us(double s)
{
	return s * 1e6;
}

static void print_text(const struct calib *c, bool written)
{
	struct kc_cost_model fitted = c->env->start;
	char v[NFIELDS][32];
	size_t i;
	u32 l;

	printf("calibrated on %u ranks (%s), %d timed operations per point\n", c->rt->nranks,
	       c->table, c->iters);
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (!c->nmembers[l])
			continue;
		fitted.lv[l] = c->fit[l].link;
		link_values(&c->fit[l].link, v);
		printf("level%u (%u ranks: %s): alpha_ns %s, gbps %s, reduce_gbps %s; "
		       "error %.1f%% rms (the module's model now: %.1f%%); %.1f us per "
		       "operation whatever the algorithm (not part of the model)\n", l,
		       c->nmembers[l], level_what[l], v[0], v[1],
		       c->fit[l].gamma_fitted ? v[2] : "(kept)", 100 * c->fit[l].rms_rel,
		       100 * c->fit[l].rms_rel_start, us(c->fit[l].overhead_s));
		if (!field_kept(c, l, 3))
			printf("level%u auto_mesh %s: Mesh took %.2f of Ring's time at its "
			       "worst size%s\n", l, v[3], c->fit[l].mesh_ratio,
			       c->fit[l].auto_mesh ? "; automatic selection may run it" :
			       "; automatic selection leaves it out");
	}
	printf("\n%-6s %5s %-13s %-5s %10s %14s %14s %14s\n", "level", "ranks", "operation",
	       "algo", "bytes", "measured us", "model now us", "fitted us");
	for (i = 0; i < c->ns; i++) {
		const struct cc_fit_sample *s = &c->s[i];

		if (!c->nmembers[s->level])
			continue;
		printf("level%u %5u %-13s %-5s %10" PRIu64 " %14.1f %14.1f %14.1f\n", s->level,
		       s->p, kc_op_name(s->op), kc_cfg_algo_token(s->algo), s->bytes,
		       us(s->seconds), us(cc_fit_predict(s, &c->env->start)),
		       us(cc_fit_predict(s, &fitted) + c->fit[s->level].overhead_s));
	}
	if (written) {
		printf("\nwritten to %s on every node; communicators created from now on "
		       "use it\n", c->env->sysfs);
		return;
	}
	printf("\nnot written (--write does it on every node); to set it by hand, on every "
	       "node:\n");
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (!c->nmembers[l])
			continue;
		link_values(&c->fit[l].link, v);
		printf("  collctl config level%u_alpha_ns %s; collctl config level%u_gbps %s\n",
		       l, v[0], l, v[1]);
		if (c->fit[l].gamma_fitted)
			printf("  collctl config level%u_reduce_gbps %s\n", l, v[2]);
		if (!field_kept(c, l, 3))
			printf("  collctl config level%u_auto_mesh %s\n", l, v[3]);
	}
}

static void print_json(const struct calib *c, bool written)
{
	struct kc_cost_model fitted = c->env->start;
	json_object *o = json_object_new_object(), *lv = json_object_new_array();
	json_object *sa = json_object_new_array(), *e;
	char v[NFIELDS][32];
	size_t i;
	u32 l;

	json_object_object_add(o, "ranks", json_object_new_int64(c->rt->nranks));
	json_object_object_add(o, "iters", json_object_new_int(c->iters));
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (!c->nmembers[l])
			continue;
		fitted.lv[l] = c->fit[l].link;
		link_values(&c->fit[l].link, v);
		e = json_object_new_object();
		json_object_object_add(e, "level", json_object_new_int((int)l));
		json_object_object_add(e, "ranks", json_object_new_int64(c->nmembers[l]));
		json_object_object_add(e, "alpha_ns", json_object_new_string(v[0]));
		json_object_object_add(e, "gbps", json_object_new_string(v[1]));
		json_object_object_add(e, "reduce_gbps", c->fit[l].gamma_fitted ?
				       json_object_new_string(v[2]) : NULL);
		json_object_object_add(e, "auto_mesh", field_kept(c, l, 3) ? NULL :
				       json_object_new_int(c->fit[l].auto_mesh));
		json_object_object_add(e, "mesh_ring_worst", field_kept(c, l, 3) ? NULL :
				       json_object_new_double(c->fit[l].mesh_ratio));
		json_object_object_add(e, "overhead_us",
				       json_object_new_double(us(c->fit[l].overhead_s)));
		json_object_object_add(e, "rms_rel", json_object_new_double(c->fit[l].rms_rel));
		json_object_object_add(e, "rms_rel_start",
				       json_object_new_double(c->fit[l].rms_rel_start));
		json_object_array_add(lv, e);
	}
	for (i = 0; i < c->ns; i++) {
		const struct cc_fit_sample *s = &c->s[i];

		if (!c->nmembers[s->level])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "level", json_object_new_int((int)s->level));
		json_object_object_add(e, "ranks", json_object_new_int64(s->p));
		json_object_object_add(e, "op", json_object_new_string(kc_op_name(s->op)));
		json_object_object_add(e, "algo",
				       json_object_new_string(kc_cfg_algo_token(s->algo)));
		json_object_object_add(e, "bytes", json_object_new_int64((int64_t)s->bytes));
		json_object_object_add(e, "measured_us", json_object_new_double(us(s->seconds)));
		json_object_object_add(e, "start_us", json_object_new_double(
			us(cc_fit_predict(s, &c->env->start))));
		json_object_object_add(e, "fitted_us", json_object_new_double(
			us(cc_fit_predict(s, &fitted) + c->fit[s->level].overhead_s)));
		json_object_array_add(sa, e);
	}
	json_object_object_add(o, "levels", lv);
	json_object_object_add(o, "samples", sa);
	json_object_object_add(o, "written", json_object_new_boolean(written));
	printf("%s\n", json_object_to_json_string_ext(o, cc_json_flags));
	json_object_put(o);
}

/* ------------------------------------------------------------- driver */

/* Every rank gets every leader's times, fits, and (--write) sets sysfs. */
static int exchange_fit_write(struct calib *c)
{
	struct coll_comm_opts opts = { .size = sizeof(opts), .connect_timeout_ms = c->timeout_ms,
				       .device = c->env->device };
	/* the times, then the number of ranks whose measurement failed */
	double *t = calloc(c->ns + 1, sizeof(*t));
	int32_t failed = 0, failed_sum = 0;
	coll_comm_t *world = NULL;
	char err[256];
	size_t i;
	int ret;
	u32 l;

	if (!t)
		return 1;
	for (i = 0; i < c->ns; i++)
		t[i] = c->s[i].seconds;
	t[c->ns] = c->measure_failed;
	ret = coll_comm_init_ranks(c->rt->ranks, c->rt->nranks, c->rank, &opts, &world);
	if (!ret)
		ret = coll_allreduce_sync(world, t, t, c->ns + 1, COLL_DOUBLE, COLL_SUM);
	if (ret) {
		fprintf(stderr, "%s: calibrate: rank %u: exchanging the times: %s\n",
			c->env->prog, c->rank, coll_last_error());
		goto out;
	}
	if (t[c->ns] > 0) {
		if (c->rank == 0)
			fprintf(stderr, "%s: calibrate: the measurement failed on %.0f rank(s) "
				"(their messages say why); nothing was fitted or written\n",
				c->env->prog, t[c->ns]);
		ret = -EIO;
		goto out;
	}
	for (i = 0; i < c->ns; i++)
		c->s[i].seconds = t[i];
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (!c->nmembers[l])
			continue;
		if (cc_fit_level(c->s, c->ns, l, &c->env->start, &c->fit[l], err, sizeof(err))) {
			fprintf(stderr, "%s: calibrate: %s\n", c->env->prog, err);
			failed = 1;
		}
	}
	if (!failed && c->write && write_model(c))
		failed = 1;
	/* every node reports whether it wrote, so rank 0 can say "every node" */
	ret = coll_allreduce_sync(world, &failed, &failed_sum, 1, COLL_INT32, COLL_SUM);
	if (ret) {
		fprintf(stderr, "%s: calibrate: rank %u: %s\n", c->env->prog, c->rank,
			coll_last_error());
		goto out;
	}
	if (failed_sum) {
		if (c->rank == 0)
			fprintf(stderr, "%s: calibrate: %d rank(s) failed to fit or write the "
				"model (their messages say why)%s\n", c->env->prog, failed_sum,
				c->write ? "; nodes that failed kept their model" : "");
		ret = -EIO;
		goto out;
	}
	if (c->rank == 0) {
		if (c->env->json)
			print_json(c, c->write);
		else
			print_text(c, c->write);
	}
out:
	if (world)
		coll_comm_destroy(world);
	free(t);
	return ret ? 1 : 0;
}

int cc_calibrate(const struct cc_calib_env *env, int argc, char **argv)
{
	struct calib c = { .env = env };
	u64 maxb = 0;
	size_t z;
	int ret = 1;
	u32 l;

	if (parse_args(&c, argc, argv))
		return 2;
	if (coll_ranktable_load(c.table, &c.rt)) {
		fprintf(stderr, "%s: calibrate: %s\n", env->prog, coll_last_error());
		return 1;
	}
	if (c.rank >= c.rt->nranks) {
		fprintf(stderr, "%s: calibrate: rank %u, but %s has %u ranks\n", env->prog, c.rank,
			c.table, c.rt->nranks);
		goto out;
	}
	if (find_groups(&c) || describe_samples(&c))
		goto nomem;
	if (!c.nmembers[0] && !c.nmembers[1] && !c.nmembers[2]) {
		fprintf(stderr, "%s: calibrate: %s has one rank: there is no link to measure\n",
			env->prog, c.table);
		goto out;
	}
	for (z = 0; z < c.nsizes; z++)
		maxb = c.sizes[z] > maxb ? c.sizes[z] : maxb;
	/* rounding up to whole elements per rank adds less than 4 bytes a rank */
	maxb += 4ull * c.rt->nranks;
	c.sendbuf = calloc(1, maxb);
	c.recvbuf = calloc(1, maxb);
	if (!c.sendbuf || !c.recvbuf)
		goto nomem;
	/* a failure is reported to every rank through the exchange, not by leaving */
	for (l = 0; l < KCOLL_LEVEL_COUNT && !c.measure_failed; l++)
		if (c.nmembers[l] && measure_level(&c, l))
			c.measure_failed = true;
	ret = exchange_fit_write(&c);
	goto out;
nomem:
	fprintf(stderr, "%s: calibrate: out of memory\n", env->prog);
out:
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		free(c.members[l]);
	free(c.s);
	free(c.sendbuf);
	free(c.recvbuf);
	coll_ranktable_free(c.rt);
	return ret;
}
