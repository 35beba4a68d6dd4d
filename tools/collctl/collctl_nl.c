// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "kcoll" through libnl-genl-3 (see
 * collctl_nl.h).  Attributes are checked for their length before they are
 * read: a short or missing one reads as 0 rather than past the message.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "collctl_nl.h"

struct cc_nl {
	struct nl_sock *sk;
	int family;
};

/* What a receive loop collects, and the kernel's error if one came. */
struct cc_recv {
	struct cc_comm *comms;
	size_t n, cap;
	int kerr;		/* negative errno from an NLMSG_ERROR */
	int perr;		/* a message that did not parse */
	int (*fn)(const struct cc_event *ev, void *arg);
	void *arg;
	bool done;		/* fn asked to stop */
	struct cc_node *node;	/* KCOLL_CMD_NODE_GET */
	bool got_node;
	int (*raw)(struct nlmsghdr *nlh, void *arg);	/* cc_nl_dump() */
	void *raw_arg;
};

static uint32_t a_u32(const struct nlattr *a)
{
	return a && nla_len(a) >= (int)sizeof(uint32_t) ? nla_get_u32((struct nlattr *)a) : 0;
}

static uint64_t a_u64(const struct nlattr *a)
{
	return a && nla_len(a) >= (int)sizeof(uint64_t) ? nla_get_u64((struct nlattr *)a) : 0;
}

/* A string attribute into buf, cut to fit and always terminated; "" when absent. */
static void a_str(const struct nlattr *a, char *buf, size_t len)
{
	size_t n = a && nla_len(a) > 0 ? (size_t)nla_len(a) : 0;

	if (n >= len)
		n = len - 1;
	if (n)
		memcpy(buf, nla_data(a), n);
	buf[n] = '\0';
}

static int parse_nested(struct nlattr **tb, int max, struct nlattr *nest)
{
	return nla_parse_nested(tb, max, nest, NULL) ? -EINVAL : 0;
}

static int parse_lastop(struct nlattr *nest, struct cc_lastop *l)
{
	struct nlattr *tb[KCOLL_LASTOP_A_MAX + 1];

	if (parse_nested(tb, KCOLL_LASTOP_A_MAX, nest))
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->id = a_u64(tb[KCOLL_LASTOP_A_ID]);
	l->op = a_u32(tb[KCOLL_LASTOP_A_OP]);
	l->count = a_u64(tb[KCOLL_LASTOP_A_COUNT]);
	l->bytes = a_u64(tb[KCOLL_LASTOP_A_BYTES]);
	l->algo[KCOLL_LEVEL0] = a_u32(tb[KCOLL_LASTOP_A_ALGO_L0]);
	l->algo[KCOLL_LEVEL1] = a_u32(tb[KCOLL_LASTOP_A_ALGO_L1]);
	l->algo[KCOLL_LEVEL2] = a_u32(tb[KCOLL_LASTOP_A_ALGO_L2]);
	l->status = a_u32(tb[KCOLL_LASTOP_A_STATUS]);
	l->duration_ns = a_u64(tb[KCOLL_LASTOP_A_DURATION_NS]);
	l->fallback = a_u32(tb[KCOLL_LASTOP_A_FALLBACK]);
	a_str(tb[KCOLL_LASTOP_A_NOTE], l->note, sizeof(l->note));
	return 0;
}

static int parse_peers(struct nlattr *nest, struct cc_comm *c)
{
	struct nlattr *pos, *tb[KCOLL_PEER_A_MAX + 1];
	uint32_t n = 0;
	int rem;

	nla_for_each_nested(pos, nest, rem)
		n++;
	c->peers = calloc(n ? n : 1, sizeof(*c->peers));
	if (!c->peers)
		return -ENOMEM;
	nla_for_each_nested(pos, nest, rem) {
		struct cc_peer *p = &c->peers[c->npeers];

		if (nla_type(pos) != KCOLL_A_COMM_PEER || parse_nested(tb, KCOLL_PEER_A_MAX, pos))
			return -EINVAL;
		p->rank = a_u32(tb[KCOLL_PEER_A_RANK]);
		p->state = a_u32(tb[KCOLL_PEER_A_STATE]);
		p->server = a_u32(tb[KCOLL_PEER_A_SERVER]);
		p->pod = a_u32(tb[KCOLL_PEER_A_POD]);
		p->reused = tb[KCOLL_PEER_A_REUSED] && nla_get_u8(tb[KCOLL_PEER_A_REUSED]);
		p->connect_us = a_u32(tb[KCOLL_PEER_A_CONNECT_US]);
		c->npeers++;
	}
	return 0;
}

