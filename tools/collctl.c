// SPDX-License-Identifier: GPL-2.0
/*
 * collctl: look at and configure the kcoll module.
 *
 *   collctl [-j] show                    module, ABI, features, limits, tunables
 *   collctl [-j] config                  every sysfs tunable
 *   collctl [-j] config NAME [VALUE]     one tunable; with VALUE, write it
 *                                        (algo strings are checked first)
 *   collctl [-j] check-ranktable FILE    validate a rank table, list its ranks
 *   collctl [-j] check-algo STRING       parse an HCCL_ALGO string, show the
 *                                        algorithm per operation and level
 *
 * The module is reached through the info ioctl of /dev/kcoll (libcoll) and
 * the attributes of /sys/class/misc/kcoll/.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "kc_cfg.h"

static const char *const tunables[] = {
	"algo", "chunk_bytes", "slots", "timeout_ms", "connect_timeout_ms",
};
#define NTUN (sizeof(tunables) / sizeof(tunables[0]))

static const char *const feat_names[] = { "eventfd", "userptr", "ipv6", "alltoallv" };
static const char *const algo_names[KCOLL_ALGO_COUNT] = {
	"auto", "mesh", "ring", "H-D_R", "NHR", "NB", "pairwise", "tree", "pipeline", "AHC",
	"AHC_BROKE",
};
static const char *const level_names[KCOLL_LEVEL_COUNT] = { "level0", "level1", "level2" };

struct ctl {
	bool json;
	const char *sysfs;
	const char *device;
	const char *prog;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [OPTION]... COMMAND [ARG]...\n"
"Show and configure the kcoll module (collective operations over RDMA).\n"
"\n"
"Commands:\n"
"  show                     the loaded module: version, ABI, features, supported\n"
"                           operations, types, reductions and algorithms, limits\n"
"                           and current defaults\n"
"  config                   every sysfs tunable and its value\n"
"  config NAME              one tunable (algo, chunk_bytes, slots, timeout_ms,\n"
"                           connect_timeout_ms)\n"
"  config NAME VALUE        set it (root); an algo string is parsed here first\n"
"                           and a bad one is reported with its position; ''\n"
"                           (empty) makes algo automatic again\n"
"  check-ranktable FILE     validate a rank table (HCCL v1.0/v1.2) and list\n"
"                           its ranks, servers and super pods\n"
"  check-algo STRING        parse an HCCL_ALGO string and show the algorithm\n"
"                           each operation gets per level\n"
"\n"
"Options:\n"
"  -j, --json               JSON output\n"
"  -D, --device PATH        the kcoll device (default /dev/kcoll)\n"
"  -S, --sysfs DIR          the tunables' directory (default\n"
"                           /sys/class/misc/kcoll)\n"
"  -h, --help               this text\n"
"\n"
"Exit status: 0 on success, 1 on an error (the message says which), 2 on a\n"
"usage error.\n", prog);
}

static int out_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}

static json_object *mask_names(uint32_t mask, const char *(*name)(int), int n)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		if (mask & (1u << i))
			json_object_array_add(a, json_object_new_string(name(i)));
	return a;
}

static const char *op_n(int i) { return coll_op_name(i); }
static const char *dt_n(int i) { return coll_dtype_name(i); }
static const char *ro_n(int i) { return coll_redop_name(i); }
static const char *al_n(int i) { return algo_names[i]; }

static void print_mask(const char *label, uint32_t mask, const char *(*name)(int), int n)
{
	int i;

	printf("%-20s", label);
	for (i = 0; i < n; i++)
		if (mask & (1u << i))
			printf(" %s", name(i));
	printf("\n");
}

/* Read a sysfs attribute, trailing newline removed.  0 or -errno. */
static int read_attr(const struct ctl *c, const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", c->sysfs, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int sysfs_missing(const struct ctl *c, int err)
{
	fprintf(stderr, "%s: cannot read %s: %s%s\n", c->prog, c->sysfs, strerror(-err),
		err == -ENOENT ? " (is the kcoll module loaded? 'modprobe kcoll')" : "");
	return 1;
}

static int cmd_show(const struct ctl *c, int argc, char **argv)
{
	struct coll_module_info mi;
	json_object *o;
	char val[KCOLL_ALGO_STR_MAX];
	unsigned i;
	int ret;

	if (argc > 0) {
		fprintf(stderr, "%s: show %s: listing communicators needs the module's generic "
			"netlink family 'kcoll', which this module does not provide yet\n",
			c->prog, argv[0]);
		return 1;
	}
	ret = coll_module_info(c->device, &mi);
	if (ret) {
		fprintf(stderr, "%s: %s\n", c->prog, coll_last_error());
		return 1;
	}
	if (c->json) {
		json_object *f = json_object_new_array(), *t = json_object_new_object();

		o = json_object_new_object();
		json_object_object_add(o, "version", json_object_new_string_len(val,
			snprintf(val, sizeof(val), "%u.%u.%u", mi.version >> 16,
				 (mi.version >> 8) & 0xff, mi.version & 0xff)));
		json_object_object_add(o, "abi_version", json_object_new_int((int)mi.abi_version));
		for (i = 0; i < 4; i++)
			if (mi.features & (1ull << i))
				json_object_array_add(f, json_object_new_string(feat_names[i]));
		json_object_object_add(o, "features", f);
		json_object_object_add(o, "ops", mask_names(mi.ops, op_n, COLL_OP_COUNT));
		json_object_object_add(o, "dtypes", mask_names(mi.dtypes, dt_n, COLL_DTYPE_COUNT));
		json_object_object_add(o, "redops", mask_names(mi.redops, ro_n, COLL_REDOP_COUNT));
		json_object_object_add(o, "algos", mask_names(mi.algos, al_n, KCOLL_ALGO_COUNT));
		json_object_object_add(o, "max_ranks", json_object_new_int64(mi.max_ranks));
		json_object_object_add(o, "max_inflight", json_object_new_int64(mi.max_inflight));
		json_object_object_add(o, "max_reg_bytes", json_object_new_int64((int64_t)mi.max_reg_bytes));
		json_object_object_add(t, "chunk_bytes", json_object_new_int64(mi.chunk_bytes));
		json_object_object_add(t, "slots", json_object_new_int64(mi.slots));
		json_object_object_add(t, "timeout_ms", json_object_new_int64(mi.timeout_ms));
		json_object_object_add(t, "connect_timeout_ms",
				       json_object_new_int64(mi.connect_timeout_ms));
		if (!read_attr(c, "algo", val, sizeof(val)))
			json_object_object_add(t, "algo", json_object_new_string(val));
		json_object_object_add(o, "defaults", t);
		return out_json(o);
	}
	printf("%-20s %u.%u.%u\n", "module version", mi.version >> 16, (mi.version >> 8) & 0xff,
	       mi.version & 0xff);
	printf("%-20s %u (libcoll %u)\n", "ABI version", mi.abi_version, (unsigned int)KCOLL_ABI_VERSION);
	printf("%-20s", "features");
	for (i = 0; i < 4; i++)
		if (mi.features & (1ull << i))
			printf(" %s", feat_names[i]);
	printf("\n");
	print_mask("operations", mi.ops, op_n, COLL_OP_COUNT);
	print_mask("data types", mi.dtypes, dt_n, COLL_DTYPE_COUNT);
	print_mask("reductions", mi.redops, ro_n, COLL_REDOP_COUNT);
	print_mask("algorithms", mi.algos, al_n, KCOLL_ALGO_COUNT);
	printf("%-20s %u\n%-20s %u\n%-20s %llu\n", "max ranks", mi.max_ranks, "max in flight",
	       mi.max_inflight, "max registration", (unsigned long long)mi.max_reg_bytes);
	printf("%-20s chunk_bytes=%u slots=%u timeout_ms=%u connect_timeout_ms=%u\n",
	       "defaults", mi.chunk_bytes, mi.slots, mi.timeout_ms, mi.connect_timeout_ms);
	if (!read_attr(c, "algo", val, sizeof(val)))
		printf("%-20s %s\n", "algo", *val ? val : "(automatic)");
	return 0;
}

static int check_algo_string(const struct ctl *c, const char *s)
{
	struct kc_algo_conf conf;
	char err[256];

	if (kc_cfg_parse(s, &conf, err, sizeof(err))) {
		fprintf(stderr, "%s: bad algo string '%s': %s\n", c->prog, s, err);
		return 1;
	}
	return 0;
}

static bool is_tunable(const char *name)
{
	unsigned i;

	for (i = 0; i < NTUN; i++)
		if (!strcmp(name, tunables[i]))
			return true;
	return false;
}

static int cmd_config(const struct ctl *c, int argc, char **argv)
{
	char val[KCOLL_ALGO_STR_MAX + 2], path[512];
	json_object *o;
	unsigned i;
	int fd, ret;

	if (argc == 0) {
		o = c->json ? json_object_new_object() : NULL;
		for (i = 0; i < NTUN; i++) {
			ret = read_attr(c, tunables[i], val, sizeof(val));
			if (ret) {
				json_object_put(o);
				return sysfs_missing(c, ret);
			}
			if (o)
				json_object_object_add(o, tunables[i], json_object_new_string(val));
			else
				printf("%-20s %s\n", tunables[i], val);
		}
		return o ? out_json(o) : 0;
	}
	if (!is_tunable(argv[0])) {
		fprintf(stderr, "%s: unknown tunable '%s' (algo chunk_bytes slots timeout_ms "
			"connect_timeout_ms)\n", c->prog, argv[0]);
		return 2;
	}
	if (argc == 1) {
		ret = read_attr(c, argv[0], val, sizeof(val));
		if (ret)
			return sysfs_missing(c, ret);
		if (c->json) {
			o = json_object_new_object();
			json_object_object_add(o, argv[0], json_object_new_string(val));
			return out_json(o);
		}
		printf("%s\n", val);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "%s: config %s takes one value (quote an algo string)\n",
			c->prog, argv[0]);
		return 2;
	}
	if (!strcmp(argv[0], "algo") && check_algo_string(c, argv[1]))
		return 1;
	snprintf(path, sizeof(path), "%s/%s", c->sysfs, argv[0]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open %s: %s%s\n", c->prog, path, strerror(errno),
			errno == ENOENT ? " (is the kcoll module loaded?)" : "");
		return 1;
	}
	/* sysfs never sees a zero-length write: an empty value is sent as "\n". */
	if (write(fd, *argv[1] ? argv[1] : "\n", *argv[1] ? strlen(argv[1]) : 1) < 0) {
		ret = errno;
		close(fd);
		fprintf(stderr, "%s: the module refused %s = '%s': %s%s\n", c->prog, argv[0],
			argv[1], strerror(ret),
			ret == EINVAL ? " (out of range; the kernel log may say more)" : "");
		return 1;
	}
	close(fd);
	ret = read_attr(c, argv[0], val, sizeof(val));
	if (c->json) {
		o = json_object_new_object();
		json_object_object_add(o, argv[0], json_object_new_string(ret ? argv[1] : val));
		return out_json(o);
	}
	printf("%s = %s\n", argv[0], ret ? argv[1] : val);
	return 0;
}

