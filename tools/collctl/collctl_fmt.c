// SPDX-License-Identifier: GPL-2.0
/*
 * Text and JSON for communicators and events (see collctl_fmt.h).  The
 * JSON keys are the text's column names; numbers stay numbers (bytes,
 * nanoseconds, femtoseconds), so scripts need not parse units.
 */
#include <inttypes.h>
#include <string.h>

#include "coll_fault.h"
#include "collctl_fmt.h"

int cc_json_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
#include "kc_cfg.h"
#include "kc_coll.h"

static const char *const comm_states[] = { "ready", "peer-lost", "failed" };
static const char *const peer_states[] = {
	"idle", "connecting", "up", "failed", "closed", "lost", "proving",
};
static const char *const level_names[KCOLL_LEVEL_COUNT] = { "level0", "level1", "level2" };

/* How peers were admitted: a module without the attribute says nothing. */
static const char *auth_name(const struct cc_comm *c)
{
	if (!c->has_auth)
		return "?";
	return c->auth == KCOLL_COMM_AUTH_HMAC_SHA256 ? "secret" : "none";
}

const char *cc_comm_state_name(uint32_t state)
{
	return state < sizeof(comm_states) / sizeof(comm_states[0]) ? comm_states[state] : "?";
}

const char *cc_peer_state_name(uint32_t state)
{
	return state < sizeof(peer_states) / sizeof(peer_states[0]) ? peer_states[state] : "?";
}

const char *cc_event_name(uint8_t cmd)
{
	switch (cmd) {
	case KCOLL_CMD_EVENT_COMM_NEW: return "comm-new";
	case KCOLL_CMD_EVENT_COMM_DEL: return "comm-del";
	case KCOLL_CMD_EVENT_OP_FAIL: return "op-fail";
	case KCOLL_CMD_EVENT_PEER_LOST: return "peer-lost";
	case KCOLL_CMD_EVENT_ALGO_FALLBACK: return "algo-fallback";
	case KCOLL_CMD_EVENT_STALL: return "stall";
	}
	return "?";
}

const char *cc_used_algo_name(uint32_t algo)
{
	return algo ? kc_cfg_algo_token(algo) : "-";
}

static const char *op_name(uint32_t op)
{
	return op < KCOLL_OP_COUNT ? kc_op_name(op) : "?";
}

/* strerror() without the libc's locale and for 0: "ok". */
static const char *errno_name(uint32_t e)
{
	return e ? strerror((int)e) : "ok";
}

void cc_print_comm_table(FILE *f, const struct cc_comm *comms, size_t n)
{
	size_t i;

	fprintf(f, "%-6s %-8s %-11s %-10s %-9s %12s %16s %8s %8s  %s\n", "comm", "pid", "rank",
		"state", "error", "ops", "bytes", "errors", "timeouts", "auth");
	for (i = 0; i < n; i++) {
		const struct cc_comm *c = &comms[i];
		char rank[32];

		snprintf(rank, sizeof(rank), "%u/%u", c->rank, c->nranks);
		fprintf(f, "%-6" PRIu64 " %-8u %-11s %-10s %-9s %12" PRIu64 " %16" PRIu64
			" %8" PRIu64 " %8" PRIu64 "  %s\n", c->id, c->pid, rank,
			cc_comm_state_name(c->state), c->err ? errno_name(c->err) : "-",
			c->ops, c->bytes, c->errors, c->timeouts, auth_name(c));
	}
	if (!n)
		fprintf(f, "(no communicators)\n");
}

/* "level0,level2": the levels of a fallback mask. */
static void fallback_levels(uint32_t mask, char *buf, size_t len)
{
	size_t pos = 0;
	uint32_t l;

	buf[0] = '\0';
	for (l = 0; l < KCOLL_LEVEL_COUNT && pos < len; l++)
		if (mask & (1u << l))
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "",
						level_names[l]);
}

/* A level's algorithm; '!' after it when what is configured there did not run. */
static const char *lastop_algo(const struct cc_lastop *l, uint32_t lvl, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", cc_used_algo_name(l->algo[lvl]),
		 l->fallback & (1u << lvl) ? "!" : "");
	return buf;
}

