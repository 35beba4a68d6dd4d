// SPDX-License-Identifier: GPL-2.0
/*
 * collctl: look at and configure the kcoll module.
 *
 *   collctl [-j] show                    module, ABI, features, limits, tunables
 *                                        and the communicators
 *   collctl [-j] show COMM               one communicator: peers, counters,
 *                                        last operations, link model
 *   collctl [-j] explain --op OP --bytes N [--ranks P ...] [COMM]
 *                                        algorithm per level, plan, predicted
 *                                        time and why
 *   collctl [-j] history [COMM]          flight records: the last operations of
 *                                        live and recently destroyed communicators
 *                                        (collctl_history.c)
 *   collctl [-j] why [COMM]              why an operation is stuck: what it
 *                                        waits for, the rank to blame
 *                                        (collctl_why.c)
 *   collctl [-j] monitor [--count N] [-T S]
 *                                        the module's events as they happen
 *   collctl [-j] config                  every sysfs tunable
 *   collctl [-j] config NAME [VALUE]     one tunable; with VALUE, write it
 *                                        (algo strings are checked first)
 *   collctl [-j] config --persist NAME VALUE, --unpersist NAME,
 *                --show-persistent       the same in modprobe.d, for every
 *                                        load (collctl_persist.c)
 *   collctl [-j] check-ranktable FILE    validate a rank table, list its ranks
 *   collctl [-j] check-algo STRING       parse an HCCL_ALGO string, show the
 *                                        algorithm per operation and level
 *   collctl ranktable --hosts FILE|LIST [-k K] [-s A,B,...] ...
 *                                        write a rank table for the hosts
 *                                        (collctl_ranktable.c)
 *   collctl [-j] calibrate [--write] ... on every rank: measure each level's
 *                                        links, fit the link model of automatic
 *                                        selection (calibrate.c)
 *   collctl [-j] doctor [--rdma-device NAME] [--root DIR]
 *                [--ranktable FILE | --hosts LIST] [--rank R] ...
 *                                        the node's readiness for a job: module,
 *                                        permissions, RDMA port, MTU, address,
 *                                        memlock, secret, persisted settings
 *                                        (collctl_doctor.c); with a table, on
 *                                        every node: every pair connects and
 *                                        exchanges a message (collctl_pairs.c)
 *
 * The module is reached through the info ioctl of /dev/kcoll (libcoll),
 * the attributes of /sys/class/misc/kcoll/ and the generic netlink family
 * "kcoll" (collctl_nl.c, libnl-genl-3).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "coll.h"
#include "collctl_doctor.h"
#include "collctl_explain.h"
#include "collctl_fmt.h"
#include "collctl_history.h"
#include "collctl_why.h"
#include "collctl_nl.h"
#include "collctl_persist.h"
#include "collctl_ranktable.h"
#include "collctl_sysfs.h"
#include "kc_cfg.h"
#include "kc_topo.h"
#include "size.h"
#include "version.h"

static const char *const tunables[] = {
	"algo", "chunk_bytes", "slots", "timeout_ms", "connect_timeout_ms", "listen_port",
	"level0_alpha_ns", "level0_gbps", "level0_reduce_gbps",
	"level1_alpha_ns", "level1_gbps", "level1_reduce_gbps",
	"level2_alpha_ns", "level2_gbps", "level2_reduce_gbps",
	"level1_auto_mesh", "level2_auto_mesh", "level2_conv_pct", "user_max_bytes",
	"history_ops", "history_keep_ms", "history_max_bytes", "stall_ms", "connect_on_need",
};
#define NTUN (sizeof(tunables) / sizeof(tunables[0]))

static const char *const feat_names[] = {
	"eventfd", "userptr", "ipv6", "alltoallv", "auth", "unique-id", "fault",
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
"Show, explain, monitor and configure the kcoll module (collective operations\n"
"over RDMA).\n"
"\n"
"Commands:\n"
"  show                     the loaded module: version, ABI, features, supported\n"
"                           operations, types, reductions and algorithms, limits\n"
"                           and current defaults; then one line per communicator\n"
"                           (id, pid, rank/size, state, error, counters)\n"
"  show COMM                communicator COMM (its id from 'show'): state,\n"
"                           counters, each peer's connection, server and pod, the\n"
"                           last 8 operations (algorithm run per level, bytes,\n"
"                           time, status), its link model and algorithms\n"
"  explain -t, --op OP --bytes N [-P, --ranks P] [-k, --per-server K]\n"
"          [-s, --servers-per-pod S] [-A, --algo STRING] [--rank R] [COMM]\n"
"                           what the module runs for OP (allreduce, allgather,\n"
"                           ...) of N bytes (the nccl-tests size; K, M, G\n"
"                           suffixes, float elements): the algorithm per level,\n"
"                           the plan's steps, the predicted time from the cost\n"
"                           model and why it won over the other candidates.\n"
"                           With COMM: that communicator's topology, link model\n"
"                           and algorithms.  Without: P ranks (default 8), K per\n"
"                           server (default 1), S servers per super pod (default\n"
"                           all), the module's link model and algo from sysfs\n"
"                           (built-in defaults when the module is not loaded)\n"
"                           and --algo over the sysfs algo string\n"
"  history [COMM]           the flight records: per communicator (COMM only,\n"
"                           else every one you may see, live and destroyed\n"
"                           within history_keep_ms) its rank, creator (pid, uid,\n"
"                           command), creation and destruction time and final\n"
"                           error, then its last history_ops operations, oldest\n"
"                           first: id, state (queued, running, done), op, type,\n"
"                           reduction, root, count, bytes, algorithm per level,\n"
"                           time of submission (local time), time queued and\n"
"                           run, status\n"
"  why [COMM]               per communicator (COMM only, else every one you may\n"
"                           see): the last operation that made no progress for\n"
"                           stall_ms, what this rank waits for (rank, message,\n"
"                           round) and the rank to blame: one that has not\n"
"                           submitted it, whose process is stopped, whose node\n"
"                           does not answer, or that waits in turn\n"
"  monitor [--count COUNT] [-T, --timeout SECONDS]\n"
"                           print the module's events as they happen\n"
"                           (communicator created or destroyed, the first failed\n"
"                           operation of a communicator, a peer lost) until\n"
"                           SIGINT, COUNT events or SECONDS pass; -j: one JSON\n"
"                           object per line\n"
"  config                   every sysfs tunable and its value\n"
"  config NAME              one tunable (algo, chunk_bytes, slots, timeout_ms,\n"
"                           connect_timeout_ms, and the link model of automatic\n"
"                           selection: level{0,1,2}_alpha_ns, level{0,1,2}_gbps,\n"
"                           level{0,1,2}_reduce_gbps, level{1,2}_auto_mesh,\n"
"                           level2_conv_pct; and user_max_bytes, the kernel\n"
"                           memory one user's communicators may take;\n"
"                           history_ops, history_keep_ms, history_max_bytes,\n"
"                           the flight records' bounds; stall_ms, when an\n"
"                           operation counts as stalled)\n"
"  config NAME VALUE        set it (root); an algo string is parsed here first\n"
"                           and a bad one is reported with its position; ''\n"
"                           (empty) makes algo automatic again; the module\n"
"                           refuses a bad number and keeps the old value\n"
"  config --persist NAME VALUE\n"
"                           set it as above and, once set, record it as\n"
"                           'options kcoll NAME=VALUE' in\n"
"                           /etc/modprobe.d/kcoll.conf (or $KCOLL_MODPROBE_CONF),\n"
"                           which modprobe applies at every load, boot included\n"
"  config --unpersist NAME  remove NAME from that file (the value stays set)\n"
"  config --show-persistent the file and the NAME=VALUE pairs recorded there\n"
"  check-ranktable FILE     validate a rank table (HCCL v1.0/v1.2) and list\n"
"                           its ranks, servers and super pods\n"
"  check-algo STRING        parse an HCCL_ALGO string and show the algorithm\n"
"                           each operation gets per level\n"
"  ranktable -H, --hosts FILE|LIST [-k, --ranks-per-node K]\n"
"            [-s, --servers-per-pod A,B,...] [--base-port P] [--output FILE]\n"
"                           write an HCCL rank table for the hosts: LIST is\n"
"                           comma-separated, FILE (a regular file, or any\n"
"                           argument with a '/') has one host per line ('#'\n"
"                           starts a comment, blank lines are skipped); a host\n"
"                           is an IPv4 or IPv6 address or a name (its first\n"
"                           IPv4 address, else its first IPv6 one), each host\n"
"                           once.  Host i (from 0) is server i with K ranks\n"
"                           (1..1024, default 1): rank i*K+l has device_port\n"
"                           P+l (P default 16667), as kcoll-vm writes it.  With\n"
"                           -s: version 1.2, super pod 0 of the first A\n"
"                           servers, 1 of the next B, ... (the sizes sum to the\n"
"                           hosts); without: version 1.0.  Pretty JSON on\n"
"                           stdout, or FILE replaced at once (a new file\n"
"                           renamed over it), untouched on an error\n"
"  calibrate [--ranktable FILE] [--rank R] [--sizes LIST] [-n, --iters N]\n"
"            [-T, --timeout SECONDS] [--write [--persist]]\n"
"                           run on every rank of a rank table at once (like\n"
"                           coll-perf; FILE and R default to $KCOLL_RANKTABLE\n"
"                           and $KCOLL_RANK): for each level the table has, a\n"
"                           group that uses only that level's links (the ranks\n"
"                           of one server; one rank per server; one rank per\n"
"                           super pod) times AllGather and ReduceScatter with\n"
"                           Ring and Mesh at each size of LIST (default\n"
"                           4K,256K,4M; the median of N timed runs, default 5),\n"
"                           and the level's alpha_ns, gbps and reduce_gbps,\n"
"                           plus a cost per operation the same for every\n"
"                           algorithm (reported, not part of the model), are\n"
"                           fitted to the times with the module's own cost\n"
"                           model.  Between servers (levels 1 and 2, groups\n"
"                           of more than two ranks) it also sets\n"
"                           levelN_auto_mesh: 1 when Mesh took no longer than\n"
"                           Ring at every size (AllGather and ReduceScatter\n"
"                           together), so automatic selection may run it\n"
"                           there; else 0.\n"
"                           Rank 0 prints the model, its error against the\n"
"                           times, and each time measured and modelled before\n"
"                           and after.  --write sets it in sysfs on every node\n"
"                           (root; every rank computes the same values);\n"
"                           without, the collctl config commands are printed;\n"
"                           --persist records them as config --persist does.\n"
"                           SECONDS (default 600) bounds each communicator's\n"
"                           set-up: ranks outside a group wait that long\n"
"  doctor [--rdma-device NAME] [--root DIR]\n"
"         [--ranktable FILE | --hosts LIST] [--rank R] [--port P]\n"
"         [-T, --timeout SECONDS] [--wait SECONDS]\n"
"                           what to check on a node before a job, one line per\n"
"                           check, ok or problem with a hint: the module (the\n"
"                           device opens, its version and ABI against\n"
"                           libcoll's), the device's mode and group and whether\n"
"                           this user may open it, the RDMA device and port\n"
"                           libcoll would use (NAME, else $KCOLL_DEVICE, else\n"
"                           the first with an active Ethernet port) with its\n"
"                           state and link layer, its net device's MTU and the\n"
"                           RoCE path MTU that gives (a problem below 1024),\n"
"                           the local address coll_comm_init_oob() would\n"
"                           exchange ($KCOLL_ADDR, else the port's RoCE v2 GID),\n"
"                           RLIMIT_MEMLOCK (kcoll pins buffers against it), the\n"
"                           module's listen_port parameter when it has one,\n"
"                           where the secret would come from ($KCOLL_SECRET_FILE,\n"
"                           $KCOLL_SECRET; never the secret), and the settings\n"
"                           of config --persist against the module's values.\n"
"                           DIR replaces /sys.\n"
"                           With FILE or LIST, run on every node at once (like\n"
"                           coll-perf), then every pair of rank R (default\n"
"                           $KCOLL_RANK, else the one rank whose address is\n"
"                           this node's) of the rank table FILE or of LIST\n"
"                           (addresses separated by commas, rank i the i-th)\n"
"                           over RDMA (librdmacm):\n"
"                           listen on this rank's address and port P (default\n"
"                           16767; plus the rank's index among the ranks of\n"
"                           its address), connect to every higher rank, send a\n"
"                           message the peer answers.  One line per pair: 'ok'\n"
"                           and the round trip, or FAILED with the stage\n"
"                           (listen, address resolution, route resolution,\n"
"                           connect, data exchange), the reason and a hint.\n"
"                           SECONDS (default 5) bounds each stage; a peer not\n"
"                           running doctor is waited for --wait SECONDS\n"
"                           (default 30), then 'peer did not answer'.\n"
"                           Exit status 1 when a check or a pair fails\n"
"\n"
"Options:\n"
"  -j, --json               JSON output, one line per document (monitor: per\n"
"                           event); numbers are JSON numbers\n"
"  -p, --pretty             with -j, indent the JSON (as rdma -j -p); alone, no\n"
"                           effect\n"
"  -D, --device PATH        the kcoll device (default /dev/kcoll)\n"
"  -S, --sysfs DIR          the tunables' directory (default\n"
"                           /sys/class/misc/kcoll)\n"
"  -V, --version            versions of collctl, libcoll and the loaded module\n"
"  -h, --help               this text; COMMAND --help (or -h): that command's\n"
"                           usage alone\n"
"\n"
"Exit status: 0 on success, 1 on an error (the message says which), 2 on a\n"
"usage error; monitor -T: 1 when SECONDS passed before COUNT events.\n"
"\n"
"Short options mean what coll-perf's (nccl-tests) mean, or collctl has none:\n"
"since kcoll 0.1 monitor -c, -t; calibrate -T FILE, -R, -s, -t, -w; doctor -d,\n"
"-r; explain -o, -b, -p, -r are gone or changed (collctl(8), COMPATIBILITY).\n", prog);
}

static int out_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, cc_json_flags));
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
static const char *al_n(int i) { return kc_algo_label((u32)i); }

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
	return cc_sysfs_read(c->sysfs, name, buf, len);
}

static int sysfs_missing(const struct ctl *c, int err)
{
	fprintf(stderr, "%s: cannot read %s: %s%s\n", c->prog, c->sysfs, strerror(-err),
		err == -ENOENT ? " (is the kcoll module loaded? 'modprobe kcoll')" : "");
	return 1;
}

/* ------------------------------------------------ generic netlink family */

