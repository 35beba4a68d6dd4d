// SPDX-License-Identifier: GPL-2.0
/*
 * collctl why (see collctl_why.h).  One line per communicator (every one
 * of the caller's, or COMM), from that rank's point of view:
 *
 *   comm 5 rank 0: operation 17 (allreduce, 1 MiB): this rank waits for
 *   rank 2 (message 0, round 1); rank 2 has not submitted operation 17
 *   (its last completed operation is 16)
 *
 * JSON gives the same fields by name, the reason as a word
 * (not-submitted, stopped, no-answer, waiting, unknown).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collctl_fmt.h"
#include "collctl_why.h"
#include "kc_coll.h"

static const char *const why_names[] = {
	[KCOLL_STALL_WHY_UNKNOWN] = "unknown",
	[KCOLL_STALL_WHY_NOT_SUBMITTED] = "not-submitted",
	[KCOLL_STALL_WHY_STOPPED] = "stopped",
	[KCOLL_STALL_WHY_NO_ANSWER] = "no-answer",
	[KCOLL_STALL_WHY_WAITING] = "waiting",
};

const char *cc_why_reason_name(uint32_t why)
{
	return why < sizeof(why_names) / sizeof(why_names[0]) ? why_names[why] : "?";
}

static const char *op_name(uint32_t op)
{
	return op < KCOLL_OP_COUNT ? kc_op_name(op) : "?";
}

/* 1 MiB, 4 KiB, 100 B: exact binary units where they are. */
static void fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && b >= 1024 && !(b % 1024)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", b, unit[u]);
}

static int why_culprit(const struct kcoll_stall *s, char *buf, size_t len)
{
	switch (s->why) {
	case KCOLL_STALL_WHY_NOT_SUBMITTED:
		return snprintf(buf, len, "rank %u has not submitted operation %" PRIu64
				" (its last completed operation is %u)", s->culprit, (uint64_t)s->op_id,
				s->culprit_done);
	case KCOLL_STALL_WHY_STOPPED:
		return snprintf(buf, len, "rank %u's process (pid %u) is stopped (SIGSTOP); it has "
				"not submitted operation %" PRIu64 " (its last completed operation "
				"is %u)", s->culprit, s->culprit_pid, (uint64_t)s->op_id, s->culprit_done);
	case KCOLL_STALL_WHY_NO_ANSWER:
		return snprintf(buf, len, "rank %u does not answer (node down or network cut)",
				s->culprit);
	case KCOLL_STALL_WHY_WAITING:
		return snprintf(buf, len, "rank %u runs operation %" PRIu64 " and waits for rank %u",
				s->culprit, (uint64_t)s->op_id, s->culprit_waits);
	}
	return snprintf(buf, len, "asked %u peers, %u answered, no rank named yet", s->probed,
			s->replied);
}

int cc_why_text(const struct cc_comm *c, char *buf, size_t len)
{
	const struct kcoll_stall *s = &c->stall;
	char size[32], wait[96], culprit[256];

	if (!c->has_stall)
		return snprintf(buf, len, "comm %" PRIu64 " rank %u: no operation stalled%s", c->id,
				c->rank, c->stall_ms ? "" : " (stall_ms 0: not watched)");
	fmt_bytes(s->bytes, size, sizeof(size));
	if (s->wait_peer == UINT32_MAX)
		snprintf(wait, sizeof(wait), "this rank waits for nothing known");
	else
		snprintf(wait, sizeof(wait), "this rank waits for rank %u (%s %u, round %u)",
			 s->wait_peer, s->wait == KCOLL_STALL_WAIT_CREDIT ? "credit of message" :
			 "message", s->wait_msg, s->round);
	why_culprit(s, culprit, sizeof(culprit));
	return snprintf(buf, len, "comm %" PRIu64 " rank %u: operation %" PRIu64 " (%s, %s)%s: "
			"%s; %s", c->id, c->rank, (uint64_t)s->op_id, op_name(s->op), size,
			s->flags & KCOLL_STALL_F_OVER ? " (no longer stalled)" : "", wait, culprit);
}

