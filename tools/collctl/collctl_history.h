/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl history: the flight records of communicators, live and
 * destroyed not long ago (KCOLL_CMD_HISTORY_GET of the "kcoll" family).
 * The parser and the formatters are exported for the tests, which feed
 * them messages built in user space.
 */
#ifndef COLLCTL_HISTORY_H
#define COLLCTL_HISTORY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collctl_nl.h"

struct cc_hist_op {
	uint64_t id;
	uint32_t state;			/* enum kcoll_hist_state */
	uint32_t op, dtype;
	bool has_redop, has_root;	/* reducing, rooted operations */
	uint32_t redop, root;
	uint64_t count, bytes;
	uint32_t algo[KCOLL_LEVEL_COUNT];
	uint32_t status;		/* positive errno */
	uint64_t submit_ns, start_ns, end_ns;	/* CLOCK_REALTIME; 0: not yet */
};

struct cc_hist {
	uint64_t id;
	bool retained;			/* the communicator was destroyed */
	uint32_t pid, uid, rank, nranks;
	uint32_t err;			/* positive errno it ended (or is) with */
	bool has_unique_id;
	uint8_t unique_id[KCOLL_COMM_UID_BYTES];
	char task[17];			/* the creator's command name */
	uint64_t created_ns, destroyed_ns;	/* CLOCK_REALTIME */
	uint32_t capacity;
	uint64_t recorded;
	size_t nops;
	struct cc_hist_op *ops;		/* [nops], oldest first, malloc'd */
};

/* One message; 0, -EINVAL when it is not a history message, -ENOMEM. */
int cc_parse_hist(struct nlmsghdr *nlh, struct cc_hist *out);
/*
 * Add the record of one message to (*list)[*n]: appended to the last one
 * when it continues it (same id, both live or both retained), else a new
 * one.  Takes @h's operations over.  0 or -ENOMEM.
 */
int cc_hist_add(struct cc_hist **list, size_t *n, struct cc_hist *h);
void cc_hists_free(struct cc_hist *list, size_t n);
/* Every record the requester may see, or communicator @id's (0: all). */
int cc_nl_history(struct cc_nl *nl, uint64_t id, struct cc_hist **list, size_t *n, char *err,
		  size_t errlen);

const char *cc_hist_state_name(uint32_t state);
/* Times in UTC when @utc, else local time (as the system log shows them). */
void cc_print_history(FILE *f, const struct cc_hist *list, size_t n, bool utc);
json_object *cc_history_json(const struct cc_hist *list, size_t n);

/* collctl [-j] history [COMM]: the exit status. */
int cc_history_main(const char *prog, bool json, int argc, char **argv);

#endif /* COLLCTL_HISTORY_H */
