// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: operations, requests and completion.  Arguments are checked
 * here (so a mistake gets a message naming the argument before any
 * ioctl); the module checks everything again and does the work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

#include "coll_fault.h"
#include "coll_internal.h"

/* ------------------------------------------------------------ names */

static const size_t dtype_size[COLL_DTYPE_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8 };
static const char *const dtype_name[COLL_DTYPE_COUNT] = {
	"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
	"half", "bfloat16", "float", "double",
};
static const char *const redop_name[COLL_REDOP_COUNT] = { "sum", "prod", "max", "min", "avg" };
static const char *const op_name[COLL_OP_COUNT] = {
	"allreduce", "reducescatter", "allgather", "broadcast", "reduce", "scatter",
	"gather", "alltoall", "alltoallv", "barrier",
};

size_t coll_dtype_size(coll_dtype_t t)
{
	return (unsigned)t < COLL_DTYPE_COUNT ? dtype_size[t] : 0;
}

const char *coll_dtype_name(coll_dtype_t t)
{
	return (unsigned)t < COLL_DTYPE_COUNT ? dtype_name[t] : "?";
}

const char *coll_redop_name(coll_redop_t o)
{
	return (unsigned)o < COLL_REDOP_COUNT ? redop_name[o] : "?";
}

bool coll_op_reduces(coll_op_t o)
{
	return o == COLL_OP_ALLREDUCE || o == COLL_OP_REDUCESCATTER || o == COLL_OP_REDUCE;
}

bool coll_op_rooted(coll_op_t o)
{
	return o == COLL_OP_BROADCAST || o == COLL_OP_REDUCE || o == COLL_OP_SCATTER ||
	       o == COLL_OP_GATHER;
}

const char *coll_op_name(coll_op_t o)
{
	return (unsigned)o < COLL_OP_COUNT ? op_name[o] : "?";
}

int coll_dtype_parse(const char *s, coll_dtype_t *t)
{
	static const struct { const char *name; coll_dtype_t t; } alias[] = {
		{ "char", COLL_INT8 }, { "int", COLL_INT32 }, { "uint", COLL_UINT32 },
		{ "fp16", COLL_FLOAT16 }, { "float16", COLL_FLOAT16 }, { "bf16", COLL_BFLOAT16 },
		{ "fp32", COLL_FLOAT }, { "float32", COLL_FLOAT }, { "fp64", COLL_DOUBLE },
		{ "float64", COLL_DOUBLE },
	};
	unsigned i;

	for (i = 0; s && i < COLL_DTYPE_COUNT; i++)
		if (!strcasecmp(s, dtype_name[i])) {
			*t = i;
			return 0;
		}
	for (i = 0; s && i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcasecmp(s, alias[i].name)) {
			*t = alias[i].t;
			return 0;
		}
	return coll_seterr(-EINVAL, "unknown data type '%s' (int8 uint8 int16 uint16 int32 "
			   "uint32 int64 uint64 half bfloat16 float double)", s ? s : "(null)");
}

int coll_redop_parse(const char *s, coll_redop_t *o)
{
	unsigned i;

	for (i = 0; s && i < COLL_REDOP_COUNT; i++)
		if (!strcasecmp(s, redop_name[i])) {
			*o = i;
			return 0;
		}
	return coll_seterr(-EINVAL, "unknown reduction '%s' (sum prod max min avg)",
			   s ? s : "(null)");
}

int coll_op_parse(const char *s, coll_op_t *o)
{
	char buf[32];
	size_t i, j;

	/* "all_reduce", "AllReduce", "all_reduce_perf" all name allreduce. */
	for (i = j = 0; s && s[i] && j < sizeof(buf) - 1; i++)
		if (s[i] != '_' && s[i] != '-')
			buf[j++] = s[i];
	buf[j] = '\0';
	if (j > 4 && !strcasecmp(buf + j - 4, "perf"))
		buf[j - 4] = '\0';
	for (i = 0; s && i < COLL_OP_COUNT; i++)
		if (!strcasecmp(buf, op_name[i])) {
			*o = i;
			return 0;
		}
	if (s && !strcasecmp(buf, "bcast")) {
		*o = COLL_OP_BROADCAST;
		return 0;
	}
	return coll_seterr(-EINVAL, "unknown operation '%s' (allreduce reducescatter allgather "
			   "broadcast reduce scatter gather alltoall alltoallv barrier)",
			   s ? s : "(null)");
}