static int nl_open(const struct ctl *c, struct cc_nl **nl)
{
	char err[256];
	int ret = cc_nl_open(nl, err, sizeof(err));

	if (ret)
		fprintf(stderr, "%s: %s\n", c->prog, err);
	return ret;
}

static int list_comms(const struct ctl *c, struct cc_comm **comms, size_t *n)
{
	struct cc_nl *nl;
	char err[256];
	int ret;

	if (nl_open(c, &nl))
		return -1;
	ret = cc_nl_list(nl, comms, n, err, sizeof(err));
	cc_nl_close(nl);
	if (ret)
		fprintf(stderr, "%s: listing communicators: %s\n", c->prog, err);
	return ret;
}

/* The node's listeners: 0, 1 when the module has none to report (older), -1 on error. */
static int get_node(const struct ctl *c, struct cc_node *nd)
{
	struct cc_nl *nl;
	char err[256];
	int ret;

	if (nl_open(c, &nl))
		return -1;
	ret = cc_nl_node(nl, nd, err, sizeof(err));
	cc_nl_close(nl);
	if (ret == -EOPNOTSUPP)
		return 1;
	if (ret)
		fprintf(stderr, "%s: the node's listeners: %s\n", c->prog, err);
	return ret ? -1 : 0;
}

static int parse_comm_id(const struct ctl *c, const char *s, uint64_t *id)
{
	return cc_parse_comm_id(c->prog, s, id);
}

