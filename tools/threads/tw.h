/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The threaded transport: ranks in one process, served by a thread per
 * CPU, a message queue (inbox) per rank, credits returned as messages.
 * It runs the shared executor exactly as the kernel does, with real
 * data.  A rank whose operation fails is gone for the others
 * (kc_exec_peer_gone() with -ECONNRESET), as a failed communicator
 * disconnects in the module; when every rank still running waits for a
 * message that cannot come, they all fail with -ETIMEDOUT at once.
 */
#ifndef KC_TW_H
#define KC_TW_H

#include "kc_exec.h"

struct tw_world;

struct tw_job {
	const struct kc_plan *plan;
	const struct kc_op_desc *desc;	/* what the plan was built from (kc_exec_cfg.desc) */
	void *bufs[KC_BUF_COUNT];
	int status;		/* result of the rank's executor */
	u64 fail_after;		/* fault: die after this many sends (0: never) */
	u64 sent;		/* messages this rank sent */
};

struct tw_world *tw_create(u32 nranks);
void tw_destroy(struct tw_world *w);
u32 tw_size(const struct tw_world *w);
/*
 * Run one operation on every rank; jobs has one entry per rank.  A rank
 * that waits longer than timeout_ms for an event fails with -ETIMEDOUT.
 */
void tw_run(struct tw_world *w, struct tw_job *jobs, const struct kc_exec_cfg *cfg,
	    int timeout_ms);

#endif
