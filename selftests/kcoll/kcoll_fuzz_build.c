// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: one builder per command.
 *
 * Each builder first makes an argument the kernel should accept, from
 * what the epoch knows (the file's communicator, its registrations, the
 * memory regions): valid operations, element types, roots, counts that
 * fit the buffers, NCCL's in-place layouts, AlltoAllv arrays, short
 * waits.  fz_emit() then mutates a share of them through the field table.
 * A few bounds stay after mutation so a call cannot block for long: a
 * multi-rank COMM_CREATE always carries a connect timeout of at most
 * 100 ms in bytes the kernel reads.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kcoll_fuzz.h"

/* Share of builds that get mutated fields, per 1000. */
#define FZ_MUTATE_PM	250

unsigned int fz_pick_bucket(struct fz_rng *r)
{
	/* Weights per command, then the bad numbers, out of 100. */
	static const unsigned int w[FZ_NBUCKETS] = {
		[FZ_INFO] = 5, [FZ_CREATE] = 7, [FZ_REG] = 12, [FZ_DEREG] = 8,
		[FZ_SUBMIT] = 33, [FZ_REAP] = 21, [FZ_ABORT] = 2, [FZ_FAULT] = 1, [FZ_PEERS] = 1,
		[FZ_BADCMD] = 10,
	};
	unsigned int x = (unsigned int)fz_below(r, 100), i;

	for (i = 0; i < FZ_NBUCKETS - 1 && x >= w[i]; i++)
		x -= w[i];
	return i;
}

size_t fz_dtype_size(uint32_t dt)
{
	static const unsigned char sz[KCOLL_DTYPE_COUNT] = {
		[KCOLL_INT8] = 1, [KCOLL_UINT8] = 1, [KCOLL_INT16] = 2, [KCOLL_UINT16] = 2,
		[KCOLL_INT32] = 4, [KCOLL_UINT32] = 4, [KCOLL_INT64] = 8, [KCOLL_UINT64] = 8,
		[KCOLL_FP16] = 2, [KCOLL_BF16] = 2, [KCOLL_FP32] = 4, [KCOLL_FP64] = 8,
	};

	return dt < KCOLL_DTYPE_COUNT ? sz[dt] : 0;
}

/* A rank table of @n entries on this node's address, ports @port + i. */
size_t fz_rank_table(struct fz_thread *t, struct kcoll_rank *r, unsigned int n,
		     unsigned int port)
{
	const char *ip = t->ep->cfg->ip[0] ? t->ep->cfg->ip : "127.0.0.1";
	unsigned int i;

	memset(r, 0, n * sizeof(*r));
	for (i = 0; i < n; i++) {
		r[i].family = KCOLL_AF_INET;
		inet_pton(AF_INET, ip, r[i].addr);
		r[i].port = port + i;
	}
	return n * sizeof(*r);
}

/*
 * The file the call goes to: a slot's file mostly, sometimes the
 * driver's (inherited: EPERM), or a descriptor that is not /dev/kcoll.
 */
static void fz_target(struct fz_thread *t, struct fz_call *c)
{
	struct fz_epoch *ep = t->ep;
	unsigned int x = (unsigned int)fz_below(&t->rng, 1000);

	c->slot = -1;
	c->nranks = 1;
	if (x < 940) {
		c->fd = fz_slot_fd(t, &c->slot);
		if (c->slot >= 0 && atomic_load(&ep->files[c->slot].nranks) > 0)
			c->nranks = atomic_load(&ep->files[c->slot].nranks);
	} else if (x < 970 && ep->cfg->parent_fd >= 0) {
		c->fd = ep->cfg->parent_fd;
		c->inherited = true;
	} else {
		c->fd = (int)FZ_PICK(&t->rng, ep->efd[0], ep->pipefd[0], ep->nullfd,
				     ep->closedfd, -1, 0);
	}
}

static int fz_slot_rank(struct fz_thread *t, const struct fz_call *c)
{
	return c->slot >= 0 ? atomic_load(&t->ep->files[c->slot].rank) : 0;
}

static void fz_build_info(struct fz_thread *t, struct fz_call *c)
{
	struct kcoll_info v = { .size = sizeof(v) };

	fz_emit(t, c, &fz_cmds[FZ_INFO], &v, FZ_MUTATE_PM);
}