static int get_comm(const struct ctl *c, const char *arg, struct cc_comm *comm)
{
	struct cc_nl *nl;
	char err[256];
	uint64_t id;
	int ret;

	if (parse_comm_id(c, arg, &id))
		return 2;
	if (nl_open(c, &nl))
		return 1;
	ret = cc_nl_get(nl, id, comm, err, sizeof(err));
	cc_nl_close(nl);
	if (ret) {
		fprintf(stderr, "%s: %s\n", c->prog, err);
		return 1;
	}
	return 0;
}

static int show_comm(const struct ctl *c, const char *arg)
{
	struct cc_comm comm;
	int ret = get_comm(c, arg, &comm);

	if (ret)
		return ret;
	if (c->json)
		out_json(cc_comm_json(&comm, true));
	else
		cc_print_comm(stdout, &comm);
	cc_comm_release(&comm);
	return 0;
}

static int cmd_show(const struct ctl *c, int argc, char **argv)
{
	struct coll_module_info mi;
	json_object *o;
	char val[KCOLL_ALGO_STR_MAX];
	unsigned i;
	int ret;

	struct cc_comm *comms = NULL;
	size_t ncomms = 0;
	struct cc_node nd;
	int node;

	if (argc > 1) {
		fprintf(stderr, "%s: show takes at most one COMM\n", c->prog);
		return 2;
	}
	if (argc == 1)
		return show_comm(c, argv[0]);
	ret = coll_module_info(c->device, &mi);
	if (ret) {
		fprintf(stderr, "%s: %s\n", c->prog, coll_last_error());
		return 1;
	}
	if (list_comms(c, &comms, &ncomms))
		return 1;
	node = get_node(c, &nd);
	if (node < 0) {
		cc_comms_free(comms, ncomms);
		return 1;
	}
	if (c->json) {
		json_object *f = json_object_new_array(), *t = json_object_new_object();

		o = json_object_new_object();
		json_object_object_add(o, "version", json_object_new_string_len(val,
			snprintf(val, sizeof(val), "%u.%u.%u", mi.version >> 16,
				 (mi.version >> 8) & 0xff, mi.version & 0xff)));
		json_object_object_add(o, "abi_version", json_object_new_int((int)mi.abi_version));
		for (i = 0; i < sizeof(feat_names) / sizeof(feat_names[0]); i++)
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
		json_object_object_add(t, "listen_port", json_object_new_int64(mi.listen_port));
		json_object_object_add(o, "defaults", t);
		if (!node)
			json_object_object_add(o, "node", cc_node_json(&nd));
		f = json_object_new_array();
		for (i = 0; i < ncomms; i++)
			json_object_array_add(f, cc_comm_json(&comms[i], false));
		json_object_object_add(o, "communicators", f);
		cc_comms_free(comms, ncomms);
		return out_json(o);
	}
	printf("%-20s %u.%u.%u\n", "module version", mi.version >> 16, (mi.version >> 8) & 0xff,
	       mi.version & 0xff);
	printf("%-20s %u (libcoll %u)\n", "ABI version", mi.abi_version, (unsigned int)KCOLL_ABI_VERSION);
	printf("%-20s", "features");
	for (i = 0; i < sizeof(feat_names) / sizeof(feat_names[0]); i++)
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
	if (!node) {
		printf("%-20s %u (for rank-table ports 0)\n", "listen_port", mi.listen_port);
		cc_print_node(stdout, &nd);
	}
	printf("\n");
	cc_print_comm_table(stdout, comms, ncomms);
	cc_comms_free(comms, ncomms);
	return 0;
}

