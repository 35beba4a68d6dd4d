// SPDX-License-Identifier: GPL-2.0
/*
 * Threaded transport of the algorithm suite and demo_sim.  Each rank owns
 * an executor and an inbox; sends copy the header and payload into a
 * message in the receiver's inbox, releasing a slot sends a credit back
 * to the sender.
 *
 * Ranks are served by a small pool of threads, one per CPU, as the
 * module's completions are served by a workqueue: a rank with messages in
 * its inbox is queued, and one worker at a time hands them to its
 * executor in arrival order (so what one rank sent another arrives in
 * order, as on an RC QP).  A thread per rank made 33 ranks on two cores
 * spend most of the suite waking each other in futex calls.
 *
 * A rank whose operation fails (or that "dies", fault injection) sends
 * nothing more, not even credits, and tells every other rank, which calls
 * kc_exec_peer_gone(rank, -ECONNRESET): what the module does when a
 * failed communicator disconnects its QPs.  The notice follows in each
 * inbox everything the rank sent before, as the drained QP delivers
 * everything first.
 *
 * A deadlock is made visible: when no rank is queued and no worker is
 * busy while operations still run, no message can ever come (ranks that
 * disagree about an operation may each wait for the other), and every
 * rank still running fails with -ETIMEDOUT at once, as the module's
 * operation timeout would fail them, without waiting it out.  A rank that
 * hears nothing for timeout_ms while others still talk fails the same way.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "tw.h"

enum tw_kind { TW_DATA, TW_CREDIT, TW_GONE };

struct tw_msg {
	struct tw_msg *next;
	enum tw_kind kind;
	u32 src;
	u32 tag;
	u32 len;
	unsigned char data[];
};

/* What a queued rank has to do, besides its inbox. */
enum tw_todo { TW_TODO_NONE, TW_TODO_START, TW_TODO_TIMEOUT };

struct tw_rank {
	struct tw_world *w;
	u32 rank;
	struct tw_job *job;
	struct kc_exec ex;
	/* Under w->lock: */
	struct tw_msg *head, *tail;	/* the inbox */
	struct tw_rank *next_queued;
	bool queued;		/* in the run queue or being served */
	bool running;		/* its operation has not ended */
	enum tw_todo todo;
	struct timespec last_event;
	/* Only by the worker serving it: */
	bool inited;		/* kc_exec_init() succeeded: destroy it at the end */
	bool dead;
	int status;
};

struct tw_world {
	u32 n;
	u32 nworkers;
	pthread_t *workers;
	struct tw_rank *ranks;
	struct tw_job *jobs;
	struct kc_exec_cfg cfg;
	int timeout_ms;
	pthread_mutex_t lock;	/* the inboxes, the run queue and the counts */
	pthread_cond_t work;	/* a rank was queued, or quit */
	pthread_cond_t done;	/* nrunning reached 0, or a rank left tw_serve() */
	struct tw_rank *rq_head, *rq_tail;
	u32 nrunning;		/* ranks whose operation has not ended */
	u32 nidle;		/* workers waiting for work */
	bool quit;
};

static void tw_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static long tw_ms_since(const struct timespec *then)
{
	struct timespec now;

	tw_now(&now);
	return (now.tv_sec - then->tv_sec) * 1000L + (now.tv_nsec - then->tv_nsec) / 1000000L;
}

/* Queue a rank that has something to do.  w->lock held. */
static void tw_queue(struct tw_world *w, struct tw_rank *rk)
{
	if (rk->queued || !rk->running)
		return;
	rk->queued = true;
	rk->next_queued = NULL;
	if (w->rq_tail)
		w->rq_tail->next_queued = rk;
	else
		w->rq_head = rk;
	w->rq_tail = rk;
	/*
	 * Whoever queues is a worker that looks at the queue again when it
	 * is done: wake an idle one only for a second rank, not for every
	 * message (the wake-ups cost more than the work they share).
	 */
	if (w->nidle && w->rq_head != rk)
		pthread_cond_signal(&w->work);
}

static void tw_push(struct tw_world *w, u32 to, struct tw_msg *m)
{
	struct tw_rank *rk = &w->ranks[to];

	m->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (rk->tail)
		rk->tail->next = m;
	else
		rk->head = m;
	rk->tail = m;
	tw_queue(w, rk);
	pthread_mutex_unlock(&w->lock);
}

static struct tw_msg *tw_msg_new(enum tw_kind kind, u32 src, u32 len)
{
	struct tw_msg *m = malloc(sizeof(*m) + len);

	if (!m) {
		perror("tw: malloc");
		abort();
	}
	m->kind = kind;
	m->src = src;
	m->len = len;
	m->tag = 0;
	return m;
}

