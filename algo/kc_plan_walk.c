// SPDX-License-Identifier: GPL-2.0
/*
 * Walking a plan: the iterators that expand its records, round by round
 * and step by step, without storing the expansion, and what is counted
 * with them.  Everything that reads a plan (executor, simulator, tests,
 * tools) goes through here.
 */
#include "kc_build.h"

void kc_plan_walk_begin(const struct kc_plan *plan, struct kc_plan_walk *w)
{
	w->round = 0;
	w->more = kc_plan_round_first(plan, &w->r);
	if (w->more)
		kc_plan_steps_begin(plan, &w->r, &w->it);
}

bool kc_plan_walk_next(const struct kc_plan *plan, struct kc_plan_walk *w, struct kc_step *out)
{
	while (w->more) {
		if (kc_plan_step_next(plan, &w->it, out))
			return true;
		w->more = kc_plan_round_next(plan, &w->r);
		if (!w->more)
			break;
		kc_plan_steps_begin(plan, &w->r, &w->it);
		w->round++;
	}
	return false;
}

/* Sum of the lengths of the expanded steps that send (or receive). */
static u64 kc_plan_bytes(const struct kc_plan *plan, bool sent)
{
	struct kc_plan_walk w;
	struct kc_step s;
	u64 sum = 0;

	kc_plan_walk_begin(plan, &w);
	while (kc_plan_walk_next(plan, &w, &s))
		if (sent ? s.kind == KC_STEP_SEND :
		    s.kind == KC_STEP_RECV || s.kind == KC_STEP_RECV_REDUCE)
			sum += s.len;
	return sum;
}

u64 kc_plan_bytes_sent(const struct kc_plan *plan)
{
	return kc_plan_bytes(plan, true);
}

u64 kc_plan_bytes_received(const struct kc_plan *plan)
{
	return kc_plan_bytes(plan, false);
}

/* A step that writes its buffer: everything but a send. */
static bool kc_step_writes(const struct kc_step *s, u8 buf)
{
	return s->kind != KC_STEP_SEND && s->kind < KC_STEP_KIND_COUNT && s->buf == buf;
}

bool kc_plan_writes_buf(const struct kc_plan *plan, u8 buf)
{
	struct kc_plan_walk w;
	struct kc_step s;
	u32 i;

	/* Expanded steps keep their record's kind and buffer: no record, no step. */
	for (i = 0; i < plan->nsteps; i++)
		if (kc_step_writes(&plan->steps[i], buf))
			break;
	if (i == plan->nsteps)
		return false;
	kc_plan_walk_begin(plan, &w);
	while (kc_plan_walk_next(plan, &w, &s))
		if (kc_step_writes(&s, buf))
			return true;
	return false;
}

void kc_plan_expanded_size(const struct kc_plan *plan, u64 *nsteps, u32 *nrounds)
{
	struct kc_plan_walk w;
	struct kc_step s;

	*nsteps = 0;
	*nrounds = 0;
	kc_plan_walk_begin(plan, &w);
	while (kc_plan_walk_next(plan, &w, &s)) {
		(*nsteps)++;
		*nrounds = w.round + 1;
	}
}

u64 kc_plan_mem_bytes(const struct kc_plan *plan)
{
	return (u64)plan->steps_cap * sizeof(*plan->steps) +
	       (u64)plan->rounds_cap * sizeof(*plan->round_start) +
	       (u64)plan->progs_cap * sizeof(*plan->progs) +
	       (u64)plan->npeers * sizeof(*plan->peers) + sizeof(*plan);
}

/* ------------------------------------------------------------ expansion */

/* Record s expanded for iteration i; false if that step is empty. */
static bool kc_expand(const struct kc_plan *plan, const struct kc_step *s, u32 i,
		      struct kc_step *out)
{
	u32 rank;

	*out = *s;
	if (!(s->flags & KC_STEP_F_PROG))
		return true;
	kc_prog_at(&plan->progs[s->soff], i, &rank, &out->off, &out->len);
	out->flags &= ~KC_STEP_F_PROG;
	out->soff = 0;
	out->peer = plan->peers ? kc_plan_peer_index(plan, rank) : rank;
	return out->len || (out->flags & KC_STEP_F_SYNC);
}

static bool kc_rounds_header(const struct kc_plan *plan, u32 rec)
{
	const struct kc_step *h = &plan->steps[plan->round_start[rec]];

	return h->kind == KC_STEP_REPEAT && (h->flags & KC_STEP_F_ROUNDS);
}

void kc_plan_steps_begin(const struct kc_plan *plan, const struct kc_round_it *r,
			 struct kc_step_it *it)
{
	memset(it, 0, sizeof(*it));
	it->rep_first = U32_MAX;
	if (r->rec >= plan->nrounds)
		return;
	it->rec = plan->round_start[r->rec];
	it->end = plan->round_start[r->rec + 1];
	it->iter = r->iter;
	if (kc_rounds_header(plan, r->rec))
		it->rec++;
}

bool kc_plan_step_next(const struct kc_plan *plan, struct kc_step_it *it, struct kc_step *out)
{
	for (;;) {
		const struct kc_step *s;

		if (it->rep_first != U32_MAX && it->rec == it->rep_end) {
			if (++it->rep_iter < it->rep_count)
				it->rec = it->rep_first;
			else
				it->rep_first = U32_MAX;
		}
		if (it->rec >= it->end)
			return false;
		s = &plan->steps[it->rec++];
		if (s->kind == KC_STEP_REPEAT) {
			/* a repeat inside the round: its body, peer times */
			it->rep_first = it->rec;
			it->rep_end = it->rec + (u32)s->len;
			it->rep_count = s->peer;
			it->rep_iter = 0;
			if (!it->rep_count) {
				it->rec = it->rep_end;
				it->rep_first = U32_MAX;
			}
			continue;
		}
		if (kc_expand(plan, s, it->rep_first != U32_MAX ? it->rep_iter : it->iter, out))
			return true;
	}
}

static bool kc_round_has_steps(const struct kc_plan *plan, const struct kc_round_it *r)
{
	struct kc_step_it it;
	struct kc_step s;

	kc_plan_steps_begin(plan, r, &it);
	return kc_plan_step_next(plan, &it, &s);
}

/* The next expanded round, empty or not. */
static bool kc_round_step(const struct kc_plan *plan, struct kc_round_it *r)
{
	if (r->rec >= plan->nrounds)
		return false;
	if (kc_rounds_header(plan, r->rec) &&
	    r->iter + 1 < plan->steps[plan->round_start[r->rec]].peer) {
		r->iter++;
		return true;
	}
	r->rec++;
	r->iter = 0;
	return r->rec < plan->nrounds;
}

bool kc_plan_round_next(const struct kc_plan *plan, struct kc_round_it *r)
{
	while (kc_round_step(plan, r))
		if (kc_round_has_steps(plan, r))
			return true;
	return false;
}

bool kc_plan_round_first(const struct kc_plan *plan, struct kc_round_it *r)
{
	r->rec = 0;
	r->iter = 0;
	if (!plan->nrounds)
		return false;
	return kc_round_has_steps(plan, r) || kc_plan_round_next(plan, r);
}
