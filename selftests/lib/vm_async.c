// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll's asynchronous path on a real module (run on every rank by
 * tools/vm/kcoll-vm, see vm_e2e.sh): 16 AllReduces in flight at once,
 * completed through the eventfd in a poll loop with coll_test, then 16
 * more through coll_wait_all; registered and unregistered buffers; every
 * result checked exactly.  Exit 0 on success, 1 with a message otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"

#define NOPS	16
#define COUNT	1000

static int fail(const char *what, int err)
{
	fprintf(stderr, "vm_async: %s: %s: %s\n", what, coll_strerror(err), coll_last_error());
	return 1;
}

static int check(float *buf, int k, int nranks, const char *what)
{
	/* rank r contributes r + k + i: the sum is n(n-1)/2 + n(k + i) */
	for (int i = 0; i < COUNT; i++) {
		float want = (float)(nranks * (nranks - 1) / 2 + nranks * (k + i % 7));

		if (buf[i] != want) {
			fprintf(stderr, "vm_async: %s op %d element %d is %g, expected %g\n", what,
				k, i, buf[i], want);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	const char *rs = getenv("KCOLL_RANK");
	static float in[NOPS][COUNT], out[NOPS][COUNT];
	struct coll_status st[NOPS];
	coll_request_t *req[NOPS];
	coll_comm_t *comm;
	coll_mr_t *mr;
	int err, rank, n, k, i, left, done;

	if (!rs)
		return fprintf(stderr, "vm_async: KCOLL_RANK not set\n"), 1;
	err = coll_comm_init_ranktable(NULL, (uint32_t)atoi(rs), &comm);
	if (err)
		return fail("init", err);
	rank = coll_comm_rank(comm);
	n = coll_comm_size(comm);
	err = coll_mem_register(comm, out, sizeof(out), &mr);
	if (err)
		return fail("register", err);
	for (k = 0; k < NOPS; k++)
		for (i = 0; i < COUNT; i++)
			in[k][i] = (float)(rank + k + i % 7);

	/* Round 1: eventfd + coll_test. */
	for (k = 0; k < NOPS; k++) {
		err = coll_allreduce(comm, in[k], out[k], COUNT, COLL_FLOAT, COLL_SUM, &req[k]);
		if (err)
			return fail("allreduce", err);
	}
	for (left = NOPS; left > 0; ) {
		struct pollfd p = { .fd = coll_comm_event_fd(comm), .events = POLLIN };
		uint64_t v;

		if (poll(&p, 1, 60000) <= 0)
			return fprintf(stderr, "vm_async: no eventfd signal in 60 s\n"), 1;
		if (read(p.fd, &v, sizeof(v)) != sizeof(v))
			return fprintf(stderr, "vm_async: eventfd read failed\n"), 1;
		for (k = 0; k < NOPS; k++) {
			if (!req[k])
				continue;
			err = coll_test(&req[k], &done, &st[k]);
			if (err)
				return fail("coll_test", err);
			if (done)
				left--;
		}
	}
	for (k = 0; k < NOPS; k++)
		if (check(out[k], k, n, "eventfd"))
			return 1;

	/* Round 2: in place, unregistered, coll_wait_all. */
	for (k = 0; k < NOPS; k++) {
		memcpy(out[k], in[k], sizeof(in[k]));
		err = coll_allreduce(comm, in[k], in[k], COUNT, COLL_FLOAT, COLL_SUM, &req[k]);
		if (err)
			return fail("allreduce in place", err);
	}
	err = coll_wait_all(req, NOPS, st);
	if (err)
		return fail("coll_wait_all", err);
	for (k = 0; k < NOPS; k++) {
		if (req[k] || st[k].error || !st[k].op_id)
			return fprintf(stderr, "vm_async: bad status of op %d\n", k), 1;
		if (check(in[k], k, n, "wait_all"))
			return 1;
	}
	err = coll_barrier_sync(comm);
	if (err)
		return fail("barrier", err);
	err = coll_mem_deregister(comm, mr);
	if (err)
		return fail("deregister", err);
	coll_comm_destroy(comm);
	printf("vm_async: rank %d: 32 asynchronous allreduces correct\n", rank);
	return 0;
}
