// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: what an epoch's threads share about the kernel's state.
 *
 * The slots of /dev/kcoll files (with the communicator each is believed
 * to have), the registrations made through them, and the descriptors an
 * eventfd field may name.  Threads update all of it without locks, with
 * atomics only: it is a belief, not the truth.  Another thread may close
 * a slot's file between the moment a builder reads the descriptor and
 * the ioctl (that is one of the races the fuzzer wants), a handle may
 * have been deregistered meanwhile, and the kernel may have ended a
 * communicator: the calls then fail, and the counters show how.
 */
#include <fcntl.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "kcoll_fuzz.h"

double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int fz_open_kcoll(void)
{
	return open("/dev/kcoll", O_RDWR | O_CLOEXEC);
}

/* Registrations made through @slot's old file are gone with it. */
static void fz_slot_forget(struct fz_epoch *ep, int slot)
{
	unsigned int i;

	for (i = 0; i < FZ_NHANDLES; i++)
		if (atomic_load(&ep->handles[i].slot) == slot &&
		    atomic_load(&ep->handles[i].state) == FZ_H_LIVE)
			atomic_store(&ep->handles[i].state, FZ_H_STALE);
}

int fz_slot_fd(struct fz_thread *t, int *slot)
{
	struct fz_epoch *ep = t->ep;
	int s = (int)fz_below(&t->rng, FZ_NFILES), fd, expect = -1;

	*slot = s;
	fd = atomic_load(&ep->files[s].fd);
	if (fd >= 0)
		return fd;
	fd = fz_open_kcoll();
	if (fd < 0)
		return fd;
	atomic_store(&ep->files[s].nranks, 0);
	atomic_store(&ep->files[s].rank, 0);
	atomic_store(&ep->files[s].pair_slot, -1);
	if (!atomic_compare_exchange_strong(&ep->files[s].fd, &expect, fd)) {
		close(fd);		/* another thread was faster */
		return expect;
	}
	return fd;
}

void fz_slot_install(struct fz_epoch *ep, int slot, int fd, int nranks, int rank, int pair)
{
	int old;

	fz_slot_forget(ep, slot);
	atomic_store(&ep->files[slot].nranks, nranks);
	atomic_store(&ep->files[slot].rank, rank);
	atomic_store(&ep->files[slot].pair_slot, pair);
	old = atomic_exchange(&ep->files[slot].fd, fd);
	/* Maybe while another thread is inside an ioctl on it. */
	if (old >= 0 && old != fd)
		close(old);
}

void fz_handle_add(struct fz_epoch *ep, int slot, uint64_t h, uint64_t len)
{
	unsigned int i, start = (unsigned int)(h * 7) % FZ_NHANDLES;
	struct fz_handle *e = &ep->handles[start];

	for (i = 0; i < FZ_NHANDLES; i++) {
		struct fz_handle *x = &ep->handles[(start + i) % FZ_NHANDLES];

		if (atomic_load(&x->state) != FZ_H_LIVE) {
			e = x;
			break;
		}
	}
	atomic_store(&e->state, FZ_H_EMPTY);
	atomic_store(&e->h, h);
	atomic_store(&e->slot, slot);
	atomic_store(&e->len, len);
	atomic_store(&e->state, FZ_H_LIVE);
}

/* The entry of @h on @slot, or NULL. */
struct fz_handle *fz_handle_lookup(struct fz_epoch *ep, int slot, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < FZ_NHANDLES; i++)
		if (atomic_load(&ep->handles[i].h) == h &&
		    atomic_load(&ep->handles[i].slot) == slot)
			return &ep->handles[i];
	return NULL;
}

struct fz_handle *fz_handle_find(struct fz_thread *t, int slot, uint64_t len)
{
	struct fz_epoch *ep = t->ep;
	unsigned int i, start = (unsigned int)fz_below(&t->rng, FZ_NHANDLES);

	for (i = 0; i < FZ_NHANDLES; i++) {
		struct fz_handle *x = &ep->handles[(start + i) % FZ_NHANDLES];

		if (atomic_load(&x->state) == FZ_H_LIVE && atomic_load(&x->slot) == slot &&
		    atomic_load(&x->len) >= len)
			return x;
	}
	return NULL;
}

/* A handle of @slot (@live) or of any other slot, in a given state. */
static int64_t fz_handle_in(struct fz_thread *t, int slot, bool same, int state)
{
	struct fz_epoch *ep = t->ep;
	unsigned int i, start = (unsigned int)fz_below(&t->rng, FZ_NHANDLES);

	for (i = 0; i < FZ_NHANDLES; i++) {
		struct fz_handle *x = &ep->handles[(start + i) % FZ_NHANDLES];

		if (atomic_load(&x->state) == state && (atomic_load(&x->slot) == slot) == same)
			return (int64_t)atomic_load(&x->h);
	}
	return -1;
}

uint64_t fz_handle_value(struct fz_thread *t, int slot)
{
	unsigned int x = (unsigned int)fz_below(&t->rng, 100);
	int64_t h = -1;

	if (x < 55)
		h = fz_handle_in(t, slot, true, FZ_H_LIVE);
	else if (x < 65)
		h = fz_handle_in(t, slot, false, FZ_H_LIVE);	/* another file's */
	else if (x < 78)
		h = fz_handle_in(t, slot, fz_permille(&t->rng, 500), FZ_H_STALE);
	if (h >= 0)
		return (uint64_t)h;
	if (fz_permille(&t->rng, 300))
		return fz_int(&t->rng, 8);
	return FZ_PICK(&t->rng, 0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		       0x100000001ULL, UINT64_MAX);
}

int fz_fd_value(struct fz_thread *t)
{
	struct fz_epoch *ep = t->ep;
	unsigned int x = (unsigned int)fz_below(&t->rng, 100);
	int slot;

	if (x < 50)
		return ep->efd[fz_below(&t->rng, FZ_NEFD)];
	if (x < 58)
		return fz_slot_fd(t, &slot);		/* not an eventfd */
	if (x < 63)
		return ep->pipefd[fz_below(&t->rng, 2)];
	if (x < 66)
		return ep->nullfd;
	if (x < 70)
		return ep->closedfd;
	if (x < 73)
		return ep->cfg->parent_fd;
	return (int)FZ_PICK(&t->rng, (uint64_t)-1, (uint64_t)-1, (uint64_t)-2,
			    (uint64_t)INT_MIN, INT_MAX, 0, 1, 2, 1023, 1024, 65536);
}