/* --------------------------------------------------------- completion */

static void req_unlink(struct coll_request *r)
{
	r->prev->next = r->next;
	r->next->prev = r->prev;
	r->next = r->prev = r;
	r->comm->npending--;
}

/* Collect completions; @wait: block for at least one.  0 or -errno. */
static int coll_reap(coll_comm_t *c, bool wait)
{
	struct kcoll_completion e[16];
	struct kcoll_reap rp;
	struct coll_request *r;
	uint32_t i;
	int ret;

	for (;;) {
		memset(&rp, 0, sizeof(rp));
		rp.size = sizeof(rp);
		rp.flags = wait ? KCOLL_REAP_WAIT : 0;
		rp.entries = (uintptr_t)e;
		rp.max = 16;
		rp.entry_size = sizeof(e[0]);
		ret = ioctl(c->fd, KCOLL_IOC_REAP, &rp);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return coll_seterr(-errno, "waiting for completions failed: %s",
					   coll_strerror(-errno));
		break;
	}
	for (i = 0; i < rp.count; i++) {
		r = (struct coll_request *)(uintptr_t)e[i].cookie;
		if (!r || r->comm != c || r->done)
			continue;	/* not ours: cannot happen */
		r->done = true;
		r->st = (struct coll_status){
			.error = e[i].status, .op_id = e[i].op_id, .bytes = e[i].bytes,
			.submit_ns = e[i].submit_ns, .complete_ns = e[i].complete_ns,
		};
		req_unlink(r);
	}
	return 0;
}

/* A rank's node, for the fault's words: its address in the rank table. */
static const char *rank_node(uint32_t rank, void *arg)
{
	const coll_comm_t *c = arg;

	return c->ranks && rank < c->nranks ? c->ranks[rank].addr : NULL;
}

/* The failure of operation @op_id, with who and why when the module knows. */
static void req_error(coll_comm_t *c, uint64_t op_id, int err)
{
	struct kcoll_fault f = { .size = sizeof(f) };
	char why[384];

	if (ioctl(c->fd, KCOLL_IOC_FAULT, &f) ||
	    !coll_fault_format(&f, c->rank, rank_node, c, NULL, why, sizeof(why))) {
		coll_seterr(err, "operation %llu failed: %s", (unsigned long long)op_id,
			    coll_strerror(err));
		return;
	}
	/* The fault says what happened: the errno's name is enough beside it. */
	if (f.op_id == op_id)
		coll_seterr(err, "operation %llu failed (%s): %s", (unsigned long long)op_id,
			    coll_errname(err), why);
	else
		coll_seterr(err, "operation %llu failed (%s); the communicator failed at operation %llu: %s",
			    (unsigned long long)op_id, coll_errname(err),
			    (unsigned long long)f.op_id, why);
}

static int req_finish(coll_request_t **req, struct coll_status *st)
{
	struct coll_request *r = *req;
	int err = r->st.error;

	if (st)
		*st = r->st;
	if (err)
		req_error(r->comm, r->st.op_id, err);
	free(r);
	*req = NULL;
	return err;
}

int coll_test(coll_request_t **req, int *done, struct coll_status *st)
{
	int ret;

	if (!req || !*req || !done)
		return coll_seterr(-EINVAL, "coll_test: NULL request or done pointer");
	*done = 0;
	if (!(*req)->done) {
		ret = coll_reap((*req)->comm, false);
		if (ret)
			return ret;
		if (!(*req)->done)
			return 0;
	}
	*done = 1;
	return req_finish(req, st);
}

int coll_wait(coll_request_t **req, struct coll_status *st)
{
	int ret;

	if (!req || !*req)
		return coll_seterr(-EINVAL, "coll_wait: NULL request");
	while (!(*req)->done) {
		ret = coll_reap((*req)->comm, true);
		if (ret == -ENOENT)
			return coll_seterr(-EIO, "coll_wait: the module has nothing outstanding "
					   "but the request did not complete");
		if (ret)
			return ret;
	}
	return req_finish(req, st);
}

