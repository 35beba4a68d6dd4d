// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A communicator's first fault in words.  The module keeps what it knows
 * as numbers (which rank, what it sent, why it left); this file is the
 * one place that says it, so a job's own error message and the
 * operator's `collctl show` agree word for word.
 */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coll_fault.h"
#include "coll_internal.h"

/* The operation header's layout: KC_HDR_* of algo/kc_exec.h. */
enum { HDR_OP = 2, HDR_DTYPE = 3, HDR_REDOP = 4, HDR_ROOT = 8, HDR_OPNUM = 12,
       HDR_COUNT = 16, HDR_ALGO = 24 };

static uint64_t le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

struct out {
	char *buf;
	size_t len, n;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0,
		      fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

/* "allreduce(float, sum, 1048576)", and the algorithms per level with @algos. */
static void call(struct out *o, const uint8_t *h, int algos, const char *(*algo)(uint32_t))
{
	unsigned int op = h[HDR_OP], l;

	put(o, "%s(", coll_op_name((coll_op_t)op));
	if (op != COLL_OP_BARRIER) {
		put(o, "%s", coll_dtype_name((coll_dtype_t)h[HDR_DTYPE]));
		if (coll_op_reduces((coll_op_t)op))
			put(o, ", %s", coll_redop_name((coll_redop_t)h[HDR_REDOP]));
		if (coll_op_rooted((coll_op_t)op))
			put(o, ", root %u", (unsigned int)le(h + HDR_ROOT, 4));
		put(o, ", %llu", (unsigned long long)le(h + HDR_COUNT, 8));
	}
	put(o, ")");
	if (!algos)
		return;
	put(o, " with");
	for (l = 0; l < KCOLL_LEVEL_COUNT; l++) {
		uint32_t a = h[HDR_ALGO + l];

		if (!a)
			put(o, "%s -", l ? "," : "");
		else if (algo)
			put(o, "%s %s", l ? "," : "", algo(a));
		else
			put(o, "%s algorithm %u", l ? "," : "", a);
	}
	put(o, " on levels 0-%d", KCOLL_LEVEL_COUNT - 1);
}

/* Whether the headers differ in their algorithms (where both use a level). */
static int algos_differ(const uint8_t *a, const uint8_t *b)
{
	unsigned int l;

	for (l = 0; l < KCOLL_LEVEL_COUNT; l++)
		if (a[HDR_ALGO + l] && b[HDR_ALGO + l] && a[HDR_ALGO + l] != b[HDR_ALGO + l])
			return 1;
	return 0;
}

static void where(struct out *o, const struct kcoll_fault *f,
		  const char *(*node)(uint32_t, void *), void *arg)
{
	const char *n = node ? node(f->rank, arg) : NULL;

	if (f->pid && n && *n)
		put(o, " (pid %u on %s)", f->pid, n);
	else if (f->pid)
		put(o, " (pid %u)", f->pid);
	else if (n && *n)
		put(o, " (on %s)", n);
}

size_t coll_fault_format(const struct kcoll_fault *f, uint32_t self,
			 const char *(*node)(uint32_t rank, void *arg), void *arg,
			 const char *(*algo)(uint32_t id), char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	unsigned long long num = (unsigned long long)f->op_id;

	if (len)
		buf[0] = '\0';
	switch (f->kind) {
	case KCOLL_FAULT_MISMATCH: {
		int algos = algos_differ(f->fp_rank, f->fp_mine);
		uint32_t theirs = (uint32_t)le(f->fp_rank + HDR_OPNUM, 4);

		put(&o, "rank %u called ", f->rank);
		call(&o, f->fp_rank, algos, algo);
		put(&o, " as operation %u; this rank called ", theirs);
		call(&o, f->fp_mine, algos, algo);
		if (theirs != (uint32_t)num)
			put(&o, " as operation %llu", num);
		if (f->reporter != self)
			put(&o, " (rank %u found the difference)", f->reporter);
		break;
	}
	case KCOLL_FAULT_PEER_EXIT:
	case KCOLL_FAULT_PEER_SIGNAL:
	case KCOLL_FAULT_PEER_CLOSE:
	case KCOLL_FAULT_PEER_LOST:
	case KCOLL_FAULT_PEER_FAILED:
		put(&o, "rank %u", f->rank);
		where(&o, f, node, arg);
		if (f->kind == KCOLL_FAULT_PEER_EXIT)
			put(&o, " exited with status %u", f->code);
		else if (f->kind == KCOLL_FAULT_PEER_SIGNAL)
			put(&o, " was killed by signal %u (%s)", f->code, strsignal((int)f->code));
		else if (f->kind == KCOLL_FAULT_PEER_CLOSE)
			put(&o, " closed its communicator");
		else if (f->kind == KCOLL_FAULT_PEER_FAILED)
			put(&o, " failed on its own (%s: %s)", coll_errname(-(int)f->code),
			    strerror((int)f->code));
		else if (f->status == -EHOSTUNREACH)
			put(&o, " stopped acknowledging (its node or the network to it is gone)");
		else
			put(&o, " disconnected without notice (its node, network or module is gone)");
		put(&o, " during operation %llu", num);
		if (f->reporter != self && f->reporter != f->rank)
			put(&o, " (told by rank %u)", f->reporter);
		break;
	default:
		return 0;
	}
	return o.n;
}
