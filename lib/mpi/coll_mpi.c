// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll-mpi: a PMPI interposition library that runs an unmodified MPI
 * program's collectives over kcoll.  Built once per MPI implementation
 * (libcoll-mpi-openmpi.so, libcoll-mpi-mpich.so: their handles differ),
 * loaded with LD_PRELOAD (or linked before -lmpi).  It defines MPI_X and
 * calls PMPI_X, never defining PMPI_X (both MPIs make MPI_X a weak alias).
 *
 * Routing.  A call goes to kcoll when kcoll does it exactly: an
 * intra-communicator of more than one rank; for the reductions
 * (Allreduce, Reduce, ReduceScatter), contiguous predefined datatypes
 * that map onto kcoll element types (or contiguous types built from one),
 * SUM/PROD/MIN/MAX on them, MPI_IN_PLACE where MPI allows it, equal
 * ReduceScatter counts; the operations that only move data (Bcast,
 * Allgather, Alltoall, Alltoallv, Gather, Scatter) move bytes, any type
 * in any layout, a rank whose layout is not its bytes back to back
 * staging it locally (MPI_Pack before, MPI_Unpack after, on
 * MPI_COMM_SELF).  Everything else (user ops, MAXLOC, bitwise and
 * logical ops, derived types in a reduction, inter-communicators) goes
 * to the PMPI_ call unchanged, and is counted with its first failing
 * reason: kc_route() runs every operation's checks in one order.
 *
 * Every input of that decision is one that MPI requires to be the same
 * on every rank, so the ranks decide alike without talking: a
 * reduction's count, datatype and op (MPI wants them the same
 * everywhere); the bytes of one block of a data movement (MPI wants only
 * the type signatures to match, so the layouts, the types and the counts
 * may differ between ranks, their bytes may not), nothing of Alltoallv's
 * per-rank counts and types; MPI_IN_PLACE where MPI wants it on every
 * rank or none.  Each operation says why, above it.  The one per-rank
 * fact, whether this node's kcoll communicator could be made, is agreed
 * once per communicator with a PMPI_Allreduce(MIN).
 *
 * Communicators.  A kcoll communicator is made lazily at the first routed
 * call on an MPI communicator (a collective point), bootstrapped with
 * coll_comm_init_oob() over PMPI_Allgather on that communicator, and kept
 * as an attribute whose delete callback destroys it: MPI_Comm_free, and
 * MPI_Finalize (which deletes SELF's then WORLD's attributes).  Dup,
 * split and create need no wrapper: the keyval's copy function is
 * MPI_COMM_NULL_COPY_FN, so a new communicator has none and makes its own.
 *
 * Nonblocking collectives are generalized requests (PMPI_Grequest_start)
 * around a kcoll request, so they mix with MPI's own in any array.  Every
 * C completion call (Wait, Test, Request_get_status, and the -all, -any
 * and -some forms) first looks at ours (coll_test, then
 * PMPI_Grequest_complete), and one that waits alternates that with
 * PMPI_Test* so that MPI's requests progress meanwhile; no thread.
 * MPI_Cancel and MPI_Request_free of ours fail as both MPIs fail them for
 * their own nonblocking collectives (erroneous in MPI).  A pending
 * request holds its kcoll communicator, so MPI_Comm_free does not end
 * the operation.  Open MPI's Fortran completion calls reach PMPI directly
 * and would wait forever on ours: not supported.
 *
 * Errors.  A kcoll error on a routed call becomes an MPI error class of
 * ours (MPI_Add_error_class), its string the kcoll message, raised on the
 * communicator (its error handler runs).  KCOLL_MPI=0, or no kcoll module
 * on some rank, passes everything through.  KCOLL_MPI_VERBOSE=1 prints at
 * MPI_Finalize, on rank 0, the calls of all ranks per operation: routed,
 * and fallen back by reason.
 *
 * Open MPI's Fortran bindings call PMPI_ directly and bypass this library
 * (correct, not accelerated); MPICH's call the C MPI_ functions.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "coll.h"

/* ---------------------------------------------------------- counting */

enum kc_op {
	KC_ALLREDUCE, KC_REDUCE, KC_BCAST, KC_ALLGATHER, KC_REDUCE_SCATTER_BLOCK,
	KC_REDUCE_SCATTER, KC_SCATTER, KC_GATHER, KC_ALLTOALL, KC_ALLTOALLV, KC_BARRIER,
	KC_NOPS
};

static const char *const kc_op_names[KC_NOPS] = {
	"allreduce", "reduce", "bcast", "allgather", "reduce_scatter_block",
	"reduce_scatter", "scatter", "gather", "alltoall", "alltoallv", "barrier",
};

enum kc_why {
	KC_ROUTED, KC_DISABLED, KC_NOMODULE, KC_INTER, KC_ONERANK, KC_DATATYPE, KC_OP,
	KC_COUNTS, KC_INPLACE, KC_EMPTY, KC_SETUP, KC_LARGE, KC_NWHY
};

static const char *const kc_why_names[KC_NWHY] = {
	"routed", "KCOLL_MPI=0", "no module", "inter-communicator", "one rank", "datatype",
	"op", "counts differ", "in place", "empty", "kcoll communicator failed",
	"2 GiB or more",
};

/* [blocking 0 / nonblocking 1][op][why] */
static long long kc_count[2][KC_NOPS][KC_NWHY];

static pthread_mutex_t kc_lock = PTHREAD_MUTEX_INITIALIZER;
static int kc_inited, kc_enabled, kc_have_module, kc_verbose;
static int kc_keyval = MPI_KEYVAL_INVALID;
static int kc_errclass, kc_errcode;

static void kc_note(int nb, enum kc_op op, enum kc_why why)
{
	pthread_mutex_lock(&kc_lock);
	kc_count[nb][op][why]++;
	pthread_mutex_unlock(&kc_lock);
}

/* ------------------------------------------------------ communicators */

/*
 * An MPI communicator's kcoll side, its attribute.  Counted: the
 * attribute holds one reference and every request of ours one, so that
 * MPI_Comm_free with requests still pending (MPI lets them complete)
 * leaves their kcoll communicator alive until the last one is freed.
 */
struct kc_comm {
	coll_comm_t *kc;		/* NULL: not routed, for @why */
	enum kc_why why;
	int refs;
};

static void kc_comm_put(struct kc_comm *k)
{
	int last;

	pthread_mutex_lock(&kc_lock);
	last = !--k->refs;
	pthread_mutex_unlock(&kc_lock);
	if (last) {
		coll_comm_destroy(k->kc);
		free(k);
	}
}

static int kc_delete_cb(MPI_Comm comm, int kv, void *attr, void *extra)
{
	(void)comm;
	(void)kv;
	(void)extra;
	if (attr)
		kc_comm_put(attr);
	return MPI_SUCCESS;
}

