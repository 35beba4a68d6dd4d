// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kcoll: the misc device and its ioctls.
 *
 * Every ioctl argument starts with its size and is read with
 * copy_struct_from_user(), so old binaries keep working when a struct
 * grows.  Every ioctl goes: copy in and check, do, copy out, and undo (or
 * never start) when the copy out fails, so a failing ioctl leaves the
 * file as it was:
 *  - SUBMIT writes the id its operation will get (ids are given under
 *    kf->lock, which it holds) before it queues the operation, and puts
 *    the caller's value back if the queueing then fails;
 *  - REAP copies the oldest completions out, entries and count, and only
 *    then removes exactly those (one reaper at a time, kf->reap_lock);
 *  - COMM_CREATE connects without kf->lock (see struct kcoll_file): the
 *    file's other ioctls go on meanwhile, ABORT and the owner's last
 *    close() (flush) cancel it, a signal interrupts it.
 * kf->lock is never held across a wait for a peer, and taken
 * interruptibly.  Memory allocated on the caller's behalf is charged to
 * its memory cgroup (GFP_KERNEL_ACCOUNT).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fdtable.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "kc_reduce.h"
#include "kcoll.h"
#include "kcoll_version.h"

#define KCOLL_REAP_MAX		256

/* Read a size-first ioctl struct of at least @min bytes. */
static int kcoll_copy_in(void *k, size_t ksize, const void __user *u, size_t min)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)u))
		return -EFAULT;
	if (usize < min)
		return -EINVAL;
	if (usize > KCOLL_STRUCT_MAX)
		return -E2BIG;
	return copy_struct_from_user(k, ksize, u, usize);
}

