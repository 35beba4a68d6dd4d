// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing a node: what keeps one user of kcoll from hurting the others.
 *
 * Memory.  A communicator holds, for its whole life, 2 * slots + 1 receive
 * slots of chunk_bytes per peer and the descriptors that go with them:
 * tens of megabytes for a few peers at the largest settings, gigabytes
 * for thousands.  Every allocation made on its behalf is charged to the
 * creator's memory cgroup (GFP_KERNEL_ACCOUNT).  Most happen in the
 * creator's own ioctl, but the receive slots are allocated by rdma_cm
 * handlers (address resolution on the connecting side, CONNECT_REQUEST on
 * the accepting one) and an operation's executor may be set up from CQ
 * completion work: those run in kernel threads, so the creator's memory
 * cgroup is taken at creation and made the active one around them
 * (kcoll_memcg_enter()).
 *
 * On top of that, a user's communicators on this node may together take
 * at most user_max_bytes (sysfs, 0: no limit), counted as the worst case
 * each can reach (kcoll_comm_footprint()) and checked at creation, before
 * anything is allocated: ENOMEM, as RLIMIT_MEMLOCK refuses pinning.  With
 * connect_on_need, creation charges what holds no connection and each
 * connection is charged when an operation first needs it
 * (kcoll_conn_charge()): the charge follows the peers actually used.  A
 * creator with CAP_IPC_LOCK is not held to it, as it is not held to
 * RLIMIT_MEMLOCK (kcoll_mem.c); its communicators still count.  The user
 * is the creator's effective uid, the owner observers see
 * (kcoll_genl.c).
 *
 * The log.  Messages that a local user (bad input) or a remote peer (a
 * connection request) can cause share one rate limit, kcoll_user_rs
 * (kcoll_info_rl() and kcoll_warn_rl() in kcoll.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "kcoll.h"

DEFINE_RATELIMIT_STATE(kcoll_user_rs, DEFAULT_RATELIMIT_INTERVAL, DEFAULT_RATELIMIT_BURST);

/* What the communicators of one user take, worst case. */
struct kcoll_user {
	struct list_head node;
	kuid_t uid;
	u64 bytes;
};

static LIST_HEAD(kcoll_users);
static DEFINE_MUTEX(kcoll_users_lock);

/*
 * The most kernel memory a communicator holds for its whole life, in
 * bytes, as the allocator hands it out (kmalloc rounds up to its size
 * classes; a receive slot is whole pages, chunk_bytes and the executor's
 * header rounded up: a 122880-byte chunk takes 124 KiB, 65536 takes 68):
 *
 *   (nranks - 1) * ((2 * slots + 1) * slot + descriptors(slots))
 *     + nranks * per-rank + the communicator itself
 *
 * Per peer: 2 * slots + 1 receive slots (kcoll_xport.c), their
 * descriptors, the early-message FIFO, 4 * slots send descriptors, the
 * header buffer of the executor's first messages, the control messages'
 * buffers (kcoll_ctl.c) and, with a secret, the proof the
 * connecting side sends (kcoll_auth.c).  Per rank: its
 * entry of the rank table, its address, its connection and its
 * topology labels.  Operations are not in it: their plans, executors and
 * scratch memory come and go with them (charged to the memory cgroup
 * all the same), their buffers are pinned against RLIMIT_MEMLOCK.  Nor
 * are the RDMA core's and driver's own objects (QP, CQ), which they do
 * not allocate with __GFP_ACCOUNT.
 */
u64 kcoll_comm_footprint(u32 nranks, u32 slots, u32 chunk_bytes)
{
	return kcoll_comm_base_footprint(nranks) +
	       (u64)(nranks ? nranks - 1 : 0) * kcoll_conn_footprint(slots, chunk_bytes);
}

/* What one connection (one peer) adds to it. */
u64 kcoll_conn_footprint(u32 slots, u32 chunk_bytes)
{
	u64 nrx = kcoll_conn_nrx(slots), ntx = 4ull * slots;

	return nrx * PAGE_ALIGN(kcoll_rx_slot_bytes(chunk_bytes)) +
	       kmalloc_size_roundup(nrx * sizeof(struct kcoll_rx)) +
	       kmalloc_size_roundup(nrx * sizeof(struct kcoll_rx *)) +
	       kmalloc_size_roundup(ntx * sizeof(struct kcoll_tx)) +
	       kmalloc_size_roundup(sizeof(struct kcoll_auth_msg)) +
	       kmalloc_size_roundup(KC_HDR_BYTES) +
	       kmalloc_size_roundup(KCOLL_CTL_TX * sizeof(struct kcoll_ctl));
}

/* What a communicator holds without any connection. */
u64 kcoll_comm_base_footprint(u32 nranks)
{
	u64 per_rank = sizeof(struct kcoll_rank) + sizeof(struct sockaddr_storage) +
		       sizeof(struct kcoll_conn) + 4 * sizeof(u32);

	return kmalloc_size_roundup(sizeof(struct kcoll_comm)) + (u64)nranks * per_rank;
}

static struct kcoll_user *kcoll_user_find(kuid_t uid)
{
	struct kcoll_user *u;

	list_for_each_entry(u, &kcoll_users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Add @bytes to the owner of @comm, within user_max_bytes. */
static int kcoll_user_charge(const struct kcoll_comm *comm, u64 bytes)
{
	u64 limit = kcoll_user_max_bytes(), used;
	struct kcoll_user *u, *fresh;
	int ret = 0;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	mutex_lock(&kcoll_users_lock);
	u = kcoll_user_find(comm->uid);
	used = u ? u->bytes : 0;
	/* capable() last: it is audited, and only matters over the limit. */
	if (limit && (bytes > limit || used > limit - bytes) && !capable(CAP_IPC_LOCK)) {
		kcoll_info_rl("uid %u: communicators would take %llu bytes > user_max_bytes %llu\n",
			      from_kuid(&init_user_ns, comm->uid), used + bytes, limit);
		ret = -ENOMEM;
		goto out;
	}
	if (!u) {
		if (!fresh) {
			ret = -ENOMEM;
			goto out;
		}
		u = fresh;
		fresh = NULL;
		u->uid = comm->uid;
		list_add(&u->node, &kcoll_users);
	}
	u->bytes += bytes;
out:
	mutex_unlock(&kcoll_users_lock);
	kfree(fresh);
	return ret;
}

static void kcoll_user_uncharge(kuid_t uid, u64 bytes)
{
	struct kcoll_user *u;

	mutex_lock(&kcoll_users_lock);
	u = kcoll_user_find(uid);
	if (!WARN_ON_ONCE(!u || u->bytes < bytes)) {
		u->bytes -= bytes;
		if (!u->bytes) {
			list_del(&u->node);
			kfree(u);
		}
	}
	mutex_unlock(&kcoll_users_lock);
}

/*
 * At creation, in the creator's context, once nranks, slots and
 * chunk_bytes are known and before anything sized by them is allocated:
 * charge the worst case to the owner (-ENOMEM over user_max_bytes) and
 * keep the creator's memory cgroup.  Undone by kcoll_comm_uncharge(),
 * which is safe on a communicator this never ran on or that it failed.
 */
int kcoll_comm_charge(struct kcoll_comm *comm)
{
	/* Connecting on need, each connection is charged when it is needed. */
	u64 bytes = comm->on_need ? kcoll_comm_base_footprint(comm->nranks) :
		    kcoll_comm_footprint(comm->nranks, comm->slots, comm->chunk_bytes);
	int ret;

	ret = kcoll_user_charge(comm, bytes);
	if (ret)
		return ret;
	comm->mem_bytes = bytes;
	/* NULL when memory cgroups are off: nothing to charge then. */
	comm->memcg = get_mem_cgroup_from_mm(current->mm);
	return 0;
}

/*
 * Connecting on need (kcoll_conns_need()): charge @conn's footprint once,
 * before it is connected, in the submitter's context (-ENOMEM over
 * user_max_bytes).  kcoll_comm_uncharge() gives it back with the rest.
 */
int kcoll_conn_charge(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	u64 bytes = kcoll_conn_footprint(comm->slots, comm->chunk_bytes);
	int ret;

	if (conn->charged)
		return 0;
	ret = kcoll_user_charge(comm, bytes);
	if (ret)
		return ret;
	WRITE_ONCE(comm->mem_bytes, comm->mem_bytes + bytes);
	conn->charged = true;
	return 0;
}

void kcoll_comm_uncharge(struct kcoll_comm *comm)
{
	if (comm->mem_bytes)
		kcoll_user_uncharge(comm->uid, comm->mem_bytes);
	comm->mem_bytes = 0;
	mem_cgroup_put(comm->memcg);
	comm->memcg = NULL;
}

/*
 * Make @comm's creator's memory cgroup the one __GFP_ACCOUNT allocations
 * are charged to, in a kernel thread working for it; kcoll_memcg_exit()
 * with the result ends that.  The communicator holds its reference.
 */
struct mem_cgroup *kcoll_memcg_enter(struct kcoll_comm *comm)
{
	return set_active_memcg(comm->memcg);
}

void kcoll_memcg_exit(struct mem_cgroup *old)
{
	set_active_memcg(old);
}