static void kc_init(void)
{
	struct coll_module_info info;
	const char *e;
	int flag = 0;

	if (kc_inited)
		return;
	PMPI_Initialized(&flag);
	if (!flag)
		return;
	pthread_mutex_lock(&kc_lock);
	if (!kc_inited) {
		e = getenv("KCOLL_MPI");
		kc_enabled = !(e && !strcmp(e, "0"));
		e = getenv("KCOLL_MPI_VERBOSE");
		kc_verbose = e && *e && strcmp(e, "0");
		kc_have_module = kc_enabled && coll_module_info(NULL, &info) == 0;
		if (kc_enabled) {
			PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kc_delete_cb, &kc_keyval,
						NULL);
			PMPI_Add_error_class(&kc_errclass);
			PMPI_Add_error_code(kc_errclass, &kc_errcode);
			PMPI_Add_error_string(kc_errclass, "kcoll: a collective failed");
			PMPI_Add_error_string(kc_errcode, "kcoll: a collective failed");
		}
		kc_inited = 1;
	}
	pthread_mutex_unlock(&kc_lock);
}

static int kc_oob_allgather(const void *s, void *r, size_t len, void *ctx)
{
	MPI_Comm comm = *(MPI_Comm *)ctx;

	if (len > (size_t)0x7fffffff)
		return -1;
	return PMPI_Allgather(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE, comm);
}

/*
 * The kcoll communicator of @comm, made at the first routed call: NULL
 * (and *@why) when it cannot be, the same on every rank.
 */
static struct kc_comm *kc_comm_get(MPI_Comm comm, enum kc_why *why)
{
	struct kc_comm *k = NULL;
	int flag = 0, rank, size, ok, all = 0;
	struct coll_oob oob;
	MPI_Comm ctx = comm;

	PMPI_Comm_get_attr(comm, kc_keyval, &k, &flag);
	if (flag && k) {
		*why = k->why;
		return k;
	}
	k = calloc(1, sizeof(*k));
	ok = kc_have_module && k;
	/* A node without the module, agreed before anybody tries. */
	PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	if (!all) {
		if (!k)
			return *why = KC_NOMODULE, NULL;
		k->why = KC_NOMODULE;
		k->refs = 1;
	} else {
		k->refs = 1;
		PMPI_Comm_rank(comm, &rank);
		PMPI_Comm_size(comm, &size);
		oob = (struct coll_oob){ .allgather = kc_oob_allgather, .ctx = &ctx,
					 .rank = (uint32_t)rank, .size = (uint32_t)size };
		ok = coll_comm_init_oob(&oob, NULL, &k->kc) == 0;
		if (!ok && kc_verbose)
			fprintf(stderr, "kcoll-mpi: rank %d: no kcoll communicator: %s\n", rank,
				coll_last_error());
		/* init_oob agrees already; the MPI-level agreement is cheap insurance. */
		PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
		if (!all) {
			coll_comm_destroy(k->kc);
			k->kc = NULL;
			k->why = KC_SETUP;
		} else {
			k->why = KC_ROUTED;
		}
		/* Its own oob ctx pointed at our stack: not kept (no split through it). */
	}
	PMPI_Comm_set_attr(comm, kc_keyval, k);
	*why = k->why;
	return k;
}

/* ------------------------------------------------------------- types */

#define KC_COPY_ONLY	0x100	/* element type for moving bytes, not reducing */

/* A predefined datatype's kcoll type, or -1. */
static int kc_named_dtype(MPI_Datatype dt)
{
	if (dt == MPI_FLOAT || dt == MPI_REAL)
		return COLL_FLOAT;
	if (dt == MPI_DOUBLE || dt == MPI_DOUBLE_PRECISION)
		return COLL_DOUBLE;
	if (dt == MPI_INT || dt == MPI_INT32_T || dt == MPI_INTEGER)
		return COLL_INT32;
	if (dt == MPI_UNSIGNED || dt == MPI_UINT32_T)
		return COLL_UINT32;
	if (dt == MPI_LONG || dt == MPI_INT64_T || dt == MPI_LONG_LONG_INT ||
	    dt == MPI_LONG_LONG)
		return sizeof(long) == 8 || dt != MPI_LONG ? COLL_INT64 : COLL_INT32;
	if (dt == MPI_UNSIGNED_LONG || dt == MPI_UINT64_T || dt == MPI_UNSIGNED_LONG_LONG)
		return sizeof(long) == 8 || dt != MPI_UNSIGNED_LONG ? COLL_UINT64 : COLL_UINT32;
	if (dt == MPI_SHORT || dt == MPI_INT16_T)
		return COLL_INT16;
	if (dt == MPI_UNSIGNED_SHORT || dt == MPI_UINT16_T)
		return COLL_UINT16;
	if (dt == MPI_INT8_T || dt == MPI_SIGNED_CHAR)
		return COLL_INT8;
	if (dt == MPI_UINT8_T || dt == MPI_UNSIGNED_CHAR)
		return COLL_UINT8;
#ifdef MPIX_C_FLOAT16
	if (dt == MPIX_C_FLOAT16)
		return COLL_FLOAT16;
#endif
	if (dt == MPI_BYTE || dt == MPI_CHAR || dt == MPI_C_BOOL || dt == MPI_PACKED)
		return COLL_UINT8 | KC_COPY_ONLY;
	return -1;
}

/*
 * @dt as *@kdt elements, *@per of them per @dt: a predefined type, or a
 * contiguous type of one (recursively).  -1 otherwise.
 */
static int kc_dtype(MPI_Datatype dt, int *kdt, size_t *per)
{
	int ni, na, nd, comb, t, cnt;
	MPI_Datatype base;
	size_t p;

	if (dt == MPI_DATATYPE_NULL)
		return -1;
	if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS)
		return -1;
	if (comb == MPI_COMBINER_NAMED) {
		t = kc_named_dtype(dt);
		if (t < 0)
			return -1;
		*kdt = t;
		*per = 1;
		return 0;
	}
	if (comb != MPI_COMBINER_CONTIGUOUS || ni != 1 || nd != 1)
		return -1;
	if (PMPI_Type_get_contents(dt, 1, 0, 1, &cnt, NULL, &base) != MPI_SUCCESS)
		return -1;
	t = kc_dtype(base, kdt, &p);
	PMPI_Type_get_envelope(base, &ni, &na, &nd, &comb);
	if (comb != MPI_COMBINER_NAMED)
		PMPI_Type_free(&base);
	if (t || cnt < 0)
		return -1;
	*per = p * (size_t)cnt;
	return 0;
}

static int kc_redop(MPI_Op op, coll_redop_t *k)
{
	if (op == MPI_SUM)
		*k = COLL_SUM;
	else if (op == MPI_PROD)
		*k = COLL_PROD;
	else if (op == MPI_MAX)
		*k = COLL_MAX;
	else if (op == MPI_MIN)
		*k = COLL_MIN;
	else
		return -1;
	return 0;
}

/* The bytes of @count @dt: its signature's size, -1 if not a type. */
static long long kc_bytes(int count, MPI_Datatype dt)
{
	MPI_Count sz = 0;

	if (count <= 0)
		return 0;
	if (dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(dt, &sz) != MPI_SUCCESS ||
	    sz == MPI_UNDEFINED || sz < 0)
		return -1;
	return (long long)count * sz;
}

