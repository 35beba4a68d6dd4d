// SPDX-License-Identifier: GPL-2.0
/*
 * Plan storage and the builder that algorithm generators write through.
 */
#include "kc_build.h"

void kc_plan_free(struct kc_plan *plan)
{
	if (!plan)
		return;
	kc_free(plan->steps);
	kc_free(plan->round_start);
	kc_free(plan->peers);
	kc_free(plan);
}

static bool kc_is_xfer(u8 kind)
{
	return kind == KC_STEP_SEND || kind == KC_STEP_RECV || kind == KC_STEP_RECV_REDUCE;
}

u64 kc_plan_bytes_sent(const struct kc_plan *plan)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < plan->nsteps; i++)
		if (plan->steps[i].kind == KC_STEP_SEND)
			sum += plan->steps[i].len;
	return sum;
}

u64 kc_plan_bytes_received(const struct kc_plan *plan)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < plan->nsteps; i++)
		if (plan->steps[i].kind == KC_STEP_RECV ||
		    plan->steps[i].kind == KC_STEP_RECV_REDUCE)
			sum += plan->steps[i].len;
	return sum;
}

int kc_b_fail(struct kc_builder *b, int err)
{
	if (!b->err)
		b->err = err;
	return b->err;
}

/* Grow an array of elem-sized items to hold at least need items. */
static int kc_grow(void **arr, u32 *cap, u32 need, size_t elem)
{
	u32 ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > U32_MAX / 2)
			return -E2BIG;
		ncap *= 2;
	}
	n = kc_malloc((size_t)ncap * elem);
	if (!n)
		return -ENOMEM;
	if (*arr) {
		memcpy(n, *arr, (size_t)*cap * elem);
		kc_free(*arr);
	}
	*arr = n;
	*cap = ncap;
	return 0;
}

static void kc_b_push(struct kc_builder *b, const struct kc_step *s)
{
	struct kc_plan *p = b->plan;
	int err;

	if (b->err)
		return;
	/* Empty transfers are dropped on both sides alike; barriers use SYNC. */
	if (!s->len && !(s->flags & KC_STEP_F_SYNC))
		return;
	if (s->kind == KC_STEP_COPY && s->buf == s->sbuf && s->off == s->soff)
		return;
	if (!b->round_open) {
		err = kc_grow((void **)&p->round_start, &p->rounds_cap, p->nrounds + 2,
			      sizeof(*p->round_start));
		if (err) {
			kc_b_fail(b, err);
			return;
		}
		p->round_start[p->nrounds] = p->nsteps;
	}
	err = kc_grow((void **)&p->steps, &p->steps_cap, p->nsteps + 1, sizeof(*p->steps));
	if (err) {
		kc_b_fail(b, err);
		return;
	}
	p->steps[p->nsteps++] = *s;
	b->round_open++;
}

void kc_b_round(struct kc_builder *b)
{
	if (b->err || !b->round_open)
		return;
	b->plan->nrounds++;
	b->plan->round_start[b->plan->nrounds] = b->plan->nsteps;
	b->round_open = 0;
}

static void kc_b_transfer(struct kc_builder *b, u8 kind, u32 peer, u8 buf, u64 off, u64 len,
			  u8 flags)
{
	struct kc_step s = { .kind = kind, .buf = buf, .flags = flags, .peer = peer,
			     .off = off, .len = len };

	if (peer >= b->plan->nranks || peer == b->plan->rank) {
		kc_b_fail(b, -EPROTO);	/* a generator bug, never user input */
		return;
	}
	kc_b_push(b, &s);
}

void kc_b_send(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len)
{
	kc_b_transfer(b, KC_STEP_SEND, peer, buf, off, len, 0);
}

void kc_b_recv(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len)
{
	kc_b_transfer(b, KC_STEP_RECV, peer, buf, off, len, 0);
}

void kc_b_recv_reduce(struct kc_builder *b, u32 peer, u8 buf, u64 off, u64 len)
{
	kc_b_transfer(b, KC_STEP_RECV_REDUCE, peer, buf, off, len, 0);
}

void kc_b_sync_send(struct kc_builder *b, u32 peer)
{
	kc_b_transfer(b, KC_STEP_SEND, peer, KC_BUF_SCRATCH, 0, 0, KC_STEP_F_SYNC);
}

void kc_b_sync_recv(struct kc_builder *b, u32 peer)
{
	kc_b_transfer(b, KC_STEP_RECV, peer, KC_BUF_SCRATCH, 0, 0, KC_STEP_F_SYNC);
}

void kc_b_copy(struct kc_builder *b, u8 dbuf, u64 doff, u8 sbuf, u64 soff, u64 len)
{
	struct kc_step s = { .kind = KC_STEP_COPY, .buf = dbuf, .sbuf = sbuf,
			     .off = doff, .len = len, .soff = soff };

	kc_b_push(b, &s);
}

void kc_b_reduce(struct kc_builder *b, u8 dbuf, u64 doff, u8 sbuf, u64 soff, u64 len)
{
	struct kc_step s = { .kind = KC_STEP_REDUCE, .buf = dbuf, .sbuf = sbuf,
			     .off = doff, .len = len, .soff = soff };

	kc_b_push(b, &s);
}

void kc_b_avg(struct kc_builder *b, u8 buf, u64 off, u64 len)
{
	struct kc_step s = { .kind = KC_STEP_AVG, .buf = buf, .off = off, .len = len };

	kc_b_push(b, &s);
}

u64 kc_b_scratch(struct kc_builder *b, u64 bytes)
{
	u64 off = (b->scratch_top + 7) & ~(u64)7;

	b->scratch_top = off + bytes;
	if (b->scratch_top > b->plan->scratch_bytes)
		b->plan->scratch_bytes = b->scratch_top;
	return off;
}

/*
 * Replace global peer ranks in steps by indices into plan->peers, so the
 * executor keeps per-peer state for the peers this plan talks to only.
 * map is a caller-provided scratch of nranks entries.
 */
int kc_plan_finalize_peers(struct kc_plan *p)
{
	u32 *map, i, n = 0;

	map = kc_malloc((size_t)p->nranks * sizeof(*map));
	if (!map)
		return -ENOMEM;
	memset(map, 0xff, (size_t)p->nranks * sizeof(*map));
	for (i = 0; i < p->nsteps; i++)
		if (kc_is_xfer(p->steps[i].kind) && map[p->steps[i].peer] == U32_MAX)
			map[p->steps[i].peer] = n++;
	p->peers = kc_malloc((size_t)(n ? n : 1) * sizeof(*p->peers));
	if (!p->peers) {
		kc_free(map);
		return -ENOMEM;
	}
	p->npeers = n;
	for (i = 0; i < p->nsteps; i++) {
		struct kc_step *s = &p->steps[i];

		if (!kc_is_xfer(s->kind))
			continue;
		p->peers[map[s->peer]] = s->peer;
		s->peer = map[s->peer];
	}
	kc_free(map);
	return 0;
}