static int check_algo_string(const struct ctl *c, const char *s)
{
	struct kc_algo_conf conf;
	char err[KC_CFG_ERR_LEN];

	if (kc_cfg_parse(s, &conf, err, sizeof(err))) {
		fprintf(stderr, "%s: config algo: %s\n", c->prog, err);
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

static int cmd_config(const struct ctl *c, int argc, char **argv);

/* config --persist NAME VALUE sets it exactly as config NAME VALUE does. */
static int config_set(const void *ctx, int argc, char **argv)
{
	return cmd_config(ctx, argc, argv);
}

static int cmd_config(const struct ctl *c, int argc, char **argv)
{
	char val[KCOLL_ALGO_STR_MAX + 2], path[512];
	json_object *o;
	unsigned i;
	int fd, ret;

	/* --persist, --unpersist, --show-persistent: collctl_persist.c */
	ret = cc_persist_cmd(c->prog, c->json, argc, argv, config_set, c);
	if (ret != CC_PERSIST_NOT_MINE)
		return ret;
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
			"connect_timeout_ms level{0,1,2}_alpha_ns level{0,1,2}_gbps "
			"level{0,1,2}_reduce_gbps level{1,2}_auto_mesh level2_conv_pct "
			"user_max_bytes history_ops history_keep_ms history_max_bytes "
			"stall_ms)\n",
			c->prog, argv[0]);
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
	char err[KC_CFG_ERR_LEN], note[256];
	json_object *o = NULL, *e;
	u32 op, l;

	if (argc != 1) {
		fprintf(stderr, "%s: check-algo takes one STRING (quote it)\n", c->prog);
		return 2;
	}
	if (kc_cfg_parse(argv[0], &conf, err, sizeof(err))) {
		fprintf(stderr, "%s: check-algo: %s\n", c->prog, err);
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

/* ------------------------------------------------------------- explain */

/*
 * The module's link model from sysfs, converted as the module does
 * (kcoll_tunables_model()).  0, or -errno when an attribute is missing.
 */
static int sysfs_model(const struct ctl *c, struct kc_cost_model *m)
{
	static const char *const fields[] = { "alpha_ns", "gbps", "reduce_gbps" };
	unsigned long long v[3];
	char name[64], val[64];
	u32 l, i;
	int ret;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		for (i = 0; i < 3; i++) {
			snprintf(name, sizeof(name), "level%u_%s", l, fields[i]);
			ret = read_attr(c, name, val, sizeof(val));
			if (ret)
				return ret;
			/* rates are Gbit/s with up to three decimals: keep Mbit/s */
			v[i] = i ? (unsigned long long)llround(strtod(val, NULL) * 1000) :
				   strtoull(val, NULL, 10);
			if (i && !v[i])
				return -EINVAL;
		}
		m->lv[l].alpha = v[0] * 1000000ull;
		m->lv[l].beta = (8000000000ull + v[1] / 2) / v[1];
		m->lv[l].gamma = (8000000000ull + v[2] / 2) / v[2];
		m->lv[l].auto_mesh = false;
		if (l == KCOLL_LEVEL0)
			continue;
		snprintf(name, sizeof(name), "level%u_auto_mesh", l);
		ret = read_attr(c, name, val, sizeof(val));
		if (ret)
			return ret;
		m->lv[l].auto_mesh = strtoul(val, NULL, 10) == 1;
	}
	ret = read_attr(c, "level2_conv_pct", val, sizeof(val));
	if (ret)
		return ret;
	m->conv_q8 = (u32)((strtoul(val, NULL, 10) * 256 + 50) / 100);
	/* the executor's window is the slots per peer, as in the module */
	ret = read_attr(c, "slots", val, sizeof(val));
	if (ret)
		return ret;
	m->window = (u32)strtoul(val, NULL, 10);
	return 0;
}

struct explain_opts {
	const char *op, *bytes, *algo, *comm;
	u32 ranks, per_server, servers_per_pod, rank;
	bool has_ranks, has_rank;
};

/* --NAME of collctl CMD: a whole number in min..2^32 - 1 (the tools' words, size.h) */
static int parse_u32_opt(const struct ctl *c, const char *cmd, const char *name, const char *s,
			 u32 min, u32 *out)
{
	uint64_t v;
	int ret = cmd_arg_ranged(c->prog, cmd, name, s, min, UINT32_MAX, &v);

	if (!ret)
		*out = (u32)v;
	return ret;
}

static int explain_args(const struct ctl *c, int argc, char **argv, struct explain_opts *o)
{
	/* short options as coll-sim's (collctl.8, COMPATIBILITY); --bytes, --rank long only */
	enum { O_BYTES = 256, O_RANK };
	static const struct option lo[] = {
		{ "op", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, O_BYTES },
		{ "ranks", required_argument, NULL, 'P' },
		{ "per-server", required_argument, NULL, 'k' },
		{ "servers-per-pod", required_argument, NULL, 's' },
		{ "algo", required_argument, NULL, 'A' },
		{ "rank", required_argument, NULL, O_RANK },
		{ NULL, 0, NULL, 0 },
	};
	int opt, ret = 0;

	o->ranks = 8;
	o->per_server = 1;
	optind = 0;	/* rescan: argv[0] is the command */
	argc++;
	argv--;
	while (!ret && (opt = getopt_long(argc, argv, "t:P:k:s:A:", lo, NULL)) != -1) {
		switch (opt) {
		case 't': o->op = optarg; break;
		case O_BYTES: o->bytes = optarg; break;
		case 'P': ret = parse_u32_opt(c, "explain", "ranks", optarg, 1, &o->ranks);
			o->has_ranks = true; break;
		case 'k': ret = parse_u32_opt(c, "explain", "per-server", optarg, 1,
					      &o->per_server); break;
		case 's': ret = parse_u32_opt(c, "explain", "servers-per-pod", optarg, 1,
					      &o->servers_per_pod); break;
		case 'A': o->algo = optarg; break;
		case O_RANK: ret = parse_u32_opt(c, "explain", "rank", optarg, 0, &o->rank);
			o->has_rank = true; break;
		default:
			fprintf(stderr, "Try '%s explain --help'.\n", c->prog);
			ret = -EINVAL;
			break;
		}
	}
	if (ret)
		return ret;
	if (optind < argc)
		o->comm = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "%s: explain: unexpected '%s'\n", c->prog, argv[optind]);
		return -EINVAL;
	}
	if (!o->op || !o->bytes) {
		fprintf(stderr, "%s: explain needs --op OP and --bytes N\n", c->prog);
		return -EINVAL;
	}
	if (o->comm && (o->has_ranks || o->servers_per_pod || o->per_server != 1)) {
		fprintf(stderr, "%s: explain: COMM has its own topology; leave out --ranks, "
			"--per-server and --servers-per-pod\n", c->prog);
		return -EINVAL;
	}
	return 0;
}