static const char *const fz_algos[] = {
	"level0:ring", "level0:mesh", "level0:NA;level1:ring", "level0:NA;level1:H-D_R",
	"level0:NHR", "level0:NB", "level0:pairwise", "level0:tree", "level0:fullmesh",
	"AllReduce=level0:ring/AllGather=level0:mesh", "level0:NA;level1:pipeline",
	"level0:NA;level1:AHC", "level0:NA;level1:AHC_BROKE", "level0:pipeline",
	"", "level9:ring", "level0:", "level0:nonsense", ";;;", "AllReduce=", "=/=/",
	"level0:ring;level0:ring;level0:ring", "AllReduce=level0:NA;level1:ring/Bogus=x",
};

/* An algorithm string in the arrays area (second page). */
static uint64_t fz_algo_string(struct fz_thread *t)
{
	char *s = (char *)t->arr + FZ_PAGE;
	size_t n;

	if (fz_permille(&t->rng, 100)) {
		/* Longer than KCOLL_ALGO_STR_MAX, or exactly its limit. */
		n = FZ_PICK(&t->rng, KCOLL_ALGO_STR_MAX - 1, KCOLL_ALGO_STR_MAX,
			    KCOLL_ALGO_STR_MAX + 1, FZ_PAGE - 1);
		memset(s, 'a', n);
		s[n] = 0;
	} else {
		snprintf(s, FZ_PAGE, "%s",
			 fz_algos[fz_below(&t->rng, sizeof(fz_algos) / sizeof(fz_algos[0]))]);
	}
	return (uintptr_t)s;
}

static void fz_build_create(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	struct kcoll_comm_create v = {
		.size = sizeof(v), .nranks = 1, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1,
	};
	struct kcoll_rank *rt = (struct kcoll_rank *)t->arr;
	unsigned int n = 1, port = (unsigned int)fz_range(r, 1, 65535);

	if (fz_permille(r, 15)) {
		/* Several ranks on this node: nobody answers, or a port is taken. */
		n = (unsigned int)fz_range(r, 2, 3);
		port = t->ep->cfg->port_base + FZ_PORT_SPAN / 2 +
		       (unsigned int)fz_below(r, FZ_PORT_SPAN / 2 - 3);
		v.rank = (uint32_t)fz_below(r, n);
		v.connect_timeout_ms = (uint32_t)fz_range(r, 10, 100);
	}
	fz_rank_table(t, rt, n, port);
	if (n == 1 && fz_permille(r, 700))
		inet_pton(AF_INET, "127.0.0.1", rt[0].addr);
	if (n == 1 && fz_permille(r, 100)) {
		rt[0].family = KCOLL_AF_INET6;
		inet_pton(AF_INET6, fz_permille(r, 500) ? "::1" : "fe80::1", rt[0].addr);
	}
	if (n == 1 && fz_permille(r, 50)) {
		/* A caller whose struct kcoll_rank is larger: zero tail. */
		memset(rt + 1, 0, sizeof(*rt));
		v.rank_size = 2 * sizeof(*rt);
	}
	v.nranks = n;
	v.ranks = (uintptr_t)rt;
	if (fz_permille(r, 600))
		v.eventfd = t->ep->efd[fz_below(r, FZ_NEFD)];
	if (fz_permille(r, 300))
		v.algo = fz_algo_string(t);
	if (fz_permille(r, 500))
		v.timeout_ms = (uint32_t)FZ_PICK(r, 10, 100, 1000, 60000);
	if (fz_permille(r, 300))
		v.chunk_bytes = (uint32_t)FZ_PICK(r, 4096, 8192, 65536, 30 * 4096);	/* the largest */
	if (fz_permille(r, 300))
		v.slots = (uint32_t)fz_range(r, 1, 64);
	fz_emit(t, c, &fz_cmds[FZ_CREATE], &v, FZ_MUTATE_PM);

	/* Bound the time a multi-rank creation may wait for its peers. */
	if (FZ_GET(c, t, kcoll_comm_create, nranks) > 1) {
		uint64_t cto = FZ_GET(c, t, kcoll_comm_create, connect_timeout_ms);

		if ((cto < 10 || cto > 100) &&
		    !FZ_SET(c, t, kcoll_comm_create, connect_timeout_ms, fz_range(r, 10, 100)))
			FZ_SET(c, t, kcoll_comm_create, nranks, 1);
	}
}

