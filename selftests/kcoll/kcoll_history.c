// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: the flight records (collctl history), read through
 * collctl's own client (collctl_history.c) from the generic netlink
 * family.
 *
 *  - One rank: three operations of known kinds are in the record of the
 *    live communicator, in order, done, with their kinds, counts, types,
 *    reduction and root where they mean something; after close() the
 *    same record is there, marked destroyed, with the creator's command
 *    name; with history_keep_ms small it is gone a moment later.
 *  - A process that exits with its communicator open leaves its record,
 *    with its pid.
 *  - With history_max_bytes 0 a destroyed communicator leaves nothing.
 *  - With history_ops 4, six operations leave the last four (ids 3..6)
 *    and a count of six.
 *  - 300 operations, more than one netlink message holds, come whole and
 *    in order, live and destroyed.
 *  - Two ranks or more: rank 0 submits an AllReduce its peers never
 *    submit; its record shows it running, then, after an abort, done
 *    with ECANCELED, and the destroyed communicator's error ECANCELED;
 *    every rank's destroyed record keeps the two healthy AllReduces
 *    before it (the other ranks' error is whatever rank 0's leaving
 *    gave them).
 *
 * Changes the history_* tunables and puts them back.  Needs root (sysfs).
 * Skips (exit 4) without /dev/kcoll.
 */
#include <errno.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"
#include "collctl_history.h"

#define PORT 17400
#define PORT_OFF 300	/* the two-rank case: comm at +0, the barrier comm at +4 */

static __u64 create1(int fd, unsigned int port)
{
	struct cluster c;
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .nranks = 1, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1,
	};

	cluster_single(&c, port);
	cc.ranks = (uintptr_t)c.ranks;
	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? 0 : cc.comm_id;
}

/* Submit one operation on @buf (in place) and wait for it: its status. */
static int run_op(int fd, __u32 op, __u32 dtype, __u32 redop, __u32 root, __u64 count,
		  void *buf)
{
	struct kcoll_completion cpl;
	struct kcoll_submit s;

	memset(&s, 0, sizeof(s));
	s.op = op;
	s.dtype = dtype;
	s.redop = redop;
	s.root = root;
	s.count = count;
	s.send.addr = (uintptr_t)buf;
	s.recv.addr = (uintptr_t)buf;
	if (submit(fd, &s))
		return -1000 - errno;
	return wait_one(fd, &cpl);
}

/* The record of communicator @id, live or destroyed as asked; 0 if none. */
static int history_of(__u64 id, bool retained, struct cc_hist *out)
{
	struct cc_hist *list = NULL;
	struct cc_nl *nl;
	char err[256];
	size_t n = 0, i;
	int ret, found = 0;

	memset(out, 0, sizeof(*out));
	ret = cc_nl_open(&nl, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "# %s\n", err);
		return ret;
	}
	ret = cc_nl_history(nl, id, &list, &n, err, sizeof(err));
	cc_nl_close(nl);
	if (ret) {
		fprintf(stderr, "# history: %s\n", err);
		return ret;
	}
	for (i = 0; i < n; i++) {
		if (list[i].id != id || list[i].retained != retained || found)
			continue;
		*out = list[i];
		list[i].ops = NULL;
		found = 1;
	}
	cc_hists_free(list, n);
	return found;
}

/* A tunable's value, to put back. */
struct saved {
	char name[32];
	char val[64];
};

static void tun_save(struct saved *s, const char *name)
{
	char path[128];

	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(path, sizeof(path), KC_SYSFS "%s", name);
	if (kc_file_read(path, s->val, sizeof(s->val)))
		s->val[0] = 0;
}

static int tun_set(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), KC_SYSFS "%s", name);
	return kc_file_write(path, val);
}

static void tun_restore(const struct saved *s)
{
	if (s->val[0])
		tun_set(s->name, s->val);
}

FIXTURE(hist) {
	struct saved ops, keep, max;
	void *buf;
};

