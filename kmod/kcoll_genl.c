// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "kcoll" (uapi/linux/kcoll_genl.h): what
 * collctl show and collctl monitor see.  KCOLL_CMD_COMM_GET lists the
 * communicators (dump) or returns one; the "events" multicast group
 * carries communicator creation and destruction, the first failed
 * operation of a communicator, lost peers, and the first operation of
 * each kind that did not run the algorithm the communicator's algo
 * string configures -- never a message per successful operation, so the
 * data path stays quiet.  What did not run and why is algo/'s plan
 * note, passed along as it is.
 *
 * KCOLL_CMD_HISTORY_GET dumps the flight records (kcoll_history.c) of
 * the live communicators and of those destroyed not long ago; a record
 * larger than a message goes out in several, with the same id.
 *
 * Messages are built under the communicator's lock (kcoll_comm_visit*),
 * so every counter in one message belongs to the same instant.
 *
 * Who sees what, as ss and /proc show other users' sockets and processes:
 * a requester sees the communicators its user created (the owner is the
 * creator's effective uid, the requester the user that opened the netlink
 * socket); other users' need CAP_NET_ADMIN.  A GET of someone else's
 * communicator is ENOENT, as for one that does not exist.  The events
 * group tells about every user's communicators: joining it needs
 * CAP_NET_ADMIN (GENL_MCAST_CAP_NET_ADMIN).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>

#include "kcoll.h"

enum kcoll_genl_mcgrp {
	KCOLL_GENL_MCGRP_EVENTS_ID,
};

static const struct nla_policy kcoll_genl_policy[KCOLL_A_MAX + 1] = {
	[KCOLL_A_COMM_ID] = { .type = NLA_U64 },
};

/*
 * genetlink checks the flag when a socket joins (Linux 6.7 and the stable
 * series it was backported to; Debian's 6.1 and 6.12 have it).  Without
 * it every user would get every user's events: do not build.
 */
#ifndef GENL_MCAST_CAP_NET_ADMIN
#error "kcoll needs GENL_MCAST_CAP_NET_ADMIN (Linux 6.7 or a stable backport)"
#endif