static void fz_build_reg(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	const struct fz_mem *m = &t->ep->mem;
	struct kcoll_mem_reg v = { .size = sizeof(v) };
	unsigned int x = (unsigned int)fz_below(r, 100);
	uint64_t len = fz_permille(r, 800) ? fz_range(r, 1, 65536) : fz_range(r, 1, m->pool_len);

	if (x < 70) {
		v.addr = fz_ptr(r, m, fz_permille(r, 900) ? FZ_P_POOL : FZ_P_POOL_ODD, len, NULL);
	} else if (x < 80) {
		len = fz_range(r, 1, m->shm_len);
		v.addr = fz_ptr(r, m, FZ_P_SHM, len, NULL);
	} else if (x < 90) {
		len = fz_range(r, 1, m->chaos_len);
		v.addr = fz_ptr(r, m, FZ_P_CHAOS, len, NULL);
	} else if (x < 95) {
		len = fz_range(r, 1, FZ_PAGE);
		v.addr = fz_ptr(r, m, FZ_P_RDONLY, len, NULL);
		v.flags = FZ_REG_FLAGS;		/* read-only registrations, once they exist */
	} else {
		len = fz_range(r, 1, 2 * FZ_PAGE);
		v.addr = fz_ptr(r, m, FZ_P_EDGE, len, NULL);
	}
	v.len = len;
	fz_emit(t, c, &fz_cmds[FZ_REG], &v, FZ_MUTATE_PM);
}

static void fz_build_dereg(struct fz_thread *t, struct fz_call *c)
{
	struct kcoll_mem_dereg v = { .size = sizeof(v) };

	v.handle = fz_handle_value(t, c->slot);
	fz_emit(t, c, &fz_cmds[FZ_DEREG], &v, FZ_MUTATE_PM);
}

static void fz_build_abort(struct fz_thread *t, struct fz_call *c)
{
	struct kcoll_abort v = { .size = sizeof(v) };

	fz_emit(t, c, &fz_cmds[FZ_ABORT], &v, FZ_MUTATE_PM);
}

static void fz_build_fault(struct fz_thread *t, struct fz_call *c)
{
	struct kcoll_fault v = { .size = sizeof(v) };

	fz_emit(t, c, &fz_cmds[FZ_FAULT], &v, FZ_MUTATE_PM);
}

static void fz_build_peers(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	struct kcoll_peers v = { .size = sizeof(v), .fates = (uintptr_t)t->arr };

	/* Mostly room for any communicator, sometimes too little. */
	v.nranks = (uint32_t)(fz_permille(r, 800) ? 64 : fz_below(r, 4));
	fz_emit(t, c, &fz_cmds[FZ_PEERS], &v, FZ_MUTATE_PM);
}

/* Bytes this rank sends and receives: kc_op_buf_bytes() of algo/kc_coll.c. */
void fz_op_bytes(uint32_t op, uint64_t n, unsigned int nranks, bool root,
		 uint64_t *sb, uint64_t *rb)
{
	uint64_t all = n * nranks;

	*sb = n;
	*rb = n;
	switch (op) {
	case KCOLL_OP_REDUCESCATTER:
		*sb = all;
		break;
	case KCOLL_OP_ALLGATHER:
		*rb = all;
		break;
	case KCOLL_OP_BROADCAST:
		*sb = root ? n : 0;
		break;
	case KCOLL_OP_REDUCE:
		*rb = root ? n : 0;
		break;
	case KCOLL_OP_SCATTER:
		*sb = root ? all : 0;
		break;
	case KCOLL_OP_GATHER:
		*rb = root ? all : 0;
		break;
	case KCOLL_OP_ALLTOALL:
	case KCOLL_OP_ALLTOALLV:
		*sb = all;
		*rb = all;
		break;
	case KCOLL_OP_BARRIER:
		*sb = 0;
		*rb = 0;
		break;
	}
}

/* AlltoAllv arrays in the arrays area: even counts, or boundary values. */
static void fz_a2av(struct fz_thread *t, struct kcoll_submit *v, unsigned int nranks)
{
	uint64_t *a = (uint64_t *)(t->arr + FZ_PAGE + FZ_PAGE / 2);
	unsigned int i, k;

	for (i = 0; i < nranks; i++) {
		a[i] = v->count;			/* scounts */
		a[nranks + i] = i * v->count;		/* sdispls */
		a[2 * nranks + i] = v->count;		/* rcounts */
		a[3 * nranks + i] = i * v->count;	/* rdispls */
	}
	if (fz_permille(&t->rng, 150)) {
		k = (unsigned int)fz_below(&t->rng, 4 * nranks);
		a[k] = fz_int(&t->rng, 8);
	}
	v->scounts = (uintptr_t)a;
	v->sdispls = (uintptr_t)(a + nranks);
	v->rcounts = (uintptr_t)(a + 2 * nranks);
	v->rdispls = (uintptr_t)(a + 3 * nranks);
}

