/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcoll internals: shared by the lib/ sources and the unit tests, not installed. */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "coll.h"
#include "uapi/linux/kcoll.h"

#define COLL_DEVICE	"/dev/kcoll"
#define COLL_SYSFS	"/sys/class/misc/kcoll/"

/* Not exported from libcoll.so (the static archive still links them). */
#define COLL_HIDDEN	__attribute__((visibility("hidden")))

struct coll_mr {
	struct coll_mr *next;
	uintptr_t addr;
	size_t len;
	uint64_t handle;
};

struct coll_request {
	struct coll_request *next, *prev;	/* comm's outstanding list */
	coll_comm_t *comm;
	bool done;
	struct coll_status st;
};

struct coll_comm {
	int fd;
	int efd;
	uint32_t rank, nranks;
	uint64_t comm_id;
	struct coll_mr *mrs;
	struct coll_request pending;		/* list head, submission order */
	uint32_t npending;
	/* What coll_comm_split() needs (lib/coll_oob.c). */
	struct coll_rank_desc *ranks;		/* [nranks], as created */
	uint64_t *hosts;			/* [nranks]: host identity (hash) */
	uint64_t *pods;				/* [nranks]: super-node identity */
	struct coll_comm_opts opts;		/* algo and device duplicated, no secret */
	struct coll_oob oob;			/* allgather NULL: none */
	uint8_t uid[16];
	/* What coll_comm_shrink() needs (lib/coll_shrink.c). */
	uint8_t secret[KCOLL_SECRET_MAX];	/* as the module got it; wiped on destroy */
	uint32_t secret_len;
	uint32_t shrinks;			/* calls so far: a retry is a new communicator */
	/* What coll_comm_create_group() needs (lib/coll_group.c). */
	struct coll_group_seen *groups;		/* [ngroups]: one per member list */
	uint32_t ngroups;
};

/* How many groups of one member list this rank made from a communicator. */
struct coll_group_seen {
	uint64_t list;				/* hash of the list */
	uint32_t count;
};

/* Whether operation @o takes a reduction, a root (libcoll's checks, the words of a fault). */
COLL_HIDDEN bool coll_op_reduces(coll_op_t o);
COLL_HIDDEN bool coll_op_rooted(coll_op_t o);

