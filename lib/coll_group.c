// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: communicators of some of a parent's ranks that need no
 * exchange: coll_comm_create_group() (called by the listed ranks only,
 * as MPI_Comm_create_group and torch.distributed.new_group) and the
 * survivors' communicator of coll_comm_shrink().
 *
 * The members know what a new communicator needs already: the parent's
 * addresses, host and super-node identities and secret.  They only have
 * to agree on the new unique id, and derive it from the parent's, the
 * member list and a count that makes a repeated creation a new
 * communicator.  Members that disagree never meet (the module's listener
 * tells communicators apart by id) and fail at the connect timeout,
 * which is the price of not asking the ranks outside the group.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

void coll_child_uid(const coll_comm_t *c, const char *tag, uint32_t count,
		    const uint32_t *keep, uint32_t m, uint8_t uid[16])
{
	uint64_t h[2] = { 0x6b636f6c6c736872ull, 0x73757276697665ull };
	uint32_t i, k;

	for (k = 0; k < 2; k++) {
		h[k] = coll_oob_hash(tag, strlen(tag) + 1, h[k]);
		h[k] = coll_oob_hash(c->uid, sizeof(c->uid), h[k]);
		/* A communicator from a rank table has no id: its table names it. */
		for (i = 0; i < c->nranks; i++) {
			h[k] = coll_oob_hash(c->ranks[i].addr, strnlen(c->ranks[i].addr,
					     sizeof(c->ranks[i].addr)), h[k]);
			h[k] = coll_oob_hash(&c->ranks[i].port, sizeof(c->ranks[i].port), h[k]);
		}
		h[k] = coll_oob_hash(&count, sizeof(count), h[k]);
		h[k] = coll_oob_hash(&m, sizeof(m), h[k]);
		h[k] = coll_oob_hash(keep, m * sizeof(*keep), h[k]);
	}
	memcpy(uid, h, 16);
}

int coll_child_create(coll_comm_t *c, const uint32_t *keep, uint32_t m, const char *tag,
		      uint32_t count, const struct coll_comm_opts *opts,
		      const struct coll_parent *parent, coll_comm_t **out)
{
	struct coll_oob_table t;
	struct coll_comm_opts o;
	uint32_t i;
	int ret;

	ret = coll_oob_table_alloc(&t, m);
	if (ret)
		return ret;
	t.rank = m;
	for (i = 0; i < m; i++) {
		t.ranks[i] = c->ranks[keep[i]];
		t.hosts[i] = c->hosts[keep[i]];
		t.pods[i] = c->pods[keep[i]];
		if (keep[i] == c->rank)
			t.rank = i;
	}
	if (t.rank == m) {
		ret = coll_seterr(-EINVAL, "rank %u is not among the members", c->rank);
		goto out;
	}
	/* Port 0, the module's listener: the parent may still hold its own ports. */
	coll_oob_layout(&t);
	coll_child_uid(c, tag, count, keep, m, t.uid);
	o = opts ? *opts : c->opts;
	o.size = sizeof(o);
	o.unique_id = t.uid;
	o.secret = c->secret_len ? c->secret : NULL;
	o.secret_len = c->secret_len;
	ret = coll_comm_init_child(t.ranks, m, t.rank, &o, parent, out);
	if (!ret)
		coll_oob_adopt(*out, &t, NULL);
out:
	coll_oob_table_free(&t);
	return ret;
}

/*
 * Into *@count, how many groups of @members this rank made from @c before
 * this one, and this one counted for the next: members that create groups
 * of one list in the same order agree on it without telling each other.
 */
static int coll_group_count(coll_comm_t *c, const uint32_t *members, uint32_t n,
			    uint32_t *count)
{
	uint64_t list = coll_oob_hash(members, n * sizeof(*members),
				      coll_oob_hash(&n, sizeof(n), 0x67726f7570ull));
	struct coll_group_seen *g;
	uint32_t i;

	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i].list == list) {
			*count = c->groups[i].count++;
			return 0;
		}
	g = realloc(c->groups, (c->ngroups + 1) * sizeof(*g));
	if (!g)
		return coll_seterr(-ENOMEM, "coll_comm_create_group: out of memory");
	c->groups = g;
	g[c->ngroups++] = (struct coll_group_seen){ .list = list, .count = 1 };
	*count = 0;
	return 0;
}

/* Every member a rank of @c, once, and this rank among them. */
static int coll_group_check(const coll_comm_t *c, const uint32_t *members, uint32_t n)
{
	uint8_t *seen;
	bool me = false;
	uint32_t i;

	seen = calloc(c->nranks, 1);
	if (!seen)
		return coll_seterr(-ENOMEM, "coll_comm_create_group: out of memory");
	for (i = 0; i < n; i++) {
		if (members[i] >= c->nranks || seen[members[i]]) {
			free(seen);
			return coll_seterr(-EINVAL, "coll_comm_create_group: members[%u] = %u "
					   "is %s", i, members[i], members[i] >= c->nranks ?
					   "not a rank of the parent" : "listed twice");
		}
		seen[members[i]] = 1;
		me |= members[i] == c->rank;
	}
	free(seen);
	if (!me)
		return coll_seterr(-EINVAL, "coll_comm_create_group: rank %u is not in the "
				   "list: only the members call it", c->rank);
	return 0;
}

/* @c's settings, but for those @over sets (nonzero); never its device. */
static void coll_group_opts(const coll_comm_t *c, const struct coll_comm_opts *over,
			    struct coll_comm_opts *o)
{
	struct coll_comm_opts v;

	*o = c->opts;
	coll_opts_copy(over, &v);
	if (v.algo)
		o->algo = v.algo;
	if (v.timeout_ms)
		o->timeout_ms = v.timeout_ms;
	if (v.connect_timeout_ms)
		o->connect_timeout_ms = v.connect_timeout_ms;
	if (v.chunk_bytes)
		o->chunk_bytes = v.chunk_bytes;
	if (v.slots)
		o->slots = v.slots;
}

int coll_comm_create_group(coll_comm_t *comm, const uint32_t *members, uint32_t n,
			   const struct coll_comm_opts *opts, coll_comm_t **newcomm)
{
	struct coll_comm_opts o;
	uint32_t count = 0;
	int ret;

	coll_clearerr();
	if (!newcomm)
		return coll_seterr(-EINVAL, "coll_comm_create_group: newcomm pointer is NULL");
	*newcomm = NULL;
	if (!comm || !comm->ranks || comm->fd < 0)
		return coll_seterr(-EINVAL, "coll_comm_create_group: no communicator");
	if (!members || !n || n > comm->nranks)
		return coll_seterr(-EINVAL, "coll_comm_create_group: %u members for a "
				   "communicator of %u ranks", members ? n : 0, comm->nranks);
	if (opts && opts->size && opts->size < sizeof(uint32_t))
		return coll_seterr(-EINVAL, "coll_comm_create_group: bad coll_comm_opts.size %u",
				   opts->size);
	ret = coll_group_check(comm, members, n);
	if (!ret)
		ret = coll_group_count(comm, members, n, &count);
	if (ret)
		return ret;
	coll_group_opts(comm, opts, &o);
	ret = coll_child_create(comm, members, n, "kcoll group", count, &o, NULL, newcomm);
	if (ret) {
		char why[512];

		snprintf(why, sizeof(why), "%s", coll_last_error());
		coll_seterr(ret, "coll_comm_create_group: %u of the %u ranks (group %u of this "
			    "list): %s%s", n, comm->nranks, count, why, ret == -ETIMEDOUT ?
			    " (did every member pass the same list, and create its groups "
			    "in the same order?)" : "");
	}
	return ret;
}
