// SPDX-License-Identifier: GPL-2.0
/*
 * Connection set-up of a communicator: the full mesh, within the connect
 * timeout; or, with connect_on_need, the peers each operation needs, at
 * its submission (kcoll_conns_need()).
 *
 * Rank r connects to every rank below it and accepts every rank above it
 * (through the node's listener, kcoll_listen.c), so each pair has exactly
 * one QP and no side has to guess.  Attempts fail under load (a lost ARP
 * reply or CM message, a peer that gives up an attempt, a peer whose
 * communicator is not created yet): the connecting side retries until the
 * connect timeout, and the accepting side puts a connection whose
 * handshake failed back to IDLE (kcoll_passive_reset()) so that the retry
 * is accepted.  Only the creator's thread runs this (kcoll_comm_connect()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>

#include "kcoll.h"

#define KCOLL_RETRY_MS		100

static int kcoll_comm_broken(const struct kcoll_comm *comm)
{
	int err = READ_ONCE(comm->err);

	return err ? err : READ_ONCE(comm->lost_err);
}

static bool kcoll_conn_settled(const struct kcoll_conn *conn)
{
	return READ_ONCE(conn->state) != KCOLL_CONN_CONNECTING ||
	       kcoll_comm_broken(conn->comm);
}

/*
 * An accepted connection that will not come up: its handshake failed, or
 * the peer has given it up for a new attempt.  One that was up and went
 * away (lost) is the peer leaving, which fails the creation instead.
 */
static bool kcoll_passive_failed(const struct kcoll_conn *conn)
{
	/* Pairs with the release in kcoll_cm_request(). */
	int state = smp_load_acquire(&conn->state);

	if (READ_ONCE(conn->lost))
		return false;
	return state == KCOLL_CONN_FAILED ||
	       ((state == KCOLL_CONN_CONNECTING || state == KCOLL_CONN_AUTH) &&
		READ_ONCE(conn->superseded));
}

/*
 * Return the failed accepted connections to IDLE, so that the listener
 * takes the peer's next attempt: left FAILED, every retry would be
 * rejected until the connect timeout, and that rank's failure would then
 * reset the connections of all the others.
 */
static void kcoll_passive_reset(struct kcoll_comm *comm)
{
	u32 i;

	for (i = comm->rank + 1; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (!kcoll_passive_failed(conn))
			continue;
		mutex_lock(&comm->conn_lock);
		if (kcoll_passive_failed(conn)) {
			pr_debug("comm %llu: accepted connection from rank %u failed (%d); waiting for its retry\n",
				 comm->id, i, conn->cm_err);
			kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
		}
		mutex_unlock(&comm->conn_lock);
	}
}

/*
 * A connection a shrink took over (kcoll_adopt.c) is up once the peer's
 * RESET agrees.  The connecting side gives it up when it fails (the peer
 * disconnected it, or names another communicator) or after a tenth of
 * the connect timeout (at least KCOLL_ADOPT_WAIT_MIN_MS) without a RESET
 * (the peer may not shrink at all, or much later), and connects anew.
 * Returns 0 when it is up, 1 to connect anew, or -EINTR.
 */
static int kcoll_conn_adopted_wait(struct kcoll_conn *conn, unsigned long deadline)
{
	struct kcoll_comm *comm = conn->comm;
	u32 ms = max_t(u32, KCOLL_ADOPT_WAIT_MIN_MS, comm->connect_timeout_ms / 10);
	unsigned long until = jiffies + msecs_to_jiffies(ms);
	long left;

	if (time_before(deadline, until))
		until = deadline;
	left = (long)(until - jiffies);
	if (left > 0)
		left = wait_event_interruptible_timeout(comm->conn_wq, kcoll_conn_settled(conn),
							left);
	if (left < 0)
		return -EINTR;
	if (READ_ONCE(conn->state) == KCOLL_CONN_UP)
		return 0;
	pr_debug("comm %llu: the connection to rank %u was not taken over (%d): connecting anew\n",
		 comm->id, conn->peer, conn->cm_err);
	mutex_lock(&comm->conn_lock);
	kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
	mutex_unlock(&comm->conn_lock);
	return 1;
}

