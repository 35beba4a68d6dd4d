// SPDX-License-Identifier: GPL-2.0
/*
 * The MPI test program of libcoll-mpi: every collective the library
 * intercepts, blocking and nonblocking, on several datatypes and ops, in
 * place and not, on MPI_COMM_WORLD, a dup, communicators split by parity
 * and by reversed key, many communicators alive at once and one freed and
 * made again 100 times; also what must fall back (a vector datatype, a
 * user op, MAXLOC, unequal ReduceScatter counts, a derived type in a
 * reduction); Gather, Scatter, Bcast, Allgather, Alltoall and Alltoallv
 * with layouts that differ between ranks (layouts()); and the requests of
 * nonblocking collectives mixed with point-to-point ones in every
 * completion call (requests()).
 *
 * Every result is checked against the value computed here (the data are
 * small integers, so every sum is exact in every type and in any order),
 * and its bytes are hashed into OUT.RANK (argv[1]): two runs, with and
 * without the preload, must write identical files.  Rank 0 prints
 * "N passed, M failed" for all ranks; the exit status is 1 if any failed.
 *
 *   mpirun -np 2 mpi_coll_test /tmp/out [--quick]
 *
 * --mismatch instead runs the negative test (only meaningful over kcoll:
 * plain MPI leaves it undefined): every rank calls MPI_Allreduce on a dup
 * of MPI_COMM_WORLD with a different count, under an error handler of
 * the test's; every rank must get an error, through that handler, whose
 * MPI_Error_string names kcoll; then MPI_Iallreduce so, whose MPI_Wait
 * must return such an error; and MPI_COMM_WORLD must still work.
 * Without /dev/kcoll or with KCOLL_MPI=0 only the matching calls run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static int rank, size, passed, failed;
static FILE *out;
static int reps = 100;

#define COUNT 37

struct dt {
	MPI_Datatype t;
	const char *name;
	size_t sz;
};

static struct dt dts[5];

static void dts_init(void)
{
	dts[0] = (struct dt){ MPI_FLOAT, "float", sizeof(float) };
	dts[1] = (struct dt){ MPI_DOUBLE, "double", sizeof(double) };
	dts[2] = (struct dt){ MPI_INT, "int", sizeof(int) };
	dts[3] = (struct dt){ MPI_INT64_T, "int64", sizeof(int64_t) };
	dts[4] = (struct dt){ MPI_UNSIGNED_CHAR, "uchar", 1 };
}

static void put(const struct dt *d, void *b, size_t i, double v)
{
	if (d->t == MPI_FLOAT)
		((float *)b)[i] = (float)v;
	else if (d->t == MPI_DOUBLE)
		((double *)b)[i] = v;
	else if (d->t == MPI_INT)
		((int *)b)[i] = (int)v;
	else if (d->t == MPI_INT64_T)
		((int64_t *)b)[i] = (int64_t)v;
	else
		((unsigned char *)b)[i] = (unsigned char)v;
}

static double get(const struct dt *d, const void *b, size_t i)
{
	if (d->t == MPI_FLOAT)
		return ((const float *)b)[i];
	if (d->t == MPI_DOUBLE)
		return ((const double *)b)[i];
	if (d->t == MPI_INT)
		return ((const int *)b)[i];
	if (d->t == MPI_INT64_T)
		return (double)((const int64_t *)b)[i];
	return ((const unsigned char *)b)[i];
}

/*
 * Rank r's element i: small, positive, exact everywhere.  For PROD
 * (prodmode) ones and twos, so that the product of any number of ranks
 * stays exact in float and int.
 */
static int prodmode;

static double val(int r, size_t i)
{
	if (prodmode)
		return (r + (int)i) % 3 ? 1.0 : 2.0;
	return (double)((r + 1) * (int)(i % 5 + 1));
}

static uint64_t hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static void check(const char *what, const char *comm, int ok, const void *buf, size_t len)
{
	fprintf(out, "%-40s %-10s %s %016llx\n", what, comm, ok ? "ok" : "FAIL",
		(unsigned long long)(buf ? hash(buf, len) : 0));
	if (ok) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "rank %d: FAIL %s on %s\n", rank, what, comm);
	}
}

enum { OSUM, OMAX, OMIN, OPROD };
static const char *const opnames[] = { "sum", "max", "min", "prod" };

static MPI_Op mop(int o)
{
	return o == OSUM ? MPI_SUM : o == OMAX ? MPI_MAX : o == OMIN ? MPI_MIN : MPI_PROD;
}

/* The reduction of element i over the ranks of a communicator of n ranks. */
static double red(int o, int n, size_t i, const int *world_of)
{
	double a = val(world_of[0], i);
	int r;

	for (r = 1; r < n; r++) {
		double v = val(world_of[r], i);

		a = o == OSUM ? a + v : o == OMAX ? (v > a ? v : a) : o == OMIN ? (v < a ? v : a) :
		    a * v;
	}
	return a;
}