/* Write back at most the caller's size of the struct. */
static int kcoll_copy_out(void __user *u, const void *k, size_t ksize)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)u))
		return -EFAULT;
	if (copy_to_user(u, k, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

static u32 kcoll_mask(u32 n)
{
	return n >= 32 ? ~0u : (1u << n) - 1;
}

static long kcoll_ioctl_info(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_tunables *tun;
	struct kcoll_info info;
	u32 i;
	int ret;

	ret = kcoll_copy_in(&info, sizeof(info), uarg, sizeof(u32));
	if (ret)
		return ret;
	if (info.pad)
		return -EINVAL;
	tun = kzalloc(sizeof(*tun), GFP_KERNEL_ACCOUNT);
	if (!tun)
		return -ENOMEM;
	kcoll_tunables_get(tun);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.abi_version = KCOLL_ABI_VERSION;
	info.features = KCOLL_FEAT_EVENTFD | KCOLL_FEAT_USERPTR | KCOLL_FEAT_IPV6 |
			KCOLL_FEAT_ALLTOALLV | KCOLL_FEAT_AUTH | KCOLL_FEAT_UID | KCOLL_FEAT_FAULT |
			KCOLL_FEAT_PEERS | KCOLL_FEAT_REUSE;
	info.ops = kcoll_mask(KCOLL_OP_COUNT);
	info.redops = kcoll_mask(KCOLL_REDOP_COUNT);
	for (i = 0; i < KCOLL_DTYPE_COUNT; i++)
		if (kc_dtype_size(i))
			info.dtypes |= 1u << i;
	info.algos = 1u << KCOLL_ALGO_AUTO;
	for (i = 0; i < KCOLL_ALGO_COUNT; i++)
		if (kc_algo_get(i))
			info.algos |= 1u << i;
	info.max_ranks = KCOLL_MAX_RANKS;
	info.max_inflight = KCOLL_MAX_INFLIGHT;
	info.max_reg_bytes = KCOLL_MAX_REG_BYTES;
	info.chunk_bytes = tun->chunk_bytes;
	info.slots = tun->slots;
	info.timeout_ms = tun->timeout_ms;
	info.connect_timeout_ms = tun->connect_timeout_ms;
	info.version = KCOLL_VERSION_CODE;
	info.listen_port = tun->listen_port;
	kfree(tun);
	return kcoll_copy_out(uarg, &info, sizeof(info));
}

static const struct file_operations kcoll_fops;

/*
 * KCOLL_CREATE_F_PARENT: the file of @arg->parent_fd, one of this
 * process's /dev/kcoll files with a communicator, held (the communicator
 * lives as long as its file), and each new rank's rank in it, checked.
 */
static struct file *kcoll_parent_get(const struct kcoll_comm_create *arg,
				     struct kcoll_parent *p)
{
	struct kcoll_file *pkf;
	struct file *f;
	int ret = -EBADF;
	u32 i;

	f = arg->parent_fd < 0 ? NULL : fget(arg->parent_fd);
	if (!f)
		return ERR_PTR(-EBADF);
	pkf = f->private_data;
	if (f->f_op != &kcoll_fops || pkf->mm != current->mm)
		goto err;
	mutex_lock(&pkf->lock);
	p->comm = pkf->comm;
	mutex_unlock(&pkf->lock);
	if (!p->comm)
		goto err;
	ret = -ENOMEM;
	p->ranks = kvcalloc(arg->nranks, sizeof(*p->ranks), GFP_KERNEL_ACCOUNT);
	if (!p->ranks)
		goto err;
	ret = -EFAULT;
	if (copy_from_user(p->ranks, u64_to_user_ptr(arg->parent_ranks),
			   arg->nranks * sizeof(*p->ranks)))
		goto err_free;
	ret = -EINVAL;
	for (i = 0; i < arg->nranks; i++) {
		if (p->ranks[i] >= p->comm->nranks || (i && p->ranks[i] <= p->ranks[i - 1])) {
			pr_debug("create: parent rank %u of rank %u is out of order or range\n",
				 p->ranks[i], i);
			goto err_free;
		}
	}
	if (p->ranks[arg->rank] != p->comm->rank) {
		pr_debug("create: rank %u was not rank %u in the parent\n", arg->rank,
			 p->ranks[arg->rank]);
		goto err_free;
	}
	return f;

err_free:
	kvfree(p->ranks);
	p->ranks = NULL;
err:
	fput(f);
	return ERR_PTR(ret);
}

static struct kcoll_rank *kcoll_ranks_copy(const struct kcoll_comm_create *arg)
{
	const u8 __user *u = u64_to_user_ptr(arg->ranks);
	struct kcoll_rank *r;
	u32 i;
	int ret;

	r = kvcalloc(arg->nranks, sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < arg->nranks; i++) {
		ret = copy_struct_from_user(&r[i], sizeof(*r), u + (u64)i * arg->rank_size,
					    arg->rank_size);
		if (ret) {
			kvfree(r);
			return ERR_PTR(ret);
		}
	}
	return r;
}

/*
 * Addresses a peer can be reached at: IPv4 with the rest of @addr zero, not
 * unspecified, multicast or broadcast; IPv6 not unspecified or multicast.
 * The family and port are checked when the communicator is built.
 */
static bool kcoll_rank_addr_ok(const struct kcoll_rank *r)
{
	static const u8 zero[16];

	if (r->family == KCOLL_AF_INET)
		return !memchr_inv(r->addr + 4, 0, 12) && memchr_inv(r->addr, 0, 4) &&
		       (r->addr[0] & 0xf0) != 0xe0 && memchr_inv(r->addr, 0xff, 4);
	if (r->family == KCOLL_AF_INET6)
		return memcmp(r->addr, zero, 16) && r->addr[0] != 0xff;
	return true;
}

/*
 * Every rank must be reachable.  Ranks may share an address and a port:
 * the node's listener tells them apart by the rank a request names.
 */
static int kcoll_ranks_check(const struct kcoll_rank *r, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (!kcoll_rank_addr_ok(&r[i])) {
			kcoll_info_rl("rank %u: address %*phN is not a unicast address\n", i,
				      16, r[i].addr);
			return -EINVAL;
		}
	}
	return 0;
}

/* The communicator's secret, or NULL without one. */
static u8 *kcoll_secret_copy(const struct kcoll_comm_create *arg)
{
	if (!arg->secret && !arg->secret_len)
		return NULL;
	if (!arg->secret || arg->secret_len < KCOLL_SECRET_MIN ||
	    arg->secret_len > KCOLL_SECRET_MAX) {
		pr_debug("create: secret of %u bytes, expected %u..%u\n", arg->secret_len,
			 KCOLL_SECRET_MIN, KCOLL_SECRET_MAX);
		return ERR_PTR(-EINVAL);
	}
	return memdup_user(u64_to_user_ptr(arg->secret), arg->secret_len);
}

/* The file's communicator, or why there is none: ENOTCONN, EBUSY while created. */
static struct kcoll_comm *kcoll_file_comm(struct kcoll_file *kf)
{
	struct kcoll_comm *comm;

	if (mutex_lock_interruptible(&kf->lock))
		return ERR_PTR(-EINTR);
	comm = kf->comm;
	if (!comm)
		comm = ERR_PTR(kf->creating ? -EBUSY : -ENOTCONN);
	mutex_unlock(&kf->lock);
	return comm;
}

/*
 * Stop the file's creation in progress, if any: its connect ends with
 * -ECANCELED.  kf->lock held.  Returns whether there was one.
 */
static bool kcoll_create_cancel(struct kcoll_file *kf)
{
	if (!kf->creating)
		return false;
	kf->create_cancel = true;
	if (kf->connecting)
		kcoll_comm_cancel(kf->connecting);
	return true;
}

/* The creation failed and is undone: the file may create again. */
static void kcoll_create_end(struct kcoll_file *kf)
{
	mutex_lock(&kf->lock);
	kf->creating = false;
	kf->connecting = NULL;
	mutex_unlock(&kf->lock);
	wake_up_all(&kf->create_wq);
}

/*
 * Create the file's communicator.  The arguments are copied and checked
 * first; then the file is marked creating (a second creation, a
 * submission or a reap gets EBUSY), and the communicator listens and
 * connects without kf->lock.  Its id is written out before it is
 * installed, and the cancellation checked in the same critical section
 * that installs it: an unwritable struct, a cancellation or any error
 * leaves the file as it was, and "creating" ends only once the attempt
 * is undone (ABORT waits for that).
 */
static long kcoll_ioctl_create(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_comm_create arg;
	struct kcoll_parent parent = {};
	struct file *parent_file = NULL;
	bool connected, restore = false;
	struct kcoll_rank *ranks;
	struct kcoll_comm *comm;
	char *algo = NULL;
	u8 *secret = NULL;
	__u64 old_id;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), ranks));
	if (ret)
		return ret;
	if ((arg.flags & ~KCOLL_CREATE_F_PARENT) || !arg.nranks || arg.nranks > KCOLL_MAX_RANKS ||
	    arg.rank >= arg.nranks || arg.rank_size < sizeof(struct kcoll_rank) ||
	    arg.rank_size > PAGE_SIZE || !arg.ranks || arg.pad) {
		pr_debug("create: bad flags, rank %u, nranks %u or rank_size %u\n",
			 arg.rank, arg.nranks, arg.rank_size);
		return -EINVAL;
	}
	if (arg.size < offsetofend(typeof(arg), eventfd))
		arg.eventfd = -1;
	old_id = arg.comm_id;

	ret = mutex_lock_interruptible(&kf->lock);
	if (ret)
		return ret;
	if (kf->comm || kf->creating) {
		mutex_unlock(&kf->lock);
		return -EBUSY;
	}
	kf->creating = true;
	kf->create_cancel = false;
	mutex_unlock(&kf->lock);

	if (arg.algo) {
		algo = strndup_user(u64_to_user_ptr(arg.algo), KCOLL_ALGO_STR_MAX);
		if (IS_ERR(algo)) {
			ret = PTR_ERR(algo);
			algo = NULL;
			goto out;
		}
	}
	secret = kcoll_secret_copy(&arg);
	if (IS_ERR(secret)) {
		ret = PTR_ERR(secret);
		secret = NULL;
		goto out;
	}
	ranks = kcoll_ranks_copy(&arg);
	if (IS_ERR(ranks)) {
		ret = PTR_ERR(ranks);
		goto out;
	}
	ret = kcoll_ranks_check(ranks, arg.nranks);
	if (ret) {
		kvfree(ranks);
		goto out;
	}
	if (arg.flags & KCOLL_CREATE_F_PARENT) {
		parent_file = kcoll_parent_get(&arg, &parent);
		if (IS_ERR(parent_file)) {
			ret = PTR_ERR(parent_file);
			kvfree(ranks);
			goto out;
		}
	}
	comm = kcoll_comm_create(&arg, ranks, algo, secret, parent_file ? &parent : NULL);
	/* The communicator keeps the key, not the secret; what it took over, not the parent. */
	kfree_sensitive(secret);
	secret = NULL;
	if (parent_file) {
		kvfree(parent.ranks);
		fput(parent_file);
	}
	if (IS_ERR(comm)) {
		ret = PTR_ERR(comm);
		goto out;
	}

	/* From here on ABORT and close() reach the connect. */
	mutex_lock(&kf->lock);
	kf->connecting = comm;
	if (kf->create_cancel)
		kcoll_comm_cancel(comm);
	mutex_unlock(&kf->lock);
	ret = kcoll_comm_connect(comm);
	connected = !ret;
	if (!ret) {
		arg.comm_id = comm->id;
		arg.reused = comm->reused;
		ret = kcoll_copy_out(uarg, &arg, sizeof(arg));
	}
	mutex_lock(&kf->lock);
	kf->connecting = NULL;
	/* Cancelled, whatever else the connect met meanwhile. */
	if (kf->create_cancel) {
		restore = !ret;
		ret = -ECANCELED;
	}
	if (!ret) {
		kf->comm = comm;
		kf->creating = false;
		/* the owner's death is told before its address space goes */
		kcoll_ctl_watch(comm, kf->mm);
	}
	mutex_unlock(&kf->lock);
	if (!ret) {
		wake_up_all(&kf->create_wq);
		kfree(algo);
		return 0;
	}
	/* Cancelled after the id went out: the caller's struct as it was. */
	if (restore) {
		arg.comm_id = old_id;
		if (kcoll_copy_out(uarg, &arg, sizeof(arg)))
			pr_debug("create: cannot restore comm_id\n");
	}
	if (connected)
		kcoll_comm_destroy(comm);
	else
		kcoll_comm_discard(comm);