static int kcoll_conn_connect(struct kcoll_conn *conn, unsigned long deadline)
{
	struct kcoll_comm *comm = conn->comm;
	int ret;

	if (conn->cm_id) {
		ret = kcoll_conn_adopted_wait(conn, deadline);
		if (ret <= 0)
			return ret;
	}
	for (;;) {
		long left = (long)(deadline - jiffies);

		if (left <= 0)
			return -ETIMEDOUT;
		ret = kcoll_comm_broken(comm);
		if (ret)
			return ret;
		/* Higher ranks may retry meanwhile: take their next attempt. */
		kcoll_passive_reset(comm);
		mutex_lock(&comm->conn_lock);
		ret = kcoll_conn_start(conn);
		mutex_unlock(&comm->conn_lock);
		if (!ret) {
			/* Interruptible: a signal or a cancellation ends it. */
			left = wait_event_interruptible_timeout(comm->conn_wq,
								kcoll_conn_settled(conn), left);
			if (left >= 0 && READ_ONCE(conn->state) == KCOLL_CONN_UP)
				return 0;
			if (left < 0)
				ret = -EINTR;
			else
				ret = conn->cm_err ? conn->cm_err : -ETIMEDOUT;
			mutex_lock(&comm->conn_lock);
			kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
			mutex_unlock(&comm->conn_lock);
		}
		if (ret == -EINTR || signal_pending(current))
			return -EINTR;
		/*
		 * Our own address is not on this node, whoever listens at the
		 * peer's cannot prove the secret, or the peer's communicator
		 * is gone: no retry changes that.
		 */
		if (ret == -EADDRNOTAVAIL || ret == -EKEYREJECTED || ret == -ESTALE)
			return ret;
		/* The peer may not listen yet: try again a little later. */
		if (time_after(jiffies + msecs_to_jiffies(KCOLL_RETRY_MS), deadline))
			return ret;
		if (msleep_interruptible(KCOLL_RETRY_MS) || signal_pending(current))
			return -EINTR;
	}
}

static bool kcoll_passive_up(const struct kcoll_comm *comm)
{
	u32 i;

	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (READ_ONCE(comm->conns[i].state) != KCOLL_CONN_UP)
			return false;
	return true;
}

static bool kcoll_passive_settled(const struct kcoll_comm *comm)
{
	u32 i;

	if (kcoll_comm_broken(comm) || kcoll_passive_up(comm))
		return true;
	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (kcoll_passive_failed(&comm->conns[i]))
			return true;
	return false;
}

/*
 * Connect the full mesh: actively to lower ranks, then wait for the
 * higher ones, all within the connect timeout.
 */
int kcoll_conns_connect(struct kcoll_comm *comm)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(comm->connect_timeout_ms);
	long left;
	u32 i;
	int ret;

	for (i = 0; i < comm->rank; i++) {
		comm->conns[i].active = true;
		ret = kcoll_conn_connect(&comm->conns[i], deadline);
		if (ret) {
			kcoll_info_rl("comm %llu: rank %u cannot connect to rank %u: %d\n",
				      comm->id, comm->rank, i, ret);
			return ret;
		}
	}
	for (;;) {
		left = (long)(deadline - jiffies);
		if (left <= 0)
			left = 1;
		left = wait_event_interruptible_timeout(comm->conn_wq,
							kcoll_passive_settled(comm), left);
		if (left < 0)
			return -EINTR;
		ret = kcoll_comm_broken(comm);
		if (ret) {
			/* Cancelled by the owner (ECANCELED) is not news. */
			if (ret != -ECANCELED)
				kcoll_info_rl("comm %llu: rank %u: a peer left during set-up: %d\n",
					      comm->id, comm->rank, ret);
			return ret;
		}
		if (kcoll_passive_up(comm))
			return 0;
		kcoll_passive_reset(comm);
		if (!left || time_after_eq(jiffies, deadline))
			break;
	}
	for (i = comm->rank + 1; i < comm->nranks; i++)
		if (READ_ONCE(comm->conns[i].state) != KCOLL_CONN_UP)
			break;
	kcoll_info_rl("comm %llu: rank %u: no connection from rank %u in %u ms\n",
		      comm->id, comm->rank, i, comm->connect_timeout_ms);
	return -ETIMEDOUT;
}

