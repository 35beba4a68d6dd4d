// SPDX-License-Identifier: GPL-2.0
/*
 * collctl history (see collctl_history.h): the flight records the module
 * keeps of each communicator's last operations, while it lives and for
 * history_keep_ms after its destruction.  One block per communicator:
 * its identity (rank, creator's pid, uid and command, creation and
 * destruction time, the error it ended with), then one line per
 * operation, oldest first, with the time of submission (wall clock, to
 * match with logs), how long it waited in the queue and how long it ran.
 * JSON keeps every time in ns since the epoch and every duration in ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "collctl_fmt.h"
#include "collctl_history.h"
#include "kc_coll.h"
#include "kc_reduce.h"

static const char *const hist_states[] = { "queued", "running", "done" };

const char *cc_hist_state_name(uint32_t state)
{
	return state < sizeof(hist_states) / sizeof(hist_states[0]) ? hist_states[state] : "?";
}

/* ------------------------------------------------------------- parse */

static uint32_t h_u32(const struct nlattr *a)
{
	return a && nla_len(a) >= (int)sizeof(uint32_t) ? nla_get_u32((struct nlattr *)a) : 0;
}

static uint64_t h_u64(const struct nlattr *a)
{
	return a && nla_len(a) >= (int)sizeof(uint64_t) ? nla_get_u64((struct nlattr *)a) : 0;
}

static int parse_op(struct nlattr *nest, struct cc_hist_op *o)
{
	struct nlattr *tb[KCOLL_HIST_A_MAX + 1];

	if (nla_parse_nested(tb, KCOLL_HIST_A_MAX, nest, NULL) || !tb[KCOLL_HIST_A_ID])
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	o->id = h_u64(tb[KCOLL_HIST_A_ID]);
	o->state = h_u32(tb[KCOLL_HIST_A_STATE]);
	o->op = h_u32(tb[KCOLL_HIST_A_OP]);
	o->dtype = h_u32(tb[KCOLL_HIST_A_DTYPE]);
	o->has_redop = tb[KCOLL_HIST_A_REDOP];
	o->redop = h_u32(tb[KCOLL_HIST_A_REDOP]);
	o->has_root = tb[KCOLL_HIST_A_ROOT];
	o->root = h_u32(tb[KCOLL_HIST_A_ROOT]);
	o->count = h_u64(tb[KCOLL_HIST_A_COUNT]);
	o->bytes = h_u64(tb[KCOLL_HIST_A_BYTES]);
	o->algo[KCOLL_LEVEL0] = h_u32(tb[KCOLL_HIST_A_ALGO_L0]);
	o->algo[KCOLL_LEVEL1] = h_u32(tb[KCOLL_HIST_A_ALGO_L1]);
	o->algo[KCOLL_LEVEL2] = h_u32(tb[KCOLL_HIST_A_ALGO_L2]);
	o->status = h_u32(tb[KCOLL_HIST_A_STATUS]);
	o->submit_ns = h_u64(tb[KCOLL_HIST_A_SUBMIT_NS]);
	o->start_ns = h_u64(tb[KCOLL_HIST_A_START_NS]);
	o->end_ns = h_u64(tb[KCOLL_HIST_A_END_NS]);
	return 0;
}

