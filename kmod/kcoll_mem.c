// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: pinning user buffers and allocating scratch pages.
 *
 * Every buffer the executor touches is a set of pages mapped twice: once
 * contiguously into the kernel with vmap(), so the shared executor can
 * memcpy and reduce through plain pointers without page faults, and once
 * per page for the RDMA device, so sends go straight from those pages.
 *
 * User pages are pinned with FOLL_LONGTERM (they stay under DMA for as long
 * as the registration lives) and charged to mm->pinned_vm against
 * RLIMIT_MEMLOCK, the convention of ib_umem and io_uring.  The mm is
 * grabbed so the charge is returned even when another task closes the
 * file.
 *
 * Nothing proportional to a request is allocated before the request has
 * been charged against the limit and its range found mapped (the VMAs
 * cover it): a registration of 2^36 bytes over the limit, or mostly
 * unmapped, fails before it costs 128 MiB of page array.  Allocations
 * are charged to the caller's memory cgroup (GFP_KERNEL_ACCOUNT) and
 * fail rather than invoke the OOM killer.
 *
 * A buffer the kernel only reads (a send buffer, a KCOLL_MEM_REG_RDONLY
 * registration) is pinned without FOLL_WRITE, so it may be read-only
 * memory, mapped read-only for the executor (PAGE_KERNEL_RO: a stray
 * write oopses rather than land in a file page), mapped DMA_TO_DEVICE and
 * unpinned without dirtying.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kcoll.h"

/* Pages pinned per pin_user_pages_fast() call, as ib_umem_get does. */
#define KCOLL_PIN_BATCH		(PAGE_SIZE / sizeof(struct page *))

/*
 * Memory allocated for the caller, sized by its request: charged to its
 * memory cgroup, and a failure is ENOMEM for the caller, not an OOM kill
 * or a warning in the log.
 */
#define KCOLL_GFP_REQ		(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

static struct kcoll_mr *kcoll_mr_new(u64 npages)
{
	struct kcoll_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return NULL;
	/* kvmalloc: beyond a few pages, vmalloc'ed a page at a time. */
	mr->pages = kvcalloc(npages, sizeof(*mr->pages), KCOLL_GFP_REQ);
	if (!mr->pages) {
		kfree(mr);
		return NULL;
	}
	atomic_set(&mr->users, 0);
	return mr;
}

static int kcoll_mr_vmap(struct kcoll_mr *mr)
{
	mr->vaddr = vmap(mr->pages, mr->npages, VM_MAP,
			 mr->writable ? PAGE_KERNEL : PAGE_KERNEL_RO);
	return mr->vaddr ? 0 : -ENOMEM;
}

/*
 * Charge @npages to current->mm against RLIMIT_MEMLOCK, as ib_umem_get()
 * does, but a limit of 0 is a limit like any other: ENOMEM, not EPERM.
 * Returns the charged mm (grabbed), or an ERR_PTR.
 */
static struct mm_struct *kcoll_account(u64 npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	u64 now;

	if (!mm)
		return ERR_PTR(-EFAULT);
	now = atomic64_add_return(npages, &mm->pinned_vm);
	if (now > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return ERR_PTR(-ENOMEM);
	}
	mmgrab(mm);
	return mm;
}

static void kcoll_unaccount(struct mm_struct *mm, u64 npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
	mmdrop(mm);
}

/* A VMA the kernel may pin for @how: readable, writable for writing, not I/O. */
static bool kcoll_vma_ok(const struct vm_area_struct *vma, enum kcoll_pin how)
{
	if (!(vma->vm_flags & VM_READ) || (vma->vm_flags & (VM_IO | VM_PFNMAP)))
		return false;
	return how != KCOLL_PIN_WRITE || (vma->vm_flags & VM_WRITE);
}

/*
 * The whole range is mapped and usable as @how asks: checked before
 * anything is sized by it, so that a huge, mostly unmapped range costs
 * nothing.  (Pinning checks again: the mapping may change meanwhile.)
 */
static int kcoll_range_check(struct mm_struct *mm, u64 uaddr, u64 len, enum kcoll_pin how)
{
	unsigned long addr = uaddr, end = uaddr + len;
	struct vm_area_struct *vma;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr || !kcoll_vma_ok(vma, how)) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/*
 * FOLL_ flags for pinning from @addr, and how many pages (at most @n) may
 * be pinned with them.  A read-only registration of writable private
 * memory is pinned as a writable one is: on the process's own copy of
 * each page (COW broken now, as a write fault does).  Pinned for reading
 * only, a page not yet written (the zero page) or a page shared with a
 * file or a fork stays what is pinned while later writes go to a new
 * copy, and the registration would never see them (the kernel does that
 * itself for long-term read-only pins from 6.2 on).
 */
static u32 kcoll_pin_flags(struct mm_struct *mm, u64 addr, u32 n, enum kcoll_pin how,
			   unsigned int *flags)
{
	struct vm_area_struct *vma;

	*flags = FOLL_LONGTERM;
	if (how == KCOLL_PIN_WRITE) {
		*flags |= FOLL_WRITE;
		return n;
	}
	if (how == KCOLL_PIN_READ)
		return n;
	if (mmap_read_lock_killable(mm))
		return 0;
	vma = vma_lookup(mm, addr);
	if (vma) {
		if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == VM_WRITE)
			*flags |= FOLL_WRITE;
		n = min_t(u64, n, (vma->vm_end - addr) >> PAGE_SHIFT);
	}
	mmap_read_unlock(mm);
	return n;
}

