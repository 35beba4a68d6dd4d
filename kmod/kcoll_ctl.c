// SPDX-License-Identifier: GPL-2.0
/*
 * Control messages between the modules of a communicator's ranks, and the
 * record of why its first operation failed (KCOLL_IOC_FAULT).
 *
 * An operation's data cannot say why a rank stopped taking part in it:
 * before, a rank that found its peer's header different failed alone
 * with -EPROTO, and its peers learnt only that it disconnected
 * (-ECONNRESET) once its process gave up, or nothing until their timeout.
 * Now a communicator that fails first tells every peer why
 * (kcoll_ctl_tell(), before fail_work stops the QPs): KCOLL_CTL_VERDICT
 * for a disagreement (the operation, a rank and its header, the teller and
 * the header it expected), KCOLL_CTL_PEER_FAULT for a rank that left.  A
 * rank whose process leaves with work outstanding says so itself
 * (KCOLL_CTL_BYE: exit, signal or close, and its pid), when its address
 * space goes (an mmu notifier: a dying process tears down its memory
 * before it closes its files) or at the latest when it closes.  A verdict
 * ends the operation everywhere with -EPROTO; a farewell or a peer's
 * fault makes the sender gone for the active operation at once (RC
 * delivered all it sent before), which fails with -ECONNRESET where it
 * still needs the sender, as after a drained disconnect.
 *
 * Each rank keeps the first fault from its own point of view: the rank
 * that called the operation differently from this one (a third rank
 * compares the headers the verdict carries with its own expectation), the
 * rank that left and why, and which rank told.  User space turns it into
 * words (lib/coll_fault.c: coll_last_error(), collctl show).
 *
 * A communicator that fails with nobody to blame (a timeout, an abort)
 * still says so (PEER_FAULT with kind NONE): its peers then know it is
 * alive, not gone, when they ask which ranks are (KCOLL_IOC_PEERS).
 *
 * PROBE and REPLY (a stalled operation's questions to the peers and
 * their answers) are kcoll_stall.c's.
 *
 * Control messages are best effort: they go out on connections that are
 * up, from the few buffers of each connection, and one that cannot be
 * posted changes nothing but the report.  Everything here runs under
 * comm->lock, but the watch (kcoll_ctl_watch(), _unwatch(), the notifier)
 * and kcoll_comm_fault(), which take it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "kcoll.h"

/* A control message of @type about operation @op_num, the rest zero. */
void kcoll_ctl_init(struct kcoll_ctl *m, u8 type, u32 op_num)
{
	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_le32(KCOLL_CTL_MAGIC);
	m->version = KCOLL_CM_VERSION;
	m->type = type;
	m->len = cpu_to_le16(sizeof(*m));
	m->op_num = cpu_to_le32(op_num);
}

/*
 * The peer of @conn is up and its process has not said it leaves: a
 * control message may go to it.  A peer that said its communicator failed
 * is alive, and is told in turn: else, having failed first, it would
 * count this rank as gone when this one's QPs stop (KCOLL_IOC_PEERS).
 */
bool kcoll_ctl_conn_usable(const struct kcoll_conn *conn)
{
	return !READ_ONCE(conn->lost) && (!conn->bye_kind || conn->told) &&
	       READ_ONCE(conn->state) == KCOLL_CONN_UP;
}

/* Send @m to every peer that is up and has not left. */
static void kcoll_ctl_broadcast(struct kcoll_comm *comm, const struct kcoll_ctl *m)
{
	u32 i;

	if (comm->dead)
		return;
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (i == comm->rank || !kcoll_ctl_conn_usable(conn))
			continue;
		if (kcoll_conn_send_ctl(conn, m))
			pr_debug("comm %llu: cannot tell rank %u (type %u)\n", comm->id, i,
				 m->type);
	}
}

/* The header this rank expects from @peer for @op. */
static void kcoll_fp_expected(const struct kcoll_comm_op *op, u32 peer, u8 fp[KC_HDR_BYTES])
{
	kc_hdr_fill(fp, op->plan, &op->desc, (u32)op->id, peer, false);
}

static bool kcoll_fault_set(struct kcoll_comm *comm, const struct kcoll_comm_op *op, u32 kind,
			    int status, u32 rank, u32 reporter)
{
	struct kcoll_fault *f = &comm->fault;

	if (f->kind != KCOLL_FAULT_NONE)
		return false;
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	f->kind = kind;
	f->op_id = op->id;
	f->status = status;
	f->rank = rank;
	f->reporter = reporter;
	return true;
}

