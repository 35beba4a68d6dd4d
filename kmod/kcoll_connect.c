// SPDX-License-Identifier: GPL-2.0
/*
 * Connection set-up of a communicator: the full mesh, within the connect
 * timeout; or, with connect_on_need, the peers each operation needs, at
 * its submission (kcoll_conns_need()).
 *
 * Rank r connects to every rank below it and accepts every rank above it
 * (through the node's listener, kcoll_listen.c), so each pair has exactly
 * one QP and no side has to guess.  It starts its attempts at all the
 * lower ranks at once, so that set-up takes about one handshake, not one
 * per peer in turn.  Attempts fail under load (a lost ARP reply or CM
 * message, a peer that gives up an attempt, a peer whose communicator is
 * not created yet): the connecting side retries until the connect
 * timeout, and the accepting side puts a connection whose handshake
 * failed back to IDLE (kcoll_passive_reset()) so that the retry is
 * accepted.  One thread at a time runs this for a communicator: the
 * creator's (kcoll_comm_connect()), or on need the submitter holding
 * need_lock.
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

/* The @i-th of @peers, or rank @i when @peers is NULL (every rank). */
static u32 kcoll_peer_at(const u32 *peers, u32 i)
{
	return peers ? peers[i] : i;
}

/* Every one of @peers (NULL: every rank) is up. */
static bool kcoll_all_up(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	u32 i, peer;

	for (i = 0; i < n; i++) {
		peer = kcoll_peer_at(peers, i);
		if (peer != comm->rank && READ_ONCE(comm->conns[peer].state) != KCOLL_CONN_UP)
			return false;
	}
	return true;
}

/*
 * A connection this rank connects to (a lower rank) that is not up holds
 * an attempt, or what is left of one (an attempt the cm handler gave up
 * leaves it FAILED without an id): either is given up before the next.
 */
static bool kcoll_active_busy(const struct kcoll_conn *conn)
{
	return conn->cm_id || READ_ONCE(conn->state) != KCOLL_CONN_IDLE;
}

/* Give up @conn's attempt, or what is left of it. */
static void kcoll_active_reset(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	mutex_lock(&comm->conn_lock);
	kcoll_conn_destroy(conn, KCOLL_CONN_IDLE);
	/* Without an id (given up by the cm handler) destroy leaves it as it is. */
	smp_store_release(&conn->state, KCOLL_CONN_IDLE);
	mutex_unlock(&comm->conn_lock);
}

/*
 * Something for the connecting thread to do: the communicator broke,
 * every peer is up, an attempt at a lower peer was decided without
 * coming up, or an accepted one failed and waits for a reset.
 */
static bool kcoll_setup_settled(struct kcoll_comm *comm, const u32 *peers, u32 n)
{
	u32 i, peer;
	int state;

	if (kcoll_comm_broken(comm) || kcoll_all_up(comm, peers, n))
		return true;
	for (i = 0; i < n; i++) {
		struct kcoll_conn *conn;

		peer = kcoll_peer_at(peers, i);
		if (peer == comm->rank)
			continue;
		conn = &comm->conns[peer];
		state = READ_ONCE(conn->state);
		if (peer > comm->rank ? kcoll_passive_failed(conn) :
		    state != KCOLL_CONN_CONNECTING && state != KCOLL_CONN_UP &&
		    kcoll_active_busy(conn))
			return true;
	}
	return false;
}

/*
 * What no retry changes: our address is not on this node, whoever listens
 * at the peer's cannot prove the secret, the peer's communicator is gone.
 */
static bool kcoll_connect_fatal(int err)
{
	return err == -EADDRNOTAVAIL || err == -EKEYREJECTED || err == -ESTALE;
}

/*
 * The connection to @conn->peer, a lower rank, which is not up: give up
 * an attempt that failed (or, taken over by a shrink, waited too long
 * for the peer's RESET: connect anew at once), and start the next one
 * once it is due.  Returns 0, or an error no retry changes.
 */
static int kcoll_active_step(struct kcoll_conn *conn, unsigned long deadline)
{
	struct kcoll_comm *comm = conn->comm;
	int ret, err;

	if (kcoll_active_busy(conn)) {
		if (READ_ONCE(conn->state) == KCOLL_CONN_CONNECTING &&
		    time_before(jiffies, conn->give_up))
			return 0;	/* still in flight */
		err = conn->cm_err ? conn->cm_err : -ETIMEDOUT;
		kcoll_active_reset(conn);
		conn->give_up = deadline;
		if (conn->taken_over) {
			pr_debug("comm %llu: the connection to rank %u was not taken over (%d): connecting anew\n",
				 comm->id, conn->peer, err);
			conn->taken_over = false;
			conn->retry_at = jiffies;
		} else {
			conn->tried_err = err;
			if (kcoll_connect_fatal(conn->tried_err))
				return conn->tried_err;
			/* The peer may not listen yet: try again a little later. */
			conn->retry_at = jiffies + msecs_to_jiffies(KCOLL_RETRY_MS);
		}
	}
	if (time_before(jiffies, conn->retry_at))
		return 0;
	mutex_lock(&comm->conn_lock);
	ret = kcoll_conn_start(conn);
	mutex_unlock(&comm->conn_lock);
	if (ret) {
		conn->tried_err = ret;
		if (kcoll_connect_fatal(ret))
			return ret;
		conn->retry_at = jiffies + msecs_to_jiffies(KCOLL_RETRY_MS);
	}
	return 0;
}