/* Everything on one communicator; @world_of[r]: world rank of its rank r. */
static void run_comm(MPI_Comm comm, const char *cname, int nb)
{
	int me, n, d, o, root, i, j, *world_of, *cnt, *dsp, *rcnt, *rdsp;
	char what[96];
	unsigned char *s, *r, *big;
	MPI_Request req;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	world_of = malloc(n * sizeof(int));
	MPI_Allgather(&rank, 1, MPI_INT, world_of, 1, MPI_INT, comm);
	s = malloc(8 * COUNT * n);
	r = malloc(8 * COUNT * n);
	big = malloc(8 * COUNT * n);
	cnt = malloc(4 * n * sizeof(int));
	dsp = cnt + n;
	rcnt = cnt + 2 * n;
	rdsp = cnt + 3 * n;

#define NBWAIT() do { if (nb) MPI_Wait(&req, MPI_STATUS_IGNORE); } while (0)
#define CALL(blocking, nonblocking) do { if (nb) nonblocking; else blocking; NBWAIT(); } while (0)

	for (d = 0; d < 5; d++) {
		const struct dt *t = &dts[d];
		size_t es = t->sz;

		for (o = 0; o < 4; o++) {
			int ok = 1;

			if (t->t == MPI_UNSIGNED_CHAR && o == OPROD && n > 7)
				continue;
			prodmode = o == OPROD;
			/* AllReduce, out of place and in place */
			for (i = 0; i < COUNT; i++)
				put(t, s, i, val(rank, i));
			memset(r, 0xee, COUNT * es);
			CALL(MPI_Allreduce(s, r, COUNT, t->t, mop(o), comm),
			     MPI_Iallreduce(s, r, COUNT, t->t, mop(o), comm, &req));
			for (i = 0; i < COUNT; i++)
				ok &= get(t, r, i) == red(o, n, i, world_of);
			snprintf(what, sizeof(what), "%sallreduce %s %s", nb ? "i" : "", t->name,
				 opnames[o]);
			check(what, cname, ok, r, COUNT * es);
			CALL(MPI_Allreduce(MPI_IN_PLACE, s, COUNT, t->t, mop(o), comm),
			     MPI_Iallreduce(MPI_IN_PLACE, s, COUNT, t->t, mop(o), comm, &req));
			ok = !memcmp(s, r, COUNT * es);
			snprintf(what, sizeof(what), "%sallreduce inplace %s %s", nb ? "i" : "",
				 t->name, opnames[o]);
			check(what, cname, ok, s, COUNT * es);
			/* Reduce to the last rank, then in place there */
			root = n - 1;
			for (i = 0; i < COUNT; i++)
				put(t, s, i, val(rank, i));
			memset(r, 0xee, COUNT * es);
			CALL(MPI_Reduce(s, r, COUNT, t->t, mop(o), root, comm),
			     MPI_Ireduce(s, r, COUNT, t->t, mop(o), root, comm, &req));
			ok = 1;
			if (me == root)
				for (i = 0; i < COUNT; i++)
					ok &= get(t, r, i) == red(o, n, i, world_of);
			snprintf(what, sizeof(what), "%sreduce %s %s", nb ? "i" : "", t->name,
				 opnames[o]);
			check(what, cname, ok, me == root ? r : NULL, COUNT * es);
			CALL(MPI_Reduce(me == root ? MPI_IN_PLACE : s, s, COUNT, t->t, mop(o), root,
					comm),
			     MPI_Ireduce(me == root ? MPI_IN_PLACE : s, s, COUNT, t->t, mop(o), root,
					 comm, &req));
			ok = me != root || !memcmp(s, r, COUNT * es);
			snprintf(what, sizeof(what), "%sreduce inplace %s %s", nb ? "i" : "", t->name,
				 opnames[o]);
			check(what, cname, ok, me == root ? s : NULL, COUNT * es);
			/* ReduceScatter (block and equal counts), and in place */
			for (i = 0; i < COUNT * n; i++)
				put(t, s, i, val(rank, i));
			CALL(MPI_Reduce_scatter_block(s, r, COUNT, t->t, mop(o), comm),
			     MPI_Ireduce_scatter_block(s, r, COUNT, t->t, mop(o), comm, &req));
			ok = 1;
			for (i = 0; i < COUNT; i++)
				ok &= get(t, r, i) == red(o, n, me * COUNT + i, world_of);
			snprintf(what, sizeof(what), "%sreduce_scatter_block %s %s", nb ? "i" : "",
				 t->name, opnames[o]);
			check(what, cname, ok, r, COUNT * es);
			CALL(MPI_Reduce_scatter_block(MPI_IN_PLACE, s, COUNT, t->t, mop(o), comm),
			     MPI_Ireduce_scatter_block(MPI_IN_PLACE, s, COUNT, t->t, mop(o), comm,
						       &req));
			ok = !memcmp(s, r, COUNT * es);
			snprintf(what, sizeof(what), "%sreduce_scatter_block inplace %s %s",
				 nb ? "i" : "", t->name, opnames[o]);
			check(what, cname, ok, s, COUNT * es);
			for (i = 0; i < n; i++)
				rcnt[i] = COUNT;
			for (i = 0; i < COUNT * n; i++)
				put(t, s, i, val(rank, i));
			memset(r, 0xee, COUNT * es);
			CALL(MPI_Reduce_scatter(s, r, rcnt, t->t, mop(o), comm),
			     MPI_Ireduce_scatter(s, r, rcnt, t->t, mop(o), comm, &req));
			ok = 1;
			for (i = 0; i < COUNT; i++)
				ok &= get(t, r, i) == red(o, n, me * COUNT + i, world_of);
			snprintf(what, sizeof(what), "%sreduce_scatter %s %s", nb ? "i" : "",
				 t->name, opnames[o]);
			check(what, cname, ok, r, COUNT * es);
		}
		prodmode = 0;
		/* Bcast from 0 and from the last rank */
		for (root = 0; root < n; root += n - 1 ? n - 1 : 1) {
			int ok = 1;

			for (i = 0; i < COUNT; i++)
				put(t, s, i, me == root ? val(rank, i) : 0);
			CALL(MPI_Bcast(s, COUNT, t->t, root, comm),
			     MPI_Ibcast(s, COUNT, t->t, root, comm, &req));
			for (i = 0; i < COUNT; i++)
				ok &= get(t, s, i) == val(world_of[root], i);
			snprintf(what, sizeof(what), "%sbcast root %d %s", nb ? "i" : "", root,
				 t->name);
			check(what, cname, ok, s, COUNT * es);
		}
		/* AllGather, and in place */
		{
			int ok = 1;

			for (i = 0; i < COUNT; i++)
				put(t, s, i, val(rank, i));
			CALL(MPI_Allgather(s, COUNT, t->t, r, COUNT, t->t, comm),
			     MPI_Iallgather(s, COUNT, t->t, r, COUNT, t->t, comm, &req));
			for (j = 0; j < n; j++)
				for (i = 0; i < COUNT; i++)
					ok &= get(t, r, j * COUNT + i) == val(world_of[j], i);
			snprintf(what, sizeof(what), "%sallgather %s", nb ? "i" : "", t->name);
			check(what, cname, ok, r, COUNT * n * es);
			memset(big, 0, COUNT * n * es);
			for (i = 0; i < COUNT; i++)
				put(t, big, me * COUNT + i, val(rank, i));
			CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, COUNT, t->t, comm),
			     MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, COUNT, t->t, comm,
					    &req));
			ok = !memcmp(big, r, COUNT * n * es);
			snprintf(what, sizeof(what), "%sallgather inplace %s", nb ? "i" : "", t->name);
			check(what, cname, ok, big, COUNT * n * es);
		}
		/* Gather and Scatter at root 0 and the last, and in place at the root */
		for (root = 0; root < n; root += n - 1 ? n - 1 : 1) {
			int ok = 1;

			for (i = 0; i < COUNT; i++)
				put(t, s, i, val(rank, i));
			memset(r, 0xee, COUNT * n * es);
			CALL(MPI_Gather(s, COUNT, t->t, r, COUNT, t->t, root, comm),
			     MPI_Igather(s, COUNT, t->t, r, COUNT, t->t, root, comm, &req));
			if (me == root)
				for (j = 0; j < n; j++)
					for (i = 0; i < COUNT; i++)
						ok &= get(t, r, j * COUNT + i) == val(world_of[j], i);
			snprintf(what, sizeof(what), "%sgather root %d %s", nb ? "i" : "", root,
				 t->name);
			check(what, cname, ok, me == root ? r : NULL, COUNT * n * es);
			if (me == root) {
				memset(big, 0, COUNT * n * es);
				for (i = 0; i < COUNT; i++)
					put(t, big, me * COUNT + i, val(rank, i));
			}
			CALL(MPI_Gather(me == root ? MPI_IN_PLACE : s, COUNT, t->t, big, COUNT, t->t,
					root, comm),
			     MPI_Igather(me == root ? MPI_IN_PLACE : s, COUNT, t->t, big, COUNT, t->t,
					 root, comm, &req));
			ok = me != root || !memcmp(big, r, COUNT * n * es);
			snprintf(what, sizeof(what), "%sgather inplace root %d %s", nb ? "i" : "",
				 root, t->name);
			check(what, cname, ok, me == root ? big : NULL, COUNT * n * es);
			/* Scatter what the root gathered */
			memset(s, 0xee, COUNT * es);
			CALL(MPI_Scatter(r, COUNT, t->t, s, COUNT, t->t, root, comm),
			     MPI_Iscatter(r, COUNT, t->t, s, COUNT, t->t, root, comm, &req));
			ok = 1;
			for (i = 0; i < COUNT; i++)
				ok &= get(t, s, i) == val(rank, i);
			snprintf(what, sizeof(what), "%sscatter root %d %s", nb ? "i" : "", root,
				 t->name);
			check(what, cname, ok, s, COUNT * es);
			CALL(MPI_Scatter(r, COUNT, t->t, me == root ? MPI_IN_PLACE : s, COUNT, t->t,
					 root, comm),
			     MPI_Iscatter(r, COUNT, t->t, me == root ? MPI_IN_PLACE : s, COUNT, t->t,
					  root, comm, &req));
			ok = 1;
			for (i = 0; i < COUNT; i++)
				ok &= get(t, me == root ? r + me * COUNT * es : s, i) == val(rank, i);
			snprintf(what, sizeof(what), "%sscatter inplace root %d %s", nb ? "i" : "",
				 root, t->name);
			check(what, cname, ok, r, me == root ? COUNT * n * es : 0);
		}
		/* AlltoAll, in place, AlltoAllv */
		{
			int ok = 1, tot = 0, rtot = 0;

			for (j = 0; j < n; j++)
				for (i = 0; i < COUNT; i++)
					put(t, s, j * COUNT + i, val(rank, j * COUNT + i));
			CALL(MPI_Alltoall(s, COUNT, t->t, r, COUNT, t->t, comm),
			     MPI_Ialltoall(s, COUNT, t->t, r, COUNT, t->t, comm, &req));
			for (j = 0; j < n; j++)
				for (i = 0; i < COUNT; i++)
					ok &= get(t, r, j * COUNT + i) ==
					      val(world_of[j], me * COUNT + i);
			snprintf(what, sizeof(what), "%salltoall %s", nb ? "i" : "", t->name);
			check(what, cname, ok, r, COUNT * n * es);
			CALL(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, COUNT, t->t, comm),
			     MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, COUNT, t->t, comm,
					   &req));
			ok = !memcmp(s, r, COUNT * n * es);
			snprintf(what, sizeof(what), "%salltoall inplace %s", nb ? "i" : "", t->name);
			check(what, cname, ok, s, COUNT * n * es);
			/* rank a sends b: (a + b) % 4 + 1 elements */
			for (j = 0; j < n; j++) {
				cnt[j] = (world_of[me] + world_of[j]) % 4 + 1;
				dsp[j] = tot;
				tot += cnt[j];
				rcnt[j] = (world_of[j] + world_of[me]) % 4 + 1;
				rdsp[j] = rtot;
				rtot += rcnt[j];
			}
			for (i = 0; i < tot; i++)
				put(t, s, i, val(rank, i));
			memset(r, 0xee, rtot * es);
			CALL(MPI_Alltoallv(s, cnt, dsp, t->t, r, rcnt, rdsp, t->t, comm),
			     MPI_Ialltoallv(s, cnt, dsp, t->t, r, rcnt, rdsp, t->t, comm, &req));
			ok = 1;
			for (j = 0; j < n; j++) {
				/* what rank j put for me: its elements at its displacement of me */
				int off = 0, k;

				for (k = 0; k < me; k++)
					off += (world_of[j] + world_of[k]) % 4 + 1;
				for (i = 0; i < rcnt[j]; i++)
					ok &= get(t, r, rdsp[j] + i) == val(world_of[j], off + i);
			}
			snprintf(what, sizeof(what), "%salltoallv %s", nb ? "i" : "", t->name);
			check(what, cname, ok, r, rtot * es);
		}
	}
	CALL(MPI_Barrier(comm), MPI_Ibarrier(comm, &req));
	check(nb ? "ibarrier" : "barrier", cname, 1, NULL, 0);
	free(world_of);
	free(s);
	free(r);
	free(big);
	free(cnt);
}