static void tw_die(struct tw_rank *rk)
{
	u32 i;

	rk->dead = true;
	for (i = 0; i < rk->w->n; i++)
		if (i != rk->rank)
			tw_push(rk->w, i, tw_msg_new(TW_GONE, rk->rank, 0));
}

static int tw_send(void *ctx, u32 peer, u32 tag, const void *hdr, u32 hdr_len, u8 buf, u64 off,
		   const void *data, u32 len)
{
	struct tw_rank *rk = ctx;
	struct tw_msg *m;

	(void)buf;
	(void)off;
	if (rk->dead)
		return -ECONNABORTED;
	if (rk->job->fail_after && rk->job->sent >= rk->job->fail_after) {
		tw_die(rk);
		return -ECONNABORTED;
	}
	/* What a receive slot holds (the module's are this size). */
	if (hdr_len > KC_HDR_BYTES || len > (rk->w->cfg.chunk_bytes & ~7u)) {
		fprintf(stderr, "tw: rank %u: message of %u + %u bytes exceeds a slot\n",
			rk->rank, hdr_len, len);
		abort();
	}
	m = tw_msg_new(TW_DATA, rk->rank, hdr_len + len);
	m->tag = tag;
	if (hdr_len)
		memcpy(m->data, hdr, hdr_len);
	if (len)
		memcpy(m->data + hdr_len, data, len);
	rk->job->sent++;
	tw_push(rk->w, peer, m);
	return 0;
}

static void tw_release(void *ctx, u32 peer, void *slot)
{
	struct tw_rank *rk = ctx;

	free(slot);
	if (!rk->dead)
		tw_push(rk->w, peer, tw_msg_new(TW_CREDIT, rk->rank, 0));
}

static const struct kc_xport_ops tw_ops = {
	.send = tw_send,
	.release = tw_release,
};

static int tw_start(struct tw_rank *rk)
{
	struct kc_exec_cfg cfg = rk->w->cfg;
	int st;

	rk->dead = false;
	rk->job->sent = 0;
	cfg.desc = rk->job->desc;
	st = kc_exec_init(&rk->ex, rk->job->plan, rk->job->bufs, &cfg, &tw_ops, rk);
	rk->inited = !st;
	return st ? st : kc_exec_start(&rk->ex);
}

static int tw_deliver(struct tw_rank *rk, struct tw_msg *m)
{
	int st = -EINPROGRESS;

	switch (m->kind) {
	case TW_DATA:
		return kc_exec_recv(&rk->ex, m->src, m->tag, m->data, m->len, m);
	case TW_CREDIT:
		st = kc_exec_send_done(&rk->ex, m->src);
		break;
	case TW_GONE:
		st = kc_exec_peer_gone(&rk->ex, m->src, -ECONNRESET);
		break;
	}
	free(m);
	return st;
}

/* The rank's operation ended with st: it stops talking and waits for nothing more. */
static void tw_end(struct tw_rank *rk, int st)
{
	struct tw_world *w = rk->w;

	if (rk->dead)
		st = -ECONNABORTED;
	else if (st)
		tw_die(rk);	/* a failed rank stops talking, peers are told */
	if (rk->inited)
		kc_exec_destroy(&rk->ex);
	rk->inited = false;
	rk->status = st;
	pthread_mutex_lock(&w->lock);
	rk->running = false;
	if (!--w->nrunning)
		pthread_cond_signal(&w->done);
	pthread_mutex_unlock(&w->lock);
}

/* Serve one queued rank: its start, a timeout, then its inbox.  w->lock held on entry and exit. */
static void tw_serve(struct tw_world *w, struct tw_rank *rk)
{
	enum tw_todo todo = rk->todo;
	struct tw_msg *m = rk->head;
	int st = -EINPROGRESS;

	rk->todo = TW_TODO_NONE;
	rk->head = NULL;
	rk->tail = NULL;
	tw_now(&rk->last_event);
	pthread_mutex_unlock(&w->lock);

	if (todo == TW_TODO_START)
		st = tw_start(rk);
	while (m && st == -EINPROGRESS && !rk->dead) {
		struct tw_msg *next = m->next;

		st = tw_deliver(rk, m);
		m = next;
	}
	if (todo == TW_TODO_TIMEOUT && st == -EINPROGRESS && !rk->dead)
		st = kc_exec_fail(&rk->ex, -ETIMEDOUT);
	if (st != -EINPROGRESS || rk->dead)
		tw_end(rk, st);
	/* What arrived after the end is never read: freed as tw_run drains. */
	pthread_mutex_lock(&w->lock);
	if (m) {
		struct tw_msg *last = m;

		while (last->next)
			last = last->next;
		last->next = rk->head;
		if (!rk->head)
			rk->tail = last;
		rk->head = m;
	}
	rk->queued = false;
	if (rk->running && (rk->head || rk->todo))
		tw_queue(w, rk);
	else if (!w->nrunning)
		pthread_cond_signal(&w->done);	/* tw_run() waits for the last one out */
}

