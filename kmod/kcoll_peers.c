// SPDX-License-Identifier: GPL-2.0
/*
 * KCOLL_IOC_PEERS: which ranks of a communicator this rank knows to be
 * alive, for a shrink (coll_comm_shrink()).
 *
 * A rank learns a peer's fate from what the peer said before its
 * connection went down (kcoll_ctl.c): a farewell (BYE: its process
 * leaves), that its communicator failed (VERDICT, PEER_FAULT: it is alive
 * and may shrink too, and a PEER_FAULT names the rank it blames), or
 * nothing at all (its node, network or module went away).  The first
 * fault this rank found itself names a rank as well.  What the survivors
 * learn this way is the same for all of them whenever every failure was
 * told to every survivor, which the first failing rank does for each one.
 */
#include "kcoll.h"

/* A worse fate wins: a rank named gone by anyone is gone. */
static void kcoll_peer_mark(u8 *fates, u32 rank, u8 fate)
{
	if (fates[rank] < fate)
		fates[rank] = fate;
}

/* The fate of each of @comm's ranks into @fates (nranks bytes). */
void kcoll_comm_peers(struct kcoll_comm *comm, u8 *fates)
{
	const struct kcoll_fault *f = &comm->fault;
	u32 i;

	memset(fates, KCOLL_FATE_ALIVE, comm->nranks);
	mutex_lock(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		const struct kcoll_conn *conn = &comm->conns[i];

		if (i == comm->rank)
			continue;
		if (conn->bye_kind && conn->bye_rank == i && !conn->told)
			kcoll_peer_mark(fates, i, KCOLL_FATE_LEFT);
		else if (conn->bye_kind && conn->bye_rank != comm->rank)
			kcoll_peer_mark(fates, conn->bye_rank, KCOLL_FATE_NAMED);
		if (READ_ONCE(conn->lost) || READ_ONCE(conn->departed))
			kcoll_peer_mark(fates, i, conn->told ? KCOLL_FATE_FAILED :
					conn->bye_kind ? KCOLL_FATE_LEFT : KCOLL_FATE_LOST);
	}
	if (f->kind >= KCOLL_FAULT_PEER_EXIT && f->kind <= KCOLL_FAULT_PEER_LOST &&
	    f->rank < comm->nranks && f->rank != comm->rank)
		kcoll_peer_mark(fates, f->rank, KCOLL_FATE_NAMED);
	mutex_unlock(&comm->lock);
}
