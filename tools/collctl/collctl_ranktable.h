/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl ranktable: an HCCL rank table (v1.0, or v1.2 with super pods)
 * generated from a list of hosts, so operators do not write the JSON by
 * hand (collctl_ranktable.c).  The table has the shape tools/vm/kcoll-vm
 * writes and lib/coll_ranktable.c reads.
 */
#ifndef COLLCTL_RANKTABLE_H
#define COLLCTL_RANKTABLE_H

#include <stddef.h>

#include <json-c/json.h>

/* --ranks-per-node at most this: 64 NPUs of two dies each, with room. */
#define CC_RT_MAX_RPN		1024
/* What libcoll reads (lib/coll_ranktable.c, RT_MAX_RANKS). */
#define CC_RT_MAX_RANKS		65536
/* HCCL's limit for a server_id, which is the host as given. */
#define CC_RT_NAME_MAX		64

/* The options' text as given; NULL for the defaults. */
struct cc_rt_opts {
	const char *hosts;		/* LIST (comma-separated) or FILE; required */
	const char *ranks_per_node;	/* 1..CC_RT_MAX_RPN, default 1 */
	const char *servers_per_pod;	/* "A,B,...": v1.2; NULL: v1.0 */
	const char *base_port;		/* device_port of local rank 0, default 16667 */
};

/*
 * The rank table for @o into *@out (the caller puts it).  0, -EINVAL
 * for a bad value (the usage error: exit status 2), or another -errno
 * when the hosts file cannot be read or a name not resolved (exit status
 * 1); @err then says which value is wrong and what was expected.
 */
int cc_rt_build(const struct cc_rt_opts *o, json_object **out, char *err, size_t len);

/* collctl ranktable ARGS (argv[0] is "ranktable"): exit status 0, 1 or 2. */
int cc_ranktable_main(const char *prog, int argc, char **argv);

#endif /* COLLCTL_RANKTABLE_H */