static int parse_last_ops(struct nlattr *nest, struct cc_comm *c)
{
	struct nlattr *pos;
	int rem;

	nla_for_each_nested(pos, nest, rem) {
		if (nla_type(pos) != KCOLL_A_COMM_LAST_OP || c->nlast >= KCOLL_GENL_LAST_OPS ||
		    parse_lastop(pos, &c->last[c->nlast]))
			return -EINVAL;
		c->nlast++;
	}
	return 0;
}

static int parse_model(struct nlattr *nest, struct cc_comm *c)
{
	struct nlattr *pos, *tb[KCOLL_LINK_A_MAX + 1];
	int rem;

	nla_for_each_nested(pos, nest, rem) {
		uint32_t l;

		if (nla_type(pos) == KCOLL_A_COMM_CONV_Q8) {
			c->conv_q8 = a_u32(pos);
			continue;
		}
		if (nla_type(pos) != KCOLL_A_COMM_LINK || parse_nested(tb, KCOLL_LINK_A_MAX, pos))
			return -EINVAL;
		l = a_u32(tb[KCOLL_LINK_A_LEVEL]);
		if (l >= KCOLL_LEVEL_COUNT)
			return -EINVAL;
		c->link[l].alpha_fs = a_u64(tb[KCOLL_LINK_A_ALPHA_FS]);
		c->link[l].beta_fs = a_u64(tb[KCOLL_LINK_A_BETA_FS]);
		c->link[l].gamma_fs = a_u64(tb[KCOLL_LINK_A_GAMMA_FS]);
	}
	c->has_model = true;
	return 0;
}

static int parse_algos(struct nlattr *nest, struct cc_comm *c)
{
	struct nlattr *pos, *tb[KCOLL_ALGO_A_MAX + 1];
	int rem;

	nla_for_each_nested(pos, nest, rem) {
		uint32_t op;

		if (nla_type(pos) != KCOLL_A_COMM_ALGO || parse_nested(tb, KCOLL_ALGO_A_MAX, pos))
			return -EINVAL;
		op = a_u32(tb[KCOLL_ALGO_A_OP]);
		if (op >= KCOLL_OP_COUNT)
			return -EINVAL;
		c->algos[op].algo[KCOLL_LEVEL0] = a_u32(tb[KCOLL_ALGO_A_L0]);
		c->algos[op].algo[KCOLL_LEVEL1] = a_u32(tb[KCOLL_ALGO_A_L1]);
		c->algos[op].algo[KCOLL_LEVEL2] = a_u32(tb[KCOLL_ALGO_A_L2]);
		c->algos[op].pipe_bytes = a_u64(tb[KCOLL_ALGO_A_PIPE_BYTES]);
		c->algos[op].conf[KCOLL_LEVEL0] = a_u32(tb[KCOLL_ALGO_A_CONF_L0]);
		c->algos[op].conf[KCOLL_LEVEL1] = a_u32(tb[KCOLL_ALGO_A_CONF_L1]);
		c->algos[op].conf[KCOLL_LEVEL2] = a_u32(tb[KCOLL_ALGO_A_CONF_L2]);
	}
	c->has_algos = true;
	return 0;
}