/*
 * A completion on @conn failed with @err.  A send its peer never
 * acknowledged (-EHOSTUNREACH) is that rank's node or the network to it
 * gone: it is the fault of the active operation, so that this rank names
 * it and tells the others who to blame.  comm->lock held.
 */
void kcoll_comm_fail_conn(struct kcoll_conn *conn, int err)
{
	struct kcoll_comm *comm = conn->comm;

	if (err == -EHOSTUNREACH && comm->active && !comm->err)
		kcoll_fault_set(comm, comm->active, KCOLL_FAULT_PEER_LOST, err, conn->peer,
				comm->rank);
	kcoll_comm_fail(comm, err);
	kcoll_comm_advance(comm);
}

/* @op ended with -EPROTO because @op->ex.bad_peer's header differed: keep it. */
void kcoll_ctl_mismatch(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	u32 bad = op->ex.bad_peer;

	if (!op->ex_ready || bad >= comm->nranks ||
	    !kcoll_fault_set(comm, op, KCOLL_FAULT_MISMATCH, -EPROTO, bad, comm->rank))
		return;
	memcpy(comm->fault.fp_rank, op->ex.bad_hdr, KC_HDR_BYTES);
	kcoll_fp_expected(op, bad, comm->fault.fp_mine);
}

/*
 * The communicator fails: tell every peer why, once, before its QPs stop
 * (fail_work lets control messages out first).  A peer whose operation
 * is the same fails it too (a disagreement) or learns why this rank is
 * about to disconnect (a rank that left), so that every rank names the
 * rank at fault, not merely the neighbour that went first.
 */
/* One line for the operator (rate-limited as every user-caused message). */
static void kcoll_ctl_log(const struct kcoll_comm *comm, const struct kcoll_fault *f)
{
	static const char *const how[] = {
		[KCOLL_FAULT_MISMATCH] = "called it differently",
		[KCOLL_FAULT_PEER_EXIT] = "exited",
		[KCOLL_FAULT_PEER_SIGNAL] = "was killed by a signal",
		[KCOLL_FAULT_PEER_CLOSE] = "closed its communicator",
		[KCOLL_FAULT_PEER_LOST] = "disconnected without notice",
		[KCOLL_FAULT_PEER_FAILED] = "failed on its own",
	};

	kcoll_info_rl("comm %llu: op %llu failed (%d): rank %u (pid %u) %s (%u); rank %u saw it\n",
		      comm->id, f->op_id, f->status, f->rank, f->pid, how[f->kind], f->code,
		      f->reporter);
}

void kcoll_ctl_tell(struct kcoll_comm *comm)
{
	const struct kcoll_fault *f = &comm->fault;
	struct kcoll_ctl m;

	/* A rank that said farewell is the news, not what follows from it. */
	if (comm->fault_told || comm->bye_sent)
		return;
	comm->fault_told = true;
	if (f->kind == KCOLL_FAULT_NONE || f->kind == KCOLL_FAULT_PEER_FAILED) {
		/*
		 * No rank to blame (a timeout, an abort, or a peer that failed
		 * so): the peers still learn that this rank is alive and failed
		 * on purpose, which is what a shrink asks of them
		 * (kcoll_comm_peers()), and need not wait for it.  One that
		 * closes leaves: not news, or a farewell already went out.
		 */
		if (comm->closing)
			return;
		comm->ctl_wait_ms = KCOLL_CTL_WAIT_NONE_MS;
		kcoll_ctl_init(&m, KCOLL_CTL_PEER_FAULT, (u32)comm->next_id);
		m.err = cpu_to_le32(-comm->err);
		m.rank = cpu_to_le32(comm->rank);
		m.other = cpu_to_le32(KCOLL_FAULT_NONE);
		kcoll_ctl_broadcast(comm, &m);
		return;
	}
	kcoll_ctl_log(comm, f);
	comm->ctl_wait_ms = KCOLL_CTL_WAIT_MS;
	if (f->kind == KCOLL_FAULT_MISMATCH) {
		kcoll_ctl_init(&m, KCOLL_CTL_VERDICT, (u32)f->op_id);
		m.err = cpu_to_le32(EPROTO);
		m.rank = cpu_to_le32(f->rank);
		m.other = cpu_to_le32(comm->rank);
		memcpy(m.fp_rank, f->fp_rank, KC_HDR_BYTES);
		memcpy(m.fp_other, f->fp_mine, KC_HDR_BYTES);
	} else {
		kcoll_ctl_init(&m, KCOLL_CTL_PEER_FAULT, (u32)f->op_id);
		m.err = cpu_to_le32(-f->status);
		m.rank = cpu_to_le32(f->rank);
		m.other = cpu_to_le32(f->kind);
		m.pid = cpu_to_le32(f->pid);
		m.code = cpu_to_le32(f->code);
	}
	kcoll_ctl_broadcast(comm, &m);
}