static void print_lastop(FILE *f, const struct cc_lastop *l)
{
	char a[3][24];

	fprintf(f, "  %-8" PRIu64 " %-14s %12" PRIu64 " %14" PRIu64 "  %-9s %-9s %-9s %12.3f  %s\n",
		l->id, op_name(l->op), l->count, l->bytes, lastop_algo(l, 0, a[0], sizeof(a[0])),
		lastop_algo(l, 1, a[1], sizeof(a[1])), lastop_algo(l, 2, a[2], sizeof(a[2])),
		(double)l->duration_ns / 1e3, errno_name(l->status));
	if (l->fallback)
		fprintf(f, "           ! not as configured: %s\n", l->note[0] ? l->note : "(no note)");
}

/* "NHR", or "tree>NA" where the operation falls back from what is configured. */
static void configured_algo(const struct cc_algos *a, uint32_t l, char *buf, size_t len)
{
	if (a->conf[l] && a->conf[l] != a->algo[l])
		snprintf(buf, len, "%s>%s", kc_cfg_algo_token(a->conf[l]),
			 kc_cfg_algo_token(a->algo[l]));
	else
		snprintf(buf, len, "%s", kc_cfg_algo_token(a->algo[l]));
}

/* A peer's connection: taken over, connected on need (and how long that took), or own. */
static const char *peer_connection(const struct cc_peer *p, uint32_t self, char *buf, size_t len)
{
	if (p->rank == self)
		return "-";
	if (p->reused)
		return "reused (shrink)";
	if (p->connect_us) {
		snprintf(buf, len, "on need, %.3f ms", p->connect_us / 1e3);
		return buf;
	}
	return "own";
}

void cc_print_comm(FILE *f, const struct cc_comm *c)
{
	char conn[40];
	uint32_t i, l;

	fprintf(f, "communicator %" PRIu64 ": rank %u of %u, pid %u, %s", c->id, c->rank,
		c->nranks, c->pid, cc_comm_state_name(c->state));
	if (c->err)
		fprintf(f, " (%s)", errno_name(c->err));
	fprintf(f, "\n  ops %" PRIu64 ", bytes %" PRIu64 ", errors %" PRIu64 ", timeouts %"
		PRIu64 ", in flight %u\n", c->ops, c->bytes, c->errors, c->timeouts, c->inflight);
	fprintf(f, "  chunk_bytes %u, slots %u, timeout_ms %u, kernel memory %" PRIu64
		" bytes (worst case charged)\n", c->chunk_bytes, c->slots, c->timeout_ms,
		c->mem_bytes);
	if (c->has_unique_id) {
		fprintf(f, "  id ");
		for (i = 0; i < sizeof(c->unique_id); i++)
			fprintf(f, "%02x", c->unique_id[i]);
		fprintf(f, "\n");
	}
	if (c->has_fault) {
		char why[384];

		if (coll_fault_format(&c->fault, c->rank, NULL, NULL, kc_algo_name, why,
				      sizeof(why)))
			fprintf(f, "  failed at operation %" PRIu64 ": %s\n",
				(uint64_t)c->fault.op_id, why);
	}
	if (c->has_auth && c->auth == KCOLL_COMM_AUTH_HMAC_SHA256)
		fprintf(f, "  authenticated: every peer proved the secret (HMAC-SHA256)");
	else if (c->has_auth)
		fprintf(f, "  UNAUTHENTICATED: no secret, peers admitted by address alone");
	if (c->has_auth)
		fprintf(f, "; refused %" PRIu64 " connection%s\n", c->refused,
			c->refused == 1 ? "" : "s");
	if (c->npeers) {
		fprintf(f, "peers:\n  %-6s %-11s %-7s %-5s %s\n", "rank", "state", "server", "pod",
			"connection");
		for (i = 0; i < c->npeers; i++)
			fprintf(f, "  %-6u %-11s %-7u %-5u %s\n", c->peers[i].rank,
				c->peers[i].rank == c->rank ? "self" :
				cc_peer_state_name(c->peers[i].state),
				c->peers[i].server, c->peers[i].pod,
				peer_connection(&c->peers[i], c->rank, conn, sizeof(conn)));
	}
	fprintf(f, "last operations (oldest first):\n");
	if (!c->nlast)
		fprintf(f, "  (none yet)\n");
	else
		fprintf(f, "  %-8s %-14s %12s %14s  %-9s %-9s %-9s %12s  %s\n", "op_id", "op",
			"count", "bytes", "level0", "level1", "level2", "time_us", "status");
	for (i = 0; i < c->nlast; i++)
		print_lastop(f, &c->last[i]);
	if (c->has_model) {
		fprintf(f, "link model (alpha_ns, Gbit/s, reduce Gbit/s):\n");
		for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
			fprintf(f, "  %s %.0f, %.1f, %.1f\n", level_names[l],
				(double)c->link[l].alpha_fs / 1e6,
				c->link[l].beta_fs ? 8e6 / (double)c->link[l].beta_fs : 0.0,
				c->link[l].gamma_fs ? 8e6 / (double)c->link[l].gamma_fs : 0.0);
		fprintf(f, "  level2 convergence %.2f\n", c->conv_q8 / 256.0);
	}
	if (c->has_algos) {
		fprintf(f, "configured algorithms (NA: chosen by the model per operation; "
			"X>NA: X cannot run it):\n");
		for (i = 0; i < KCOLL_OP_COUNT; i++) {
			char a[3][24];

			for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
				configured_algo(&c->algos[i], l, a[l], sizeof(a[l]));
			fprintf(f, "  %-14s %-9s %-9s %s\n", op_name(i), a[0], a[1], a[2]);
		}
	}
}