int cc_parse_comm(struct nlmsghdr *nlh, struct cc_comm *c)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KCOLL_A_MAX + 1];
	int ret;

	memset(c, 0, sizeof(*c));
	if (!genlmsg_valid_hdr(nlh, 0) || gh->cmd != KCOLL_CMD_COMM_GET ||
	    genlmsg_parse(nlh, 0, tb, KCOLL_A_MAX, NULL) || !tb[KCOLL_A_COMM_ID])
		return -EINVAL;
	c->id = a_u64(tb[KCOLL_A_COMM_ID]);
	c->pid = a_u32(tb[KCOLL_A_COMM_PID]);
	c->rank = a_u32(tb[KCOLL_A_COMM_RANK]);
	c->nranks = a_u32(tb[KCOLL_A_COMM_NRANKS]);
	c->state = a_u32(tb[KCOLL_A_COMM_STATE]);
	c->err = a_u32(tb[KCOLL_A_COMM_ERR]);
	c->ops = a_u64(tb[KCOLL_A_COMM_OPS]);
	c->bytes = a_u64(tb[KCOLL_A_COMM_BYTES]);
	c->errors = a_u64(tb[KCOLL_A_COMM_ERRORS]);
	c->timeouts = a_u64(tb[KCOLL_A_COMM_TIMEOUTS]);
	c->inflight = a_u32(tb[KCOLL_A_COMM_INFLIGHT]);
	c->chunk_bytes = a_u32(tb[KCOLL_A_COMM_CHUNK_BYTES]);
	c->slots = a_u32(tb[KCOLL_A_COMM_SLOTS]);
	c->timeout_ms = a_u32(tb[KCOLL_A_COMM_TIMEOUT_MS]);
	c->has_auth = tb[KCOLL_A_COMM_AUTH];
	c->auth = a_u32(tb[KCOLL_A_COMM_AUTH]);
	c->refused = a_u64(tb[KCOLL_A_COMM_REFUSED]);
	/* A shorter struct (an older module) is zero-extended. */
	if (tb[KCOLL_A_COMM_FAULT] && nla_len(tb[KCOLL_A_COMM_FAULT]) >= 16) {
		size_t n = (size_t)nla_len(tb[KCOLL_A_COMM_FAULT]);

		c->has_fault = true;
		memcpy(&c->fault, nla_data(tb[KCOLL_A_COMM_FAULT]),
		       n < sizeof(c->fault) ? n : sizeof(c->fault));
	}
	c->stall_ms = a_u32(tb[KCOLL_A_COMM_STALL_MS]);
	c->mem_bytes = a_u64(tb[KCOLL_A_COMM_MEM_BYTES]);
	if (tb[KCOLL_A_COMM_STALL] && nla_len(tb[KCOLL_A_COMM_STALL]) >= 16) {
		size_t n = (size_t)nla_len(tb[KCOLL_A_COMM_STALL]);

		c->has_stall = true;
		memcpy(&c->stall, nla_data(tb[KCOLL_A_COMM_STALL]),
		       n < sizeof(c->stall) ? n : sizeof(c->stall));
	}
	if (tb[KCOLL_A_COMM_UNIQUE_ID] &&
	    nla_len(tb[KCOLL_A_COMM_UNIQUE_ID]) == (int)sizeof(c->unique_id)) {
		memcpy(c->unique_id, nla_data(tb[KCOLL_A_COMM_UNIQUE_ID]), sizeof(c->unique_id));
		c->has_unique_id = true;
	}
	ret = tb[KCOLL_A_COMM_PEERS] ? parse_peers(tb[KCOLL_A_COMM_PEERS], c) : 0;
	if (!ret && tb[KCOLL_A_COMM_LAST_OPS])
		ret = parse_last_ops(tb[KCOLL_A_COMM_LAST_OPS], c);
	if (!ret && tb[KCOLL_A_COMM_MODEL])
		ret = parse_model(tb[KCOLL_A_COMM_MODEL], c);
	if (!ret && tb[KCOLL_A_COMM_ALGOS])
		ret = parse_algos(tb[KCOLL_A_COMM_ALGOS], c);
	if (ret)
		cc_comm_release(c);
	return ret;
}

