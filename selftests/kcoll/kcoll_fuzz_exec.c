// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: making the calls, and an epoch's threads.
 *
 * fz_ioctl() makes one call, keeps it in the thread's ring (shared with
 * the driver, so the last calls are there even when the epoch dies),
 * counts it per command and errno, learns from what succeeded (a file has
 * a communicator, a handle exists, one is gone), and checks the promises
 * of the ABI that hold whatever the arguments:
 *  - a process that did not open the file gets EPERM from everything but
 *    KCOLL_IOC_INFO (the driver's own file, inherited by every epoch);
 *  - a request of the wrong direction, type or number gets ENOTTY;
 *  - no errno above 511 (the kernel's internal ERESTARTSYS, ENOIOCTLCMD,
 *    EPROBE_DEFER...) ever reaches user space.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <unistd.h>

#include "kcoll_fuzz.h"
#include "kcoll_user.h"

const char *const fz_act_names[FZ_NACTS] = {
	[FZ_ACT_REOPEN] = "reopen",
	[FZ_ACT_DUP] = "dup",
	[FZ_ACT_CHAOS] = "remap/mprotect",
	[FZ_ACT_FORK] = "fork (EPERM checks)",
	[FZ_ACT_PAIR_THREADS] = "pairs in threads",
	[FZ_ACT_PAIR_PROCS] = "pairs in processes",
	[FZ_ACT_MATCHED_OPS] = "matched operations",
	[FZ_ACT_SIGNAL] = "signals",
	[FZ_ACT_EPOCH] = "epochs",
	[FZ_ACT_EPOCH_UNPRIV] = "unprivileged epochs",
	[FZ_ACT_EPOCH_KILLED] = "killed epochs",
};

void fz_oracle_fail(struct fz_shared *sh, const char *fmt, ...)
{
	uint32_t n = atomic_fetch_add(&sh->nmsg, 1);
	va_list ap;

	atomic_fetch_add(&sh->oracle_fail, 1);
	if (n >= FZ_NMSG)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->msg[n], sizeof(sh->msg[n]), fmt, ap);
	va_end(ap);
}

static struct fz_trace *fz_trace_begin(struct fz_thread *t, const struct fz_call *c)
{
	struct fz_shared *sh = t->ep->sh;
	uint32_t pos = atomic_fetch_add(&sh->ring_pos[t->id], 1) % FZ_RING;
	struct fz_trace *e = &sh->ring[t->id][pos];
	uint32_t room = 0;

	e->seq = t->seq;
	e->epoch = t->ep->index;
	e->req = (uint32_t)c->req;
	e->fd = c->fd;
	e->err = -1;		/* still inside the kernel */
	e->size = c->size;
	e->place = 0;
	memset(e->head, 0, sizeof(e->head));
	if (c->arg >= t->st && c->arg < t->st + FZ_STRUCT_LEN) {
		e->place = (uint32_t)(c->arg - t->arr);
		room = (uint32_t)(t->st + FZ_STRUCT_LEN - c->arg);
		memcpy(e->head, c->arg, room < sizeof(e->head) ? room : sizeof(e->head));
	} else {
		e->place = UINT32_MAX;	/* a pointer elsewhere: head unknown */
		memcpy(e->head, &c->arg, sizeof(c->arg));
	}
	return e;
}

/* The ABI's promises that hold whatever the arguments (see the top). */
static void fz_check(struct fz_thread *t, const struct fz_call *c, long ret, int err)
{
	struct fz_shared *sh = t->ep->sh;
	const char *name = c->bucket < FZ_NCMDS ? fz_cmds[c->bucket].name : "bad request";

	if (ret < 0 && err >= 512)
		fz_oracle_fail(sh, "call %llu: %s (0x%lx) returned internal errno %d",
			       (unsigned long long)t->seq, name, c->req, err);
	/* Another process's file refuses a known type and direction with EPERM first. */
	if (c->bucket == FZ_BADCMD && (ret >= 0 || (err != ENOTTY && err != EBADF &&
						     !(c->inherited && err == EPERM))))
		fz_oracle_fail(sh, "call %llu: request 0x%lx on fd %d: %s, expected ENOTTY",
			       (unsigned long long)t->seq, c->req, c->fd,
			       ret >= 0 ? "accepted" : strerrorname_np(err));
	if (c->inherited && c->bucket != FZ_BADCMD && c->bucket != FZ_INFO &&
	    (ret >= 0 || err != EPERM))
		fz_oracle_fail(sh, "call %llu: %s on the parent's file: %s, expected EPERM",
			       (unsigned long long)t->seq, name,
			       ret >= 0 ? "accepted" : strerrorname_np(err));
}

/* Learn from a call that succeeded on a slot's file. */
static void fz_learn(struct fz_thread *t, const struct fz_call *c)
{
	struct fz_epoch *ep = t->ep;
	struct fz_handle *h;
	uint64_t v, n, i;

	switch (c->bucket) {
	case FZ_CREATE:
		n = FZ_GET(c, t, kcoll_comm_create, nranks);
		atomic_store(&ep->files[c->slot].nranks, n >= 1 && n <= 4096 ? (int)n : 1);
		atomic_store(&ep->files[c->slot].rank,
			     (int)FZ_GET(c, t, kcoll_comm_create, rank));
		break;
	case FZ_REG:
		v = FZ_GET(c, t, kcoll_mem_reg, handle);
		if (v)
			fz_handle_add(ep, c->slot, v, FZ_GET(c, t, kcoll_mem_reg, len));
		break;
	case FZ_DEREG:
		h = fz_handle_lookup(ep, c->slot, FZ_GET(c, t, kcoll_mem_dereg, handle));
		if (h)
			atomic_store(&h->state, FZ_H_STALE);
		break;
	case FZ_REAP:
		if (!c->wellformed || FZ_GET(c, t, kcoll_reap, entry_size) !=
		    sizeof(struct kcoll_completion))
			break;
		n = FZ_GET(c, t, kcoll_reap, count);
		for (i = 0; i < n && i < 64; i++) {
			const struct kcoll_completion *e =
				(const struct kcoll_completion *)t->arr + i;

			atomic_fetch_add(e->status ? &ep->sh->ops_err : &ep->sh->ops_ok, 1);
		}
		break;
	}
}