static json_object *j_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *lastop_json(const struct cc_lastop *l)
{
	json_object *o = json_object_new_object(), *a = json_object_new_object();
	uint32_t i;

	add(o, "op_id", j_u64(l->id));
	add(o, "op", json_object_new_string(op_name(l->op)));
	add(o, "count", j_u64(l->count));
	add(o, "bytes", j_u64(l->bytes));
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++)
		add(a, level_names[i], l->algo[i] ? json_object_new_string(
			kc_cfg_algo_token(l->algo[i])) : NULL);
	add(o, "algo", a);
	add(o, "duration_ns", j_u64(l->duration_ns));
	add(o, "status", json_object_new_string(errno_name(l->status)));
	add(o, "errno", json_object_new_int((int)l->status));
	a = json_object_new_array();
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++)
		if (l->fallback & (1u << i))
			json_object_array_add(a, json_object_new_string(level_names[i]));
	add(o, "fallback", a);
	add(o, "note", l->fallback ? json_object_new_string(l->note) : NULL);
	return o;
}

json_object *cc_comm_json(const struct cc_comm *c, bool detail)
{
	json_object *o = json_object_new_object(), *a;
	uint32_t i, l;

	add(o, "comm", j_u64(c->id));
	add(o, "pid", j_u64(c->pid));
	add(o, "rank", j_u64(c->rank));
	add(o, "nranks", j_u64(c->nranks));
	add(o, "state", json_object_new_string(cc_comm_state_name(c->state)));
	add(o, "error", c->err ? json_object_new_string(errno_name(c->err)) : NULL);
	add(o, "ops", j_u64(c->ops));
	add(o, "bytes", j_u64(c->bytes));
	add(o, "errors", j_u64(c->errors));
	add(o, "timeouts", j_u64(c->timeouts));
	add(o, "inflight", j_u64(c->inflight));
	if (c->has_auth) {
		add(o, "auth", json_object_new_string(c->auth == KCOLL_COMM_AUTH_HMAC_SHA256 ?
						       "hmac-sha256" : "address"));
		add(o, "refused", j_u64(c->refused));
	}
	if (!detail)
		return o;
	if (c->has_fault) {
		struct json_object *fo = json_object_new_object();
		char why[384];

		coll_fault_format(&c->fault, c->rank, NULL, NULL, kc_algo_name, why, sizeof(why));
		add(fo, "op_id", json_object_new_uint64(c->fault.op_id));
		add(fo, "errno", json_object_new_int(-c->fault.status));
		add(fo, "kind", json_object_new_int((int)c->fault.kind));
		add(fo, "rank", json_object_new_int64(c->fault.rank));
		add(fo, "reporter", json_object_new_int64(c->fault.reporter));
		add(fo, "text", json_object_new_string(why));
		add(o, "fault", fo);
	}
	if (c->has_unique_id) {
		char hex[2 * sizeof(c->unique_id) + 1];

		for (i = 0; i < sizeof(c->unique_id); i++)
			snprintf(hex + 2 * i, 3, "%02x", c->unique_id[i]);
		add(o, "unique_id", json_object_new_string(hex));
	}
	add(o, "chunk_bytes", j_u64(c->chunk_bytes));
	add(o, "slots", j_u64(c->slots));
	add(o, "timeout_ms", j_u64(c->timeout_ms));
	add(o, "mem_bytes", j_u64(c->mem_bytes));
	a = json_object_new_array();
	for (i = 0; i < c->npeers; i++) {
		json_object *p = json_object_new_object();

		add(p, "rank", j_u64(c->peers[i].rank));
		add(p, "state", json_object_new_string(c->peers[i].rank == c->rank ? "self" :
			cc_peer_state_name(c->peers[i].state)));
		add(p, "server", j_u64(c->peers[i].server));
		add(p, "pod", j_u64(c->peers[i].pod));
		add(p, "reused", json_object_new_boolean(c->peers[i].reused));
		add(p, "connect_us", j_u64(c->peers[i].connect_us));
		json_object_array_add(a, p);
	}
	add(o, "peers", a);
	a = json_object_new_array();
	for (i = 0; i < c->nlast; i++)
		json_object_array_add(a, lastop_json(&c->last[i]));
	add(o, "last_ops", a);
	if (c->has_model) {
		json_object *m = json_object_new_object();

		for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
			json_object *k = json_object_new_object();

			add(k, "alpha_fs", j_u64(c->link[l].alpha_fs));
			add(k, "beta_fs", j_u64(c->link[l].beta_fs));
			add(k, "gamma_fs", j_u64(c->link[l].gamma_fs));
			add(m, level_names[l], k);
		}
		add(m, "conv_q8", j_u64(c->conv_q8));
		add(o, "model", m);
	}
	if (c->has_algos) {
		json_object *m = json_object_new_object();

		for (i = 0; i < KCOLL_OP_COUNT; i++) {
			json_object *k = json_object_new_object();

			json_object *cf = json_object_new_object();

			for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
				add(k, level_names[l], json_object_new_string(
					kc_cfg_algo_token(c->algos[i].algo[l])));
				add(cf, level_names[l], json_object_new_string(
					kc_cfg_algo_token(c->algos[i].conf[l])));
			}
			add(k, "pipe_bytes", j_u64(c->algos[i].pipe_bytes));
			add(k, "configured", cf);
			add(m, op_name(i), k);
		}
		add(o, "algos", m);
	}
	return o;
}

