// SPDX-License-Identifier: GPL-2.0
/*
 * Operation validation and the plan-building driver: maps the user's
 * buffers onto one working region per operation, runs the composer or a
 * whole-operation builder on it, and adds the final copy and AVG steps.
 * An in-place ReduceScatter may be built twice, so that it leaves the
 * caller's other blocks as they were (kc_build_rs_inplace()).
 */
#include "kc_cfg.h"
#include "kc_coll.h"
#include "kc_cost.h"
#include "kc_reduce.h"

static const char *const kc_op_names[KCOLL_OP_COUNT] = {
	"allreduce", "reducescatter", "allgather", "broadcast", "reduce",
	"scatter", "gather", "alltoall", "alltoallv", "barrier",
};

const char *kc_op_name(u32 op)
{
	return op < KCOLL_OP_COUNT ? kc_op_names[op] : "unknown";
}

int kc_op_by_name(const char *name)
{
	u32 i;

	for (i = 0; i < KCOLL_OP_COUNT; i++)
		if (!strcmp(name, kc_op_names[i]))
			return (int)i;
	return -EINVAL;
}

bool kc_op_reduces(u32 op)
{
	return op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_REDUCESCATTER ||
	       op == KCOLL_OP_REDUCE;
}

bool kc_op_rooted(u32 op)
{
	return op == KCOLL_OP_BROADCAST || op == KCOLL_OP_REDUCE ||
	       op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER;
}

/* Elements of the working region: count, or count per rank. */
static bool kc_op_per_rank(u32 op)
{
	return op == KCOLL_OP_REDUCESCATTER || op == KCOLL_OP_ALLGATHER ||
	       op == KCOLL_OP_SCATTER || op == KCOLL_OP_GATHER || op == KCOLL_OP_ALLTOALL;
}

int kc_op_validate(const struct kc_op_desc *op, u32 nranks, char *err, u32 errlen)
{
	u64 esize, bytes, i;

	if (op->op >= KCOLL_OP_COUNT) {
		if (err)
			kc_snprintf(err, errlen, "unknown operation %u (expected 0..%u)",
				    op->op, (u32)KCOLL_OP_COUNT - 1);
		return -EINVAL;
	}
	if (!nranks) {
		if (err)
			kc_snprintf(err, errlen, "a communicator needs at least one rank");
		return -EINVAL;
	}
	if (op->op == KCOLL_OP_BARRIER)
		return 0;
	esize = kc_dtype_size(op->dtype);
	if (!esize) {
		if (err)
			kc_snprintf(err, errlen, "unknown datatype %u (expected 0..%u)",
				    op->dtype, (u32)KCOLL_DTYPE_COUNT - 1);
		return -EINVAL;
	}
	if (kc_op_reduces(op->op) && !kc_redop_valid(op->redop)) {
		if (err)
			kc_snprintf(err, errlen, "unknown reduce operation %u (expected 0..%u)",
				    op->redop, (u32)KCOLL_REDOP_COUNT - 1);
		return -EINVAL;
	}
	if (kc_op_rooted(op->op) && op->root >= nranks) {
		if (err)
			kc_snprintf(err, errlen, "root %u out of range for %u ranks",
				    op->root, nranks);
		return -EINVAL;
	}
	if (op->flags & ~(u32)KC_OP_F_INPLACE) {
		if (err)
			kc_snprintf(err, errlen, "unknown operation flags 0x%x", op->flags);
		return -EINVAL;
	}
	if (op->op == KCOLL_OP_ALLTOALLV) {
		if (!op->scounts || !op->sdispls || !op->rcounts || !op->rdispls) {
			if (err)
				kc_snprintf(err, errlen,
					    "alltoallv needs send and receive counts and displacements");
			return -EINVAL;
		}
		for (i = 0; i < nranks; i++) {
			u64 a, b;

			if (check_add_overflow(op->sdispls[i], op->scounts[i], &a) ||
			    check_add_overflow(op->rdispls[i], op->rcounts[i], &b) ||
			    check_mul_overflow(a, esize, &a) || check_mul_overflow(b, esize, &b)) {
				if (err)
					kc_snprintf(err, errlen,
						    "alltoallv extent of peer %llu overflows 64 bits",
						    (unsigned long long)i);
				return -EOVERFLOW;
			}
		}
		return 0;
	}
	if (check_mul_overflow(op->count, esize, &bytes) ||
	    (kc_op_per_rank(op->op) && check_mul_overflow(bytes, (u64)nranks, &bytes))) {
		if (err)
			kc_snprintf(err, errlen, "count %llu of %s overflows the byte size",
				    (unsigned long long)op->count, kc_dtype_name(op->dtype));
		return -EOVERFLOW;
	}
	return 0;
}