FIXTURE_SETUP(hist)
{
	char path[128];

	snprintf(path, sizeof(path), KC_SYSFS "history_ops");
	if (access(path, F_OK))
		SKIP(return, "the module keeps no flight records");
	if (geteuid())
		SKIP(return, "needs root (the history_* tunables)");
	tun_save(&self->ops, "history_ops");
	tun_save(&self->keep, "history_keep_ms");
	tun_save(&self->max, "history_max_bytes");
	ASSERT_EQ(0, tun_set("history_ops", "64"));
	ASSERT_EQ(0, tun_set("history_keep_ms", "600000"));
	ASSERT_EQ(0, tun_set("history_max_bytes", "4194304"));
	self->buf = map_buf(1 << 20);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(hist)
{
	tun_restore(&self->ops);
	tun_restore(&self->keep);
	tun_restore(&self->max);
}

TEST_F(hist, one_rank_record_outlives_its_communicator)
{
	struct cc_hist h;
	int fd = kc_open(_metadata);
	__u64 id = create1(fd, PORT);
	size_t i;

	ASSERT_NE(0, id) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, run_op(fd, KCOLL_OP_ALLREDUCE, KCOLL_FP32, KCOLL_MAX, 0, 256, self->buf));
	ASSERT_EQ(0, run_op(fd, KCOLL_OP_BROADCAST, KCOLL_INT32, 0, 0, 128, self->buf));
	ASSERT_EQ(0, run_op(fd, KCOLL_OP_ALLGATHER, KCOLL_INT8, 0, 0, 64, self->buf));

	ASSERT_EQ(1, history_of(id, false, &h));
	EXPECT_EQ(3, h.nops);
	EXPECT_EQ(3, h.recorded);
	EXPECT_EQ(64, h.capacity);
	EXPECT_EQ(0, h.err);
	EXPECT_EQ(getpid(), (pid_t)h.pid);
	free(h.ops);

	close(fd);
	ASSERT_EQ(1, history_of(id, true, &h));
	ASSERT_EQ(3, h.nops);
	EXPECT_EQ(getpid(), (pid_t)h.pid);
	EXPECT_EQ(geteuid(), h.uid);
	EXPECT_EQ(1, h.nranks);
	EXPECT_STREQ("kcoll_history", h.task);
	EXPECT_LE(h.created_ns, h.destroyed_ns);
	EXPECT_EQ(0, h.err);
	for (i = 0; i < h.nops; i++) {
		const struct cc_hist_op *o = &h.ops[i];

		EXPECT_EQ(i + 1, o->id);
		EXPECT_EQ(KCOLL_HIST_STATE_DONE, o->state);
		EXPECT_EQ(0, o->status);
		EXPECT_LE(h.created_ns, o->submit_ns);
		EXPECT_LE(o->submit_ns, o->start_ns);
		EXPECT_LE(o->start_ns, o->end_ns);
		EXPECT_LE(o->end_ns, h.destroyed_ns);
	}
	EXPECT_EQ(KCOLL_OP_ALLREDUCE, h.ops[0].op);
	EXPECT_EQ(KCOLL_FP32, h.ops[0].dtype);
	EXPECT_TRUE(h.ops[0].has_redop);
	EXPECT_EQ(KCOLL_MAX, h.ops[0].redop);
	EXPECT_FALSE(h.ops[0].has_root);
	EXPECT_EQ(256, h.ops[0].count);
	EXPECT_EQ(KCOLL_OP_BROADCAST, h.ops[1].op);
	EXPECT_TRUE(h.ops[1].has_root);
	EXPECT_EQ(0, h.ops[1].root);
	EXPECT_FALSE(h.ops[1].has_redop);
	EXPECT_EQ(128, h.ops[1].count);
	EXPECT_EQ(KCOLL_OP_ALLGATHER, h.ops[2].op);
	EXPECT_EQ(KCOLL_INT8, h.ops[2].dtype);
	EXPECT_EQ(64, h.ops[2].count);
	free(h.ops);

	/* Kept history_keep_ms after the destruction, not longer. */
	ASSERT_EQ(0, tun_set("history_keep_ms", "100"));
	sleep_ms(300);
	EXPECT_EQ(0, history_of(id, true, &h));
	free(h.ops);
}

