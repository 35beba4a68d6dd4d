// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll's out-of-band bootstrap and split (lib/coll_oob.c) with threads
 * as ranks and a fake allgather, no module: rank 0's id and secret reach
 * every rank, the address table, servers and super-nodes follow the host
 * and pod identities, every port is the module's (0),
 * split groups and orders as MPI_Comm_split, and bad input (a rank that
 * cannot take part, an allgather that mixes blocks up or fails) fails
 * every rank the same way instead of hanging one.  Without the module
 * every rank of coll_comm_init_oob() and coll_comm_split() gets -ENODEV.
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "fake_tree.h"
#include "coll_internal.h"

#define MAXR 8

/* The fake allgather: a shared buffer and a barrier. */
struct world {
	uint32_t n;
	pthread_barrier_t bar;
	uint8_t buf[MAXR * 4096];
	int mode;		/* 0: right; 1: blocks reversed; 2: rank 1 fails */
	int calls[MAXR];
};

struct rankctx {
	struct world *w;
	uint32_t rank;
	/* the test's per-rank input and output */
	const char *addr, *server, *pod;
	int color, key;
	int ret;
	char err[512];
	struct coll_oob_table t;
	coll_comm_t *comm;
	int (*body)(struct rankctx *);
};

static int fake_allgather(const void *s, void *r, size_t len, void *ctx)
{
	struct rankctx *rc = ctx;
	struct world *w = rc->w;
	uint32_t slot = w->mode == 1 ? w->n - 1 - rc->rank : rc->rank;
	int fail = w->mode == 2 && rc->rank == 1;

	w->calls[rc->rank]++;
	memcpy(w->buf + slot * len, s, len);
	pthread_barrier_wait(&w->bar);
	memcpy(r, w->buf, w->n * len);
	pthread_barrier_wait(&w->bar);
	return fail ? 7 : 0;
}

static void oob_of(struct rankctx *rc, struct coll_oob *oob)
{
	*oob = (struct coll_oob){ .allgather = fake_allgather, .ctx = rc, .rank = rc->rank,
				  .size = rc->w->n };
}

static int body_exchange(struct rankctx *rc)
{
	struct coll_oob_opts o = { .size = sizeof(o), .addr = rc->addr, .server = rc->server,
				   .pod = rc->pod };
	struct coll_oob oob;

	oob_of(rc, &oob);
	return coll_oob_exchange(&oob, &o, &rc->t);
}

static void *thread(void *p)
{
	struct rankctx *rc = p;

	rc->ret = rc->body(rc);
	snprintf(rc->err, sizeof(rc->err), "%s", coll_last_error());
	return NULL;
}

static struct world *run(struct rankctx *rc, uint32_t n, int mode, int (*body)(struct rankctx *))
{
	static struct world w;
	pthread_t th[MAXR];
	uint32_t i;

	memset(&w, 0, sizeof(w));
	w.n = n;
	w.mode = mode;
	pthread_barrier_init(&w.bar, NULL, n);
	for (i = 0; i < n; i++) {
		rc[i].w = &w;
		rc[i].rank = i;
		rc[i].body = body;
		pthread_create(&th[i], NULL, thread, &rc[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&w.bar);
	return &w;
}

static void free_all(struct rankctx *rc, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		coll_oob_table_free(&rc[i].t);
		coll_comm_destroy(rc[i].comm);
	}
}

static const uint8_t zero16[16];

TEST(rank0s_id_and_secret_reach_every_rank_with_the_address_table)
{
	struct rankctx rc[4] = {
		{ .addr = "10.0.0.1", .server = "a" }, { .addr = "10.0.0.2", .server = "a" },
		{ .addr = "10.0.0.3", .server = "b" }, { .addr = "fd00::4", .server = "b" },
	};
	uint32_t i, j;

	run(rc, 4, 0, body_exchange);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, rc[i].ret) TH_LOG("rank %u: %s", i, rc[i].err);
		ASSERT_EQ(4, rc[i].t.nranks);
		EXPECT_EQ(i, rc[i].t.rank);
		EXPECT_NE(0, memcmp(rc[i].t.uid, zero16, 16));
		EXPECT_EQ(0, memcmp(rc[i].t.uid, rc[0].t.uid, 16));
		EXPECT_EQ(0, memcmp(rc[i].t.secret, rc[0].t.secret, 32));
		for (j = 0; j < 4; j++) {
			EXPECT_STREQ(rc[j].addr, rc[i].t.ranks[j].addr);
			EXPECT_EQ(j / 2, rc[i].t.ranks[j].server_id);
			EXPECT_EQ(0, rc[i].t.ranks[j].pod_id);
			/* The module's listener: port 0 in the table. */
			EXPECT_EQ(0, rc[i].t.ranks[j].port);
		}
	}
	free_all(rc, 4);
	/* A second communicator: another id, another secret. */
	{
		struct rankctx rd[2] = { { .addr = "10.0.0.1" }, { .addr = "10.0.0.2" } };

		run(rd, 2, 0, body_exchange);
		ASSERT_EQ(0, rd[0].ret);
		ASSERT_EQ(0, rd[1].ret);
		EXPECT_EQ(0, memcmp(rd[0].t.uid, rd[1].t.uid, 16));
		free_all(rd, 2);
	}
}