/* Any number of @dt lie back to back at the buffer, as their bytes. */
static int kc_contig(MPI_Datatype dt)
{
	MPI_Aint lb, ext, tlb, text;
	MPI_Count sz = 0;

	if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(dt, &tlb, &text) != MPI_SUCCESS ||
	    PMPI_Type_size_x(dt, &sz) != MPI_SUCCESS)
		return 0;
	return !lb && !tlb && ext == text && (MPI_Count)ext == sz;
}

/*
 * Pack (@unpack 0) @count @dt at @buf into the @len bytes at @pk, or
 * unpack them back (1), in pieces whose bytes fit the int of MPI's pack
 * interface: any total, but not one element of 2 GiB or more (-1).
 */
static int kc_pack_move(int unpack, const void *buf, long long count, MPI_Datatype dt, void *pk,
			size_t len)
{
	MPI_Aint lb, ext;
	MPI_Count sz = 0;
	long long done = 0, n, per;
	size_t off = 0;
	char *b;
	int pos, ret;

	if (count <= 0)
		return 0;
	if (PMPI_Type_get_extent(dt, &lb, &ext) != MPI_SUCCESS ||
	    PMPI_Type_size_x(dt, &sz) != MPI_SUCCESS || sz < 0 || sz > INT_MAX)
		return -1;
	if (!sz)
		return 0;
	per = INT_MAX / sz;
	while (done < count) {
		n = count - done < per ? count - done : per;
		if ((size_t)(n * sz) > len - off)
			return -1;
		b = (char *)buf + (MPI_Aint)done * ext;
		pos = 0;
		ret = unpack ? PMPI_Unpack((char *)pk + off, (int)(n * sz), &pos, b, (int)n, dt,
					   MPI_COMM_SELF) :
			       PMPI_Pack(b, (int)n, dt, (char *)pk + off, (int)(n * sz), &pos,
					 MPI_COMM_SELF);
		if (ret != MPI_SUCCESS)
			return -1;
		off += (size_t)(n * sz);
		done += n;
	}
	return 0;
}

/* @count @dt at @buf as packed bytes in a new buffer of @len (NULL if none). */
static void *kc_pack(const void *buf, long long count, MPI_Datatype dt, size_t len)
{
	void *p = malloc(len ? len : 1);

	if (p && kc_pack_move(0, buf, count, dt, p, len)) {
		free(p);
		p = NULL;
	}
	return p;
}

/* --------------------------------------------------------- deciding */

/* What a routed call needs. */
struct kc_call {
	struct kc_comm *k;
	coll_comm_t *kc;
	coll_dtype_t dt;
	coll_redop_t op;
	size_t per;		/* kcoll elements per MPI element */
	size_t esz;		/* bytes per kcoll element */
	size_t n;		/* kcoll elements of the call's count, or its bytes */
	int rank, size;
};

/* The checks every call shares: enabled, the communicator's kind and size. */
static enum kc_why kc_comm_check(MPI_Comm comm, struct kc_call *c)
{
	int inter = 0;

	kc_init();
	if (!kc_enabled)
		return KC_DISABLED;
	if (comm == MPI_COMM_NULL)
		return KC_INTER;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter)
		return KC_INTER;
	PMPI_Comm_size(comm, &c->size);
	PMPI_Comm_rank(comm, &c->rank);
	if (c->size < 2)
		return KC_ONERANK;
	return KC_ROUTED;
}

/* @dt (and @op if @reduce) as kcoll types into @c. */
static enum kc_why kc_type_check(MPI_Datatype dt, MPI_Op op, int reduce, struct kc_call *c)
{
	int k;

	/* The op first: MAXLOC's pair types are no kcoll type either. */
	if (reduce && kc_redop(op, &c->op))
		return KC_OP;
	if (kc_dtype(dt, &k, &c->per))
		return KC_DATATYPE;
	if (reduce && (k & KC_COPY_ONLY))
		return KC_DATATYPE;
	c->dt = (coll_dtype_t)(k & ~KC_COPY_ONLY);
	c->esz = coll_dtype_size(c->dt);
	return KC_ROUTED;
}

/* Last: the kcoll communicator. */
static enum kc_why kc_comm_final(MPI_Comm comm, struct kc_call *c)
{
	enum kc_why why = KC_ROUTED;

	c->k = kc_comm_get(comm, &why);
	c->kc = c->k ? c->k->kc : NULL;
	return c->kc ? KC_ROUTED : why;
}

/*
 * What one call asks of the routing decision.  Every check is optional
 * but for the communicator's; kc_route() runs them in this one order and
 * reports the first that fails, so each operation's reasons read alike.
 */
enum kc_kind {
	KC_NOTYPE,		/* nothing of the data (Barrier, Alltoallv) */
	KC_ELEMS,		/* @dt as kcoll elements (of @op if @reduce) */
	KC_BYTES,		/* @count @dt as bytes: any type, any layout */
};

struct kc_check {
	enum kc_kind kind;
	MPI_Datatype dt;
	MPI_Op op;
	int reduce;
	int count;		/* of @dt */
	int empty;		/* @count <= 0 falls back (KC_ELEMS) */
	int counts_differ;	/* a vector form whose counts kcoll has no form for */
	int inplace;		/* an MPI_IN_PLACE that kcoll has no form for */
};

/* @a's decision for @which, counted; KC_ROUTED fills @c for the call. */
static enum kc_why kc_route(enum kc_op which, int nb, MPI_Comm comm, const struct kc_check *a,
			    struct kc_call *c)
{
	enum kc_why why = kc_comm_check(comm, c);
	long long bytes;

	if (!why && a->kind == KC_ELEMS) {
		why = kc_type_check(a->dt, a->op, a->reduce, c);
		c->n = (size_t)(a->count > 0 ? a->count : 0) * (why ? 0 : c->per);
	}
	if (!why && a->counts_differ)
		why = KC_COUNTS;
	if (!why && a->inplace)
		why = KC_INPLACE;
	if (!why && a->kind == KC_BYTES) {
		bytes = kc_bytes(a->count, a->dt);
		if (bytes < 0)
			why = KC_DATATYPE;
		else if (!bytes)
			why = KC_EMPTY;
		else if (bytes > INT_MAX)	/* one block: its elements are smaller */
			why = KC_LARGE;
		c->dt = COLL_UINT8;
		c->per = c->esz = 1;
		c->n = bytes > 0 ? (size_t)bytes : 0;
	}
	if (!why && a->empty && a->count <= 0)
		why = KC_EMPTY;
	if (!why)
		why = kc_comm_final(comm, c);
	kc_note(nb, which, why);
	return why;
}

/* ----------------------------------------------------------- errors */

static int kc_error(MPI_Comm comm, int err)
{
	char msg[MPI_MAX_ERROR_STRING];

	snprintf(msg, sizeof(msg), "kcoll: %s", coll_last_error()[0] ? coll_last_error() :
		 coll_strerror(err));
	PMPI_Add_error_string(kc_errcode, msg);
	PMPI_Comm_call_errhandler(comm, kc_errcode);
	return kc_errcode;
}