/* Topology, model and configuration of a live communicator. */
static int explain_from_comm(const struct ctl *c, const struct explain_opts *o, u32 op,
			     struct kc_topo *t, struct kc_cost_model *m, struct kc_algo_cfg *cfg,
			     u32 *rank)
{
	struct cc_comm comm;
	char err[160];
	u32 *labels, i, l;
	int ret = get_comm(c, o->comm, &comm);

	if (ret)
		return ret;
	if (comm.npeers != comm.nranks || !comm.has_model || !comm.has_algos) {
		fprintf(stderr, "%s: communicator %s: the module did not report its ranks, "
			"model and algorithms\n", c->prog, o->comm);
		cc_comm_release(&comm);
		return 1;
	}
	labels = calloc(2 * (size_t)comm.nranks, sizeof(*labels));
	if (!labels) {
		cc_comm_release(&comm);
		return 1;
	}
	for (i = 0; i < comm.nranks; i++) {
		labels[i] = comm.peers[i].server;
		labels[comm.nranks + i] = comm.peers[i].pod;
	}
	ret = kc_topo_init(t, comm.nranks, labels, labels + comm.nranks, err, sizeof(err));
	free(labels);
	if (ret) {
		fprintf(stderr, "%s: communicator %s: %s\n", c->prog, o->comm, err);
		cc_comm_release(&comm);
		return 1;
	}
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		m->lv[l].alpha = comm.link[l].alpha_fs;
		m->lv[l].beta = comm.link[l].beta_fs;
		m->lv[l].gamma = comm.link[l].gamma_fs;
		cfg->algo[l] = comm.algos[op].algo[l];
		cfg->conf[l] = comm.algos[op].conf[l];
	}
	m->conv_q8 = comm.conv_q8;
	m->window = comm.slots;
	cfg->pipe_bytes = comm.algos[op].pipe_bytes;
	*rank = o->has_rank ? o->rank : comm.rank;
	cc_comm_release(&comm);
	return 0;
}

