// SPDX-License-Identifier: GPL-2.0
/*
 * Stall reports that name the culprit.
 *
 * A rank that never submits an operation, or whose process is stopped,
 * or whose node is gone, used to show only as the operation timeout on
 * every other rank, naming nobody.  Here each communicator watches its
 * active operation: when the executor's progress counter (messages in,
 * credits back) has not moved for stall_ms (a tunable taken at creation,
 * 0: off), the stall is recorded (the operation, what this rank waits
 * for: peer, message, round; kc_exec_waiting()), a PROBE goes to every
 * peer, one rate-limited line is logged and a KCOLL_CMD_EVENT_STALL
 * notification goes out.
 *
 * The module of each peer answers a PROBE at once, from the receive path:
 * the last operation its rank submitted and completed, its active
 * operation and what that waits for, and whether the owner process is
 * stopped.  It answers even when that process is stopped, since nothing
 * of it runs in the process.  The prober keeps each answer with the
 * peer's connection and names the culprit as soon as it can:
 *
 *   - a rank whose last submitted operation is before the stalled one
 *     has not submitted it (its process stopped, or just elsewhere);
 *   - once every peer answered: follow what the waited-for rank waits
 *     for, rank to rank, to one that lags, else name the first rank on
 *     the chain and what it waits for;
 *   - a peer that has not answered within half a stall_ms: its node or
 *     the network to it does not answer (a module answers in
 *     milliseconds; the bound keeps the whole report within 2 x
 *     stall_ms of the last progress).
 *
 * When the culprit is named a second event goes out.  The record stays
 * (KCOLL_A_COMM_STALL, collctl why) until another operation stalls;
 * KCOLL_STALL_F_OVER says that the operation moved again or ended.
 *
 * The watch is a delayed work item polling eight times per stall_ms
 * while an operation runs, so a stall is found within 1.125 x stall_ms
 * of the last progress, and no hot path pays for it.  Everything runs under
 * comm->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "kcoll.h"

#define KCOLL_STALL_POLLS	8	/* polls per stall_ms */
#define KCOLL_STALL_POLL_MIN_MS	10

int kcoll_check_stall(u32 v)
{
	return v <= KCOLL_STALL_MAX ? 0 : -EINVAL;
}

static unsigned long kcoll_stall_period(const struct kcoll_comm *comm)
{
	return msecs_to_jiffies(max_t(u32, comm->stall_ms / KCOLL_STALL_POLLS,
				      KCOLL_STALL_POLL_MIN_MS));
}

/* The running operation, or NULL. */
static struct kcoll_comm_op *kcoll_stall_running(struct kcoll_comm *comm)
{
	struct kcoll_comm_op *op = comm->active;

	if (!op || !op->ex_ready || comm->dead || kc_exec_status(&op->ex) != -EINPROGRESS)
		return NULL;
	return op;
}

/* Whether the owner process is stopped (job control or a tracer). */
static bool kcoll_stall_owner_stopped(struct kcoll_comm *comm)
{
	struct task_struct *task;
	bool stopped;

	if (!comm->owner)
		return false;
	task = get_pid_task(comm->owner, PIDTYPE_TGID);
	if (!task)
		return false;
	stopped = task_is_stopped_or_traced(task) ||
		  (READ_ONCE(task->signal->flags) & SIGNAL_STOP_STOPPED);
	put_task_struct(task);
	return stopped;
}

static u32 kcoll_stall_last_done(const struct kcoll_comm *comm)
{
	const struct kcoll_stats *st = &comm->stats;

	return st->last_n ? (u32)kcoll_stats_last(st, st->last_n - 1)->id : 0;
}

void kcoll_stall_free(struct kcoll_comm *comm)
{
	put_pid(comm->owner);
	comm->owner = NULL;
}

/* Stop the watch: destruction (no lock held). */
void kcoll_stall_sync(struct kcoll_comm *comm)
{
	cancel_delayed_work_sync(&comm->stall_work);
}

/* An operation starts: watch it from now on. */
void kcoll_stall_op_start(struct kcoll_comm *comm)
{
	if (!comm->stall_ms)
		return;
	comm->stall_seen_op = 0;
	mod_delayed_work(kcoll_wq_get(), &comm->stall_work, kcoll_stall_period(comm));
}