/* A routed call that this rank cannot do (an erroneous one): @msg. */
static int kc_fail(MPI_Comm comm, const char *msg)
{
	PMPI_Add_error_string(kc_errcode, msg);
	PMPI_Comm_call_errhandler(comm, kc_errcode);
	return kc_errcode;
}

/* ------------------------------------------------ nonblocking requests */

/*
 * What a call does after its kcoll operation completed (the blocking form
 * right away, the nonblocking one when the request is found done): MPI's
 * in-place ReduceScatter wants its block first (a move), a staged layout
 * is unpacked into the caller's (a derived type, duplicated so that the
 * caller may free its own).  The staging buffer is ours, freed here.
 */
/* Unpack @count of the type at @off of the staging buffer into @buf. */
struct kc_seg {
	size_t off;
	void *buf;
	long long count;
};

struct kc_post {
	void *move_to;
	const void *move_from;
	size_t move_len;
	void *tmp;
	size_t tmp_len;
	void *tmp2;			/* a packed send side, freed */
	struct kc_seg one;		/* unpack tmp into these, of utype: one, */
	struct kc_seg *segs;		/* ... or @nsegs of these (freed) */
	int nsegs;
	MPI_Datatype utype;		/* MPI_DATATYPE_NULL: nothing to unpack */
};

#define KC_POST_NONE { .utype = MPI_DATATYPE_NULL }

/* Run @p after the operation ended with @err (0: completed); once. */
static void kc_post_run(struct kc_post *p, int err)
{
	const struct kc_seg *s = p->segs ? p->segs : &p->one;
	int i;

	if (!err && p->move_len)
		memmove(p->move_to, p->move_from, p->move_len);
	p->move_len = 0;
	if (p->utype != MPI_DATATYPE_NULL) {
		for (i = 0; !err && i < p->nsegs; i++)
			kc_pack_move(1, s[i].buf, s[i].count, p->utype, (char *)p->tmp + s[i].off,
				     p->tmp_len - s[i].off);
		PMPI_Type_free(&p->utype);
	}
	free(p->tmp);
	free(p->tmp2);
	free(p->segs);
	p->tmp = p->tmp2 = NULL;
	p->segs = NULL;
	p->nsegs = 0;
}

/* After completion, unpack @len bytes of @tmp into @count @dt at @buf. */
static void kc_post_unpack(struct kc_post *p, void *tmp, size_t len, void *buf, long long count,
			   MPI_Datatype dt)
{
	p->tmp = tmp;
	p->tmp_len = len;
	p->one = (struct kc_seg){ .buf = buf, .count = count };
	p->nsegs = 1;
	PMPI_Type_dup(dt, &p->utype);
}

struct kc_req {
	struct kc_req *next;
	MPI_Request req;
	struct kc_comm *owner;	/* a reference: the kcoll communicator outlives us */
	coll_request_t *kreq;
	int err;		/* kcoll's, when it completed */
	int done;
	struct kc_post post;
	char msg[MPI_MAX_ERROR_STRING];
};

static struct kc_req *kc_reqs;

/*
 * The status of a completed request of ours: what Open MPI's own
 * nonblocking collectives give (source and tag 0, no elements, not
 * cancelled; MPICH leaves source and tag of its own undefined).
 */
static int kc_query_fn(void *extra, MPI_Status *st)
{
	struct kc_req *r = extra;

	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = 0;
	st->MPI_TAG = 0;
	st->MPI_ERROR = r->err ? kc_errcode : MPI_SUCCESS;
	if (r->err)
		PMPI_Add_error_string(kc_errcode, r->msg);
	return st->MPI_ERROR;
}

/*
 * MPI frees the request: after its completion (a Wait or a Test that saw
 * it done).  A request freed before (Open MPI's Fortran MPI_REQUEST_FREE
 * bypasses our MPI_Request_free; MPICH then calls this at once) is waited
 * for here, so that nothing touches its buffers afterwards.
 */
static int kc_free_fn(void *extra)
{
	struct kc_req *r = extra, **pp;

	pthread_mutex_lock(&kc_lock);
	for (pp = &kc_reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	pthread_mutex_unlock(&kc_lock);
	if (r->kreq)
		kc_post_run(&r->post, coll_wait(&r->kreq, NULL));
	else if (!r->done)
		kc_post_run(&r->post, -ECANCELED);
	kc_comm_put(r->owner);
	free(r);
	return MPI_SUCCESS;
}

/* Only reached through a path that bypasses our MPI_Cancel: not cancelled. */
static int kc_cancel_fn(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/* Ours, by MPI handle (NULL if not). */
static struct kc_req *kc_req_find(MPI_Request req)
{
	struct kc_req *r;

	if (req == MPI_REQUEST_NULL || !kc_reqs)
		return NULL;
	pthread_mutex_lock(&kc_lock);
	for (r = kc_reqs; r && r->req != req; r = r->next)
		;
	pthread_mutex_unlock(&kc_lock);
	return r;
}

static void kc_req_finish(struct kc_req *r, int err)
{
	r->done = 1;
	r->err = err;
	if (err)
		snprintf(r->msg, sizeof(r->msg), "kcoll: %s", coll_last_error()[0] ?
			 coll_last_error() : coll_strerror(err));
	kc_post_run(&r->post, err);
	PMPI_Grequest_complete(r->req);
}

/* Look once at @req if it is ours and pending: 1 if it still is. */
static int kc_req_drive(MPI_Request req)
{
	struct kc_req *r = kc_req_find(req);
	int done = 0, err;

	if (!r || r->done)
		return 0;
	err = coll_test(&r->kreq, &done, NULL);
	if (!done && !err)
		return 1;
	kc_req_finish(r, err);
	return 0;
}

/* Ours among @reqs looked at once: how many are still pending. */
static int kc_drive(int n, const MPI_Request *reqs)
{
	int i, pending = 0;

	if (!kc_reqs)
		return 0;
	for (i = 0; i < n; i++)
		pending += kc_req_drive(reqs[i]);
	return pending;
}

/*
 * Between two looks of a completion call that waits for ours and MPI's
 * alike: MPI progresses in the PMPI_Test* between, so nothing is ever
 * blocked in the kernel while a request of MPI's needs this process
 * (a rendezvous send in the same Waitall).  Spin first, then sleep on
 * the kcoll communicator's eventfd for at most a millisecond at a time.
 */
static void kc_idle(int n, const MPI_Request *reqs, unsigned int *spins)
{
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	struct kc_req *r;
	uint64_t v;
	int i;

	if (++*spins < 2000)
		return;
	for (i = 0; i < n && pfd.fd < 0; i++) {
		r = kc_req_find(reqs[i]);
		if (r && !r->done && r->owner->kc)
			pfd.fd = coll_comm_event_fd(r->owner->kc);
	}
	if (pfd.fd < 0) {
		sched_yield();
		return;
	}
	if (poll(&pfd, 1, 1) == 1 && read(pfd.fd, &v, sizeof(v)) < 0)
		sched_yield();
}

/* A submitted kcoll request as an MPI request. */
static int kc_req_start(MPI_Comm comm, struct kc_comm *k, coll_request_t *kreq, int err,
			MPI_Request *req, struct kc_post *post)
{
	struct kc_req *r;

	if (err) {
		kc_post_run(post, err);
		return kc_error(comm, err);
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		kc_post_run(post, coll_wait(&kreq, NULL));
		return kc_error(comm, -ENOMEM);
	}
	r->kreq = kreq;
	r->post = *post;
	pthread_mutex_lock(&kc_lock);
	k->refs++;
	pthread_mutex_unlock(&kc_lock);
	r->owner = k;
	PMPI_Grequest_start(kc_query_fn, kc_free_fn, kc_cancel_fn, r, req);
	r->req = *req;
	pthread_mutex_lock(&kc_lock);
	r->next = kc_reqs;
	kc_reqs = r;
	pthread_mutex_unlock(&kc_lock);
	return MPI_SUCCESS;
}

/* Blocking: wait for a submitted request, then what follows it. */
static int kc_finish(MPI_Comm comm, coll_request_t *kreq, int err, struct kc_post *post)
{
	if (!err)
		err = coll_wait(&kreq, NULL);
	kc_post_run(post, err);
	if (err)
		return kc_error(comm, err);
	return MPI_SUCCESS;
}

/*
 * Either form: @req NULL is the blocking one.  @kp, not the request: the
 * callers submit in another argument of the same call, so *@kp is read
 * here, after the submission (argument order is unspecified).  @post
 * NULL: nothing after.
 */
static int kc_done(MPI_Comm comm, struct kc_comm *k, coll_request_t **kp, int err,
		   MPI_Request *req, struct kc_post *post)
{
	struct kc_post none = KC_POST_NONE;

	if (!post)
		post = &none;
	if (req)
		return kc_req_start(comm, k, *kp, err, req, post);
	return kc_finish(comm, *kp, err, post);
}

/* ----------------------------------------------------- the operations */

#define NB(req) ((req) != NULL)

/*
 * The reductions (Allreduce, Reduce, ReduceScatter) decide on count,
 * datatype and op, which MPI wants the same on every rank (a reduction
 * combines elements, so unlike a data movement it cannot take one
 * rank's layout for another's): every rank decides alike.  In place does
 * not enter the decision (Reduce has it at the root only).
 */
static int kc_allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
			MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_ELEMS, .dt = dt, .op = op, .reduce = 1, .count = count,
			      .empty = 1 };
	struct kc_call c;
	coll_request_t *k = NULL;

	if (kc_route(KC_ALLREDUCE, NB(req), comm, &a, &c))
		return req ? PMPI_Iallreduce(sb, rb, count, dt, op, comm, req) :
			     PMPI_Allreduce(sb, rb, count, dt, op, comm);
	if (sb == MPI_IN_PLACE)
		sb = rb;
	return kc_done(comm, c.k, &k, coll_allreduce(c.kc, sb, rb, (size_t)count * c.per, c.dt, c.op,
					       &k), req, NULL);
}

