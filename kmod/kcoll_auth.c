// SPDX-License-Identifier: GPL-2.0
/*
 * Membership: only the ranks of a job may join its communicator, and the
 * communicator's name (its 128-bit id, which the wire carries in the clear).
 *
 * A communicator created with a secret proves every connection both ways
 * (uapi/linux/kcoll_wire.h): each side sends a fresh nonce and answers the
 * other's with HMAC-SHA256 keyed with the secret, over both nonces, both
 * ranks, the parameters, the id and a digest of the rank table.  The secret never
 * travels; a recorded handshake answers nonces nobody asks again.
 *
 * Without a secret the only check is the peer's address: a request is
 * taken only from the address the rank table gives for the rank it
 * claims.  That keeps out other nodes, not another user's process on the
 * same node, so such a communicator is reported as unauthenticated.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "kcoll.h"

/* Digest of the rank table, the same on every rank of a communicator. */
static void kcoll_table_digest(const struct kcoll_comm *comm, u8 out[SHA256_DIGEST_SIZE])
{
	struct sha256_state st;
	u32 i;

	sha256_init(&st);
	for (i = 0; i < comm->nranks; i++) {
		const struct kcoll_rank *r = &comm->ranks[i];
		__le32 f[4] = { cpu_to_le32(r->family), cpu_to_le32(r->port),
				cpu_to_le32(r->server_id), cpu_to_le32(r->pod_id) };

		sha256_update(&st, r->addr, sizeof(r->addr));
		sha256_update(&st, (const u8 *)f, sizeof(f));
	}
	sha256_final(&st, out);
}

/*
 * Name the communicator: @uid when the caller gives one (not all zero),
 * else the first bytes of its rank table's digest, which every rank
 * computes alike.
 */
void kcoll_auth_name(struct kcoll_comm *comm, const u8 uid[KCOLL_UID_BYTES])
{
	kcoll_table_digest(comm, comm->table_digest);
	comm->uid_given = !!memchr_inv(uid, 0, KCOLL_UID_BYTES);
	memcpy(comm->unique_id, comm->uid_given ? uid : comm->table_digest, KCOLL_UID_BYTES);
}

/* Key the communicator with @secret; without one it stays unauthenticated. */
int kcoll_auth_init(struct kcoll_comm *comm, const u8 *secret, u32 len)
{
	struct crypto_shash *tfm;
	int ret;

	if (!secret)
		return 0;
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm)) {
		/* Every creation with a secret would say it: the shared limit. */
		kcoll_warn_rl("comm %llu: no hmac(sha256) in this kernel: %ld\n", comm->id,
			      PTR_ERR(tfm));
		return PTR_ERR(tfm);
	}
	ret = crypto_shash_setkey(tfm, secret, len);
	if (ret) {
		crypto_free_shash(tfm);
		return ret;
	}
	comm->auth_tfm = tfm;
	return 0;
}

void kcoll_auth_free(struct kcoll_comm *comm)
{
	if (comm->auth_tfm)
		crypto_free_shash(comm->auth_tfm);
	comm->auth_tfm = NULL;
}

void kcoll_auth_nonce(u8 nonce[KCOLL_NONCE_BYTES])
{
	get_random_bytes(nonce, KCOLL_NONCE_BYTES);
}

/*
 * The proof of @role ('P': the accepting rank, 'A': the connecting one)
 * for the handshake of @conn, whose nonces are both known by now.
 */
int kcoll_auth_mac(const struct kcoll_conn *conn, u8 role, u8 mac[KCOLL_MAC_BYTES])
{
	const struct kcoll_comm *comm = conn->comm;
	struct kcoll_auth_input in = {};

	BUILD_BUG_ON(sizeof(KCOLL_AUTH_LABEL) > sizeof(in.label));
	memcpy(in.label, KCOLL_AUTH_LABEL, sizeof(KCOLL_AUTH_LABEL) - 1);
	in.role = role;
	in.active_rank = cpu_to_le32(conn->active ? comm->rank : conn->peer);
	in.passive_rank = cpu_to_le32(conn->active ? conn->peer : comm->rank);
	in.nranks = cpu_to_le32(comm->nranks);
	in.chunk_bytes = cpu_to_le32(comm->chunk_bytes);
	in.slots = cpu_to_le32(comm->slots);
	memcpy(in.uid, comm->unique_id, sizeof(in.uid));
	memcpy(in.table, comm->table_digest, sizeof(in.table));
	memcpy(in.nonce_active, conn->nonce_active, KCOLL_NONCE_BYTES);
	memcpy(in.nonce_passive, conn->nonce_passive, KCOLL_NONCE_BYTES);
	return crypto_shash_tfm_digest(comm->auth_tfm, (const u8 *)&in, sizeof(in), mac);
}

/* Is @mac the proof of @role for @conn?  Constant time in the MAC. */
bool kcoll_auth_check(const struct kcoll_conn *conn, u8 role, const u8 mac[KCOLL_MAC_BYTES])
{
	u8 want[KCOLL_MAC_BYTES];
	bool ok;

	if (kcoll_auth_mac(conn, role, want))
		return false;
	ok = !crypto_memneq(want, mac, KCOLL_MAC_BYTES);
	memzero_explicit(want, sizeof(want));
	return ok;
}

/* Does @from (a connection request's source) belong to rank @peer? */
bool kcoll_auth_addr_ok(const struct kcoll_comm *comm, u32 peer, const struct sockaddr *from)
{
	const struct sockaddr_storage *want = &comm->addrs[peer];

	if (from->sa_family != want->ss_family)
		return false;
	if (from->sa_family == AF_INET)
		return ((const struct sockaddr_in *)from)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)want)->sin_addr.s_addr;
	if (from->sa_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)from)->sin6_addr,
				       &((const struct sockaddr_in6 *)want)->sin6_addr);
	return false;
}

/*
 * A connection claiming rank @peer was refused: count it (collctl show)
 * and say so, under the module's one rate limit: a remote peer triggers it.
 */
void kcoll_auth_refused(struct kcoll_comm *comm, u32 peer, const struct sockaddr *from,
			const char *why)
{
	atomic64_inc(&comm->refused);
	kcoll_warn_rl("comm %llu: refused a connection claiming rank %u from %pISc: %s\n",
		      comm->id, peer, from, why);
}
