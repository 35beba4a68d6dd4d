// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: two-rank communicators on this node.
 *
 * Two files, ranks 0 and 1 of one rank table on this node's address (the
 * runner's KCOLL_IP; rdma_cm cannot reach a soft-RoCE device through
 * 127.0.0.1) with two ports of the fuzzer's own, are created at the same
 * time, by two threads of the epoch or by the epoch and a forked process.
 * Both submit the same few operations (the same seed on both sides) and
 * wait for them: real traffic through the transport.  Threads' pairs then
 * join the epoch's slots, where the fuzz threads' unmatched operations
 * time out (3 s) and end the communicator; a process's peer lingers a
 * little, then aborts, closes or just exits, so the epoch's rank sees it
 * leave mid-fuzz.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kcoll_fuzz.h"

#define FZ_PAIR_TIMEOUT_MS	3000
#define FZ_PAIR_CONNECT_MS	5000

/* Two consecutive ports of the first half of this rank's span. */
static unsigned int fz_pair_port(struct fz_epoch *ep)
{
	uint32_t n = atomic_fetch_add(&ep->sh->next_port, 2);

	return ep->cfg->port_base + n % (FZ_PORT_SPAN / 2 - 2);
}

static int fz_pair_create(struct fz_epoch *ep, int fd, const struct kcoll_rank *rt,
			  unsigned int rank)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = rank, .nranks = 2, .ranks = (uintptr_t)rt,
		.rank_size = sizeof(*rt), .eventfd = ep->efd[rank % FZ_NEFD],
		.timeout_ms = FZ_PAIR_TIMEOUT_MS, .connect_timeout_ms = FZ_PAIR_CONNECT_MS,
	};

	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? -errno : 0;
}

/*
 * Submit @k operations drawn from @seed: the same list on both ranks.
 * Each rank's buffers are in its own half of the pool.  Returns how many
 * the kernel took.
 */
static unsigned int fz_matched_submit(struct fz_epoch *ep, int fd, unsigned int rank,
				      uint64_t seed, unsigned int k)
{
	uint8_t *buf = ep->mem.pool + rank * (ep->mem.pool_len / 2);
	uint64_t a2av[8], n, sb, rb;
	unsigned int i, j, done = 0;
	struct fz_rng r;

	fz_seed(&r, seed, 0x7a17);
	for (i = 0; i < k; i++) {
		struct kcoll_submit s = {
			.size = sizeof(s),
			.op = (uint32_t)fz_below(&r, KCOLL_OP_COUNT),
			.dtype = (uint32_t)fz_below(&r, KCOLL_DTYPE_COUNT),
			.redop = (uint32_t)fz_below(&r, KCOLL_REDOP_COUNT),
			.root = (uint32_t)fz_below(&r, 2),
			.count = fz_range(&r, 1, 2048),
			.cookie = i,
		};

		n = s.count * fz_dtype_size(s.dtype);
		fz_op_bytes(s.op, n, 2, rank == s.root, &sb, &rb);
		if (s.op == KCOLL_OP_ALLTOALLV) {
			for (j = 0; j < 2; j++) {
				a2av[j] = s.count;		/* scounts */
				a2av[2 + j] = j * s.count;	/* sdispls */
				a2av[4 + j] = s.count;		/* rcounts */
				a2av[6 + j] = j * s.count;	/* rdispls */
			}
			s.scounts = (uintptr_t)a2av;
			s.sdispls = (uintptr_t)(a2av + 2);
			s.rcounts = (uintptr_t)(a2av + 4);
			s.rdispls = (uintptr_t)(a2av + 6);
		}
		s.send.addr = (uintptr_t)buf;
		s.recv.addr = (uintptr_t)buf + ((sb + 63) & ~63ULL);
		if (ioctl(fd, KCOLL_IOC_SUBMIT, &s))
			break;
		done++;
	}
	return done;
}

/* Wait for @n completions and count them. */
static void fz_matched_reap(struct fz_epoch *ep, int fd, unsigned int n)
{
	struct kcoll_completion cpl[8] = { { 0 } };
	unsigned int i;

	while (n) {
		struct kcoll_reap rp = {
			.size = sizeof(rp), .flags = KCOLL_REAP_WAIT, .entries = (uintptr_t)cpl,
			.max = 8, .entry_size = sizeof(cpl[0]),
			.timeout_ms = 3 * FZ_PAIR_TIMEOUT_MS,
		};

		if (ioctl(fd, KCOLL_IOC_REAP, &rp) || !rp.count)
			return;
		for (i = 0; i < rp.count; i++)
			atomic_fetch_add(cpl[i].status ? &ep->sh->ops_err : &ep->sh->ops_ok, 1);
		n -= rp.count < n ? rp.count : n;
	}
}