out:
	kcoll_create_end(kf);
	kfree(algo);
	kfree_sensitive(secret);
	/* Nothing is left of the attempt: a SA_RESTART handler may run it again. */
	return ret == -EINTR ? -ERESTARTSYS : ret;
}

static long kcoll_ioctl_reg(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_mem_reg arg;
	struct kcoll_mr *mr;
	u32 id;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), handle));
	if (ret)
		return ret;
	if ((arg.flags & ~KCOLL_MEM_REG_RDONLY) || !arg.len || arg.len > KCOLL_MAX_REG_BYTES)
		return -EINVAL;
	mr = kcoll_mr_pin(arg.addr, arg.len, arg.flags & KCOLL_MEM_REG_RDONLY ?
			  KCOLL_PIN_READ_REG : KCOLL_PIN_WRITE);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	ret = mutex_lock_interruptible(&kf->lock);
	if (ret)
		goto err_free;
	ret = xa_alloc(&kf->regs, &id, mr, xa_limit_31b, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_unlock;
	mr->handle = id;
	arg.handle = id;
	ret = kcoll_copy_out(uarg, &arg, sizeof(arg));
	if (ret) {
		xa_erase(&kf->regs, id);
		goto err_unlock;
	}
	mutex_unlock(&kf->lock);
	return 0;

err_unlock:
	mutex_unlock(&kf->lock);
err_free:
	kcoll_mr_free(mr);
	return ret;
}