json_object *cc_why_json(const struct cc_comm *c)
{
	const struct kcoll_stall *s = &c->stall;
	json_object *o = json_object_new_object(), *st;
	char text[512];

	json_object_object_add(o, "id", json_object_new_uint64(c->id));
	json_object_object_add(o, "rank", json_object_new_int64(c->rank));
	json_object_object_add(o, "stall_ms", json_object_new_int64(c->stall_ms));
	cc_why_text(c, text, sizeof(text));
	json_object_object_add(o, "text", json_object_new_string(text));
	if (!c->has_stall) {
		json_object_object_add(o, "stall", NULL);
		return o;
	}
	st = json_object_new_object();
	json_object_object_add(st, "op_id", json_object_new_uint64(s->op_id));
	json_object_object_add(st, "op", json_object_new_string(op_name(s->op)));
	json_object_object_add(st, "bytes", json_object_new_uint64(s->bytes));
	json_object_object_add(st, "over", json_object_new_boolean(s->flags & KCOLL_STALL_F_OVER));
	json_object_object_add(st, "stalled_ms", json_object_new_int64(s->stall_ms));
	json_object_object_add(st, "waits_for", s->wait_peer == UINT32_MAX ? NULL :
			       json_object_new_int64(s->wait_peer));
	json_object_object_add(st, "wait", json_object_new_string(
		s->wait == KCOLL_STALL_WAIT_RECV ? "message" :
		s->wait == KCOLL_STALL_WAIT_CREDIT ? "credit" : "none"));
	json_object_object_add(st, "message", json_object_new_int64(s->wait_msg));
	json_object_object_add(st, "round", json_object_new_int64(s->round));
	json_object_object_add(st, "probed", json_object_new_int64(s->probed));
	json_object_object_add(st, "replied", json_object_new_int64(s->replied));
	json_object_object_add(st, "culprit", s->culprit == UINT32_MAX ? NULL :
			       json_object_new_int64(s->culprit));
	json_object_object_add(st, "reason", json_object_new_string(cc_why_reason_name(s->why)));
	if (s->why == KCOLL_STALL_WHY_NOT_SUBMITTED || s->why == KCOLL_STALL_WHY_STOPPED) {
		json_object_object_add(st, "culprit_submitted",
				       json_object_new_int64(s->culprit_submitted));
		json_object_object_add(st, "culprit_done", json_object_new_int64(s->culprit_done));
	}
	if (s->why == KCOLL_STALL_WHY_WAITING)
		json_object_object_add(st, "culprit_waits", json_object_new_int64(s->culprit_waits));
	if (s->culprit_pid)
		json_object_object_add(st, "culprit_pid", json_object_new_int64(s->culprit_pid));
	if (s->culprit != UINT32_MAX)
		json_object_object_add(st, "named_ms", json_object_new_int64(s->named_ms));
	json_object_object_add(o, "stall", st);
	return o;
}

int cc_why_main(const char *prog, bool json, int argc, char **argv)
{
	struct cc_comm *comms = NULL, one;
	json_object *arr = NULL;
	struct cc_nl *nl;
	uint64_t id = 0;
	char err[256], text[512];
	size_t n = 0, i;
	int ret;

	if (argc > 1) {
		fprintf(stderr, "%s: why takes at most one COMM\n", prog);
		return 2;
	}
	if (argc == 1 && cc_parse_comm_id(prog, argv[0], &id))
		return 2;
	ret = cc_nl_open(&nl, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	if (id) {
		ret = cc_nl_get(nl, id, &one, err, sizeof(err));
		if (!ret) {
			comms = &one;
			n = 1;
		}
	} else {
		ret = cc_nl_list(nl, &comms, &n, err, sizeof(err));
	}
	cc_nl_close(nl);
	if (ret == -ENOENT) {
		fprintf(stderr, "%s: no communicator %" PRIu64 " (not yours, or not here)\n", prog,
			id);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	if (json)
		arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		if (arr) {
			json_object_array_add(arr, cc_why_json(&comms[i]));
			continue;
		}
		cc_why_text(&comms[i], text, sizeof(text));
		printf("%s\n", text);
	}
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, cc_json_flags));
		json_object_put(arr);
	}
	if (id)
		cc_comm_release(&one);
	else
		cc_comms_free(comms, n);
	return 0;
}