struct fz_pair_peer {
	struct fz_epoch *ep;
	int fd;
	const struct kcoll_rank *rt;
	int ret;
};

static void *fz_pair_peer_main(void *arg)
{
	struct fz_pair_peer *p = arg;

	p->ret = fz_pair_create(p->ep, p->fd, p->rt, 1);
	return NULL;
}

void fz_pair_threads(struct fz_thread *t)
{
	struct fz_epoch *ep = t->ep;
	struct kcoll_rank rt[2];
	struct fz_pair_peer p = { .ep = ep, .rt = rt, .ret = -1 };
	unsigned int k = (unsigned int)fz_range(&t->rng, 1, 4), na, nb;
	uint64_t seed = fz_rand(&t->rng);
	int a = fz_open_kcoll(), ra = -1, sa, sb;
	pthread_t pt;

	fz_rank_table(t, rt, 2, fz_pair_port(ep));
	p.fd = fz_open_kcoll();
	if (a >= 0 && p.fd >= 0 && !pthread_create(&pt, NULL, fz_pair_peer_main, &p)) {
		ra = fz_pair_create(ep, a, rt, 0);
		pthread_join(pt, NULL);
	}
	if (ra || p.ret) {
		if (a >= 0)
			close(a);
		if (p.fd >= 0)
			close(p.fd);
		return;
	}
	atomic_fetch_add(&ep->sh->pair_ok, 1);
	na = fz_matched_submit(ep, a, 0, seed, k);
	nb = fz_matched_submit(ep, p.fd, 1, seed, k);
	fz_matched_reap(ep, a, na);
	fz_matched_reap(ep, p.fd, nb);
	atomic_fetch_add(&ep->sh->acts[FZ_ACT_MATCHED_OPS], na < nb ? na : nb);
	/* Into two slots, for the fuzz threads' unmatched operations. */
	sa = (int)fz_below(&t->rng, FZ_NFILES);
	sb = (sa + 1 + (int)fz_below(&t->rng, FZ_NFILES - 1)) % FZ_NFILES;
	fz_slot_install(ep, sa, a, 2, 0, sb);
	fz_slot_install(ep, sb, p.fd, 2, 1, sa);
}

void fz_pair_procs(struct fz_thread *t)
{
	struct fz_epoch *ep = t->ep;
	struct kcoll_rank rt[2];
	unsigned int k = (unsigned int)fz_range(&t->rng, 1, 4), n;
	unsigned int linger_ms = (unsigned int)fz_below(&t->rng, 300);
	unsigned int how = (unsigned int)fz_below(&t->rng, 3);
	uint64_t seed = fz_rand(&t->rng);
	int a, fd;
	pid_t pid;

	fz_rank_table(t, rt, 2, fz_pair_port(ep));
	pid = fork();
	if (!pid) {
		struct timespec ts = { 0, (long)linger_ms * 1000000L };
		struct kcoll_abort ab = { .size = sizeof(ab) };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = fz_open_kcoll();
		if (fd < 0 || fz_pair_create(ep, fd, rt, 1))
			_exit(1);
		n = fz_matched_submit(ep, fd, 1, seed, k);
		fz_matched_reap(ep, fd, n);
		nanosleep(&ts, NULL);
		if (how == 0)
			ioctl(fd, KCOLL_IOC_ABORT, &ab);
		if (how <= 1)
			close(fd);
		_exit(0);		/* how == 2: the exit closes it */
	}
	if (pid < 0)
		return;
	a = fz_open_kcoll();
	if (a >= 0 && !fz_pair_create(ep, a, rt, 0)) {
		atomic_fetch_add(&ep->sh->pair_ok, 1);
		n = fz_matched_submit(ep, a, 0, seed, k);
		fz_matched_reap(ep, a, n);
		atomic_fetch_add(&ep->sh->acts[FZ_ACT_MATCHED_OPS], n);
		fz_slot_install(ep, (int)fz_below(&t->rng, FZ_NFILES), a, 2, 0, -1);
	} else if (a >= 0) {
		close(a);
	}
	waitpid(pid, NULL, 0);
}
