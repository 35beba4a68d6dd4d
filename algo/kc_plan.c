// SPDX-License-Identifier: GPL-2.0
/*
 * Plan storage and the builder that algorithm generators write through:
 * steps, rounds, repeats, the final table of peers, and the send-buffer
 * map of an in-place ReduceScatter (see kc_build.h).  Walking a plan
 * is kc_plan_walk.c.
 */
#include "kc_build.h"

void kc_plan_free(struct kc_plan *plan)
{
	if (!plan)
		return;
	kc_free(plan->steps);
	kc_free(plan->round_start);
	kc_free(plan->progs);
	kc_free(plan->peers);
	kc_free(plan);
}

static bool kc_is_xfer(u8 kind)
{
	return kind == KC_STEP_SEND || kind == KC_STEP_RECV || kind == KC_STEP_RECV_REDUCE;
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

/* Append a record to the current round, opening one if needed. */
static void kc_b_append(struct kc_builder *b, const struct kc_step *s)
{
	struct kc_plan *p = b->plan;
	int err;

	if (b->err)
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

/*
 * An operand [lo, hi) of buffer buf seen through b->sendmap (see
 * kc_build.h): recorded, or true when it moves to the scratch copy.  An
 * operand that straddles the copied range cannot be moved whole: the two
 * passes did not see the same operands, a builder bug.
 */
static bool kc_b_sendmap(struct kc_builder *b, u8 buf, u64 lo, u64 hi, bool write)
{
	struct kc_sendmap *m = b->sendmap;
	int err;

	if (buf != KC_BUF_SEND || lo >= hi)
		return false;
	if (!m->collect) {
		if (lo >= m->lo && hi <= m->hi)
			return true;
		if (lo < m->hi && m->lo < hi)
			kc_b_fail(b, -EPROTO);
		return false;
	}
	err = kc_grow((void **)&m->spans, &m->cap, m->nspans + 1, sizeof(*m->spans));
	if (err) {
		kc_b_fail(b, err);
		return false;
	}
	m->spans[m->nspans].lo = lo;
	m->spans[m->nspans].hi = hi;
	m->spans[m->nspans].write = write;
	m->nspans++;
	return false;
}

/*
 * Offset x of the send buffer in the scratch copy.  A repeat's layout may
 * start before the copied range: its base then wraps below zero, and the
 * offsets kc_prog_at() adds to it wrap back into the copy.
 */
static u64 kc_sendmap_off(const struct kc_sendmap *m, u64 x)
{
	return x - m->lo + m->scr;
}

/* Append a step that exists; the steps of written-out repeats come here directly. */
static void kc_b_keep(struct kc_builder *b, const struct kc_step *s)
{
	/* Empty transfers are dropped on both sides alike; barriers use SYNC. */
	if (!s->len && !(s->flags & KC_STEP_F_SYNC))
		return;
	kc_b_append(b, s);
}

static void kc_b_push(struct kc_builder *b, struct kc_step *s)
{
	if (s->kind == KC_STEP_COPY && s->buf == s->sbuf && s->off == s->soff)
		return;
	if (b->sendmap) {
		if (kc_b_sendmap(b, s->buf, s->off, s->off + s->len, s->kind != KC_STEP_SEND)) {
			s->buf = KC_BUF_SCRATCH;
			s->off = kc_sendmap_off(b->sendmap, s->off);
		}
		if ((s->kind == KC_STEP_COPY || s->kind == KC_STEP_REDUCE) &&
		    kc_b_sendmap(b, s->sbuf, s->soff, s->soff + s->len, false)) {
			s->sbuf = KC_BUF_SCRATCH;
			s->soff = kc_sendmap_off(b->sendmap, s->soff);
		}
	}
	kc_b_keep(b, s);
}

void kc_b_round(struct kc_builder *b)
{
	if (b->err || !b->round_open)
		return;
	if (b->rep_open) {
		kc_b_fail(b, -EPROTO);	/* a round closed inside a repeat */
		return;
	}
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

/* ------------------------------------------------------------ repeats */

bool kc_ranges_layout(const struct kc_range *rg, u32 n, u8 buf, u32 esize, struct kc_layout *l)
{
	u64 len = n ? rg[0].len : 0;
	u32 i;

	if (!n || len % esize)
		return false;
	for (i = 1; i < n; i++)
		if (rg[i].len != len || rg[i].off != rg[i - 1].off + len)
			return false;
	l->r.buf = buf;
	l->r.off = rg[0].off;
	l->r.count = len / esize * n;
	l->nslices = n;
	l->spb = 1;
	return true;
}

void kc_b_rep_begin(struct kc_builder *b, u32 n, bool rounds)
{
	struct kc_step h = { .kind = KC_STEP_REPEAT, .peer = n,
			     .flags = rounds ? KC_STEP_F_ROUNDS : 0 };

	if (b->err)
		return;
	if (b->rep_open) {
		kc_b_fail(b, -EPROTO);	/* repeats do not nest */
		return;
	}
	if (rounds)
		kc_b_round(b);
	b->rep_round_open = b->round_open;
	b->rep_prog0 = b->plan->nprogs;
	b->rep_expand = b->explicit;
	kc_b_append(b, &h);
	if (!b->err) {
		b->rep_hdr = b->plan->nsteps - 1;
		b->rep_open = true;
	}
}

/* s mod n, for a stride that may be negative */
static u32 kc_stride_mod(s64 s, u32 n)
{
	return (u32)(((s % n) + n) % n);
}

void kc_b_rep_xfer(struct kc_builder *b, u8 kind, const struct kc_group *g, u32 m0, s64 dm,
		   const struct kc_layout *l, u32 b0, s64 db)
{
	struct kc_blockwalk w = { .b0 = b0, .db = db };

	kc_b_rep_xfer_walk(b, kind, g, m0, dm, l, &w);
}

static void kc_hull_add(u64 *lo, u64 *hi, u64 a, u64 z)
{
	if (a >= z)
		return;		/* empty blocks take no room */
	*lo = kc_min_u64(*lo, a);
	*hi = kc_max_u64(*hi, z);
}

/* Add blocks [b0, b1] (no wrap) of a repeat's layout to the hull. */
static void kc_hull_blocks(const struct kc_prog *pg, u32 b0, u32 b1, u64 *lo, u64 *hi)
{
	u64 a = kc_slice_start(pg->count, pg->nslices, b0 * pg->spb);
	u64 z = kc_slice_start(pg->count, pg->nslices, (b1 + 1) * pg->spb);

	kc_hull_add(lo, hi, pg->off + a * pg->esize, pg->off + z * pg->esize);
}

/*
 * The bytes a repeat's transfer touches in its n iterations, as one range
 * (lo >= hi: none).  Exact when the iterations are few or the blocks stay
 * or step by one (Ring, Mesh, Pairwise); otherwise the layout's region,
 * both copies, which holds them: any range that holds an operand will do
 * (kc_build.h), and costs O(1) where stepping through would cost O(p).
 */
static void kc_prog_hull(const struct kc_prog *pg, u32 n, u64 *lo, u64 *hi)
{
	u32 nb = pg->nslices / pg->spb, m = kc_min_u32(n, nb), i, rank;
	u64 off, len, bytes = pg->count * pg->esize;

	*lo = U64_MAX;
	*hi = 0;
	if (n <= 64) {
		for (i = 0; i < n; i++) {
			kc_prog_at(pg, i, &rank, &off, &len);
			kc_hull_add(lo, hi, off, off + len);
		}
	} else if (pg->run || pg->pmask || (pg->db > 1 && pg->db + 1 < nb)) {
		kc_hull_add(lo, hi, pg->off, pg->off + bytes);
		if (pg->pmask)
			kc_hull_add(lo, hi, pg->alt_off, pg->alt_off + bytes);
	} else if (!pg->db) {
		kc_hull_blocks(pg, pg->b0, pg->b0, lo, hi);
	} else if (pg->db == 1) {
		/* m blocks up from b0, around the end */
		kc_hull_blocks(pg, pg->b0, kc_min_u32(pg->b0 + m, nb) - 1, lo, hi);
		if (pg->b0 + m > nb)
			kc_hull_blocks(pg, 0, pg->b0 + m - nb - 1, lo, hi);
	} else {
		/* m blocks down from b0, around the start */
		kc_hull_blocks(pg, pg->b0 + 1 >= m ? pg->b0 + 1 - m : 0, pg->b0, lo, hi);
		if (pg->b0 + 1 < m)
			kc_hull_blocks(pg, nb - (m - pg->b0 - 1), nb - 1, lo, hi);
	}
}

/* A repeat's transfer of n iterations seen through b->sendmap, as one operand. */
static void kc_b_sendmap_prog(struct kc_builder *b, struct kc_step *s, struct kc_prog *pg, u32 n,
			      bool write)
{
	u64 lo, hi;

	kc_prog_hull(pg, n, &lo, &hi);
	if (!kc_b_sendmap(b, s->buf, lo, hi, write))
		return;
	s->buf = KC_BUF_SCRATCH;
	pg->off = kc_sendmap_off(b->sendmap, pg->off);
	if (pg->pmask)
		pg->alt_off = kc_sendmap_off(b->sendmap, pg->alt_off);
}

void kc_b_rep_xfer_walk(struct kc_builder *b, u8 kind, const struct kc_group *g, u32 m0,
			s64 dm, const struct kc_layout *l, const struct kc_blockwalk *w)
{
	struct kc_plan *p = b->plan;
	struct kc_step s = { .kind = kind, .flags = KC_STEP_F_PROG };
	struct kc_prog pg = { .esize = b->esize, .nslices = 1, .spb = 1 };
	u32 n, nb, me;
	int err;

	if (b->err)
		return;
	if (!b->rep_open || kind > KC_STEP_RECV_REDUCE || m0 >= g->size ||
	    (l && (!l->spb || l->nslices % l->spb || !l->nslices))) {
		kc_b_fail(b, -EPROTO);	/* a generator bug, never user input */
		return;
	}
	n = p->steps[b->rep_hdr].peer;
	if (!n)
		return;		/* a repeat of nothing: kc_b_rep_end() drops it */
	pg.gsize = g->size;
	pg.m0 = m0;
	pg.dm = kc_stride_mod(dm, g->size);
	if (!pg.dm) {
		/* one peer throughout: any group will do */
		pg.gbase = kc_grp_rank(g, m0);
		pg.gsize = 1;
		pg.m0 = 0;
	} else if (!g->ranks && (dm == 1 || dm == -1)) {
		pg.gbase = g->base;
		pg.gstride = g->stride;
		/* the one iteration that would talk to me must not come */
		me = dm == 1 ? kc_grp_mod(g, (s64)g->me - m0) : kc_grp_mod(g, (s64)m0 - g->me);
		if (g->me < g->size && me < n) {
			kc_b_fail(b, -EPROTO);
			return;
		}
	} else {
		/* written out at kc_b_rep_end(), while the group still exists */
		b->rep_expand = true;
		pg.ranks = g->ranks;
		pg.gbase = g->base;
		pg.gstride = g->stride;
	}
	if (l) {
		s.buf = l->r.buf;
		pg.off = l->r.off;
		pg.count = l->r.count;
		pg.nslices = l->nslices;
		pg.spb = l->spb;
		nb = l->nslices / l->spb;
		pg.b0 = w->b0 % nb;
		pg.db = kc_stride_mod(w->db, nb);
		pg.run = w->run;
		pg.dbo = kc_stride_mod(w->dbo, nb);
		pg.pmask = w->pmask;
		pg.alt_off = w->alt_off;
	} else {
		s.buf = KC_BUF_SCRATCH;
		s.flags |= KC_STEP_F_SYNC;
	}
	if (b->sendmap && s.buf == KC_BUF_SEND)
		kc_b_sendmap_prog(b, &s, &pg, n, kind != KC_STEP_SEND);
	err = kc_grow((void **)&p->progs, &p->progs_cap, p->nprogs + 1, sizeof(*p->progs));
	if (err) {
		kc_b_fail(b, err);
		return;
	}
	kc_prog_at(&pg, 0, &s.peer, &s.off, &s.len);
	if (s.peer >= p->nranks || s.peer == p->rank ||
	    (!pg.ranks && pg.gbase + (u64)(pg.gsize - 1) * pg.gstride >= p->nranks)) {
		kc_b_fail(b, -EPROTO);
		return;
	}
	s.soff = p->nprogs;
	p->progs[p->nprogs++] = pg;
	kc_b_append(b, &s);
}

/*
 * Write the open repeat out step by step: its body (records and
 * progressions) moves to a copy, the plan is wound back to before the
 * header, and every iteration appends through the ordinary path, which
 * drops empty transfers and empty rounds and checks every peer.
 */
static void kc_b_rep_write_out(struct kc_builder *b)
{
	struct kc_plan *p = b->plan;
	const struct kc_step h = p->steps[b->rep_hdr];
	u32 nbody = p->nsteps - b->rep_hdr - 1, nprog = p->nprogs - b->rep_prog0, i, j;
	struct kc_step *body;
	struct kc_prog *progs;

	body = kc_malloc((size_t)(nbody ? nbody : 1) * sizeof(*body) +
			 (size_t)(nprog ? nprog : 1) * sizeof(*progs));
	if (!body) {
		kc_b_fail(b, -ENOMEM);
		return;
	}
	progs = (struct kc_prog *)(body + (nbody ? nbody : 1));
	memcpy(body, &p->steps[b->rep_hdr + 1], (size_t)nbody * sizeof(*body));
	if (nprog)	/* p->progs is still NULL when no repeat stayed compact */
		memcpy(progs, &p->progs[b->rep_prog0], (size_t)nprog * sizeof(*progs));
	p->nsteps = b->rep_hdr;
	p->nprogs = b->rep_prog0;
	b->round_open = b->rep_round_open;
	b->rep_open = false;
	for (i = 0; i < h.peer && !b->err; i++) {
		for (j = 0; j < nbody; j++) {
			struct kc_step s = body[j];

			if (s.flags & KC_STEP_F_PROG) {
				kc_prog_at(&progs[s.soff - b->rep_prog0], i, &s.peer, &s.off,
					   &s.len);
				s.flags &= ~KC_STEP_F_PROG;
				s.soff = 0;
				if (s.peer >= p->nranks || s.peer == p->rank) {
					kc_b_fail(b, -EPROTO);
					break;
				}
			}
			kc_b_keep(b, &s);
		}
		if (h.flags & KC_STEP_F_ROUNDS)
			kc_b_round(b);
	}
	kc_free(body);
}

void kc_b_rep_end(struct kc_builder *b)
{
	struct kc_plan *p = b->plan;
	struct kc_step *h;

	if (b->err)
		return;
	if (!b->rep_open) {
		kc_b_fail(b, -EPROTO);
		return;
	}
	h = &p->steps[b->rep_hdr];
	h->len = p->nsteps - b->rep_hdr - 1;
	if (b->rep_expand || !h->peer || !h->len) {
		kc_b_rep_write_out(b);
		return;
	}
	b->rep_open = false;
	if (h->flags & KC_STEP_F_ROUNDS)
		kc_b_round(b);
}

/* Set bits [a, z) of a bitmap. */
static void kc_bits_set(u64 *bits, u32 a, u32 z)
{
	for (; a < z && (a & 63); a++)
		bits[a / 64] |= (u64)1 << (a & 63);
	for (; a + 64 <= z; a += 64)
		bits[a / 64] = ~(u64)0;
	for (; a < z; a++)
		bits[a / 64] |= (u64)1 << (a & 63);
}

/*
 * Mark the peers of a body transfer repeated n times.  Its members form
 * one run around the group (dm is 0, 1 or gsize - 1); when the group's
 * ranks are consecutive the run is marked a word at a time.
 */
static void kc_mark_prog(u64 *bits, const struct kc_prog *g, u32 n)
{
	u32 m, k, first, r;

	if (!g->dm || n == 1) {
		r = g->gbase + g->m0 * g->gstride;
		bits[r / 64] |= (u64)1 << (r & 63);
		return;
	}
	n = kc_min_u32(n, g->gsize);
	/* the run is members [first, first + n) modulo gsize */
	first = g->dm == 1 ? g->m0 : (u32)(((u64)g->m0 + g->gsize - (n - 1)) % g->gsize);
	if (g->gstride == 1) {
		u32 end = first + n;

		kc_bits_set(bits, g->gbase + first, g->gbase + kc_min_u32(end, g->gsize));
		if (end > g->gsize)
			kc_bits_set(bits, g->gbase, g->gbase + end - g->gsize);
		return;
	}
	for (k = 0, m = first; k < n; k++) {
		r = g->gbase + m * g->gstride;
		bits[r / 64] |= (u64)1 << (r & 63);
		if (++m == g->gsize)
			m = 0;
	}
}

/*
 * Replace global peer ranks in steps by indices into plan->peers, so the
 * executor keeps per-peer state for the peers this plan talks to only.
 * plan->peers lists them in ascending rank order, so that the expansion
 * of a repeat (and this function) find the index of a peer by binary
 * search.  A repeat adds its peers as a whole, not step by step: a peer
 * whose every transfer turns out empty stays listed, which costs the
 * executor one idle per-peer entry.  Cost: a bitmap of nranks bits, the
 * records, and the peers.
 */
int kc_plan_finalize_peers(struct kc_plan *p)
{
	u32 nw = (p->nranks + 63) / 64, i, w, n = 0, count = 1, body_end = 0;
	u64 *bits;

	bits = kc_zalloc((size_t)(nw ? nw : 1) * sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	for (i = 0; i < p->nsteps; i++) {
		const struct kc_step *s = &p->steps[i];

		if (s->kind == KC_STEP_REPEAT) {
			count = s->peer;
			body_end = i + 1 + (u32)s->len;
		} else if (s->flags & KC_STEP_F_PROG) {
			kc_mark_prog(bits, &p->progs[s->soff], i < body_end ? count : 1);
		} else if (kc_is_xfer(s->kind)) {
			bits[s->peer / 64] |= (u64)1 << (s->peer & 63);
		}
	}
	for (w = 0; w < nw; w++)
		n += kc_hweight32((u32)bits[w]) + kc_hweight32((u32)(bits[w] >> 32));
	p->peers = kc_malloc((size_t)(n ? n : 1) * sizeof(*p->peers));
	if (!p->peers) {
		kc_free(bits);
		return -ENOMEM;
	}
	p->npeers = n;
	for (w = 0, n = 0; w < nw; w++) {
		u64 x = bits[w];
		u32 b;

		for (b = 0; x; b++, x >>= 1)
			if (x & 1)
				p->peers[n++] = w * 64 + b;
	}
	kc_free(bits);
	for (i = 0; i < p->nsteps; i++) {
		struct kc_step *s = &p->steps[i];

		if (kc_is_xfer(s->kind) && !(s->flags & KC_STEP_F_PROG))
			s->peer = kc_plan_peer_index(p, s->peer);
	}
	return 0;
}