static int cmd_check_ranktable(const struct ctl *c, int argc, char **argv)
{
	struct coll_ranktable *rt;
	json_object *o, *a, *r;
	uint32_t i;

	if (argc != 1) {
		fprintf(stderr, "%s: check-ranktable takes one FILE\n", c->prog);
		return 2;
	}
	if (coll_ranktable_load(argv[0], &rt)) {
		fprintf(stderr, "%s: %s\n", c->prog, coll_last_error());
		return 1;
	}
	if (c->json) {
		o = json_object_new_object();
		json_object_object_add(o, "file", json_object_new_string(argv[0]));
		json_object_object_add(o, "version", json_object_new_string(rt->version));
		json_object_object_add(o, "nranks", json_object_new_int64(rt->nranks));
		json_object_object_add(o, "nservers", json_object_new_int64(rt->nservers));
		json_object_object_add(o, "npods", json_object_new_int64(rt->npods));
		a = json_object_new_array();
		for (i = 0; i < rt->nranks; i++) {
			r = json_object_new_object();
			json_object_object_add(r, "rank", json_object_new_int64(i));
			json_object_object_add(r, "addr", json_object_new_string(rt->ranks[i].addr));
			json_object_object_add(r, "port", json_object_new_int64(rt->ranks[i].port));
			json_object_object_add(r, "server", json_object_new_string(
				rt->server_names[rt->ranks[i].server_id]));
			json_object_object_add(r, "super_pod", json_object_new_string(
				rt->pod_names[rt->ranks[i].pod_id]));
			json_object_array_add(a, r);
		}
		json_object_object_add(o, "ranks", a);
		coll_ranktable_free(rt);
		return out_json(o);
	}
	printf("%s: valid rank table v%s: %u ranks on %u servers in %u super pod%s\n", argv[0],
	       rt->version, rt->nranks, rt->nservers, rt->npods, rt->npods == 1 ? "" : "s");
	printf("%6s  %-40s %6s  %-16s %s\n", "rank", "address", "port", "server", "super pod");
	for (i = 0; i < rt->nranks; i++)
		printf("%6u  %-40s %6u  %-16s %s\n", i, rt->ranks[i].addr, rt->ranks[i].port,
		       rt->server_names[rt->ranks[i].server_id],
		       rt->pod_names[rt->ranks[i].pod_id]);
	coll_ranktable_free(rt);
	return 0;
}

