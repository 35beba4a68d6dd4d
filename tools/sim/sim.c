// SPDX-License-Identifier: GPL-2.0
/*
 * Discrete-event simulation of the link model in sim.h.
 *
 * Every rank owns an executor and a clock: an event for a rank that is
 * still busy reducing waits until it is free, and what the rank does
 * during one event (reduce, then post sends, return credits) happens at
 * its clock, which the reductions advance.  Transfers are fluid flows:
 * each has bytes left and a rate; when a flow starts or ends, the flows
 * that share a port or pair link with it get their rate recomputed and a
 * new completion event (stale ones are recognised by a version number).
 *
 * Symmetry (sim_run_period()): when every rank's plan is the plan of rank
 * r mod P moved by a whole number of periods, and moving every rank by P
 * maps servers onto servers and pods onto pods, each rank behaves exactly
 * as its representative r mod P at the same times.  Only the P
 * representatives run then.  A message from representative a to rank b
 * is a flow on a's egress port and on the ingress port of b's class, and
 * is delivered, as seen from the period where b is the representative
 * b mod P, from a moved by the same number of periods (its image).  Every
 * flow of the full system is the image of exactly one flow a
 * representative sends, so ports carry the same number of flows and the
 * times are those of the full run.
 */
#include <math.h>
#include "sim.h"

enum sim_ev_kind { EV_START, EV_FLOW_DONE, EV_DELIVER, EV_CREDIT, EV_WAKE };

struct sim_ev {
	double t;
	u64 seq;	/* FIFO among equal times: deterministic */
	u32 kind;
	u32 a;		/* rank the event is for, or flow id */
	u32 b;		/* peer rank, or flow version */
	void *p;	/* message */
};

struct sim_msg {
	u32 src;	/* sender: a representative */
	u32 dst;	/* receiver rank */
	u32 rsrc;	/* the sender as the receiver's representative sees it */
	u32 rdst;	/* the receiver's representative */
	u32 tag;
	u32 len;	/* data bytes: what the links carry */
	u32 level;
	/*
	 * The executor's header on a first message: delivered with the data,
	 * like the tag, but it takes no time (len does not count it), so the
	 * model and the times are those of the plan's data alone.
	 */
	u32 hlen;
	u8 hdr[];
};

struct sim_flow {
	struct sim_msg *msg;
	double rem;	/* bytes left */
	double rate;	/* bytes per second */
	double t_last;	/* rem is as of this time */
	double cap;	/* rate alone on its links (1 / beta) */
	u32 res[2];	/* resources it crosses */
	u32 pos[2];	/* its index in their flow lists */
	u32 nres;
	u32 ver;
	u32 k;		/* sharing factor its rate is computed with */
};

struct sim_res {
	u32 n;
	u32 cap;
	u32 *flows;
	bool dirty;	/* its flows need new rates before time moves on */
};

struct sim_pair {
	u64 key;	/* (src << 32 | dst) + 1; 0 = empty */
	u32 res;
};

struct sim;

/* Rendezvous: the round of every receive, per peer in plan order (CSR). */
struct sim_rv {
	u32 *peer_rank;		/* plan peers sorted by rank ... */
	u32 *peer_idx;		/* ... and their plan indices */
	u32 *off;		/* [npeers + 1] into round */
	u32 *round;		/* round of the k-th receive from a peer */
	struct sim_msg **wait;	/* messages whose receiver is not there yet */
	u32 nwait, capwait;
	u32 *expect;		/* per plan peer: sequence number delivered next */
	struct sim_msg **early;	/* arrived before an earlier one of its QP */
	u32 nearly, capearly;
};

struct sim_rank {
	struct sim *s;
	u32 rank;
	struct sim_rv rv;
	struct kc_exec ex;
	double busy;	/* free again at this time */
	double clock;	/* during an event: the rank's time */
	struct sim_ev *defer;	/* events that came while busy, FIFO */
	u32 dhead, dn, dcap;
	bool wake;	/* an EV_WAKE is queued */
	bool done;
	double t_done;
};