/*
 * Apply a verdict to @op, the operation it is about: from this rank's
 * point of view the rank at fault is the one whose header differs from
 * what this rank expects of it.
 */
static void kcoll_ctl_apply_verdict(struct kcoll_comm *comm, struct kcoll_comm_op *op,
				    const struct kcoll_ctl *m, u32 from)
{
	u32 rank = le32_to_cpu(m->rank), other = le32_to_cpu(m->other);
	const u8 *fp = m->fp_rank;
	u8 mine[KC_HDR_BYTES];

	if (rank >= comm->nranks || other >= comm->nranks || !op->ex_ready ||
	    kc_exec_status(&op->ex) != -EINPROGRESS)
		return;
	kcoll_fp_expected(op, rank, mine);
	if (rank == comm->rank || kc_hdr_same(mine, fp)) {
		/* This rank agrees with @rank: the one that differs is @other. */
		rank = other;
		fp = m->fp_other;
		kcoll_fp_expected(op, rank, mine);
	}
	if (kcoll_fault_set(comm, op, KCOLL_FAULT_MISMATCH, -EPROTO, rank, from)) {
		memcpy(comm->fault.fp_rank, fp, KC_HDR_BYTES);
		memcpy(comm->fault.fp_mine, mine, KC_HDR_BYTES);
	}
	kc_exec_fail(&op->ex, -EPROTO);
}

/* @op starts: a verdict about it may have come first. */
void kcoll_ctl_op_start(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	u32 num = le32_to_cpu(comm->verdict.op_num);

	if (!comm->verdict_pending || num != (u32)op->id)
		return;
	comm->verdict_pending = false;
	kcoll_ctl_apply_verdict(comm, op, &comm->verdict, comm->verdict_from);
}

/*
 * @op failed because @peer left while it was still needed: name it, or
 * the rank it said its leaving was about, with what it said.
 */
void kcoll_ctl_peer_gone(struct kcoll_comm *comm, struct kcoll_comm_op *op, u32 peer)
{
	const struct kcoll_conn *conn = &comm->conns[peer];
	u32 kind = conn->bye_kind ? conn->bye_kind : KCOLL_FAULT_PEER_LOST;
	u32 rank = conn->bye_kind ? conn->bye_rank : peer;

	/* It said its communicator failed with nobody to blame: alive. */
	if (!conn->bye_kind && conn->told && conn->fail_err)
		kind = KCOLL_FAULT_PEER_FAILED;
	if (!kcoll_fault_set(comm, op, kind, kc_exec_status(&op->ex), rank, peer))
		return;
	comm->fault.pid = conn->bye_pid;
	comm->fault.code = kind == KCOLL_FAULT_PEER_FAILED ? conn->fail_err : conn->bye_code;
}

/*
 * @op failed with -ECONNRESET on its own (a send to a peer that had
 * disconnected): name that peer, preferring one that said why it left.
 */
void kcoll_ctl_blame_lost(struct kcoll_comm *comm, struct kcoll_comm_op *op)
{
	u32 i, lost = U32_MAX;

	for (i = 0; i < comm->nranks && comm->fault.kind == KCOLL_FAULT_NONE; i++) {
		const struct kcoll_conn *conn = &comm->conns[i];

		if (i == comm->rank)
			continue;
		if (conn->bye_kind)
			kcoll_ctl_peer_gone(comm, op, i);
		else if (lost == U32_MAX && (READ_ONCE(conn->lost) || READ_ONCE(conn->departed)))
			lost = i;
	}
	if (lost != U32_MAX)
		kcoll_ctl_peer_gone(comm, op, lost);
}