TEST(ranks_sharing_an_address_share_the_modules_port)
{
	struct rankctx rc[5] = {
		{ .addr = "10.0.0.1" }, { .addr = "10.0.0.1" }, { .addr = "10.0.0.1" },
		{ .addr = "10.0.0.2" }, { .addr = "10.0.0.2" },
	};
	uint32_t j;

	run(rc, 5, 0, body_exchange);
	ASSERT_EQ(0, rc[2].ret) TH_LOG("%s", rc[2].err);
	for (j = 0; j < 5; j++) {
		EXPECT_STREQ(rc[j].addr, rc[2].t.ranks[j].addr);
		EXPECT_EQ(0, rc[2].t.ranks[j].port);
	}
	/* No server given: one kernel (boot id), one server. */
	EXPECT_EQ(0, rc[2].t.ranks[4].server_id);
	free_all(rc, 5);
}

TEST(servers_not_contiguous_make_every_rank_its_own_server)
{
	struct rankctx rc[4] = {
		{ .addr = "10.0.0.1", .server = "a" }, { .addr = "10.0.0.2", .server = "b" },
		{ .addr = "10.0.0.1", .server = "a" }, { .addr = "10.0.0.2", .server = "b" },
	};
	uint32_t j;

	run(rc, 4, 0, body_exchange);
	ASSERT_EQ(0, rc[1].ret);
	for (j = 0; j < 4; j++)
		EXPECT_EQ(j, rc[1].t.ranks[j].server_id);
	free_all(rc, 4);
}

TEST(super_nodes_follow_the_pod_identity)
{
	struct rankctx rc[6] = {
		{ .addr = "10.0.0.1", .server = "a", .pod = "p" },
		{ .addr = "10.0.0.1", .server = "a", .pod = "p" },
		{ .addr = "10.0.0.2", .server = "b", .pod = "p" },
		{ .addr = "10.0.0.3", .server = "c", .pod = "q" },
		{ .addr = "10.0.0.4", .server = "d", .pod = "q" },
		{ .addr = "10.0.0.4", .server = "d", .pod = "q" },
	};
	static const uint32_t srv[6] = { 0, 0, 1, 2, 3, 3 }, pod[6] = { 0, 0, 0, 1, 1, 1 };
	uint32_t j;

	run(rc, 6, 0, body_exchange);
	ASSERT_EQ(0, rc[5].ret);
	for (j = 0; j < 6; j++) {
		EXPECT_EQ(srv[j], rc[5].t.ranks[j].server_id);
		EXPECT_EQ(pod[j], rc[5].t.ranks[j].pod_id);
	}
	free_all(rc, 6);
	/* p q p: not contiguous, one super-node. */
	{
		struct rankctx rd[3] = {
			{ .addr = "10.0.0.1", .server = "a", .pod = "p" },
			{ .addr = "10.0.0.2", .server = "b", .pod = "q" },
			{ .addr = "10.0.0.3", .server = "c", .pod = "p" },
		};

		run(rd, 3, 0, body_exchange);
		ASSERT_EQ(0, rd[0].ret);
		for (j = 0; j < 3; j++) {
			EXPECT_EQ(j, rd[0].t.ranks[j].server_id);
			EXPECT_EQ(0, rd[0].t.ranks[j].pod_id);
		}
		free_all(rd, 3);
	}
}

