// SPDX-License-Identifier: GPL-2.0
/*
 * Flight records: what a communicator's last operations were, kept for a
 * while after the communicator is gone (collctl history), after
 * PyTorch's flight recorder.
 *
 * A communicator's record is a ring of history_ops entries (taken at
 * creation), allocated with it and charged to its creator's memory cgroup
 * like the rest of it.  An operation takes its entry when it is queued
 * (state queued), and the entry is updated in place when it starts
 * (running) and completes (done, with its status and bytes), so a hung
 * communicator's record shows the operation it is stuck in.  Operation
 * ids are the per-communicator sequence 1, 2, ... (kcoll_comm_submit()),
 * so operation N is in slot (N - 1) % cap, unless a later one took it.
 * Every update runs with comm->lock held, as readers do (generic netlink,
 * kcoll_comm_visit*()).
 *
 * When the communicator is destroyed (close, the owner's death, after an
 * abort or not), its record, once every operation has completed, is
 * copied into a compact allocation of the entries in use and joins the
 * module's list of retained records; the accounted ring is freed with
 * the communicator.  The copy is not charged to the creator's cgroup: it
 * outlives the process and often the cgroup, and charging a dead cgroup
 * would keep it pinned.  It is bounded instead, module-wide, by
 * history_max_bytes (oldest dropped first; 0 keeps none) and
 * history_keep_ms after the destruction.
 *
 * Pruning is lazy: on each insertion and each query, under the list's
 * mutex.  No timer or work item runs for it, so nothing is left to cancel
 * at module exit, and a record past history_keep_ms that nobody asks for
 * stays at most until the next destruction or query, within
 * history_max_bytes all the same.  kcoll_history_exit() frees the rest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kcoll.h"

#define KCOLL_HISTORY_OPS_MAX	4096u

static LIST_HEAD(kcoll_hist_retained);
static DEFINE_MUTEX(kcoll_hist_lock);
static size_t kcoll_hist_bytes;		/* of the retained records */
static u64 kcoll_hist_seq;

int kcoll_check_history_ops(u32 v)
{
	return v <= KCOLL_HISTORY_OPS_MAX ? 0 : -EINVAL;
}

/* Any number of ms (u32: up to 49 days). */
int kcoll_check_history_keep(u32 v)
{
	return 0;
}

/* history_keep_ms and history_max_bytes as they are now. */
static int kcoll_history_limits(u32 *keep_ms, u64 *max_bytes)
{
	struct kcoll_tunables *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	kcoll_tunables_get(t);
	*keep_ms = t->history_keep_ms;
	*max_bytes = t->history_max_bytes;
	kfree(t);
	return 0;
}