long fz_ioctl(struct fz_thread *t, struct fz_call *c)
{
	struct fz_shared *sh = t->ep->sh;
	struct fz_trace *e;
	long ret;
	int err;

	t->seq = atomic_fetch_add(&sh->issued, 1);
	e = fz_trace_begin(t, c);
	if (t->ep->cfg->verbose > 1)
		fprintf(stderr, "# call %llu: fd %d req 0x%lx size %u\n",
			(unsigned long long)t->seq, c->fd, c->req, c->size);
	ret = ioctl(c->fd, c->req, c->arg);
	err = ret < 0 ? errno : 0;
	e->err = err;
	atomic_fetch_add(&sh->calls[c->bucket], 1);
	if (ret >= 0)
		atomic_fetch_add(&sh->ok[c->bucket], 1);
	else
		atomic_fetch_add(&sh->err[c->bucket][err < FZ_NERR ? err : FZ_NERR - 1], 1);
	fz_check(t, c, ret, err);
	if (ret >= 0 && c->slot >= 0 && !c->inherited)
		fz_learn(t, c);
	errno = err;
	return ret;
}

void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;
	struct fz_epoch *ep = t->ep;
	struct fz_shared *sh = ep->sh;
	struct fz_call c;
	unsigned long it;

	atomic_store(&ep->ktid[t->id], gettid());
	pthread_barrier_wait(&ep->go);
	for (it = 0;; it++) {
		if (atomic_load(&ep->stop) || atomic_load(&sh->stop))
			break;
		if (atomic_load(&sh->issued) >= ep->end_issued)
			break;
		if (!(it & 31) && fz_now() > ep->deadline)
			break;
		if (fz_permille(&t->rng, 20)) {
			fz_action(t);
			continue;
		}
		fz_build(t, &c, fz_pick_bucket(&t->rng));
		fz_ioctl(t, &c);
	}
	return NULL;
}

/* SIGUSR1 only interrupts: a waiting REAP returns EINTR. */
static void fz_sigusr1(int sig)
{
	(void)sig;
}

/* User 65534 in /dev/kcoll's group, a small RLIMIT_MEMLOCK, no CAP_IPC_LOCK. */
static int fz_drop_privileges(struct fz_rng *r)
{
	struct rlimit rl;

	rl.rlim_cur = FZ_PICK(r, 0, 16 << 10, 64 << 10, 256 << 10, 1 << 20);
	rl.rlim_max = rl.rlim_cur;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || kc_become(65534, true))
		return -errno;
	return 0;
}

/* The body of an epoch's process; returns its exit status. */
int fz_epoch_run(struct fz_epoch *ep)
{
	static struct fz_thread th[FZ_MAX_THREADS];
	struct sigaction sa = { .sa_handler = fz_sigusr1 };	/* no SA_RESTART */
	pthread_t tid[FZ_MAX_THREADS];
	struct fz_rng r;
	unsigned int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGUSR1, &sa, NULL);
	fz_seed(&r, ep->seed, (uint64_t)ep->index << 8 | 0xff);
	if (ep->unpriv && fz_drop_privileges(&r))
		return 2;
	if (fz_mem_init(&ep->mem, ep->nthreads))
		return 3;
	for (i = 0; i < FZ_NEFD; i++)
		ep->efd[i] = eventfd(0, EFD_CLOEXEC | (i ? EFD_NONBLOCK : 0));
	if (pipe2(ep->pipefd, O_CLOEXEC))
		return 4;
	ep->nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ep->closedfd = 999;		/* never opened: the fuzzer has a few dozen */
	for (i = 0; i < FZ_NFILES; i++) {
		atomic_store(&ep->files[i].fd, i && fz_permille(&r, 300) ? -1 : fz_open_kcoll());
		atomic_store(&ep->files[i].pair_slot, -1);
	}
	pthread_barrier_init(&ep->go, NULL, ep->nthreads);
	for (i = 0; i < ep->nthreads; i++) {
		th[i].ep = ep;
		th[i].id = i;
		fz_seed(&th[i].rng, ep->seed, (uint64_t)ep->index << 8 | i);
		th[i].arr = ep->mem.arg[i];
		th[i].st = th[i].arr + FZ_ARR_LEN;
		if (i && pthread_create(&tid[i], NULL, fz_thread_main, &th[i]))
			return 5;
	}
	fz_thread_main(&th[0]);
	atomic_store(&ep->stop, 1);
	for (i = 1; i < ep->nthreads; i++)
		pthread_join(tid[i], NULL);
	/* Half the epochs close their files; the others leave it to exit(). */
	if (fz_permille(&r, 500))
		for (i = 0; i < FZ_NFILES; i++)
			if (atomic_load(&ep->files[i].fd) >= 0)
				close(atomic_load(&ep->files[i].fd));
	return 0;
}