/* Record the calling thread's detailed message; returns @err. */
COLL_HIDDEN int coll_seterr(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
COLL_HIDDEN void coll_clearerr(void);
/* "EHOSTUNREACH" for -EHOSTUNREACH (coll_strerror()'s text if it has no name). */
COLL_HIDDEN const char *coll_errname(int err);

/*
 * A communicator object around an already open @fd, without creating the
 * module's communicator (unit tests use fd -1 to check argument
 * validation).  Returns NULL on ENOMEM.
 */
COLL_HIDDEN coll_comm_t *coll_comm_wrap(int fd, uint32_t rank, uint32_t nranks);

/*
 * The communicator's secret: @secret if set, else the file
 * $KCOLL_SECRET_FILE, else the string $KCOLL_SECRET, into @buf (room for
 * KCOLL_SECRET_MAX + 1 bytes); *@len 0 when there is none.  *@from names
 * the source for messages.  0 or a negative errno (message set).
 */
COLL_HIDDEN int coll_secret_get(const void *secret, size_t secret_len, uint8_t *buf,
				size_t *len, const char **from);

/*
 * Keep what coll_comm_split() needs in @c: a copy of @ranks (hosts and pods
 * from their server and pod ids) and of @opts.  0 or -ENOMEM (message set).
 */
COLL_HIDDEN int coll_comm_keep(coll_comm_t *c, const struct coll_rank_desc *ranks,
			       const struct coll_comm_opts *opts);

/* ---- lib/coll_oob.c, exposed for selftests/lib/test_oob.c */

/* One rank's part of the bootstrap exchange (fixed layout, one host order). */
struct coll_oob_rec {
	uint32_t magic;			/* COLL_OOB_MAGIC */
	uint16_t version;		/* COLL_OOB_VERSION */
	uint16_t kind;			/* COLL_OOB_INIT, _SPLIT, _RESULT */
	uint32_t rank, size;		/* as the sender sees them */
	int32_t err;			/* the sender's local failure, or 0 */
	int32_t color, key;		/* split only */
	uint8_t uid[16];		/* rank 0's (the new rank 0's) is the id */
	uint8_t secret[32];		/* likewise */
	uint64_t host, pod;		/* identities, hashed */
	char addr[64];
};

#define COLL_OOB_MAGIC		0x424f434bu	/* "KCOB" */
#define COLL_OOB_VERSION	2	/* 2: no port rounds */
#define COLL_OOB_INIT		1
#define COLL_OOB_SPLIT		2
#define COLL_OOB_RESULT		3

/*
 * What the exchange decided for one communicator: its ranks (port 0:
 * the module's listener), identities, id, secret, and this process's rank in it.
 */
struct coll_oob_table {
	uint32_t nranks, rank;
	struct coll_rank_desc *ranks;
	uint64_t *hosts, *pods;
	uint8_t uid[16];
	uint8_t secret[32];
};

COLL_HIDDEN uint64_t coll_oob_hash(const void *p, size_t len, uint64_t h);

/*
 * coll_comm_shrink()'s part (lib/coll_shrink.c): the ranks @fates (enum
 * kcoll_peer_fate, by rank) calls alive into @keep, in order, returning
 * how many.
 */
COLL_HIDDEN uint32_t coll_shrink_survivors(const uint8_t *fates, uint32_t n, uint32_t *keep);

/*
 * A shrink's failed parent: its file, whose connections the module may
 * take over (KCOLL_CREATE_F_PARENT), and each new rank's rank in it.
 */
struct coll_parent {
	int fd;
	const uint32_t *ranks;
};

/*
 * lib/coll_group.c: the id of @c's child of ranks @keep[0..@m-1], the
 * same on every member that passes the same @tag ("kcoll shrink", ...),
 * @count (the how-many-th such child) and list, and different for any
 * other parent, tag, count or list.
 */
COLL_HIDDEN void coll_child_uid(const coll_comm_t *c, const char *tag, uint32_t count,
				const uint32_t *keep, uint32_t m, uint8_t uid[16]);
/*
 * Create that child from what @c knows (addresses, identities, secret),
 * without an exchange, with the settings @opts (NULL: @c's); @parent (or
 * NULL) lets the module take connections over.  0 or a negative errno
 * (message set).
 */
COLL_HIDDEN int coll_child_create(coll_comm_t *c, const uint32_t *keep, uint32_t m,
				  const char *tag, uint32_t count,
				  const struct coll_comm_opts *opts,
				  const struct coll_parent *parent, coll_comm_t **out);

/* @opts as this libcoll knows them (fields beyond its size zero), into @o. */
COLL_HIDDEN void coll_opts_copy(const struct coll_comm_opts *opts, struct coll_comm_opts *o);

/* coll_comm_init_ranks() with a parent (NULL: none). */
COLL_HIDDEN int coll_comm_init_child(const struct coll_rank_desc *ranks, uint32_t nranks,
				     uint32_t rank, const struct coll_comm_opts *opts,
				     const struct coll_parent *parent, coll_comm_t **out);
/* Number servers and pods of @t from its hosts/pods; every port the module's. */
COLL_HIDDEN void coll_oob_layout(struct coll_oob_table *t);
/*
 * The bootstrap exchange of coll_comm_init_oob() up to the rank table:
 * -errno with the message set; the same outcome on every rank.
 */
COLL_HIDDEN int coll_oob_exchange(const struct coll_oob *oob, const struct coll_oob_opts *opts,
				  struct coll_oob_table *t);
/*
 * The exchange of coll_comm_split() over @oob for a parent of @parent_n ranks
 * with @ranks/@hosts/@pods: *@t zeroed (nranks 0) when @color < 0.
 */
COLL_HIDDEN int coll_split_exchange(const struct coll_oob *oob,
				    const struct coll_rank_desc *ranks, const uint64_t *hosts,
				    const uint64_t *pods, int color, int key,
				    struct coll_oob_table *t);
COLL_HIDDEN int coll_oob_table_alloc(struct coll_oob_table *t, uint32_t n);
COLL_HIDDEN void coll_oob_table_free(struct coll_oob_table *t);
/* Give @c the host and super-node identities and the id of @t, and @oob if not NULL. */
COLL_HIDDEN void coll_oob_adopt(coll_comm_t *c, const struct coll_oob_table *t,
				const struct coll_oob *oob);
/* coll_local_addr() under another sysfs root (tests). */
COLL_HIDDEN int coll_local_addr_at(const char *root, const char *device, char *addr,
				   size_t len);

/* Open @device and check its ABI version; fd or negative errno (message set). */
COLL_HIDDEN int coll_dev_open(const char *device, struct kcoll_info *info);

#endif /* COLL_INTERNAL_H */