/* A regular topology from the options, the module's model and algo string. */
static int explain_from_opts(const struct ctl *c, const struct explain_opts *o, u32 op,
			     struct kc_topo *t, struct kc_cost_model *m, struct kc_algo_cfg *cfg,
			     const char **model_src)
{
	u32 servers, spp = o->servers_per_pod;
	char val[KCOLL_ALGO_STR_MAX], err[KC_CFG_ERR_LEN];
	struct kc_algo_conf conf;
	const char *algo = o->algo;

	if (o->ranks % o->per_server) {
		fprintf(stderr, "%s: explain: %u ranks do not split into servers of %u\n",
			c->prog, o->ranks, o->per_server);
		return 2;
	}
	servers = o->ranks / o->per_server;
	if (!spp)
		spp = servers;
	if (servers % spp) {
		fprintf(stderr, "%s: explain: %u servers do not split into super pods of %u\n",
			c->prog, servers, spp);
		return 2;
	}
	if (kc_topo_init_regular(t, servers / spp, spp, o->per_server)) {
		fprintf(stderr, "%s: explain: cannot build that topology\n", c->prog);
		return 1;
	}
	if (sysfs_model(c, m)) {
		*m = kc_cost_default;
		*model_src = "built-in defaults (module not loaded)";
	} else {
		*model_src = c->sysfs;
	}
	if (!algo && !read_attr(c, "algo", val, sizeof(val)))
		algo = val;
	if (kc_cfg_parse(algo ? algo : "", &conf, err, sizeof(err))) {
		fprintf(stderr, "%s: explain: %s %s\n", c->prog,
			o->algo ? "--algo:" : "the module's algo attribute:", err);
		kc_topo_free(t);
		return 1;
	}
	kc_cfg_for_op(&conf, op, cfg, NULL, 0);
	return 0;
}