static void kcoll_ctl_on_verdict(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_comm_op *op = comm->active;
	u32 num = le32_to_cpu(m->op_num);

	pr_debug("comm %llu: rank %u: operation %u failed (rank %u against rank %u)\n",
		 comm->id, conn->peer, num, le32_to_cpu(m->rank), le32_to_cpu(m->other));
	conn->told = true;
	if (op && (u32)op->id == num) {
		kcoll_ctl_apply_verdict(comm, op, m, conn->peer);
		return;
	}
	/* Over here already (an operation this rank did not fail in). */
	if ((s32)(num - (u32)(op ? op->id : comm->next_id)) <= 0)
		return;
	/* Not started here yet: the first such verdict waits for its operation. */
	if (!comm->verdict_pending) {
		comm->verdict = *m;
		comm->verdict_from = conn->peer;
		comm->verdict_pending = true;
	}
}

/*
 * The peer leaves (BYE: its process; PEER_FAULT: its communicator failed
 * because of the rank the message names): all it sent came before this,
 * so it is gone for the active operation from now on.
 */
static void kcoll_ctl_on_leave(struct kcoll_conn *conn, const struct kcoll_ctl *m)
{
	struct kcoll_comm *comm = conn->comm;
	u32 kind = le32_to_cpu(m->other), rank = le32_to_cpu(m->rank);
	bool failed = m->type == KCOLL_CTL_PEER_FAULT && !conn->told;

	if (m->type == KCOLL_CTL_PEER_FAULT)
		conn->told = true;
	if (failed && kind == KCOLL_FAULT_NONE)
		conn->fail_err = le32_to_cpu(m->err);
	if (kind < KCOLL_FAULT_PEER_EXIT || kind > KCOLL_FAULT_PEER_LOST ||
	    rank >= comm->nranks || (m->type == KCOLL_CTL_BYE && rank != conn->peer) ||
	    conn->bye_kind) {
		/*
		 * Its communicator failed with nobody to blame: it takes part
		 * in nothing more.  It parks rather than closes the connection
		 * (kcoll_adopt.c), so no disconnect says so: an operation that
		 * needs it fails now.
		 */
		if (failed)
			kcoll_comm_peer_left(comm, conn->peer);
		return;
	}
	conn->bye_rank = rank;
	conn->bye_pid = le32_to_cpu(m->pid);
	conn->bye_code = le32_to_cpu(m->code);
	WRITE_ONCE(conn->bye_kind, kind);
	pr_debug("comm %llu: rank %u leaves: rank %u, kind %u, pid %u, code %u\n", comm->id,
		 conn->peer, rank, kind, conn->bye_pid, conn->bye_code);
	kcoll_comm_peer_left(comm, conn->peer);
}

/* A control message from @conn's peer (a copy: its slot is reposted). */
void kcoll_ctl_recv(struct kcoll_conn *conn, const void *buf, u32 len)
{
	struct kcoll_ctl m;

	if (len < sizeof(m))
		goto bad;
	memcpy(&m, buf, sizeof(m));
	if (le32_to_cpu(m.magic) != KCOLL_CTL_MAGIC || m.version != KCOLL_CM_VERSION ||
	    le16_to_cpu(m.len) != sizeof(m))
		goto bad;
	switch (m.type) {
	case KCOLL_CTL_VERDICT:
		kcoll_ctl_on_verdict(conn, &m);
		return;
	case KCOLL_CTL_BYE:
	case KCOLL_CTL_PEER_FAULT:
		kcoll_ctl_on_leave(conn, &m);
		return;
	case KCOLL_CTL_PROBE:
		kcoll_stall_probe_recv(conn, &m);
		return;
	case KCOLL_CTL_REPLY:
		kcoll_stall_reply_recv(conn, &m);
		return;
	case KCOLL_CTL_RESET:
		/* A survivor quicker to shrink than this rank is to park: kept. */
		kcoll_adopt_ctl(conn, &m);
		return;
	}
bad:
	pr_debug("comm %llu: rank %u sent an unknown control message (%u bytes)\n",
		 conn->comm->id, conn->peer, len);
}

/*
 * This rank leaves with work outstanding (@why: enum kcoll_fault_kind
 * PEER_*, @code its exit status or signal): say so to every peer before
 * the QPs go down.  Only the work outstanding makes it news: a rank that
 * closes after its last operation leaves as a matter of course.
 */
void kcoll_ctl_bye(struct kcoll_comm *comm, u32 why, u32 code)
{
	struct kcoll_ctl m;

	if (comm->bye_sent || (!comm->active && list_empty(&comm->queued)))
		return;
	comm->bye_sent = true;
	kcoll_ctl_init(&m, KCOLL_CTL_BYE, (u32)comm->next_id);
	m.rank = cpu_to_le32(comm->rank);
	m.other = cpu_to_le32(why);
	m.pid = cpu_to_le32(comm->pid);
	m.code = cpu_to_le32(code);
	kcoll_ctl_broadcast(comm, &m);
}