static const struct genl_multicast_group kcoll_genl_mcgrps[] = {
	[KCOLL_GENL_MCGRP_EVENTS_ID] = {
		.name = KCOLL_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family kcoll_genl_family;

/* What one reply message is built from. */
struct kcoll_genl_msg {
	struct sk_buff *skb;
	u32 portid;
	u32 seq;
	int flags;
	bool peers;		/* include KCOLL_A_COMM_PEERS */
	kuid_t uid;		/* the requester: sees its own communicators */
	bool all;		/* CAP_NET_ADMIN: sees every user's */
	u32 nranks;		/* kcoll_genl_get_size() */
};

static_assert(KC_PLAN_MAX_NOTE <= KCOLL_GENL_NOTE_MAX);

/* Who asks, from the request: the user that opened the socket, and its capability. */
static void kcoll_genl_requester(struct kcoll_genl_msg *m, struct sk_buff *request)
{
	m->uid = NETLINK_CB(request).sk->sk_uid;
	m->all = netlink_net_capable(request, CAP_NET_ADMIN);
}

static bool kcoll_genl_visible(const struct kcoll_genl_msg *m, const struct kcoll_comm *comm)
{
	return m->all || uid_eq(m->uid, comm->uid);
}

static int kcoll_genl_put_lastop(struct sk_buff *skb, int type, const struct kcoll_lastop *l)
{
	struct nlattr *nest = nla_nest_start(skb, type);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KCOLL_LASTOP_A_ID, l->id, KCOLL_LASTOP_A_PAD) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_OP, l->op) ||
	    nla_put_u64_64bit(skb, KCOLL_LASTOP_A_COUNT, l->count, KCOLL_LASTOP_A_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_LASTOP_A_BYTES, l->bytes, KCOLL_LASTOP_A_PAD) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_ALGO_L0, l->algo[KCOLL_LEVEL0]) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_ALGO_L1, l->algo[KCOLL_LEVEL1]) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_ALGO_L2, l->algo[KCOLL_LEVEL2]) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_STATUS, l->status) ||
	    nla_put_u64_64bit(skb, KCOLL_LASTOP_A_DURATION_NS, l->duration_ns,
			      KCOLL_LASTOP_A_PAD) ||
	    nla_put_u32(skb, KCOLL_LASTOP_A_FALLBACK, l->fallback) ||
	    (l->fallback && nla_put_string(skb, KCOLL_LASTOP_A_NOTE, l->note))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int kcoll_genl_put_peers(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	struct nlattr *peers, *p;
	u32 i;

	peers = nla_nest_start(skb, KCOLL_A_COMM_PEERS);
	if (!peers)
		return -EMSGSIZE;
	for (i = 0; i < comm->nranks; i++) {
		p = nla_nest_start(skb, KCOLL_A_COMM_PEER);
		if (!p ||
		    nla_put_u32(skb, KCOLL_PEER_A_RANK, i) ||
		    nla_put_u32(skb, KCOLL_PEER_A_STATE, kcoll_peer_state(comm, i)) ||
		    nla_put_u32(skb, KCOLL_PEER_A_SERVER, comm->ranks[i].server_id) ||
		    nla_put_u32(skb, KCOLL_PEER_A_POD, comm->ranks[i].pod_id) ||
		    nla_put_u8(skb, KCOLL_PEER_A_REUSED, comm->conns[i].reused) ||
		    nla_put_u32(skb, KCOLL_PEER_A_CONNECT_US, READ_ONCE(comm->conns[i].connect_us)))
			return -EMSGSIZE;
		nla_nest_end(skb, p);
	}
	nla_nest_end(skb, peers);
	return 0;
}

static int kcoll_genl_put_last_ops(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	struct nlattr *nest;
	u32 i;

	nest = nla_nest_start(skb, KCOLL_A_COMM_LAST_OPS);
	if (!nest)
		return -EMSGSIZE;
	/* oldest first */
	for (i = 0; i < comm->stats.last_n; i++)
		if (kcoll_genl_put_lastop(skb, KCOLL_A_COMM_LAST_OP,
					  kcoll_stats_last(&comm->stats, i)))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int kcoll_genl_put_model(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	struct nlattr *nest, *l;
	u32 i;

	nest = nla_nest_start(skb, KCOLL_A_COMM_MODEL);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++) {
		const struct kc_cost_link *lk = &comm->model.lv[i];

		l = nla_nest_start(skb, KCOLL_A_COMM_LINK);
		if (!l ||
		    nla_put_u32(skb, KCOLL_LINK_A_LEVEL, i) ||
		    nla_put_u64_64bit(skb, KCOLL_LINK_A_ALPHA_FS, lk->alpha, KCOLL_LINK_A_PAD) ||
		    nla_put_u64_64bit(skb, KCOLL_LINK_A_BETA_FS, lk->beta, KCOLL_LINK_A_PAD) ||
		    nla_put_u64_64bit(skb, KCOLL_LINK_A_GAMMA_FS, lk->gamma, KCOLL_LINK_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, l);
	}
	if (nla_put_u32(skb, KCOLL_A_COMM_CONV_Q8, comm->model.conv_q8))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int kcoll_genl_put_algos(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	struct nlattr *nest, *a;
	u32 i;

	nest = nla_nest_start(skb, KCOLL_A_COMM_ALGOS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < KCOLL_OP_COUNT; i++) {
		const struct kc_algo_cfg *c = &comm->sel.op[i];

		a = nla_nest_start(skb, KCOLL_A_COMM_ALGO);
		if (!a ||
		    nla_put_u32(skb, KCOLL_ALGO_A_OP, i) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_L0, c->algo[KCOLL_LEVEL0]) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_L1, c->algo[KCOLL_LEVEL1]) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_L2, c->algo[KCOLL_LEVEL2]) ||
		    nla_put_u64_64bit(skb, KCOLL_ALGO_A_PIPE_BYTES, c->pipe_bytes,
				      KCOLL_ALGO_A_PAD) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_CONF_L0, c->conf[KCOLL_LEVEL0]) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_CONF_L1, c->conf[KCOLL_LEVEL1]) ||
		    nla_put_u32(skb, KCOLL_ALGO_A_CONF_L2, c->conf[KCOLL_LEVEL2]))
			return -EMSGSIZE;
		nla_nest_end(skb, a);
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Identity of a communicator: in every message about it. */
static int kcoll_genl_put_ident(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	if (nla_put_u64_64bit(skb, KCOLL_A_COMM_ID, comm->id, KCOLL_A_PAD) ||
	    nla_put_u32(skb, KCOLL_A_COMM_PID, comm->pid) ||
	    nla_put_u32(skb, KCOLL_A_COMM_RANK, comm->rank) ||
	    nla_put_u32(skb, KCOLL_A_COMM_NRANKS, comm->nranks))
		return -EMSGSIZE;
	return 0;
}

