/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl's side of the generic netlink family "kcoll"
 * (uapi/linux/kcoll_genl.h), with libnl-genl-3: list or get
 * communicators, receive the events of the multicast group.  The
 * messages are parsed into plain structs (struct cc_comm, struct
 * cc_event) that collctl_fmt.c prints; the parsers are exported so the
 * tests can feed them messages built in user space.
 */
#ifndef COLLCTL_NL_H
#define COLLCTL_NL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/kcoll.h"
#include "uapi/linux/kcoll_genl.h"

struct nlmsghdr;

struct cc_peer {
	uint32_t rank;
	uint32_t state;		/* enum kcoll_peer_state */
	uint32_t server;
	uint32_t pod;
	bool reused;		/* taken over from the communicator it shrank */
	uint32_t connect_us;	/* connected on need after this long, 0: not */
};

struct cc_lastop {
	uint64_t id;
	uint64_t count;
	uint64_t bytes;
	uint64_t duration_ns;
	uint32_t op;
	uint32_t status;	/* positive errno */
	uint32_t algo[KCOLL_LEVEL_COUNT];
	uint32_t fallback;	/* bit l: level l's configured algorithm did not run */
	char note[KCOLL_GENL_NOTE_MAX];	/* what ran instead and why ("" without) */
};

struct cc_link {
	uint64_t alpha_fs;
	uint64_t beta_fs;
	uint64_t gamma_fs;
};

struct cc_algos {
	uint32_t algo[KCOLL_LEVEL_COUNT];
	uint64_t pipe_bytes;
	uint32_t conf[KCOLL_LEVEL_COUNT];	/* before the per-operation fallback */
};

struct cc_comm {
	uint64_t id;
	uint32_t pid, rank, nranks, state, err;
	uint64_t ops, bytes, errors, timeouts;
	uint32_t inflight, chunk_bytes, slots, timeout_ms;
	bool has_auth;			/* KCOLL_A_COMM_AUTH sent */
	uint32_t auth;			/* enum kcoll_comm_auth */
	uint64_t refused;		/* connections refused */
	bool has_unique_id;		/* KCOLL_A_COMM_UNIQUE_ID sent */
	uint8_t unique_id[KCOLL_COMM_UID_BYTES];
	bool has_fault;			/* KCOLL_A_COMM_FAULT sent */
	struct kcoll_fault fault;
	uint32_t stall_ms;		/* KCOLL_A_COMM_STALL_MS, 0: off or not sent */
	bool has_stall;			/* KCOLL_A_COMM_STALL sent */
	struct kcoll_stall stall;
	uint64_t mem_bytes;		/* kernel memory charged, worst case */
	uint32_t npeers;
	struct cc_peer *peers;		/* [npeers], malloc'd */
	uint32_t nlast;
	struct cc_lastop last[KCOLL_GENL_LAST_OPS];	/* oldest first */
	bool has_model;
	struct cc_link link[KCOLL_LEVEL_COUNT];
	uint32_t conv_q8;
	bool has_algos;
	struct cc_algos algos[KCOLL_OP_COUNT];
};

struct cc_event {
	uint8_t cmd;			/* enum kcoll_genl_cmd */
	uint64_t id;
	uint32_t pid, rank, nranks;
	bool has_counters;		/* KCOLL_CMD_EVENT_COMM_DEL */
	uint32_t state, err;
	uint64_t ops, errors;
	uint32_t peer;			/* KCOLL_CMD_EVENT_PEER_LOST */
	bool has_op;			/* KCOLL_CMD_EVENT_OP_FAIL, _ALGO_FALLBACK */
	struct cc_lastop op;
	bool has_stall;			/* KCOLL_CMD_EVENT_STALL */
	struct kcoll_stall stall;
};

/* The node's listeners and the refusals no communicator is charged with. */
#define CC_NODE_LISTENERS	16
struct cc_listener {
	uint32_t port;
	uint32_t family;		/* KCOLL_AF_INET, KCOLL_AF_INET6 */
	uint32_t comms;			/* communicators it accepts for */
};

struct cc_node {
	uint32_t comms;			/* communicators registered */
	uint64_t refused_unknown, refused_stale, refused_bad, dup_ids;
	uint32_t nlisteners;		/* all of them; the first CC_NODE_LISTENERS kept */
	struct cc_listener listeners[CC_NODE_LISTENERS];
};

struct cc_nl;

/*
 * A communicator id as the user typed it (a number 'collctl show' lists,
 * not 0): 0, or -EINVAL after saying why on stderr, as @prog.
 */
int cc_parse_comm_id(const char *prog, const char *s, uint64_t *id);

/*
 * Connect and resolve the family.  0, or a negative errno with a message
 * for a human in err: -ENOENT when the family is not registered (module
 * not loaded).
 */
int cc_nl_open(struct cc_nl **out, char *err, size_t errlen);
void cc_nl_close(struct cc_nl *nl);

/*
 * A dump of @cmd (with KCOLL_A_COMM_ID @id unless 0): @fn gets each reply
 * and returns 0, -EPROTO for one that did not parse (skipped, then the
 * dump's result), or another negative errno that ends it.
 */
int cc_nl_dump(struct cc_nl *nl, uint8_t cmd, uint64_t id,
	       int (*fn)(struct nlmsghdr *nlh, void *arg), void *arg, char *err, size_t errlen);
/* Every communicator, by increasing id; free with cc_comms_free(). */
int cc_nl_list(struct cc_nl *nl, struct cc_comm **comms, size_t *n, char *err, size_t errlen);
/* One communicator; -ENOENT when there is none with that id. */
int cc_nl_get(struct cc_nl *nl, uint64_t id, struct cc_comm *out, char *err, size_t errlen);
void cc_comm_release(struct cc_comm *c);
void cc_comms_free(struct cc_comm *comms, size_t n);
/* The node's listeners and refusals; -EOPNOTSUPP from a module without them. */
int cc_nl_node(struct cc_nl *nl, struct cc_node *out, char *err, size_t errlen);

/*
 * Join the "events" group and call fn for each event until it returns
 * non-zero, *stop is set (a signal handler), or timeout_ms passes (0: no
 * limit).  Returns 0 or a negative errno.
 */
int cc_nl_monitor(struct cc_nl *nl, int (*fn)(const struct cc_event *ev, void *arg), void *arg,
		  volatile sig_atomic_t *stop, unsigned int timeout_ms, char *err, size_t errlen);

/* Parsers of one message: 0, or -EINVAL when it is not what it claims. */
int cc_parse_comm(struct nlmsghdr *nlh, struct cc_comm *out);
int cc_parse_event(struct nlmsghdr *nlh, struct cc_event *out);
int cc_parse_node(struct nlmsghdr *nlh, struct cc_node *out);

#endif /* COLLCTL_NL_H */