/* A process that dies with its communicator open leaves the record too. */
TEST_F(hist, a_dead_process_leaves_its_record)
{
	int pipefd[2], status;
	struct cc_hist h;
	__u64 id = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(KC_DEV, O_RDWR | O_CLOEXEC);

		id = fd < 0 ? 0 : create1(fd, PORT + 4);
		if (!id || run_op(fd, KCOLL_OP_BARRIER, 0, 0, 0, 0, self->buf) ||
		    write(pipefd[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		_exit(0);	/* the file still open: the exit closes it */
	}
	close(pipefd[1]);
	EXPECT_EQ((ssize_t)sizeof(id), read(pipefd[0], &id, sizeof(id)));
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(1, history_of(id, true, &h));
	EXPECT_EQ(pid, (pid_t)h.pid);
	ASSERT_EQ(1, h.nops);
	EXPECT_EQ(KCOLL_OP_BARRIER, h.ops[0].op);
	EXPECT_EQ(KCOLL_HIST_STATE_DONE, h.ops[0].state);
	EXPECT_EQ(0, h.ops[0].status);
	free(h.ops);
}

TEST_F(hist, max_bytes_0_keeps_nothing)
{
	struct cc_hist h;
	int fd = kc_open(_metadata);
	__u64 id;

	ASSERT_EQ(0, tun_set("history_max_bytes", "0"));
	id = create1(fd, PORT + 1);
	ASSERT_NE(0, id) TH_LOG("create: %s", strerror(errno));
	ASSERT_EQ(0, run_op(fd, KCOLL_OP_ALLREDUCE, KCOLL_INT32, KCOLL_SUM, 0, 16, self->buf));
	/* The live record is there all the same. */
	ASSERT_EQ(1, history_of(id, false, &h));
	EXPECT_EQ(1, h.nops);
	free(h.ops);
	close(fd);
	EXPECT_EQ(0, history_of(id, true, &h));
	free(h.ops);
}

TEST_F(hist, the_ring_keeps_the_last_history_ops)
{
	struct cc_hist h;
	int fd = kc_open(_metadata), i;
	__u64 id;

	ASSERT_EQ(0, tun_set("history_ops", "4"));
	id = create1(fd, PORT + 2);
	ASSERT_NE(0, id) TH_LOG("create: %s", strerror(errno));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, run_op(fd, KCOLL_OP_ALLREDUCE, KCOLL_INT32, KCOLL_SUM, 0,
				    (__u64)i + 1, self->buf));
	close(fd);
	ASSERT_EQ(1, history_of(id, true, &h));
	EXPECT_EQ(6, h.recorded);
	EXPECT_EQ(4, h.capacity);
	ASSERT_EQ(4, h.nops);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ((__u64)i + 3, h.ops[i].id);
		EXPECT_EQ((__u64)i + 3, h.ops[i].count);
	}
	free(h.ops);
	/* An unknown id: nothing, not an error. */
	EXPECT_EQ(0, history_of(~0ull, false, &h));
}

/* A record larger than one netlink message comes whole, in order. */
TEST_F(hist, a_long_record_comes_whole)
{
	struct cc_hist h;
	int fd = kc_open(_metadata), i, bad = 0;
	__u64 id;

	ASSERT_EQ(0, tun_set("history_ops", "300"));
	id = create1(fd, PORT + 3);
	ASSERT_NE(0, id) TH_LOG("create: %s", strerror(errno));
	for (i = 0; i < 300; i++)
		ASSERT_EQ(0, run_op(fd, KCOLL_OP_ALLREDUCE, KCOLL_INT32, KCOLL_SUM, 0,
				    (__u64)i + 1, self->buf));
	ASSERT_EQ(1, history_of(id, false, &h));
	ASSERT_EQ(300, h.nops);
	for (i = 0; i < 300; i++)
		if ((h.ops[i].id != (__u64)i + 1 || h.ops[i].count != (__u64)i + 1) && bad++ < 4)
			TH_LOG("entry %d: id %llu count %llu", i, (unsigned long long)h.ops[i].id,
			       (unsigned long long)h.ops[i].count);
	EXPECT_EQ(0, bad);
	free(h.ops);
	close(fd);
	ASSERT_EQ(1, history_of(id, true, &h));
	EXPECT_EQ(300, h.nops);
	free(h.ops);
}