/* A process's exit code as the leaving a peer is told of: enum kcoll_fault_kind. */
static u32 kcoll_ctl_exit_reason(int exit_code, u32 *code)
{
	if (exit_code & 0x7f) {
		*code = exit_code & 0x7f;
		return KCOLL_FAULT_PEER_SIGNAL;
	}
	*code = (exit_code >> 8) & 0xff;
	return KCOLL_FAULT_PEER_EXIT;
}

/* Why the current task closes its communicator: enum kcoll_fault_kind. */
u32 kcoll_ctl_leave_reason(u32 *code)
{
	*code = 0;
	if (!(current->flags & PF_EXITING))
		return KCOLL_FAULT_PEER_CLOSE;
	return kcoll_ctl_exit_reason(current->signal->group_exit_code ?
				     current->signal->group_exit_code : current->exit_code, code);
}

/*
 * The owner's process is on its way out: a fatal signal sets
 * SIGNAL_GROUP_EXIT when it is sent, and do_exit() of the last thread sets
 * it first thing (6.1 and later).  The process itself still has to run
 * before its memory goes (kcoll_ctl_mm_release()), and on a CPU busy
 * with this communicator's completions, whose work runs at high priority,
 * that took up to 150 ms under TCG.  Every completion (kcoll_xport.c)
 * looks, so that the peers hear as soon as this rank is doomed.  Read
 * without the sighand lock (not exported): a look between the two stores
 * under it may see the flag with an exit code of 0, which changes the
 * reason reported, not the news.  comm->lock held.
 */
void kcoll_ctl_bye_if_doomed(struct kcoll_comm *comm)
{
	struct task_struct *task;
	unsigned int flags = 0;
	int exit_code = 0;
	u32 why, code;

	if (comm->bye_sent || !comm->owner)
		return;
	rcu_read_lock();
	task = pid_task(comm->owner, PIDTYPE_TGID);
	if (task) {
		flags = READ_ONCE(task->signal->flags);
		exit_code = READ_ONCE(task->signal->group_exit_code);
	}
	rcu_read_unlock();
	if (!(flags & SIGNAL_GROUP_EXIT))
		return;
	why = kcoll_ctl_exit_reason(exit_code, &code);
	kcoll_ctl_bye(comm, why, code);
}

/* KCOLL_IOC_FAULT: the first fault, or only the errno that ended the communicator. */
void kcoll_comm_fault(struct kcoll_comm *comm, struct kcoll_fault *out)
{
	mutex_lock(&comm->lock);
	*out = comm->fault;
	if (out->kind == KCOLL_FAULT_NONE) {
		memset(out, 0, sizeof(*out));
		out->status = comm->err;
	}
	out->size = sizeof(*out);
	mutex_unlock(&comm->lock);
}

/*
 * The owner's address space is going: its process is dying (or exec()s).
 * A dying process tears down its memory (exit_mm()) before it closes its
 * files (exit_files()), which takes long for a big one; the peers are told
 * here, at the start of that, rather than at close().
 */
static void kcoll_ctl_mm_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct kcoll_comm *comm = container_of(mn, struct kcoll_comm, mm_watch);
	u32 code, why = kcoll_ctl_leave_reason(&code);

	mutex_lock(&comm->lock);
	kcoll_ctl_bye(comm, why, code);
	mutex_unlock(&comm->lock);
}

static const struct mmu_notifier_ops kcoll_ctl_mm_ops = {
	.release = kcoll_ctl_mm_release,
};

/*
 * Watch @mm, the owner's, for the process's end.  Without the watch (no
 * memory for it) the peers are told at close(), later.
 */
void kcoll_ctl_watch(struct kcoll_comm *comm, struct mm_struct *mm)
{
	comm->mm_watch.ops = &kcoll_ctl_mm_ops;
	if (mmu_notifier_register(&comm->mm_watch, mm)) {
		pr_debug("comm %llu: cannot watch the owner's mm\n", comm->id);
		return;
	}
	mmgrab(mm);
	comm->mm = mm;
}

/* Stop watching (runs the release callback if the mm is still there). */
void kcoll_ctl_unwatch(struct kcoll_comm *comm)
{
	if (!comm->mm)
		return;
	mmu_notifier_unregister(&comm->mm_watch, comm->mm);
	mmdrop(comm->mm);
	comm->mm = NULL;
}