static int kcoll_genl_put_counters(struct sk_buff *skb, const struct kcoll_comm *comm)
{
	int err = comm->err ? comm->err : comm->lost_err;

	if (nla_put_u32(skb, KCOLL_A_COMM_STATE, kcoll_comm_state(comm)) ||
	    nla_put_u32(skb, KCOLL_A_COMM_AUTH, comm->auth_tfm ? KCOLL_COMM_AUTH_HMAC_SHA256 :
							      KCOLL_COMM_AUTH_ADDRESS) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_REFUSED, atomic64_read(&comm->refused),
			      KCOLL_A_PAD) ||
	    nla_put_u32(skb, KCOLL_A_COMM_ERR, err < 0 ? -err : 0) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_OPS, comm->stats.ops_done, KCOLL_A_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_BYTES, comm->stats.bytes_done, KCOLL_A_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_ERRORS, comm->stats.ops_failed, KCOLL_A_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_TIMEOUTS, comm->stats.ops_timed_out, KCOLL_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/* One KCOLL_CMD_COMM_GET reply.  comm->lock held (kcoll_comm_visit*). */
static int kcoll_genl_fill_comm(struct kcoll_comm *comm, void *arg)
{
	struct kcoll_genl_msg *m = arg;
	struct sk_buff *skb = m->skb;
	void *hdr;

	/* Someone else's: left out of a dump, ENOENT for a GET (already checked). */
	if (!kcoll_genl_visible(m, comm))
		return m->flags & NLM_F_MULTI ? 0 : -ENOENT;
	hdr = genlmsg_put(skb, m->portid, m->seq, &kcoll_genl_family, m->flags,
			  KCOLL_CMD_COMM_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (kcoll_genl_put_ident(skb, comm) ||
	    kcoll_genl_put_counters(skb, comm) ||
	    nla_put_u32(skb, KCOLL_A_COMM_INFLIGHT, comm->nops) ||
	    nla_put_u32(skb, KCOLL_A_COMM_CHUNK_BYTES, comm->chunk_bytes) ||
	    nla_put_u32(skb, KCOLL_A_COMM_SLOTS, comm->slots) ||
	    nla_put_u32(skb, KCOLL_A_COMM_TIMEOUT_MS, comm->timeout_ms) ||
	    nla_put(skb, KCOLL_A_COMM_UNIQUE_ID, KCOLL_UID_BYTES, comm->unique_id) ||
	    (comm->fault.kind &&
	     nla_put(skb, KCOLL_A_COMM_FAULT, sizeof(comm->fault), &comm->fault)) ||
	    nla_put_u32(skb, KCOLL_A_COMM_STALL_MS, comm->stall_ms) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_MEM_BYTES, READ_ONCE(comm->mem_bytes),
			      KCOLL_A_PAD) ||
	    (comm->stall.size &&
	     nla_put(skb, KCOLL_A_COMM_STALL, sizeof(comm->stall), &comm->stall)) ||
	    (m->peers && kcoll_genl_put_peers(skb, comm)) ||
	    kcoll_genl_put_last_ops(skb, comm) ||
	    kcoll_genl_put_model(skb, comm) ||
	    kcoll_genl_put_algos(skb, comm)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Room for one communicator of @nranks ranks, generously. */
static size_t kcoll_genl_comm_size(u32 nranks)
{
	return NLMSG_GOODSIZE + (size_t)nranks * nla_total_size(4 * nla_total_size(4)) +
	       KCOLL_GENL_LAST_OPS * nla_total_size(KC_PLAN_MAX_NOTE);
}

static int kcoll_genl_get_size(struct kcoll_comm *comm, void *arg)
{
	struct kcoll_genl_msg *m = arg;

	if (!kcoll_genl_visible(m, comm))
		return -ENOENT;
	m->nranks = comm->nranks;
	return 0;
}

static int kcoll_genl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_genl_msg m = {
		.portid = info->snd_portid, .seq = info->snd_seq, .peers = true,
	};
	u64 id;
	int ret;

	if (!info->attrs[KCOLL_A_COMM_ID]) {
		NL_SET_ERR_MSG(info->extack, "KCOLL_A_COMM_ID missing (or dump all)");
		return -EINVAL;
	}
	kcoll_genl_requester(&m, skb);
	id = nla_get_u64(info->attrs[KCOLL_A_COMM_ID]);
	/* Size first: the communicator may go meanwhile, then ENOENT. */
	ret = kcoll_comm_visit(id, kcoll_genl_get_size, &m);
	if (ret)
		goto noent;
	m.skb = genlmsg_new(kcoll_genl_comm_size(m.nranks), GFP_KERNEL);
	if (!m.skb)
		return -ENOMEM;
	ret = kcoll_comm_visit(id, kcoll_genl_fill_comm, &m);
	if (ret) {
		nlmsg_free(m.skb);
		if (ret == -ENOENT)
			goto noent;
		return ret;
	}
	return genlmsg_reply(m.skb, info);
noent:
	NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KCOLL_A_COMM_ID], "no such communicator");
	return -ENOENT;
}