int cc_parse_hist(struct nlmsghdr *nlh, struct cc_hist *h)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KCOLL_A_MAX + 1], *pos;
	size_t n = 0;
	int rem;

	memset(h, 0, sizeof(*h));
	if (!genlmsg_valid_hdr(nlh, 0) || gh->cmd != KCOLL_CMD_HISTORY_GET ||
	    genlmsg_parse(nlh, 0, tb, KCOLL_A_MAX, NULL) || !tb[KCOLL_A_COMM_ID])
		return -EINVAL;
	h->id = h_u64(tb[KCOLL_A_COMM_ID]);
	h->retained = h_u32(tb[KCOLL_A_HIST_RETAINED]);
	h->pid = h_u32(tb[KCOLL_A_COMM_PID]);
	h->rank = h_u32(tb[KCOLL_A_COMM_RANK]);
	h->nranks = h_u32(tb[KCOLL_A_COMM_NRANKS]);
	h->err = h_u32(tb[KCOLL_A_COMM_ERR]);
	h->uid = h_u32(tb[KCOLL_A_HIST_UID]);
	h->created_ns = h_u64(tb[KCOLL_A_HIST_CREATED_NS]);
	h->destroyed_ns = h_u64(tb[KCOLL_A_HIST_DESTROYED_NS]);
	h->capacity = h_u32(tb[KCOLL_A_HIST_CAPACITY]);
	h->recorded = h_u64(tb[KCOLL_A_HIST_RECORDED]);
	if (tb[KCOLL_A_COMM_UNIQUE_ID] &&
	    nla_len(tb[KCOLL_A_COMM_UNIQUE_ID]) == (int)sizeof(h->unique_id)) {
		memcpy(h->unique_id, nla_data(tb[KCOLL_A_COMM_UNIQUE_ID]), sizeof(h->unique_id));
		h->has_unique_id = true;
	}
	if (tb[KCOLL_A_HIST_TASK]) {
		size_t len = (size_t)nla_len(tb[KCOLL_A_HIST_TASK]);

		if (len >= sizeof(h->task))
			len = sizeof(h->task) - 1;
		memcpy(h->task, nla_data(tb[KCOLL_A_HIST_TASK]), len);
		h->task[len] = '\0';
	}
	if (!tb[KCOLL_A_HIST_OPS])
		return 0;
	nla_for_each_nested(pos, tb[KCOLL_A_HIST_OPS], rem)
		n++;
	h->ops = calloc(n ? n : 1, sizeof(*h->ops));
	if (!h->ops)
		return -ENOMEM;
	nla_for_each_nested(pos, tb[KCOLL_A_HIST_OPS], rem) {
		if (nla_type(pos) != KCOLL_A_HIST_OP || parse_op(pos, &h->ops[h->nops])) {
			free(h->ops);
			h->ops = NULL;
			h->nops = 0;
			return -EINVAL;
		}
		h->nops++;
	}
	return 0;
}

int cc_hist_add(struct cc_hist **list, size_t *n, struct cc_hist *h)
{
	struct cc_hist *last = *n ? &(*list)[*n - 1] : NULL, *l;

	if (last && last->id == h->id && last->retained == h->retained) {
		struct cc_hist_op *ops;

		if (!h->nops)
			goto drop;
		ops = realloc(last->ops, (last->nops + h->nops) * sizeof(*ops));
		if (!ops)
			return -ENOMEM;
		memcpy(ops + last->nops, h->ops, h->nops * sizeof(*ops));
		last->ops = ops;
		last->nops += h->nops;
		goto drop;
	}
	l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	*list = l;
	l[(*n)++] = *h;
	return 0;
drop:
	free(h->ops);
	h->ops = NULL;
	return 0;
}

void cc_hists_free(struct cc_hist *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i].ops);
	free(list);
}

struct hist_recv {
	struct cc_hist *list;
	size_t n;
};

static int on_hist(struct nlmsghdr *nlh, void *arg)
{
	struct hist_recv *r = arg;
	struct cc_hist h;
	int ret = cc_parse_hist(nlh, &h);

	if (ret)
		return ret == -ENOMEM ? ret : -EPROTO;
	ret = cc_hist_add(&r->list, &r->n, &h);
	if (ret)
		free(h.ops);
	return ret;
}

int cc_nl_history(struct cc_nl *nl, uint64_t id, struct cc_hist **list, size_t *n, char *err,
		  size_t errlen)
{
	struct hist_recv r = { 0 };
	int ret = cc_nl_dump(nl, KCOLL_CMD_HISTORY_GET, id, on_hist, &r, err, errlen);

	if (ret == -EOPNOTSUPP && err && errlen)
		snprintf(err, errlen, "the loaded kcoll module keeps no flight records "
			 "(older than collctl)");
	if (ret) {
		cc_hists_free(r.list, r.n);
		return ret;
	}
	*list = r.list;
	*n = r.n;
	return 0;
}

/* ------------------------------------------------------------ format */

