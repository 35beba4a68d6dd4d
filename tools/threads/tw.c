// SPDX-License-Identifier: GPL-2.0
/*
 * Threaded transport of the algorithm suite and demo_sim.  Each rank
 * thread owns an executor and an inbox; sends copy the header and payload
 * into a message in the receiver's inbox, releasing a slot sends a credit
 * back to the sender.
 *
 * A rank whose operation fails (or that "dies", fault injection) sends
 * nothing more, not even credits, and tells every other rank, which calls
 * kc_exec_peer_gone(rank, -ECONNRESET): what the module does when a
 * failed communicator disconnects its QPs.  The notice follows in each
 * inbox everything the rank sent before, as the drained QP delivers
 * everything first.
 *
 * All inboxes share one lock, which makes a deadlock visible: when every
 * rank still running waits on an empty inbox, no message can ever come
 * (ranks that disagree about an operation may each wait for the other),
 * and they all fail with -ETIMEDOUT at once, as the module's operation
 * timeout would fail them, without waiting it out.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
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

struct tw_inbox {
	pthread_cond_t cond;
	struct tw_msg *head, *tail;
	bool waiting;		/* its rank sleeps on cond with the inbox empty */
};

struct tw_rank {
	struct tw_world *w;
	u32 rank;
	pthread_t thread;
	struct tw_job *job;
	bool dead;
};

struct tw_world {
	u32 n;
	pthread_mutex_t lock;	/* every inbox, nrunning, nwaiting, stuck */
	struct tw_inbox *inbox;
	struct tw_rank *ranks;
	pthread_barrier_t start, done;
	struct tw_job *jobs;
	struct kc_exec_cfg cfg;
	int timeout_ms;
	u32 nrunning;		/* ranks whose operation is still running */
	u32 nwaiting;		/* of them, waiting on an empty inbox */
	bool stuck;		/* all of them: nothing can ever arrive */
	bool quit;
};