static int kc_reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
		     MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_ELEMS, .dt = dt, .op = op, .reduce = 1, .count = count,
			      .empty = 1 };
	struct kc_call c;
	coll_request_t *k = NULL;

	if (kc_route(KC_REDUCE, NB(req), comm, &a, &c))
		return req ? PMPI_Ireduce(sb, rb, count, dt, op, root, comm, req) :
			     PMPI_Reduce(sb, rb, count, dt, op, root, comm);
	if (sb == MPI_IN_PLACE)
		sb = rb;
	if (c.rank != root)
		rb = NULL;
	return kc_done(comm, c.k, &k, coll_reduce(c.kc, sb, rb, (size_t)count * c.per, c.dt, c.op,
					    (uint32_t)root, &k), req, NULL);
}

/*
 * Bcast, routed by bytes: MPI wants the signature of @count @dt the same
 * on every rank, root included, so its bytes are, whatever each rank's
 * layout (a vector here, @count contiguous types there).  kcoll moves the
 * bytes; a rank whose layout is not them back to back packs them before
 * (the root) or receives into a staging buffer and unpacks after.
 */
static int kc_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
		    MPI_Request *req)
{
	struct kc_check a = { .kind = KC_BYTES, .dt = dt, .count = count };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	void *p = buf;

	if (kc_route(KC_BCAST, NB(req), comm, &a, &c))
		return req ? PMPI_Ibcast(buf, count, dt, root, comm, req) :
			     PMPI_Bcast(buf, count, dt, root, comm);
	if (!kc_contig(dt) && c.rank == root) {
		p = post.tmp2 = kc_pack(buf, count, dt, c.n);
		if (!p)
			return kc_error(comm, -ENOMEM);
	} else if (!kc_contig(dt)) {
		p = malloc(c.n);
		if (!p)
			return kc_error(comm, -ENOMEM);
		kc_post_unpack(&post, p, c.n, buf, count, dt);
	}
	return kc_done(comm, c.k, &k, coll_broadcast(c.kc, p, p, c.n, COLL_UINT8, (uint32_t)root,
						     &k), req, &post);
}

/*
 * The receive side of Allgather and Alltoall (@rc @rt per rank, @all
 * bytes), when not its bytes back to back: a staging buffer, unpacked
 * after.  @rb itself otherwise; NULL if out of memory.
 */
static void *kc_stage_recv(struct kc_post *post, void *rb, int rc, MPI_Datatype rt, int size,
			   size_t all)
{
	void *tmp;

	if (kc_contig(rt))
		return rb;
	tmp = malloc(all);
	if (tmp)
		kc_post_unpack(post, tmp, all, rb, (long long)rc * size, rt);
	return tmp;
}

/*
 * Allgather, routed by the bytes of one block, @rc @rt: every rank
 * receives every rank's block with its own receive type, which MPI wants
 * to match the sender's @sc @st, so those bytes are the same on every
 * rank (and each rank's send side has them too), whatever the layouts.
 * In place is on every rank or none (MPI).  kcoll moves bytes; a layout
 * that is not them back to back is staged locally: the send side packed
 * before, the receive side unpacked after (in place, the rank's own block
 * packed into its place in the staging buffer first).
 */
static int kc_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
			MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_BYTES, .dt = rt, .count = rc };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	size_t blk, all;
	MPI_Aint lb, ext;
	const void *src = sb;
	void *dst;

	if (kc_route(KC_ALLGATHER, NB(req), comm, &a, &c))
		return req ? PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, req) :
			     PMPI_Allgather(sb, sc, st, rb, rc, rt, comm);
	blk = c.n;
	all = blk * (size_t)c.size;
	if (sb != MPI_IN_PLACE && kc_bytes(sc, st) != (long long)blk)
		return kc_fail(comm, "kcoll: allgather: the send and receive blocks differ in size");
	dst = kc_stage_recv(&post, rb, rc, rt, c.size, all);
	if (!dst)
		return kc_error(comm, -ENOMEM);
	if (sb == MPI_IN_PLACE) {
		src = (char *)dst + (size_t)c.rank * blk;
		PMPI_Type_get_extent(rt, &lb, &ext);
		if (dst != rb && kc_pack_move(0, (char *)rb + (MPI_Aint)c.rank * rc * ext, rc, rt,
					      (void *)src, blk)) {
			kc_post_run(&post, -ENOMEM);
			return kc_error(comm, -ENOMEM);
		}
	} else if (!kc_contig(st)) {
		src = post.tmp2 = kc_pack(sb, sc, st, blk);
		if (!src) {
			kc_post_run(&post, -ENOMEM);
			return kc_error(comm, -ENOMEM);
		}
	}
	return kc_done(comm, c.k, &k, coll_allgather(c.kc, src, dst, blk, COLL_UINT8, &k), req,
		       &post);
}