/* cb->args[0]: id of the last communicator dumped, in increasing id order. */
static int kcoll_genl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kcoll_genl_msg m = {
		.skb = skb, .portid = NETLINK_CB(cb->skb).portid, .seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI, .peers = true,
	};
	u64 after = cb->args[0];
	int ret;

	/* Every part of the dump: the request's socket does not change. */
	kcoll_genl_requester(&m, cb->skb);
	for (;;) {
		ret = kcoll_comm_visit_next(&after, kcoll_genl_fill_comm, &m);
		if (ret == -EMSGSIZE && !skb->len && m.peers) {
			/* Too many ranks for a dump message: list it without them. */
			m.peers = false;
			continue;
		}
		if (ret <= 0)
			break;
		m.peers = true;
	}
	cb->args[0] = after;
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;	/* the rest in the next message */
	return ret < 0 ? ret : skb->len;
}

/* ------------------------------------------------------- flight records */

/*
 * One part of a KCOLL_CMD_HISTORY_GET dump; last_op: the id of the last
 * operation of the record under way already sent (0: none).
 */
struct kcoll_genl_hist {
	struct kcoll_genl_msg m;
	u64 filter;		/* KCOLL_A_COMM_ID of the request, 0: all */
	u64 last_op;
};

static int kcoll_genl_put_hist_ent(struct sk_buff *skb, const struct kcoll_hist *h,
				   const struct kcoll_hist_ent *e)
{
	struct nlattr *nest = nla_nest_start(skb, KCOLL_A_HIST_OP);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KCOLL_HIST_A_ID, e->id, KCOLL_HIST_A_PAD) ||
	    nla_put_u32(skb, KCOLL_HIST_A_STATE, e->state) ||
	    nla_put_u32(skb, KCOLL_HIST_A_OP, e->op) ||
	    nla_put_u32(skb, KCOLL_HIST_A_DTYPE, e->dtype) ||
	    (kc_op_reduces(e->op) && nla_put_u32(skb, KCOLL_HIST_A_REDOP, e->redop)) ||
	    (kc_op_rooted(e->op) && nla_put_u32(skb, KCOLL_HIST_A_ROOT, e->root)) ||
	    nla_put_u64_64bit(skb, KCOLL_HIST_A_COUNT, e->count, KCOLL_HIST_A_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_HIST_A_BYTES, e->bytes, KCOLL_HIST_A_PAD) ||
	    nla_put_u32(skb, KCOLL_HIST_A_ALGO_L0, e->algo[KCOLL_LEVEL0]) ||
	    nla_put_u32(skb, KCOLL_HIST_A_ALGO_L1, e->algo[KCOLL_LEVEL1]) ||
	    nla_put_u32(skb, KCOLL_HIST_A_ALGO_L2, e->algo[KCOLL_LEVEL2]) ||
	    nla_put_u32(skb, KCOLL_HIST_A_STATUS, e->status) ||
	    nla_put_u64_64bit(skb, KCOLL_HIST_A_SUBMIT_NS, h->real_off_ns + e->submit_ns,
			      KCOLL_HIST_A_PAD) ||
	    (e->start_ns && nla_put_u64_64bit(skb, KCOLL_HIST_A_START_NS,
					      h->real_off_ns + e->start_ns, KCOLL_HIST_A_PAD)) ||
	    (e->end_ns && nla_put_u64_64bit(skb, KCOLL_HIST_A_END_NS,
					    h->real_off_ns + e->end_ns, KCOLL_HIST_A_PAD))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * The messages of one record, from the operation after g->last_op: 0 when
 * all of it went out (or it is not the requester's to see), -EMSGSIZE
 * when the skb is full (what fit went out, g->last_op says where to go
 * on).  @comm: the live communicator, NULL for a retained record.
 */
static int kcoll_genl_put_hist(struct kcoll_genl_hist *g, const struct kcoll_hist *h,
			       const struct kcoll_comm *comm)
{
	struct sk_buff *skb = g->m.skb;
	u64 id = comm ? comm->id : h->comm_id;
	int err = comm ? (comm->err ?: comm->lost_err) : h->err;
	struct nlattr *ops;
	bool full = false;
	u32 i, n, put = 0;
	void *hdr;

	if (!(g->m.all || uid_eq(g->m.uid, h->uid)) || (g->filter && g->filter != id))
		return 0;
	hdr = genlmsg_put(skb, g->m.portid, g->m.seq, &kcoll_genl_family, NLM_F_MULTI,
			  KCOLL_CMD_HISTORY_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KCOLL_A_COMM_ID, id, KCOLL_A_PAD) ||
	    nla_put_u32(skb, KCOLL_A_COMM_PID, h->pid) ||
	    nla_put_u32(skb, KCOLL_A_COMM_RANK, comm ? comm->rank : h->rank) ||
	    nla_put_u32(skb, KCOLL_A_COMM_NRANKS, comm ? comm->nranks : h->nranks) ||
	    nla_put(skb, KCOLL_A_COMM_UNIQUE_ID, KCOLL_UID_BYTES,
		    comm ? comm->unique_id : h->unique_id) ||
	    nla_put_u32(skb, KCOLL_A_COMM_ERR, err < 0 ? -err : 0) ||
	    nla_put_u32(skb, KCOLL_A_HIST_RETAINED, !comm) ||
	    nla_put_u32(skb, KCOLL_A_HIST_UID, from_kuid_munged(&init_user_ns, h->uid)) ||
	    nla_put_string(skb, KCOLL_A_HIST_TASK, h->task) ||
	    nla_put_u64_64bit(skb, KCOLL_A_HIST_CREATED_NS, h->created_real_ns, KCOLL_A_PAD) ||
	    (!comm && nla_put_u64_64bit(skb, KCOLL_A_HIST_DESTROYED_NS, h->destroyed_real_ns,
					KCOLL_A_PAD)) ||
	    nla_put_u32(skb, KCOLL_A_HIST_CAPACITY, h->ops_max) ||
	    nla_put_u64_64bit(skb, KCOLL_A_HIST_RECORDED, h->recorded, KCOLL_A_PAD))
		goto cancel;
	ops = nla_nest_start(skb, KCOLL_A_HIST_OPS);
	if (!ops)
		goto cancel;
	n = kcoll_history_len(h);
	for (i = 0; i < n; i++) {
		const struct kcoll_hist_ent *e = kcoll_history_ent(h, i);

		if (e->id <= g->last_op)
			continue;
		if (kcoll_genl_put_hist_ent(skb, h, e)) {
			full = true;
			break;
		}
		g->last_op = e->id;
		put++;
	}
	/* Part of a record continued: at least one operation, or wait for room. */
	if (full && !put)
		goto cancel;
	nla_nest_end(skb, ops);
	genlmsg_end(skb, hdr);
	if (full)
		return -EMSGSIZE;
	g->last_op = 0;
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int kcoll_genl_fill_hist_live(struct kcoll_comm *comm, void *arg)
{
	return comm->hist ? kcoll_genl_put_hist(arg, comm->hist, comm) : 0;
}

static int kcoll_genl_fill_hist_retained(const struct kcoll_hist *h, void *arg)
{
	return kcoll_genl_put_hist(arg, h, NULL);
}

/*
 * cb->args[0]: 0 while the live communicators are dumped (by id), 1 for
 * the retained records (by destruction), 2 at the end; [1]: the id (seq)
 * of the last one dumped whole; [2]: the last operation sent of the next.
 */
static int kcoll_genl_hist_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kcoll_genl_hist g = {
		.m = { .skb = skb, .portid = NETLINK_CB(cb->skb).portid,
		       .seq = cb->nlh->nlmsg_seq, .flags = NLM_F_MULTI },
		.last_op = cb->args[2],
	};
	struct nlattr *tb[KCOLL_A_MAX + 1];
	u64 after = cb->args[1];
	int ret = 0;

	kcoll_genl_requester(&g.m, cb->skb);
	ret = nlmsg_parse(cb->nlh, GENL_HDRLEN, tb, KCOLL_A_MAX, kcoll_genl_policy, NULL);
	if (ret)
		return ret;
	if (tb[KCOLL_A_COMM_ID])
		g.filter = nla_get_u64(tb[KCOLL_A_COMM_ID]);
	while (cb->args[0] < 2) {
		if (!cb->args[0])
			ret = kcoll_comm_visit_next(&after, kcoll_genl_fill_hist_live, &g);
		else
			ret = kcoll_history_visit_next(&after, kcoll_genl_fill_hist_retained, &g);
		if (ret < 0)
			break;
		if (!ret) {
			cb->args[0]++;
			after = 0;
			g.last_op = 0;
		}
	}
	cb->args[1] = after;
	cb->args[2] = g.last_op;
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;	/* the rest in the next message */
	return ret < 0 ? ret : skb->len;
}

