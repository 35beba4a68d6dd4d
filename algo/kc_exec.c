// SPDX-License-Identifier: GPL-2.0
/*
 * The collective state machine.
 *
 * Rounds run in order.  Entering a round runs its local steps (copy,
 * reduce, average), then posts messages of its sends while the per-peer
 * window allows and consumes messages that already arrived for its
 * receives.  Messages from a peer are consumed strictly in plan order;
 * one that arrives before its round is held in its slot.  When every
 * transfer of the round is complete, the next round begins.
 */
#include "kc_exec.h"
#include "kc_reduce.h"

#define KC_NONE U32_MAX

struct kc_exec_step {
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
	u32 send_cur;		/* first send step not fully posted */
	u32 recv_cur;		/* first receive step not fully consumed */
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

static void kc_exec_set_error(struct kc_exec *ex, int err)
{
	if (err && (ex->status == -EINPROGRESS || ex->status == 0))
		ex->status = err;
}

/* Steps of the current round are [round_start[round], round_end). */
static u32 kc_round_end(const struct kc_exec *ex)
{
	return ex->plan->round_start[ex->round + 1];
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
	u32 end = kc_round_end(ex);

	while (ex->status == -EINPROGRESS && pe->send_cur < end) {
		const struct kc_step *s = &ex->plan->steps[pe->send_cur];
		struct kc_exec_step *st = &ex->st[pe->send_cur];
		u32 n = kc_nmsgs(ex, s);

		while (st->msgs_posted < n && pe->inflight < ex->cfg.window) {
			u32 len = (u32)kc_min_u64(ex->cfg.chunk_bytes, s->len - st->posted);
			u64 off = s->off + st->posted;
			u32 tag = KC_TAG(ex->cfg.op_seq, pe->send_seq);
			int err;

			err = ex->ops->send(ex->ctx, ex->plan->peers[p], tag, s->buf, off,
					    ex->bufs[s->buf] ? ex->bufs[s->buf] + off : NULL, len);
			if (err) {
				kc_exec_set_error(ex, err);
				return;
			}
			pe->send_seq++;
			pe->fl[(pe->fl_head + pe->inflight) % ex->cfg.window].step = pe->send_cur;
			pe->inflight++;
			st->posted += len;
			st->msgs_posted++;
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
	u32 end = kc_round_end(ex);

	while (ex->status == -EINPROGRESS && pe->held_n && pe->recv_cur < end) {
		const struct kc_step *s = &ex->plan->steps[pe->recv_cur];
		struct kc_exec_step *st = &ex->st[pe->recv_cur];
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

/* Run the current round's local steps and start its transfers. */
static void kc_enter_round(struct kc_exec *ex)
{
	const struct kc_plan *p = ex->plan;
	u32 i, end = kc_round_end(ex);

	ex->entered = true;
	ex->pending = 0;
	for (i = p->round_start[ex->round]; i < end; i++) {
		const struct kc_step *s = &p->steps[i];

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
	for (i = p->round_start[ex->round]; i < end && ex->status == -EINPROGRESS; i++) {
		const struct kc_step *s = &p->steps[i];

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
		}
		if (ex->round >= ex->plan->nrounds) {
			ex->status = 0;
			break;
		}
		kc_enter_round(ex);
	}
	return ex->status;
}

static u32 kc_peer_index(const struct kc_exec *ex, u32 rank)
{
	u32 lo = 0, hi = ex->plan->npeers;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u32 r = ex->plan->peers[ex->by_rank[mid]];

		if (r == rank)
			return ex->by_rank[mid];
		if (r < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return KC_NONE;
}

int kc_exec_init(struct kc_exec *ex, const struct kc_plan *plan, void *const bufs[KC_BUF_COUNT],
		 const struct kc_exec_cfg *cfg, const struct kc_xport_ops *ops, void *ctx)
{
	u32 i, np = plan->npeers, w = cfg->window;
	u32 *last_send, *last_recv;
	size_t sz;
	u8 *m;

	memset(ex, 0, sizeof(*ex));
	if (!w || cfg->chunk_bytes < 8)
		return -EINVAL;
	ex->plan = plan;
	ex->ops = ops;
	ex->ctx = ctx;
	ex->cfg = *cfg;
	ex->cfg.chunk_bytes &= ~7u;
	for (i = 0; i < KC_BUF_COUNT; i++)
		ex->bufs[i] = bufs[i];
	ex->status = -EINPROGRESS;

	sz = (size_t)plan->nsteps * sizeof(*ex->st) + (size_t)np * sizeof(*ex->pe) +
	     (size_t)np * sizeof(u32) * 3 +
	     (size_t)np * w * (sizeof(struct kc_inflight) + sizeof(struct kc_held));
	ex->mem = kc_zalloc(sz);
	if (!ex->mem)
		return -ENOMEM;
	m = ex->mem;
	ex->pe = (struct kc_exec_peer *)m;
	m += (size_t)np * sizeof(*ex->pe);
	ex->st = (struct kc_exec_step *)m;
	m += (size_t)plan->nsteps * sizeof(*ex->st);
	/* Pointer-holding slots first: the 4-byte ones after them may end unaligned. */
	for (i = 0; i < np; i++) {
		ex->pe[i].held = (struct kc_held *)m;
		m += (size_t)w * sizeof(struct kc_held);
	}
	for (i = 0; i < np; i++) {
		ex->pe[i].fl = (struct kc_inflight *)m;
		m += (size_t)w * sizeof(struct kc_inflight);
	}
	ex->by_rank = (u32 *)m;
	last_send = ex->by_rank + np;
	last_recv = last_send + np;

	/* Chain each peer's sends and receives in plan order. */
	for (i = 0; i < np; i++) {
		ex->pe[i].send_cur = KC_NONE;
		ex->pe[i].recv_cur = KC_NONE;
		last_send[i] = KC_NONE;
		last_recv[i] = KC_NONE;
		ex->by_rank[i] = i;
	}
	for (i = 0; i < plan->nsteps; i++) {
		const struct kc_step *s = &plan->steps[i];
		u32 *last;

		ex->st[i].next = KC_NONE;
		if (kc_is_send(s))
			last = &last_send[s->peer];
		else if (kc_is_recv(s))
			last = &last_recv[s->peer];
		else
			continue;
		if (*last == KC_NONE) {
			if (kc_is_send(s))
				ex->pe[s->peer].send_cur = i;
			else
				ex->pe[s->peer].recv_cur = i;
		} else {
			ex->st[*last].next = i;
		}
		*last = i;
	}
	/* Sort peer indices by rank (insertion sort on the few peers). */
	for (i = 1; i < np; i++) {
		u32 v = ex->by_rank[i], j = i;

		while (j && plan->peers[ex->by_rank[j - 1]] > plan->peers[v]) {
			ex->by_rank[j] = ex->by_rank[j - 1];
			j--;
		}
		ex->by_rank[j] = v;
	}
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
	if (++st->msgs_done == kc_nmsgs(ex, &ex->plan->steps[step]))
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
	kc_credit_oldest(ex, &ex->pe[p]);
	kc_pump_peer(ex, p);
	return kc_advance(ex);
}

int kc_exec_recv(struct kc_exec *ex, u32 peer, u32 tag, const void *data, u32 len, void *slot)
{
	u32 p = kc_peer_index(ex, peer);
	struct kc_exec_peer *pe;
	struct kc_held *h;

	if (ex->status != -EINPROGRESS || p == KC_NONE) {
		ex->ops->release(ex->ctx, peer, slot);
		if (ex->status == -EINPROGRESS)
			kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	pe = &ex->pe[p];
	if (tag != KC_TAG(ex->cfg.op_seq, pe->recv_seq) || pe->held_n == ex->cfg.window ||
	    pe->recv_cur == KC_NONE) {
		ex->ops->release(ex->ctx, peer, slot);
		kc_exec_set_error(ex, -EPROTO);
		return ex->status;
	}
	pe->recv_seq++;
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
	u64 missing = 0;
	u32 i;

	if (ex->status != -EINPROGRESS || p == KC_NONE)
		return ex->status;
	pe = &ex->pe[p];
	for (i = pe->recv_cur; i != KC_NONE; i = ex->st[i].next)
		missing += kc_nmsgs(ex, &ex->plan->steps[i]) - ex->st[i].msgs_done;
	if (pe->send_cur != KC_NONE || missing > pe->held_n)
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
	ex->mem = NULL;
}