/* Send and receive buffers: plain, registered or mixed, apart or in place. */
static void fz_bufs(struct fz_thread *t, struct fz_call *c, struct kcoll_submit *v,
		    uint64_t n, uint64_t sb, uint64_t rb, unsigned int rank)
{
	struct fz_rng *r = &t->rng;
	const struct fz_mem *m = &t->ep->mem;
	bool inplace = fz_permille(r, 250) && v->op != KCOLL_OP_BARRIER;
	uint64_t sz, base, s_off = 0, r_off;
	struct fz_handle *h = NULL;

	/* Where the receive buffer starts relative to the send buffer. */
	if (inplace) {
		switch (v->op) {
		case KCOLL_OP_REDUCESCATTER:
		case KCOLL_OP_SCATTER:
			r_off = rank * n;
			break;
		case KCOLL_OP_ALLGATHER:
		case KCOLL_OP_GATHER:
			s_off = rank * n;
			r_off = 0;
			break;
		default:
			r_off = 0;
			break;
		}
	} else {
		r_off = (sb + 63) & ~63ULL;
	}
	sz = s_off + sb > r_off + rb ? s_off + sb : r_off + rb;
	if (fz_permille(r, 350))
		h = fz_handle_find(t, c->slot, sz);
	if (h) {
		uint64_t hl = atomic_load(&h->len);

		base = fz_below(r, (hl - sz) / 8 + 1) * 8;
		v->send.handle = atomic_load(&h->h);
		v->recv.handle = v->send.handle;
		v->send.addr = base + s_off;
		v->recv.addr = base + r_off;
		if (!inplace && fz_permille(r, 300)) {
			/* Mixed: a plain receive buffer. */
			v->recv.handle = 0;
			v->recv.addr = fz_ptr(r, m, FZ_P_POOL, rb, NULL);
		}
		return;
	}
	if (fz_permille(r, 80)) {
		base = fz_ptr(r, m, FZ_P_SHM, sz, NULL);
	} else if (fz_permille(r, 80)) {
		base = fz_ptr(r, m, FZ_P_CHAOS, sz, NULL);
	} else {
		base = fz_ptr(r, m, fz_permille(r, 900) ? FZ_P_POOL : FZ_P_POOL_ODD, sz, NULL);
	}
	v->send.addr = base + s_off;
	v->recv.addr = base + r_off;
	if (!sb && fz_permille(r, 500))
		v->send.addr = 0;
	if (!rb && fz_permille(r, 500))
		v->recv.addr = 0;
}

static void fz_build_submit(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	struct kcoll_submit v = { .size = sizeof(v) };
	unsigned int nranks = c->nranks > 0 ? (unsigned int)c->nranks : 1;
	unsigned int rank = (unsigned int)fz_slot_rank(t, c), x;
	uint64_t n, sb, rb;

	if (rank >= nranks)
		rank = 0;
	v.op = (uint32_t)fz_below(r, KCOLL_OP_COUNT);
	v.dtype = (uint32_t)fz_below(r, KCOLL_DTYPE_COUNT);
	v.redop = (uint32_t)fz_below(r, KCOLL_REDOP_COUNT);
	v.root = (uint32_t)fz_below(r, nranks);
	x = (unsigned int)fz_below(r, 100);
	v.count = x < 70 ? fz_range(r, 1, 64) : x < 92 ? fz_range(r, 65, 4096) :
		  x < 97 ? 0 : fz_range(r, 4097, 32768);
	n = v.count * fz_dtype_size(v.dtype);
	fz_op_bytes(v.op, n, nranks, rank == v.root, &sb, &rb);
	if (v.op == KCOLL_OP_ALLTOALLV)
		fz_a2av(t, &v, nranks);
	fz_bufs(t, c, &v, n, sb, rb, rank);
	v.cookie = fz_rand(r);
	fz_emit(t, c, &fz_cmds[FZ_SUBMIT], &v, FZ_MUTATE_PM);
}

static void fz_build_reap(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	struct kcoll_reap v = {
		.size = sizeof(v), .entries = (uintptr_t)t->arr,
		.entry_size = sizeof(struct kcoll_completion),
	};

	v.max = (uint32_t)(fz_permille(r, 900) ? fz_range(r, 1, 64) : FZ_PICK(r, 1, 256, 1000));
	if (fz_permille(r, 100)) {
		v.entry_size = (uint32_t)FZ_PICK(r, 56, 64, 128, 4096);
		if (v.entry_size == 4096)
			v.max = (uint32_t)fz_range(r, 1, 2);
	}
	if (fz_permille(r, 300)) {
		v.flags = KCOLL_REAP_WAIT;
		v.timeout_ms = (uint32_t)(fz_permille(r, 850) ? fz_range(r, 1, 20) :
					  fz_permille(r, 600) ? 0 : fz_range(r, 100, 1000));
	}
	fz_emit(t, c, &fz_cmds[FZ_REAP], &v, FZ_MUTATE_PM);
}