static int cmd_check_algo(const struct ctl *c, int argc, char **argv)
{
	struct kc_algo_conf conf;
	struct kc_algo_cfg cfg;
	char err[256], note[256];
	json_object *o = NULL, *e;
	u32 op, l;

	if (argc != 1) {
		fprintf(stderr, "%s: check-algo takes one STRING (quote it)\n", c->prog);
		return 2;
	}
	if (kc_cfg_parse(argv[0], &conf, err, sizeof(err))) {
		fprintf(stderr, "%s: bad algo string '%s': %s\n", c->prog, argv[0], err);
		return 1;
	}
	if (c->json)
		o = json_object_new_object();
	else
		printf("%-14s %-10s %-10s %-10s %s\n", "operation", "level0", "level1", "level2",
		       "note");
	for (op = 0; op < KCOLL_OP_COUNT; op++) {
		note[0] = '\0';
		kc_cfg_for_op(&conf, op, &cfg, note, sizeof(note));
		if (o) {
			e = json_object_new_object();
			for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
				json_object_object_add(e, level_names[l], json_object_new_string(
					kc_cfg_algo_token(cfg.algo[l])));
			if (note[0])
				json_object_object_add(e, "note", json_object_new_string(note));
			json_object_object_add(o, coll_op_name(op), e);
			continue;
		}
		printf("%-14s", coll_op_name(op));
		for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
			printf(" %-10s", kc_cfg_algo_token(cfg.algo[l]));
		printf(" %s\n", note);
	}
	return o ? out_json(o) : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'D' },
		{ "sysfs", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .sysfs = "/sys/class/misc/kcoll", .device = NULL };
	const char *cmd;
	int opt;

	c.prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	/* Options stop at the command: its arguments may start with '-'. */
	while ((opt = getopt_long(argc, argv, "+jD:S:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'j': c.json = true; break;
		case 'D': c.device = optarg; break;
		case 'S': c.sysfs = optarg; break;
		case 'h': usage(stdout, c.prog); return 0;
		default: usage(stderr, c.prog); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command given\nTry '%s --help'.\n", c.prog, c.prog);
		return 2;
	}
	cmd = argv[optind++];
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "show"))
		return cmd_show(&c, argc, argv);
	if (!strcmp(cmd, "config"))
		return cmd_config(&c, argc, argv);
	if (!strcmp(cmd, "check-ranktable"))
		return cmd_check_ranktable(&c, argc, argv);
	if (!strcmp(cmd, "check-algo"))
		return cmd_check_algo(&c, argc, argv);
	fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help'.\n", c.prog, cmd, c.prog);
	return 2;
}