struct sim {
	const struct kc_topo *t;
	const struct sim_model *m;
	u32 period;	/* ranks simulated: representatives 0..period-1 */
	struct sim_rank *rk;
	double now;
	u64 seq;
	struct sim_ev *heap;
	u32 nheap, capheap;
	struct sim_flow *fl;
	u32 nfl, capfl;
	u32 *freefl;	/* ids of finished flows, for reuse */
	u32 nfree, capfree;
	struct sim_res *res;
	u32 nres, capres;
	struct sim_pair *pairs;
	u32 npairs, cappairs;	/* cappairs: power of two */
	u32 *dirty;	/* resources whose flow count changed at this instant */
	u32 ndirty, capdirty;
	int err;
	u64 events;
};

static void *sim_grow(void *p, u32 *cap, size_t elem, u32 need)
{
	u32 c = *cap ? *cap : 64;
	void *q;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return p;
	q = realloc(p, (size_t)c * elem);
	if (!q)
		return NULL;
	*cap = c;
	return q;
}

/* ------------------------------------------------------------ events */

static bool ev_before(const struct sim_ev *x, const struct sim_ev *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void ev_push(struct sim *s, double t, u32 kind, u32 a, u32 b, void *p)
{
	struct sim_ev e = { t, s->seq++, kind, a, b, p };
	struct sim_ev *h;
	u32 i;

	h = sim_grow(s->heap, &s->capheap, sizeof(*h), s->nheap + 1);
	if (!h) {
		s->err = -ENOMEM;
		return;
	}
	s->heap = h;
	i = s->nheap++;
	while (i && ev_before(&e, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = e;
}

static struct sim_ev ev_pop(struct sim *s)
{
	struct sim_ev *h = s->heap, top = h[0], last = h[--s->nheap];
	u32 i = 0, n = s->nheap;

	for (;;) {
		u32 c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ev_before(&h[c + 1], &h[c]))
			c++;
		if (!ev_before(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
	return top;
}

/* ------------------------------------------------------------ links */

/* The representative of rank x. */
static u32 sim_rep(const struct sim *s, u32 x)
{
	return x % s->period;
}

/* Rank x moved by the periods that take rank y to its representative. */
static u32 sim_img(const struct sim *s, u32 x, u32 y)
{
	u32 p = s->t->nranks;

	return (x + p - (y - y % s->period)) % p;
}

u32 sim_level_of(const struct kc_topo *t, u32 a, u32 b)
{
	u32 sa = t->server_of[a], sb = t->server_of[b];

	if (sa == sb)
		return KCOLL_LEVEL0;
	return t->pod_of[sa] == t->pod_of[sb] ? KCOLL_LEVEL1 : KCOLL_LEVEL2;
}

static u32 sim_new_res(struct sim *s)
{
	struct sim_res *r = sim_grow(s->res, &s->capres, sizeof(*r), s->nres + 1);

	if (!r) {
		s->err = -ENOMEM;
		return 0;
	}
	s->res = r;
	memset(&r[s->nres], 0, sizeof(*r));
	return s->nres++;
}

/* The resource of the level-0 link src -> dst (open addressing). */
static u32 sim_pair_res(struct sim *s, u32 src, u32 dst)
{
	u64 key = ((u64)src << 32 | dst) + 1;
	u32 i;

	if (2 * (s->npairs + 1) > s->cappairs) {
		u32 oc = s->cappairs, nc = oc ? oc * 2 : 1024;
		struct sim_pair *old = s->pairs, *np = calloc(nc, sizeof(*np));

		if (!np) {
			s->err = -ENOMEM;
			return 0;
		}
		for (i = 0; i < oc; i++) {
			u32 j;

			if (!old[i].key)
				continue;
			j = (u32)(old[i].key * 0x9e3779b97f4a7c15ull >> 40) & (nc - 1);
			while (np[j].key)
				j = (j + 1) & (nc - 1);
			np[j] = old[i];
		}
		free(old);
		s->pairs = np;
		s->cappairs = nc;
	}
	i = (u32)(key * 0x9e3779b97f4a7c15ull >> 40) & (s->cappairs - 1);
	while (s->pairs[i].key && s->pairs[i].key != key)
		i = (i + 1) & (s->cappairs - 1);
	if (!s->pairs[i].key) {
		s->pairs[i].key = key;
		s->pairs[i].res = sim_new_res(s);
		s->npairs++;
	}
	return s->pairs[i].res;
}

static double sim_beta(const struct sim *s, u32 level)
{
	double b = s->m->lv[level].beta;

	return level == KCOLL_LEVEL2 ? b * s->m->conv : b;
}

/* Bring flow f's bytes up to now and give it the rate its links allow. */
static void flow_rerate(struct sim *s, u32 id)
{
	struct sim_flow *f = &s->fl[id];
	u32 k = 1, i;

	for (i = 0; i < f->nres; i++)
		k = s->res[f->res[i]].n > k ? s->res[f->res[i]].n : k;
	if (k == f->k && f->rate > 0)
		return;
	f->rem -= f->rate * (s->now - f->t_last);
	if (f->rem < 0)
		f->rem = 0;
	f->t_last = s->now;
	f->k = k;
	f->rate = f->cap / k;
	f->ver++;
	ev_push(s, s->now + f->rem / f->rate, EV_FLOW_DONE, id, f->ver, NULL);
}

static void res_add(struct sim *s, u32 id, u32 slot)
{
	struct sim_flow *f = &s->fl[id];
	struct sim_res *r = &s->res[f->res[slot]];
	u32 *fl = sim_grow(r->flows, &r->cap, sizeof(u32), r->n + 1);

	if (!fl) {
		s->err = -ENOMEM;
		return;
	}
	r->flows = fl;
	f->pos[slot] = r->n;
	fl[r->n++] = id;
}

static void res_del(struct sim *s, u32 id, u32 slot)
{
	struct sim_flow *f = &s->fl[id];
	struct sim_res *r = &s->res[f->res[slot]];
	u32 i = f->pos[slot], moved = r->flows[--r->n];

	r->flows[i] = moved;
	if (moved != id) {
		struct sim_flow *g = &s->fl[moved];
		u32 j;

		for (j = 0; j < g->nres; j++)
			if (g->res[j] == f->res[slot] && g->pos[j] == r->n)
				g->pos[j] = i;
	}
}

/*
 * The flow count of res changed.  Rates are settled once per instant
 * (sim_settle(), before time moves on): m flows starting or ending
 * together cost O(m) rate updates, not O(m^2).
 */
static void res_rerate(struct sim *s, u32 res)
{
	u32 *d;

	if (s->res[res].dirty)
		return;
	d = sim_grow(s->dirty, &s->capdirty, sizeof(*d), s->ndirty + 1);
	if (!d) {
		s->err = -ENOMEM;
		return;
	}
	s->dirty = d;
	d[s->ndirty++] = res;
	s->res[res].dirty = true;
}

static void sim_settle(struct sim *s)
{
	while (s->ndirty) {
		u32 res = s->dirty[--s->ndirty], i;

		s->res[res].dirty = false;
		for (i = 0; i < s->res[res].n; i++)
			flow_rerate(s, s->res[res].flows[i]);
	}
}

static void flow_start(struct sim *s, struct sim_msg *msg)
{
	double beta = sim_beta(s, msg->level);
	struct sim_flow *f;
	u32 id, i, p = s->period, *ff;

	if (!msg->len || beta <= 0) {
		ev_push(s, s->now + s->m->lv[msg->level].alpha, EV_DELIVER, msg->rdst, msg->rsrc,
			msg);
		return;
	}
	if (s->nfree) {
		id = s->freefl[--s->nfree];
	} else {
		f = sim_grow(s->fl, &s->capfl, sizeof(*f), s->nfl + 1);
		if (!f) {
			s->err = -ENOMEM;
			return;
		}
		s->fl = f;
		ff = sim_grow(s->freefl, &s->capfree, sizeof(u32), s->nfl + 1);
		if (!ff) {
			s->err = -ENOMEM;
			return;
		}
		s->freefl = ff;
		id = s->nfl++;
		s->fl[id].ver = 0;
	}
	f = &s->fl[id];
	f->msg = msg;
	f->rem = msg->len;
	f->rate = 0;
	f->k = 0;
	f->t_last = s->now;
	f->cap = 1.0 / beta;
	if (msg->level == KCOLL_LEVEL0) {
		f->nres = 1;
		f->res[0] = sim_pair_res(s, msg->src, msg->dst);
	} else {
		f->nres = 2;
		f->res[0] = msg->src;
		f->res[1] = p + sim_rep(s, msg->dst);
	}
	for (i = 0; i < f->nres; i++)
		res_add(s, id, i);
	for (i = 0; i < f->nres; i++)
		res_rerate(s, s->fl[id].res[i]);
}

static void flow_done(struct sim *s, u32 id, u32 ver)
{
	struct sim_flow *f = &s->fl[id];
	struct sim_msg *msg = f->msg;
	u32 i, res[2], n = f->nres;

	if (ver != f->ver || !msg)
		return;		/* stale: its rate changed since */
	for (i = 0; i < n; i++) {
		res[i] = f->res[i];
		res_del(s, id, i);
	}
	f->msg = NULL;
	f->ver++;
	s->freefl[s->nfree++] = id;
	for (i = 0; i < n; i++)
		res_rerate(s, res[i]);
	ev_push(s, s->now + s->m->lv[msg->level].alpha, EV_DELIVER, msg->rdst, msg->rsrc, msg);
}

/* ------------------------------------------------------------ rendezvous */

static bool rv_is_recv(const struct kc_step *st)
{
	return st->kind == KC_STEP_RECV || st->kind == KC_STEP_RECV_REDUCE;
}

/*
 * Rounds are numbered as the executor numbers them (ex.round): the
 * non-empty rounds of the plan's expansion.
 */
static int rv_init(struct sim_rv *rv, const struct kc_plan *p)
{
	u32 np = p->npeers, i, *fill;
	struct kc_plan_walk w;
	struct kc_step st;
	u64 nrecv = 0;

	rv->peer_rank = malloc(((size_t)np * 4 + 1) * sizeof(u32));
	if (!rv->peer_rank)
		return -ENOMEM;
	rv->peer_idx = rv->peer_rank + np;
	rv->expect = rv->peer_idx + np;
	rv->off = rv->expect + np;
	memset(rv->expect, 0, (size_t)np * sizeof(u32));
	for (i = 0; i < np; i++) {
		u32 j = i;

		/* insertion sort by rank (plan->peers is already in rank order) */
		while (j && rv->peer_rank[j - 1] > p->peers[i]) {
			rv->peer_rank[j] = rv->peer_rank[j - 1];
			rv->peer_idx[j] = rv->peer_idx[j - 1];
			j--;
		}
		rv->peer_rank[j] = p->peers[i];
		rv->peer_idx[j] = i;
	}
	memset(rv->off, 0, ((size_t)np + 1) * sizeof(u32));
	kc_plan_walk_begin(p, &w);
	while (kc_plan_walk_next(p, &w, &st)) {
		if (rv_is_recv(&st)) {
			rv->off[st.peer + 1]++;
			nrecv++;
		}
	}
	rv->round = malloc((size_t)(nrecv + 1) * sizeof(u32));
	if (!rv->round)
		return -ENOMEM;
	for (i = 0; i < np; i++)
		rv->off[i + 1] += rv->off[i];
	fill = calloc(np ? np : 1, sizeof(u32));
	if (!fill)
		return -ENOMEM;
	kc_plan_walk_begin(p, &w);
	while (kc_plan_walk_next(p, &w, &st))
		if (rv_is_recv(&st))
			rv->round[rv->off[st.peer] + fill[st.peer]++] = w.round;
	free(fill);
	return 0;
}

/* Plan index of peer rank src, or U32_MAX. */
static u32 rv_peer(const struct sim_rank *rk, u32 src)
{
	const struct sim_rv *rv = &rk->rv;
	u32 lo = 0, hi = rk->ex.plan->npeers;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (rv->peer_rank[mid] < src)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == rk->ex.plan->npeers || rv->peer_rank[lo] != src)
		return U32_MAX;
	return rv->peer_idx[lo];
}

/* Is rank rk in (or past) the round that consumes msg? */
static bool rv_ready(const struct sim_rank *rk, const struct sim_msg *msg)
{
	const struct sim_rv *rv = &rk->rv;
	u32 lo = rv_peer(rk, msg->rsrc), k = kc_tag_msg_seq(msg->tag), need;

	if (lo == U32_MAX)
		return true;	/* not expected: let the executor report it */
	if (rv->off[lo] + k >= rv->off[lo + 1])
		return true;
	need = rv->round[rv->off[lo] + k];
	return rk->done || rk->ex.round > need || (rk->ex.round == need && rk->ex.entered);
}

static void sim_post(struct sim *s, struct sim_msg *msg, double at)
{
	if (at > s->now)
		ev_push(s, at, EV_START, 0, 0, msg);
	else
		flow_start(s, msg);
}

/* After rank rk moved on: start what now waits for nothing. */
static void rv_release(struct sim *s, struct sim_rank *rk)
{
	struct sim_rv *rv = &rk->rv;
	u32 i = 0;

	while (i < rv->nwait) {
		if (rv_ready(rk, rv->wait[i])) {
			sim_post(s, rv->wait[i], rk->clock);
			rv->wait[i] = rv->wait[--rv->nwait];
		} else {
			i++;
		}
	}
}

/* ------------------------------------------------------------ transport */

static int sim_send(void *ctx, u32 peer, u32 tag, const void *hdr, u32 hdr_len, u8 buf, u64 off,
		    const void *data, u32 len)
{
	struct sim_rank *rk = ctx;
	struct sim *s = rk->s;
	struct sim_msg *msg = malloc(sizeof(*msg) + hdr_len);

	(void)buf;
	(void)off;
	(void)data;
	if (!msg)
		return -ENOMEM;
	msg->hlen = hdr_len;
	if (hdr_len)
		memcpy(msg->hdr, hdr, hdr_len);
	msg->src = rk->rank;
	msg->dst = peer;
	msg->tag = tag;
	msg->len = len;
	msg->level = sim_level_of(s->t, rk->rank, peer);
	msg->rdst = sim_rep(s, peer);
	msg->rsrc = sim_img(s, rk->rank, peer);
	if (s->m->rendezvous && !rv_ready(&s->rk[msg->rdst], msg)) {
		struct sim_rv *rv = &s->rk[msg->rdst].rv;
		struct sim_msg **w = sim_grow(rv->wait, &rv->capwait, sizeof(*w), rv->nwait + 1);

		if (!w) {
			free(msg);
			return -ENOMEM;
		}
		rv->wait = w;
		w[rv->nwait++] = msg;
		return s->err;
	}
	sim_post(s, msg, rk->clock);
	return s->err;
}

static void sim_release(void *ctx, u32 peer, void *slot)
{
	struct sim_rank *rk = ctx;

	free(slot);
	ev_push(rk->s, rk->clock, EV_CREDIT, sim_rep(rk->s, peer), sim_img(rk->s, rk->rank, peer),
		NULL);
}

static void sim_work(void *ctx, u32 peer, u8 kind, u64 len)
{
	struct sim_rank *rk = ctx;
	u32 level = peer == U32_MAX ? KCOLL_LEVEL0 : sim_level_of(rk->s->t, rk->rank, peer);

	if (kind == KC_STEP_RECV_REDUCE || kind == KC_STEP_REDUCE)
		rk->clock += (double)len * rk->s->m->lv[level].gamma;
}

static const struct kc_xport_ops sim_ops = {
	.send = sim_send,
	.release = sim_release,
	.work = sim_work,
};

/* ------------------------------------------------------------ driver */

static void sim_after(struct sim *s, struct sim_rank *rk, int st)
{
	rk->busy = rk->clock;
	if (s->m->rendezvous && rk->rv.nwait)
		rv_release(s, rk);
	if (st == -EINPROGRESS || rk->done)
		return;
	rk->done = true;
	rk->t_done = rk->clock;
	if (st && !s->err)
		s->err = st;
}

/*
 * Hand msg to the executor in the order its QP (the ordered pair of ranks)
 * sent it: a short message that overtook a long one waits for it.
 */
static int sim_deliver(struct sim *s, struct sim_rank *rk, struct sim_msg *msg)
{
	struct sim_rv *rv = &rk->rv;
	u32 pi = rv_peer(rk, msg->rsrc), i;
	int st;

	if (pi != U32_MAX && kc_tag_msg_seq(msg->tag) != kc_tag_msg_seq(rv->expect[pi])) {
		struct sim_msg **w = sim_grow(rv->early, &rv->capearly, sizeof(*w),
					      rv->nearly + 1);

		if (!w) {
			s->err = -ENOMEM;
			return -ENOMEM;
		}
		rv->early = w;
		w[rv->nearly++] = msg;
		return rk->ex.status;
	}
	for (;;) {
		u32 src = msg->rsrc;

		if (pi != U32_MAX)
			rv->expect[pi]++;
		st = kc_exec_recv(&rk->ex, src, msg->tag, msg->hlen ? msg->hdr : NULL,
				  msg->hlen + msg->len, msg);
		if (pi == U32_MAX || st != -EINPROGRESS)
			return st;
		for (i = 0; i < rv->nearly; i++)
			if (rv->early[i]->rsrc == src &&
			    kc_tag_msg_seq(rv->early[i]->tag) == kc_tag_msg_seq(rv->expect[pi]))
				break;
		if (i == rv->nearly)
			return st;
		msg = rv->early[i];
		rv->early[i] = rv->early[--rv->nearly];
	}
}

static void sim_rank_event(struct sim *s, struct sim_rank *rk, const struct sim_ev *e)
{
	int st;

	rk->clock = s->now;
	if (e->kind == EV_DELIVER)
		st = sim_deliver(s, rk, e->p);
	else
		st = kc_exec_send_done(&rk->ex, e->b);
	sim_after(s, rk, st);
}

/* Park an event for a busy rank (in arrival order) and wake it when free. */
static void sim_defer(struct sim *s, struct sim_rank *rk, const struct sim_ev *e)
{
	if (rk->dn == rk->dcap) {
		u32 nc = rk->dcap ? rk->dcap * 2 : 16, i;
		struct sim_ev *d = malloc((size_t)nc * sizeof(*d));

		if (!d) {
			s->err = -ENOMEM;
			return;
		}
		for (i = 0; i < rk->dn; i++)
			d[i] = rk->defer[(rk->dhead + i) % rk->dcap];
		free(rk->defer);
		rk->defer = d;
		rk->dcap = nc;
		rk->dhead = 0;
	}
	rk->defer[(rk->dhead + rk->dn++) % rk->dcap] = *e;
	if (!rk->wake) {
		rk->wake = true;
		ev_push(s, rk->busy, EV_WAKE, rk->rank, 0, NULL);
	}
}

static void sim_event(struct sim *s, const struct sim_ev *e)
{
	struct sim_rank *rk;

	switch (e->kind) {
	case EV_START:
		flow_start(s, e->p);
		return;
	case EV_FLOW_DONE:
		flow_done(s, e->a, e->b);
		return;
	}
	rk = &s->rk[e->a];
	if (e->kind != EV_WAKE) {
		/* still reducing, or others wait before it: the event waits */
		if (rk->busy > s->now || rk->dn)
			sim_defer(s, rk, e);
		else
			sim_rank_event(s, rk, e);
		return;
	}
	rk->wake = false;
	while (rk->dn && rk->busy <= s->now && !s->err) {
		struct sim_ev d = rk->defer[rk->dhead];

		rk->dhead = (rk->dhead + 1) % rk->dcap;
		rk->dn--;
		sim_rank_event(s, rk, &d);
	}
	if (rk->dn && !rk->wake) {
		rk->wake = true;
		ev_push(s, rk->busy, EV_WAKE, rk->rank, 0, NULL);
	}
}

struct sim_model sim_bench_model(double conv)
{
	struct sim_model m = { .conv = conv, .rendezvous = true, .symmetry = true };

	m.lv[0] = (struct sim_level){ 1e-6, 2e-11, 1e-11 };
	m.lv[1] = (struct sim_level){ 5e-6, 4e-11, 1e-11 };
	m.lv[2] = m.lv[1];
	return m;
}

struct kc_exec_cfg sim_conformance_cfg(void)
{
	struct kc_exec_cfg ec = { .chunk_bytes = U32_MAX & ~7u, .window = 0, .op_seq = 1 };

	return ec;
}

/*
 * Window 0: as many messages as any round sends to (or receives from) one
 * peer, so the window never holds a step back (one message per step).
 */
static u32 sim_round_window(struct kc_plan *const *plans, u32 p)
{
	u32 r, w = 1;

	for (r = 0; r < p; r++) {
		const struct kc_plan *pl = plans[r];
		u32 *cnt = calloc(2 * (size_t)pl->npeers + 1, sizeof(u32));
		struct kc_round_it ri;
		struct kc_step_it it;
		struct kc_step st;
		bool more;

		if (!cnt)
			return 0;
		for (more = kc_plan_round_first(pl, &ri); more; more = kc_plan_round_next(pl, &ri)) {
			kc_plan_steps_begin(pl, &ri, &it);
			while (kc_plan_step_next(pl, &it, &st)) {
				u32 *c = st.kind == KC_STEP_SEND ? &cnt[2 * st.peer] :
					 &cnt[2 * st.peer + 1];

				if (st.kind <= KC_STEP_RECV_REDUCE && ++*c > w)
					w = *c;
			}
			kc_plan_steps_begin(pl, &ri, &it);
			while (kc_plan_step_next(pl, &it, &st))
				if (st.kind <= KC_STEP_RECV_REDUCE)
					cnt[2 * st.peer] = cnt[2 * st.peer + 1] = 0;
		}
		free(cnt);
	}
	return w;
}

static u32 sim_comm_rounds(const struct kc_plan *p)
{
	struct kc_round_it ri;
	struct kc_step_it it;
	struct kc_step st;
	u32 n = 0;
	bool more;

	for (more = kc_plan_round_first(p, &ri); more; more = kc_plan_round_next(p, &ri)) {
		kc_plan_steps_begin(p, &ri, &it);
		while (kc_plan_step_next(p, &it, &st)) {
			if (st.kind <= KC_STEP_RECV_REDUCE) {
				n++;
				break;
			}
		}
	}
	return n;
}

/* Steps of the plan's expansion. */
static u64 sim_plan_steps(const struct kc_plan *p)
{
	u64 n;
	u32 r;

	kc_plan_expanded_size(p, &n, &r);
	return n;
}

static void sim_free(struct sim *s)
{
	u32 i;

	if (s->rk) {
		for (i = 0; i < s->period; i++) {
			struct sim_rv *rv = &s->rk[i].rv;

			kc_exec_destroy(&s->rk[i].ex);
			for (; s->rk[i].dn; s->rk[i].dn--) {
				struct sim_ev *d = &s->rk[i].defer[s->rk[i].dhead];

				if (d->kind == EV_DELIVER)
					free(d->p);
				s->rk[i].dhead = (s->rk[i].dhead + 1) % s->rk[i].dcap;
			}
			free(s->rk[i].defer);
			while (rv->nwait)
				free(rv->wait[--rv->nwait]);
			while (rv->nearly)
				free(rv->early[--rv->nearly]);
			free(rv->wait);
			free(rv->early);
			free(rv->peer_rank);
			free(rv->round);
		}
	}
	for (i = 0; i < s->nheap; i++)
		if (s->heap[i].kind == EV_START || s->heap[i].kind == EV_DELIVER)
			free(s->heap[i].p);
	for (i = 0; i < s->nfl; i++)
		free(s->fl[i].msg);
	for (i = 0; i < s->nres; i++)
		free(s->res[i].flows);
	free(s->rk);
	free(s->heap);
	free(s->fl);
	free(s->freefl);
	free(s->res);
	free(s->pairs);
	free(s->dirty);
}

int sim_run_period(const struct kc_topo *t, struct kc_plan *const *plans, u32 period,
		   const struct sim_model *m, const struct kc_exec_cfg *ec,
		   struct sim_result *res)
{
	struct kc_exec_cfg cfg = *ec;
	struct sim s = { .t = t, .m = m, .period = period };
	void *bufs[KC_BUF_COUNT] = { NULL };
	u32 p = period, r, i;
	int ret = 0;

	res->status = 0;
	res->time = 0;
	res->max_sent = res->max_recv = res->total_sent = 0;
	res->max_rounds = res->max_steps = 0;
	res->period = period;
	if (!period || t->nranks % period)
		return -EINVAL;
	cfg.flags |= KC_EXEC_F_NODATA;
	if (!cfg.window)
		cfg.window = sim_round_window(plans, p);
	if (!cfg.window)
		return -ENOMEM;
	s.rk = calloc(p, sizeof(*s.rk));
	if (!s.rk)
		return -ENOMEM;
	/* Ports first: resource r is rank r's egress, p + r its ingress. */
	for (r = 0; r < 2 * p && !s.err; r++)
		sim_new_res(&s);
	for (r = 0; r < p && !s.err; r++) {
		struct sim_rank *rk = &s.rk[r];

		rk->s = &s;
		rk->rank = r;
		ret = kc_exec_init(&rk->ex, plans[r], bufs, &cfg, &sim_ops, rk);
		if (!ret)
			ret = rv_init(&rk->rv, plans[r]);
		if (ret)
			goto out;
	}
	for (r = 0; r < p && !s.err; r++) {
		s.rk[r].clock = 0;
		sim_after(&s, &s.rk[r], kc_exec_start(&s.rk[r].ex));
	}
	for (;;) {
		struct sim_ev e;

		/*
		 * Events within a relative 1e-12 of now are the same instant:
		 * flows that share links end "together" up to rounding, and
		 * settling rates between them would cost O(m^2) for m flows.
		 */
		if (s.ndirty && (!s.nheap || s.heap[0].t > s.now + 1e-12 * s.now))
			sim_settle(&s);
		if (!s.nheap || s.err)
			break;
		e = ev_pop(&s);

		if (e.t > s.now)
			s.now = e.t;
		s.events++;
		sim_event(&s, &e);
	}
	ret = s.err;
	for (r = 0; r < p && !ret; r++) {
		struct sim_rank *rk = &s.rk[r];

		if (!rk->done) {
			ret = -EDEADLK;	/* a rank waits for a message nobody sends */
			break;
		}
		res->time = fmax(res->time, rk->t_done);
		res->max_sent = kc_max_u64(res->max_sent, rk->ex.bytes_sent);
		res->max_recv = kc_max_u64(res->max_recv, rk->ex.bytes_received);
		res->total_sent += rk->ex.bytes_sent * (t->nranks / p);
		for (i = r; i < t->nranks; i += p) {
			if (res->sent)
				res->sent[i] = rk->ex.bytes_sent;
			if (res->recv)
				res->recv[i] = rk->ex.bytes_received;
		}
		res->max_rounds = kc_max_u64(res->max_rounds, sim_comm_rounds(plans[r]));
		res->max_steps = kc_max_u64(res->max_steps, sim_plan_steps(plans[r]));
	}
out:
	res->events = s.events;
	res->status = ret;
	sim_free(&s);
	return ret;
}