/*
 * Ioctl types the VFS handles itself before the driver (FIOCLEX 'T',
 * FIFREEZE 'X', FS_IOC_* 'f' and 'v', FICLONE 0x94, FIBMAP/FIGETBSZ 0,
 * block 0x12, FS_IOC_GETFSUUID 0x15): a wrong type is never one of these.
 */
static bool fz_vfs_type(unsigned int type)
{
	return type == 0 || type == 0x12 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 'v' || type == 0x94;
}

/* A request the driver must refuse with ENOTTY: wrong direction, type or number. */
static void fz_build_bad(struct fz_thread *t, struct fz_call *c)
{
	struct fz_rng *r = &t->rng;
	unsigned int dir = _IOC_READ | _IOC_WRITE, type = KCOLL_IOC_MAGIC, i;
	unsigned int nr = (unsigned int)fz_below(r, FZ_NCMDS);
	unsigned int size = (unsigned int)fz_below(r, 1u << _IOC_SIZEBITS);

	switch (fz_below(r, 4)) {
	case 0:
		dir = (unsigned int)FZ_PICK(r, _IOC_NONE, _IOC_READ, _IOC_WRITE);
		break;
	case 1:
		do
			type = (unsigned int)fz_below(r, 256);
		while (type == KCOLL_IOC_MAGIC || fz_vfs_type(type));
		break;
	case 2:
		nr = (unsigned int)fz_range(r, FZ_NCMDS, 255);
		break;
	default:
		dir = (unsigned int)fz_below(r, 4);
		do
			type = (unsigned int)fz_below(r, 256);
		while (fz_vfs_type(type));
		nr = (unsigned int)fz_below(r, 256);
		if (type == KCOLL_IOC_MAGIC && dir == (_IOC_READ | _IOC_WRITE) && nr < FZ_NCMDS)
			nr += FZ_NCMDS;
		break;
	}
	c->req = _IOC(dir, type, nr, size);
	c->arg = t->st;
	for (i = 0; i < 64; i += 8) {
		uint64_t w = fz_int(r, 8);

		memcpy(c->arg + i, &w, 8);
	}
	c->size = (uint32_t)FZ_PICK(r, 8, 64, 4096, 0);
	memcpy(c->arg, &c->size, 4);
	if (fz_permille(r, 200))
		c->arg = (uint8_t *)(uintptr_t)fz_ptr_any(r, &t->ep->mem, 64, t->st);
}

void fz_build(struct fz_thread *t, struct fz_call *c, unsigned int bucket)
{
	memset(c, 0, sizeof(*c));
	c->bucket = bucket;
	fz_target(t, c);
	if (bucket < FZ_NCMDS)
		c->req = fz_cmds[bucket].nr;
	switch (bucket) {
	case FZ_INFO:
		fz_build_info(t, c);
		break;
	case FZ_CREATE:
		fz_build_create(t, c);
		break;
	case FZ_REG:
		fz_build_reg(t, c);
		break;
	case FZ_DEREG:
		fz_build_dereg(t, c);
		break;
	case FZ_SUBMIT:
		fz_build_submit(t, c);
		break;
	case FZ_REAP:
		fz_build_reap(t, c);
		break;
	case FZ_ABORT:
		fz_build_abort(t, c);
		break;
	case FZ_FAULT:
		fz_build_fault(t, c);
		break;
	case FZ_PEERS:
		fz_build_peers(t, c);
		break;
	default:
		fz_build_bad(t, c);
		return;
	}
	/* The kernel dispatches on the number alone: any size bits still reach it. */
	if (fz_permille(&t->rng, 60))
		c->req = _IOC(_IOC_READ | _IOC_WRITE, KCOLL_IOC_MAGIC, _IOC_NR(c->req),
			      fz_below(&t->rng, 1u << _IOC_SIZEBITS));
	/* The argument pointer itself: NULL, unmapped, kernel, read-only... */
	if (fz_permille(&t->rng, 30)) {
		c->arg = (uint8_t *)(uintptr_t)fz_ptr_any(&t->rng, &t->ep->mem, c->size, t->st);
		c->wellformed = false;
	}
}
