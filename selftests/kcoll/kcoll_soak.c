// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko soak: random collective operations with exact checks.
 *
 * One communicator per algorithm (each with its own random chunk size and
 * window), then KCOLL_SOAK_OPS operations (default 300), each with a
 * random communicator (so algorithm), operation, element type, reduction,
 * size, root, in place or not, registered or plain buffers.  Every rank
 * draws the same sequence from KCOLL_SOAK_SEED (default 1; printed), so
 * all ranks submit the same operations; only the data depend on the
 * rank.  Every element of every result is checked; an operation an
 * algorithm cannot run is refused with EOPNOTSUPP on every rank alike
 * and counted, any other error fails.
 *
 *   kcoll-vm run -n 4 --module kcoll.ko -e KCOLL_SOAK_OPS=10000 \
 *       -e KCOLL_SOAK_SEED=42 -- build/obj/selftests/kcoll/kcoll_soak
 *
 * Skips (exit 4) without /dev/kcoll.
 */
#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "kcoll_dtype.h"

#define PORT_OFF 100

/* Progress to stderr: the harness ends a test with _exit(), unflushed. */
#define say(...) fprintf(stderr, __VA_ARGS__)

static const char *const algos[] = {
	"level0:NA;level1:NA;level2:NA", "level1:ring", "level1:H-D_R", "level1:NHR",
	"level1:NB", "level1:fullmesh", "level1:pairwise", "level1:tree",
	"level1:pipeline", "level1:AHC", "level1:AHC_BROKE",
};
#define NALGO (sizeof(algos) / sizeof(algos[0]))

static const char *const op_name[KCOLL_OP_COUNT] = {
	"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "scatter",
	"gather", "alltoall", "alltoallv", "barrier",
};

/* splitmix64: the same stream on every rank for the same seed. */
static __u64 rnd_state;

