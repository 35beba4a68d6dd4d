// SPDX-License-Identifier: GPL-2.0
/*
 * coll-sim: plans and predicted times of kcoll's collectives on a
 * modelled cluster (see --help).  The plans are the ones the kernel would
 * run; the times come from the discrete-event link model in tools/sim/.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <json-c/json.h>
#include "sim.h"
#include "coll.h"
#include "kc_cfg.h"
#include "kc_cost.h"
#include "kc_reduce.h"
#include "scaling.h"
#include "size.h"
#include "version.h"

static void usage(FILE *f)
{
	fputs(
"NAME\n"
"    coll-sim - predict kcoll collective times on a modelled cluster\n"
"\n"
"SYNOPSIS\n"
"    coll-sim [TOPOLOGY] [LINKS] --op NAME [--algo HCCL_ALGO] --bytes N [OUTPUT]\n"
"    coll-sim [TOPOLOGY] [LINKS] --op NAME -b MIN -e MAX -f FACTOR [OUTPUT]\n"
"    coll-sim -V | --version | -h | --help\n"
"\n"
"DESCRIPTION\n"
"    Builds every rank's plan exactly as the kcoll module would and runs the\n"
"    plans through the shared executor on a discrete-event model of the\n"
"    links: latency alpha, time per byte beta and reduce time per byte\n"
"    gamma per level (level0 inside a server, level1 between servers,\n"
"    level2 between super-nodes).  Level0 is a full mesh (a link per pair\n"
"    of ranks); at levels 1 and 2 each rank has one full-duplex port whose\n"
"    bandwidth its concurrent transfers share; level2 bandwidth is divided\n"
"    by the convergence ratio C.  No data moves; only time is modelled.\n"
"\n"
"TOPOLOGY\n"
"    -P, --ranks P            P ranks, 1..1048576 (default 8, or what the other\n"
"                             flags imply)\n"
"    -k, --per-server K       K ranks per server (default 1)\n"
"    -s, --servers-per-pod A,B,...\n"
"                             super-nodes with A, B, ... servers (may differ)\n"
"        --rank-table FILE    HCCL rank table JSON, v1.0 or v1.2 (super_pod_list)\n"
"\n"
"LINKS\n"
"        --alpha SEC          latency of every level (default 5e-6)\n"
"        --beta SEC_PER_BYTE  transfer time per byte of every level (default 4e-11)\n"
"        --gamma SEC_PER_BYTE reduce time per byte of every level (default 1e-10)\n"
"        --level0 SPEC, --level1 SPEC, --level2 SPEC\n"
"                             one level, SPEC = alpha=X,beta=Y,gamma=Z (any subset)\n"
"        --conv C             convergence ratio of level2 (default 1)\n"
"                             Options apply in order: --alpha, --beta and --gamma set\n"
"                             every level, so give them before --levelN.\n"
"\n"
"OPERATION\n"
"    -t, --op NAME            allreduce, reducescatter, allgather, broadcast, reduce,\n"
"                             scatter, gather, alltoall, barrier (default allreduce)\n"
"    -A, --algo STRING        HCCL_ALGO string, e.g. 'level0:NA;level1:H-D_R' or\n"
"                             'allreduce=level1:AHC/others=level1:NHR' (default auto)\n"
"    -d, --dtype, --datatype NAME\n"
"                             element type, coll-perf's names: float (fp32, the\n"
"                             default), double (fp64), half (fp16), bfloat16\n"
"                             (bf16), int8, uint8, int16, uint16, int32, uint32,\n"
"                             int64, uint64\n"
"    -r, --root R             root of rooted operations, 0..P-1 (default 0)\n"
"        --bytes N            one size in bytes, 0..1T: 4096, 64K, 1.5M, 2GiB\n"
"                             (K M G T are powers of 1024; a fraction must give\n"
"                             whole bytes)\n"
"    -b, --minbytes N  -e, --maxbytes N  -f, --stepfactor F\n"
"                             a sweep of sizes (default 8 .. 64M, factor 4; F in\n"
"                             2..1024)\n"
"        --conformance        one message per plan step, no chunk pipelining, and a\n"
"                             message moves only once its receiver is in the round\n"
"                             that consumes it (steps never overlap, as in the\n"
"                             formulas; what the conformance tests use)\n"
"        --chunk BYTES        message size of the executor otherwise, 8..1G\n"
"                             (default 1M)\n"
"        --window N           messages in flight per peer, 1..65536 (default 8)\n"
"        --no-symmetry        simulate every rank; by default a topology of equal\n"
"                             servers (or pods) whose plans repeat server by server\n"
"                             (checked on every plan) runs one server (pod): the\n"
"                             same result, hundreds of times faster at 4096 ranks\n"
"\n"
"OUTPUT\n"
"    A table per size: the algorithm chosen at each level, predicted time,\n"
"    algbw and busbw (nccl-tests definitions), communication steps, and the\n"
"    most bytes any rank sent and received.\n"
"    -j, --json               the same as JSON: an array of one object per size (one\n"
"                             for --bytes) with op, bytes,\n"
"                             algo, time_s, steps, max_send_bytes, max_recv_bytes,\n"
"                             algbw_gbs, busbw_gbs\n"
"        --all-algos          every applicable algorithm side by side (time in us),\n"
"                             the automatic choice marked with '*'; on a terminal,\n"
"                             the progress of each size on stderr\n"
"    -x, --explain            the plan of one rank (--rank), level by level, and why\n"
"                             each level's algorithm was chosen\n"
"        --rank R             the rank --explain shows, 0..P-1 (default 0)\n"
"        --plot FILE          busbw against size per algorithm, FILE.png or\n"
"                             FILE.svg (gnuplot, which must be installed; implies\n"
"                             --all-algos; the data goes to FILE.dat)\n"
"        --scaling            for 4, 16, 64 ... up to --ranks (default 65536) ranks\n"
"                             and every applicable algorithm (the rest auto): the\n"
"                             peers each rank's plan of --op talks to (min, mean,\n"
"                             max), the QPs and receive memory a rank holds, and the\n"
"                             handshakes of the job, now (every pair connected at\n"
"                             creation) and with connect-on-need (only the pairs a\n"
"                             plan names); receive memory at the module's defaults.\n"
"                             Every rank's plan up to 1024 ranks, an even sample of\n"
"                             1024 beyond (handshakes then estimated, marked ~);\n"
"                             on a terminal, the progress on stderr\n"
"    -V, --version            versions of coll-sim, libcoll and the loaded module\n"
"    -h, --help               this text\n"
"\n"
"EXAMPLES\n"
"    coll-sim --op allreduce --ranks 5 --algo 'level0:NA;level1:H-D_R' --bytes 1M \\\n"
"             --alpha 1e-6 --beta 1e-9 --gamma 1e-10 --conformance --json\n"
"    coll-sim --servers-per-pod 8,16 --per-server 8 --conv 4 --op allreduce \\\n"
"             -b 1K -e 1G -f 4 --plot f.svg\n"
"    coll-sim --scaling --per-server 8 --op allreduce --bytes 64M\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 on a simulation or plan error (or --plot without\n"
"    gnuplot), 2 on bad usage.\n"
"\n"
"COMPATIBILITY\n"
"    A short option that coll-perf (nccl-tests) has means the same here or\n"
"    does not exist: -r is now --root (it was --ranks: use -P), -A is --algo\n"
"    (it was --all-algos), -t is --op (it was --rank-table); -o, -a, -n and\n"
"    -p are gone (--op, --algo, --bytes, --plot).  Long options are as before.\n", f);
}

struct opts {
	u32 ranks, per_server, root, rank;
	u32 pods[1024];
	u32 npods;
	const char *table;
	struct sim_model m;
	u32 op, dtype;
	const char *algo;
	u64 minb, maxb, factor;
	bool json, all, explain, conformance, nosym, scaling;
	const char *plot;
	u32 chunk, window;
};

/*
 * The most ranks coll-sim models: a million, beyond any job kcoll aims
 * at, and small enough that a topology of that size fits in memory (a
 * typo such as -P 4294967295 is refused, not tried until out of memory).
 */