/* Every rank's op on @fd (an AllReduce of @count int32 in @buf). */
static int allreduce(int fd, void *buf, __u64 count)
{
	return run_op(fd, KCOLL_OP_ALLREDUCE, KCOLL_INT32, KCOLL_SUM, 0, count, buf);
}

TEST_F_TIMEOUT(hist, an_aborted_operation_shows_running_then_cancelled, 300)
{
	struct kcoll_abort a = { .size = sizeof(a) };
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	struct cluster c, cb;
	int fd, bfd;
	struct cc_hist h;
	__u64 id = 0;

	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	ASSERT_EQ(0, cluster_get_port(&cb, PORT_OFF + 4));
	fd = kc_open(_metadata);
	bfd = kc_open(_metadata);
	{
		struct kcoll_comm_create cc = {
			.size = sizeof(cc), .rank = c.rank, .nranks = c.nranks,
			.ranks = (uintptr_t)c.ranks, .rank_size = sizeof(struct kcoll_rank),
			.eventfd = -1, .connect_timeout_ms = 60000, .timeout_ms = 60000,
		};

		ASSERT_EQ(0, kc_comm_create_named(fd, &cc, NULL, &id));
	}
	ASSERT_EQ(0, comm_create(bfd, &cb, -1, NULL));
	ASSERT_EQ(0, allreduce(fd, self->buf, 1024));
	ASSERT_EQ(0, allreduce(fd, self->buf, 2048));
	if (c.rank == 0) {
		/* An operation no peer joins: it runs until the abort. */
		memset(&s, 0, sizeof(s));
		s.op = KCOLL_OP_ALLREDUCE;
		s.dtype = KCOLL_INT32;
		s.redop = KCOLL_SUM;
		s.count = 4096;
		s.send.addr = (uintptr_t)self->buf;
		s.recv.addr = (uintptr_t)self->buf;
		ASSERT_EQ(0, submit(fd, &s));
		sleep_ms(200);
		ASSERT_EQ(1, history_of(id, false, &h));
		ASSERT_EQ(3, h.nops);
		EXPECT_EQ(KCOLL_HIST_STATE_RUNNING, h.ops[2].state);
		EXPECT_NE(0, h.ops[2].start_ns);
		EXPECT_EQ(0, h.ops[2].end_ns);
		free(h.ops);
		ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &a));
		EXPECT_EQ(-ECANCELED, wait_one(fd, &cpl));
	}
	/* Every rank is past its part before any communicator goes. */
	ASSERT_EQ(0, allreduce(bfd, self->buf, 1));
	close(fd);
	ASSERT_EQ(1, history_of(id, true, &h));
	EXPECT_EQ(c.rank, h.rank);
	EXPECT_EQ(c.nranks, h.nranks);
	ASSERT_EQ(c.rank ? 2 : 3, h.nops);
	EXPECT_EQ(1, h.ops[0].id);
	EXPECT_EQ(1024, h.ops[0].count);
	EXPECT_EQ(0, h.ops[0].status);
	EXPECT_NE(0, h.ops[0].bytes);
	EXPECT_EQ(2, h.ops[1].id);
	EXPECT_EQ(2048, h.ops[1].count);
	EXPECT_EQ(0, h.ops[1].status);
	if (c.rank == 0) {
		EXPECT_EQ(KCOLL_OP_ALLREDUCE, h.ops[2].op);
		EXPECT_EQ(4096, h.ops[2].count);
		EXPECT_EQ(KCOLL_HIST_STATE_DONE, h.ops[2].state);
		EXPECT_EQ(ECANCELED, h.ops[2].status);
		EXPECT_EQ(ECANCELED, h.err);
	}
	free(h.ops);
	close(bfd);
}

KC_HARNESS_MAIN