int cc_parse_event(struct nlmsghdr *nlh, struct cc_event *ev)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KCOLL_A_MAX + 1];

	memset(ev, 0, sizeof(*ev));
	if (!genlmsg_valid_hdr(nlh, 0) ||
	    ((gh->cmd < KCOLL_CMD_EVENT_COMM_NEW || gh->cmd > KCOLL_CMD_EVENT_ALGO_FALLBACK) &&
	     gh->cmd != KCOLL_CMD_EVENT_STALL) ||
	    genlmsg_parse(nlh, 0, tb, KCOLL_A_MAX, NULL) || !tb[KCOLL_A_COMM_ID])
		return -EINVAL;
	ev->cmd = gh->cmd;
	ev->id = a_u64(tb[KCOLL_A_COMM_ID]);
	ev->pid = a_u32(tb[KCOLL_A_COMM_PID]);
	ev->rank = a_u32(tb[KCOLL_A_COMM_RANK]);
	ev->nranks = a_u32(tb[KCOLL_A_COMM_NRANKS]);
	ev->err = a_u32(tb[KCOLL_A_COMM_ERR]);
	ev->peer = a_u32(tb[KCOLL_A_EVENT_PEER]);
	if (tb[KCOLL_A_COMM_OPS]) {
		ev->has_counters = true;
		ev->state = a_u32(tb[KCOLL_A_COMM_STATE]);
		ev->ops = a_u64(tb[KCOLL_A_COMM_OPS]);
		ev->errors = a_u64(tb[KCOLL_A_COMM_ERRORS]);
	}
	if (tb[KCOLL_A_COMM_STALL] && nla_len(tb[KCOLL_A_COMM_STALL]) >= 16) {
		size_t n = (size_t)nla_len(tb[KCOLL_A_COMM_STALL]);

		ev->has_stall = true;
		memcpy(&ev->stall, nla_data(tb[KCOLL_A_COMM_STALL]),
		       n < sizeof(ev->stall) ? n : sizeof(ev->stall));
	}
	if (tb[KCOLL_A_EVENT_OP]) {
		if (parse_lastop(tb[KCOLL_A_EVENT_OP], &ev->op))
			return -EINVAL;
		ev->has_op = true;
	}
	return 0;
}

static int parse_listeners(struct nlattr *nest, struct cc_node *nd)
{
	struct nlattr *pos, *tb[KCOLL_LISTEN_A_MAX + 1];
	int rem;

	nla_for_each_nested(pos, nest, rem) {
		struct cc_listener *l;

		if (nla_type(pos) != KCOLL_A_NODE_LISTENER ||
		    parse_nested(tb, KCOLL_LISTEN_A_MAX, pos))
			return -EINVAL;
		nd->nlisteners++;
		if (nd->nlisteners > CC_NODE_LISTENERS)
			continue;	/* counted, not kept */
		l = &nd->listeners[nd->nlisteners - 1];
		l->port = a_u32(tb[KCOLL_LISTEN_A_PORT]);
		l->family = a_u32(tb[KCOLL_LISTEN_A_FAMILY]);
		l->comms = a_u32(tb[KCOLL_LISTEN_A_COMMS]);
	}
	return 0;
}

int cc_parse_node(struct nlmsghdr *nlh, struct cc_node *nd)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KCOLL_A_MAX + 1];

	memset(nd, 0, sizeof(*nd));
	if (!genlmsg_valid_hdr(nlh, 0) || gh->cmd != KCOLL_CMD_NODE_GET ||
	    genlmsg_parse(nlh, 0, tb, KCOLL_A_MAX, NULL) || !tb[KCOLL_A_NODE_COMMS])
		return -EINVAL;
	nd->comms = a_u32(tb[KCOLL_A_NODE_COMMS]);
	nd->refused_unknown = a_u64(tb[KCOLL_A_NODE_REFUSED_UNKNOWN]);
	nd->refused_stale = a_u64(tb[KCOLL_A_NODE_REFUSED_STALE]);
	nd->refused_bad = a_u64(tb[KCOLL_A_NODE_REFUSED_BAD]);
	nd->dup_ids = a_u64(tb[KCOLL_A_NODE_DUP_IDS]);
	return tb[KCOLL_A_NODE_LISTENERS] ? parse_listeners(tb[KCOLL_A_NODE_LISTENERS], nd) : 0;
}

void cc_comm_release(struct cc_comm *c)
{
	free(c->peers);
	c->peers = NULL;
	c->npeers = 0;
}

void cc_comms_free(struct cc_comm *comms, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cc_comm_release(&comms[i]);
	free(comms);
}

/* ------------------------------------------------------------- socket */

static void set_err(char *err, size_t errlen, const char *fmt, const char *what, int e)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, what, strerror(e < 0 ? -e : e));
}

int cc_parse_comm_id(const char *prog, const char *s, uint64_t *id)
{
	char *end;

	errno = 0;
	*id = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || !*id) {
		fprintf(stderr, "%s: '%s' is not a communicator id (a number from "
			"'collctl show')\n", prog, s);
		return -EINVAL;
	}
	return 0;
}