/* Say which peer set-up (@how) failed with, and why. */
static void kcoll_setup_failed(struct kcoll_comm *comm, u32 peer, const char *how, int err)
{
	if (peer < comm->rank)
		kcoll_info_rl("comm %llu: rank %u cannot connect to rank %u%s: %d\n",
			      comm->id, comm->rank, peer, how, err);
	else
		kcoll_info_rl("comm %llu: rank %u: no connection from rank %u%s in %u ms\n",
			      comm->id, comm->rank, peer, how, comm->connect_timeout_ms);
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
 * Bring up every one of @peers (ascending; NULL: every rank) within the
 * connect timeout: this rank connects to those below it, to all of them
 * at once, and waits for those above it to connect.  A failed attempt is
 * retried KCOLL_RETRY_MS later; a failed accepted one is put back to
 * IDLE for the peer's next (kcoll_passive_reset()).  On need, @t0 (ns) is
 * when the submission started, and each connection records how long it
 * took to come up.  Returns 0, -EINTR, or the error the caller fails
 * with; the attempts still in flight are given up then.
 */
static int kcoll_setup(struct kcoll_comm *comm, const u32 *peers, u32 n, u64 t0)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(comm->connect_timeout_ms);
	u32 adopt_ms = max_t(u32, KCOLL_ADOPT_WAIT_MIN_MS, comm->connect_timeout_ms / 10);
	unsigned long adopt = jiffies + msecs_to_jiffies(adopt_ms);
	const char *how = peers ? " on need" : " during set-up";
	u32 i, peer, missing;
	unsigned long next;
	int ret;
	long left;

	if (time_after(adopt, deadline))
		adopt = deadline;
	for (i = 0; i < n && kcoll_peer_at(peers, i) < comm->rank; i++) {
		struct kcoll_conn *conn = &comm->conns[kcoll_peer_at(peers, i)];

		/* Lower ranks accept: one QP per pair. */
		conn->active = true;
		conn->retry_at = jiffies;
		conn->tried_err = 0;
		/*
		 * A connection a shrink took over is up once the peer's RESET
		 * agrees.  It is given up when it fails (the peer disconnected
		 * it, or names another communicator) or without a RESET after
		 * a tenth of the connect timeout (the peer may not shrink at
		 * all, or much later), and connected anew.
		 */
		conn->taken_over = conn->cm_id && READ_ONCE(conn->state) != KCOLL_CONN_UP;
		conn->give_up = conn->taken_over ? adopt : deadline;
	}
	for (;;) {
		ret = kcoll_comm_broken(comm);
		if (ret) {
			/* Cancelled by the owner (ECANCELED) is not news. */
			if (ret != -ECANCELED)
				kcoll_info_rl("comm %llu: rank %u: a peer left%s: %d\n",
					      comm->id, comm->rank, how, ret);
			break;
		}
		/* Higher ranks may retry meanwhile: take their next attempt. */
		kcoll_passive_reset(comm);
		missing = U32_MAX;
		next = deadline;
		for (i = 0; i < n; i++) {
			struct kcoll_conn *conn;

			peer = kcoll_peer_at(peers, i);
			conn = &comm->conns[peer];
			if (peer == comm->rank || READ_ONCE(conn->state) == KCOLL_CONN_UP)
				continue;
			if (missing == U32_MAX)
				missing = peer;
			if (peer > comm->rank)
				continue;
			ret = kcoll_active_step(conn, deadline);
			if (ret) {
				kcoll_setup_failed(comm, peer, how, ret);
				goto out;
			}
			if (READ_ONCE(conn->state) == KCOLL_CONN_CONNECTING) {
				if (time_before(conn->give_up, next))
					next = conn->give_up;
			} else if (time_before(conn->retry_at, next)) {
				next = conn->retry_at;
			}
		}
		if (t0)
			kcoll_need_times(comm, peers, n, t0);
		if (missing == U32_MAX)
			return 0;
		if (time_after_eq(jiffies, deadline)) {
			ret = missing < comm->rank ? comm->conns[missing].tried_err : 0;
			ret = ret ? ret : -ETIMEDOUT;
			kcoll_setup_failed(comm, missing, how, ret);
			break;
		}
		left = max_t(long, (long)(next - jiffies), 1);
		/* Interruptible: a signal or a cancellation ends it. */
		left = wait_event_interruptible_timeout(comm->conn_wq,
							kcoll_setup_settled(comm, peers, n), left);
		if (left < 0 || signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
out:
	/*
	 * Give up this call's attempts, in flight or failed, so that the
	 * next call starts anew; what a failure parked for a shrink, or a
	 * shrink took over, stays.
	 */
	for (i = 0; i < n && kcoll_peer_at(peers, i) < comm->rank; i++) {
		struct kcoll_conn *conn = &comm->conns[kcoll_peer_at(peers, i)];
		int state = READ_ONCE(conn->state);

		if ((state == KCOLL_CONN_CONNECTING || state == KCOLL_CONN_FAILED) &&
		    !READ_ONCE(conn->parked) && !conn->adopted)
			kcoll_active_reset(conn);
	}
	return ret;
}

/* The full mesh, at creation. */
int kcoll_conns_connect(struct kcoll_comm *comm)
{
	return kcoll_setup(comm, NULL, comm->nranks, 0);
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
	u64 t0 = ktime_get_ns();
	u32 i;
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
	ret = kcoll_setup(comm, peers, n, t0);
out:
	mutex_unlock(&comm->need_lock);
	return ret;
}