/* ------------------------------------------------------- connect on need */

/* Every one of @peers (ascending, not this rank) is up. */
bool kcoll_conns_ready(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (peers[i] != comm->rank &&
		    READ_ONCE(comm->conns[peers[i]].state) != KCOLL_CONN_UP)
			return false;
	return true;
}

/* The first of @peers above this rank that is not up, or U32_MAX. */
static u32 kcoll_need_passive(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (peers[i] > comm->rank &&
		    READ_ONCE(comm->conns[peers[i]].state) != KCOLL_CONN_UP)
			return peers[i];
	return U32_MAX;
}

static bool kcoll_need_settled(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	u32 i;

	if (kcoll_comm_broken(comm) || kcoll_need_passive(comm, peers, n) == U32_MAX)
		return true;
	for (i = 0; i < n; i++)
		if (peers[i] > comm->rank && kcoll_passive_failed(&comm->conns[peers[i]]))
			return true;
	return false;
}

/* Record how long this rank waited for the peers of @peers that came up. */
static void kcoll_need_times(struct kcoll_comm *comm, const u32 *peers, u32 n, u64 t0)
{
	u32 us = (u32)min_t(u64, div_u64(ktime_get_ns() - t0, NSEC_PER_USEC), U32_MAX);
	u32 i;

	for (i = 0; i < n; i++) {
		struct kcoll_conn *conn = &comm->conns[peers[i]];

		if (!conn->connect_us && READ_ONCE(conn->state) == KCOLL_CONN_UP)
			conn->connect_us = max_t(u32, us, 1);
	}
}

/*
 * Connect on need: before an operation is queued, every peer its plan
 * exchanges with (@peers, ascending) must be up.  As at creation, this
 * rank connects to the lower ones and waits for the higher ones, whose
 * plans need this rank too, all within the connect timeout; connections
 * stay for later operations.  Runs in the submitter's thread without
 * kf->lock, so that an abort reaches it (kcoll_comm_fail() wakes
 * conn_wq).  Returns 0, -EINTR, or the error that the caller ends the
 * communicator with.
 */
int kcoll_conns_need(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(comm->connect_timeout_ms);
	u64 t0 = ktime_get_ns();
	u32 i, missing;
	long left;
	int ret = 0;

	if (mutex_lock_interruptible(&comm->need_lock))
		return -EINTR;
	/* Within user_max_bytes before anything is allocated for them. */
	for (i = 0; i < n; i++) {
		if (peers[i] == comm->rank)
			continue;
		ret = kcoll_conn_charge(&comm->conns[peers[i]]);
		if (ret)
			goto out;
	}
	for (i = 0; i < n && peers[i] < comm->rank; i++) {
		struct kcoll_conn *conn = &comm->conns[peers[i]];

		if (READ_ONCE(conn->state) == KCOLL_CONN_UP)
			continue;
		/* Lower ranks accept, as at creation: one QP per pair. */
		conn->active = true;
		ret = kcoll_conn_connect(conn, deadline);
		if (ret) {
			kcoll_info_rl("comm %llu: rank %u cannot connect to rank %u on need: %d\n",
				      comm->id, comm->rank, peers[i], ret);
			goto out;
		}
		kcoll_need_times(comm, peers + i, 1, t0);
	}
	for (;;) {
		missing = kcoll_need_passive(comm, peers, n);
		kcoll_need_times(comm, peers, n, t0);
		if (missing == U32_MAX)
			break;
		ret = kcoll_comm_broken(comm);
		if (ret)
			break;
		left = (long)(deadline - jiffies);
		if (left <= 0) {
			kcoll_info_rl("comm %llu: rank %u: on need, no connection from rank %u\n",
				      comm->id, comm->rank, missing);
			ret = -ETIMEDOUT;
			break;
		}
		left = wait_event_interruptible_timeout(comm->conn_wq,
							kcoll_need_settled(comm, peers, n), left);
		if (left < 0) {
			ret = -EINTR;
			break;
		}
		/* Take the peer's next attempt after a failed one. */
		kcoll_passive_reset(comm);
	}
out:
	mutex_unlock(&comm->need_lock);
	return ret;
}