static int cmd_explain(const struct ctl *c, int argc, char **argv)
{
	struct explain_opts o = { 0 };
	struct kc_cost_model model;
	struct kc_algo_cfg cfg;
	struct kc_topo t = { 0 };
	struct cc_explain x;
	const char *model_src = NULL;
	char err[256];
	u64 bytes;
	u32 rank;
	int op, ret;

	memset(&cfg, 0, sizeof(cfg));
	if (explain_args(c, argc, argv, &o))
		return 2;
	op = kc_op_by_name(o.op);
	if (op < 0) {
		fprintf(stderr, "%s: explain: unknown operation '%s' (allreduce, reducescatter, "
			"allgather, broadcast, reduce, scatter, gather, alltoall, barrier)\n",
			c->prog, o.op);
		return 2;
	}
	if (cc_parse_bytes(o.bytes, &bytes, err, sizeof(err))) {
		fprintf(stderr, "%s: explain: --bytes: %s\n", c->prog, err);
		return 2;
	}
	rank = o.rank;
	if (o.comm) {
		ret = explain_from_comm(c, &o, (u32)op, &t, &model, &cfg, &rank);
		model_src = "the communicator's snapshot";
	} else {
		ret = explain_from_opts(c, &o, (u32)op, &t, &model, &cfg, &model_src);
	}
	if (ret)
		return ret;
	ret = cc_explain_run(&t, rank, (u32)op, bytes, &cfg, &model, &x, err, sizeof(err));
	kc_topo_free(&t);
	if (ret) {
		fprintf(stderr, "%s: explain: %s\n", c->prog, err);
		return 1;
	}
	if (c->json) {
		json_object *j = cc_explain_json(&x);

		json_object_object_add(j, "model", json_object_new_string(model_src));
		if (o.comm)
			json_object_object_add(j, "comm", json_object_new_string(o.comm));
		return out_json(j);
	}
	cc_explain_print(stdout, &x);
	printf("link model: %s\n", model_src);
	return 0;
}

/* ------------------------------------------------------------- monitor */

static volatile sig_atomic_t monitor_stop;

static void on_signal(int sig)
{
	(void)sig;
	monitor_stop = 1;
}

struct monitor_state {
	const struct ctl *c;
	unsigned long seen, count;
};

static int on_event(const struct cc_event *ev, void *arg)
{
	struct monitor_state *st = arg;
	char stamp[40];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(stamp + strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm),
		 sizeof(stamp) - 20, ".%03ldZ", ts.tv_nsec / 1000000);
	if (st->c->json) {
		json_object *o = cc_event_json(ev, stamp);

		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		cc_print_event(stdout, ev, stamp);
	}
	fflush(stdout);
	return st->count && ++st->seen >= st->count;
}