/* "2026-12-06 17:40:01.123456", or "-" for 0. */
static const char *wall(uint64_t ns, bool utc, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t k;

	if (!ns || !(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
		return "-";
	k = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + k, len - k, ".%06u", (unsigned int)(ns % 1000000000u / 1000u));
	return buf;
}

static const char *op_name(uint32_t op)
{
	return op < KCOLL_OP_COUNT ? kc_op_name(op) : "?";
}

/* How long it waited (submit to start) and ran (start to end, or to now: 0). */
static uint64_t queued_ns(const struct cc_hist_op *o)
{
	return o->start_ns > o->submit_ns ? o->start_ns - o->submit_ns : 0;
}

static uint64_t run_ns(const struct cc_hist_op *o)
{
	return o->end_ns > o->start_ns && o->start_ns ? o->end_ns - o->start_ns : 0;
}

static void print_op(FILE *f, const struct cc_hist_op *o, bool utc)
{
	char when[40], redop[16], root[16], run[24];

	snprintf(redop, sizeof(redop), "%s", o->has_redop ? kc_redop_name(o->redop) : "-");
	if (o->has_root)
		snprintf(root, sizeof(root), "%u", o->root);
	else
		snprintf(root, sizeof(root), "-");
	if (o->end_ns)
		snprintf(run, sizeof(run), "%.3f", (double)run_ns(o) / 1e3);
	else
		snprintf(run, sizeof(run), "-");
	fprintf(f, "  %-8" PRIu64 " %-7s %-13s %-7s %-5s %4s %12" PRIu64 " %12" PRIu64
		"  %-9s %-9s %-9s %-26s %10.3f %12s  %s\n",
		o->id, cc_hist_state_name(o->state), op_name(o->op), kc_dtype_name(o->dtype),
		redop, root, o->count, o->bytes, cc_used_algo_name(o->algo[0]),
		cc_used_algo_name(o->algo[1]), cc_used_algo_name(o->algo[2]),
		wall(o->submit_ns, utc, when, sizeof(when)), (double)queued_ns(o) / 1e3, run,
		o->state != KCOLL_HIST_STATE_DONE ? "-" : o->status ? strerror((int)o->status) :
		"ok");
}

void cc_print_history(FILE *f, const struct cc_hist *list, size_t n, bool utc)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct cc_hist *h = &list[i];
		char t1[40], t2[40];

		fprintf(f, "%scomm %" PRIu64 " (%s): rank %u/%u, pid %u (%s), uid %u\n",
			i ? "\n" : "", h->id, h->retained ? "destroyed" : "live", h->rank,
			h->nranks, h->pid, h->task[0] ? h->task : "?", h->uid);
		fprintf(f, "  created %s", wall(h->created_ns, utc, t1, sizeof(t1)));
		if (h->retained)
			fprintf(f, ", destroyed %s", wall(h->destroyed_ns, utc, t2, sizeof(t2)));
		fprintf(f, ", error: %s\n", h->err ? strerror((int)h->err) : "none");
		fprintf(f, "  %" PRIu64 " operation%s recorded, the last %zu kept (at most %u)\n",
			h->recorded, h->recorded == 1 ? "" : "s", h->nops, h->capacity);
		if (!h->nops)
			continue;
		fprintf(f, "  %-8s %-7s %-13s %-7s %-5s %4s %12s %12s  %-9s %-9s %-9s %-26s %10s "
			"%12s  %s\n", "id", "state", "op", "dtype", "redop", "root", "count",
			"bytes", "level0", "level1", "level2", "submitted", "queue_us", "run_us",
			"status");
		for (k = 0; k < h->nops; k++)
			print_op(f, &h->ops[k], utc);
	}
	if (!n)
		fprintf(f, "(no flight records)\n");
}

