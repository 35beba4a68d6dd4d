// SPDX-License-Identifier: GPL-2.0
/*
 * The collective state machine.
 *
 * Rounds run in order.  Entering a round expands its steps from the plan,
 * runs its local steps (copy, reduce, average), then posts messages of
 * its sends while the per-peer window allows and consumes messages that
 * already arrived for its receives.  Messages from a peer are consumed
 * strictly in plan order; one that arrives before its round is held in
 * its slot.  When every transfer of the round is complete, the next round
 * begins.  Per-peer message totals, counted once at init, say whether a
 * peer still owes or is owed anything in later rounds.
 *
 * The first message to each peer carries the operation's header (see
 * kc_exec.h), built on the stack when it is posted; the first message
 * from each peer is checked on arrival, before it is held, and stripped:
 * what is held and consumed is data only.
 */
#include "kc_exec.h"
#include "kc_coll.h"
#include "kc_reduce.h"

#define KC_NONE U32_MAX

struct kc_exec_step {
	struct kc_step s;	/* expanded: peer is an index into plan->peers */
	u64 posted;		/* bytes handed to the transport / consumed */
	u32 msgs_posted;
	u32 msgs_done;
	u32 next;		/* next transfer with the same peer and direction */
};

struct kc_inflight {
	u32 step;
};

struct kc_held {
	const void *data;
	void *slot;
	u32 len;
};

struct kc_exec_peer {
	u32 send_cur;		/* first send step of the round not fully posted */
	u32 recv_cur;		/* first receive step of the round not fully consumed */
	u32 send_last;		/* ends of the round's chains, while entering it */
	u32 recv_last;
	u64 send_left;		/* messages of the whole plan not yet posted */
	u64 recv_left;		/* ... not yet consumed */
	u64 recv_expect;	/* ... not yet arrived */
	u32 send_seq;
	u32 recv_seq;
	u32 inflight;
	u32 fl_head;
	u32 held_head;
	u32 held_n;
	struct kc_inflight *fl;	/* [window] */
	struct kc_held *held;	/* [window] */
};

static bool kc_is_send(const struct kc_step *s)
{
	return s->kind == KC_STEP_SEND;
}

static bool kc_is_recv(const struct kc_step *s)
{
	return s->kind == KC_STEP_RECV || s->kind == KC_STEP_RECV_REDUCE;
}

static u32 kc_nmsgs(const struct kc_exec *ex, const struct kc_step *s)
{
	if (!s->len)
		return 1;	/* a SYNC step travels as one empty message */
	return (u32)((s->len + ex->cfg.chunk_bytes - 1) / ex->cfg.chunk_bytes);
}

static void kc_put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

static void kc_put_le64(u8 *p, u64 v)
{
	kc_put_le32(p, (u32)v);
	kc_put_le32(p + 4, (u32)(v >> 32));
}

void kc_hdr_fill(u8 hdr[KC_HDR_BYTES], const struct kc_plan *plan, const struct kc_op_desc *desc,
		 u32 op_num, u32 peer, bool to_peer)
{
	u32 op = desc ? desc->op : plan->op;
	u32 redop = desc ? desc->redop : plan->redop;
	u32 root = 0, i;
	u64 count = 0;

	memset(hdr, 0, KC_HDR_BYTES);
	hdr[KC_HDR_OFF_VERSION] = KC_HDR_VERSION;
	hdr[KC_HDR_OFF_SIZE] = KC_HDR_BYTES;
	hdr[KC_HDR_OFF_OP] = (u8)op;
	kc_put_le32(hdr + KC_HDR_OFF_OPNUM, op_num);
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++)
		hdr[KC_HDR_OFF_ALGO + i] = (u8)plan->algo[i];
	if (op == KCOLL_OP_BARRIER)
		return;
	hdr[KC_HDR_OFF_DTYPE] = (u8)(desc ? desc->dtype : plan->dtype);
	if (kc_op_reduces(op))
		hdr[KC_HDR_OFF_REDOP] = (u8)redop;
	if (desc && kc_op_rooted(op))
		root = desc->root;
	if (desc && op == KCOLL_OP_ALLTOALLV)
		count = to_peer ? desc->scounts[peer] : desc->rcounts[peer];
	else if (desc)
		count = desc->count;
	kc_put_le32(hdr + KC_HDR_OFF_ROOT, root);
	kc_put_le64(hdr + KC_HDR_OFF_COUNT, count);
}