static void tw_push(struct tw_world *w, u32 to, struct tw_msg *m)
{
	struct tw_inbox *ib = &w->inbox[to];

	m->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (ib->tail)
		ib->tail->next = m;
	else
		ib->head = m;
	ib->tail = m;
	if (ib->waiting) {
		/* Not waiting any more, as of now: no deadlock while it wakes. */
		ib->waiting = false;
		w->nwaiting--;
		pthread_cond_signal(&ib->cond);
	}
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

/* Every running rank waits on an empty inbox: wake them all to fail.  w->lock held. */
static void tw_check_stuck(struct tw_world *w)
{
	u32 i;

	if (w->stuck || !w->nrunning || w->nwaiting < w->nrunning)
		return;
	w->stuck = true;
	for (i = 0; i < w->n; i++)
		pthread_cond_signal(&w->inbox[i].cond);
}

/* The next message, or NULL after timeout_ms or once the world is stuck. */
static struct tw_msg *tw_pop(struct tw_world *w, u32 me, int timeout_ms)
{
	struct tw_inbox *ib = &w->inbox[me];
	struct tw_msg *m = NULL;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->lock);
	while (!ib->head && !w->stuck) {
		int err;

		if (!ib->waiting) {
			ib->waiting = true;
			w->nwaiting++;
			tw_check_stuck(w);
			if (w->stuck)
				break;
		}
		err = pthread_cond_timedwait(&ib->cond, &w->lock, &ts);
		if (err && !ib->head)
			break;
	}
	if (ib->waiting) {
		ib->waiting = false;
		w->nwaiting--;
	}
	if (ib->head) {
		m = ib->head;
		ib->head = m->next;
		if (!ib->head)
			ib->tail = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return m;
}

/* This rank's operation is over: it waits for nothing any more. */
static void tw_finished(struct tw_world *w)
{
	pthread_mutex_lock(&w->lock);
	w->nrunning--;
	tw_check_stuck(w);
	pthread_mutex_unlock(&w->lock);
}

static void tw_run_rank(struct tw_rank *rk)
{
	struct tw_world *w = rk->w;
	struct tw_job *job = rk->job;
	struct kc_exec_cfg cfg = w->cfg;
	struct kc_exec ex;
	int st;

	rk->dead = false;
	job->sent = 0;
	cfg.desc = job->desc;
	st = kc_exec_init(&ex, job->plan, job->bufs, &cfg, &tw_ops, rk);
	if (st) {
		tw_die(rk);
		tw_finished(w);
		job->status = st;
		return;
	}
	st = kc_exec_start(&ex);
	while (st == -EINPROGRESS && !rk->dead) {
		struct tw_msg *m = tw_pop(w, rk->rank, w->timeout_ms);

		if (!m) {
			st = kc_exec_fail(&ex, -ETIMEDOUT);
			break;
		}
		switch (m->kind) {
		case TW_DATA:
			st = kc_exec_recv(&ex, m->src, m->tag, m->data, m->len, m);
			break;
		case TW_CREDIT:
			st = kc_exec_send_done(&ex, m->src);
			free(m);
			break;
		case TW_GONE:
			st = kc_exec_peer_gone(&ex, m->src, -ECONNRESET);
			free(m);
			break;
		}
	}
	if (rk->dead)
		st = -ECONNABORTED;
	else if (st)
		tw_die(rk);	/* a failed rank stops talking, peers are told */
	kc_exec_destroy(&ex);
	tw_finished(w);
	job->status = st;
}

static void *tw_thread(void *arg)
{
	struct tw_rank *rk = arg;
	struct tw_world *w = rk->w;

	for (;;) {
		pthread_barrier_wait(&w->start);
		if (w->quit)
			return NULL;
		rk->job = &w->jobs[rk->rank];
		tw_run_rank(rk);
		pthread_barrier_wait(&w->done);
	}
}

struct tw_world *tw_create(u32 n)
{
	struct tw_world *w = calloc(1, sizeof(*w));
	u32 i;

	if (!w)
		return NULL;
	w->n = n;
	w->inbox = calloc(n, sizeof(*w->inbox));
	w->ranks = calloc(n, sizeof(*w->ranks));
	if (!w->inbox || !w->ranks)
		abort();
	pthread_mutex_init(&w->lock, NULL);
	pthread_barrier_init(&w->start, NULL, n + 1);
	pthread_barrier_init(&w->done, NULL, n + 1);
	for (i = 0; i < n; i++) {
		pthread_attr_t attr;

		pthread_cond_init(&w->inbox[i].cond, NULL);
		w->ranks[i].w = w;
		w->ranks[i].rank = i;
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (pthread_create(&w->ranks[i].thread, &attr, tw_thread, &w->ranks[i])) {
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
		struct tw_msg *m = w->inbox[i].head;

		while (m) {
			struct tw_msg *next = m->next;

			free(m);
			m = next;
		}
		w->inbox[i].head = NULL;
		w->inbox[i].tail = NULL;
	}
}

void tw_run(struct tw_world *w, struct tw_job *jobs, const struct kc_exec_cfg *cfg,
	    int timeout_ms)
{
	w->jobs = jobs;
	w->cfg = *cfg;
	w->timeout_ms = timeout_ms;
	w->nrunning = w->n;
	w->nwaiting = 0;
	w->stuck = false;
	pthread_barrier_wait(&w->start);
	pthread_barrier_wait(&w->done);
	/* Credits and notices sent to ranks that had already finished. */
	tw_drain(w);
}

void tw_destroy(struct tw_world *w)
{
	u32 i;

	if (!w)
		return;
	w->quit = true;
	pthread_barrier_wait(&w->start);
	for (i = 0; i < w->n; i++) {
		pthread_join(w->ranks[i].thread, NULL);
		pthread_cond_destroy(&w->inbox[i].cond);
	}
	tw_drain(w);
	pthread_mutex_destroy(&w->lock);
	pthread_barrier_destroy(&w->start);
	pthread_barrier_destroy(&w->done);
	free(w->inbox);
	free(w->ranks);
	free(w);
}