static __u64 rnd(void)
{
	__u64 z = (rnd_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd_below(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* A value of data movements: says where it came from, exact in every type. */
static int mv(unsigned int k, unsigned int src, unsigned int dst, size_t i)
{
	return (int)((src * 31 + dst * 17 + i * 7 + k * 3) % 97);
}

/* AlltoAllv elements from @s to @d in operation @k, drawn from the seed. */
static size_t a2av_n(__u64 seed, unsigned int k, unsigned int s, unsigned int d, size_t n)
{
	__u64 z = seed * 1000003 + k * 7919 + s * 131 + d;

	z = (z ^ (z >> 31)) * 0x9e3779b97f4a7c15ULL;
	return (size_t)((z >> 17) % (n + 1));
}

struct soak_op {
	unsigned int k, comm, op, dt, ro, root;
	bool inplace, reg;
	size_t n, sn, rn;		/* count; send and receive elements */
	__u64 cnt[4][64];		/* AlltoAllv counts and displacements */
};

/* Draw operation @k: the same on every rank. */
static void draw(struct soak_op *o, __u64 seed, unsigned int k, unsigned int p,
		 unsigned int me, size_t maxn)
{
	unsigned int r;
	size_t off;

	memset(o, 0, sizeof(*o));
	o->k = k;
	o->comm = rnd_below(NALGO);
	o->op = rnd_below(KCOLL_OP_COUNT);
	o->dt = rnd_below(KCOLL_DTYPE_COUNT);
	o->ro = rnd_below(KCOLL_REDOP_COUNT);
	o->root = rnd_below(p);
	o->reg = rnd_below(2);
	o->inplace = rnd_below(2);
	switch (rnd_below(4)) {
	case 0:
		o->n = rnd_below(2 * p + 2);		/* 0, 1, p-1, p, ... */
		break;
	case 1:
		o->n = rnd_below(4096);
		break;
	default:
		o->n = ((size_t)1 << rnd_below(16)) + rnd_below(1000);
	}
	if (o->n > maxn)
		o->n = maxn;
	switch (o->op) {
	case KCOLL_OP_ALLREDUCE: case KCOLL_OP_BROADCAST: case KCOLL_OP_REDUCE:
		o->sn = o->n; o->rn = o->n; break;
	case KCOLL_OP_REDUCESCATTER: case KCOLL_OP_SCATTER:
		o->sn = o->n * p; o->rn = o->n; break;
	case KCOLL_OP_ALLGATHER: case KCOLL_OP_GATHER:
		o->sn = o->n; o->rn = o->n * p; break;
	case KCOLL_OP_ALLTOALL:
		o->sn = o->n * p; o->rn = o->n * p; o->inplace = false; break;
	case KCOLL_OP_ALLTOALLV:
		o->inplace = false;
		for (r = 0, off = 0; r < p; r++) {
			o->cnt[0][r] = a2av_n(seed, k, me, r, o->n);
			o->cnt[1][r] = off;
			off += o->cnt[0][r];
		}
		o->sn = off;
		for (r = 0, off = 0; r < p; r++) {
			o->cnt[2][r] = a2av_n(seed, k, r, me, o->n);
			o->cnt[3][r] = off;
			off += o->cnt[2][r];
		}
		o->rn = off;
		break;
	case KCOLL_OP_BARRIER:
		o->n = 0; o->inplace = false; break;
	}
	if (o->op == KCOLL_OP_SCATTER || o->op == KCOLL_OP_GATHER)
		o->inplace = false;
}

static bool reduces(unsigned int op)
{
	return op == KCOLL_OP_ALLREDUCE || op == KCOLL_OP_REDUCESCATTER ||
	       op == KCOLL_OP_REDUCE;
}

/* Expected element @i of this rank's result, or NAN where nothing is defined. */
static double want(const struct soak_op *o, unsigned int p, unsigned int me, size_t i)
{
	unsigned int k = o->k, s;
	size_t n = o->n;

	switch (o->op) {
	case KCOLL_OP_ALLREDUCE:
		return kc_want(o->ro, p, i + k);
	case KCOLL_OP_REDUCE:
		return me == o->root ? kc_want(o->ro, p, i + k) : NAN;
	case KCOLL_OP_REDUCESCATTER:
		return kc_want(o->ro, p, me * n + i + k);
	case KCOLL_OP_BROADCAST:
		return mv(k, o->root, 0, i);
	case KCOLL_OP_SCATTER:
		return mv(k, o->root, 0, me * n + i);
	case KCOLL_OP_ALLGATHER:
		return mv(k, (unsigned int)(i / n), 0, i % n);
	case KCOLL_OP_GATHER:
		return me == o->root ? mv(k, (unsigned int)(i / n), 0, i % n) : NAN;
	case KCOLL_OP_ALLTOALL:
		return mv(k, (unsigned int)(i / n), me, i % n);
	case KCOLL_OP_ALLTOALLV:
		for (s = 0; s + 1 < p && i >= o->cnt[3][s + 1]; s++)
			;
		return mv(k, s, me, i - o->cnt[3][s]);
	}
	return NAN;
}

/* This rank's send element @i. */
static int give(const struct soak_op *o, unsigned int p, unsigned int me, size_t i)
{
	unsigned int d;

	if (reduces(o->op))
		return kc_val(o->ro, me, p, i + o->k);
	switch (o->op) {
	case KCOLL_OP_ALLTOALL:
		return mv(o->k, me, (unsigned int)(i / o->n), i % o->n);
	case KCOLL_OP_ALLTOALLV:
		for (d = 0; d + 1 < p && i >= o->cnt[1][d + 1]; d++)
			;
		return mv(o->k, me, d, i - o->cnt[1][d]);
	}
	return mv(o->k, me, 0, i);
}

FIXTURE(soak) {
	int fd[NALGO];
	struct cluster c;
};

FIXTURE_SETUP(soak)
{
	__u64 seed = env_u64("KCOLL_SOAK_SEED", 1);
	unsigned int a;

	for (a = 0; a < NALGO; a++)
		self->fd[a] = -1;
	close(kc_open(_metadata));
	rnd_state = seed;
	for (a = 0; a < NALGO; a++) {
		static const __u32 chunks[] = { 4096, 16384, 65536 };
		struct kcoll_comm_create cc = { .size = sizeof(cc) };

		ASSERT_EQ(0, cluster_get_port(&self->c, PORT_OFF + a));
		self->fd[a] = open(KC_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->fd[a]);
		cc.rank = self->c.rank;
		cc.nranks = self->c.nranks;
		cc.ranks = (uintptr_t)self->c.ranks;
		cc.rank_size = sizeof(struct kcoll_rank);
		cc.eventfd = -1;
		cc.algo = (uintptr_t)algos[a];
		cc.timeout_ms = 60000;
		cc.connect_timeout_ms = 60000;
		cc.chunk_bytes = chunks[rnd_below(3)];
		cc.slots = 1u << rnd_below(4);
		ASSERT_EQ(0, ioctl(self->fd[a], KCOLL_IOC_COMM_CREATE, &cc))
			TH_LOG("create \"%s\": %s", algos[a], strerror(errno));
	}
}

FIXTURE_TEARDOWN(soak)
{
	unsigned int a;

	for (a = 0; a < NALGO; a++)
		if (self->fd[a] >= 0)
			close(self->fd[a]);
}

TEST_F_TIMEOUT(soak, random_operations_exact, 7200)
{
	__u64 seed = env_u64("KCOLL_SOAK_SEED", 1);
	unsigned int nops = env_u32("KCOLL_SOAK_OPS", 300);
	size_t maxn = env_u32("KCOLL_SOAK_MAX_COUNT", 1 << 15);
	unsigned int p = self->c.nranks, me = self->c.rank, k;
	unsigned long refused = 0, wrong = 0, done = 0;
	unsigned long per_op[KCOLL_OP_COUNT] = { 0 }, per_algo[NALGO] = { 0 };
	double bytes = 0, t0;
	struct timespec ts;

	ASSERT_GE(8, p);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	say("# soak: seed %llu, %u operations, up to %zu elements, %u ranks\n",
	       (unsigned long long)seed, nops, maxn, p);
	/* The set-up drew 2 values per communicator; draw on from there. */
	for (k = 0; k < nops; k++) {
		struct soak_op o;
		struct kcoll_submit s;
		struct kcoll_completion cpl;
		unsigned int esz, fdi;
		size_t sbytes, rbytes, i;
		void *sb, *rb;
		__u64 bad = 0;
		int fd, st;

		draw(&o, seed, k, p, me, maxn);
		fd = self->fd[o.comm];
		esz = kc_dt_size[o.dt];
		sbytes = o.sn * esz;
		rbytes = o.rn * esz;
		/* In place: one buffer, the send part where NCCL puts it. */
		sb = map_buf(sbytes > rbytes ? sbytes : rbytes);
		rb = o.inplace ? sb : map_buf(rbytes);
		ASSERT_NE(NULL, sb);
		ASSERT_NE(NULL, rb);
		for (i = 0; i < o.rn; i++)
			kc_put(rb, i, o.dt, 77);
		memset(&s, 0, sizeof(s));
		s.op = o.op;
		s.dtype = o.dt;
		s.redop = o.ro;
		s.root = o.root;
		s.count = o.n;
		s.cookie = k;
		s.scounts = (uintptr_t)o.cnt[0];
		s.sdispls = (uintptr_t)o.cnt[1];
		s.rcounts = (uintptr_t)o.cnt[2];
		s.rdispls = (uintptr_t)o.cnt[3];
		{
			size_t soff = 0;	/* send offset inside rb when in place */

			if (o.inplace && o.op == KCOLL_OP_ALLGATHER)
				soff = me * o.n * esz;
			if (o.inplace && o.op == KCOLL_OP_REDUCESCATTER)
				soff = 0;	/* recv = send + me * n: below */
			for (i = 0; i < o.sn; i++)
				kc_put((char *)sb + soff, i, o.dt, give(&o, p, me, i));
			s.send.addr = (uintptr_t)sb + soff;
			s.recv.addr = (uintptr_t)rb;
			if (o.inplace && o.op == KCOLL_OP_REDUCESCATTER)
				s.recv.addr = (uintptr_t)sb + me * o.n * esz;
			if (o.reg && sbytes && rbytes) {
				size_t len = o.inplace ? (sbytes > rbytes ? sbytes : rbytes) :
							 sbytes;
				__u64 h = reg_buf(fd, sb, len);

				ASSERT_NE(0, h) TH_LOG("register: %s", strerror(errno));
				s.send.addr -= (uintptr_t)sb;
				s.send.handle = h;
				if (o.inplace) {
					s.recv.addr -= (uintptr_t)sb;
					s.recv.handle = h;
				} else {
					s.recv.handle = reg_buf(fd, rb, rbytes);
					ASSERT_NE(0, s.recv.handle);
					s.recv.addr = 0;
				}
			}
		}
		if (submit(fd, &s)) {
			ASSERT_EQ(EOPNOTSUPP, errno)
				TH_LOG("op %u (%s %s %s n %zu, %s): %s", k, op_name[o.op],
				       kc_dt_name[o.dt], kc_redop_name[o.ro], o.n,
				       algos[o.comm], strerror(errno));
			refused++;
		} else {
			st = wait_one(fd, &cpl);
			ASSERT_EQ(0, st) TH_LOG("op %u (%s %s %s n %zu root %u, %s) ended %d",
						k, op_name[o.op], kc_dt_name[o.dt],
						kc_redop_name[o.ro], o.n, o.root,
						algos[o.comm], st);
			ASSERT_EQ(k, cpl.cookie);
			bytes += cpl.bytes;
			done++;
			per_op[o.op]++;
			per_algo[o.comm]++;
			{
				const void *res = (o.inplace && o.op == KCOLL_OP_REDUCESCATTER) ?
					(const char *)sb + me * o.n * esz : rb;

				for (i = 0; i < o.rn; i++) {
					double w = want(&o, p, me, i), g = kc_get(res, i, o.dt);

					if (isnan(w) || g == w)
						continue;
					if (bad++ < 3)
						TH_LOG("op %u (%s %s %s n %zu root %u %s%s, %s): element %zu is %g, expected %g",
						       k, op_name[o.op], kc_dt_name[o.dt],
						       kc_redop_name[o.ro], o.n, o.root,
						       o.inplace ? "in place" : "out of place",
						       o.reg ? " registered" : "", algos[o.comm],
						       i, g, w);
				}
			}
		}
		wrong += bad;
		/* Registrations go with their file's deregistration. */
		for (fdi = 0; s.send.handle && fdi < 2; fdi++) {
			struct kcoll_mem_dereg dr = { .size = sizeof(dr) };

			dr.handle = fdi ? s.recv.handle : s.send.handle;
			if (fdi && s.recv.handle == s.send.handle)
				break;
			EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr));
		}
		munmap(sb, sbytes > rbytes ? sbytes : rbytes ? rbytes : 1);
		if (!o.inplace)
			munmap(rb, rbytes ? rbytes : 1);
		if (wrong)
			break;
		if ((k + 1) % 1000 == 0)
			say("# soak: %u operations, %lu refused, %lu wrong elements\n",
			       k + 1, refused, wrong);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	say("# soak: seed %llu: %lu run, %lu refused (EOPNOTSUPP), %lu wrong elements, %.1f MB moved, %.1f s\n",
	       (unsigned long long)seed, done, refused, wrong, bytes / 1e6,
	       ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	for (k = 0; k < KCOLL_OP_COUNT; k++)
		say("#   %-13s %lu\n", op_name[k], per_op[k]);
	for (k = 0; k < NALGO; k++)
		say("#   %-30s %lu\n", algos[k], per_algo[k]);
	EXPECT_EQ(0, wrong);
	EXPECT_LT(refused, nops);		/* most ran: not a suite of refusals */
}

KC_HARNESS_MAIN
