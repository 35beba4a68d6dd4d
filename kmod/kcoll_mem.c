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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kcoll.h"

/* Pages pinned per pin_user_pages_fast() call, as ib_umem_get does. */
#define KCOLL_PIN_BATCH		(PAGE_SIZE / sizeof(struct page *))

static struct kcoll_mr *kcoll_mr_new(u64 npages)
{
	struct kcoll_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return NULL;
	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		kfree(mr);
		return NULL;
	}
	atomic_set(&mr->users, 0);
	return mr;
}

static int kcoll_mr_vmap(struct kcoll_mr *mr)
{
	mr->vaddr = vmap(mr->pages, mr->npages, VM_MAP, PAGE_KERNEL);
	return mr->vaddr ? 0 : -ENOMEM;
}

/* Charge @npages to current->mm, as ib_umem_get() does. */
static int kcoll_account(struct kcoll_mr *mr, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 now;

	if (!can_do_mlock())
		return -EPERM;
	mr->mm = current->mm;
	mmgrab(mr->mm);
	now = atomic64_add_return(npages, &mr->mm->pinned_vm);
	if (now > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mr->mm->pinned_vm);
		mmdrop(mr->mm);
		mr->mm = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kcoll_unaccount(struct kcoll_mr *mr, unsigned long npages)
{
	if (!mr->mm)
		return;
	atomic64_sub(npages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
	mr->mm = NULL;
}

/*
 * Is every byte of [@start, @start + @len) inside a mapping of current?
 * Pinning decides in the end; this makes a request for memory that is
 * not there fail before anything sized by @len is allocated.
 */
static int kcoll_range_mapped(u64 start, u64 len)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	u64 addr = start;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	while (addr < start + len) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			ret = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

struct kcoll_mr *kcoll_mr_pin(u64 uaddr, u64 len)
{
	u64 first, last, npages;
	unsigned long done = 0;
	struct kcoll_mr *mr;
	int ret;

	if (!len || len > KCOLL_MAX_REG_BYTES || uaddr + len < uaddr)
		return ERR_PTR(-EINVAL);
	if (!access_ok(u64_to_user_ptr(uaddr), len))
		return ERR_PTR(-EFAULT);
	first = uaddr >> PAGE_SHIFT;
	last = (uaddr + len - 1) >> PAGE_SHIFT;
	npages = last - first + 1;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->uaddr = uaddr;
	mr->user = true;
	mr->len = len;
	mr->pgoff = offset_in_page(uaddr);

	/*
	 * Charge RLIMIT_MEMLOCK and look at the range before allocating the
	 * page array: for KCOLL_MAX_REG_BYTES it is 128 MiB, and a few
	 * requests at a time for memory that cannot be pinned (over the
	 * limit, or not mapped) ran a machine into the OOM killer.  An array
	 * of one page or less is cheaper than the look.
	 */
	ret = kcoll_account(mr, npages);
	if (ret)
		goto err_free;
	if (npages > KCOLL_PIN_BATCH) {
		ret = kcoll_range_mapped(uaddr, len);
		if (ret)
			goto err_unaccount;
	}
	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	atomic_set(&mr->users, 0);

	while (done < npages) {
		int n = min_t(unsigned long, npages - done, KCOLL_PIN_BATCH);

		ret = pin_user_pages_fast((first + done) << PAGE_SHIFT, n,
					  FOLL_WRITE | FOLL_LONGTERM, mr->pages + done);
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
err_unaccount:
	kcoll_unaccount(mr, npages);
err_free:
	kvfree(mr->pages);
	kfree(mr);
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
	for (i = 0; i < npages; i++) {
		mr->pages[i] = alloc_page(GFP_KERNEL | __GFP_NOWARN);
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

static void kcoll_mr_dma_unmap(struct kcoll_mr *mr)
{
	unsigned long i;

	if (!mr->dma)
		return;
	for (i = 0; i < mr->npages; i++)
		ib_dma_unmap_page(mr->ibdev, mr->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
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
	dma = kvcalloc(mr->npages, sizeof(*dma), GFP_KERNEL);
	if (!dma)
		return -ENOMEM;
	for (i = 0; i < mr->npages; i++) {
		dma[i] = ib_dma_map_page(ibdev, mr->pages[i], 0, PAGE_SIZE,
					 DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, dma[i]))
			goto err;
	}
	mr->dma = dma;
	mr->ibdev = ibdev;
	return 0;

err:
	while (i--)
		ib_dma_unmap_page(ibdev, dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
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
		/* The device and the executor may have written any page. */
		unpin_user_pages_dirty_lock(mr->pages, mr->npages, true);
		kcoll_unaccount(mr, mr->npages);
	} else {
		for (i = 0; i < mr->npages; i++)
			__free_page(mr->pages[i]);
	}
	kvfree(mr->pages);
	kfree(mr);
}