TEST(a_rank_that_cannot_take_part_fails_every_rank)
{
	char longaddr[100];
	struct rankctx rc[3] = { { .addr = "10.0.0.1" }, { .addr = longaddr },
				 { .addr = "10.0.0.3" } };
	struct world *w;
	uint32_t i;

	memset(longaddr, '1', sizeof(longaddr) - 1);
	longaddr[sizeof(longaddr) - 1] = '\0';
	w = run(rc, 3, 0, body_exchange);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-EINVAL, rc[i].ret);
		EXPECT_EQ(1, w->calls[i]);
		EXPECT_EQ(0, rc[i].t.nranks);
	}
	EXPECT_NE(NULL, strstr(rc[1].err, "too long")) TH_LOG("%s", rc[1].err);
	EXPECT_NE(NULL, strstr(rc[0].err, "rank 1 cannot take part")) TH_LOG("%s", rc[0].err);
}

TEST(an_allgather_that_mixes_blocks_up_is_refused)
{
	struct rankctx rc[3] = { { .addr = "10.0.0.1" }, { .addr = "10.0.0.2" },
				 { .addr = "10.0.0.3" } };
	uint32_t i;

	run(rc, 3, 1, body_exchange);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-EPROTO, rc[i].ret);
		EXPECT_NE(NULL, strstr(rc[i].err, "offset i * len")) TH_LOG("%s", rc[i].err);
	}
}

TEST(a_failing_allgather_is_eio)
{
	struct rankctx rc[2] = { { .addr = "10.0.0.1" }, { .addr = "10.0.0.2" } };

	run(rc, 2, 2, body_exchange);
	EXPECT_EQ(0, rc[0].ret);
	EXPECT_EQ(-EIO, rc[1].ret);
	EXPECT_NE(NULL, strstr(rc[1].err, "returned 7")) TH_LOG("%s", rc[1].err);
	free_all(rc, 2);
}

TEST(bad_arguments)
{
	struct coll_oob oob = { .allgather = fake_allgather, .rank = 2, .size = 2 };
	struct coll_oob_opts o = { .size = 2 };
	coll_comm_t *c = (coll_comm_t *)1;
	uint8_t id[16];

	EXPECT_EQ(-EINVAL, coll_comm_init_oob(&oob, NULL, NULL));
	EXPECT_EQ(-EINVAL, coll_comm_init_oob(NULL, NULL, &c));
	EXPECT_EQ(NULL, c);
	EXPECT_EQ(-EINVAL, coll_comm_init_oob(&oob, NULL, &c));
	EXPECT_NE(NULL, strstr(coll_last_error(), "rank 2, size 2"));
	oob.rank = 0;
	EXPECT_EQ(-EINVAL, coll_comm_init_oob(&oob, &o, &c));
	oob.allgather = NULL;
	EXPECT_EQ(-EINVAL, coll_comm_init_oob(&oob, NULL, &c));
	EXPECT_EQ(-EINVAL, coll_comm_split(NULL, 0, 0, &c));
	EXPECT_EQ(-EINVAL, coll_comm_dup(NULL, &c));
	EXPECT_EQ(-EINVAL, coll_comm_split(NULL, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, coll_comm_unique_id(NULL, id));
}

/* ------------------------------------------------------------ split */

/* A parent of n ranks around fd -1, its table as an exchange made it. */
static int body_split(struct rankctx *rc)
{
	struct coll_rank_desc d[MAXR];
	struct coll_oob oob;
	uint32_t i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < rc->w->n; i++) {
		snprintf(d[i].addr, sizeof(d[i].addr), "10.0.0.%u", 1 + i / 2);
		d[i].server_id = i / 2;
	}
	rc->comm = coll_comm_wrap(-1, rc->rank, rc->w->n);
	if (!rc->comm || coll_comm_keep(rc->comm, d, NULL))
		return -ENOMEM;
	oob_of(rc, &oob);
	return coll_split_exchange(&oob, rc->comm->ranks, rc->comm->hosts, rc->comm->pods,
				   rc->color, rc->key, &rc->t);
}