static long kcoll_ioctl_dereg(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_mem_dereg arg;
	struct kcoll_mr *mr;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), handle));
	if (ret)
		return ret;
	if (arg.flags)
		return -EINVAL;
	if (!arg.handle || arg.handle > U32_MAX)
		return -ENOENT;
	ret = mutex_lock_interruptible(&kf->lock);
	if (ret)
		return ret;
	mr = xa_load(&kf->regs, arg.handle);
	/*
	 * A failed operation's caller may have its error before fail_work
	 * stopped the sends that read this memory; that is bounded: wait.
	 */
	if (mr && atomic_read(&mr->users) && kf->comm && READ_ONCE(kf->comm->err))
		flush_work(&kf->comm->fail_work);
	if (!mr) {
		ret = -ENOENT;
	} else if (atomic_read(&mr->users)) {
		ret = -EBUSY;
	} else {
		xa_erase(&kf->regs, arg.handle);
		kcoll_mr_free(mr);
	}
	mutex_unlock(&kf->lock);
	return ret;
}

/* ------------------------------------------------------------- submit */

/*
 * Connect on need the peers @op's plan exchanges with, before it gets an
 * id.  A failure other than a signal ends the communicator, as a failed
 * connection at creation would: its peers learn it, and the submission
 * says why.  The communicator lives as long as the file.
 */