struct kcoll_genl_node {
	struct sk_buff *skb;
	struct nlattr *listeners;	/* the nest, opened by the first listener */
};

/* KCOLL_CMD_NODE_GET: the namespace's totals (port 0, first), then each listener. */
static int kcoll_genl_fill_listen(const struct kcoll_listen_info *li, void *arg)
{
	struct kcoll_genl_node *n = arg;
	struct sk_buff *skb = n->skb;
	struct nlattr *a;

	if (!li->port)
		return nla_put_u32(skb, KCOLL_A_NODE_COMMS, li->users) ||
		       nla_put_u64_64bit(skb, KCOLL_A_NODE_REFUSED_UNKNOWN, li->refused_unknown,
					 KCOLL_A_PAD) ||
		       nla_put_u64_64bit(skb, KCOLL_A_NODE_REFUSED_STALE, li->refused_stale,
					 KCOLL_A_PAD) ||
		       nla_put_u64_64bit(skb, KCOLL_A_NODE_REFUSED_BAD, li->refused_bad,
					 KCOLL_A_PAD) ||
		       nla_put_u64_64bit(skb, KCOLL_A_NODE_DUP_IDS, li->dup_ids, KCOLL_A_PAD) ?
		       -EMSGSIZE : 0;
	if (!n->listeners) {
		n->listeners = nla_nest_start(skb, KCOLL_A_NODE_LISTENERS);
		if (!n->listeners)
			return -EMSGSIZE;
	}
	a = nla_nest_start(skb, KCOLL_A_NODE_LISTENER);
	if (!a || nla_put_u32(skb, KCOLL_LISTEN_A_PORT, li->port) ||
	    nla_put_u32(skb, KCOLL_LISTEN_A_FAMILY,
			li->family == AF_INET6 ? KCOLL_AF_INET6 : KCOLL_AF_INET) ||
	    nla_put_u32(skb, KCOLL_LISTEN_A_COMMS, li->users))
		return -EMSGSIZE;
	nla_nest_end(skb, a);
	return 0;
}