int coll_wait_all(coll_request_t **reqs, size_t n, struct coll_status *st)
{
	int ret, first = 0;
	size_t i;

	if (n && !reqs)
		return coll_seterr(-EINVAL, "coll_wait_all: NULL request array");
	for (i = 0; i < n; i++) {
		if (!reqs[i]) {
			if (st)
				memset(&st[i], 0, sizeof(st[i]));
			continue;
		}
		ret = coll_wait(&reqs[i], st ? &st[i] : NULL);
		if (ret && !first)
			first = ret;
	}
	return first;
}

/* ---------------------------------------------------------- submission */

struct coll_args {
	const char *fn;
	coll_op_t op;
	coll_dtype_t dtype;
	coll_redop_t redop;
	uint32_t root;
	size_t count;
	const void *send;
	void *recv;
	size_t send_elems, recv_elems;	/* elements this rank's buffers hold */
	const uint64_t *v[4];		/* alltoallv arrays */
};

static int coll_buf(const coll_comm_t *c, const void *p, size_t bytes, struct kcoll_buf *b)
{
	uintptr_t a = (uintptr_t)p;
	const struct coll_mr *m;

	b->handle = 0;
	b->addr = a;
	for (m = c->mrs; m && bytes; m = m->next)
		if (a >= m->addr && a - m->addr <= m->len && bytes <= m->len - (a - m->addr)) {
			b->handle = m->handle;
			b->addr = a - m->addr;
			break;
		}
	return 0;
}

