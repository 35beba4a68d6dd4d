/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An impostor for the membership tests: a user-space rdma_cm endpoint
 * (librdmacm, libibverbs) that speaks kcoll's connection handshake
 * (uapi/linux/kcoll_wire.h) with whatever bytes the test chooses, and the
 * handshake's MACs computed with OpenSSL, so a test can take part in a
 * genuine handshake, record it, and replay it later.
 *
 * One connection per struct imp, driven synchronously with timeouts.
 * Include after kselftest_harness.h and kcoll_util.h.
 */
#ifndef KCOLL_IMPOSTOR_H
#define KCOLL_IMPOSTOR_H

#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include "uapi/linux/kcoll_wire.h"

struct imp {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;	/* imp_listen() */
	struct rdma_cm_id *id;		/* the connection */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[256];		/* what imp_send() sends */
	unsigned char priv[256];	/* the peer's private data, as it came */
	unsigned int priv_len;
};

/* The SHA-256 of a rank table, as kcoll_wire.h defines it. */
static inline void imp_table_digest(const struct kcoll_rank *r, unsigned int n,
				    unsigned char out[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int i, len = 32;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < n; i++) {
		__le32 f[4] = { htole32(r[i].family), htole32(r[i].port),
				htole32(r[i].server_id), htole32(r[i].pod_id) };

		EVP_DigestUpdate(ctx, r[i].addr, sizeof(r[i].addr));
		EVP_DigestUpdate(ctx, f, sizeof(f));
	}
	EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
}

/*
 * The proof of @role for a handshake between @active and @passive of the
 * communicator named @uid.
 */
static inline void imp_mac(const void *secret, size_t secret_len, char role,
			   unsigned int active, unsigned int passive, unsigned int nranks,
			   unsigned int chunk_bytes, unsigned int slots, const unsigned char *uid,
			   const unsigned char table[32], const unsigned char *nonce_active,
			   const unsigned char *nonce_passive, unsigned char mac[KCOLL_MAC_BYTES])
{
	struct kcoll_auth_input in;
	unsigned int len = KCOLL_MAC_BYTES;

	memset(&in, 0, sizeof(in));
	memcpy(in.label, KCOLL_AUTH_LABEL, sizeof(KCOLL_AUTH_LABEL) - 1);
	in.role = (unsigned char)role;
	in.active_rank = htole32(active);
	in.passive_rank = htole32(passive);
	in.nranks = htole32(nranks);
	in.chunk_bytes = htole32(chunk_bytes);
	in.slots = htole32(slots);
	memcpy(in.uid, uid, KCOLL_UID_BYTES);
	memcpy(in.table, table, 32);
	memcpy(in.nonce_active, nonce_active, KCOLL_NONCE_BYTES);
	memcpy(in.nonce_passive, nonce_passive, KCOLL_NONCE_BYTES);
	HMAC(EVP_sha256(), secret, (int)secret_len, (const unsigned char *)&in, sizeof(in),
	     mac, &len);
}

/* The next CM event within @ms: its type (acked), or -1 on timeout. */
static inline int imp_event(struct imp *m, int ms, struct rdma_cm_id **id)
{
	struct pollfd p = { .fd = m->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(m->ch, &ev))
		return -1;
	type = ev->event;
	if (id)
		*id = ev->id;
	if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
		/* At most 255 bytes: m->priv holds any. */
		m->priv_len = ev->param.conn.private_data_len;
		memcpy(m->priv, ev->param.conn.private_data, m->priv_len);
	}
	rdma_ack_cm_event(ev);
	return type;
}

static inline int imp_init(struct imp *m)
{
	memset(m, 0, sizeof(*m));
	m->ch = rdma_create_event_channel();
	if (!m->ch)
		return -1;
	/* Non-blocking: imp_event() polls. */
	return fcntl(m->ch->fd, F_SETFL, fcntl(m->ch->fd, F_GETFL) | O_NONBLOCK);
}

/* A QP on @id, with a registered buffer to send from. */
static inline int imp_qp(struct imp *m, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	m->pd = ibv_alloc_pd(id->verbs);
	m->cq = m->pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!m->cq)
		return -1;
	a.send_cq = m->cq;
	a.recv_cq = m->cq;
	m->mr = ibv_reg_mr(m->pd, m->buf, sizeof(m->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!m->mr || rdma_create_qp(id, m->pd, &a))
		return -1;
	m->id = id;
	return 0;
}

static inline void imp_sin(struct sockaddr_in *s, const unsigned char *ip, unsigned int port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	memcpy(&s->sin_addr, ip, 4);
}