TEST(split_groups_by_color_and_orders_by_key_then_rank)
{
	struct rankctx rc[6];
	uint32_t i, j;

	memset(rc, 0, sizeof(rc));
	for (i = 0; i < 6; i++) {
		rc[i].color = i == 5 ? COLL_SPLIT_NOCOLOR : (int)(i % 2);
		/* even ranks: reversed by key; odd: equal keys, parent order */
		rc[i].key = i % 2 ? 7 : -(int)i;
	}
	run(rc, 6, 0, body_split);
	for (i = 0; i < 6; i++)
		EXPECT_STREQ("", rc[i].ret ? rc[i].err : "");
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, rc[i].ret);
	/* color 0: parent ranks 4, 2, 0 */
	for (i = 0; i < 6; i += 2) {
		ASSERT_EQ(3, rc[i].t.nranks);
		EXPECT_EQ(2 - i / 2, rc[i].t.rank);
		EXPECT_STREQ("10.0.0.3", rc[i].t.ranks[0].addr);
		EXPECT_STREQ("10.0.0.1", rc[i].t.ranks[2].addr);
		/* one rank per server, numbered again from 0 */
		for (j = 0; j < 3; j++)
			EXPECT_EQ(j, rc[i].t.ranks[j].server_id);
		EXPECT_EQ(0, memcmp(rc[i].t.uid, rc[0].t.uid, 16));
	}
	/* color 1: parent ranks 1, 3 */
	for (i = 1; i < 5; i += 2) {
		ASSERT_EQ(2, rc[i].t.nranks);
		EXPECT_EQ(i / 2, rc[i].t.rank);
		EXPECT_STREQ("10.0.0.1", rc[i].t.ranks[0].addr);
		EXPECT_STREQ("10.0.0.2", rc[i].t.ranks[1].addr);
		EXPECT_EQ(0, memcmp(rc[i].t.uid, rc[1].t.uid, 16));
		EXPECT_EQ(0, memcmp(rc[i].t.secret, rc[1].t.secret, 32));
	}
	EXPECT_NE(0, memcmp(rc[0].t.uid, rc[1].t.uid, 16));
	EXPECT_NE(0, memcmp(rc[0].t.secret, rc[1].t.secret, 32));
	/* not a member */
	EXPECT_EQ(0, rc[5].t.nranks);
	EXPECT_EQ(NULL, rc[5].t.ranks);
	free_all(rc, 6);
}

/* -------------------------------------------- without the module */

static const struct coll_comm_opts nodev = { .size = sizeof(nodev),
					     .device = "/nonexistent/kcoll" };

static int body_init(struct rankctx *rc)
{
	struct coll_oob_opts o = { .size = sizeof(o), .addr = rc->addr, .comm = &nodev };
	struct coll_oob oob;

	oob_of(rc, &oob);
	return coll_comm_init_oob(&oob, &o, &rc->comm);
}

TEST(without_the_module_every_rank_gets_enodev)
{
	struct rankctx rc[3] = { { .addr = "10.0.0.1" }, { .addr = "10.0.0.1" },
				 { .addr = "10.0.0.2" } };
	struct world *w;
	uint32_t i;

	w = run(rc, 3, 0, body_init);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-ENODEV, rc[i].ret);
		EXPECT_EQ(NULL, rc[i].comm);
		/* the records, then the outcomes: no second round */
		EXPECT_EQ(2, w->calls[i]);
		EXPECT_NE(NULL, strstr(rc[i].err, "/nonexistent/kcoll")) TH_LOG("%s", rc[i].err);
	}
}

static int body_split_nodev(struct rankctx *rc)
{
	struct coll_rank_desc d[MAXR];
	coll_comm_t *nc = (coll_comm_t *)1;
	uint32_t i;
	int ret;

	memset(d, 0, sizeof(d));
	for (i = 0; i < rc->w->n; i++)
		snprintf(d[i].addr, sizeof(d[i].addr), "10.0.0.%u", 1 + i);
	rc->comm = coll_comm_wrap(-1, rc->rank, rc->w->n);
	if (!rc->comm || coll_comm_keep(rc->comm, d, &nodev))
		return -ENOMEM;
	oob_of(rc, &rc->comm->oob);
	ret = rc->color == 9 ? coll_comm_dup(rc->comm, &nc) :
	      coll_comm_split(rc->comm, rc->color, rc->key, &nc);
	if (nc)
		return -EEXIST;
	return ret;
}