static int kcoll_submit_connect(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	int ret = kcoll_conns_need(comm, op->plan->peers, op->plan->npeers);

	if (ret && ret != -EINTR) {
		mutex_lock(&comm->lock);
		kcoll_comm_fail(comm, ret);
		ret = comm->aborted ? -ECANCELED : comm->err;
		kcoll_comm_advance(comm);
		mutex_unlock(&comm->lock);
	}
	return ret;
}

static long kcoll_ioctl_submit(struct kcoll_file *kf, void __user *uarg)
{
	u64 __user *uid = uarg + offsetof(struct kcoll_submit, op_id);
	struct kcoll_submit arg;
	struct kcoll_comm *comm;
	struct kcoll_comm_op *op;
	u64 id;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), op_id));
	if (ret)
		return ret;
	if (arg.flags)
		return -EINVAL;
	op = kcoll_op_alloc();
	if (!op)
		return -ENOMEM;
	ret = mutex_lock_interruptible(&kf->lock);
	if (ret)
		goto err_free;
	comm = kf->comm;
	if (!comm) {
		ret = kf->creating ? -EBUSY : -ENOTCONN;
		goto err;
	}
	ret = kcoll_op_prepare(op, kf, comm, &arg);
	if (ret)
		goto err;
	if (comm->on_need && op->plan &&
	    !kcoll_conns_ready(comm, op->plan->peers, op->plan->npeers)) {
		/* Unlocked: an abort must reach the wait (it takes kf->lock). */
		mutex_unlock(&kf->lock);
		ret = kcoll_submit_connect(comm, op);
		if (ret)
			goto err_free;
		ret = mutex_lock_interruptible(&kf->lock);
		if (ret)
			goto err_free;
		/* Its buffers, for the device of the connections just made. */
		ret = kcoll_op_dma_map(op, comm);
		if (ret)
			goto err;
	}
	/*
	 * Ids are given under kf->lock: write this one out before the
	 * operation exists, so that an unwritable struct never starts it.
	 */
	id = kcoll_comm_next_id(comm);
	if (put_user(id, uid)) {
		ret = -EFAULT;
		goto err;
	}
	ret = kcoll_comm_submit(comm, op, id);
	if (ret) {
		/* Refused: the caller's op_id as it was (writable a moment ago). */
		if (put_user(arg.op_id, uid))
			pr_debug("submit: cannot restore op_id\n");
		goto err;
	}
	/* @op is the communicator's now, and may already be reaped. */
	mutex_unlock(&kf->lock);
	return 0;

err:
	mutex_unlock(&kf->lock);
err_free:
	kcoll_op_free(op);
	return ret;
}

/* Copy @n completions out to @out, each @esize bytes (zero-filled tail). */
static int kcoll_reap_copy(u8 __user *out, u32 esize, const struct kcoll_completion *cpl,
			   u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u8 __user *e = out + (u64)i * esize;

		if (copy_to_user(e, &cpl[i], sizeof(*cpl)) ||
		    clear_user(e + sizeof(*cpl), esize - sizeof(*cpl)))
			return -EFAULT;
	}
	return 0;
}