#define COLL_SIM_MAX_RANKS	(1u << 20)
/* The largest size: 1T, where the modelled times are still exact in ns. */
#define COLL_SIM_MAX_BYTES	(1ull << 40)

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "coll-sim: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

static int parse_double(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end == s || *end || !(*v >= 0) || isinf(*v) ? -EINVAL : 0;
}

/* alpha=X,beta=Y,gamma=Z */
static int parse_level(const char *s, struct sim_level *l)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		double *dst;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (!strcmp(tok, "alpha"))
			dst = &l->alpha;
		else if (!strcmp(tok, "beta"))
			dst = &l->beta;
		else if (!strcmp(tok, "gamma"))
			dst = &l->gamma;
		else
			return -EINVAL;
		if (parse_double(eq + 1, dst))
			return -EINVAL;
	}
	return 0;
}

static int parse_op(const char *s)
{
	u32 op;

	for (op = 0; op < KCOLL_OP_COUNT; op++)
		if (!strcasecmp(s, kc_op_name(op)))
			return (int)op;
	return -1;
}

enum { O_ALPHA = 256, O_BETA, O_GAMMA, O_L0, O_L1, O_L2, O_CONV, O_CONF, O_NOSYM, O_CHUNK,
       O_WINDOW, O_RANK, O_SCALING, O_TABLE, O_BYTES, O_ALL, O_PLOT };

