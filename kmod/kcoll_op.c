// SPDX-License-Identifier: GPL-2.0
/*
 * Operations: one submitted collective (struct kcoll_comm_op), from the
 * submission's arguments to a plan with pinned, DMA-mapped buffers.
 *
 * kcoll_op_alloc() and kcoll_op_free() bracket its life; in between
 * kcoll_op_prepare() does the expensive part in the submitter's context
 * (checks, plan, pinning, mapping), the communicator queues and runs it
 * (kcoll_comm.c), and kcoll_op_release() at completion drops everything
 * but the completion record, which lives until it is reaped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "kc_reduce.h"
#include "kcoll.h"

struct kcoll_comm_op *kcoll_op_alloc(void)
{
	return kzalloc(sizeof(struct kcoll_comm_op), GFP_KERNEL_ACCOUNT);
}

/*
 * What the operation holds while it is queued or runs: executor, plan,
 * mappings.  At completion only the completion record stays.
 */
void kcoll_op_release(struct kcoll_comm_op *op)
{
	u32 i;

	if (op->ex_ready)
		kc_exec_destroy(&op->ex);
	op->ex_ready = false;
	/*
	 * Drop every use first: an in-place operation on plain buffers has
	 * one pinned mapping, owned through own[KC_BUF_SEND] and seen by
	 * mr[KC_BUF_RECV] too (kcoll_map_bufs()).
	 */
	for (i = 0; i < KC_BUF_COUNT; i++) {
		if (op->mr[i] && op->mr[i]->handle)
			atomic_dec(&op->mr[i]->users);
		op->mr[i] = NULL;
	}
	for (i = 0; i < KC_BUF_COUNT; i++) {
		kcoll_mr_free(op->own[i]);
		op->own[i] = NULL;
	}
	if (op->plan)
		kc_plan_free(op->plan);
	op->plan = NULL;
	kvfree(op->a2av);
	op->a2av = NULL;
}

/* Free an operation in any state: never queued, or completed and reaped. */
void kcoll_op_free(struct kcoll_comm_op *op)
{
	if (!op)
		return;
	kcoll_op_release(op);
	kfree(op);
}

struct kcoll_uva {
	u64 va;			/* user address of the first byte */
	u64 bytes;
	struct kcoll_mr *reg;	/* registration, or NULL for a plain pointer */
	u64 off;		/* offset inside reg */
};

static int kcoll_resolve(struct kcoll_file *kf, const struct kcoll_buf *b, u64 bytes,
			 struct kcoll_uva *u)
{
	memset(u, 0, sizeof(*u));
	u->bytes = bytes;
	if (!b->handle) {
		u->va = b->addr;
		if (bytes && !b->addr)
			return -EFAULT;
		return 0;
	}
	if (b->handle > U32_MAX)
		return -ENOENT;
	u->reg = xa_load(&kf->regs, b->handle);
	if (!u->reg)
		return -ENOENT;
	if (b->addr > u->reg->len || bytes > u->reg->len - b->addr)
		return -ERANGE;
	u->off = b->addr;
	u->va = u->reg->uaddr + b->addr;
	return 0;
}

/* NCCL's in-place convention, from the addresses. */
static bool kcoll_inplace(const struct kc_op_desc *d, u32 rank, const struct kcoll_uva *s,
			  const struct kcoll_uva *r)
{
	u64 n = d->count * kc_dtype_size(d->dtype);

	if (!s->va || !r->va)
		return false;
	switch (d->op) {
	case KCOLL_OP_REDUCESCATTER:
	case KCOLL_OP_SCATTER:
		return r->va == s->va + rank * n;
	case KCOLL_OP_ALLGATHER:
	case KCOLL_OP_GATHER:
		return s->va == r->va + rank * n;
	case KCOLL_OP_BARRIER:
		return false;
	default:
		return s->va == r->va;
	}
}

static void kcoll_use_reg(struct kcoll_comm_op *op, u32 b, const struct kcoll_uva *u)
{
	op->mr[b] = u->reg;
	op->mroff[b] = u->reg->pgoff + u->off;
	atomic_inc(&u->reg->users);
}

/*
 * Give the operation its send and receive mappings.  Plain pointers are
 * pinned now; overlapping ones once, so in-place steps see one mapping.
 * A send buffer that is not in place and that the plan never writes is
 * pinned for reading only; everything else must be writable, and a
 * read-only registration there is EFAULT (checked before anything is
 * pinned or used).
 */
static int kcoll_map_bufs(struct kcoll_comm_op *op, const struct kcoll_uva *s,
			  const struct kcoll_uva *r)
{
	const struct kcoll_uva *u[2] = { s, r };
	bool write[2];
	u32 b;

	write[KC_BUF_SEND] = (op->desc.flags & KC_OP_F_INPLACE) ||
			     kc_plan_writes_buf(op->plan, KC_BUF_SEND);
	write[KC_BUF_RECV] = true;
	for (b = KC_BUF_SEND; b <= KC_BUF_RECV; b++) {
		if (u[b]->bytes && u[b]->reg && write[b] && !u[b]->reg->writable) {
			pr_debug("submit: a read-only registration as the %s buffer\n",
				 b == KC_BUF_SEND ? "in-place send" : "receive");
			return -EFAULT;
		}
	}

	if (s->bytes && r->bytes && !s->reg && !r->reg &&
	    s->va < r->va + r->bytes && r->va < s->va + s->bytes) {
		u64 lo = min(s->va, r->va), hi = max(s->va + s->bytes, r->va + r->bytes);
		struct kcoll_mr *mr = kcoll_mr_pin(lo, hi - lo, KCOLL_PIN_WRITE);

		if (IS_ERR(mr))
			return PTR_ERR(mr);
		op->own[KC_BUF_SEND] = mr;
		op->mr[KC_BUF_SEND] = mr;
		op->mr[KC_BUF_RECV] = mr;
		op->mroff[KC_BUF_SEND] = mr->pgoff + (s->va - lo);
		op->mroff[KC_BUF_RECV] = mr->pgoff + (r->va - lo);
		return 0;
	}
	for (b = KC_BUF_SEND; b <= KC_BUF_RECV; b++) {
		struct kcoll_mr *mr;

		if (!u[b]->bytes)
			continue;
		if (u[b]->reg) {
			kcoll_use_reg(op, b, u[b]);
			continue;
		}
		mr = kcoll_mr_pin(u[b]->va, u[b]->bytes,
				  write[b] ? KCOLL_PIN_WRITE : KCOLL_PIN_READ);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		op->own[b] = mr;
		op->mr[b] = mr;
		op->mroff[b] = mr->pgoff;
	}
	return 0;
}