static bool mul_overflows(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

static int coll_submit(coll_comm_t *c, struct coll_args *a, coll_request_t **req)
{
	struct kcoll_submit s;
	struct coll_request *r;
	size_t es, sb, rb, n;
	bool rooted, is_root;
	int ret;

	if (!req)
		return coll_seterr(-EINVAL, "%s: request pointer is NULL", a->fn);
	*req = NULL;
	if (!c)
		return coll_seterr(-EINVAL, "%s: communicator is NULL", a->fn);
	n = c->nranks;
	if (a->op != COLL_OP_BARRIER && (unsigned)a->dtype >= COLL_DTYPE_COUNT)
		return coll_seterr(-EINVAL, "%s: data type %d out of range 0..%d", a->fn,
				   (int)a->dtype, COLL_DTYPE_COUNT - 1);
	if (coll_op_reduces(a->op) && (unsigned)a->redop >= COLL_REDOP_COUNT)
		return coll_seterr(-EINVAL, "%s: reduction %d out of range 0..%d", a->fn,
				   (int)a->redop, COLL_REDOP_COUNT - 1);
	rooted = coll_op_rooted(a->op);
	if (rooted && a->root >= n)
		return coll_seterr(-EINVAL, "%s: root %u out of range for %zu ranks", a->fn,
				   a->root, n);
	is_root = rooted && a->root == c->rank;
	es = a->op == COLL_OP_BARRIER ? 1 : coll_dtype_size(a->dtype);
	if (a->op == COLL_OP_ALLTOALLV) {
		for (size_t i = 0; i < 4; i++)
			if (!a->v[i])
				return coll_seterr(-EINVAL, "%s: count/displacement array %zu is "
						   "NULL", a->fn, i);
		for (size_t i = 0; i < n; i++) {
			if (a->v[0][i] + a->v[1][i] < a->v[1][i] ||
			    a->v[2][i] + a->v[3][i] < a->v[3][i])
				return coll_seterr(-EOVERFLOW, "%s: count + displacement of rank "
						   "%zu overflows", a->fn, i);
			if (a->v[0][i] + a->v[1][i] > a->send_elems)
				a->send_elems = a->v[0][i] + a->v[1][i];
			if (a->v[2][i] + a->v[3][i] > a->recv_elems)
				a->recv_elems = a->v[2][i] + a->v[3][i];
		}
	}
	if (mul_overflows(a->send_elems, es, &sb) || mul_overflows(a->recv_elems, es, &rb))
		return coll_seterr(-EOVERFLOW, "%s: %zu elements of %zu bytes overflow", a->fn,
				   a->count, es);
	/* Buffers this rank uses must be given. */
	if (sb && !a->send && !(rooted && !is_root && a->op == COLL_OP_BROADCAST) &&
	    !(a->op == COLL_OP_SCATTER && !is_root))
		return coll_seterr(-EINVAL, "%s: send buffer is NULL for %zu bytes", a->fn, sb);
	if (rb && !a->recv && !(a->op == COLL_OP_REDUCE && !is_root) &&
	    !(a->op == COLL_OP_GATHER && !is_root))
		return coll_seterr(-EINVAL, "%s: receive buffer is NULL for %zu bytes", a->fn, rb);

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.op = a->op;
	s.dtype = a->op == COLL_OP_BARRIER ? 0 : a->dtype;
	s.redop = (a->op == COLL_OP_ALLREDUCE || a->op == COLL_OP_REDUCESCATTER ||
		   a->op == COLL_OP_REDUCE) ? a->redop : 0;
	s.root = rooted ? a->root : 0;
	s.count = a->count;
	coll_buf(c, a->send, sb, &s.send);
	coll_buf(c, a->recv, rb, &s.recv);
	if (a->op == COLL_OP_ALLTOALLV) {
		s.scounts = (uintptr_t)a->v[0];
		s.sdispls = (uintptr_t)a->v[1];
		s.rcounts = (uintptr_t)a->v[2];
		s.rdispls = (uintptr_t)a->v[3];
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return coll_seterr(-ENOMEM, "%s: out of memory", a->fn);
	r->comm = c;
	s.cookie = (uintptr_t)r;
	for (;;) {
		ret = ioctl(c->fd, KCOLL_IOC_SUBMIT, &s);
		ret = ret < 0 ? -errno : 0;
		if (ret == -EINTR)
			continue;
		/* Too many unreaped: collect completions (waiting if needed), retry. */
		if (ret == -EAGAIN && c->npending) {
			ret = coll_reap(c, true);
			if (!ret)
				continue;
		}
		break;
	}
	if (ret) {
		free(r);
		return coll_seterr(ret, "%s: submission failed: %s", a->fn, coll_strerror(ret));
	}
	r->st.op_id = s.op_id;
	r->prev = c->pending.prev;
	r->next = &c->pending;
	c->pending.prev->next = r;
	c->pending.prev = r;
	c->npending++;
	*req = r;
	return 0;
}

#define NR(c) ((c) ? (size_t)(c)->nranks : 1)

int coll_allreduce(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		   coll_redop_t o, coll_request_t **req)
{
	struct coll_args a = { "coll_allreduce", COLL_OP_ALLREDUCE, t, o, 0, count, sb, rb,
			       count, count, { 0 } };
	return coll_submit(c, &a, req);
}

int coll_reducescatter(coll_comm_t *c, const void *sb, void *rb, size_t count,
		       coll_dtype_t t, coll_redop_t o, coll_request_t **req)
{
	struct coll_args a = { "coll_reducescatter", COLL_OP_REDUCESCATTER, t, o, 0, count,
			       sb, rb, 0, count, { 0 } };

	if (mul_overflows(count, NR(c), &a.send_elems))
		return coll_seterr(-EOVERFLOW, "coll_reducescatter: count %zu overflows", count);
	return coll_submit(c, &a, req);
}

int coll_allgather(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		   coll_request_t **req)
{
	struct coll_args a = { "coll_allgather", COLL_OP_ALLGATHER, t, 0, 0, count, sb, rb,
			       count, 0, { 0 } };

	if (mul_overflows(count, NR(c), &a.recv_elems))
		return coll_seterr(-EOVERFLOW, "coll_allgather: count %zu overflows", count);
	return coll_submit(c, &a, req);
}

int coll_broadcast(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		   uint32_t root, coll_request_t **req)
{
	struct coll_args a = { "coll_broadcast", COLL_OP_BROADCAST, t, 0, root, count, sb, rb,
			       count, count, { 0 } };
	return coll_submit(c, &a, req);
}

int coll_reduce(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		coll_redop_t o, uint32_t root, coll_request_t **req)
{
	struct coll_args a = { "coll_reduce", COLL_OP_REDUCE, t, o, root, count, sb, rb,
			       count, count, { 0 } };
	return coll_submit(c, &a, req);
}

int coll_scatter(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		 uint32_t root, coll_request_t **req)
{
	struct coll_args a = { "coll_scatter", COLL_OP_SCATTER, t, 0, root, count, sb, rb,
			       0, count, { 0 } };

	if (mul_overflows(count, NR(c), &a.send_elems))
		return coll_seterr(-EOVERFLOW, "coll_scatter: count %zu overflows", count);
	return coll_submit(c, &a, req);
}

int coll_gather(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		uint32_t root, coll_request_t **req)
{
	struct coll_args a = { "coll_gather", COLL_OP_GATHER, t, 0, root, count, sb, rb,
			       count, 0, { 0 } };

	if (mul_overflows(count, NR(c), &a.recv_elems))
		return coll_seterr(-EOVERFLOW, "coll_gather: count %zu overflows", count);
	return coll_submit(c, &a, req);
}

int coll_alltoall(coll_comm_t *c, const void *sb, void *rb, size_t count, coll_dtype_t t,
		  coll_request_t **req)
{
	struct coll_args a = { "coll_alltoall", COLL_OP_ALLTOALL, t, 0, 0, count, sb, rb,
			       0, 0, { 0 } };

	if (mul_overflows(count, NR(c), &a.send_elems))
		return coll_seterr(-EOVERFLOW, "coll_alltoall: count %zu overflows", count);
	a.recv_elems = a.send_elems;
	return coll_submit(c, &a, req);
}

int coll_alltoallv(coll_comm_t *c, const void *sb, const uint64_t *scounts,
		   const uint64_t *sdispls, void *rb, const uint64_t *rcounts,
		   const uint64_t *rdispls, coll_dtype_t t, coll_request_t **req)
{
	struct coll_args a = { "coll_alltoallv", COLL_OP_ALLTOALLV, t, 0, 0, 0, sb, rb, 0, 0,
			       { scounts, sdispls, rcounts, rdispls } };
	return coll_submit(c, &a, req);
}

int coll_barrier(coll_comm_t *c, coll_request_t **req)
{
	struct coll_args a = { "coll_barrier", COLL_OP_BARRIER, 0, 0, 0, 0, NULL, NULL, 0, 0,
			       { 0 } };
	return coll_submit(c, &a, req);
}

/* ------------------------------------------------------ blocking forms */

#define SYNC(call) do {					\
		coll_request_t *r_;			\
		int e_ = (call);			\
		return e_ ? e_ : coll_wait(&r_, NULL);	\
	} while (0)

int coll_allreduce_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t,
			coll_redop_t o)
{
	SYNC(coll_allreduce(c, sb, rb, n, t, o, &r_));
}