static int kcoll_genl_node_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_genl_node n = {};
	void *hdr;
	int ret;

	n.skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!n.skb)
		return -ENOMEM;
	hdr = genlmsg_put_reply(n.skb, info, &kcoll_genl_family, 0, KCOLL_CMD_NODE_GET);
	ret = hdr ? kcoll_listen_report(genl_info_net(info), kcoll_genl_fill_listen, &n) :
		    -EMSGSIZE;
	if (ret) {
		nlmsg_free(n.skb);
		return ret;
	}
	if (n.listeners)
		nla_nest_end(n.skb, n.listeners);
	genlmsg_end(n.skb, hdr);
	return genlmsg_reply(n.skb, info);
}

static const struct genl_small_ops kcoll_genl_ops[] = {
	{
		.cmd = KCOLL_CMD_COMM_GET,
		.doit = kcoll_genl_get_doit,
		.dumpit = kcoll_genl_get_dumpit,
	},
	{
		.cmd = KCOLL_CMD_NODE_GET,
		.doit = kcoll_genl_node_doit,
	},
	{
		.cmd = KCOLL_CMD_HISTORY_GET,
		.dumpit = kcoll_genl_hist_dumpit,
	},
};

static struct genl_family kcoll_genl_family __ro_after_init = {
	.name = KCOLL_GENL_NAME,
	.version = KCOLL_GENL_VERSION,
	.maxattr = KCOLL_A_MAX,
	.policy = kcoll_genl_policy,
	.module = THIS_MODULE,
	.small_ops = kcoll_genl_ops,
	.n_small_ops = ARRAY_SIZE(kcoll_genl_ops),
	.mcgrps = kcoll_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(kcoll_genl_mcgrps),
};