/*
 * Short options: one that coll-perf (nccl-tests) has means the same here
 * or does not exist here (-r root, -A algo, -t op, -d datatype, -b -e -f
 * sizes); long options are unchanged.  The man page's COMPATIBILITY lists
 * what moved.
 */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ranks", required_argument, NULL, 'P' },
		{ "per-server", required_argument, NULL, 'k' },
		{ "servers-per-pod", required_argument, NULL, 's' },
		{ "rank-table", required_argument, NULL, O_TABLE },
		{ "alpha", required_argument, NULL, O_ALPHA },
		{ "beta", required_argument, NULL, O_BETA },
		{ "gamma", required_argument, NULL, O_GAMMA },
		{ "level0", required_argument, NULL, O_L0 },
		{ "level1", required_argument, NULL, O_L1 },
		{ "level2", required_argument, NULL, O_L2 },
		{ "conv", required_argument, NULL, O_CONV },
		{ "op", required_argument, NULL, 't' },
		{ "algo", required_argument, NULL, 'A' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "datatype", required_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "bytes", required_argument, NULL, O_BYTES },
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "conformance", no_argument, NULL, O_CONF },
		{ "no-symmetry", no_argument, NULL, O_NOSYM },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "json", no_argument, NULL, 'j' },
		{ "all-algos", no_argument, NULL, O_ALL },
		{ "explain", no_argument, NULL, 'x' },
		{ "rank", required_argument, NULL, O_RANK },
		{ "scaling", no_argument, NULL, O_SCALING },
		{ "plot", required_argument, NULL, O_PLOT },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	coll_dtype_t dt;
	u32 l;
	int c;
	u64 v;
	double d;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		o->m.lv[l] = (struct sim_level){ 5e-6, 4e-11, 1e-10 };
	o->m.conv = 1;
	o->op = KCOLL_OP_ALLREDUCE;
	o->dtype = KCOLL_FP32;
	o->minb = 8;
	o->maxb = 64ull << 20;
	o->factor = 4;
	o->chunk = 1u << 20;
	o->window = 8;
	while ((c = getopt_long(argc, argv, "P:k:s:t:A:d:r:b:e:f:jxVh", lo, NULL)) != -1) {
		switch (c) {
		case 'P':
			if (arg_ranged("coll-sim", "ranks", optarg, 1, COLL_SIM_MAX_RANKS, &v))
				return 2;
			o->ranks = (u32)v;
			break;
		case 'k':
			if (arg_ranged("coll-sim", "per-server", optarg, 1, COLL_SIM_MAX_RANKS, &v))
				return 2;
			o->per_server = (u32)v;
			break;
		case 'r':
		case O_RANK:
			/* the upper bound is the topology's: checked in make_topo() */
			if (arg_ranged("coll-sim", c == 'r' ? "root" : "rank", optarg, 0,
				       COLL_SIM_MAX_RANKS - 1, &v))
				return 2;
			if (c == 'r')
				o->root = (u32)v;
			else
				o->rank = (u32)v;
			break;
		case O_CHUNK:
			if (arg_size("coll-sim", "chunk", optarg, 0, COLL_SIM_MAX_BYTES, &v))
				return 2;
			if (v < 8 || v > (1u << 30))
				return bad("--chunk %s out of range 8..1G", optarg);
			o->chunk = (u32)v;
			break;
		case O_WINDOW:
			if (arg_ranged("coll-sim", "window", optarg, 1, 65536, &v))
				return 2;
			o->window = (u32)v;
			break;
		case 's': {
			char *s = optarg, *end;
			u64 total = 0;

			for (o->npods = 0; *s; s = *end ? end + 1 : end) {
				unsigned long x = strtoul(s, &end, 10);

				if (end == s || !x || *s == '-' || (*end && *end != ',') ||
				    o->npods == ARRAY_SIZE(o->pods))
					return bad("bad --servers-per-pod '%s' (expected A,B,... >= 1, "
						   "at most 1024 super-nodes)", optarg);
				total += x;
				if (total > COLL_SIM_MAX_RANKS)
					return bad("--servers-per-pod %s: more than 1048576 servers",
						   optarg);
				o->pods[o->npods++] = (u32)x;
			}
			if (!o->npods)
				return bad("bad --servers-per-pod '%s' (expected A,B,... >= 1)",
					   optarg);
			break;
		}
		case O_TABLE:
			o->table = optarg;
			break;
		case O_ALPHA:
		case O_BETA:
		case O_GAMMA:
			if (parse_double(optarg, &d))
				return bad("bad time '%s' (expected seconds >= 0, e.g. 5e-6)", optarg);
			for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
				if (c == O_ALPHA)
					o->m.lv[l].alpha = d;
				else if (c == O_BETA)
					o->m.lv[l].beta = d;
				else
					o->m.lv[l].gamma = d;
			}
			break;
		case O_L0:
		case O_L1:
		case O_L2:
			if (parse_level(optarg, &o->m.lv[c - O_L0]))
				return bad("bad level spec '%s' (expected alpha=X,beta=Y,gamma=Z)",
					   optarg);
			break;
		case O_CONV:
			if (parse_double(optarg, &o->m.conv) || o->m.conv < 1)
				return bad("bad --conv '%s' (expected a ratio >= 1)", optarg);
			break;
		case 't':
			if (parse_op(optarg) < 0)
				return bad("unknown operation '%s' (allreduce, reducescatter, allgather, "
					   "broadcast, reduce, scatter, gather, alltoall, barrier)",
					   optarg);
			o->op = (u32)parse_op(optarg);
			break;
		case 'A':
			o->algo = optarg;
			break;
		case 'd':
			/* libcoll's names, as coll-perf -d: one table for every tool */
			if (coll_dtype_parse(optarg, &dt)) {
				fprintf(stderr, "coll-sim: --dtype: %s\n", coll_last_error());
				return 2;
			}
			o->dtype = (u32)dt;
			break;
		case O_BYTES:
		case 'b':
		case 'e':
			if (arg_size("coll-sim", c == O_BYTES ? "bytes" : c == 'b' ? "minbytes" : "maxbytes",
				     optarg, 0, COLL_SIM_MAX_BYTES, &v))
				return 2;
			if (c == O_BYTES)
				o->minb = o->maxb = v;
			else if (c == 'b')
				o->minb = v;
			else
				o->maxb = v;
			break;
		case 'f':
			if (arg_ranged("coll-sim", "stepfactor", optarg, 2, 1024, &v))
				return 2;
			o->factor = v;
			break;
		case O_CONF:
			o->conformance = true;
			break;
		case O_NOSYM:
			o->nosym = true;
			break;
		case 'j':
			o->json = true;
			break;
		case O_ALL:
			o->all = true;
			break;
		case 'x':
			o->explain = true;
			break;
		case O_SCALING:
			o->scaling = true;
			break;
		case O_PLOT:
			o->plot = optarg;
			o->all = true;
			break;
		case 'V':
			tool_print_version(stdout, "coll-sim", NULL);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'coll-sim --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind]);
	if (o->minb > o->maxb)
		return bad("%s", "--minbytes is larger than --maxbytes");
	return 0;
}

/*
 * Topology from a rank table, read by libcoll's parser (the one
 * communicators use, so both accept and reject the same files): which
 * server and which super-node each rank is on.
 */