int kc_op_buf_bytes(const struct kc_op_desc *op, u32 nranks, u32 rank,
		    u64 *send_bytes, u64 *recv_bytes)
{
	u64 es = kc_dtype_size(op->dtype), n = op->count * es, all = n * nranks, i;
	bool root = rank == op->root;

	*send_bytes = 0;
	*recv_bytes = 0;
	switch (op->op) {
	case KCOLL_OP_ALLREDUCE:
		*send_bytes = n;
		*recv_bytes = n;
		break;
	case KCOLL_OP_REDUCESCATTER:
		*send_bytes = all;
		*recv_bytes = n;
		break;
	case KCOLL_OP_ALLGATHER:
		*send_bytes = n;
		*recv_bytes = all;
		break;
	case KCOLL_OP_BROADCAST:
		*send_bytes = root ? n : 0;
		*recv_bytes = n;
		break;
	case KCOLL_OP_REDUCE:
		*send_bytes = n;
		*recv_bytes = root ? n : 0;
		break;
	case KCOLL_OP_SCATTER:
		*send_bytes = root ? all : 0;
		*recv_bytes = n;
		break;
	case KCOLL_OP_GATHER:
		*send_bytes = n;
		*recv_bytes = root ? all : 0;
		break;
	case KCOLL_OP_ALLTOALL:
		*send_bytes = all;
		*recv_bytes = all;
		break;
	case KCOLL_OP_ALLTOALLV:
		for (i = 0; i < nranks; i++) {
			*send_bytes = kc_max_u64(*send_bytes,
						 (op->sdispls[i] + op->scounts[i]) * es);
			*recv_bytes = kc_max_u64(*recv_bytes,
						 (op->rdispls[i] + op->rcounts[i]) * es);
		}
		break;
	case KCOLL_OP_BARRIER:
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int kc_coll_error(const struct kc_coll_ctx *c, int err, const char *what, const char *algo)
{
	if (c->err && !c->err[0])
		kc_snprintf(c->err, c->errlen, "%s cannot run %s%s%s", algo,
			    kc_op_name(c->op->op), what ? ": " : "", what ? what : "");
	return err;
}

/* The whole-operation builder configured for this op, if any, and its id. */
static const struct kc_algo_ops *kc_special_builder(const struct kc_algo_cfg *cfg, u32 *id)
{
	static const u32 order[] = { KCOLL_LEVEL1, KCOLL_LEVEL2, KCOLL_LEVEL0 };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		const struct kc_algo_ops *a = kc_algo_get(cfg->algo[order[i]]);

		if (a && a->build) {
			*id = cfg->algo[order[i]];
			return a;
		}
	}
	return NULL;
}

/* AlltoAll(v): per-peer byte ranges of send and receive buffers. */
static int kc_prepare_a2a(struct kc_builder *b, struct kc_coll_ctx *c, struct kc_range **mem)
{
	const struct kc_op_desc *op = c->op;
	u32 p = c->topo->nranks, i, es = c->esize;
	struct kc_range *s, *r;
	u64 total = 0;

	s = kc_malloc((size_t)p * 2 * sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = s + p;
	for (i = 0; i < p; i++) {
		if (op->op == KCOLL_OP_ALLTOALL) {
			s[i].off = (u64)i * op->count * es;
			s[i].len = op->count * es;
			r[i] = s[i];
		} else {
			s[i].off = op->sdispls[i] * es;
			s[i].len = op->scounts[i] * es;
			r[i].off = op->rdispls[i] * es;
			r[i].len = op->rcounts[i] * es;
		}
		total = kc_max_u64(total, s[i].off + s[i].len);
	}
	c->a2a.sbuf = KC_BUF_SEND;
	c->a2a.rbuf = KC_BUF_RECV;
	c->a2a.uniform = op->op == KCOLL_OP_ALLTOALL;
	if (op->flags & KC_OP_F_INPLACE) {
		/* Same buffer both ways: send from a snapshot. */
		u64 off = kc_b_scratch(b, total);

		kc_b_copy(b, KC_BUF_SCRATCH, off, KC_BUF_SEND, 0, total);
		kc_b_round(b);
		for (i = 0; i < p; i++)
			s[i].off += off;
		c->a2a.sbuf = KC_BUF_SCRATCH;
	}
	c->a2a.send = s;
	c->a2a.recv = r;
	*mem = s;
	return 0;
}

/*
 * Map the user's buffers onto the working region (first round: copies),
 * and say where the result must be copied afterwards.
 */
static void kc_prepare_work(struct kc_builder *b, struct kc_coll_ctx *c, bool *copy_out)
{
	const struct kc_op_desc *op = c->op;
	u32 p = c->topo->nranks, es = c->esize;
	bool inplace = op->flags & KC_OP_F_INPLACE, root = c->rank == op->root;
	u64 n = op->count * es, mine = (u64)c->rank * n;

	*copy_out = false;
	c->work.count = op->count;
	c->work.off = 0;
	switch (op->op) {
	case KCOLL_OP_ALLREDUCE:
	case KCOLL_OP_BROADCAST:
		c->work.buf = KC_BUF_RECV;
		if (!inplace && (op->op == KCOLL_OP_ALLREDUCE || root))
			kc_b_copy(b, KC_BUF_RECV, 0, KC_BUF_SEND, 0, n);
		break;
	case KCOLL_OP_REDUCE:
		c->work.buf = root ? KC_BUF_RECV : KC_BUF_SCRATCH;
		if (!root)
			c->work.off = kc_b_scratch(b, n);
		if (!inplace || !root)
			kc_b_copy(b, c->work.buf, c->work.off, KC_BUF_SEND, 0, n);
		break;
	case KCOLL_OP_REDUCESCATTER:
		c->work.count = op->count * p;
		if (inplace) {
			/* the caller's buffer, through b->sendmap (kc_build_rs_inplace()) */
			c->work.buf = KC_BUF_SEND;
		} else {
			c->work.buf = KC_BUF_SCRATCH;
			c->work.off = kc_b_scratch(b, n * p);
			kc_b_copy(b, KC_BUF_SCRATCH, c->work.off, KC_BUF_SEND, 0, n * p);
			*copy_out = true;
		}
		break;
	case KCOLL_OP_ALLGATHER:
		c->work.count = op->count * p;
		c->work.buf = KC_BUF_RECV;
		if (!inplace)
			kc_b_copy(b, KC_BUF_RECV, mine, KC_BUF_SEND, 0, n);
		break;
	case KCOLL_OP_SCATTER:
		c->work.count = op->count * p;
		if (root) {
			c->work.buf = KC_BUF_SEND;
			*copy_out = !inplace;
		} else {
			c->work.buf = KC_BUF_SCRATCH;
			c->work.off = kc_b_scratch(b, n * p);
			*copy_out = true;
		}
		break;
	case KCOLL_OP_GATHER:
		c->work.count = op->count * p;
		if (root) {
			c->work.buf = KC_BUF_RECV;
			if (!inplace)
				kc_b_copy(b, KC_BUF_RECV, mine, KC_BUF_SEND, 0, n);
		} else {
			c->work.buf = KC_BUF_SCRATCH;
			c->work.off = kc_b_scratch(b, n * p);
			kc_b_copy(b, KC_BUF_SCRATCH, c->work.off + mine, KC_BUF_SEND, 0, n);
		}
		break;
	default:
		break;
	}
	kc_b_round(b);
}

static void kc_finish_work(struct kc_builder *b, const struct kc_coll_ctx *c, bool copy_out)
{
	const struct kc_op_desc *op = c->op;
	u64 n = op->count * c->esize;
	u64 mine = c->work.off + (u64)c->rank * n;

	if (copy_out) {
		kc_b_copy(b, KC_BUF_RECV, 0, c->work.buf, mine, n);
		kc_b_round(b);
	}
	if (op->redop != KCOLL_AVG || !kc_op_reduces(op->op))
		return;
	if (op->op == KCOLL_OP_REDUCE && c->rank != op->root)
		return;
	kc_b_avg(b, KC_BUF_RECV, 0, n);
	kc_b_round(b);
}

/* Append one "; "-separated part to the note being written (truncating). */
static u32 kc_note_add(char *n, u32 len, u32 pos, const char *part)
{
	const char *sep = "; ";

	if (pos)
		while (*sep && pos + 1 < len)
			n[pos++] = *sep++;
	while (*part && pos + 1 < len)
		n[pos++] = *part++;
	n[pos] = '\0';
	return pos;
}

/*
 * Say which configured algorithms did not run (plan->fallback, bit per
 * level) and why (plan->note, before a builder's own note).  @in is the
 * configuration as given, @run what was built from, @layout the levels
 * kc_select_prepare() made automatic, @special the builder that built the
 * whole operation (AUTO for the levelled composition).
 * A level the topology does not have (groups of one member) runs nothing
 * and is not reported.
 */
static void kc_plan_report(const struct kc_coll_ctx *c, const struct kc_algo_cfg *in,
			   const struct kc_algo_cfg *run, u32 layout, u32 special,
			   struct kc_plan *plan)
{
	struct kc_level lv[KC_MAX_LEVELS];
	u32 n = kc_topo_levels(c->topo, c->rank, lv), present = 0, pos = 0, l, i, e;
	bool a2a = c->op->op == KCOLL_OP_ALLTOALL || c->op->op == KCOLL_OP_ALLTOALLV;
	char note[KC_PLAN_MAX_NOTE] = "", part[KC_PLAN_MAX_NOTE];

	for (i = 0; i < n; i++)
		present |= lv[i].levels;
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		u32 want = in->conf[l] ? in->conf[l] : in->algo[l], ran, from = l;
		const char *w, *r, *op;

		if (!want || !(present & KC_LEVEL_BIT(l)) || plan->algo[l] == want ||
		    (special && want == special))
			continue;
		for (e = 0; e + 1 < n && !(lv[e].levels & KC_LEVEL_BIT(l)); e++)
			;
		if (a2a)
			e = n - 1;
		ran = special ? special : plan->algo[lv[e].cfg_level];
		w = kc_cfg_algo_token(want);
		r = ran ? kc_cfg_algo_token(ran) : "nothing";
		op = kc_op_name(c->op->op);
		plan->fallback |= KC_LEVEL_BIT(l);
		kc_level_algo(run->algo, lv[e].cfg_level, lv[e].levels, &from);
		if (!in->algo[l] || (layout & KC_LEVEL_BIT(l)))
			/* kc_cfg_for_op() or kc_select_prepare() fell back */
			kc_snprintf(part, sizeof(part), "level%u %s cannot run %s%s, %s ran",
				    l, w, op, !in->algo[l] ? "" : e + 1 < n ?
				    " below the top level" : " at the top level", r);
		else if (special)
			kc_snprintf(part, sizeof(part),
				    "level%u %s not run: %s builds the whole operation", l, w, r);
		else if (a2a)
			kc_snprintf(part, sizeof(part), "level%u %s not run: %s is one phase, %s",
				    l, w, op, r);
		else if (from != l)
			kc_snprintf(part, sizeof(part),
				    "level%u %s not run: merged into level%u, which runs %s", l, w,
				    lv[e].cfg_level, r);
		else
			kc_snprintf(part, sizeof(part), "level%u %s not run, %s ran", l, w, r);
		pos = kc_note_add(note, sizeof(note), pos, part);
	}
	if (!pos)
		return;
	if (plan->note[0])
		pos = kc_note_add(note, sizeof(note), pos, plan->note);
	memcpy(plan->note, note, sizeof(plan->note));
}

/*
 * In-place ReduceScatter kept [sm->lo, sm->hi) of the send buffer in
 * scratch: the part of my block in it is my result.
 */
static void kc_rs_inplace_result(struct kc_builder *b, const struct kc_coll_ctx *c,
				 const struct kc_sendmap *sm)
{
	u64 n = c->op->count * c->esize, olo = (u64)c->rank * n;
	u64 a = kc_max_u64(sm->lo, olo), z = kc_min_u64(sm->hi, olo + n);

	if (a >= z)
		return;
	kc_b_copy(b, KC_BUF_RECV, a - olo, KC_BUF_SCRATCH, sm->scr + (a - sm->lo), z - a);
	kc_b_round(b);
}

/*
 * One build of a plan from the resolved configuration c->cfg.  @sm: the
 * send-buffer map of an in-place ReduceScatter (kc_build_rs_inplace()),
 * or NULL.
 */
static int kc_build_pass(struct kc_coll_ctx *c, bool explicit, struct kc_sendmap *sm,
			 struct kc_plan **out)
{
	const struct kc_topo *t = c->topo;
	const struct kc_op_desc *op = c->op;
	const struct kc_algo_ops *special;
	struct kc_range *a2a_mem = NULL;
	struct kc_builder b = { 0 };
	struct kc_plan *plan;
	bool copy_out = false;
	u32 special_id;
	int ret;

	*out = NULL;
	plan = kc_zalloc(sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->rank = c->rank;
	plan->nranks = t->nranks;
	plan->op = op->op;
	plan->dtype = op->op == KCOLL_OP_BARRIER ? KCOLL_UINT8 : op->dtype;
	plan->redop = op->redop == KCOLL_AVG ? KCOLL_SUM : op->redop;
	plan->esize = kc_dtype_size(plan->dtype);
	c->esize = plan->esize;
	b.plan = plan;
	b.esize = plan->esize;
	b.explicit = explicit;
	b.chunk_elems = c->cfg->pipe_bytes ?
			(u32)kc_max_u64(1, c->cfg->pipe_bytes / plan->esize) : 0;

	if (op->op == KCOLL_OP_ALLTOALL || op->op == KCOLL_OP_ALLTOALLV) {
		ret = kc_prepare_a2a(&b, c, &a2a_mem);
		if (ret)
			goto fail;
	} else {
		kc_prepare_work(&b, c, &copy_out);
	}
	if (sm && !sm->collect) {
		/* first round: the copy the map moves operands to */
		sm->scr = kc_b_scratch(&b, sm->hi - sm->lo);
		kc_b_copy(&b, KC_BUF_SCRATCH, sm->scr, KC_BUF_SEND, sm->lo, sm->hi - sm->lo);
		kc_b_round(&b);
	}
	b.sendmap = sm;

	special = kc_special_builder(c->cfg, &special_id);
	if (t->nranks == 1 && op->op != KCOLL_OP_ALLTOALL && op->op != KCOLL_OP_ALLTOALLV)
		ret = 0;	/* nothing to exchange */
	else if (special)
		ret = special->build(&b, c);
	else
		ret = kc_hier_build(&b, c);
	b.sendmap = NULL;
	if (!ret)
		ret = b.err;
	if (ret)
		goto fail;
	if (sm && !sm->collect)
		kc_rs_inplace_result(&b, c, sm);
	kc_finish_work(&b, c, copy_out);
	ret = b.err;
	if (!ret)
		ret = kc_plan_finalize_peers(plan);
	if (ret)
		goto fail;
	kc_free(a2a_mem);
	*out = plan;
	return 0;
fail:
	kc_free(a2a_mem);
	kc_plan_free(plan);
	return ret;
}

static int kc_span_cmp(const void *a, const void *b)
{
	const struct kc_send_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * What of the send buffer an in-place ReduceScatter keeps in scratch,
 * from the operands on it that the first pass recorded: the smallest
 * range [lo, hi) that holds every byte written outside my own block
 * [olo, ohi) (my receive buffer), and no operand only in part.  Operands
 * overlap into connected runs (sorted by start); the range is the hull of
 * the runs that meet the hull of the foreign writes, since a run that
 * meets the range cannot leave it in part.  Empty (lo == hi) when nothing
 * outside my block is written.  Cost: sorting the operands.
 */
static void kc_sendmap_close(struct kc_sendmap *m, u64 olo, u64 ohi)
{
	u64 wlo = U64_MAX, whi = 0, rlo, rhi;
	u32 i;

	m->lo = 0;
	m->hi = 0;
	for (i = 0; i < m->nspans; i++) {
		const struct kc_send_span *s = &m->spans[i];

		if (s->write && (s->lo < olo || s->hi > ohi)) {
			wlo = kc_min_u64(wlo, s->lo);
			whi = kc_max_u64(whi, s->hi);
		}
	}
	if (wlo >= whi)
		return;
	m->lo = wlo;
	m->hi = whi;
	kc_sort(m->spans, m->nspans, sizeof(*m->spans), kc_span_cmp);
	rlo = m->spans[0].lo;
	rhi = m->spans[0].hi;
	for (i = 1; i <= m->nspans; i++) {
		if (i < m->nspans && m->spans[i].lo < rhi) {
			rhi = kc_max_u64(rhi, m->spans[i].hi);	/* the run goes on */
			continue;
		}
		if (rlo < whi && wlo < rhi) {
			m->lo = kc_min_u64(m->lo, rlo);
			m->hi = kc_max_u64(m->hi, rhi);
		}
		if (i < m->nspans) {
			rlo = m->spans[i].lo;
			rhi = m->spans[i].hi;
		}
	}
}

/*
 * In place, ReduceScatter's receive buffer is block @rank of its send
 * buffer, and the caller's other blocks must stay as they were (NCCL's
 * and MPI's callers keep using them).  The algorithms reduce in the work
 * region they are given, which here is the send buffer itself.  So the
 * plan is built twice: the first pass records every operand on the send
 * buffer; if none writes outside my block (Mesh, Pairwise: each member
 * reduces into its own block only) it is the plan, unchanged.  Otherwise
 * the second pass keeps the smallest range that covers those writes
 * (kc_sendmap_close()) in scratch: a first round copies it there, every
 * operand in it is moved there, and a last copy brings the part of my
 * block it holds to the receive buffer.  Transfers are those of the
 * first pass, so the time is the same and the cost model prices it;
 * scratch and copies are at most those of the out-of-place plan (the
 * whole region), and less where the writes stay in part of it (RHD:
 * half).
 */
static int kc_build_rs_inplace(struct kc_coll_ctx *c, bool explicit, struct kc_plan **out)
{
	u64 n = c->op->count * kc_dtype_size(c->op->dtype), olo = (u64)c->rank * n;
	struct kc_sendmap sm = { .collect = true };
	int ret;

	ret = kc_build_pass(c, explicit, &sm, out);
	if (!ret)
		kc_sendmap_close(&sm, olo, olo + n);
	kc_free(sm.spans);
	sm.spans = NULL;
	if (ret || sm.lo == sm.hi)
		return ret;
	kc_plan_free(*out);
	sm.collect = false;
	return kc_build_pass(c, explicit, &sm, out);
}

/* @explicit: write every step out, no repeats (the tests' reference form). */
static int kc_plan_build_mode(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
			      const struct kc_algo_cfg *cfg, const struct kc_cost_model *model,
			      struct kc_plan **out, char *err, u32 errlen, bool explicit)
{
	struct kc_coll_ctx c = { .topo = t, .op = op, .cfg = cfg, .rank = rank,
				 .err = err, .errlen = errlen, .model = model };
	const struct kc_algo_cfg *in = cfg;
	struct kc_algo_cfg prep, chosen;
	bool any_auto = false;
	u32 l, special_id = KCOLL_ALGO_AUTO, layout = 0;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	ret = kc_op_validate(op, t->nranks, err, errlen);
	if (ret)
		return ret;
	if (rank >= t->nranks) {
		if (err)
			kc_snprintf(err, errlen, "rank %u out of range for %u ranks", rank,
				    t->nranks);
		return -EINVAL;
	}
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		if (cfg->algo[l] >= KCOLL_ALGO_COUNT || cfg->conf[l] >= KCOLL_ALGO_COUNT) {
			if (err)
				kc_snprintf(err, errlen, "unknown algorithm %u at level%u",
					    cfg->algo[l] >= KCOLL_ALGO_COUNT ? cfg->algo[l] :
					    cfg->conf[l], l);
			return -EINVAL;
		}
	}
	/*
	 * A configured algorithm that cannot run its level's part here falls
	 * back to automatic selection (kc_select_prepare()).  Then resolve
	 * the automatic levels by the cost model for the whole operation, so
	 * that the whole-operation builders (Pipeline, AHC) compete with
	 * per-level choices.  The choice depends only on the topology, the op
	 * and the link model, so every rank that has the same model makes
	 * the same one.
	 */
	if (t->nranks > 1) {
		prep = *cfg;
		kc_select_prepare(t, op->op, &prep);
		cfg = &prep;
		c.cfg = cfg;
		for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
			any_auto |= cfg->algo[l] == KCOLL_ALGO_AUTO;
			if (cfg->algo[l] != in->algo[l])
				layout |= KC_LEVEL_BIT(l);
		}
	}
	if (any_auto) {
		kc_select_cfg(t, op, cfg, model, &chosen);
		cfg = &chosen;
		c.cfg = cfg;
	}
	if (op->op == KCOLL_OP_REDUCESCATTER && (op->flags & KC_OP_F_INPLACE) && t->nranks > 1)
		ret = kc_build_rs_inplace(&c, explicit, out);
	else
		ret = kc_build_pass(&c, explicit, NULL, out);
	if (!ret) {
		kc_special_builder(cfg, &special_id);
		kc_plan_report(&c, in, cfg, layout, special_id, *out);
	}
	if (ret == -EOPNOTSUPP && err && !err[0])
		kc_snprintf(err, errlen, "the chosen algorithm cannot run %s", kc_op_name(op->op));
	return ret;
}

int kc_plan_build_model(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
			const struct kc_algo_cfg *cfg, const struct kc_cost_model *model,
			struct kc_plan **out, char *err, u32 errlen)
{
	return kc_plan_build_mode(t, rank, op, cfg, model, out, err, errlen, false);
}

int kc_plan_build(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *cfg, struct kc_plan **out, char *err, u32 errlen)
{
	return kc_plan_build_mode(t, rank, op, cfg, NULL, out, err, errlen, false);
}

int kc_plan_build_explicit(const struct kc_topo *t, u32 rank, const struct kc_op_desc *op,
			   const struct kc_algo_cfg *cfg, struct kc_plan **out, char *err,
			   u32 errlen)
{
	return kc_plan_build_mode(t, rank, op, cfg, NULL, out, err, errlen, true);
}