int cc_nl_open(struct cc_nl **out, char *err, size_t errlen)
{
	struct cc_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	*out = NULL;
	if (!nl || !(nl->sk = nl_socket_alloc())) {
		free(nl);
		set_err(err, errlen, "%s: %s", "netlink socket", ENOMEM);
		return -ENOMEM;
	}
	ret = genl_connect(nl->sk);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "cannot open a generic netlink socket: %s",
				 nl_geterror(ret));
		cc_nl_close(nl);
		return -EIO;
	}
	nl->family = genl_ctrl_resolve(nl->sk, KCOLL_GENL_NAME);
	if (nl->family < 0) {
		if (err && errlen)
			snprintf(err, errlen, "the generic netlink family '%s' is not registered "
				 "(is the kcoll module loaded? 'modprobe kcoll')", KCOLL_GENL_NAME);
		cc_nl_close(nl);
		return -ENOENT;
	}
	nl_socket_disable_auto_ack(nl->sk);
	*out = nl;
	return 0;
}

void cc_nl_close(struct cc_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct cc_recv *r = arg;

	(void)who;
	r->kerr = e->error ? e->error : -EIO;
	return NL_STOP;
}

static int on_comm(struct nl_msg *msg, void *arg)
{
	struct cc_recv *r = arg;
	struct cc_comm *c;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;

		c = realloc(r->comms, cap * sizeof(*c));
		if (!c) {
			r->perr = -ENOMEM;
			return NL_STOP;
		}
		r->comms = c;
		r->cap = cap;
	}
	if (cc_parse_comm(nlmsg_hdr(msg), &r->comms[r->n])) {
		r->perr = -EPROTO;
		return NL_SKIP;
	}
	r->n++;
	return NL_OK;
}

static int on_node(struct nl_msg *msg, void *arg)
{
	struct cc_recv *r = arg;

	if (cc_parse_node(nlmsg_hdr(msg), r->node)) {
		r->perr = -EPROTO;
		return NL_SKIP;
	}
	r->got_node = true;
	return NL_OK;
}

static int on_raw(struct nl_msg *msg, void *arg)
{
	struct cc_recv *r = arg;
	int ret = r->raw(nlmsg_hdr(msg), r->raw_arg);

	if (ret) {
		r->perr = ret;
		return ret == -EPROTO ? NL_SKIP : NL_STOP;
	}
	return NL_OK;
}

/*
 * Send @cmd (a dump, or not) with KCOLL_A_COMM_ID @id unless 0, and
 * collect the replies with @cb.
 */
static int request(struct cc_nl *nl, uint8_t cmd, bool dump, uint64_t id,
		   nl_recvmsg_msg_cb_t cb, struct cc_recv *r, char *err, size_t errlen)
{
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, dump ? NLM_F_DUMP : 0,
			 cmd, KCOLL_GENL_VERSION) ||
	    ((id || (cmd == KCOLL_CMD_COMM_GET && !dump)) &&
	     nla_put_u64(msg, KCOLL_A_COMM_ID, id))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, cb, r);
	nl_socket_modify_err_cb(nl->sk, NL_CB_CUSTOM, on_error, r);
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		set_err(err, errlen, "%s: %s", "sending to the kcoll family", EIO);
		return -EIO;
	}
	ret = nl_recvmsgs_default(nl->sk);
	if (r->kerr) {
		set_err(err, errlen, "%s: %s", "the kcoll family", r->kerr);
		return r->kerr;
	}
	if (ret < 0) {
		if (err && errlen)
			snprintf(err, errlen, "receiving from the kcoll family: %s", nl_geterror(ret));
		return -EIO;
	}
	if (r->perr) {
		set_err(err, errlen, "%s: %s", "a kcoll family message did not parse", r->perr);
		return r->perr;
	}
	return 0;
}

int cc_nl_node(struct cc_nl *nl, struct cc_node *out, char *err, size_t errlen)
{
	struct cc_recv r = { .node = out };
	int ret = request(nl, KCOLL_CMD_NODE_GET, false, 0, on_node, &r, err, errlen);

	if (ret == -EOPNOTSUPP && err && errlen)
		snprintf(err, errlen, "the loaded kcoll module has no node listeners to report");
	if (!ret && !r.got_node)
		ret = -EPROTO;
	return ret;
}

