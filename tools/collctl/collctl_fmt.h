/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How collctl prints what the kcoll family reports (collctl_nl.h): text
 * for people, JSON (json-c) for programs.  No I/O besides the FILE given,
 * so the tests check the output of known structs.
 */
#ifndef COLLCTL_FMT_H
#define COLLCTL_FMT_H

#include <json-c/json.h>
#include <stdio.h>

#include "collctl_nl.h"

const char *cc_comm_state_name(uint32_t state);
const char *cc_peer_state_name(uint32_t state);
const char *cc_event_name(uint8_t cmd);
/* The HCCL_ALGO token; "-" for a level an operation did not use. */
const char *cc_used_algo_name(uint32_t algo);

/* One line per communicator, under a header line. */
void cc_print_comm_table(FILE *f, const struct cc_comm *comms, size_t n);
/* Everything about one communicator. */
void cc_print_comm(FILE *f, const struct cc_comm *c);
/* detail: peers, last operations, model and configured algorithms too. */
json_object *cc_comm_json(const struct cc_comm *c, bool detail);

/* The node's listeners and the refusals they counted. */
void cc_print_node(FILE *f, const struct cc_node *nd);
json_object *cc_node_json(const struct cc_node *nd);

/* One line per event, with a wall-clock time stamp. */
void cc_print_event(FILE *f, const struct cc_event *ev, const char *stamp);
json_object *cc_event_json(const struct cc_event *ev, const char *stamp);

/*
 * How every collctl command prints JSON: one line by default (as rdma -j),
 * indented with -p/--pretty.  JSON_C_TO_STRING_* flags; collctl's main()
 * sets it before running a command.
 */
extern int cc_json_flags;

#endif /* COLLCTL_FMT_H */