static void kcoll_stall_name(struct kcoll_comm *comm, u32 rank, u32 why)
{
	struct kcoll_stall *s = &comm->stall;
	const struct kcoll_conn *conn = &comm->conns[rank];

	s->culprit = rank;
	s->why = why;
	if (conn->replied) {
		s->culprit_submitted = conn->rep_submitted;
		s->culprit_done = conn->rep_w[KCOLL_CTL_W_DONE];
		s->culprit_pid = conn->rep_pid;
		if (why == KCOLL_STALL_WHY_WAITING)
			s->culprit_waits = conn->rep_w[KCOLL_CTL_W_PEER];
	}
	s->named_ms = (u32)div_u64(ktime_get_ns() - comm->stall_probe_ns, NSEC_PER_MSEC);
	switch (why) {
	case KCOLL_STALL_WHY_NOT_SUBMITTED:
	case KCOLL_STALL_WHY_STOPPED:
		kcoll_info_rl("comm %llu: op %llu stalled: rank %u not submitted%s (done: %u)\n",
			      comm->id, s->op_id, rank,
			      why == KCOLL_STALL_WHY_STOPPED ? ", its process is stopped" : "",
			      s->culprit_done);
		break;
	case KCOLL_STALL_WHY_NO_ANSWER:
		kcoll_info_rl("comm %llu: op %llu stalled: rank %u does not answer\n",
			      comm->id, s->op_id, rank);
		break;
	default:
		kcoll_info_rl("comm %llu: op %llu stalled: rank %u waits for rank %u\n",
			      comm->id, s->op_id, rank, s->culprit_waits);
		break;
	}
	kcoll_genl_notify_stall(comm);
}

/* How long the probed peers have to answer. */
static u64 kcoll_stall_answer_ns(const struct kcoll_comm *comm)
{
	return (u64)comm->stall_ms * NSEC_PER_MSEC / 2;
}

/* Whether @conn's answer says its rank has not submitted operation @num. */
static bool kcoll_stall_lags(const struct kcoll_conn *conn, u32 num)
{
	return conn->replied && (s32)(conn->rep_submitted - num) < 0;
}

/*
 * Name the culprit from the answers so far; @deadline: the probes' time
 * is up, a peer that did not answer is to blame.
 */
static void kcoll_stall_decide(struct kcoll_comm *comm, bool deadline)
{
	struct kcoll_stall *s = &comm->stall;
	u32 num = (u32)s->op_id, i, r, hops, silent = U32_MAX;
	bool all = true;

	if (s->culprit != U32_MAX || !comm->stall_probe_ns)
		return;
	/* The waited-for rank first, then in rank order. */
	for (i = 0; i <= comm->nranks; i++) {
		r = i ? i - 1 : s->wait_peer;
		if (r >= comm->nranks || r == comm->rank)
			continue;
		if (kcoll_stall_lags(&comm->conns[r], num)) {
			bool stopped = comm->conns[r].rep_flags & KCOLL_CTL_REPLY_STOPPED;

			kcoll_stall_name(comm, r, stopped ? KCOLL_STALL_WHY_STOPPED :
					 KCOLL_STALL_WHY_NOT_SUBMITTED);
			return;
		}
		if (comm->conns[r].probed && !comm->conns[r].replied) {
			all = false;
			if (silent == U32_MAX)
				silent = r;
		}
	}
	if (!all) {
		if (deadline)
			kcoll_stall_name(comm, silent, KCOLL_STALL_WHY_NO_ANSWER);
		return;
	}
	/* Everyone runs it: follow who waits for whom, at most nranks hops. */
	r = s->wait_peer;
	if (r >= comm->nranks || r == comm->rank)
		return;
	for (hops = 0; hops < comm->nranks; hops++) {
		const struct kcoll_conn *conn = &comm->conns[r];
		u32 next = conn->rep_w[KCOLL_CTL_W_PEER];

		if (!conn->replied || next >= comm->nranks || next == comm->rank ||
		    next == r || !comm->conns[next].replied)
			break;
		r = next;
	}
	kcoll_stall_name(comm, r, KCOLL_STALL_WHY_WAITING);
}

/* The active operation @op has made no progress for stall_ms: record, probe, tell. */
static void kcoll_stall_begin(struct kcoll_comm *comm, struct kcoll_comm_op *op, u64 now)
{
	struct kcoll_stall *s = &comm->stall;
	u32 kind, peer, msg, round, i;
	struct kcoll_ctl m;

	kind = kc_exec_waiting(&op->ex, &peer, &msg, &round);
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->op_id = op->id;
	s->op = op->desc.op;
	s->bytes = op->desc.count * op->plan->esize;
	s->wait = kind;
	s->wait_peer = peer;
	s->wait_msg = msg;
	s->round = round;
	s->culprit = U32_MAX;
	s->stall_ms = (u32)div_u64(now - comm->stall_seen_ns, NSEC_PER_MSEC);
	comm->stall_probe_ns = now;

	kcoll_ctl_init(&m, KCOLL_CTL_PROBE, (u32)op->id);
	m.rank = cpu_to_le32(comm->rank);
	/* kcoll_stall_running(): not dead, so the QPs take sends. */
	m.other = cpu_to_le32(peer);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		conn->probed = false;
		conn->replied = false;
		if (i == comm->rank || !kcoll_ctl_conn_usable(conn))
			continue;
		/* One that cannot be posted counts as not answering. */
		conn->probed = true;
		s->probed++;
		if (kcoll_conn_send_ctl(conn, &m))
			pr_debug("comm %llu: cannot probe rank %u\n", comm->id, i);
	}
	kcoll_info_rl("comm %llu: op %llu stalled for %u ms: waits for rank %u (%s %u, round %u)\n",
		      comm->id, op->id, s->stall_ms, peer,
		      kind == KC_WAIT_CREDIT ? "credit of message" : "message", msg, round);
	kcoll_genl_notify_stall(comm);
}

