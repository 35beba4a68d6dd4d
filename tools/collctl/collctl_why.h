/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl why [COMM]: why a communicator's operation is stuck, from the
 * module's stall record (KCOLL_A_COMM_STALL, kmod/kcoll_stall.c): the
 * operation, what this rank waits for, and the rank to blame with the
 * reason.
 */
#ifndef COLLCTL_WHY_H
#define COLLCTL_WHY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "collctl_nl.h"

/*
 * One line (no newline) for @c's stall record into @buf; returns what
 * snprintf() does.  Without a record: that no operation stalled.
 */
int cc_why_text(const struct cc_comm *c, char *buf, size_t len);
json_object *cc_why_json(const struct cc_comm *c);
const char *cc_why_reason_name(uint32_t why);

/* The subcommand: argv after "why". */
int cc_why_main(const char *prog, bool json, int argc, char **argv);

#endif /* COLLCTL_WHY_H */