static int topo_from_table(const char *path, struct kc_topo *t, char *err, u32 errlen)
{
	struct coll_ranktable *rt;
	u32 *srv = NULL, *pod = NULL, r;
	int ret = coll_ranktable_load(path, &rt);

	if (ret) {
		snprintf(err, errlen, "%s", coll_last_error());
		return ret;
	}
	srv = calloc(rt->nranks, sizeof(*srv));
	pod = calloc(rt->nranks, sizeof(*pod));
	if (!srv || !pod) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -ENOMEM;
	} else {
		for (r = 0; r < rt->nranks; r++) {
			srv[r] = rt->ranks[r].server_id;
			pod[r] = rt->ranks[r].pod_id;
		}
		ret = kc_topo_init(t, rt->nranks, srv, pod, err, errlen);
	}
	free(srv);
	free(pod);
	coll_ranktable_free(rt);
	return ret;
}

static int make_topo(struct opts *o, struct kc_topo *t)
{
	char err[256] = "";
	u32 k = o->per_server ? o->per_server : 1, i;
	u64 sum = 0;
	int ret;

	if (o->table) {
		ret = topo_from_table(o->table, t, err, sizeof(err));
	} else if (o->npods) {
		for (i = 0; i < o->npods; i++)
			sum += (u64)o->pods[i] * k;
		if (sum > COLL_SIM_MAX_RANKS) {
			fprintf(stderr, "coll-sim: the pods hold %llu ranks, out of range 1..%u\n",
				(unsigned long long)sum, COLL_SIM_MAX_RANKS);
			return 2;
		}
		if (o->ranks && o->ranks != sum) {
			fprintf(stderr, "coll-sim: --ranks %u, but the pods hold %llu ranks\n",
				o->ranks, (unsigned long long)sum);
			return 2;
		}
		ret = kc_topo_init_pods(t, o->npods, o->pods, k);
	} else {
		u32 p = o->ranks ? o->ranks : 8;

		if (p % k) {
			fprintf(stderr, "coll-sim: %u ranks do not fill servers of %u\n", p, k);
			return 2;
		}
		ret = kc_topo_init_regular(t, 1, p / k, k);
	}
	if (ret) {
		fprintf(stderr, "coll-sim: topology: %s (%s)\n", err[0] ? err : "invalid",
			strerror(-ret));
		return 2;
	}
	if (o->root >= t->nranks || o->rank >= t->nranks) {
		fprintf(stderr, "coll-sim: --%s %u out of range 0..%u\n",
			o->root >= t->nranks ? "root" : "rank",
			o->root >= t->nranks ? o->root : o->rank, t->nranks - 1);
		kc_topo_free(t);
		return 2;
	}
	return 0;
}

/* nccl-tests: the size column and the busbw factor of an operation. */
static double bus_factor(u32 op, u32 p)
{
	switch (op) {
	case KCOLL_OP_ALLREDUCE:
		return 2.0 * (p - 1) / p;
	case KCOLL_OP_BROADCAST:
	case KCOLL_OP_REDUCE:
		return 1;
	case KCOLL_OP_BARRIER:
		return 0;
	}
	return (double)(p - 1) / p;
}

static void op_for_bytes(const struct opts *o, u32 p, u64 bytes, struct kc_op_desc *op)
{
	u64 es = kc_dtype_size(o->dtype), per = bytes / es;

	memset(op, 0, sizeof(*op));
	op->op = o->op;
	op->dtype = o->dtype;
	op->redop = KCOLL_SUM;
	op->root = o->root;
	switch (o->op) {
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_SCATTER:
	case KCOLL_OP_GATHER:
	case KCOLL_OP_ALLTOALL:
		per /= p;
		break;
	case KCOLL_OP_BARRIER:
		per = 0;
		break;
	}
	op->count = per;
}

/* "L0:mesh L1:nhr" or the whole-operation builder's name. */
static void algo_label(const u32 *algo, char *buf, size_t len)
{
	size_t pos = 0;
	u32 l;

	buf[0] = '\0';
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		const struct kc_algo_ops *a = kc_algo_get(algo[l]);

		if (a && a->build) {
			snprintf(buf, len, "%s", a->name);
			return;
		}
	}
	for (l = 0; l < KCOLL_LEVEL_COUNT && pos < len; l++)
		if (algo[l])
			pos += snprintf(buf + pos, len - pos, "%sL%u:%s", pos ? " " : "", l,
					kc_algo_name(algo[l]));
	if (!buf[0])
		snprintf(buf, len, "-");
}

struct ctx {
	struct opts *o;
	struct kc_topo t;
	struct kc_algo_conf conf;
	struct kc_cost_model cm;
	struct kc_exec_cfg ec;
};

/* Simulate one configuration; *res and the label of what ran. */
static int run_one(struct ctx *x, const struct kc_op_desc *op, const struct kc_algo_cfg *cfg,
		   struct sim_result *res, char *label, size_t llen, char *note, u32 nlen)
{
	char err[256] = "";
	u32 used[KCOLL_LEVEL_COUNT];
	int ret;

	ret = sim_op(&x->t, op, cfg, &x->o->m, &x->ec, res, used, note, nlen, err, sizeof(err));
	if (ret) {
		snprintf(label, llen, "error: %s", err[0] ? err : strerror(-ret));
		return ret;
	}
	algo_label(used, label, llen);
	return 0;
}

/* The configuration for op: HCCL_ALGO entry, fallbacks, then AUTO resolved. */
static void cfg_for(struct ctx *x, const struct kc_op_desc *op, struct kc_algo_cfg *cfg,
		    char *fb, u32 fblen)
{
	struct kc_algo_cfg c = { .pipe_bytes = 0 };

	kc_cfg_for_op(&x->conf, op->op, &c, fb, fblen);
	kc_select_cfg(&x->t, op, &c, &x->cm, cfg);
}

