/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated transport: a discrete-event model of the links that runs
 * every rank's plan through the shared executor (kc_exec) with no data,
 * only time.
 *
 * Links, per level (0 inside a server, 1 between servers of a pod, 2
 * between pods): a message of n bytes occupies its link(s) for n * beta
 * seconds at full rate and is delivered alpha seconds after its last byte
 * left.  Level 0 is a full mesh: every ordered pair of ranks has a link of
 * its own.  Levels 1 and 2 go through the one full-duplex port of each
 * rank (egress at the sender, ingress at the receiver); transfers that use
 * a port at the same time share it equally (a flow runs at
 * 1 / (beta * k), k the most flows on any port it crosses).  Level 2 runs
 * at beta * conv (convergence ratio C).  A receiver reduces what it
 * receives at gamma seconds per byte, one message after the other; copies
 * are free, as in the cost formulas of Documentation/algorithms.md.
 * Credits return instantly.  The
 * executor's header on the first message to each peer (kc_exec.h) travels
 * with it but takes no time, like the tag: times, bytes and the cost model
 * are those of the plan's data.
 */
#ifndef KC_SIM_H
#define KC_SIM_H

#include "kc_coll.h"
#include "kc_exec.h"

struct sim_level {
	double alpha;	/* s */
	double beta;	/* s per byte */
	double gamma;	/* s per byte reduced */
};

struct sim_model {
	struct sim_level lv[KCOLL_LEVEL_COUNT];
	double conv;	/* C >= 1: level 2 bandwidth divided by C */
	/*
	 * Rendezvous: a message starts moving only once its receiver is in
	 * the round that consumes it, so the steps of the formulas never
	 * overlap (conformance).  Otherwise sends are eager (staging slots).
	 * Needs one message per step (sim_conformance_cfg()).
	 */
	bool rendezvous;
	/*
	 * sim_op(): run one period of a symmetric topology when every
	 * plan is its representative's moved (checked), else every rank.
	 */
	bool symmetry;
};

struct sim_result {
	int status;		/* 0 or the first rank's error */
	double time;		/* s, when the last rank finished */
	u64 max_sent;		/* bytes, the most any rank sent */
	u64 max_recv;		/* bytes, the most any rank received */
	u64 total_sent;
	u32 max_rounds;		/* most communication rounds of any rank */
	u32 max_steps;		/* most plan steps of any rank */
	u32 period;		/* ranks simulated (< nranks: by symmetry) */
	u64 events;
	u64 *sent;		/* [nranks] per rank, if the caller provided it */
	u64 *recv;		/* [nranks] per rank, if the caller provided it */
};

/*
 * Run plans on the model.  ec gives chunk size and window (conformance:
 * one message per step, see sim_conformance_cfg()).  Returns 0 (result
 * in *res) or a negative errno.
 *
 * The topology and plans may repeat with period P (a divisor of
 * t->nranks; t->nranks: no repeat): moving every rank by P maps servers
 * onto servers and pods onto pods (sim_symmetry_period()), and the plan of
 * rank r is the plan of r mod P with every peer moved by the same number
 * of periods (sim_plan_moved()).  Only plans[0..P) are given and run;
 * the result is that of the full run.  The caller checks the premise.
 */
int sim_run_period(const struct kc_topo *t, struct kc_plan *const *plans, u32 period,
		   const struct sim_model *m, const struct kc_exec_cfg *ec,
		   struct sim_result *res);

/*
 * The smallest period the topology repeats with: the server size for one
 * pod of equal servers, the pod size for equal pods of equal servers,
 * else t->nranks (no symmetry).
 */
u32 sim_symmetry_period(const struct kc_topo *t);

/*
 * Is plan @b (of rank b->rank) plan @a moved by @shift ranks (mod p):
 * the same rounds of the same steps, kinds, flags and lengths, every peer
 * moved by @shift?  Offsets are not compared: they take no time.
 */
bool sim_plan_moved(const struct kc_plan *a, const struct kc_plan *b, u32 shift);

/*
 * A lower bound of the time of rank @p's plan in rendezvous mode: a
 * rank enters a round only when its previous round is complete, and a
 * message starts to move only once its receiver is in the round that
 * consumes it, so every round lasts at least its slowest receive at full
 * rate (alpha + len * beta, plus len * gamma if it reduces).
 */
double sim_plan_lower_bound(const struct kc_topo *t, const struct kc_plan *p,
			    const struct sim_model *m);

/*
 * The largest sim_plan_lower_bound() of the ranks of one period (every
 * rank without m->symmetry) for @op with @cfg: a lower bound of what
 * sim_op() returns in rendezvous mode, without simulating.
 */
int sim_op_lower_bound(const struct kc_topo *t, const struct kc_op_desc *op,
		       const struct kc_algo_cfg *cfg, const struct sim_model *m, double *lb);

/*
 * Executor settings without chunk pipelining: one message per plan step,
 * and a window (0: computed by sim_run_period) that never holds a step back.
 */
struct kc_exec_cfg sim_conformance_cfg(void);

/*
 * bench-select's links (make bench-select, and the cost tests that hold
 * its regret): level0 1 us and 50 GB/s, levels 1 and 2 5 us and 25 GB/s,
 * reduce 100 GB/s; rendezvous, symmetry on, level2 divided by @conv.
 */
struct sim_model sim_bench_model(double conv);

/* The level a transfer between ranks a and b runs on. */
u32 sim_level_of(const struct kc_topo *t, u32 a, u32 b);

/*
 * Build every rank's plan of @op (root, counts as kc_plan_build) with
 * @cfg and simulate it.  *algo (may be NULL) receives the algorithm rank 0
 * used per level.  Returns 0, a plan-building error (message in err) or a
 * simulation error.
 */
int sim_op(const struct kc_topo *t, const struct kc_op_desc *op, const struct kc_algo_cfg *cfg,
	   const struct sim_model *m, const struct kc_exec_cfg *ec, struct sim_result *res,
	   u32 algo[KCOLL_LEVEL_COUNT], char *note, u32 notelen, char *err, u32 errlen);

/* The same model in kc_cost's fixed point, for an executor of @ec's window. */
struct kc_cost_model;
void sim_cost_model(const struct sim_model *m, const struct kc_exec_cfg *ec,
		    struct kc_cost_model *out);
/* sim_cost_model() for sim_conformance_cfg()'s executor (no window). */
void sim_conformance_model(const struct sim_model *m, struct kc_cost_model *out);

/*
 * The configurations coll-sim -A compares for @op on @t, into @c and
 * their names into @name (room for 2 x KCOLL_ALGO_COUNT): every flat
 * algorithm at the top level, then the builders, each in enum order.
 * Returns how many.
 */
u32 sim_candidates(const struct kc_topo *t, u32 op, struct kc_algo_cfg *c, const char **name);

#endif /* KC_SIM_H */