/*
 * Connect from @src_ip to @ip:@port with @req as the request's private
 * data; 0 once established (the accept's private data in m->priv), or
 * the CM event that ended it (REJECTED, ...), or -1.
 */
static inline int imp_connect_once(struct imp *m, const unsigned char *src_ip,
				   const unsigned char *ip, unsigned int port, const void *req,
				   size_t len, int ms)
{
	struct rdma_conn_param p = { .private_data = req, .private_data_len = (uint8_t)len,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in src, dst;
	struct rdma_cm_id *id;
	int ev;

	if (imp_init(m) || rdma_create_id(m->ch, &id, NULL, RDMA_PS_TCP))
		return -1;
	imp_sin(&src, src_ip, 0);
	imp_sin(&dst, ip, port);
	if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, ms) ||
	    imp_event(m, ms, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, ms) || imp_event(m, ms, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED ||
	    imp_qp(m, id) || rdma_connect(id, &p)) {
		m->id = id;
		return -1;
	}
	m->priv_len = 0;
	ev = imp_event(m, ms, NULL);
	return ev == RDMA_CM_EVENT_ESTABLISHED ? 0 : ev;
}

static inline void imp_close(struct imp *m);

/* The same, retried while nobody listens yet, for up to @ms. */
static inline int imp_connect(struct imp *m, const unsigned char *src_ip, const unsigned char *ip,
			      unsigned int port, const void *req, size_t len, int ms)
{
	int ret;

	for (;;) {
		ret = imp_connect_once(m, src_ip, ip, port, req, len, ms);
		if (ret != RDMA_CM_EVENT_REJECTED || ms <= 100)
			return ret;
		imp_close(m);
		sleep_ms(100);
		ms -= 100;
	}
}

/* Listen on @ip:@port; 0 or -1. */
static inline int imp_listen(struct imp *m, const unsigned char *ip, unsigned int port)
{
	struct sockaddr_in a;

	if (imp_init(m) || rdma_create_id(m->ch, &m->listen_id, NULL, RDMA_PS_TCP))
		return -1;
	imp_sin(&a, ip, port);
	if (rdma_bind_addr(m->listen_id, (struct sockaddr *)&a) || rdma_listen(m->listen_id, 4))
		return -1;
	return 0;
}

/* Tear the connection down; a listener stays. */
static inline void imp_drop(struct imp *m)
{
	if (m->id) {
		rdma_disconnect(m->id);
		if (m->id->qp)
			rdma_destroy_qp(m->id);
	}
	if (m->mr)
		ibv_dereg_mr(m->mr);
	if (m->cq)
		ibv_destroy_cq(m->cq);
	if (m->pd)
		ibv_dealloc_pd(m->pd);
	if (m->id)
		rdma_destroy_id(m->id);
	m->id = NULL;
	m->mr = NULL;
	m->cq = NULL;
	m->pd = NULL;
}

/*
 * Take the next connection request within @ms (its private data in
 * m->priv) and accept it with @rep: 0 once established, else the event
 * that ended it, or -1.
 */
static inline int imp_accept(struct imp *m, const void *rep, size_t len, int ms)
{
	struct rdma_conn_param p = { .private_data = rep, .private_data_len = (uint8_t)len,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *id;
	int ev;

	imp_drop(m);
	do
		ev = imp_event(m, ms, &id);
	while (ev >= 0 && ev != RDMA_CM_EVENT_CONNECT_REQUEST);
	if (ev < 0)
		return -1;
	if (imp_qp(m, id) || rdma_accept(id, &p))
		return -1;
	ev = imp_event(m, ms, NULL);
	return ev == RDMA_CM_EVENT_ESTABLISHED ? 0 : ev;
}

/* Send @len bytes of m->buf as a SEND without immediate; 0 once completed. */
static inline int imp_send(struct imp *m, size_t len, int ms)
{
	struct ibv_sge sge = { .addr = (uintptr_t)m->buf, .length = (uint32_t)len,
			       .lkey = m->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int n = 0;

	if (ibv_post_send(m->id->qp, &wr, &bad))
		return -1;
	for (; ms > 0 && !n; ms -= 10) {
		n = ibv_poll_cq(m->cq, 1, &wc);
		if (!n)
			sleep_ms(10);
	}
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

static inline void imp_close(struct imp *m)
{
	imp_drop(m);
	if (m->listen_id)
		rdma_destroy_id(m->listen_id);
	if (m->ch)
		rdma_destroy_event_channel(m->ch);
	memset(m, 0, sizeof(*m));
}

#endif /* KCOLL_IMPOSTOR_H */