static int cmd_monitor(const struct ctl *c, int argc, char **argv)
{
	/* -T as coll-perf's timeout; coll-perf's -c is its check: --count long only */
	enum { O_COUNT = 256 };
	static const struct option lo[] = {
		{ "count", required_argument, NULL, O_COUNT },
		{ "timeout", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct monitor_state st = { .c = c };
	struct sigaction sa = { .sa_handler = on_signal };
	struct cc_nl *nl;
	u32 count = 0, secs = 0;
	char err[256];
	int opt, ret = 0;

	optind = 0;
	argc++;
	argv--;
	while (!ret && (opt = getopt_long(argc, argv, "T:", lo, NULL)) != -1) {
		switch (opt) {
		case O_COUNT: ret = parse_u32_opt(c, "monitor", "count", optarg, 1, &count); break;
		case 'T': ret = parse_u32_opt(c, "monitor", "timeout", optarg, 1, &secs); break;
		default: ret = -EINVAL; break;
		}
	}
	if (ret || optind < argc) {
		fprintf(stderr, "%s: usage: monitor [--count COUNT] [-T SECONDS]\n", c->prog);
		return 2;
	}
	st.count = count;
	if (secs > UINT32_MAX / 1000)
		secs = UINT32_MAX / 1000;
	if (nl_open(c, &nl))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = cc_nl_monitor(nl, on_event, &st, &monitor_stop, secs * 1000, err, sizeof(err));
	cc_nl_close(nl);
	if (ret == -ETIMEDOUT) {
		fprintf(stderr, "%s: monitor: %u s passed after %lu of %u events\n", c->prog,
			secs, st.seen, count);
		return count ? 1 : 0;
	}
	if (ret) {
		fprintf(stderr, "%s: monitor: %s\n", c->prog, err);
		return 1;
	}
	return 0;
}

/* The fit starts from the module's model (the built-in one without it). */
static int cmd_calibrate(const struct ctl *c, int argc, char **argv)
{
	struct cc_calib_env env = { .prog = c->prog, .sysfs = c->sysfs, .device = c->device,
				    .json = c->json };

	if (sysfs_model(c, &env.start))
		env.start = kc_cost_default;
	return cc_calibrate(&env, argc, argv);
}

/*
 * collctl COMMAND --help: COMMAND's paragraphs of the overview (its
 * synopsis, options and description; show and config have several) and
 * the global options, cut from usage() so the two never differ.
 */
static int cmd_help(const char *prog, const char *cmd)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, n = strlen(cmd);
	bool in_cmds = false, mine = false, found = false;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return 1;
	usage(m, prog);
	fclose(m);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "Commands:")) {
			in_cmds = true;
			continue;
		}
		if (!strcmp(line, "Options:")) {
			if (!found)
				break;
			printf("\n%s\n", line);
			in_cmds = false;
			mine = true;
			continue;
		}
		if (line[0] != ' ') {
			mine = in_cmds = false;
			continue;
		}
		/* a command's paragraph starts at column 2 with its name */
		if (in_cmds && line[2] != ' ')
			mine = !strncmp(line + 2, cmd, n) && (line[2 + n] == ' ' || !line[2 + n]);
		if (mine && !found) {
			printf("Usage: %s [OPTION]... %s [ARG]...\n\n", prog, cmd);
			found = true;
		}
		if (mine)
			printf("%s\n", line);
	}
	free(text);
	if (!found) {
		fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help'.\n", prog, cmd, prog);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'D' },
		{ "sysfs", required_argument, NULL, 'S' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .sysfs = "/sys/class/misc/kcoll", .device = NULL };
	bool pretty = false;
	const char *cmd;
	int opt;

	c.prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	/* Options stop at the command: its arguments may start with '-'. */
	while ((opt = getopt_long(argc, argv, "+jpD:S:Vh", lo, NULL)) != -1) {
		switch (opt) {
		case 'j': c.json = true; break;
		case 'p': pretty = true; break;
		case 'V': tool_print_version(stdout, c.prog, c.device); return 0;
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
	if (pretty)
		cc_json_flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE;
	cmd = argv[optind++];
	argc -= optind;
	argv += optind;
	if (argc && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")))
		return cmd_help(c.prog, cmd);
	if (!strcmp(cmd, "show"))
		return cmd_show(&c, argc, argv);
	if (!strcmp(cmd, "config"))
		return cmd_config(&c, argc, argv);
	if (!strcmp(cmd, "check-ranktable"))
		return cmd_check_ranktable(&c, argc, argv);
	if (!strcmp(cmd, "check-algo"))
		return cmd_check_algo(&c, argc, argv);
	if (!strcmp(cmd, "ranktable"))
		return cc_ranktable_main(c.prog, argc + 1, argv - 1);
	if (!strcmp(cmd, "explain"))
		return cmd_explain(&c, argc, argv);
	if (!strcmp(cmd, "monitor"))
		return cmd_monitor(&c, argc, argv);
	if (!strcmp(cmd, "history"))
		return cc_history_main(c.prog, c.json, argc, argv);
	if (!strcmp(cmd, "why"))
		return cc_why_main(c.prog, c.json, argc, argv);
	if (!strcmp(cmd, "calibrate"))
		return cmd_calibrate(&c, argc, argv);
	if (!strcmp(cmd, "doctor")) {
		struct cc_doctor_env env = { .prog = c.prog, .device = c.device, .json = c.json };

		return cc_doctor(&env, argc + 1, argv - 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help'.\n", c.prog, cmd, c.prog);
	return 2;
}