static long kcoll_ioctl_reap(struct kcoll_file *kf, void __user *uarg)
{
	u32 __user *ucount = uarg + offsetof(struct kcoll_reap, count);
	struct kcoll_completion *cpl;
	struct kcoll_comm *comm;
	struct kcoll_reap arg;
	u8 __user *out;
	long left;
	bool wait;
	u32 n, got;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), entry_size));
	if (ret)
		return ret;
	if ((arg.flags & ~KCOLL_REAP_WAIT) || !arg.max ||
	    arg.entry_size < sizeof(*cpl) || arg.entry_size > PAGE_SIZE || !arg.entries)
		return -EINVAL;
	out = u64_to_user_ptr(arg.entries);
	n = min_t(u32, arg.max, KCOLL_REAP_MAX);
	if (!access_ok(out, (u64)arg.entry_size * n))
		return -EFAULT;
	comm = kcoll_file_comm(kf);
	if (IS_ERR(comm))
		return PTR_ERR(comm);
	cpl = kcalloc(n, sizeof(*cpl), GFP_KERNEL_ACCOUNT);
	if (!cpl)
		return -ENOMEM;
	wait = arg.flags & KCOLL_REAP_WAIT;
	left = arg.timeout_ms ? msecs_to_jiffies(arg.timeout_ms) : MAX_SCHEDULE_TIMEOUT;
	for (;;) {
		if (wait) {
			ret = kcoll_comm_reap_wait(comm, &left);
			if (ret)
				goto out;
		}
		ret = mutex_lock_interruptible(&kf->reap_lock);
		if (ret)
			goto out;
		got = kcoll_comm_reap_peek(comm, cpl, n);
		/* Another reaper may have taken what woke us: wait again. */
		if (got || !wait)
			break;
		mutex_unlock(&kf->reap_lock);
	}
	/* Out first, entries and count; only then are they gone. */
	ret = kcoll_reap_copy(out, arg.entry_size, cpl, got);
	if (!ret && put_user(got, ucount))
		ret = -EFAULT;
	if (!ret)
		kcoll_comm_reap_consume(comm, got);
	mutex_unlock(&kf->reap_lock);
out:
	kfree(cpl);
	return ret;
}

static long kcoll_ioctl_abort(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_abort arg;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, offsetofend(typeof(arg), flags));
	if (ret)
		return ret;
	if (arg.flags)
		return -EINVAL;
	ret = mutex_lock_interruptible(&kf->lock);
	if (ret)
		return ret;
	comm = kf->comm;
	if (!comm && kcoll_create_cancel(kf)) {
		mutex_unlock(&kf->lock);
		/*
		 * Return once the creation has been undone, so that the file
		 * can create again.  The undoing is short; a signal only ends
		 * this wait, the cancellation stands.
		 */
		if (wait_event_interruptible(kf->create_wq, !READ_ONCE(kf->creating)))
			pr_debug("abort: interrupted while the creation ends\n");
		return 0;
	}
	mutex_unlock(&kf->lock);
	if (!comm)
		return -ENOTCONN;
	/* The communicator lives as long as the file; no kf->lock needed. */
	kcoll_comm_abort(comm);
	return 0;
}

static long kcoll_ioctl_fault(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_fault arg;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, sizeof(u32));
	if (ret)
		return ret;
	/* The communicator lives as long as the file. */
	comm = kcoll_file_comm(kf);
	if (IS_ERR(comm))
		return PTR_ERR(comm);
	kcoll_comm_fault(comm, &arg);
	return kcoll_copy_out(uarg, &arg, sizeof(arg));
}

static long kcoll_ioctl_peers(struct kcoll_file *kf, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_peers arg;
	u8 *fates;
	int ret;

	ret = kcoll_copy_in(&arg, sizeof(arg), uarg, sizeof(arg));
	if (ret)
		return ret;
	comm = kcoll_file_comm(kf);
	if (IS_ERR(comm))
		return PTR_ERR(comm);
	if (arg.nranks < comm->nranks) {
		arg.nranks = comm->nranks;
		ret = kcoll_copy_out(uarg, &arg, sizeof(arg));
		return ret ? ret : -ENOSPC;
	}
	fates = kmalloc(comm->nranks, GFP_KERNEL_ACCOUNT);
	if (!fates)
		return -ENOMEM;
	kcoll_comm_peers(comm, fates);
	ret = copy_to_user(u64_to_user_ptr(arg.fates), fates, comm->nranks) ? -EFAULT : 0;
	kfree(fates);
	if (ret)
		return ret;
	arg.nranks = comm->nranks;
	return kcoll_copy_out(uarg, &arg, sizeof(arg));
}