bool kc_hdr_same(const u8 want[KC_HDR_BYTES], const u8 got[KC_HDR_BYTES])
{
	u32 i;

	for (i = 0; i < KC_HDR_BYTES; i++) {
		bool algo = i >= KC_HDR_OFF_ALGO && i < KC_HDR_OFF_ALGO + KCOLL_LEVEL_COUNT;

		if (want[i] == got[i] || (algo && (!want[i] || !got[i])))
			continue;
		return false;
	}
	return true;
}

static void kc_exec_set_error(struct kc_exec *ex, int err)
{
	if (err && (ex->status == -EINPROGRESS || ex->status == 0))
		ex->status = err;
}

static void kc_complete_one(struct kc_exec *ex)
{
	if (ex->pending)
		ex->pending--;
	else
		kc_exec_set_error(ex, -EPROTO);
}

static void kc_pump_peer(struct kc_exec *ex, u32 p)
{
	struct kc_exec_peer *pe = &ex->pe[p];

	while (ex->status == -EINPROGRESS && pe->send_cur != KC_NONE) {
		struct kc_exec_step *st = &ex->st[pe->send_cur];
		const struct kc_step *s = &st->s;
		u32 n = kc_nmsgs(ex, s);

		while (st->msgs_posted < n && pe->inflight < ex->cfg.window) {
			u32 len = (u32)kc_min_u64(ex->cfg.chunk_bytes, s->len - st->posted);
			u64 off = s->off + st->posted;
			u32 tag = KC_TAG(ex->cfg.op_seq, pe->send_seq);
			u32 rank = ex->plan->peers[p];
			u8 hdr[KC_HDR_BYTES];
			u32 hlen = 0;
			int err;

			if (!pe->send_seq && !(ex->cfg.flags & KC_EXEC_F_NOHDR)) {
				kc_hdr_fill(hdr, ex->plan, ex->cfg.desc, ex->cfg.op_num, rank,
					    true);
				hlen = KC_HDR_BYTES;
			}
			err = ex->ops->send(ex->ctx, rank, tag, hlen ? hdr : NULL, hlen, s->buf,
					    off, ex->bufs[s->buf] ? ex->bufs[s->buf] + off : NULL,
					    len);
			if (err) {
				kc_exec_set_error(ex, err);
				return;
			}
			pe->send_seq++;
			pe->fl[(pe->fl_head + pe->inflight) % ex->cfg.window].step = pe->send_cur;
			pe->inflight++;
			st->posted += len;
			st->msgs_posted++;
			pe->send_left--;
			ex->bytes_sent += len;
		}
		if (st->msgs_posted < n)
			return;
		pe->send_cur = st->next;
	}
}

static void kc_consume_peer(struct kc_exec *ex, u32 p)
{
	struct kc_exec_peer *pe = &ex->pe[p];

	while (ex->status == -EINPROGRESS && pe->held_n && pe->recv_cur != KC_NONE) {
		struct kc_exec_step *st = &ex->st[pe->recv_cur];
		const struct kc_step *s = &st->s;
		struct kc_held *h = &pe->held[pe->held_head];
		u32 want = (u32)kc_min_u64(ex->cfg.chunk_bytes, s->len - st->posted);
		bool nodata = ex->cfg.flags & KC_EXEC_F_NODATA;
		u8 *dst = NULL;

		if (want && !nodata && ex->bufs[s->buf])
			dst = ex->bufs[s->buf] + s->off + st->posted;
		if (h->len != want || (want && !nodata && !dst)) {
			kc_exec_set_error(ex, -EPROTO);
			return;
		}
		if (want && ex->ops->work)
			ex->ops->work(ex->ctx, ex->plan->peers[p], s->kind, want);
		if (dst && s->kind == KC_STEP_RECV) {
			memcpy(dst, h->data, want);
		} else if (dst) {
			int err = kc_reduce(dst, h->data, want / ex->plan->esize,
					    ex->plan->dtype, ex->plan->redop);

			if (err) {
				kc_exec_set_error(ex, err);
				return;
			}
		}
		ex->ops->release(ex->ctx, ex->plan->peers[p], h->slot);
		pe->held_head = (pe->held_head + 1) % ex->cfg.window;
		pe->held_n--;
		pe->recv_left--;
		st->posted += want;
		ex->bytes_received += want;
		if (++st->msgs_done == kc_nmsgs(ex, s)) {
			kc_complete_one(ex);
			pe->recv_cur = st->next;
		}
	}
}