TEST(split_and_dup_without_the_module)
{
	struct rankctx rc[4];
	struct world *w;
	uint32_t i;

	memset(rc, 0, sizeof(rc));
	for (i = 0; i < 4; i++)
		rc[i].color = i == 3 ? -5 : 1;
	w = run(rc, 4, 0, body_split_nodev);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-ENODEV, rc[i].ret) TH_LOG("rank %u: %s", i, rc[i].err);
		EXPECT_EQ(2, w->calls[i]);
	}
	/* not a member: no communicator and no error, but it took part */
	EXPECT_EQ(0, rc[3].ret);
	EXPECT_EQ(2, w->calls[3]);
	free_all(rc, 4);
	memset(rc, 0, sizeof(rc));
	for (i = 0; i < 2; i++)
		rc[i].color = 9;
	run(rc, 2, 0, body_split_nodev);
	EXPECT_EQ(-ENODEV, rc[0].ret);
	EXPECT_EQ(-ENODEV, rc[1].ret);
	free_all(rc, 2);
}

/* ------------------------------------------------------ local address */

static void fake_port(const char *root, const char *dev, const char *state, const char *ll,
		      const char *gid1, const char *type1)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/ports/1/state", dev);
	fake_put(root, rel, state);
	snprintf(rel, sizeof(rel), "%s/ports/1/link_layer", dev);
	fake_put(root, rel, ll);
	snprintf(rel, sizeof(rel), "%s/ports/1/gids/0", dev);
	fake_put(root, rel, "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
	snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/types/0", dev);
	fake_put(root, rel, "RoCE v2\n");
	snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/ndevs/0", dev);
	fake_put(root, rel, "eth0\n");
	snprintf(rel, sizeof(rel), "%s/ports/1/gids/1", dev);
	fake_put(root, rel, gid1);
	snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/types/1", dev);
	fake_put(root, rel, type1);
	snprintf(rel, sizeof(rel), "%s/ports/1/gid_attrs/ndevs/1", dev);
	fake_put(root, rel, "eth0\n");
}

TEST(local_address_from_sysfs)
{
	char root[] = "/tmp/coll-ib-XXXXXX", addr[64], cmd[64];

	ASSERT_NE(NULL, mkdtemp(root));
	unsetenv("KCOLL_DEVICE");
	EXPECT_EQ(-ENODEV, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	/* a down port, then an InfiniBand one, then the one */
	fake_port(root, "mlx5_0", "1: DOWN\n", "Ethernet\n",
		  "0000:0000:0000:0000:0000:ffff:0a00:0009\n", "RoCE v2\n");
	fake_port(root, "mlx5_1", "4: ACTIVE\n", "InfiniBand\n",
		  "0000:0000:0000:0000:0000:ffff:0a00:0008\n", "RoCE v2\n");
	EXPECT_EQ(-ENODEV, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	EXPECT_NE(NULL, strstr(coll_last_error(), "KCOLL_DEVICE"));
	fake_port(root, "rxe0", "4: ACTIVE\n", "Ethernet\n",
		  "0000:0000:0000:0000:0000:ffff:0a00:020f\n", "RoCE v2\n");
	ASSERT_EQ(0, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	EXPECT_STREQ("10.0.2.15", addr);
	/* RoCE v1 GIDs are not used; a global IPv6 one is */
	fake_port(root, "rxe1", "4: ACTIVE\n", "Ethernet\n",
		  "0000:0000:0000:0000:0000:ffff:0a00:0210\n", "IB/RoCE v1\n");
	EXPECT_EQ(-ENODEV, coll_local_addr_at(root, "rxe1", addr, sizeof(addr)));
	fake_port(root, "rxe1", "4: ACTIVE\n", "Ethernet\n",
		  "fd00:0000:0000:0000:0000:0000:0000:0010\n", "RoCE v2\n");
	ASSERT_EQ(0, coll_local_addr_at(root, "rxe1", addr, sizeof(addr)));
	EXPECT_STREQ("fd00::10", addr);
	setenv("KCOLL_DEVICE", "rxe1", 1);
	ASSERT_EQ(0, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	EXPECT_STREQ("fd00::10", addr);
	setenv("KCOLL_DEVICE", "../etc", 1);
	EXPECT_EQ(-EINVAL, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	setenv("KCOLL_DEVICE", "rxe9", 1);
	EXPECT_EQ(-ENODEV, coll_local_addr_at(root, NULL, addr, sizeof(addr)));
	EXPECT_NE(NULL, strstr(coll_last_error(), "rxe9"));
	unsetenv("KCOLL_DEVICE");
	EXPECT_EQ(-EINVAL, coll_local_addr_at(root, NULL, addr, 8));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
