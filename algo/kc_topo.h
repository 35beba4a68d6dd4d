/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Topology: ranks mapped to servers and servers to super-nodes (pods).
 * Ranks of one server are contiguous, and servers of one pod are
 * contiguous, as HCCL rank tables require; sizes may differ (asymmetric
 * clusters such as 2+3 or 64+128).
 *
 * kc_topo_levels() maps a rank onto the effective levels of the
 * hierarchy: level0 inside a server, level1 between servers of a pod,
 * level2 between pods.  A level whose groups would have different sizes
 * for different ranks is merged with the level above it, and a level whose
 * groups have one member is left out, so every effective level is a set of
 * equal-sized groups that hierarchical phases can compose.
 */
#ifndef KC_TOPO_H
#define KC_TOPO_H

#include "kc_build.h"

struct kc_topo {
	u32 nranks;
	u32 nservers;
	u32 npods;
	u32 *server_of;		/* [nranks] */
	u32 *server_first;	/* [nservers + 1] first rank of each server */
	u32 *pod_of;		/* [nservers] */
	u32 *pod_first;		/* [npods + 1] first server of each pod */
	u32 server_size;	/* ranks per server when all equal, else 0 */
	u32 pod_servers;	/* servers per pod when all equal, else 0 */
	u32 pod_ranks;		/* ranks per pod when all equal, else 0 */
	/*
	 * Per algorithm, what its cost model's slow-link rule walked once on
	 * the level merged across pods rather than at every selection
	 * (kc_algo_topo_cache()); 0 when there is no such level or no memory.
	 */
	u32 algo_cache[KCOLL_ALGO_COUNT];
};

/*
 * Build a topology from per-rank server and pod labels (any u32 values).
 * Fails with -EINVAL, and a message in err, when the ranks of a server or
 * the servers of a pod are not contiguous, or a server spans two pods.
 * server_label or pod_label may be NULL: every rank its own server / one pod.
 */
int kc_topo_init(struct kc_topo *t, u32 nranks, const u32 *server_label,
		 const u32 *pod_label, char *err, u32 errlen);
/* Regular topology: npods pods of servers_per_pod servers of per_server ranks. */
int kc_topo_init_regular(struct kc_topo *t, u32 npods, u32 servers_per_pod, u32 per_server);
/* Pods with the given numbers of servers, each server with per_server ranks. */
int kc_topo_init_pods(struct kc_topo *t, u32 npods, const u32 *servers_per_pod, u32 per_server);
/*
 * One pod of nservers servers with the given rank counts; -EINVAL with a
 * message when they do not add up to nranks.
 */
int kc_topo_init_sizes(struct kc_topo *t, u32 nranks, u32 nservers, const u32 *sizes,
		       char *err, u32 errlen);
void kc_topo_free(struct kc_topo *t);

static inline u32 kc_topo_server_size(const struct kc_topo *t, u32 s)
{
	return t->server_first[s + 1] - t->server_first[s];
}

/* One effective level seen from one rank. */
struct kc_level {
	u32 cfg_level;		/* which HCCL_ALGO level configures it */
	/*
	 * The HCCL_ALGO levels it stands for, bit l for level l: cfg_level
	 * and every level merged into it (groups of unequal size).  A level
	 * whose groups have one member is in no mask: it runs nothing.
	 */
	u32 levels;
	u32 span;		/* ranks below one member (contiguous) */
	struct kc_group g;	/* this rank's group at the level */
};

#define KC_MAX_LEVELS KCOLL_LEVEL_COUNT
/* Bit of HCCL_ALGO level l in struct kc_level.levels and in level masks. */
#define KC_LEVEL_BIT(l) (1u << (l))

/*
 * Effective levels of rank @rank, lowest first; returns how many (0 for a
 * single rank).  Each member of a level-l group stands for span ranks that
 * are contiguous; the span of level l + 1 is span * g.size of level l.
 * Every rank has the same levels (sizes, cfg_level, levels), only its
 * groups differ.  A merged level is always configured by level1 (its
 * cfg_level), the level between servers.
 */
u32 kc_topo_levels(const struct kc_topo *t, u32 rank, struct kc_level *lv);

/*
 * Is @lv a level-1 group merged across pods of unequal size?  It spans
 * more than one pod and runs on the links between pods (level 2).
 */
static inline bool kc_topo_level_merged(const struct kc_topo *t, const struct kc_level *lv)
{
	return lv->cfg_level == KCOLL_LEVEL1 && t->npods > 1 &&
	       (u64)lv->span * lv->g.size > t->pod_ranks;
}

#endif /* KC_TOPO_H */