/*
 * ReduceScatter with every block @rc elements (both MPI forms): decided
 * as the other reductions, and on whether the counts differ, which every
 * rank sees alike (MPI wants the same recvcounts on every rank).
 */
static int kc_rs(enum kc_op which, const void *sb, void *rb, int rc, MPI_Datatype dt,
		 MPI_Op op, MPI_Comm comm, MPI_Request *req, int counts_differ,
		 const int *rcounts)
{
	struct kc_check a = { .kind = KC_ELEMS, .dt = dt, .op = op, .reduce = 1, .count = rc,
			      .empty = 1, .counts_differ = counts_differ };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	size_t n, off = 0;

	if (kc_route(which, NB(req), comm, &a, &c)) {
		if (which == KC_REDUCE_SCATTER)
			return req ? PMPI_Ireduce_scatter(sb, rb, rcounts, dt, op, comm, req) :
				     PMPI_Reduce_scatter(sb, rb, rcounts, dt, op, comm);
		return req ? PMPI_Ireduce_scatter_block(sb, rb, rc, dt, op, comm, req) :
			     PMPI_Reduce_scatter_block(sb, rb, rc, dt, op, comm);
	}
	n = (size_t)rc * c.per;
	if (sb == MPI_IN_PLACE) {
		/* MPI: input in rb, result at its start; kcoll: result in place. */
		sb = rb;
		off = (size_t)c.rank * n * c.esz;
		rb = (char *)rb + off;
	}
	post.move_to = (char *)rb - off;
	post.move_from = rb;
	post.move_len = off ? n * c.esz : 0;
	return kc_done(comm, c.k, &k, coll_reducescatter(c.kc, sb, rb, n, c.dt, c.op, &k), req,
		       &post);
}

static int kc_rs_v(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm, MPI_Request *req)
{
	int size = 0, i, differ = 0;

	if (comm != MPI_COMM_NULL)
		PMPI_Comm_size(comm, &size);
	for (i = 1; i < size; i++)
		differ |= rcounts[i] != rcounts[0];
	return kc_rs(KC_REDUCE_SCATTER, sb, rb, size ? rcounts[0] : 0, dt, op, comm, req,
		     differ, rcounts);
}

/*
 * Scatter (@gather 0) or Gather (1), routed by the bytes of one block:
 * MPI makes every rank's block signature match the root's, so the bytes
 * are the same everywhere, while the layouts (each rank's own type, the
 * root's receive type of a gather or send type of a scatter, which only
 * the root knows) may differ.  So the decision looks at the bytes only,
 * kcoll moves bytes, and a rank whose layout is not its bytes back to
 * back packs (before) or unpacks (after) its side locally.
 */
static int kc_rooted(int gather, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
		     MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	/* The side that every rank has (a gather's send, a scatter's receive) */
	int inplace = gather ? sb == MPI_IN_PLACE : rb == MPI_IN_PLACE;
	/* ... but at an in-place root the other side says it */
	struct kc_check a = { .kind = KC_BYTES,
			      .dt = gather == inplace ? rt : st,
			      .count = gather == inplace ? rc : sc };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	long long bytes;
	size_t blk, all;
	MPI_Aint lb, ext;
	void *src, *dst, *tmp;

	if (kc_route(gather ? KC_GATHER : KC_SCATTER, NB(req), comm, &a, &c)) {
		if (gather)
			return req ? PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, req) :
				     PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm);
		return req ? PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, req) :
			     PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm);
	}
	bytes = (long long)c.n;
	blk = c.n;
	all = blk * (size_t)c.size;
	src = (void *)sb;
	dst = rb;
	if (gather) {
		if (c.rank != root) {
			dst = NULL;
		} else if (!kc_contig(rt) || kc_bytes(rc, rt) != bytes) {
			tmp = malloc(all);
			if (!tmp)
				return kc_error(comm, -ENOMEM);
			kc_post_unpack(&post, tmp, all, rb, (long long)rc * c.size, rt);
			dst = tmp;
		}
		if (inplace && dst == rb) {
			src = (char *)rb + (size_t)c.rank * blk;
		} else if (inplace) {
			/* the root's block, in place in its receive layout, staged with the rest */
			PMPI_Type_get_extent(rt, &lb, &ext);
			tmp = kc_pack((char *)rb + (size_t)c.rank * (size_t)rc * (size_t)ext, rc, rt,
				      blk);
			if (!tmp) {
				kc_post_run(&post, -ENOMEM);
				return kc_error(comm, -ENOMEM);
			}
			src = (char *)dst + (size_t)c.rank * blk;
			memcpy(src, tmp, blk);
			free(tmp);
		} else if (!kc_contig(st)) {
			src = post.tmp2 = kc_pack(sb, sc, st, blk);
			if (!src) {
				kc_post_run(&post, -ENOMEM);
				return kc_error(comm, -ENOMEM);
			}
		}
		return kc_done(comm, c.k, &k, coll_gather(c.kc, src, dst, blk, COLL_UINT8,
							   (uint32_t)root, &k), req, &post);
	}
	if (c.rank != root) {
		src = NULL;
	} else if (!kc_contig(st) || kc_bytes(sc, st) != bytes) {
		src = post.tmp2 = kc_pack(sb, (long long)sc * c.size, st, all);
		if (!src)
			return kc_error(comm, -ENOMEM);
	}
	if (inplace) {
		/* the root's own block stays where it is: kcoll's copy goes to src */
		dst = (char *)src + (size_t)c.rank * blk;
	} else if (!kc_contig(rt)) {
		tmp = malloc(blk);
		if (!tmp) {
			kc_post_run(&post, -ENOMEM);
			return kc_error(comm, -ENOMEM);
		}
		kc_post_unpack(&post, tmp, blk, rb, rc, rt);
		dst = tmp;
	}
	return kc_done(comm, c.k, &k, coll_scatter(c.kc, src, dst, blk, COLL_UINT8, (uint32_t)root,
						    &k), req, &post);
}

/*
 * Alltoall, routed by the bytes of one block, @rc @rt: each rank
 * receives a block from every rank with its own receive type, which MPI
 * wants to match that sender's @sc @st, so the bytes of one block are
 * the same on every rank, whatever the layouts.  In place is on every
 * rank or none (MPI).  Staged as Allgather: a send side not back to back
 * packed before, a receive side unpacked after; in place with such a
 * receive type, the whole buffer packed into the staging one, which
 * kcoll then exchanges in place.
 */