int coll_reducescatter_sync(coll_comm_t *c, const void *sb, void *rb, size_t n,
			    coll_dtype_t t, coll_redop_t o)
{
	SYNC(coll_reducescatter(c, sb, rb, n, t, o, &r_));
}

int coll_allgather_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t)
{
	SYNC(coll_allgather(c, sb, rb, n, t, &r_));
}

int coll_broadcast_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t,
			uint32_t root)
{
	SYNC(coll_broadcast(c, sb, rb, n, t, root, &r_));
}

int coll_reduce_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t,
		     coll_redop_t o, uint32_t root)
{
	SYNC(coll_reduce(c, sb, rb, n, t, o, root, &r_));
}

int coll_scatter_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t,
		      uint32_t root)
{
	SYNC(coll_scatter(c, sb, rb, n, t, root, &r_));
}

int coll_gather_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t,
		     uint32_t root)
{
	SYNC(coll_gather(c, sb, rb, n, t, root, &r_));
}

int coll_alltoall_sync(coll_comm_t *c, const void *sb, void *rb, size_t n, coll_dtype_t t)
{
	SYNC(coll_alltoall(c, sb, rb, n, t, &r_));
}

int coll_alltoallv_sync(coll_comm_t *c, const void *sb, const uint64_t *sc, const uint64_t *sd,
			void *rb, const uint64_t *rc, const uint64_t *rd, coll_dtype_t t)
{
	SYNC(coll_alltoallv(c, sb, sc, sd, rb, rc, rd, t, &r_));
}

int coll_barrier_sync(coll_comm_t *c)
{
	SYNC(coll_barrier(c, &r_));
}