/* ---------------------------------------------------------- notifications */

static struct sk_buff *kcoll_genl_event_new(u8 cmd, gfp_t gfp, void **hdr)
{
	struct sk_buff *skb;

	if (!genl_has_listeners(&kcoll_genl_family, &init_net, KCOLL_GENL_MCGRP_EVENTS_ID))
		return NULL;
	skb = genlmsg_new(NLMSG_GOODSIZE, gfp);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &kcoll_genl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void kcoll_genl_event_send(struct sk_buff *skb, void *hdr, bool ok, gfp_t gfp)
{
	if (!ok) {
		/* Cannot happen with NLMSG_GOODSIZE; drop rather than send half. */
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&kcoll_genl_family, skb, 0, KCOLL_GENL_MCGRP_EVENTS_ID, gfp);
}

/* Creation or destruction: process context, the creator or the closer. */
void kcoll_genl_notify_comm(struct kcoll_comm *comm, u8 cmd)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = kcoll_genl_event_new(cmd, GFP_KERNEL, &hdr);
	if (!skb)
		return;
	ok = !kcoll_genl_put_ident(skb, comm) &&
	     (cmd != KCOLL_CMD_EVENT_COMM_DEL || !kcoll_genl_put_counters(skb, comm));
	kcoll_genl_event_send(skb, hdr, ok, GFP_KERNEL);
}