static void print_header(const struct ctx *x)
{
	const struct opts *o = x->o;

	printf("# coll-sim: %s, %u ranks, %u servers, %u super-nodes, %s\n", kc_op_name(o->op),
	       x->t.nranks, x->t.nservers, x->t.npods,
	       o->conformance ? "conformance (one message per step)" : "chunked");
	printf("# %12s %12s %-24s %12s %9s %9s %6s %12s %12s\n", "size(B)", "count",
	       "algorithm", "time(us)", "algbw", "busbw", "steps", "max_send(B)", "max_recv(B)");
}

static int table_row(struct ctx *x, u64 bytes, json_object *arr)
{
	struct kc_op_desc op;
	struct kc_algo_cfg cfg;
	struct sim_result res = { 0 };
	char label[128], fb[256];
	double algbw;
	u32 p = x->t.nranks;

	op_for_bytes(x->o, p, bytes, &op);
	cfg_for(x, &op, &cfg, fb, sizeof(fb));
	if (run_one(x, &op, &cfg, &res, label, sizeof(label), NULL, 0)) {
		fprintf(stderr, "coll-sim: %llu bytes: %s\n", (unsigned long long)bytes, label);
		return 1;
	}
	algbw = res.time > 0 ? bytes / res.time / 1e9 : 0;
	if (arr) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "op", json_object_new_string(kc_op_name(op.op)));
		json_object_object_add(j, "bytes", json_object_new_int64((int64_t)bytes));
		json_object_object_add(j, "algo", json_object_new_string(label));
		json_object_object_add(j, "time_s", json_object_new_double(res.time));
		json_object_object_add(j, "steps", json_object_new_int64(res.max_rounds));
		json_object_object_add(j, "max_send_bytes",
				       json_object_new_int64((int64_t)res.max_sent));
		json_object_object_add(j, "max_recv_bytes",
				       json_object_new_int64((int64_t)res.max_recv));
		json_object_object_add(j, "algbw_gbs", json_object_new_double(algbw));
		json_object_object_add(j, "busbw_gbs",
				       json_object_new_double(algbw * bus_factor(op.op, p)));
		json_object_object_add(j, "sim_events", json_object_new_int64((int64_t)res.events));
		if (fb[0])
			json_object_object_add(j, "fallback", json_object_new_string(fb));
		json_object_array_add(arr, j);
		return 0;
	}
	printf("  %12llu %12llu %-24s %12.3f %9.3f %9.3f %6u %12llu %12llu\n",
	       (unsigned long long)bytes, (unsigned long long)op.count, label, res.time * 1e6,
	       algbw, algbw * bus_factor(op.op, p), res.max_rounds,
	       (unsigned long long)res.max_sent, (unsigned long long)res.max_recv);
	if (fb[0])
		printf("#   fallback: %s\n", fb);
	return 0;
}

#define MAXC (2 * KCOLL_ALGO_COUNT)

/*
 * Progress of long work on stderr, only when stderr is a terminal and the
 * output is not JSON: "[size 3/12, algorithm 5/14]" (--scaling: "[ranks
 * 3/8, ...]"), rewritten in place and erased before a row is printed, so
 * pipes and files never see it.
 */
static bool progress_on;

static void progress_of(const char *what, u32 s, u32 nsteps, u32 a, u32 nalgos)
{
	if (!progress_on)
		return;
	if (nalgos)
		fprintf(stderr, "\r[%s %u/%u, algorithm %u/%u]", what, s + 1, nsteps, a + 1,
			nalgos);
	else
		fprintf(stderr, "\r[%s %u/%u]", what, s + 1, nsteps);
}

static void progress(u32 s, u32 nsizes, u32 a, u32 nalgos)
{
	progress_of("size", s, nsizes, a, nalgos);
}

static void progress_clear(void)
{
	if (progress_on)
		fputs("\r\033[K", stderr);
}

/* Whether @prog is an executable file in a directory of $PATH (command -v). */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	char file[4096];

	for (p = path ? path : ""; p && *p; p = colon ? colon + 1 : NULL) {
		int n;

		colon = strchr(p, ':');
		n = colon ? (int)(colon - p) : (int)strlen(p);
		snprintf(file, sizeof(file), "%.*s/%s", n, n ? p : ".", prog);
		if (!access(file, X_OK))
			return true;
	}
	return false;
}

/*
 * --plot FILE: gnuplot's terminal from FILE's extension, NULL (and a
 * message) when the extension is not one coll-sim writes or FILE cannot
 * be quoted for gnuplot (a newline or NUL ends a gnuplot command).
 */
static const char *plot_terminal(const char *file)
{
	const char *dot = strrchr(file, '.');

	if (strchr(file, '\n') || strchr(file, '\r')) {
		fprintf(stderr, "coll-sim: --plot: a file name with a line break cannot be "
			"given to gnuplot\n");
		return NULL;
	}
	if (dot && !strcasecmp(dot, ".png"))
		return "pngcairo size 1000,650 noenhanced";
	if (dot && !strcasecmp(dot, ".svg"))
		return "svg size 1000,650 noenhanced";
	fprintf(stderr, "coll-sim: --plot %s: unknown image type (FILE.png or FILE.svg)\n",
		file);
	return NULL;
}

/* @str as a gnuplot single-quoted string: a quote inside is doubled. */
static void gp_quote(FILE *gp, const char *str)
{
	fputc('\'', gp);
	for (; *str; str++) {
		if (*str == '\'')
			fputc('\'', gp);
		fputc(*str, gp);
	}
	fputc('\'', gp);
}