int kcoll_history_init(struct kcoll_comm *comm)
{
	struct kcoll_tunables *t;
	struct kcoll_hist *h;
	u32 cap;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	kcoll_tunables_get(t);
	cap = t->history_ops;
	kfree(t);
	if (!cap)
		return 0;
	h = kvzalloc(struct_size(h, ent, cap), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	INIT_LIST_HEAD(&h->node);
	h->cap = cap;
	h->ops_max = cap;
	h->pid = task_tgid_nr(current);
	h->uid = current_euid();
	get_task_comm(h->task, current);
	h->created_real_ns = ktime_get_real_ns();
	h->real_off_ns = h->created_real_ns - ktime_get_ns();
	comm->hist = h;
	return 0;
}

/* The entry of operation @id, NULL when a later one took its slot. */
static struct kcoll_hist_ent *kcoll_history_find(struct kcoll_hist *h, u64 id)
{
	struct kcoll_hist_ent *e;

	if (!h || !id)
		return NULL;
	e = &h->ent[(id - 1) % h->cap];
	return e->id == id ? e : NULL;
}

void kcoll_history_submit(struct kcoll_comm *comm, const struct kcoll_comm_op *op)
{
	struct kcoll_hist *h = comm->hist;
	struct kcoll_hist_ent *e;

	if (!h || !op->id)
		return;
	e = &h->ent[(op->id - 1) % h->cap];
	memset(e, 0, sizeof(*e));
	e->id = op->id;
	e->op = op->desc.op;
	e->dtype = op->desc.dtype;
	e->redop = op->desc.redop;
	e->root = op->desc.root;
	e->count = op->desc.count;
	e->submit_ns = op->cpl.submit_ns;
	e->state = KCOLL_HIST_STATE_QUEUED;
	memcpy(e->algo, op->algo, sizeof(e->algo));
	h->recorded++;
}

void kcoll_history_start(struct kcoll_comm *comm, const struct kcoll_comm_op *op)
{
	struct kcoll_hist_ent *e = kcoll_history_find(comm->hist, op->id);

	if (!e)
		return;
	e->start_ns = op->start_ns;
	e->state = KCOLL_HIST_STATE_RUNNING;
}

void kcoll_history_complete(struct kcoll_comm *comm, const struct kcoll_comm_op *op)
{
	struct kcoll_hist_ent *e = kcoll_history_find(comm->hist, op->id);

	if (!e)
		return;
	e->end_ns = op->cpl.complete_ns;
	e->bytes = op->cpl.bytes;
	e->status = op->cpl.status < 0 ? -op->cpl.status : 0;
	e->state = KCOLL_HIST_STATE_DONE;
}

void kcoll_history_closing(struct kcoll_comm *comm)
{
	struct kcoll_hist *h = comm->hist;

	if (!h)
		return;
	/* What ended it before the tear-down cancels the rest. */
	h->err = comm->err ? comm->err : comm->lost_err;
	h->destroyed_ns = ktime_get_ns();
	h->destroyed_real_ns = h->real_off_ns + h->destroyed_ns;
}

u32 kcoll_history_len(const struct kcoll_hist *h)
{
	return h->recorded < h->cap ? (u32)h->recorded : h->cap;
}

/* Oldest first: once the ring has wrapped, the next slot is the oldest. */
const struct kcoll_hist_ent *kcoll_history_ent(const struct kcoll_hist *h, u32 i)
{
	u32 n = kcoll_history_len(h);

	return &h->ent[(u32)((h->recorded - n + i) % h->cap)];
}

static void kcoll_history_drop(struct kcoll_hist *h)
{
	list_del(&h->node);
	kcoll_hist_bytes -= h->bytes;
	kvfree(h);
}

/* Drop what is past keep_ms, then the oldest over max_bytes.  kcoll_hist_lock held. */
static void kcoll_history_prune(u32 keep_ms, u64 max_bytes)
{
	u64 now = ktime_get_ns(), keep_ns = (u64)keep_ms * NSEC_PER_MSEC;
	struct kcoll_hist *h, *tmp;

	list_for_each_entry_safe(h, tmp, &kcoll_hist_retained, node)
		if (kcoll_hist_bytes > max_bytes || now - h->destroyed_ns >= keep_ns)
			kcoll_history_drop(h);
}

void kcoll_history_retire(struct kcoll_comm *comm)
{
	struct kcoll_hist *h = comm->hist, *copy;
	u64 max_bytes;
	u32 keep_ms, n, i;
	size_t bytes;

	if (!h || kcoll_history_limits(&keep_ms, &max_bytes))
		return;
	n = kcoll_history_len(h);
	bytes = struct_size(copy, ent, n);
	mutex_lock(&kcoll_hist_lock);
	kcoll_history_prune(keep_ms, max_bytes);
	mutex_unlock(&kcoll_hist_lock);
	if (bytes > max_bytes || !keep_ms)
		return;
	/* Not charged to the creator: see the header comment. */
	copy = kvmalloc(bytes, GFP_KERNEL);
	if (!copy)
		return;
	memcpy(copy, h, sizeof(*copy));
	copy->cap = n ? n : 1;	/* kcoll_history_ent() divides by it */
	/* The same order for kcoll_history_ent(): oldest at recorded - n. */
	for (i = 0; i < n; i++)
		copy->ent[(u32)((h->recorded - n + i) % copy->cap)] = *kcoll_history_ent(h, i);
	copy->bytes = bytes;
	copy->comm_id = comm->id;
	memcpy(copy->unique_id, comm->unique_id, sizeof(copy->unique_id));
	copy->rank = comm->rank;
	copy->nranks = comm->nranks;
	if (!h->destroyed_ns)
		copy->destroyed_ns = ktime_get_ns();
	if (!copy->destroyed_real_ns)
		copy->destroyed_real_ns = copy->real_off_ns + copy->destroyed_ns;

	mutex_lock(&kcoll_hist_lock);
	copy->seq = ++kcoll_hist_seq;
	list_add_tail(&copy->node, &kcoll_hist_retained);
	kcoll_hist_bytes += bytes;
	kcoll_history_prune(keep_ms, max_bytes);
	mutex_unlock(&kcoll_hist_lock);
}

void kcoll_history_free(struct kcoll_comm *comm)
{
	kvfree(comm->hist);
	comm->hist = NULL;
}

int kcoll_history_visit_next(u64 *after, int (*fill)(const struct kcoll_hist *h, void *arg),
			     void *arg)
{
	struct kcoll_hist *h;
	u64 max_bytes;
	u32 keep_ms;
	int ret;

	ret = kcoll_history_limits(&keep_ms, &max_bytes);
	if (ret)
		return ret;
	mutex_lock(&kcoll_hist_lock);
	kcoll_history_prune(keep_ms, max_bytes);
	ret = 0;
	list_for_each_entry(h, &kcoll_hist_retained, node) {
		if (h->seq <= *after)
			continue;
		ret = fill(h, arg);
		if (!ret) {
			*after = h->seq;
			ret = 1;
		}
		break;
	}
	mutex_unlock(&kcoll_hist_lock);
	return ret;
}

void kcoll_history_exit(void)
{
	struct kcoll_hist *h, *tmp;

	mutex_lock(&kcoll_hist_lock);
	list_for_each_entry_safe(h, tmp, &kcoll_hist_retained, node)
		kcoll_history_drop(h);
	mutex_unlock(&kcoll_hist_lock);
}