/*
 * Layouts of one unit of COUNT ints: COUNT MPI_INTs (kind 0), one
 * contiguous type of them (1), one strided vector of them, every other
 * int, resized to 2 * COUNT ints (2).  Int @i of unit @u of a buffer in
 * kind @k is at lat(k, buf, u, i); a strided unit's gaps stay -7.
 */
static MPI_Datatype lt_cont, lt_vec;

static int *lat(int k, int *buf, size_t u, int i)
{
	return k == 2 ? &buf[u * 2 * COUNT + 2 * i] : &buf[u * COUNT + i];
}

static MPI_Datatype ltype(int k)
{
	return k == 2 ? lt_vec : k ? lt_cont : MPI_INT;
}

/* @units units in kind @k as a count of ltype(k) */
static int lcount(int k, int units)
{
	return k ? units : units * COUNT;
}

/* @buf (@len ints) all -7, but @units units of kind @k valued @v(@a, unit, int) */
static void lfill(int k, int *buf, size_t len, int units, int (*v)(int, int, int), int a)
{
	size_t i;
	int u, j;

	for (i = 0; i < len; i++)
		buf[i] = -7;
	for (u = 0; u < units; u++)
		for (j = 0; j < COUNT; j++)
			*lat(k, buf, (size_t)u, j) = v(a, u, j);
}