/* A colour per line, spread round the hue circle, bright and dark alternating. */
static u32 line_colour(u32 i, u32 n)
{
	double h = 6.0 * i / n, v = i % 2 ? 0.6 : 0.9, f = h - floor(h), r, g, b;
	double q = v * (1 - 0.85 * f), t = v * (1 - 0.85 * (1 - f)), m = v * 0.15;

	switch ((int)h % 6) {
	case 0: r = v; g = t; b = m; break;
	case 1: r = q; g = v; b = m; break;
	case 2: r = m; g = v; b = t; break;
	case 3: r = m; g = q; b = v; break;
	case 4: r = t; g = m; b = v; break;
	default: r = v; g = m; b = q; break;
	}
	return (u32)(r * 255) << 16 | (u32)(g * 255) << 8 | (u32)(b * 255);
}

/*
 * gnuplot reads its script from a pipe; file names and titles reach it
 * only as quoted strings.  The x axis is labelled with the sizes (1K, 64M),
 * at most 16 of them; every algorithm has its own colour, auto is black.
 */
static int plot(const struct ctx *x, const char *datpath, const u64 *sizes, u32 nsizes,
		const char *const *name, u32 n)
{
	const char *term = plot_terminal(x->o->plot);
	u32 i, step = (nsizes + 15) / 16;
	char lbl[32];
	FILE *gp;

	if (!term)
		return 1;
	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		perror("coll-sim: gnuplot");
		return 1;
	}
	fprintf(gp, "set terminal %s\nset output ", term);
	gp_quote(gp, x->o->plot);
	fprintf(gp, "\nset logscale x 2\nset key left top\nset grid\n"
		    "set xlabel 'size (bytes)'\nset ylabel 'busbw (GB/s)'\n"
		    "set title 'coll-sim %s, %u ranks'\nset datafile missing 'nan'\nset xtics (",
		kc_op_name(x->o->op), x->t.nranks);
	for (i = 0; i < nsizes; i += step)
		fprintf(gp, "%s\"%s\" %llu", i ? ", " : "", format_size(sizes[i], lbl, sizeof(lbl)),
			(unsigned long long)sizes[i]);
	fprintf(gp, ")\nplot ");
	for (i = 0; i <= n; i++) {
		gp_quote(gp, datpath);
		fprintf(gp, " using 1:%u with linespoints pt %u lw %s lc rgb '#%06x' title ", i + 2,
			i % 13 + 1, i == n ? "2.5" : "1.5", i == n ? 0 : line_colour(i, n));
		gp_quote(gp, i == n ? "auto" : name[i]);
		fputs(i == n ? "\n" : ", \\\n     ", gp);
	}
	if (pclose(gp)) {
		fprintf(stderr, "coll-sim: gnuplot failed writing %s\n", x->o->plot);
		return 1;
	}
	printf("# plot: %s (data %s)\n", x->o->plot, datpath);
	return 0;
}

static int all_algos(struct ctx *x, const u64 *sizes, u32 nsizes)
{
	struct kc_algo_cfg c[MAXC];
	const char *name[MAXC];
	double tm[MAXC];
	u32 n, i, s, p = x->t.nranks;
	FILE *dat = NULL;
	char datpath[4096];
	int rc = 0;

	{
		struct kc_op_desc op0;

		op_for_bytes(x->o, p, sizes[0], &op0);
		n = sim_candidates(&x->t, op0.op, c, name);
	}
	if (x->o->plot) {
		snprintf(datpath, sizeof(datpath), "%s.dat", x->o->plot);
		dat = fopen(datpath, "w");
		if (!dat) {
			perror(datpath);
			return 1;
		}
	}
	printf("# coll-sim --all-algos: %s, %u ranks, %u servers, %u super-nodes; time in us, '*' = automatic choice, '-' = cannot run\n",
	       kc_op_name(x->o->op), p, x->t.nservers, x->t.npods);
	printf("# %10s", "size(B)");
	for (i = 0; i < n; i++)
		printf(" %11s", name[i]);
	printf("  %-22s %s\n", "auto", "auto/best");
	if (dat) {
		fprintf(dat, "# size");
		for (i = 0; i < n; i++)
			fprintf(dat, " %s", name[i]);
		fprintf(dat, " auto\n");
	}
	for (s = 0; s < nsizes; s++) {
		struct kc_op_desc op;
		struct kc_algo_cfg ac;
		struct sim_result res = { 0 };
		char label[128], fb[256];
		double best = INFINITY, ta;

		op_for_bytes(x->o, p, sizes[s], &op);
		cfg_for(x, &op, &ac, fb, sizeof(fb));
		for (i = 0; i < n; i++) {
			progress(s, nsizes, i, n + 1);
			tm[i] = NAN;
			if (!run_one(x, &op, &c[i], &res, label, sizeof(label), NULL, 0))
				tm[i] = res.time;
			if (tm[i] < best)
				best = tm[i];
		}
		progress(s, nsizes, n, n + 1);
		if (run_one(x, &op, &ac, &res, label, sizeof(label), NULL, 0)) {
			ta = NAN;
			rc = 1;
		} else {
			ta = res.time;
		}
		progress_clear();
		printf("  %10llu", (unsigned long long)sizes[s]);
		for (i = 0; i < n; i++) {
			bool mark = !isnan(tm[i]) && tm[i] == ta && strstr(label, name[i]);

			if (isnan(tm[i]))
				printf(" %11s", "-");
			else
				printf(" %10.2f%c", tm[i] * 1e6, mark ? '*' : ' ');
		}
		printf("  %-22s %.3f\n", label, ta / best);
		fflush(stdout);
		if (dat) {
			double f = bus_factor(op.op, p);

			fprintf(dat, "%llu", (unsigned long long)sizes[s]);
			for (i = 0; i < n; i++)
				fprintf(dat, " %g", isnan(tm[i]) ? NAN : sizes[s] / tm[i] / 1e9 * f);
			fprintf(dat, " %g\n", sizes[s] / ta / 1e9 * f);
		}
	}
	if (dat) {
		if (fclose(dat)) {
			perror(datpath);
			return 1;
		}
		if (plot(x, datpath, sizes, nsizes, name, n))
			rc = 1;
	}
	return rc;
}

