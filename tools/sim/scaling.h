/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coll-sim --scaling (tools/sim/scaling.c): the connections and receive
 * memory a rank holds and the handshakes a job makes, now and with
 * connect-on-need, from the plans themselves.
 */
#ifndef KC_SIM_SCALING_H
#define KC_SIM_SCALING_H

#include "kc_coll.h"
#include "kc_topo.h"

/* Ranks whose plans are all built; beyond, an even sample of this many. */
#define SCALE_ALL_RANKS		1024u

/* The module's defaults (kcoll_tunables.h): slots per peer, chunk bytes. */
#define SCALE_SLOTS		8u
#define SCALE_CHUNK		65536u

struct scale_row {
	u32 nranks;
	u32 sampled;		/* ranks whose plans were built */
	u32 peers_min, peers_max;
	double peers_mean;
	u64 handshakes_now;	/* every pair */
	u64 handshakes_need;	/* pairs one of whose plans names the other */
	bool need_estimated;	/* from the sample's mean, not every rank */
	u64 conn_bytes;		/* receive memory of one connection */
};

/* Receive memory of one connection at the module's defaults, in bytes. */
u64 scale_conn_bytes(void);

/*
 * Build the plans of @op with @cfg on @t for every rank (or a sample) and
 * fill @row.  0, or a plan-building error with its message in @err.
 */
int scale_measure(const struct kc_topo *t, const struct kc_op_desc *op,
		  const struct kc_algo_cfg *cfg, struct scale_row *row, char *err, u32 errlen);

#endif /* KC_SIM_SCALING_H */