static int kc_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
		       MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_BYTES, .dt = rt, .count = rc };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	size_t blk, all;
	const void *src = sb;
	void *dst;

	if (kc_route(KC_ALLTOALL, NB(req), comm, &a, &c))
		return req ? PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, req) :
			     PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
	blk = c.n;
	all = blk * (size_t)c.size;
	if (sb != MPI_IN_PLACE && kc_bytes(sc, st) != (long long)blk)
		return kc_fail(comm, "kcoll: alltoall: the send and receive blocks differ in size");
	dst = kc_stage_recv(&post, rb, rc, rt, c.size, all);
	if (!dst)
		return kc_error(comm, -ENOMEM);
	if (sb == MPI_IN_PLACE) {
		src = dst;
		if (dst != rb && kc_pack_move(0, rb, (long long)rc * c.size, rt, dst, all)) {
			kc_post_run(&post, -ENOMEM);
			return kc_error(comm, -ENOMEM);
		}
	} else if (!kc_contig(st)) {
		src = post.tmp2 = kc_pack(sb, (long long)sc * c.size, st, all);
		if (!src) {
			kc_post_run(&post, -ENOMEM);
			return kc_error(comm, -ENOMEM);
		}
	}
	return kc_done(comm, c.k, &k, coll_alltoall(c.kc, src, dst, blk, COLL_UINT8, &k), req,
		       &post);
}

/*
 * One side of Alltoallv in bytes: @cnt and @dsp of @dt at @buf as byte
 * counts @vc and displacements @vd for kcoll.  Back to back types in
 * place (*@stage NULL); any other layout in a staging buffer *@stage of
 * the blocks packed in peer order, each block packed now (@pack) or its
 * segment for the unpack after written to @seg.  -1: out of memory, or
 * an element of 2 GiB or more to stage.
 */
static int kc_v_side(int pack, const void *buf, const int cnt[], const int dsp[],
		     MPI_Datatype dt, int size, uint64_t *vc, uint64_t *vd, void **stage,
		     size_t *stage_len, struct kc_seg **seg)
{
	MPI_Aint lb, ext;
	MPI_Count sz = 0;
	size_t tot = 0;
	int i;

	*stage = NULL;
	PMPI_Type_get_extent(dt, &lb, &ext);
	PMPI_Type_size_x(dt, &sz);
	for (i = 0; i < size; i++) {
		vc[i] = (uint64_t)cnt[i] * (uint64_t)sz;
		vd[i] = (uint64_t)((MPI_Aint)dsp[i] * ext);
		tot += vc[i];
	}
	if (kc_contig(dt))
		return 0;
	*stage = malloc(tot ? tot : 1);
	*stage_len = tot;
	if (!*stage)
		return -1;
	if (!pack) {
		*seg = calloc((size_t)size, sizeof(**seg));
		if (!*seg)
			return -1;
	}
	for (tot = 0, i = 0; i < size; tot += vc[i], i++) {
		if (pack && kc_pack_move(0, (char *)buf + vd[i], cnt[i], dt, (char *)*stage + tot,
					 vc[i]))
			return -1;
		if (!pack)
			(*seg)[i] = (struct kc_seg){ .off = tot, .buf = (char *)buf + vd[i],
						     .count = cnt[i] };
		vd[i] = tot;
	}
	return 0;
}

/*
 * Alltoallv, routed by bytes too, and on nothing else: its counts and
 * displacements are per rank, and so are its types (MPI wants only each
 * pair's signatures to match), so no rank could tell from its own what
 * another decides.  Every rank routes, but for MPI_IN_PLACE, which MPI
 * wants on every rank or none.  kcoll moves bytes: each side whose type
 * is not back to back is staged, its blocks packed in peer order before
 * (send) or unpacked from there after (receive).  An element of 2 GiB or
 * more in such a layout cannot be packed: an error on that rank alone.
 */
static int kc_alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st,
			void *rb, const int rc[], const int rd[], MPI_Datatype rt,
			MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_NOTYPE, .inplace = sb == MPI_IN_PLACE };
	struct kc_post post = KC_POST_NONE;
	struct kc_call c;
	coll_request_t *k = NULL;
	size_t unused;
	uint64_t *v;
	int err, n;

	if (kc_route(KC_ALLTOALLV, NB(req), comm, &a, &c))
		return req ? PMPI_Ialltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req) :
			     PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
	n = c.size;
	v = malloc(4 * (size_t)n * sizeof(*v));
	if (!v)
		return kc_error(comm, -ENOMEM);
	err = kc_v_side(1, sb, sc, sd, st, n, v, v + n, &post.tmp2, &unused, NULL);
	if (!err) {
		err = kc_v_side(0, rb, rc, rd, rt, n, v + 2 * n, v + 3 * n, &post.tmp,
				&post.tmp_len, &post.segs);
		if (post.tmp) {
			post.nsegs = n;
			PMPI_Type_dup(rt, &post.utype);
		}
	}
	if (err) {
		free(v);
		kc_post_run(&post, -ENOMEM);
		return kc_fail(comm, "kcoll: alltoallv: no memory to stage a layout, or an "
			       "element of 2 GiB or more in one");
	}
	/* libcoll copies the arrays at submission. */
	err = coll_alltoallv(c.kc, post.tmp2 ? post.tmp2 : sb, v, v + n,
			     post.tmp ? post.tmp : rb, v + 2 * n, v + 3 * n, COLL_UINT8, &k);
	free(v);
	return kc_done(comm, c.k, &k, err, req, &post);
}

/* Barrier: no data, decided on the communicator alone. */
static int kc_barrier(MPI_Comm comm, MPI_Request *req)
{
	struct kc_check a = { .kind = KC_NOTYPE };
	struct kc_call c;
	coll_request_t *k = NULL;

	if (kc_route(KC_BARRIER, NB(req), comm, &a, &c))
		return req ? PMPI_Ibarrier(comm, req) : PMPI_Barrier(comm);
	return kc_done(comm, c.k, &k, coll_barrier(c.kc, &k), req, NULL);
}

/* ------------------------------------------------------- MPI entries */

int MPI_Init(int *argc, char ***argv)
{
	int ret = PMPI_Init(argc, argv);

	if (ret == MPI_SUCCESS)
		kc_init();
	return ret;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int ret = PMPI_Init_thread(argc, argv, required, provided);

	if (ret == MPI_SUCCESS)
		kc_init();
	return ret;
}

static void kc_report(void)
{
	static long long sum[2][KC_NOPS][KC_NWHY];
	int rank = 0, size = 1, nb, op, w;

	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	PMPI_Reduce(kc_count, sum, 2 * KC_NOPS * KC_NWHY, MPI_LONG_LONG, MPI_SUM, 0,
		    MPI_COMM_WORLD);
	if (rank)
		return;
	fprintf(stderr, "kcoll-mpi: calls of %d ranks (%s)\n", size,
		!kc_enabled ? "KCOLL_MPI=0" : kc_have_module ? "kcoll module loaded" :
		"no kcoll module here");
	for (nb = 0; nb < 2; nb++)
		for (op = 0; op < KC_NOPS; op++) {
			char why[512] = "";
			long long fb = 0;
			size_t n = 0;

			for (w = 1; w < KC_NWHY; w++) {
				fb += sum[nb][op][w];
				if (sum[nb][op][w] && n < sizeof(why))
					n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%s %lld",
							      n ? ", " : "", kc_why_names[w],
							      sum[nb][op][w]);
			}
			if (!fb && !sum[nb][op][KC_ROUTED])
				continue;
			fprintf(stderr, "kcoll-mpi: %s%s: %lld routed, %lld fell back%s%s%s\n",
				nb ? "i" : "", kc_op_names[op], sum[nb][op][KC_ROUTED], fb,
				fb ? " (" : "", why, fb ? ")" : "");
		}
}

