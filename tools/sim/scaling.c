// SPDX-License-Identifier: GPL-2.0
/*
 * coll-sim --scaling: what kcoll's connection and memory model costs as
 * a job grows, from the plans themselves, not from formulas.
 *
 * A plan lists the distinct peers its rank exchanges messages with
 * (kc_plan.peers).  Today every communicator connects every pair of its
 * ranks at creation, so a rank holds p - 1 QPs and the job makes
 * p (p - 1) / 2 handshakes; with connect-on-need a rank would hold only
 * the peers its plans name, and a pair would be connected once either
 * plan names the other.  Every connection has its own receive slots:
 * (2 x slots + 1) buffers of chunk + header bytes, page aligned, as
 * kmod/kcoll_xport.c allocates them (kcoll_comm_footprint()).
 *
 * Up to SCALE_ALL_RANKS ranks every plan is built and the pairs are
 * counted exactly; beyond, an even sample of that many ranks (0 and
 * p - 1 among them) gives the peers per rank, and the handshakes are
 * estimated as mean x p / 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kc_exec.h"
#include "scaling.h"

#define SCALE_PAGE	4096u

/* The sampled ranks: all up to SCALE_ALL_RANKS, else evenly spread. */
static u32 scale_rank(u32 i, u32 n, u32 p)
{
	return n == p ? i : (u32)((u64)i * (p - 1) / (n - 1));
}

/* Mark the pairs of @pl (rank < peer or not) in the p x p bit matrix @pairs. */
static void scale_mark(u8 *pairs, u32 p, const struct kc_plan *pl)
{
	u32 i, a, b;
	u64 bit;

	for (i = 0; i < pl->npeers; i++) {
		a = pl->rank < pl->peers[i] ? pl->rank : pl->peers[i];
		b = pl->rank < pl->peers[i] ? pl->peers[i] : pl->rank;
		bit = (u64)a * p + b;
		pairs[bit / 8] |= 1u << (bit % 8);
	}
}

static u64 scale_count(const u8 *pairs, u64 bytes)
{
	u64 i, n = 0;

	for (i = 0; i < bytes; i++)
		n += (u64)__builtin_popcount(pairs[i]);
	return n;
}

u64 scale_conn_bytes(void)
{
	return (2ull * SCALE_SLOTS + 1) *
	       ((SCALE_CHUNK + KC_HDR_BYTES + SCALE_PAGE - 1) / SCALE_PAGE * SCALE_PAGE);
}

int scale_measure(const struct kc_topo *t, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *cfg, struct scale_row *row, char *err, u32 errlen)
{
	u32 p = t->nranks, n = p <= SCALE_ALL_RANKS ? p : SCALE_ALL_RANKS, i;
	u64 sum = 0, pbytes = n == p ? ((u64)p * p + 7) / 8 : 0;
	u8 *pairs = NULL;
	int ret = 0;

	memset(row, 0, sizeof(*row));
	row->nranks = p;
	row->sampled = n;
	row->peers_min = UINT32_MAX;
	row->handshakes_now = (u64)p * (p - 1) / 2;
	row->conn_bytes = scale_conn_bytes();
	if (pbytes) {
		pairs = calloc(pbytes, 1);
		if (!pairs) {
			snprintf(err, errlen, "out of memory for %u ranks' pairs", p);
			return -ENOMEM;
		}
	}
	for (i = 0; i < n && !ret; i++) {
		struct kc_plan *pl = NULL;

		ret = kc_plan_build(t, scale_rank(i, n, p), op, cfg, &pl, err, errlen);
		if (ret)
			break;
		sum += pl->npeers;
		if (pl->npeers < row->peers_min)
			row->peers_min = pl->npeers;
		if (pl->npeers > row->peers_max)
			row->peers_max = pl->npeers;
		if (pairs)
			scale_mark(pairs, p, pl);
		kc_plan_free(pl);
	}
	if (!ret) {
		row->peers_mean = (double)sum / n;
		row->need_estimated = !pairs;
		row->handshakes_need = pairs ? scale_count(pairs, pbytes) :
				       (u64)(row->peers_mean * p / 2 + 0.5);
	}
	free(pairs);
	return ret;
}
