// SPDX-License-Identifier: GPL-2.0
/*
 * Threaded transport for the algorithm suite.  Each rank thread owns an
 * executor and an inbox; sends copy the payload into a message in the
 * receiver's inbox, releasing a slot sends a credit back to the sender.
 * A rank that "dies" (fault injection) tells every other rank, which
 * fails its operation with -ECONNRESET like a lost RDMA peer.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include "lib_tw.h"

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
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tw_msg *head, *tail;
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
	struct tw_inbox *inbox;
	struct tw_rank *ranks;
	pthread_barrier_t start, done;
	struct tw_job *jobs;
	struct kc_exec_cfg cfg;
	int timeout_ms;
	bool quit;
};

static void tw_push(struct tw_world *w, u32 to, struct tw_msg *m)
{
	struct tw_inbox *ib = &w->inbox[to];

	m->next = NULL;
	pthread_mutex_lock(&ib->lock);
	if (ib->tail)
		ib->tail->next = m;
	else
		ib->head = m;
	ib->tail = m;
	pthread_cond_signal(&ib->cond);
	pthread_mutex_unlock(&ib->lock);
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

static int tw_send(void *ctx, u32 peer, u32 tag, u8 buf, u64 off, const void *data, u32 len)
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
	m = tw_msg_new(TW_DATA, rk->rank, len);
	m->tag = tag;
	if (len)
		memcpy(m->data, data, len);
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

static struct tw_msg *tw_pop(struct tw_world *w, u32 me, int timeout_ms)
{
	struct tw_inbox *ib = &w->inbox[me];
	struct timespec ts;
	struct tw_msg *m;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ib->lock);
	while (!ib->head) {
		if (pthread_cond_timedwait(&ib->cond, &ib->lock, &ts)) {
			pthread_mutex_unlock(&ib->lock);
			return NULL;
		}
	}
	m = ib->head;
	ib->head = m->next;
	if (!ib->head)
		ib->tail = NULL;
	pthread_mutex_unlock(&ib->lock);
	return m;
}

static void tw_run_rank(struct tw_rank *rk)
{
	struct tw_world *w = rk->w;
	struct tw_job *job = rk->job;
	struct kc_exec ex;
	int st;

	rk->dead = false;
	job->sent = 0;
	st = kc_exec_init(&ex, job->plan, job->bufs, &w->cfg, &tw_ops, rk);
	if (st) {
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
			st = kc_exec_fail(&ex, -ECONNRESET);
			free(m);
			break;
		}
	}
	if (rk->dead)
		st = -ECONNABORTED;
	kc_exec_destroy(&ex);
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
	pthread_barrier_init(&w->start, NULL, n + 1);
	pthread_barrier_init(&w->done, NULL, n + 1);
	for (i = 0; i < n; i++) {
		pthread_attr_t attr;

		pthread_mutex_init(&w->inbox[i].lock, NULL);
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
		pthread_mutex_destroy(&w->inbox[i].lock);
		pthread_cond_destroy(&w->inbox[i].cond);
	}
	tw_drain(w);
	pthread_barrier_destroy(&w->start);
	pthread_barrier_destroy(&w->done);
	free(w->inbox);
	free(w->ranks);
	free(w);
}