static const char *const step_names[KC_STEP_KIND_COUNT] = {
	"send", "recv", "recv+reduce", "copy", "reduce", "avg",
};

static const char *const buf_names[KC_BUF_COUNT] = { "send", "recv", "scratch" };

static int explain(struct ctx *x, u64 bytes)
{
	struct kc_op_desc op;
	struct kc_algo_cfg in = { .pipe_bytes = 0 }, cfg;
	struct kc_plan *plan = NULL;
	char fb[256], err[256];
	struct kc_round_it ri;
	u32 l, r, nrounds;
	u64 cost, nsteps;
	bool more;
	int ret;

	op_for_bytes(x->o, x->t.nranks, bytes, &op);
	kc_cfg_for_op(&x->conf, op.op, &in, fb, sizeof(fb));
	cost = kc_select_cfg(&x->t, &op, &in, &x->cm, &cfg);
	printf("# explain: %s of %llu bytes on %u ranks, rank %u\n", kc_op_name(op.op),
	       (unsigned long long)bytes, x->t.nranks, x->o->rank);
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		printf("#   level%u: %-10s %s\n", l, kc_algo_name(cfg.algo[l]),
		       in.algo[l] ? "(configured)" : cfg.algo[l] ? "(automatic: least modelled time)" : "");
	if (fb[0])
		printf("#   fallback: %s\n", fb);
	printf("#   modelled time %.3f us\n", cost == KC_COST_INF ? INFINITY : cost / 1e9);
	ret = kc_plan_build(&x->t, x->o->rank, &op, &cfg, &plan, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "coll-sim: plan: %s (%s)\n", err, strerror(-ret));
		return 1;
	}
	kc_plan_expanded_size(plan, &nsteps, &nrounds);
	printf("#   plan: %s; %u rounds, %llu steps (%u records), %u peers, scratch %llu B\n",
	       plan->note, nrounds, (unsigned long long)nsteps, plan->nsteps, plan->npeers,
	       (unsigned long long)plan->scratch_bytes);
	r = 0;
	for (more = kc_plan_round_first(plan, &ri); more; more = kc_plan_round_next(plan, &ri)) {
		struct kc_step_it it;
		struct kc_step st;

		printf("  round %u:", r++);
		kc_plan_steps_begin(plan, &ri, &it);
		while (kc_plan_step_next(plan, &it, &st)) {
			const struct kc_step *s = &st;
			bool xfer = s->kind <= KC_STEP_RECV_REDUCE;

			if (xfer)
				printf(" [%s %s rank %u (L%u) %s@%llu+%llu]", step_names[s->kind],
				       s->kind == KC_STEP_SEND ? "to" : "from", plan->peers[s->peer],
				       sim_level_of(&x->t, x->o->rank, plan->peers[s->peer]),
				       buf_names[s->buf], (unsigned long long)s->off,
				       (unsigned long long)s->len);
			else
				printf(" [%s %s@%llu+%llu]", step_names[s->kind], buf_names[s->buf],
				       (unsigned long long)s->off, (unsigned long long)s->len);
		}
		printf("\n");
	}
	kc_plan_free(plan);
	return 0;
}

/* 1.5 GiB, 512 KiB: @b in binary units, for the scaling table. */
static const char *human(u64 b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	u32 u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u && v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

static json_object *scaling_json(const struct scale_row *r, const char *algo)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "ranks", json_object_new_int64(r->nranks));
	json_object_object_add(j, "algo", json_object_new_string(algo));
	json_object_object_add(j, "plans_built", json_object_new_int64(r->sampled));
	json_object_object_add(j, "peers_min", json_object_new_int64(r->peers_min));
	json_object_object_add(j, "peers_mean", json_object_new_double(r->peers_mean));
	json_object_object_add(j, "peers_max", json_object_new_int64(r->peers_max));
	json_object_object_add(j, "qps_now", json_object_new_int64(r->nranks - 1));
	json_object_object_add(j, "qps_need", json_object_new_int64(r->peers_max));
	json_object_object_add(j, "recv_bytes_now",
			       json_object_new_int64((int64_t)(r->conn_bytes * (r->nranks - 1))));
	json_object_object_add(j, "recv_bytes_need",
			       json_object_new_int64((int64_t)(r->conn_bytes * r->peers_max)));
	json_object_object_add(j, "handshakes_now",
			       json_object_new_int64((int64_t)r->handshakes_now));
	json_object_object_add(j, "handshakes_need",
			       json_object_new_int64((int64_t)r->handshakes_need));
	json_object_object_add(j, "handshakes_need_estimated",
			       json_object_new_boolean(r->need_estimated));
	return j;
}

static void scaling_print(const struct scale_row *r, const char *algo)
{
	char m1[32], m2[32], hs[32];

	snprintf(hs, sizeof(hs), "%s%llu", r->need_estimated ? "~" : "",
		 (unsigned long long)r->handshakes_need);
	printf("  %6u %-12s %6u %5u %8.1f %5u %6u %6u %10s %10s %12llu %12s\n", r->nranks,
	       algo, r->sampled, r->peers_min, r->peers_mean, r->peers_max, r->nranks - 1,
	       r->peers_max, human(r->conn_bytes * (r->nranks - 1), m1, sizeof(m1)),
	       human(r->conn_bytes * r->peers_max, m2, sizeof(m2)),
	       (unsigned long long)r->handshakes_now, hs);
}