/* unit u of rank a's data */
static int lv_rank(int a, int u, int i)
{
	return (a + 1) * 100000 + u * 100 + i;
}

/*
 * Bcast, Allgather, Alltoall and Alltoallv whose layouts differ between
 * ranks: the even ranks MPI_INT, the odd ones a contiguous type (mode 0)
 * or the strided vector (modes 1 and 2, 2 in place where MPI has it);
 * the root of a Bcast a derived type whatever its parity.  Each result
 * against the buffer it must be, gaps included.
 */
static void layouts_move(MPI_Comm comm, int nb, int m, int *a, int *b, int *e, size_t len)
{
	int me, n, root, j, u, k, kr, *cnt, *dsp, *rcnt, *rdsp, tot, rtot;
	MPI_Request req = MPI_REQUEST_NULL;
	static const char *const mname[] = { "contiguous", "vector", "vector inplace" };
	char what[96];

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	k = me % 2 ? (m ? 2 : 1) : 0;
	/* Bcast: the root's unit its value, the others' all -7 before */
	for (root = 0; root < n; root += n - 1 ? n - 1 : 1) {
		kr = me == root ? (m ? 2 : 1) : k;
		lfill(kr, a, len, me == root ? 1 : 0, lv_rank, root);
		CALL(MPI_Bcast(a, lcount(kr, 1), ltype(kr), root, comm),
		     MPI_Ibcast(a, lcount(kr, 1), ltype(kr), root, comm, &req));
		lfill(kr, e, len, 1, lv_rank, root);
		snprintf(what, sizeof(what), "%sbcast root %d %s", nb ? "i" : "", root, mname[m]);
		check(what, "layouts", !memcmp(a, e, len * sizeof(int)), a, len * sizeof(int));
	}
	/* Allgather: unit j of the result rank j's (in place: its own there already) */
	lfill(k, a, len, 1, lv_rank, me);
	for (j = 0; j < (int)len; j++)
		b[j] = -7;
	for (j = 0; m == 2 && j < COUNT; j++)
		*lat(k, b, (size_t)me, j) = lv_rank(me, 0, j);
	CALL(MPI_Allgather(m == 2 ? MPI_IN_PLACE : a, lcount(k, 1), ltype(k), b, lcount(k, 1),
			   ltype(k), comm),
	     MPI_Iallgather(m == 2 ? MPI_IN_PLACE : a, lcount(k, 1), ltype(k), b, lcount(k, 1),
			    ltype(k), comm, &req));
	for (j = 0; j < (int)len; j++)
		e[j] = -7;
	for (j = 0; j < n; j++)
		for (u = 0; u < COUNT; u++)
			*lat(k, e, (size_t)j, u) = lv_rank(j, 0, u);
	snprintf(what, sizeof(what), "%sallgather %s", nb ? "i" : "", mname[m]);
	check(what, "layouts", !memcmp(b, e, len * sizeof(int)), b, len * sizeof(int));
	/* Alltoall: unit j of what rank me sends is lv_rank(me, j); of what it gets, lv_rank(j, me) */
	lfill(k, a, len, n, lv_rank, me);
	if (m == 2)
		memcpy(b, a, len * sizeof(int));
	CALL(MPI_Alltoall(m == 2 ? MPI_IN_PLACE : a, lcount(k, 1), ltype(k), b, lcount(k, 1),
			  ltype(k), comm),
	     MPI_Ialltoall(m == 2 ? MPI_IN_PLACE : a, lcount(k, 1), ltype(k), b, lcount(k, 1),
			   ltype(k), comm, &req));
	for (j = 0; j < (int)len; j++)
		e[j] = -7;
	for (j = 0; j < n; j++)
		for (u = 0; u < COUNT; u++)
			*lat(k, e, (size_t)j, u) = lv_rank(j, me, u);
	snprintf(what, sizeof(what), "%salltoall %s", nb ? "i" : "", mname[m]);
	check(what, "layouts", !memcmp(b, e, len * sizeof(int)), b, len * sizeof(int));
	if (m == 2)
		return;
	/*
	 * Alltoallv: rank a sends b (a + b) % 3 + 1 units, the blocks in
	 * reverse peer order; unit u of a's block for b is
	 * lv_rank(a, 10 * b + u).
	 */
	cnt = malloc(4 * (size_t)n * sizeof(int));
	dsp = cnt + n;
	rcnt = cnt + 2 * n;
	rdsp = cnt + 3 * n;
	for (j = n - 1, tot = rtot = 0; j >= 0; j--) {
		cnt[j] = (me + j) % 3 + 1;
		dsp[j] = tot;
		tot += cnt[j];
		rcnt[j] = (j + me) % 3 + 1;
		rdsp[j] = rtot;
		rtot += rcnt[j];
	}
	for (j = 0; j < (int)len; j++)
		a[j] = b[j] = e[j] = -7;
	for (j = 0; j < n; j++)
		for (u = 0; u < cnt[j]; u++)
			for (kr = 0; kr < COUNT; kr++) {
				*lat(k, a, (size_t)(dsp[j] + u), kr) = lv_rank(me, 10 * j + u, kr);
				*lat(k, e, (size_t)(rdsp[j] + u), kr) = lv_rank(j, 10 * me + u, kr);
			}
	for (j = 0; j < 4 * n; j++)	/* units as counts and displacements of the type */
		cnt[j] = lcount(k, cnt[j]);
	CALL(MPI_Alltoallv(a, cnt, dsp, ltype(k), b, rcnt, rdsp, ltype(k), comm),
	     MPI_Ialltoallv(a, cnt, dsp, ltype(k), b, rcnt, rdsp, ltype(k), comm, &req));
	snprintf(what, sizeof(what), "%salltoallv %s", nb ? "i" : "", mname[m]);
	check(what, "layouts", !memcmp(b, e, len * sizeof(int)), b, len * sizeof(int));
	free(cnt);
}