static long kcoll_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kcoll_file *kf = file->private_data;
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != KCOLL_IOC_MAGIC || _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;
	/*
	 * The communicator and the registrations are the opener's: handles
	 * name its pages and plain pointers its address space.  A process
	 * that inherited the file or was passed it may ask for the module's
	 * info and close it, nothing else.
	 */
	if (current->mm != kf->mm && _IOC_NR(cmd) != _IOC_NR(KCOLL_IOC_INFO))
		return -EPERM;
	/* Dispatch on the number alone: the size part grows with the struct. */
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(KCOLL_IOC_INFO):
		return kcoll_ioctl_info(kf, uarg);
	case _IOC_NR(KCOLL_IOC_COMM_CREATE):
		return kcoll_ioctl_create(kf, uarg);
	case _IOC_NR(KCOLL_IOC_MEM_REG):
		return kcoll_ioctl_reg(kf, uarg);
	case _IOC_NR(KCOLL_IOC_MEM_DEREG):
		return kcoll_ioctl_dereg(kf, uarg);
	case _IOC_NR(KCOLL_IOC_SUBMIT):
		return kcoll_ioctl_submit(kf, uarg);
	case _IOC_NR(KCOLL_IOC_REAP):
		return kcoll_ioctl_reap(kf, uarg);
	case _IOC_NR(KCOLL_IOC_ABORT):
		return kcoll_ioctl_abort(kf, uarg);
	case _IOC_NR(KCOLL_IOC_FAULT):
		return kcoll_ioctl_fault(kf, uarg);
	case _IOC_NR(KCOLL_IOC_PEERS):
		return kcoll_ioctl_peers(kf, uarg);
	}
	return -ENOTTY;
}

static int kcoll_open(struct inode *inode, struct file *file)
{
	struct kcoll_file *kf;

	kf = kzalloc(sizeof(*kf), GFP_KERNEL_ACCOUNT);
	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->lock);
	mutex_init(&kf->reap_lock);
	init_waitqueue_head(&kf->create_wq);
	xa_init_flags(&kf->regs, XA_FLAGS_ALLOC1);
	kf->mm = current->mm;
	if (kf->mm)
		mmgrab(kf->mm);
	file->private_data = kf;
	return nonseekable_open(inode, file);
}

static int kcoll_fd_is(const void *file, struct file *f, unsigned int fd)
{
	return f == file;
}

/*
 * Every close() of a descriptor, before the last reference goes.  A
 * creation in progress holds the file (release waits for the ioctl to
 * return), so when the owner closes its last descriptor of the file (a
 * thread other than the creator, or the process exits) it is cancelled
 * here.  A dup()ed descriptor still open, or another process's close,
 * leaves it alone.
 */
static int kcoll_flush(struct file *file, fl_owner_t id)
{
	struct kcoll_file *kf = file->private_data;

	if (!READ_ONCE(kf->creating) || current->mm != kf->mm)
		return 0;
	if (iterate_fd((struct files_struct *)id, 0, kcoll_fd_is, file))
		return 0;
	mutex_lock(&kf->lock);
	kcoll_create_cancel(kf);
	mutex_unlock(&kf->lock);
	return 0;
}

/* Last close, or the process died: tear everything down. */
static int kcoll_release(struct inode *inode, struct file *file)
{
	struct kcoll_file *kf = file->private_data;
	struct kcoll_mr *mr;
	unsigned long id;

	if (kf->comm) {
		u32 code, why = kcoll_ctl_leave_reason(&code);

		kcoll_comm_destroy_why(kf->comm, why, code);
	}
	xa_for_each(&kf->regs, id, mr)
		kcoll_mr_free(mr);
	xa_destroy(&kf->regs);
	if (kf->mm)
		mmdrop(kf->mm);
	mutex_destroy(&kf->reap_lock);
	mutex_destroy(&kf->lock);
	kfree(kf);
	return 0;
}

static const struct file_operations kcoll_fops = {
	.owner = THIS_MODULE,
	.open = kcoll_open,
	.flush = kcoll_flush,
	.release = kcoll_release,
	.unlocked_ioctl = kcoll_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * No .mode: who may use the node is the administrator's choice, made by
 * udev (udev/60-kcoll.rules gives group kcoll 0660, as rdma-core does
 * for uverbs); without udev it stays the misc default, 0600 root.
 */
static struct miscdevice kcoll_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kcoll",
	.fops = &kcoll_fops,
	.groups = kcoll_sysfs_groups,
};

int kcoll_dev_init(void)
{
	return misc_register(&kcoll_misc);
}

void kcoll_dev_exit(void)
{
	misc_deregister(&kcoll_misc);
}