static const char *family_name(uint32_t family)
{
	return family == KCOLL_AF_INET6 ? "IPv6" : "IPv4";
}

void cc_print_node(FILE *f, const struct cc_node *nd)
{
	uint32_t i, n = nd->nlisteners < CC_NODE_LISTENERS ? nd->nlisteners : CC_NODE_LISTENERS;

	fprintf(f, "%-20s", "listeners");
	if (!nd->nlisteners)
		fprintf(f, " (none: no communicator here accepts connections)\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%s port %u (%s, every address): %u communicator%s\n", i ? "                    " : "",
			nd->listeners[i].port, family_name(nd->listeners[i].family),
			nd->listeners[i].comms, nd->listeners[i].comms == 1 ? "" : "s");
	if (nd->nlisteners > n)
		fprintf(f, "%-20s and %u more\n", "", nd->nlisteners - n);
	fprintf(f, "%-20s %" PRIu64 " unknown id, %" PRIu64 " destroyed id, %" PRIu64
		" not kcoll's; %" PRIu64 " duplicate id%s at creation\n", "refused at listeners",
		nd->refused_unknown, nd->refused_stale, nd->refused_bad, nd->dup_ids,
		nd->dup_ids == 1 ? "" : "s");
}

json_object *cc_node_json(const struct cc_node *nd)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	uint32_t i, n = nd->nlisteners < CC_NODE_LISTENERS ? nd->nlisteners : CC_NODE_LISTENERS;

	for (i = 0; i < n; i++) {
		json_object *l = json_object_new_object();

		add(l, "port", j_u64(nd->listeners[i].port));
		add(l, "family", json_object_new_string(family_name(nd->listeners[i].family)));
		add(l, "communicators", j_u64(nd->listeners[i].comms));
		json_object_array_add(a, l);
	}
	add(o, "listeners", a);
	add(o, "communicators", j_u64(nd->comms));
	add(o, "refused_unknown_id", j_u64(nd->refused_unknown));
	add(o, "refused_destroyed_id", j_u64(nd->refused_stale));
	add(o, "refused_not_kcoll", j_u64(nd->refused_bad));
	add(o, "duplicate_ids", j_u64(nd->dup_ids));
	return o;
}