/* From completion paths: no sleeping allocation. */
void kcoll_genl_notify_op_fail(struct kcoll_comm *comm, const struct kcoll_lastop *op)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = kcoll_genl_event_new(KCOLL_CMD_EVENT_OP_FAIL, GFP_ATOMIC, &hdr);
	if (!skb)
		return;
	ok = !kcoll_genl_put_ident(skb, comm) &&
	     !kcoll_genl_put_lastop(skb, KCOLL_A_EVENT_OP, op);
	kcoll_genl_event_send(skb, hdr, ok, GFP_ATOMIC);
}

/* From completion paths, as the op-failure event. */
void kcoll_genl_notify_algo_fallback(struct kcoll_comm *comm, const struct kcoll_lastop *op)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = kcoll_genl_event_new(KCOLL_CMD_EVENT_ALGO_FALLBACK, GFP_ATOMIC, &hdr);
	if (!skb)
		return;
	ok = !kcoll_genl_put_ident(skb, comm) &&
	     !kcoll_genl_put_lastop(skb, KCOLL_A_EVENT_OP, op);
	kcoll_genl_event_send(skb, hdr, ok, GFP_ATOMIC);
}

void kcoll_genl_notify_peer_lost(struct kcoll_comm *comm, u32 peer, int err)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = kcoll_genl_event_new(KCOLL_CMD_EVENT_PEER_LOST, GFP_ATOMIC, &hdr);
	if (!skb)
		return;
	ok = !kcoll_genl_put_ident(skb, comm) &&
	     !nla_put_u32(skb, KCOLL_A_EVENT_PEER, peer) &&
	     !nla_put_u32(skb, KCOLL_A_COMM_ERR, err < 0 ? -err : 0);
	kcoll_genl_event_send(skb, hdr, ok, GFP_ATOMIC);
}

/* An operation stalled, or its culprit was named (comm->lock held). */
void kcoll_genl_notify_stall(struct kcoll_comm *comm)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	if (comm->closing)
		return;
	skb = kcoll_genl_event_new(KCOLL_CMD_EVENT_STALL, GFP_ATOMIC, &hdr);
	if (!skb)
		return;
	ok = !kcoll_genl_put_ident(skb, comm) &&
	     !nla_put_u32(skb, KCOLL_A_EVENT_PEER, comm->stall.wait_peer) &&
	     !nla_put(skb, KCOLL_A_COMM_STALL, sizeof(comm->stall), &comm->stall);
	kcoll_genl_event_send(skb, hdr, ok, GFP_ATOMIC);
}

int kcoll_genl_init(void)
{
	int ret = genl_register_family(&kcoll_genl_family);

	if (ret)
		pr_err("cannot register generic netlink family %s: %d\n", KCOLL_GENL_NAME, ret);
	return ret;
}

void kcoll_genl_exit(void)
{
	genl_unregister_family(&kcoll_genl_family);
}