int MPI_Finalize(void)
{
	kc_init();
	if (kc_verbose)
		kc_report();
	return PMPI_Finalize();
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	return kc_allreduce(sb, rb, count, dt, op, comm, NULL);
}

int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm, MPI_Request *req)
{
	return kc_allreduce(sb, rb, count, dt, op, comm, req);
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
	       MPI_Comm comm)
{
	return kc_reduce(sb, rb, count, dt, op, root, comm, NULL);
}

int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root,
		MPI_Comm comm, MPI_Request *req)
{
	return kc_reduce(sb, rb, count, dt, op, root, comm, req);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	return kc_bcast(buf, count, dt, root, comm, NULL);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
	       MPI_Request *req)
{
	return kc_bcast(buf, count, dt, root, comm, req);
}

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		  MPI_Comm comm)
{
	return kc_allgather(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		   MPI_Comm comm, MPI_Request *req)
{
	return kc_allgather(sb, sc, st, rb, rc, rt, comm, req);
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype dt, MPI_Op op,
			     MPI_Comm comm)
{
	return kc_rs(KC_REDUCE_SCATTER_BLOCK, sb, rb, rc, dt, op, comm, NULL, 0, NULL);
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype dt, MPI_Op op,
			      MPI_Comm comm, MPI_Request *req)
{
	return kc_rs(KC_REDUCE_SCATTER_BLOCK, sb, rb, rc, dt, op, comm, req, 0, NULL);
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
		       MPI_Op op, MPI_Comm comm)
{
	return kc_rs_v(sb, rb, rcounts, dt, op, comm, NULL);
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcounts[], MPI_Datatype dt,
			MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	return kc_rs_v(sb, rb, rcounts, dt, op, comm, req);
}

int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		int root, MPI_Comm comm)
{
	return kc_rooted(0, sb, sc, st, rb, rc, rt, root, comm, NULL);
}

int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		 int root, MPI_Comm comm, MPI_Request *req)
{
	return kc_rooted(0, sb, sc, st, rb, rc, rt, root, comm, req);
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
	       int root, MPI_Comm comm)
{
	return kc_rooted(1, sb, sc, st, rb, rc, rt, root, comm, NULL);
}

int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		int root, MPI_Comm comm, MPI_Request *req)
{
	return kc_rooted(1, sb, sc, st, rb, rc, rt, root, comm, req);
}

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		 MPI_Comm comm)
{
	return kc_alltoall(sb, sc, st, rb, rc, rt, comm, NULL);
}

int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
		  MPI_Comm comm, MPI_Request *req)
{
	return kc_alltoall(sb, sc, st, rb, rc, rt, comm, req);
}

int MPI_Alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
		  const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
	return kc_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, NULL);
}

int MPI_Ialltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
		   const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm,
		   MPI_Request *req)
{
	return kc_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req);
}

int MPI_Barrier(MPI_Comm comm)
{
	return kc_barrier(comm, NULL);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	return kc_barrier(comm, req);
}

/*
 * Completion.  Ours are looked at (coll_test, and completed if done)
 * before MPI completes everything; a call that waits alternates looking
 * at ours with PMPI_Test* (MPI's progress) until it would return, then
 * the PMPI_Wait* itself.  Without a request of ours in the call, PMPI
 * directly.
 */

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	unsigned int spins = 0;
	int flag = 0, ret;

	while (kc_drive(1, req)) {
		ret = PMPI_Test(req, &flag, st);
		if (ret != MPI_SUCCESS || flag)
			return ret;
		kc_idle(1, req, &spins);
	}
	return PMPI_Wait(req, st);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
	kc_drive(1, req);
	return PMPI_Test(req, flag, st);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
	unsigned int spins = 0;
	int flag = 0, ret;

	while (kc_drive(n, reqs)) {
		ret = PMPI_Testall(n, reqs, &flag, sts);
		if (ret != MPI_SUCCESS || flag)
			return ret;
		kc_idle(n, reqs, &spins);
	}
	return PMPI_Waitall(n, reqs, sts);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
	kc_drive(n, reqs);
	return PMPI_Testall(n, reqs, flag, sts);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
	unsigned int spins = 0;
	int flag = 0, ret;

	while (kc_drive(n, reqs)) {
		ret = PMPI_Testany(n, reqs, idx, &flag, st);
		if (ret != MPI_SUCCESS || flag)
			return ret;
		kc_idle(n, reqs, &spins);
	}
	return PMPI_Waitany(n, reqs, idx, st);
}

int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
	kc_drive(n, reqs);
	return PMPI_Testany(n, reqs, idx, flag, st);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	unsigned int spins = 0;
	int ret;

	while (kc_drive(n, reqs)) {
		ret = PMPI_Testsome(n, reqs, outcount, idx, sts);
		if (ret != MPI_SUCCESS || *outcount)
			return ret;
		kc_idle(n, reqs, &spins);
	}
	return PMPI_Waitsome(n, reqs, outcount, idx, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
	kc_drive(n, reqs);
	return PMPI_Testsome(n, reqs, outcount, idx, sts);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
	kc_drive(1, &req);
	return PMPI_Request_get_status(req, flag, st);
}

/*
 * MPI_Cancel and MPI_Request_free of a nonblocking collective's request
 * are erroneous (MPI 3.1, 5.12); both MPIs refuse them with an error
 * raised on MPI_COMM_WORLD, the request untouched and still to be
 * completed: Open MPI with MPI_ERR_REQUEST for both, MPICH with
 * MPI_ERR_INTERN (cancel) and MPI_ERR_OTHER (free).  Ours do the same.
 */
#ifdef OPEN_MPI
#define KC_ERR_CANCEL	MPI_ERR_REQUEST
#define KC_ERR_FREE	MPI_ERR_REQUEST
#else
#define KC_ERR_CANCEL	MPI_ERR_INTERN
#define KC_ERR_FREE	MPI_ERR_OTHER
#endif

int MPI_Cancel(MPI_Request *req)
{
	if (req && kc_req_find(*req)) {
		PMPI_Comm_call_errhandler(MPI_COMM_WORLD, KC_ERR_CANCEL);
		return KC_ERR_CANCEL;
	}
	return PMPI_Cancel(req);
}

int MPI_Request_free(MPI_Request *req)
{
	if (req && kc_req_find(*req)) {
		PMPI_Comm_call_errhandler(MPI_COMM_WORLD, KC_ERR_FREE);
		return KC_ERR_FREE;
	}
	return PMPI_Request_free(req);
}