static void kcoll_stall_work(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(to_delayed_work(work), struct kcoll_comm,
					       stall_work);
	struct kcoll_comm_op *op;
	u64 now;

	mutex_lock(&comm->lock);
	op = kcoll_stall_running(comm);
	if (!op) {
		if (comm->stall_probe_ns)
			comm->stall.flags |= KCOLL_STALL_F_OVER;
		comm->stall_probe_ns = 0;
		goto out;
	}
	now = ktime_get_ns();
	if (op->id != comm->stall_seen_op || op->ex.progress != comm->stall_seen_progress) {
		if (comm->stall_probe_ns && comm->stall.op_id == comm->stall_seen_op)
			comm->stall.flags |= KCOLL_STALL_F_OVER;
		comm->stall_probe_ns = 0;
		comm->stall_seen_op = op->id;
		comm->stall_seen_progress = op->ex.progress;
		/* An operation that just started counts from its start. */
		comm->stall_seen_ns = op->ex.progress ? now : op->start_ns;
	}
	if (!comm->stall_probe_ns) {
		if (now - comm->stall_seen_ns >= (u64)comm->stall_ms * NSEC_PER_MSEC) {
			kcoll_stall_begin(comm, op, now);
			/* Back when the answers are due. */
			mod_delayed_work(kcoll_wq_get(), &comm->stall_work,
					 nsecs_to_jiffies(kcoll_stall_answer_ns(comm)) + 1);
			goto out;
		}
	} else if (now - comm->stall_probe_ns >= kcoll_stall_answer_ns(comm)) {
		kcoll_stall_decide(comm, true);
	}
	mod_delayed_work(kcoll_wq_get(), &comm->stall_work, kcoll_stall_period(comm));
out:
	mutex_unlock(&comm->lock);
}

/* At creation, in the creator's context, with the tunable. */
void kcoll_stall_init(struct kcoll_comm *comm, u32 stall_ms)
{
	comm->stall_ms = stall_ms;
	INIT_DELAYED_WORK(&comm->stall_work, kcoll_stall_work);
	comm->owner = get_task_pid(current, PIDTYPE_TGID);
}

/* A peer's operation stalled: say at once what this rank is doing. */
void kcoll_stall_probe_recv(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_comm_op *op = comm->active;
	u32 w[KCOLL_CTL_W_WORDS] = {}, flags = 0, i;
	__le32 lw[KCOLL_CTL_W_WORDS];
	struct kcoll_ctl r;

	kcoll_ctl_init(&r, KCOLL_CTL_REPLY, (u32)comm->next_id);
	r.rank = cpu_to_le32(comm->rank);
	w[KCOLL_CTL_W_PEER] = U32_MAX;
	if (op) {
		r.other = cpu_to_le32((u32)op->id);
		if (kcoll_stall_running(comm)) {
			flags |= KCOLL_CTL_REPLY_RUNNING;
			w[KCOLL_CTL_W_KIND] = kc_exec_waiting(&op->ex, &w[KCOLL_CTL_W_PEER],
							      &w[KCOLL_CTL_W_MSG],
							      &w[KCOLL_CTL_W_ROUND]);
		}
	}
	w[KCOLL_CTL_W_DONE] = kcoll_stall_last_done(comm);
	if (kcoll_stall_owner_stopped(comm))
		flags |= KCOLL_CTL_REPLY_STOPPED;
	r.code = cpu_to_le32(flags);
	r.pid = cpu_to_le32(comm->pid);
	for (i = 0; i < KCOLL_CTL_W_WORDS; i++)
		lw[i] = cpu_to_le32(w[i]);
	memcpy(r.fp_rank, lw, sizeof(lw));
	pr_debug("comm %llu: rank %u probes (op %u): submitted %llu, flags %#x\n", comm->id,
		 conn->peer, le32_to_cpu(m->op_num), comm->next_id, flags);
	if (!comm->dead && kcoll_ctl_conn_usable(conn) && kcoll_conn_send_ctl(conn, &r))
		pr_debug("comm %llu: cannot answer rank %u\n", comm->id, conn->peer);
}

/* A peer answered this rank's probe. */
void kcoll_stall_reply_recv(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	struct kcoll_comm *comm = conn->comm;
	__le32 lw[KCOLL_CTL_W_WORDS];
	u32 i;

	if (!conn->probed || conn->replied || !comm->stall_probe_ns)
		return;
	conn->rep_submitted = le32_to_cpu(m->op_num);
	conn->rep_active = le32_to_cpu(m->other);
	conn->rep_flags = le32_to_cpu(m->code);
	conn->rep_pid = le32_to_cpu(m->pid);
	memcpy(lw, m->fp_rank, sizeof(lw));
	for (i = 0; i < KCOLL_CTL_W_WORDS; i++)
		conn->rep_w[i] = le32_to_cpu(lw[i]);
	conn->replied = true;
	comm->stall.replied++;
	kcoll_stall_decide(comm, false);
}