/*
 * Gather and Scatter whose layouts differ between ranks (MPI wants only
 * the signatures to match): the root's receive (gather) or send
 * (scatter) type a contiguous type of COUNT ints or a strided vector
 * (every other int, resized to 2 * COUNT), the odd ranks' own side the
 * strided vector too, and in place at the root; blocking and not.
 */
static void layouts(MPI_Comm comm)
{
	int me, n, root, i, j, ok, m, nb, *own, *big, *own3;
	size_t len;
	MPI_Datatype cont, vec, rvec;
	MPI_Request req = MPI_REQUEST_NULL;
	static const char *const mname[] = { "contiguous", "vector", "vector inplace" };
	char what[96];

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	own = malloc(2 * COUNT * sizeof(int));
	big = malloc(2 * COUNT * (size_t)n * sizeof(int));
	len = 3 * (size_t)n * 2 * COUNT;	/* Alltoallv's 3 units per peer at most */
	own3 = malloc(3 * len * sizeof(int));
	MPI_Type_contiguous(COUNT, MPI_INT, &cont);
	MPI_Type_commit(&cont);
	MPI_Type_vector(COUNT, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_create_resized(vec, 0, 2 * COUNT * sizeof(int), &rvec);
	MPI_Type_commit(&rvec);
#define LVAL(r, i) (((r) + 1) * 1000 + (i))
	for (nb = 0; nb < 2; nb++)
	for (root = 0; root < n; root += n - 1 ? n - 1 : 1)
	for (m = 0; m < 3; m++) {
		/* Gather: own block at own (odd ranks strided, modes 1 and 2) */
		int strided = m && me % 2;
		int *rp;

		for (i = 0; i < 2 * COUNT; i++)
			own[i] = strided ? (i % 2 ? -7 : LVAL(me, i / 2)) : i < COUNT ? LVAL(me, i) : -7;
		for (i = 0; i < 2 * COUNT * n; i++)
			big[i] = -7;
		if (m == 2 && me == root)
			for (i = 0; i < COUNT; i++)
				big[me * 2 * COUNT + 2 * i] = LVAL(me, i);
		CALL(MPI_Gather(m == 2 && me == root ? MPI_IN_PLACE : own, strided ? 1 : COUNT,
				strided ? vec : MPI_INT, big, 1, m ? rvec : cont, root, comm),
		     MPI_Igather(m == 2 && me == root ? MPI_IN_PLACE : own, strided ? 1 : COUNT,
				 strided ? vec : MPI_INT, big, 1, m ? rvec : cont, root, comm, &req));
		ok = 1;
		for (j = 0; me == root && j < n; j++)
			for (i = 0; i < COUNT; i++) {
				rp = m ? &big[j * 2 * COUNT + 2 * i] : &big[j * COUNT + i];
				ok &= *rp == LVAL(j, i) && (!m || rp[1] == -7);
			}
		snprintf(what, sizeof(what), "%sgather root %d %s", nb ? "i" : "", root, mname[m]);
		check(what, "layouts", ok, me == root ? big : NULL,
		      2 * COUNT * (size_t)n * sizeof(int));
		/* Scatter it back: the root's send type that receive type */
		for (i = 0; i < 2 * COUNT; i++)
			own[i] = -7;
		if (me == root && m != 1)
			for (i = 0; i < COUNT; i++)	/* in place: its block must stay */
				(m ? big + me * 2 * COUNT : big + me * COUNT)[m ? 2 * i : i] =
					LVAL(me, i);
		CALL(MPI_Scatter(big, 1, m ? rvec : cont, m == 2 && me == root ? MPI_IN_PLACE : own,
				 strided ? 1 : COUNT, strided ? vec : MPI_INT, root, comm),
		     MPI_Iscatter(big, 1, m ? rvec : cont, m == 2 && me == root ? MPI_IN_PLACE : own,
				  strided ? 1 : COUNT, strided ? vec : MPI_INT, root, comm, &req));
		ok = 1;
		for (i = 0; i < COUNT; i++) {
			if (m == 2 && me == root)
				ok &= big[me * 2 * COUNT + 2 * i] == LVAL(me, i);
			else if (strided)
				ok &= own[2 * i] == LVAL(me, i) && own[2 * i + 1] == -7;
			else
				ok &= own[i] == LVAL(me, i);
		}
		snprintf(what, sizeof(what), "%sscatter root %d %s", nb ? "i" : "", root, mname[m]);
		check(what, "layouts", ok, own, 2 * COUNT * sizeof(int));
	}
#undef LVAL
	lt_cont = cont;
	lt_vec = rvec;
	for (nb = 0; nb < 2; nb++)
		for (m = 0; m < 3; m++)
			layouts_move(comm, nb, m, own3, own3 + len, own3 + 2 * len, len);
	free(own3);
	MPI_Type_free(&rvec);
	MPI_Type_free(&vec);
	MPI_Type_free(&cont);
	free(own);
	free(big);
}

/* What must fall back, still computed right. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int i;

	(void)dt;
	for (i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static void fallbacks(MPI_Comm comm)
{
	int v[2 * COUNT], res[COUNT], i, ok, n, cnt[64];
	double c1[2 * COUNT], c2[2 * COUNT];
	struct { float v; int i; } fi = { (float)rank, rank }, fo;
	MPI_Datatype vec;
	MPI_Op op;

	MPI_Comm_size(comm, &n);
	/* a strided vector: every other int */
	MPI_Type_vector(COUNT, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (i = 0; i < 2 * COUNT; i++)
		v[i] = rank ? -1 : i;
	MPI_Bcast(v, 1, vec, 0, comm);
	ok = 1;
	for (i = 0; i < COUNT; i++)
		ok &= v[2 * i] == 2 * i && (rank == 0 || v[2 * i + 1] == -1);
	check("bcast vector datatype", "world", ok, v, sizeof(v));
	/* a type kcoll has not: complex, as pairs of doubles */
	for (i = 0; i < 2 * COUNT; i++)
		c1[i] = rank + i;
	MPI_Allreduce(c1, c2, COUNT, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
	ok = 1;
	for (i = 0; i < 2 * COUNT; i++)
		ok &= c2[i] == n * (n - 1) / 2 + n * i;
	check("allreduce complex", "world", ok, c2, sizeof(c2));
	MPI_Type_free(&vec);
	MPI_Op_create(user_sum, 1, &op);
	for (i = 0; i < COUNT; i++)
		v[i] = rank + i;
	MPI_Allreduce(v, res, COUNT, MPI_INT, op, comm);
	ok = 1;
	for (i = 0; i < COUNT; i++)
		ok &= res[i] == n * (n - 1) / 2 + n * i;
	check("allreduce user op", "world", ok, res, sizeof(res));
	MPI_Op_free(&op);
	MPI_Allreduce(&fi, &fo, 1, MPI_FLOAT_INT, MPI_MAXLOC, comm);
	check("allreduce maxloc", "world", fo.i == n - 1 && fo.v == (float)(n - 1), &fo,
	      sizeof(fo));
	/* unequal ReduceScatter counts */
	for (i = 0; i < n && i < 64; i++)
		cnt[i] = i + 1;
	for (i = 0; i < 2 * COUNT; i++)
		v[i] = 1;
	MPI_Reduce_scatter(v, res, cnt, MPI_INT, MPI_SUM, comm);
	ok = 1;
	for (i = 0; i < rank + 1; i++)
		ok &= res[i] == n;
	check("reduce_scatter unequal counts", "world", ok, res, (rank + 1) * sizeof(int));
	/* MPI_BOR: an op kcoll has not */
	for (i = 0; i < COUNT; i++)
		v[i] = 1 << rank;
	MPI_Allreduce(v, res, COUNT, MPI_INT, MPI_BOR, comm);
	check("allreduce bor", "world", res[0] == (1 << n) - 1, res, sizeof(res));
}

/*
 * Requests of nonblocking collectives mixed with MPI's own in one array:
 * [0] an MPI_Iallreduce (routed with the module), [1] an MPI_Irecv and
 * [2] an MPI_Isend with the partner rank (rank ^ 1; none for the last of
 * an odd number), large enough to need the receiver (rendezvous), so
 * that a completion call waiting on ours must still progress MPI's.
 */
#define RQ_BIG (64 * 1024)

/* MPI_STATUSES_IGNORE, which gcc sees as a zero-sized array under MPICH */
static MPI_Status *volatile sts_ignore;

struct rq {
	int x[COUNT], y[COUNT];
	int *sbuf, *rbuf;
	int partner;
	MPI_Request r[3];
};

static void rq_start(struct rq *q, int round)
{
	int i;

	q->partner = (rank ^ 1) < size ? rank ^ 1 : -1;
	for (i = 0; i < COUNT; i++) {
		q->x[i] = rank + i + round;
		q->y[i] = -1;
	}
	for (i = 0; i < RQ_BIG; i++) {
		q->sbuf[i] = rank * 3 + i + round;
		q->rbuf[i] = -1;
	}
	MPI_Iallreduce(q->x, q->y, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q->r[0]);
	q->r[1] = q->r[2] = MPI_REQUEST_NULL;
	if (q->partner >= 0) {
		MPI_Irecv(q->rbuf, RQ_BIG, MPI_INT, q->partner, 7, MPI_COMM_WORLD, &q->r[1]);
		MPI_Isend(q->sbuf, RQ_BIG, MPI_INT, q->partner, 7, MPI_COMM_WORLD, &q->r[2]);
	}
}

/* The results, and every request MPI_REQUEST_NULL. */
static void rq_check(struct rq *q, int round, const char *what, int ok)
{
	int i;

	for (i = 0; i < COUNT; i++)
		ok &= q->y[i] == size * (size - 1) / 2 + size * (i + round);
	for (i = 0; q->partner >= 0 && i < RQ_BIG; i++)
		ok &= q->rbuf[i] == q->partner * 3 + i + round;
	for (i = 0; i < 3; i++)
		ok &= q->r[i] == MPI_REQUEST_NULL;
	check(what, "requests", ok, q->y, sizeof(q->y));
}

/* The status of [1], the receive, when there is one. */
static int rq_recv_status(const struct rq *q, const MPI_Status *st)
{
	int n = -1;

	if (q->partner < 0)
		return 1;
	MPI_Get_count(st, MPI_INT, &n);
	return st->MPI_SOURCE == q->partner && st->MPI_TAG == 7 && n == RQ_BIG;
}

/* A collective's status: not cancelled (source, tag, count undefined). */
static int rq_coll_status(const MPI_Status *st)
{
	int c = 1;

	MPI_Test_cancelled(st, &c);
	return !c;
}

static void requests(void)
{
	struct rq q;
	MPI_Status sts[3], st;
	int ok, i, flag, idx, n, seen, round = 0, ids[3], rc, cls;
	char what[96];

	sts_ignore = MPI_STATUSES_IGNORE;
	q.sbuf = malloc(RQ_BIG * sizeof(int));
	q.rbuf = malloc(RQ_BIG * sizeof(int));

	/* Waitall, with statuses and without */
	rq_start(&q, ++round);
	ok = MPI_Waitall(3, q.r, sts) == MPI_SUCCESS;
	ok &= rq_coll_status(&sts[0]) && rq_recv_status(&q, &sts[1]);
	rq_check(&q, round, "waitall mixed, statuses", ok);
	rq_start(&q, ++round);
	ok = MPI_Waitall(3, q.r, sts_ignore) == MPI_SUCCESS;
	rq_check(&q, round, "waitall mixed, MPI_STATUSES_IGNORE", ok);

	/* Waitany until MPI_UNDEFINED: each index once */
	rq_start(&q, ++round);
	ok = 1;
	seen = 0;
	for (;;) {
		ok &= MPI_Waitany(3, q.r, &idx, &st) == MPI_SUCCESS;
		if (idx == MPI_UNDEFINED || !ok)
			break;
		ok &= !(seen & 1 << idx);
		seen |= 1 << idx;
		ok &= idx != 0 || rq_coll_status(&st);
		ok &= idx != 1 || rq_recv_status(&q, &st);
	}
	ok &= seen == (q.partner >= 0 ? 7 : 1);
	rq_check(&q, round, "waitany mixed", ok);

	/* Waitsome until MPI_UNDEFINED */
	rq_start(&q, ++round);
	ok = 1;
	seen = 0;
	for (;;) {
		ok &= MPI_Waitsome(3, q.r, &n, ids, sts) == MPI_SUCCESS;
		if (n == MPI_UNDEFINED || !ok)
			break;
		ok &= n > 0;
		for (i = 0; i < n; i++) {
			ok &= !(seen & 1 << ids[i]);
			seen |= 1 << ids[i];
			ok &= ids[i] != 0 || rq_coll_status(&sts[i]);
			ok &= ids[i] != 1 || rq_recv_status(&q, &sts[i]);
		}
	}
	ok &= seen == (q.partner >= 0 ? 7 : 1);
	rq_check(&q, round, "waitsome mixed", ok);

	/* Testall, Testany, Testsome, Test: polled until done */
	rq_start(&q, ++round);
	ok = 1;
	flag = 0;
	while (ok && !flag)
		ok &= MPI_Testall(3, q.r, &flag, sts) == MPI_SUCCESS;
	ok &= rq_coll_status(&sts[0]) && rq_recv_status(&q, &sts[1]);
	rq_check(&q, round, "testall mixed", ok);
	rq_start(&q, ++round);
	ok = 1;
	seen = 0;
	for (;;) {
		ok &= MPI_Testany(3, q.r, &idx, &flag, &st) == MPI_SUCCESS;
		if (!ok || (flag && idx == MPI_UNDEFINED))
			break;
		if (!flag)
			continue;
		ok &= !(seen & 1 << idx);
		seen |= 1 << idx;
		ok &= idx != 1 || rq_recv_status(&q, &st);
	}
	ok &= seen == (q.partner >= 0 ? 7 : 1);
	rq_check(&q, round, "testany mixed", ok);
	rq_start(&q, ++round);
	ok = 1;
	seen = 0;
	for (;;) {
		ok &= MPI_Testsome(3, q.r, &n, ids, sts_ignore) == MPI_SUCCESS;
		if (!ok || n == MPI_UNDEFINED)
			break;
		for (i = 0; i < n; i++) {
			ok &= !(seen & 1 << ids[i]);
			seen |= 1 << ids[i];
		}
	}
	ok &= seen == (q.partner >= 0 ? 7 : 1);
	rq_check(&q, round, "testsome mixed", ok);
	rq_start(&q, ++round);
	ok = 1;
	for (i = 0; ok && (q.r[0] != MPI_REQUEST_NULL || q.r[1] != MPI_REQUEST_NULL ||
			   q.r[2] != MPI_REQUEST_NULL); i = (i + 1) % 3)
		ok &= MPI_Test(&q.r[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS;
	rq_check(&q, round, "test each in turn", ok);

	/* Wait one by one, the collective last, then first */
	rq_start(&q, ++round);
	ok = 1;
	for (i = 2; i >= 0; i--) {
		ok &= MPI_Wait(&q.r[i], &st) == MPI_SUCCESS;
		ok &= i != 0 || rq_coll_status(&st);
		ok &= i != 1 || rq_recv_status(&q, &st);
	}
	rq_check(&q, round, "wait collective last", ok);
	rq_start(&q, ++round);
	ok = 1;
	for (i = 0; i < 3; i++)
		ok &= MPI_Wait(&q.r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS;
	rq_check(&q, round, "wait collective first", ok);

	/* Request_get_status: until done, the request still there, then Wait */
	rq_start(&q, ++round);
	ok = 1;
	flag = 0;
	while (ok && !flag)
		ok &= MPI_Request_get_status(q.r[0], &flag, &st) == MPI_SUCCESS;
	ok &= q.r[0] != MPI_REQUEST_NULL && rq_coll_status(&st);
	ok &= MPI_Waitall(3, q.r, sts_ignore) == MPI_SUCCESS;
	rq_check(&q, round, "request_get_status", ok);

	/*
	 * Cancel and Request_free of a collective's request: erroneous, both
	 * MPIs refuse with an error (of the class each MPI has for it), the
	 * request still active; it completes with Wait.
	 */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rq_start(&q, ++round);
	rc = MPI_Cancel(&q.r[0]);
	cls = MPI_SUCCESS;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	ok = q.r[0] != MPI_REQUEST_NULL;
	snprintf(what, sizeof(what), "cancel of a collective: class %d", cls);
	ok &= MPI_Waitall(3, q.r, sts) == MPI_SUCCESS && rq_coll_status(&sts[0]);
	rq_check(&q, round, what, ok);
	rq_start(&q, ++round);
	rc = MPI_Request_free(&q.r[0]);
	cls = MPI_SUCCESS;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	ok = q.r[0] != MPI_REQUEST_NULL;
	snprintf(what, sizeof(what), "request_free of a collective: class %d", cls);
	ok &= MPI_Waitall(3, q.r, sts_ignore) == MPI_SUCCESS;
	rq_check(&q, round, what, ok);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	/*
	 * Progress: the even rank of a pair waits for its collective and its
	 * send in one Waitall; the odd one first receives, then joins the
	 * collective.  Only MPI's progress in that Waitall lets it finish.
	 */
	++round;
	rq_start(&q, round);
	ok = MPI_Waitall(3, q.r, sts_ignore) == MPI_SUCCESS;
	rq_check(&q, round, "before the progress test", ok);
	ok = 1;
	for (i = 0; i < COUNT; i++)
		q.y[i] = -1;
	for (i = 0; i < RQ_BIG; i++)
		q.rbuf[i] = -1;
	q.r[0] = q.r[1] = q.r[2] = MPI_REQUEST_NULL;
	if (rank % 2 == 0)
		MPI_Iallreduce(q.x, q.y, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q.r[0]);
	if (q.partner >= 0) {
		MPI_Irecv(q.rbuf, RQ_BIG, MPI_INT, q.partner, 8, MPI_COMM_WORLD, &q.r[1]);
		MPI_Isend(q.sbuf, RQ_BIG, MPI_INT, q.partner, 8, MPI_COMM_WORLD, &q.r[2]);
	}
	if (rank % 2) {
		/* the collective only after the exchange */
		ok &= MPI_Waitall(2, q.r + 1, sts_ignore) == MPI_SUCCESS;
		MPI_Iallreduce(q.x, q.y, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q.r[0]);
	}
	ok &= MPI_Waitall(3, q.r, sts_ignore) == MPI_SUCCESS;
	rq_check(&q, round, "waitall progresses a send", ok);
	free(q.sbuf);
	free(q.rbuf);
}

static int eh_calls;
static char eh_text[MPI_MAX_ERROR_STRING];

static void eh(MPI_Comm *comm, int *code, ...)
{
	int len = 0;

	(void)comm;
	eh_calls++;
	MPI_Error_string(*code, eh_text, &len);
}

static int mismatch(void)
{
	int x[64] = { 0 }, y[64], rc, tot[2], sum[2], len = 0;
	const char *e = getenv("KCOLL_MPI");
	char text[MPI_MAX_ERROR_STRING] = "";
	MPI_Errhandler h;
	MPI_Request r;
	MPI_Comm c;

	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_create_errhandler(eh, &h);
	MPI_Comm_set_errhandler(c, h);
	/* a first call that matches makes the kcoll communicator */
	rc = MPI_Allreduce(x, y, 8, MPI_INT, MPI_SUM, c);
	check("matching allreduce", "mismatch", rc == MPI_SUCCESS && !eh_calls, NULL, 0);
	if (access("/dev/kcoll", F_OK) || (e && !strcmp(e, "0"))) {
		/*
		 * No module, or KCOLL_MPI=0: everything passes through, and
		 * MPI leaves a mismatched call undefined (it may hang).
		 */
		if (!rank)
			fprintf(stderr, "mismatch: not over kcoll, the mismatched calls skipped\n");
		MPI_Comm_free(&c);
		goto out;
	}
	rc = MPI_Allreduce(x, y, 16 + rank, MPI_INT, MPI_SUM, c);
	fprintf(stderr, "rank %d: mismatched allreduce returned %d, handler called %d time(s): %s\n",
		rank, rc, eh_calls, eh_text);
	check("mismatched allreduce fails", "mismatch", rc != MPI_SUCCESS, NULL, 0);
	check("through the communicator's error handler", "mismatch", eh_calls == 1, NULL, 0);
	check("with kcoll's message", "mismatch", strstr(eh_text, "kcoll") != NULL, NULL, 0);
	MPI_Comm_free(&c);
	/*
	 * Nonblocking: the completion call returns the error (a generalized
	 * request's, so MPI raises it on MPI_COMM_WORLD, made to return here).
	 */
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_set_errhandler(c, h);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Iallreduce(x, y, 8, MPI_INT, MPI_SUM, c, &r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
	check("matching iallreduce", "mismatch", rc == MPI_SUCCESS, NULL, 0);
	rc = MPI_Iallreduce(x, y, 16 + rank, MPI_INT, MPI_SUM, c, &r);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS)
		MPI_Error_string(rc, text, &len);
	fprintf(stderr, "rank %d: mismatched iallreduce returned %d: %s\n", rank, rc, text);
	check("mismatched iallreduce fails", "mismatch", rc != MPI_SUCCESS, NULL, 0);
	check("with kcoll's message", "mismatch", strstr(text, "kcoll") != NULL, NULL, 0);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_free(&c);
out:
	MPI_Errhandler_free(&h);
	MPI_Barrier(MPI_COMM_WORLD);
	check("world still works", "mismatch", 1, NULL, 0);
	fclose(out);
	sum[0] = passed;
	sum[1] = failed;
	MPI_Reduce(sum, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("%d passed, %d failed\n", tot[0], tot[1]);
	MPI_Bcast(tot, 2, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return tot[1] ? 1 : 0;
}

int main(int argc, char **argv)
{
	MPI_Comm dup, par, rev, many[16];
	char path[512];
	int i, sum[2], tot[2], x, y;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		if (!rank)
			fprintf(stderr, "usage: mpi_coll_test OUTPREFIX [--quick]\n");
		MPI_Finalize();
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "--quick"))
		reps = 10;
	snprintf(path, sizeof(path), "%s.%d", argv[1], rank);
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (argc > 2 && !strcmp(argv[2], "--mismatch"))
		return mismatch();
	dts_init();
	run_comm(MPI_COMM_WORLD, "world", 0);
	run_comm(MPI_COMM_WORLD, "world", 1);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	run_comm(dup, "dup", 1);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
	run_comm(par, "parity", 0);
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	run_comm(rev, "reversed", 0);
	/* many alive at once, used in turn */
	for (i = 0; i < 16; i++)
		MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &many[i]);
	for (i = 0; i < 16; i++) {
		x = rank + i;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, many[i]);
		check("allreduce on one of 16", "many", y == size * (size - 1) / 2 + size * i, &y,
		      sizeof(y));
	}
	for (i = 0; i < 16; i++)
		MPI_Comm_free(&many[i]);
	/* freed and made again */
	for (i = 0; i < reps; i++) {
		MPI_Comm c;

		MPI_Comm_dup(MPI_COMM_WORLD, &c);
		x = i;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c);
		if (y != i)
			check("allreduce on a recreated comm", "recreate", 0, &y, sizeof(y));
		MPI_Comm_free(&c);
	}
	check("comm freed and recreated", "recreate", 1, NULL, 0);
	layouts(MPI_COMM_WORLD);
	fallbacks(MPI_COMM_WORLD);
	requests();
	MPI_Comm_free(&rev);
	MPI_Comm_free(&par);
	MPI_Comm_free(&dup);
	fclose(out);
	sum[0] = passed;
	sum[1] = failed;
	MPI_Reduce(sum, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("%d passed, %d failed\n", tot[0], tot[1]);
	MPI_Bcast(tot, 2, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return tot[1] ? 1 : 0;
}
