// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics of a communicator: operation, byte, failure and timeout
 * counters, and a ring of the last completed operations, which generic
 * netlink reports (KCOLL_A_COMM_OPS .. KCOLL_A_COMM_LAST_OPS).  The
 * caller holds comm->lock.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "kcoll.h"

const struct kcoll_lastop *kcoll_stats_record(struct kcoll_stats *st,
					      const struct kcoll_comm_op *op)
{
	struct kcoll_lastop *l = &st->last[st->last_next];
	int status = op->cpl.status;

	l->id = op->id;
	l->op = op->desc.op;
	l->count = op->desc.count;
	l->bytes = op->cpl.bytes;
	l->status = status < 0 ? -status : 0;
	l->duration_ns = op->start_ns ? op->cpl.complete_ns - op->start_ns : 0;
	memcpy(l->algo, op->algo, sizeof(l->algo));
	l->fallback = op->fallback;
	if (op->fallback)
		memcpy(l->note, op->note, sizeof(l->note));
	else
		l->note[0] = '\0';
	st->last_next = (st->last_next + 1) % ARRAY_SIZE(st->last);
	if (st->last_n < ARRAY_SIZE(st->last))
		st->last_n++;

	st->ops_done++;
	st->bytes_done += op->cpl.bytes;
	if (status) {
		st->ops_failed++;
		if (status == -ETIMEDOUT)
			st->ops_timed_out++;
	}
	return l;
}

/* The ring's next slot is the oldest entry once the ring is full. */
const struct kcoll_lastop *kcoll_stats_last(const struct kcoll_stats *st, u32 i)
{
	u32 cap = ARRAY_SIZE(st->last);

	return &st->last[(st->last_next + cap - st->last_n + i) % cap];
}