void cc_print_event(FILE *f, const struct cc_event *ev, const char *stamp)
{
	fprintf(f, "%s %-9s comm %" PRIu64 " rank %u/%u pid %u", stamp, cc_event_name(ev->cmd),
		ev->id, ev->rank, ev->nranks, ev->pid);
	switch (ev->cmd) {
	case KCOLL_CMD_EVENT_COMM_DEL:
		fprintf(f, " ops %" PRIu64 " errors %" PRIu64, ev->ops, ev->errors);
		if (ev->err)
			fprintf(f, " (%s)", errno_name(ev->err));
		break;
	case KCOLL_CMD_EVENT_OP_FAIL:
		fprintf(f, " op %" PRIu64 " %s count %" PRIu64 ": %s", ev->op.id,
			op_name(ev->op.op), ev->op.count, errno_name(ev->op.status));
		break;
	case KCOLL_CMD_EVENT_PEER_LOST:
		fprintf(f, " peer %u: %s", ev->peer, errno_name(ev->err));
		break;
	case KCOLL_CMD_EVENT_STALL:
		fprintf(f, " op %" PRIu64 " %s waits for rank %u", (uint64_t)ev->stall.op_id,
			op_name(ev->stall.op), ev->peer);
		if (ev->stall.culprit != UINT32_MAX)
			fprintf(f, ": rank %u to blame (%u)", ev->stall.culprit, ev->stall.why);
		break;
	case KCOLL_CMD_EVENT_ALGO_FALLBACK: {
		char lv[32];

		fallback_levels(ev->op.fallback, lv, sizeof(lv));
		fprintf(f, " op %" PRIu64 " %s count %" PRIu64 ": %s not as configured: %s",
			ev->op.id, op_name(ev->op.op), ev->op.count, lv, ev->op.note);
		break;
	}
	}
	fprintf(f, "\n");
}

json_object *cc_event_json(const struct cc_event *ev, const char *stamp)
{
	json_object *o = json_object_new_object();

	add(o, "time", json_object_new_string(stamp));
	add(o, "event", json_object_new_string(cc_event_name(ev->cmd)));
	add(o, "comm", j_u64(ev->id));
	add(o, "pid", j_u64(ev->pid));
	add(o, "rank", j_u64(ev->rank));
	add(o, "nranks", j_u64(ev->nranks));
	if (ev->has_counters) {
		add(o, "ops", j_u64(ev->ops));
		add(o, "errors", j_u64(ev->errors));
		add(o, "error", ev->err ? json_object_new_string(errno_name(ev->err)) : NULL);
	}
	if (ev->cmd == KCOLL_CMD_EVENT_PEER_LOST) {
		add(o, "peer", j_u64(ev->peer));
		add(o, "error", json_object_new_string(errno_name(ev->err)));
	}
	if (ev->has_op)
		add(o, "op", lastop_json(&ev->op));
	if (ev->has_stall) {
		add(o, "op_id", j_u64(ev->stall.op_id));
		add(o, "waits_for", j_u64(ev->peer));
		add(o, "culprit", ev->stall.culprit == UINT32_MAX ? NULL :
		    j_u64(ev->stall.culprit));
		add(o, "reason", j_u64(ev->stall.why));
	}
	return o;
}