static json_object *op_json(const struct cc_hist_op *o)
{
	json_object *j = json_object_new_object(), *a = json_object_new_object();
	uint32_t l;

	json_object_object_add(j, "id", json_object_new_uint64(o->id));
	json_object_object_add(j, "state", json_object_new_string(cc_hist_state_name(o->state)));
	json_object_object_add(j, "op", json_object_new_string(op_name(o->op)));
	json_object_object_add(j, "dtype", json_object_new_string(kc_dtype_name(o->dtype)));
	if (o->has_redop)
		json_object_object_add(j, "redop",
				       json_object_new_string(kc_redop_name(o->redop)));
	if (o->has_root)
		json_object_object_add(j, "root", json_object_new_uint64(o->root));
	json_object_object_add(j, "count", json_object_new_uint64(o->count));
	json_object_object_add(j, "bytes", json_object_new_uint64(o->bytes));
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		static const char *const lv[] = { "level0", "level1", "level2" };

		json_object_object_add(a, lv[l],
				       json_object_new_string(cc_used_algo_name(o->algo[l])));
	}
	json_object_object_add(j, "algo", a);
	json_object_object_add(j, "submit_ns", json_object_new_uint64(o->submit_ns));
	if (o->start_ns) {
		json_object_object_add(j, "start_ns", json_object_new_uint64(o->start_ns));
		json_object_object_add(j, "queue_ns", json_object_new_uint64(queued_ns(o)));
	}
	if (o->end_ns) {
		json_object_object_add(j, "end_ns", json_object_new_uint64(o->end_ns));
		json_object_object_add(j, "duration_ns", json_object_new_uint64(run_ns(o)));
	}
	if (o->state == KCOLL_HIST_STATE_DONE) {
		json_object_object_add(j, "status", json_object_new_string(o->status ?
				       strerror((int)o->status) : "ok"));
		json_object_object_add(j, "errno", json_object_new_uint64(o->status));
	}
	return j;
}

json_object *cc_history_json(const struct cc_hist *list, size_t n)
{
	json_object *arr = json_object_new_array();
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct cc_hist *h = &list[i];
		json_object *j = json_object_new_object(), *ops = json_object_new_array();

		json_object_object_add(j, "comm", json_object_new_uint64(h->id));
		json_object_object_add(j, "destroyed", json_object_new_boolean(h->retained));
		json_object_object_add(j, "rank", json_object_new_uint64(h->rank));
		json_object_object_add(j, "nranks", json_object_new_uint64(h->nranks));
		json_object_object_add(j, "pid", json_object_new_uint64(h->pid));
		json_object_object_add(j, "uid", json_object_new_uint64(h->uid));
		json_object_object_add(j, "task", json_object_new_string(h->task));
		if (h->has_unique_id) {
			char hex[2 * sizeof(h->unique_id) + 1];

			for (k = 0; k < sizeof(h->unique_id); k++)
				snprintf(hex + 2 * k, 3, "%02x", h->unique_id[k]);
			json_object_object_add(j, "unique_id", json_object_new_string(hex));
		}
		json_object_object_add(j, "created_ns", json_object_new_uint64(h->created_ns));
		if (h->retained)
			json_object_object_add(j, "destroyed_ns",
					       json_object_new_uint64(h->destroyed_ns));
		json_object_object_add(j, "error", json_object_new_string(h->err ?
				       strerror((int)h->err) : "none"));
		json_object_object_add(j, "errno", json_object_new_uint64(h->err));
		json_object_object_add(j, "capacity", json_object_new_uint64(h->capacity));
		json_object_object_add(j, "recorded", json_object_new_uint64(h->recorded));
		for (k = 0; k < h->nops; k++)
			json_object_array_add(ops, op_json(&h->ops[k]));
		json_object_object_add(j, "ops", ops);
		json_object_array_add(arr, j);
	}
	return arr;
}

/* ----------------------------------------------------------- command */

int cc_history_main(const char *prog, bool json, int argc, char **argv)
{
	struct cc_hist *list = NULL;
	struct cc_nl *nl;
	uint64_t id = 0;
	char err[256];
	size_t n = 0;
	int ret;

	if (argc > 1) {
		fprintf(stderr, "%s: history takes at most one COMM\n", prog);
		return 2;
	}
	if (argc == 1 && cc_parse_comm_id(prog, argv[0], &id))
		return 2;
	ret = cc_nl_open(&nl, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	ret = cc_nl_history(nl, id, &list, &n, err, sizeof(err));
	cc_nl_close(nl);
	if (ret) {
		fprintf(stderr, "%s: flight records: %s\n", prog, err);
		return 1;
	}
	if (id && !n) {
		fprintf(stderr, "%s: no flight record of communicator %" PRIu64 " (not yours, "
			"never here, or destroyed longer ago than history_keep_ms)\n", prog, id);
		cc_hists_free(list, n);
		return 1;
	}
	if (json) {
		json_object *o = cc_history_json(list, n);

		printf("%s\n", json_object_to_json_string_ext(o, cc_json_flags));
		json_object_put(o);
	} else {
		cc_print_history(stdout, list, n, false);
	}
	cc_hists_free(list, n);
	return 0;
}