/*
 * --scaling: the table of tools/sim/scaling.c for 4, 16, ... up to
 * --ranks ranks (servers of --per-server), each algorithm coll-sim -A
 * would try, and the automatic choice.
 */
static int scaling(struct ctx *x, u64 bytes)
{
	u32 k = x->o->per_server ? x->o->per_server : 1, pmax = x->o->ranks ? x->o->ranks : 65536;
	json_object *arr = x->o->json ? json_object_new_array() : NULL;
	char err[256], m[32];
	u32 n, i, step = 0, nsteps = 0;
	u64 p;		/* wider than --ranks: p * 4 cannot wrap */
	int rc = 0;

	for (p = 4; p <= pmax; p *= 4)
		nsteps += p >= k && !(p % k);

	if (!arr) {
		printf("# coll-sim --scaling: %s of %llu bytes, %u rank(s) per server; receive "
		       "memory %s per connection (module defaults: %u slots of %u bytes)\n",
		       kc_op_name(x->o->op), (unsigned long long)bytes, k,
		       human(scale_conn_bytes(), m, sizeof(m)), SCALE_SLOTS,
		       SCALE_CHUNK);
		printf("# %6s %-12s %6s %5s %8s %5s %6s %6s %10s %10s %12s %12s\n", "ranks",
		       "algorithm", "plans", "peers", "min/mean", "/max", "QPs", "on", "memory",
		       "on need", "handshakes", "on need");
	}
	for (p = 4; p <= pmax && !rc; p *= 4) {
		struct kc_algo_cfg c[2 * KCOLL_ALGO_COUNT + 1];
		const char *name[2 * KCOLL_ALGO_COUNT + 1];
		struct kc_op_desc op;
		struct kc_topo t;

		const struct kc_algo_cfg all_auto = { .pipe_bytes = 0 };

		if (p < k || p % k)
			continue;
		if (kc_topo_init_regular(&t, 1, (u32)(p / k), k)) {
			fprintf(stderr, "coll-sim: cannot model %llu ranks of %u per server\n",
				(unsigned long long)p, k);
			rc = 2;
			break;
		}
		op_for_bytes(x->o, (u32)p, bytes, &op);
		n = sim_candidates(&t, op.op, c, name);
		kc_select_cfg(&t, &op, &all_auto, &x->cm, &c[n]);
		name[n++] = "auto";
		for (i = 0; i < n; i++) {
			struct scale_row r;
			int bad;

			err[0] = '\0';
			progress_of("ranks", step, nsteps, i, n);
			bad = scale_measure(&t, &op, &c[i], &r, err, sizeof(err));
			progress_clear();
			if (bad) {
				/* An algorithm that cannot run this size or op: skipped, said why. */
				if (!arr)
					printf("  %6llu %-12s %s\n", (unsigned long long)p, name[i],
					       err);
				continue;
			}
			if (arr)
				json_object_array_add(arr, scaling_json(&r, name[i]));
			else
				scaling_print(&r, name[i]);
		}
		kc_topo_free(&t);
		fflush(stdout);
		step++;
	}
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(arr);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct ctx x = { .o = &o };
	u64 sizes[128], b;
	u32 nsizes = 0, i;
	json_object *arr = NULL;
	char err[KC_CFG_ERR_LEN];
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* before any work: a plot that cannot be drawn is said at once */
	if (o.plot && !plot_terminal(o.plot))
		return 2;
	if (o.plot && !in_path("gnuplot")) {
		fprintf(stderr, "coll-sim: --plot needs gnuplot (apt-get install gnuplot-nox)\n");
		return 1;
	}
	progress_on = !o.json && isatty(STDERR_FILENO);
	if (o.algo && kc_cfg_parse(o.algo, &x.conf, err, sizeof(err))) {
		fprintf(stderr, "coll-sim: --algo: %s\n", err);
		return 2;
	}
	rc = make_topo(&o, &x.t);
	if (rc)
		return rc;
	if (o.scaling && o.table) {
		fprintf(stderr, "coll-sim: --scaling grows regular servers: no --rank-table\n");
		return 2;
	}
	o.m.rendezvous = o.conformance;
	o.m.symmetry = !o.nosym;
	x.ec = o.conformance ? sim_conformance_cfg() :
	       (struct kc_exec_cfg){ .chunk_bytes = o.chunk, .window = o.window, .op_seq = 1 };
	sim_cost_model(&o.m, &x.ec, &x.cm);
	if (x.ec.chunk_bytes < 8 || (!x.ec.window && !o.conformance)) {
		fprintf(stderr, "coll-sim: --chunk must be >= 8 and --window >= 1\n");
		return 2;
	}
	for (b = o.minb; b <= o.maxb && nsizes < ARRAY_SIZE(sizes); b *= o.factor) {
		sizes[nsizes++] = b;
		if (!b)
			break;
	}
	if (o.scaling) {
		rc = scaling(&x, sizes[0]);
	} else if (o.explain) {
		rc = explain(&x, sizes[0]);
	} else if (o.all) {
		rc = all_algos(&x, sizes, nsizes);
	} else {
		if (o.json)
			arr = json_object_new_array();
		else
			print_header(&x);
		for (i = 0; i < nsizes && !rc; i++) {
			progress(i, nsizes, 0, 0);
			rc = table_row(&x, sizes[i], arr);
			progress_clear();
			fflush(stdout);
		}
		/* One shape whatever the sizes: an array, of one object for one size. */
		if (arr) {
			printf("%s\n", json_object_to_json_string_ext(arr,
					JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(arr);
		}
	}
	kc_topo_free(&x.t);
	return rc;
}