int cc_nl_dump(struct cc_nl *nl, uint8_t cmd, uint64_t id,
	       int (*fn)(struct nlmsghdr *nlh, void *arg), void *arg, char *err, size_t errlen)
{
	struct cc_recv r = { .raw = fn, .raw_arg = arg };

	return request(nl, cmd, true, id, on_raw, &r, err, errlen);
}

int cc_nl_list(struct cc_nl *nl, struct cc_comm **comms, size_t *n, char *err, size_t errlen)
{
	struct cc_recv r = { 0 };
	int ret = request(nl, KCOLL_CMD_COMM_GET, true, 0, on_comm, &r, err, errlen);

	if (ret) {
		cc_comms_free(r.comms, r.n);
		return ret;
	}
	*comms = r.comms;
	*n = r.n;
	return 0;
}

int cc_nl_get(struct cc_nl *nl, uint64_t id, struct cc_comm *out, char *err, size_t errlen)
{
	struct cc_recv r = { 0 };
	int ret = request(nl, KCOLL_CMD_COMM_GET, false, id, on_comm, &r, err, errlen);

	if (!ret && r.n != 1)
		ret = -EPROTO;
	if (ret == -ENOENT && err && errlen)
		snprintf(err, errlen, "no communicator %llu", (unsigned long long)id);
	if (ret) {
		cc_comms_free(r.comms, r.n);
		return ret;
	}
	*out = r.comms[0];
	free(r.comms);
	return 0;
}

/* ------------------------------------------------------------ monitor */

static int on_event(struct nl_msg *msg, void *arg)
{
	struct cc_recv *r = arg;
	struct cc_event ev;

	if (cc_parse_event(nlmsg_hdr(msg), &ev))
		return NL_SKIP;		/* a newer module's event: not ours to judge */
	if (r->fn(&ev, r->arg)) {
		r->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cc_nl_monitor(struct cc_nl *nl, int (*fn)(const struct cc_event *ev, void *arg), void *arg,
		  volatile sig_atomic_t *stop, unsigned int timeout_ms, char *err, size_t errlen)
{
	struct cc_recv r = { .fn = fn, .arg = arg };
	uint64_t end = timeout_ms ? now_ms() + timeout_ms : 0;
	int grp, ret;

	grp = genl_ctrl_resolve_grp(nl->sk, KCOLL_GENL_NAME, KCOLL_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		if (err && errlen)
			snprintf(err, errlen, "the kcoll family has no '%s' group: %s",
				 KCOLL_GENL_MCGRP_EVENTS, nl_geterror(grp));
		return -ENOENT;
	}
	ret = nl_socket_add_membership(nl->sk, grp);
	if (ret == -NLE_PERM) {
		/* The module lets only CAP_NET_ADMIN join (GENL_MCAST_CAP_NET_ADMIN). */
		if (err && errlen)
			snprintf(err, errlen, "not allowed to join the '%s' group: its events "
				 "are about every user's communicators, so it needs CAP_NET_ADMIN "
				 "(run collctl monitor as root); 'collctl show' lists your own",
				 KCOLL_GENL_MCGRP_EVENTS);
		return -EPERM;
	}
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "cannot join the '%s' group: %s",
				 KCOLL_GENL_MCGRP_EVENTS, nl_geterror(ret));
		return -EPERM;
	}
	nl_socket_disable_seq_check(nl->sk);
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, on_event, &r);
	while (!r.done && !(stop && *stop)) {
		struct pollfd p = { .fd = nl_socket_get_fd(nl->sk), .events = POLLIN };
		int wait = 1000;

		if (end) {
			uint64_t t = now_ms();

			if (t >= end)
				return -ETIMEDOUT;
			if (end - t < (uint64_t)wait)
				wait = (int)(end - t);
		}
		ret = poll(&p, 1, wait);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			set_err(err, errlen, "%s: %s", "poll", errno);
			return -errno;
		}
		if (!ret)
			continue;
		ret = nl_recvmsgs_default(nl->sk);
		if (ret < 0 && ret != -NLE_INTR && ret != -NLE_AGAIN) {
			if (err && errlen)
				snprintf(err, errlen, "receiving events: %s", nl_geterror(ret));
			return -EIO;
		}
	}
	return 0;
}