static int kc_run_local(struct kc_exec *ex, const struct kc_step *s)
{
	u8 *dst = ex->bufs[s->buf] + s->off;
	const struct kc_plan *p = ex->plan;

	switch (s->kind) {
	case KC_STEP_COPY:
		memmove(dst, ex->bufs[s->sbuf] + s->soff, s->len);
		return 0;
	case KC_STEP_REDUCE:
		return kc_reduce(dst, ex->bufs[s->sbuf] + s->soff, s->len / p->esize,
				 p->dtype, p->redop);
	case KC_STEP_AVG:
		return kc_reduce_avg_finish(dst, s->len / p->esize, p->dtype, p->nranks);
	}
	return -EPROTO;
}

/*
 * Expand the current round into ex->st and chain each peer's sends and
 * receives in it, in plan order.
 */
static void kc_load_round(struct kc_exec *ex)
{
	struct kc_step_it it;
	u32 i, n = 0;

	kc_plan_steps_begin(ex->plan, &ex->rit, &it);
	while (n < ex->st_cap && kc_plan_step_next(ex->plan, &it, &ex->st[n].s))
		n++;
	ex->nst = n;
	for (i = 0; i < n; i++) {
		struct kc_exec_peer *pe = &ex->pe[ex->st[i].s.peer];

		if (!kc_is_send(&ex->st[i].s) && !kc_is_recv(&ex->st[i].s))
			continue;
		pe->send_cur = KC_NONE;
		pe->recv_cur = KC_NONE;
		pe->send_last = KC_NONE;
		pe->recv_last = KC_NONE;
	}
	for (i = 0; i < n; i++) {
		struct kc_exec_step *st = &ex->st[i];
		struct kc_exec_peer *pe = &ex->pe[st->s.peer];
		u32 *cur, *last;

		st->posted = 0;
		st->msgs_posted = 0;
		st->msgs_done = 0;
		st->next = KC_NONE;
		if (kc_is_send(&st->s)) {
			cur = &pe->send_cur;
			last = &pe->send_last;
		} else if (kc_is_recv(&st->s)) {
			cur = &pe->recv_cur;
			last = &pe->recv_last;
		} else {
			continue;
		}
		if (*last == KC_NONE)
			*cur = i;
		else
			ex->st[*last].next = i;
		*last = i;
	}
}

/* Run the current round's local steps and start its transfers. */
static void kc_enter_round(struct kc_exec *ex)
{
	u32 i;

	ex->entered = true;
	ex->pending = 0;
	kc_load_round(ex);
	for (i = 0; i < ex->nst; i++) {
		const struct kc_step *s = &ex->st[i].s;

		if (kc_is_send(s) || kc_is_recv(s)) {
			ex->pending++;
			continue;
		}
		if (ex->ops->work)
			ex->ops->work(ex->ctx, U32_MAX, s->kind, s->len);
		if (ex->cfg.flags & KC_EXEC_F_NODATA)
			continue;
		if (!ex->bufs[s->buf] || (s->kind != KC_STEP_AVG && !ex->bufs[s->sbuf])) {
			kc_exec_set_error(ex, -EFAULT);
			return;
		}
		kc_exec_set_error(ex, kc_run_local(ex, s));
		if (ex->status != -EINPROGRESS)
			return;
	}
	for (i = 0; i < ex->nst && ex->status == -EINPROGRESS; i++) {
		const struct kc_step *s = &ex->st[i].s;

		if (kc_is_send(s))
			kc_pump_peer(ex, s->peer);
		else if (kc_is_recv(s))
			kc_consume_peer(ex, s->peer);
	}
}