static struct ib_device *kcoll_comm_ibdev(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_ibdev *kdev = READ_ONCE(comm->conns[i].kdev);

		if (kdev)
			return kdev->ibdev;
	}
	return NULL;
}

/*
 * Map @op's buffers for the device the communicator's connections use.
 * None yet (connect_on_need, before its first connection): the
 * submission calls this again once its peers are connected.  kf->lock
 * held (registrations are the file's).
 */
int kcoll_op_dma_map(struct kcoll_comm_op *op, struct kcoll_comm *comm)
{
	struct ib_device *ibdev = kcoll_comm_ibdev(comm);
	int ret;
	u32 i;

	for (i = 0; ibdev && i < KC_BUF_COUNT; i++) {
		if (!op->mr[i])
			continue;
		ret = kcoll_mr_dma_map(op->mr[i], ibdev);
		if (ret)
			return ret;
	}
	return 0;
}

static int kcoll_copy_a2av(struct kcoll_comm_op *op, const struct kcoll_submit *arg, u32 n)
{
	const u64 ptrs[4] = { arg->scounts, arg->sdispls, arg->rcounts, arg->rdispls };
	u32 i;

	if (arg->op != KCOLL_OP_ALLTOALLV)
		return 0;
	for (i = 0; i < 4; i++)
		if (!ptrs[i])
			return -EINVAL;
	op->a2av = kvcalloc(4 * (size_t)n, sizeof(u64), GFP_KERNEL_ACCOUNT);
	if (!op->a2av)
		return -ENOMEM;
	for (i = 0; i < 4; i++)
		if (copy_from_user(op->a2av + (size_t)i * n, u64_to_user_ptr(ptrs[i]),
				   (size_t)n * sizeof(u64)))
			return -EFAULT;
	op->desc.scounts = op->a2av;
	op->desc.sdispls = op->a2av + n;
	op->desc.rcounts = op->a2av + 2 * (size_t)n;
	op->desc.rdispls = op->a2av + 3 * (size_t)n;
	return 0;
}

/*
 * Turn a submission into an operation ready to queue on @comm: validate
 * it, build its plan, pin and map its buffers.  On an error the caller
 * frees @op with kcoll_op_free(); what was taken so far goes with it.
 */
int kcoll_op_prepare(struct kcoll_comm_op *op, struct kcoll_file *kf, struct kcoll_comm *comm,
		     const struct kcoll_submit *arg)
{
	struct kcoll_uva s, r;
	char err[128] = "";
	u64 sb, rb;
	int ret;

	op->desc.op = arg->op;
	op->desc.dtype = arg->op == KCOLL_OP_BARRIER ? KCOLL_UINT8 : arg->dtype;
	op->desc.redop = arg->redop;
	op->desc.root = arg->root;
	op->desc.count = arg->op == KCOLL_OP_BARRIER ? 0 : arg->count;
	op->cookie = arg->cookie;
	ret = kcoll_copy_a2av(op, arg, comm->nranks);
	if (ret)
		return ret;
	ret = kc_op_validate(&op->desc, comm->nranks, err, sizeof(err));
	if (ret)
		goto msg;
	ret = kc_op_buf_bytes(&op->desc, comm->nranks, comm->rank, &sb, &rb);
	if (ret)
		return ret;

	ret = kcoll_resolve(kf, &arg->send, sb, &s);
	if (ret)
		return ret;
	ret = kcoll_resolve(kf, &arg->recv, rb, &r);
	if (ret)
		return ret;
	if (kcoll_inplace(&op->desc, comm->rank, &s, &r)) {
		op->desc.flags |= KC_OP_F_INPLACE;
	} else if (s.bytes && r.bytes && s.va < r.va + r.bytes && r.va < s.va + s.bytes) {
		/* Neither in place nor apart: the result would depend on the plan. */
		pr_debug("submit: send and receive buffers overlap but are not in place\n");
		return -EINVAL;
	}

	ret = kc_plan_build_model(&comm->topo, comm->rank, &op->desc, &comm->sel.op[op->desc.op],
				  &comm->model, &op->plan, err, sizeof(err));
	if (ret)
		goto msg;

	ret = kcoll_map_bufs(op, &s, &r);
	if (ret)
		return ret;
	if (op->plan->scratch_bytes) {
		struct kcoll_mr *mr = kcoll_mr_alloc_kernel(op->plan->scratch_bytes);

		if (IS_ERR(mr))
			return PTR_ERR(mr);
		op->own[KC_BUF_SCRATCH] = mr;
		op->mr[KC_BUF_SCRATCH] = mr;
	}
	return kcoll_op_dma_map(op, comm);

msg:
	pr_debug("submit: %s\n", err[0] ? err : "invalid operation");
	return ret;
}
