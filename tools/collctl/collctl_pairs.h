/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl doctor's pair checks (collctl_pairs.c): whether this node can
 * reach every other node of a job over RDMA, run on every node at once.
 * Setting up (the rank table or host list, this node's rank, the ports)
 * is apart from probing so that bad input is refused before anything
 * touches the network, and can be tested without RDMA.
 */
#ifndef COLLCTL_PAIRS_H
#define COLLCTL_PAIRS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The module's default listen_port (16667) + 100: never the module's own. */
#define CC_PAIRS_PORT		16767
#define CC_PAIRS_TIMEOUT_S	5
#define CC_PAIRS_WAIT_S		30

struct cc_pairs_opts {
	const char *ranktable;	/* --ranktable FILE, or NULL */
	const char *hosts;	/* --hosts LIST ("10.0.0.1,10.0.0.2"), or NULL */
	const char *rank;	/* --rank R, else $KCOLL_RANK (the caller's) */
	unsigned int port;	/* the doctor port of a node's first rank */
	unsigned int timeout_s;	/* each stage of a pair */
	unsigned int wait_s;	/* how long a peer may take to start doctor */
};

/* What one pair came to, as this node saw it. */
struct cc_pair {
	bool ok;
	double ms;		/* ok: the message's round trip */
	const char *stage;	/* failed: "address resolution", "connect", ... */
	char reason[320];
	char hint[320];
};

struct cc_pairs {
	uint32_t rank, nranks;
	char (*addr)[64];	/* [nranks]: each rank's address */
	unsigned int *port;	/* [nranks]: each rank's doctor port */
	struct cc_pair *pair;	/* [nranks]: the pair with each rank; [rank] unused */
	unsigned int timeout_s, wait_s;
};

/*
 * Check @o and fill @p: the ranks' addresses from the table or list, this
 * node's rank, each rank's port (@o->port plus the rank's index among the
 * ranks of its address, so ranks of one node do not collide).  0, or
 * -EINVAL / -ENOMEM with @err saying what is wrong ("--rank 7 out of range
 * 0..3 ..."), nothing allocated.
 */
int cc_pairs_setup(struct cc_pairs *p, const struct cc_pairs_opts *o, char *err, size_t len);

/*
 * Probe every pair: listen on this rank's port, connect to every higher
 * rank (one RC connection per pair), exchange a message both ways; accept
 * the lower ranks' connections.  Fills p->pair[].
 */
void cc_pairs_run(struct cc_pairs *p);

/* One line per pair to stdout, or (@o not NULL) "pairs" into @o; the failed count. */
int cc_pairs_report(const struct cc_pairs *p, json_object *o);

void cc_pairs_free(struct cc_pairs *p);

#endif /* COLLCTL_PAIRS_H */