/*
 * No worker busy, none queued: the ranks still running wait for what
 * cannot come; or some rank has heard nothing for timeout_ms.  Queue
 * them to fail with -ETIMEDOUT.  w->lock held.
 */
static void tw_check_timeouts(struct tw_world *w, bool stuck)
{
	u32 i;

	for (i = 0; i < w->n; i++) {
		struct tw_rank *rk = &w->ranks[i];

		if (!rk->running || rk->queued)
			continue;
		if (stuck || tw_ms_since(&rk->last_event) >= w->timeout_ms) {
			rk->todo = TW_TODO_TIMEOUT;
			tw_queue(w, rk);
		}
	}
}

static void *tw_worker(void *arg)
{
	struct tw_world *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->quit) {
		struct tw_rank *rk = w->rq_head;
		struct timespec ts;

		if (rk) {
			w->rq_head = rk->next_queued;
			if (!w->rq_head)
				w->rq_tail = NULL;
			tw_serve(w, rk);
			continue;
		}
		if (w->nrunning && w->nidle + 1 == w->nworkers) {
			tw_check_timeouts(w, true);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		w->nidle++;
		pthread_cond_timedwait(&w->work, &w->lock, &ts);
		w->nidle--;
		if (w->nrunning && !w->rq_head)
			tw_check_timeouts(w, false);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static u32 tw_nworkers(u32 n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		cpus = 1;
	return n < (u32)cpus ? n : (u32)cpus;
}

struct tw_world *tw_create(u32 n)
{
	struct tw_world *w = calloc(1, sizeof(*w));
	u32 i;

	if (!w)
		return NULL;
	w->n = n;
	w->nworkers = tw_nworkers(n ? n : 1);
	w->ranks = calloc(n, sizeof(*w->ranks));
	w->workers = calloc(w->nworkers, sizeof(*w->workers));
	if ((n && !w->ranks) || !w->workers)
		abort();
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	for (i = 0; i < n; i++) {
		w->ranks[i].w = w;
		w->ranks[i].rank = i;
	}
	for (i = 0; i < w->nworkers; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (pthread_create(&w->workers[i], &attr, tw_worker, w)) {
			perror("tw: pthread_create");
			abort();
		}
		pthread_attr_destroy(&attr);
	}
	return w;
}

u32 tw_size(const struct tw_world *w)
{
	return w->n;
}

static void tw_drain(struct tw_world *w)
{
	u32 i;

	for (i = 0; i < w->n; i++) {
		struct tw_msg *m = w->ranks[i].head;

		while (m) {
			struct tw_msg *next = m->next;

			free(m);
			m = next;
		}
		w->ranks[i].head = NULL;
		w->ranks[i].tail = NULL;
	}
}

/* A rank queued or being served.  w->lock held. */
static bool tw_any_queued(const struct tw_world *w)
{
	u32 i;

	for (i = 0; i < w->n; i++)
		if (w->ranks[i].queued)
			return true;
	return false;
}

void tw_run(struct tw_world *w, struct tw_job *jobs, const struct kc_exec_cfg *cfg,
	    int timeout_ms)
{
	u32 i;

	w->jobs = jobs;
	w->cfg = *cfg;
	w->timeout_ms = timeout_ms;
	pthread_mutex_lock(&w->lock);
	w->nrunning = w->n;
	for (i = 0; i < w->n; i++) {
		struct tw_rank *rk = &w->ranks[i];

		rk->job = &jobs[i];
		rk->running = true;
		rk->todo = TW_TODO_START;
		tw_now(&rk->last_event);
		tw_queue(w, rk);
	}
	pthread_cond_broadcast(&w->work);
	/* Every operation ended, and no worker still in tw_serve() of one. */
	while (w->nrunning || tw_any_queued(w))
		pthread_cond_wait(&w->done, &w->lock);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->n; i++)
		jobs[i].status = w->ranks[i].status;
	/* Credits and notices sent to ranks that had already finished. */
	tw_drain(w);
}

void tw_destroy(struct tw_world *w)
{
	u32 i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->nworkers; i++)
		pthread_join(w->workers[i], NULL);
	tw_drain(w);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	free(w->workers);
	free(w->ranks);
	free(w);
}