/* Move on through every round whose transfers are complete. */
static int kc_advance(struct kc_exec *ex)
{
	while (ex->status == -EINPROGRESS && !ex->pending) {
		if (ex->entered) {
			ex->round++;
			ex->entered = false;
			ex->more = kc_plan_round_next(ex->plan, &ex->rit);
		}
		if (!ex->more) {
			ex->status = 0;
			break;
		}
		kc_enter_round(ex);
	}
	return ex->status;
}

/* plan->peers is in ascending rank order. */
static u32 kc_peer_index(const struct kc_exec *ex, u32 rank)
{
	u32 lo = 0, hi = ex->plan->npeers;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u32 r = ex->plan->peers[mid];

		if (r == rank)
			return mid;
		if (r < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return KC_NONE;
}

/*
 * Walk the whole plan once: messages per peer and direction (they bound
 * what a peer may still send or be owed), and the largest round.
 */
static void kc_count_plan(struct kc_exec *ex)
{
	const struct kc_plan *plan = ex->plan;
	struct kc_round_it r;
	struct kc_step_it it;
	struct kc_step s;
	bool more;

	for (more = kc_plan_round_first(plan, &r); more; more = kc_plan_round_next(plan, &r)) {
		u32 n = 0;

		kc_plan_steps_begin(plan, &r, &it);
		while (kc_plan_step_next(plan, &it, &s)) {
			n++;
			if (kc_is_send(&s))
				ex->pe[s.peer].send_left += kc_nmsgs(ex, &s);
			else if (kc_is_recv(&s))
				ex->pe[s.peer].recv_left += kc_nmsgs(ex, &s);
		}
		if (n > ex->st_cap)
			ex->st_cap = n;
	}
}

int kc_exec_init(struct kc_exec *ex, const struct kc_plan *plan, void *const bufs[KC_BUF_COUNT],
		 const struct kc_exec_cfg *cfg, const struct kc_xport_ops *ops, void *ctx)
{
	u32 i, np = plan->npeers, w = cfg->window;
	size_t sz;
	u8 *m;

	memset(ex, 0, sizeof(*ex));
	if (!w || cfg->chunk_bytes < 8 || (!cfg->desc && !(cfg->flags & KC_EXEC_F_NODATA)))
		return -EINVAL;
	ex->plan = plan;
	ex->ops = ops;
	ex->ctx = ctx;
	ex->cfg = *cfg;
	ex->cfg.chunk_bytes = kc_min_u32(cfg->chunk_bytes, U32_MAX - KC_HDR_BYTES) & ~7u;
	for (i = 0; i < KC_BUF_COUNT; i++)
		ex->bufs[i] = bufs[i];
	ex->status = -EINPROGRESS;
	ex->bad_peer = U32_MAX;

	sz = (size_t)np * sizeof(*ex->pe) +
	     (size_t)np * w * (sizeof(struct kc_inflight) + sizeof(struct kc_held));
	ex->mem = kc_zalloc(sz);
	if (!ex->mem)
		return -ENOMEM;
	m = ex->mem;
	ex->pe = (struct kc_exec_peer *)m;
	m += (size_t)np * sizeof(*ex->pe);
	/* Pointer-holding slots first: the 4-byte ones after them may end unaligned. */
	for (i = 0; i < np; i++) {
		ex->pe[i].held = (struct kc_held *)m;
		m += (size_t)w * sizeof(struct kc_held);
	}
	for (i = 0; i < np; i++) {
		ex->pe[i].fl = (struct kc_inflight *)m;
		m += (size_t)w * sizeof(struct kc_inflight);
		ex->pe[i].send_cur = KC_NONE;
		ex->pe[i].recv_cur = KC_NONE;
	}
	kc_count_plan(ex);
	for (i = 0; i < np; i++)
		ex->pe[i].recv_expect = ex->pe[i].recv_left;
	ex->st = kc_malloc((size_t)(ex->st_cap ? ex->st_cap : 1) * sizeof(*ex->st));
	if (!ex->st) {
		kc_free(ex->mem);
		ex->mem = NULL;
		return -ENOMEM;
	}
	ex->more = kc_plan_round_first(plan, &ex->rit);
	return 0;
}

int kc_exec_start(struct kc_exec *ex)
{
	return kc_advance(ex);
}

/* The oldest message in flight to a peer was consumed there (or forgiven). */
static void kc_credit_oldest(struct kc_exec *ex, struct kc_exec_peer *pe)
{
	u32 step = pe->fl[pe->fl_head].step;
	struct kc_exec_step *st = &ex->st[step];

	pe->fl_head = (pe->fl_head + 1) % ex->cfg.window;
	pe->inflight--;
	if (++st->msgs_done == kc_nmsgs(ex, &st->s))
		kc_complete_one(ex);
}

int kc_exec_send_done(struct kc_exec *ex, u32 peer)
{
	u32 p = kc_peer_index(ex, peer);

	if (ex->status != -EINPROGRESS)
		return ex->status;
	if (p == KC_NONE || !ex->pe[p].inflight) {
		kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	ex->progress++;
	kc_credit_oldest(ex, &ex->pe[p]);
	kc_pump_peer(ex, p);
	return kc_advance(ex);
}

/*
 * The first message from rank @peer starts with the header this rank
 * expects; if not, keep what it says for the owner's report.
 */
static bool kc_hdr_ok(struct kc_exec *ex, u32 peer, const void *data, u32 len)
{
	u8 want[KC_HDR_BYTES];

	if (len < KC_HDR_BYTES || !data)
		return false;
	kc_hdr_fill(want, ex->plan, ex->cfg.desc, ex->cfg.op_num, peer, false);
	if (kc_hdr_same(want, data))
		return true;
	if (ex->bad_peer == U32_MAX) {
		ex->bad_peer = peer;
		memcpy(ex->bad_hdr, data, KC_HDR_BYTES);
	}
	return false;
}

int kc_exec_recv(struct kc_exec *ex, u32 peer, u32 tag, const void *data, u32 len, void *slot)
{
	u32 p = kc_peer_index(ex, peer);
	struct kc_exec_peer *pe;
	struct kc_held *h;

	/*
	 * A first message is checked before anything else, even from a peer
	 * this rank's plan does not expect: a disagreement is then reported
	 * as what the peer asked for, not as an unexpected message.
	 */
	if (ex->status == -EINPROGRESS && !kc_tag_msg_seq(tag) &&
	    kc_tag_op_seq(tag) == ex->cfg.op_seq && !(ex->cfg.flags & KC_EXEC_F_NOHDR) &&
	    (p == KC_NONE || !ex->pe[p].recv_seq) && !kc_hdr_ok(ex, peer, data, len)) {
		ex->ops->release(ex->ctx, peer, slot);
		kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	if (ex->status != -EINPROGRESS || p == KC_NONE) {
		ex->ops->release(ex->ctx, peer, slot);
		if (ex->status == -EINPROGRESS)
			kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	pe = &ex->pe[p];
	if (tag != KC_TAG(ex->cfg.op_seq, pe->recv_seq) || pe->held_n == ex->cfg.window ||
	    !pe->recv_expect) {
		ex->ops->release(ex->ctx, peer, slot);
		kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	if (!pe->recv_seq && !(ex->cfg.flags & KC_EXEC_F_NOHDR)) {
		data = (const u8 *)data + KC_HDR_BYTES;
		len -= KC_HDR_BYTES;
	}
	pe->recv_seq++;
	pe->recv_expect--;
	ex->progress++;
	h = &pe->held[(pe->held_head + pe->held_n) % ex->cfg.window];
	h->data = data;
	h->len = len;
	h->slot = slot;
	pe->held_n++;
	if (ex->entered)
		kc_consume_peer(ex, p);
	return kc_advance(ex);
}

int kc_exec_peer_gone(struct kc_exec *ex, u32 peer, int err)
{
	u32 p = kc_peer_index(ex, peer);
	struct kc_exec_peer *pe;

	if (ex->status != -EINPROGRESS || p == KC_NONE)
		return ex->status;
	pe = &ex->pe[p];
	ex->progress++;
	if (pe->send_left || pe->recv_left > pe->held_n)
		return kc_exec_fail(ex, err);
	/*
	 * Everything this rank needs of the peer is here, and everything it
	 * owed the peer was posted.  Credits still outstanding only said the
	 * peer had consumed our messages: that no longer concerns this rank.
	 * (They are all of the current round: a round ends only when its
	 * sends are credited, and only its own sends are posted.)
	 */
	while (pe->inflight)
		kc_credit_oldest(ex, pe);
	return kc_advance(ex);
}

bool kc_exec_needs(const struct kc_exec *ex, u32 peer)
{
	u32 p = kc_peer_index(ex, peer);
	const struct kc_exec_peer *pe;

	if (ex->status != -EINPROGRESS || p == KC_NONE)
		return false;
	pe = &ex->pe[p];
	return pe->send_left || pe->recv_left > pe->held_n || pe->inflight;
}

bool kc_exec_lacks(const struct kc_exec *ex, u32 peer, u32 more)
{
	u32 p = kc_peer_index(ex, peer);
	const struct kc_exec_peer *pe;

	if (ex->status != -EINPROGRESS || p == KC_NONE)
		return false;
	pe = &ex->pe[p];
	return pe->send_left || pe->recv_left > pe->held_n + more;
}

u32 kc_exec_waiting(const struct kc_exec *ex, u32 *peer, u32 *msg_seq, u32 *round)
{
	u32 i;

	*peer = U32_MAX;
	*msg_seq = 0;
	*round = ex->round;
	if (ex->status != -EINPROGRESS || !ex->entered)
		return KC_WAIT_NONE;
	/* A receive that lacks its next message comes first ... */
	for (i = 0; i < ex->nst; i++) {
		const struct kc_exec_step *st = &ex->st[i];
		const struct kc_exec_peer *pe = &ex->pe[st->s.peer];

		if (!kc_is_recv(&st->s) || st->msgs_done == kc_nmsgs(ex, &st->s) || pe->held_n)
			continue;
		*peer = ex->plan->peers[st->s.peer];
		*msg_seq = pe->recv_seq;
		return KC_WAIT_RECV;
	}
	/* ... then a send whose oldest message the peer has not consumed. */
	for (i = 0; i < ex->nst; i++) {
		const struct kc_exec_step *st = &ex->st[i];
		const struct kc_exec_peer *pe = &ex->pe[st->s.peer];

		if (!kc_is_send(&st->s) || st->msgs_done == kc_nmsgs(ex, &st->s) || !pe->inflight)
			continue;
		*peer = ex->plan->peers[st->s.peer];
		*msg_seq = pe->send_seq - pe->inflight;
		return KC_WAIT_CREDIT;
	}
	return KC_WAIT_NONE;
}

int kc_exec_fail(struct kc_exec *ex, int err)
{
	if (ex->status == -EINPROGRESS)
		ex->status = err;
	return ex->status;
}

void kc_exec_destroy(struct kc_exec *ex)
{
	u32 p;

	if (!ex->mem)
		return;
	for (p = 0; p < ex->plan->npeers; p++) {
		struct kc_exec_peer *pe = &ex->pe[p];

		while (pe->held_n) {
			ex->ops->release(ex->ctx, ex->plan->peers[p], pe->held[pe->held_head].slot);
			pe->held_head = (pe->held_head + 1) % ex->cfg.window;
			pe->held_n--;
		}
	}
	kc_free(ex->mem);
	kc_free(ex->st);
	ex->mem = NULL;
	ex->st = NULL;
}
