// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: the memory every pointer comes from.
 *
 * One PROT_NONE reservation holds every region the fuzzer hands to the
 * kernel, each followed by guard pages: a read-write pool (plain and
 * registered buffers), shmem pages, a read-only page, a read-write page
 * right before a guard (buffers straddling a mapping's end), areas that
 * other threads remap, reprotect or drop while operations use them, and
 * one argument area per thread.  Since a length running past a region
 * faults in its guard, a fuzzed pointer never lets the kernel write into
 * the fuzzer's own heap, stacks or counters.  Remapping uses MAP_FIXED over
 * the old pages (what munmap() does to them, without opening a hole that
 * another mmap() of this process could take).
 *
 * Pointers nowhere: addresses below mmap_min_addr, past the user address
 * space, non-canonical, kernel addresses.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kcoll_fuzz.h"

#define FZ_GUARD	(16 * FZ_PAGE)
#define FZ_POOL_LEN	(1u << 20)
#define FZ_SHM_LEN	(256u << 10)
#define FZ_CHAOS_LEN	(64u << 10)

static uint8_t *fz_map_at(uint8_t *at, size_t len, int prot)
{
	void *p = mmap(at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int fz_mem_init(struct fz_mem *m, unsigned int threads)
{
	size_t len = FZ_GUARD, i;
	uint8_t *p;
	int mfd;

	memset(m, 0, sizeof(*m));
	len += FZ_POOL_LEN + FZ_GUARD;
	len += FZ_SHM_LEN + FZ_GUARD;
	len += 2 * FZ_PAGE + FZ_GUARD;		/* read-only page, edge page */
	len += FZ_GUARD;			/* the PROT_NONE page is in here */
	len += FZ_NCHAOS * (FZ_CHAOS_LEN + FZ_GUARD);
	len += threads * (FZ_ARG_LEN + FZ_PAGE);
	m->len = len;
	m->base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->base == MAP_FAILED)
		return -errno;
	p = m->base + FZ_GUARD;

	m->pool = fz_map_at(p, FZ_POOL_LEN, PROT_READ | PROT_WRITE);
	m->pool_len = FZ_POOL_LEN;
	p += FZ_POOL_LEN + FZ_GUARD;

	mfd = memfd_create("kcoll_fuzz", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, FZ_SHM_LEN))
		return -errno;
	m->shm = mmap(p, FZ_SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mfd, 0);
	close(mfd);
	if (m->shm == MAP_FAILED)
		return -errno;
	m->shm_len = FZ_SHM_LEN;
	p += FZ_SHM_LEN + FZ_GUARD;

	m->ro = fz_map_at(p, FZ_PAGE, PROT_READ | PROT_WRITE);
	m->edge = fz_map_at(p + FZ_PAGE, FZ_PAGE, PROT_READ | PROT_WRITE);
	if (!m->pool || !m->ro || !m->edge)
		return -ENOMEM;
	memset(m->ro, 0x5a, FZ_PAGE);
	if (mprotect(m->ro, FZ_PAGE, PROT_READ))
		return -errno;
	p += 2 * FZ_PAGE + FZ_GUARD;
	m->none = p + FZ_GUARD / 2;		/* inside a guard: PROT_NONE */
	p += FZ_GUARD;

	m->chaos_len = FZ_CHAOS_LEN;
	for (i = 0; i < FZ_NCHAOS; i++) {
		m->chaos[i] = fz_map_at(p, FZ_CHAOS_LEN, PROT_READ | PROT_WRITE);
		if (!m->chaos[i])
			return -ENOMEM;
		memset(m->chaos[i], 0, FZ_CHAOS_LEN);
		p += FZ_CHAOS_LEN + FZ_GUARD;
	}
	for (i = 0; i < threads && i < FZ_MAX_THREADS; i++) {
		m->arg[i] = fz_map_at(p, FZ_ARG_LEN, PROT_READ | PROT_WRITE);
		if (!m->arg[i])
			return -ENOMEM;
		p += FZ_ARG_LEN + FZ_PAGE;
	}
	/* Fault everything in: pins then find present pages, as a real user's. */
	memset(m->pool, 1, m->pool_len);
	memset(m->shm, 2, m->shm_len);
	memset(m->edge, 3, FZ_PAGE);
	return 0;
}

/* An offset in a region of @rlen bytes such that @len bytes fit, if they can. */
static uint64_t fz_fit(struct fz_rng *r, uint64_t rlen, uint64_t len, uint64_t align)
{
	uint64_t room = len < rlen ? rlen - len : 0;

	return fz_below(r, room / align + 1) * align;
}

uint64_t fz_ptr(struct fz_rng *r, const struct fz_mem *m, unsigned int cls, uint64_t len,
		const void *self)
{
	uint64_t k;

	switch (cls) {
	case FZ_P_NULL:
		return 0;
	case FZ_P_POOL:
		return (uintptr_t)m->pool + fz_fit(r, m->pool_len, len,
						   fz_permille(r, 500) ? FZ_PAGE : 8);
	case FZ_P_POOL_ODD:
		return (uintptr_t)m->pool + fz_fit(r, m->pool_len, len + 8, 8) + fz_range(r, 1, 7);
	case FZ_P_RDONLY:
		return (uintptr_t)m->ro + fz_fit(r, FZ_PAGE, len, 8);
	case FZ_P_NONE:
		return (uintptr_t)m->none + fz_fit(r, FZ_PAGE, len, 8);
	case FZ_P_UNMAPPED:
		/* Below mmap_min_addr: nothing is ever mapped there. */
		return FZ_PICK(r, 0x1000, 0x2345, 0x8000, 0xfff8, 1);
	case FZ_P_KERNEL:
		return FZ_PICK(r, 0xffff888000000000ULL, 0xffffffff81000000ULL,
			       0xffffc90000000000ULL, 0xffffffffff600000ULL,
			       0xfffffffffffff000ULL, 0xfffffffffffffff8ULL);
	case FZ_P_NONCANON:
		return FZ_PICK(r, 0x00007ffffffff000ULL, 0x00007ffffffffff8ULL,
			       0x0000800000000000ULL, 0x0001000000000000ULL,
			       0x7fffffffffffffffULL, 0x8000000000000000ULL);
	case FZ_P_EDGE:
		/* The last k bytes of a page followed by a guard. */
		k = fz_range(r, 1, len && len < FZ_PAGE ? len : FZ_PAGE);
		if (fz_permille(r, 300))
			k = len;	/* exactly to the end */
		if (!k || k > FZ_PAGE)
			k = 1;
		return (uintptr_t)m->edge + FZ_PAGE - k;
	case FZ_P_SELF:
		return (uintptr_t)self;
	case FZ_P_SHM:
		return (uintptr_t)m->shm + fz_fit(r, m->shm_len, len, 8);
	case FZ_P_CHAOS:
		return (uintptr_t)m->chaos[fz_below(r, FZ_NCHAOS)] +
		       fz_fit(r, m->chaos_len, len, fz_permille(r, 500) ? FZ_PAGE : 8);
	default:
		return fz_rand(r);
	}
}

uint64_t fz_ptr_any(struct fz_rng *r, const struct fz_mem *m, uint64_t len, const void *self)
{
	/* Weights per class, in enum order; valid memory most of the time. */
	static const unsigned int w[FZ_P_NCLASSES] = {
		[FZ_P_NULL] = 6, [FZ_P_POOL] = 38, [FZ_P_POOL_ODD] = 5, [FZ_P_RDONLY] = 6,
		[FZ_P_NONE] = 4, [FZ_P_UNMAPPED] = 4, [FZ_P_KERNEL] = 5, [FZ_P_NONCANON] = 3,
		[FZ_P_EDGE] = 6, [FZ_P_SELF] = 4, [FZ_P_SHM] = 7, [FZ_P_CHAOS] = 8,
		[FZ_P_RANDOM] = 4,
	};
	unsigned int total = 0, i, x;

	for (i = 0; i < FZ_P_NCLASSES; i++)
		total += w[i];
	x = fz_below(r, total);
	for (i = 0; i < FZ_P_NCLASSES - 1 && x >= w[i]; i++)
		x -= w[i];
	return fz_ptr(r, m, i, len, self);
}

void fz_mem_chaos(struct fz_rng *r, struct fz_mem *m)
{
	uint8_t *a = m->chaos[fz_below(r, FZ_NCHAOS)];
	size_t len = m->chaos_len, off = 0;

	/* Sometimes only part of the area: split VMAs. */
	if (fz_permille(r, 300)) {
		off = fz_below(r, len / FZ_PAGE) * FZ_PAGE;
		len = fz_range(r, 1, (m->chaos_len - off) / FZ_PAGE) * FZ_PAGE;
	}
	switch (fz_below(r, 6)) {
	case 0:		/* new pages under the old addresses: munmap + mmap */
		fz_map_at(a + off, len, PROT_READ | PROT_WRITE);
		break;
	case 1:		/* gone: munmap, as the kernel sees it */
		fz_map_at(a + off, len, PROT_NONE);
		break;
	case 2:
		mprotect(a + off, len, PROT_READ);
		break;
	case 3:
		mprotect(a + off, len, PROT_READ | PROT_WRITE);
		break;
	case 4:
		madvise(a + off, len, MADV_DONTNEED);
		break;
	default:
		mprotect(a + off, len, PROT_NONE);
		break;
	}
}