struct kcoll_mr *kcoll_mr_pin(u64 uaddr, u64 len, enum kcoll_pin how)
{
	u64 first, last, npages;
	unsigned long done = 0;
	struct mm_struct *mm;
	struct kcoll_mr *mr;
	int ret;

	if (!len || len > KCOLL_MAX_REG_BYTES || uaddr + len < uaddr)
		return ERR_PTR(-EINVAL);
	if (!access_ok(u64_to_user_ptr(uaddr), len))
		return ERR_PTR(-EFAULT);
	first = uaddr >> PAGE_SHIFT;
	last = (uaddr + len - 1) >> PAGE_SHIFT;
	npages = last - first + 1;

	/* The limit, then the mapping, then the allocations they bound. */
	mm = kcoll_account(npages);
	if (IS_ERR(mm))
		return ERR_CAST(mm);
	ret = kcoll_range_check(mm, uaddr, len, how);
	if (ret)
		goto err_unaccount;
	mr = kcoll_mr_new(npages);
	if (!mr) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	mr->uaddr = uaddr;
	mr->user = true;
	mr->writable = how == KCOLL_PIN_WRITE;
	mr->len = len;
	mr->pgoff = offset_in_page(uaddr);
	mr->mm = mm;

	while (done < npages) {
		u64 addr = (first + done) << PAGE_SHIFT;
		unsigned int flags;
		u32 n;

		n = kcoll_pin_flags(mm, addr, min_t(u64, npages - done, KCOLL_PIN_BATCH), how,
				    &flags);
		if (!n) {
			ret = fatal_signal_pending(current) ? -EINTR : -EFAULT;
			goto err_unpin;
		}
		ret = pin_user_pages_fast(addr, n, flags, mr->pages + done);
		if (ret < 0)
			goto err_unpin;
		if (!ret) {
			ret = -EFAULT;
			goto err_unpin;
		}
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}
	mr->npages = npages;

	ret = kcoll_mr_vmap(mr);
	if (ret)
		goto err_unpin;
	return mr;

err_unpin:
	unpin_user_pages(mr->pages, done);
	kvfree(mr->pages);
	kfree(mr);
err_unaccount:
	kcoll_unaccount(mm, npages);
	return ERR_PTR(ret);
}

struct kcoll_mr *kcoll_mr_alloc_kernel(u64 len)
{
	u64 npages = DIV_ROUND_UP(len, PAGE_SIZE);
	struct kcoll_mr *mr;
	unsigned long i;

	if (!len)
		return ERR_PTR(-EINVAL);
	mr = kcoll_mr_new(npages);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->len = len;
	mr->writable = true;
	for (i = 0; i < npages; i++) {
		mr->pages[i] = alloc_page(KCOLL_GFP_REQ);
		if (!mr->pages[i])
			goto err;
		mr->npages++;
	}
	if (kcoll_mr_vmap(mr))
		goto err;
	return mr;

err:
	while (mr->npages)
		__free_page(mr->pages[--mr->npages]);
	kvfree(mr->pages);
	kfree(mr);
	return ERR_PTR(-ENOMEM);
}

/* The device only reads what the kernel never writes. */
static enum dma_data_direction kcoll_mr_dma_dir(const struct kcoll_mr *mr)
{
	return mr->writable ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
}

static void kcoll_mr_dma_unmap(struct kcoll_mr *mr)
{
	unsigned long i;

	if (!mr->dma)
		return;
	for (i = 0; i < mr->npages; i++)
		ib_dma_unmap_page(mr->ibdev, mr->dma[i], PAGE_SIZE, kcoll_mr_dma_dir(mr));
	kvfree(mr->dma);
	mr->dma = NULL;
	mr->ibdev = NULL;
}

/*
 * Map every page for @ibdev, once: a registration keeps its mapping for
 * later operations on the same device.
 */
int kcoll_mr_dma_map(struct kcoll_mr *mr, struct ib_device *ibdev)
{
	unsigned long i;
	u64 *dma;

	if (mr->dma && mr->ibdev == ibdev)
		return 0;
	kcoll_mr_dma_unmap(mr);
	dma = kvcalloc(mr->npages, sizeof(*dma), KCOLL_GFP_REQ);
	if (!dma)
		return -ENOMEM;
	for (i = 0; i < mr->npages; i++) {
		dma[i] = ib_dma_map_page(ibdev, mr->pages[i], 0, PAGE_SIZE,
					 kcoll_mr_dma_dir(mr));
		if (ib_dma_mapping_error(ibdev, dma[i]))
			goto err;
	}
	mr->dma = dma;
	mr->ibdev = ibdev;
	return 0;

err:
	while (i--)
		ib_dma_unmap_page(ibdev, dma[i], PAGE_SIZE, kcoll_mr_dma_dir(mr));
	kvfree(dma);
	return -ENOMEM;
}

void kcoll_mr_free(struct kcoll_mr *mr)
{
	unsigned long i;

	if (!mr)
		return;
	kcoll_mr_dma_unmap(mr);
	vunmap(mr->vaddr);
	if (mr->user) {
		/* The executor may have written any page of a writable pin. */
		unpin_user_pages_dirty_lock(mr->pages, mr->npages, mr->writable);
		kcoll_unaccount(mr->mm, mr->npages);
		mr->mm = NULL;
	} else {
		for (i = 0; i < mr->npages; i++)
			__free_page(mr->pages[i]);
	}
	kvfree(mr->pages);
	kfree(mr);
}
