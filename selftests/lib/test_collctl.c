// SPDX-License-Identifier: GPL-2.0
/*
 * collctl without the module: its parsers of the kcoll family's messages
 * (fed messages built here with libnl, as the module would send them),
 * its text and JSON output, explain on the built-in and on a sysfs link
 * model (a fake -S directory), the messages it gives when the module
 * or the family is absent, and doctor on a fake /sys tree (--root): the
 * device, port and address libcoll would use, exit status 1 without an
 * active port (runs the binary in $COLLCTL_BIN).
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "kselftest_harness.h"
#include "fake_tree.h"
#include "collctl_explain.h"
#include "collctl_fmt.h"
#include "collctl_history.h"
#include "collctl_nl.h"
#include "kc_cfg.h"

#define FAMILY	0x42

static struct nl_msg *new_msg(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc();

	if (m && !genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, FAMILY, 0, 0, cmd, KCOLL_GENL_VERSION)) {
		nlmsg_free(m);
		m = NULL;
	}
	return m;
}

static void put_lastop(struct nl_msg *m, int type, uint64_t id, uint32_t algo1, uint32_t status)
{
	struct nlattr *n = nla_nest_start(m, type);

	nla_put_u64(m, KCOLL_LASTOP_A_ID, id);
	nla_put_u32(m, KCOLL_LASTOP_A_OP, KCOLL_OP_ALLREDUCE);
	nla_put_u64(m, KCOLL_LASTOP_A_COUNT, 262144);
	nla_put_u64(m, KCOLL_LASTOP_A_BYTES, 2097152);
	nla_put_u32(m, KCOLL_LASTOP_A_ALGO_L0, 0);
	nla_put_u32(m, KCOLL_LASTOP_A_ALGO_L1, algo1);
	nla_put_u32(m, KCOLL_LASTOP_A_ALGO_L2, 0);
	nla_put_u32(m, KCOLL_LASTOP_A_STATUS, status);
	nla_put_u64(m, KCOLL_LASTOP_A_DURATION_NS, 1500000);
	nla_nest_end(m, n);
}

/* What the module sends for communicator 7, rank 1 of 4, peer 3 lost. */
static struct nl_msg *comm_msg(void)
{
	struct nl_msg *m = new_msg(KCOLL_CMD_COMM_GET);
	struct nlattr *n, *e;
	uint32_t i;

	nla_put_u64(m, KCOLL_A_COMM_ID, 7);
	nla_put_u32(m, KCOLL_A_COMM_PID, 4242);
	nla_put_u32(m, KCOLL_A_COMM_RANK, 1);
	nla_put_u32(m, KCOLL_A_COMM_NRANKS, 4);
	nla_put_u32(m, KCOLL_A_COMM_STATE, KCOLL_COMM_STATE_PEER_LOST);
	nla_put_u32(m, KCOLL_A_COMM_ERR, ECONNRESET);
	nla_put_u64(m, KCOLL_A_COMM_OPS, 12);
	nla_put_u64(m, KCOLL_A_COMM_BYTES, 123456789);
	nla_put_u64(m, KCOLL_A_COMM_ERRORS, 1);
	nla_put_u64(m, KCOLL_A_COMM_TIMEOUTS, 0);
	nla_put_u32(m, KCOLL_A_COMM_INFLIGHT, 2);
	nla_put_u32(m, KCOLL_A_COMM_CHUNK_BYTES, 65536);
	nla_put_u32(m, KCOLL_A_COMM_SLOTS, 8);
	nla_put_u32(m, KCOLL_A_COMM_TIMEOUT_MS, 30000);
	nla_put_u32(m, KCOLL_A_COMM_AUTH, KCOLL_COMM_AUTH_ADDRESS);
	nla_put_u64(m, KCOLL_A_COMM_REFUSED, 3);
	n = nla_nest_start(m, KCOLL_A_COMM_PEERS);
	for (i = 0; i < 4; i++) {
		e = nla_nest_start(m, KCOLL_A_COMM_PEER);
		nla_put_u32(m, KCOLL_PEER_A_RANK, i);
		nla_put_u32(m, KCOLL_PEER_A_STATE, i == 3 ? KCOLL_PEER_STATE_LOST :
			    i == 1 ? KCOLL_PEER_STATE_IDLE : KCOLL_PEER_STATE_UP);
		nla_put_u32(m, KCOLL_PEER_A_SERVER, i / 2);
		nla_put_u32(m, KCOLL_PEER_A_POD, 0);
		nla_nest_end(m, e);
	}
	nla_nest_end(m, n);
	n = nla_nest_start(m, KCOLL_A_COMM_LAST_OPS);
	put_lastop(m, KCOLL_A_COMM_LAST_OP, 11, KCOLL_ALGO_RING, 0);
	put_lastop(m, KCOLL_A_COMM_LAST_OP, 12, KCOLL_ALGO_NHR, ECONNRESET);
	nla_nest_end(m, n);
	n = nla_nest_start(m, KCOLL_A_COMM_MODEL);
	for (i = 0; i < KCOLL_LEVEL_COUNT; i++) {
		e = nla_nest_start(m, KCOLL_A_COMM_LINK);
		nla_put_u32(m, KCOLL_LINK_A_LEVEL, i);
		nla_put_u64(m, KCOLL_LINK_A_ALPHA_FS, 1000000000ull * (i + 1));
		nla_put_u64(m, KCOLL_LINK_A_BETA_FS, 20000);
		nla_put_u64(m, KCOLL_LINK_A_GAMMA_FS, 100000);
		nla_nest_end(m, e);
	}
	nla_put_u32(m, KCOLL_A_COMM_CONV_Q8, 384);
	nla_nest_end(m, n);
	n = nla_nest_start(m, KCOLL_A_COMM_ALGOS);
	for (i = 0; i < KCOLL_OP_COUNT; i++) {
		e = nla_nest_start(m, KCOLL_A_COMM_ALGO);
		nla_put_u32(m, KCOLL_ALGO_A_OP, i);
		nla_put_u32(m, KCOLL_ALGO_A_L0, 0);
		nla_put_u32(m, KCOLL_ALGO_A_L1, i == KCOLL_OP_ALLGATHER ? KCOLL_ALGO_RING : 0);
		nla_put_u32(m, KCOLL_ALGO_A_L2, 0);
		nla_put_u64(m, KCOLL_ALGO_A_PIPE_BYTES, 0);
		nla_nest_end(m, e);
	}
	nla_nest_end(m, n);
	return m;
}

/* Output of fn(f, arg) into a malloc'd string. */
static char *capture(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, arg);
	fclose(f);
	return buf;
}

static void print_comm(FILE *f, const void *arg) { cc_print_comm(f, arg); }
static void print_table(FILE *f, const void *arg) { cc_print_comm_table(f, arg, 1); }
static void print_event(FILE *f, const void *arg) { cc_print_event(f, arg, "T"); }
static void print_explain(FILE *f, const void *arg) { cc_explain_print(f, arg); }

TEST(a_comm_message_parses_into_every_field)
{
	struct nl_msg *m = comm_msg();
	struct cc_comm c;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, cc_parse_comm(nlmsg_hdr(m), &c));
	EXPECT_EQ(7, c.id);
	EXPECT_EQ(4242, c.pid);
	EXPECT_EQ(1, c.rank);
	EXPECT_EQ(4, c.nranks);
	EXPECT_EQ(KCOLL_COMM_STATE_PEER_LOST, c.state);
	EXPECT_EQ(ECONNRESET, c.err);
	EXPECT_EQ(12, c.ops);
	EXPECT_EQ(123456789, c.bytes);
	EXPECT_EQ(1, c.errors);
	EXPECT_EQ(2, c.inflight);
	EXPECT_EQ(65536, c.chunk_bytes);
	ASSERT_EQ(4, c.npeers);
	EXPECT_EQ(KCOLL_PEER_STATE_LOST, c.peers[3].state);
	EXPECT_EQ(1, c.peers[3].server);
	ASSERT_EQ(2, c.nlast);
	EXPECT_EQ(11, c.last[0].id);
	EXPECT_EQ(KCOLL_ALGO_NHR, c.last[1].algo[KCOLL_LEVEL1]);
	EXPECT_EQ(ECONNRESET, c.last[1].status);
	EXPECT_EQ(1500000, c.last[0].duration_ns);
	ASSERT_TRUE(c.has_model);
	EXPECT_EQ(3000000000ull, c.link[KCOLL_LEVEL2].alpha_fs);
	EXPECT_EQ(384, c.conv_q8);
	EXPECT_TRUE(c.has_auth);
	EXPECT_EQ(KCOLL_COMM_AUTH_ADDRESS, c.auth);
	EXPECT_EQ(3, c.refused);
	ASSERT_TRUE(c.has_algos);
	EXPECT_EQ(KCOLL_ALGO_RING, c.algos[KCOLL_OP_ALLGATHER].algo[KCOLL_LEVEL1]);
	EXPECT_EQ(KCOLL_ALGO_AUTO, c.algos[KCOLL_OP_ALLREDUCE].algo[KCOLL_LEVEL1]);
	cc_comm_release(&c);
	nlmsg_free(m);
}

TEST(messages_that_are_not_a_comm_are_refused)
{
	struct nl_msg *m = new_msg(KCOLL_CMD_EVENT_COMM_NEW);
	struct cc_comm c;

	nla_put_u64(m, KCOLL_A_COMM_ID, 7);
	EXPECT_EQ(-EINVAL, cc_parse_comm(nlmsg_hdr(m), &c));
	nlmsg_free(m);
	m = new_msg(KCOLL_CMD_COMM_GET);		/* no id */
	nla_put_u32(m, KCOLL_A_COMM_RANK, 1);
	EXPECT_EQ(-EINVAL, cc_parse_comm(nlmsg_hdr(m), &c));
	nlmsg_free(m);
	m = new_msg(KCOLL_CMD_COMM_GET);		/* a peers nest holding junk */
	nla_put_u64(m, KCOLL_A_COMM_ID, 7);
	{
		struct nlattr *n = nla_nest_start(m, KCOLL_A_COMM_PEERS);

		nla_put_u32(m, KCOLL_A_COMM_RANK, 1);
		nla_nest_end(m, n);
	}
	EXPECT_EQ(-EINVAL, cc_parse_comm(nlmsg_hdr(m), &c));
	EXPECT_EQ(NULL, c.peers);
	nlmsg_free(m);
}

TEST(events_parse_and_print)
{
	struct nl_msg *m = new_msg(KCOLL_CMD_EVENT_OP_FAIL);
	struct cc_event ev;
	json_object *j, *v;
	char *s;

	nla_put_u64(m, KCOLL_A_COMM_ID, 9);
	nla_put_u32(m, KCOLL_A_COMM_RANK, 0);
	nla_put_u32(m, KCOLL_A_COMM_NRANKS, 2);
	put_lastop(m, KCOLL_A_EVENT_OP, 33, KCOLL_ALGO_RING, ETIMEDOUT);
	ASSERT_EQ(0, cc_parse_event(nlmsg_hdr(m), &ev));
	nlmsg_free(m);
	EXPECT_EQ(KCOLL_CMD_EVENT_OP_FAIL, ev.cmd);
	EXPECT_EQ(9, ev.id);
	ASSERT_TRUE(ev.has_op);
	EXPECT_EQ(33, ev.op.id);
	EXPECT_EQ(ETIMEDOUT, ev.op.status);
	s = capture(print_event, &ev);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "T op-fail   comm 9 rank 0/2")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, strerror(ETIMEDOUT))) TH_LOG("%s", s);
	free(s);
	j = cc_event_json(&ev, "T");
	ASSERT_TRUE(json_object_object_get_ex(j, "event", &v));
	EXPECT_STREQ("op-fail", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "op", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "op_id", &v));
	EXPECT_EQ(33, json_object_get_int64(v));
	json_object_put(j);

	m = new_msg(KCOLL_CMD_EVENT_PEER_LOST);
	nla_put_u64(m, KCOLL_A_COMM_ID, 9);
	nla_put_u32(m, KCOLL_A_EVENT_PEER, 1);
	nla_put_u32(m, KCOLL_A_COMM_ERR, ECONNRESET);
	ASSERT_EQ(0, cc_parse_event(nlmsg_hdr(m), &ev));
	nlmsg_free(m);
	EXPECT_EQ(1, ev.peer);
	s = capture(print_event, &ev);
	EXPECT_NE(NULL, strstr(s, "peer-lost")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "peer 1: ")) TH_LOG("%s", s);
	free(s);

	m = new_msg(KCOLL_CMD_COMM_GET);		/* a reply is no event */
	nla_put_u64(m, KCOLL_A_COMM_ID, 9);
	EXPECT_EQ(-EINVAL, cc_parse_event(nlmsg_hdr(m), &ev));
	nlmsg_free(m);
}

TEST(a_comm_prints_as_text_and_json)
{
	struct nl_msg *m = comm_msg();
	json_object *j, *v, *e;
	struct cc_comm c;
	char *s;

	ASSERT_EQ(0, cc_parse_comm(nlmsg_hdr(m), &c));
	nlmsg_free(m);
	s = capture(print_comm, &c);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "communicator 7: rank 1 of 4, pid 4242, peer-lost")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "  1      self")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "  3      lost")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "allreduce")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, " ring ")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "1500.000")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "level2 convergence 1.50")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "level0 1000, 400.0, 80.0")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "UNAUTHENTICATED: no secret")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "refused 3 connections")) TH_LOG("%s", s);
	free(s);
	s = capture(print_table, &c);
	EXPECT_NE(NULL, strstr(s, "7      4242     1/4         peer-lost")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "  none\n")) TH_LOG("%s", s);
	free(s);
	c.auth = KCOLL_COMM_AUTH_HMAC_SHA256;
	s = capture(print_comm, &c);
	EXPECT_NE(NULL, strstr(s, "authenticated: every peer proved the secret")) TH_LOG("%s", s);
	free(s);
	c.auth = KCOLL_COMM_AUTH_ADDRESS;

	j = cc_comm_json(&c, true);
	ASSERT_TRUE(json_object_object_get_ex(j, "state", &v));
	EXPECT_STREQ("peer-lost", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "bytes", &v));
	EXPECT_EQ(123456789, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "auth", &v));
	EXPECT_STREQ("address", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "refused", &v));
	EXPECT_EQ(3, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "peers", &v));
	ASSERT_EQ(4, json_object_array_length(v));
	e = json_object_array_get_idx(v, 3);
	ASSERT_TRUE(json_object_object_get_ex(e, "state", &v));
	EXPECT_STREQ("lost", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "last_ops", &v));
	ASSERT_EQ(2, json_object_array_length(v));
	e = json_object_array_get_idx(v, 1);
	ASSERT_TRUE(json_object_object_get_ex(e, "algo", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "level1", &v));
	EXPECT_STREQ("NHR", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "algos", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "allgather", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "level1", &v));
	EXPECT_STREQ("ring", json_object_get_string(v));
	json_object_put(j);
	j = cc_comm_json(&c, false);
	EXPECT_FALSE(json_object_object_get_ex(j, "peers", &v));
	json_object_put(j);
	cc_comm_release(&c);
}

/* One operation of a flight record, submitted at 1.5 s past the epoch + id ms. */
static void put_hist_op(struct nl_msg *m, uint64_t id, uint32_t op, uint32_t state,
			uint32_t status)
{
	struct nlattr *n = nla_nest_start(m, KCOLL_A_HIST_OP);
	uint64_t t = 1500000000ull + id * 1000000ull;

	nla_put_u64(m, KCOLL_HIST_A_ID, id);
	nla_put_u32(m, KCOLL_HIST_A_STATE, state);
	nla_put_u32(m, KCOLL_HIST_A_OP, op);
	nla_put_u32(m, KCOLL_HIST_A_DTYPE, KCOLL_FP32);
	if (op == KCOLL_OP_ALLREDUCE)
		nla_put_u32(m, KCOLL_HIST_A_REDOP, KCOLL_SUM);
	if (op == KCOLL_OP_BROADCAST)
		nla_put_u32(m, KCOLL_HIST_A_ROOT, 2);
	nla_put_u64(m, KCOLL_HIST_A_COUNT, 1000 * id);
	nla_put_u64(m, KCOLL_HIST_A_BYTES, state == KCOLL_HIST_STATE_DONE ? 8000 * id : 0);
	nla_put_u32(m, KCOLL_HIST_A_ALGO_L1, KCOLL_ALGO_RING);
	nla_put_u32(m, KCOLL_HIST_A_STATUS, status);
	nla_put_u64(m, KCOLL_HIST_A_SUBMIT_NS, t);
	if (state != KCOLL_HIST_STATE_QUEUED)
		nla_put_u64(m, KCOLL_HIST_A_START_NS, t + 250000);
	if (state == KCOLL_HIST_STATE_DONE)
		nla_put_u64(m, KCOLL_HIST_A_END_NS, t + 1250000);
	nla_nest_end(m, n);
}

/* Communicator 9's record (destroyed), operations @first..@last, as one message. */
static struct nl_msg *hist_msg(uint64_t first, uint64_t last)
{
	struct nl_msg *m = new_msg(KCOLL_CMD_HISTORY_GET);
	struct nlattr *n;
	uint64_t id;

	nla_put_u64(m, KCOLL_A_COMM_ID, 9);
	nla_put_u32(m, KCOLL_A_COMM_PID, 777);
	nla_put_u32(m, KCOLL_A_COMM_RANK, 0);
	nla_put_u32(m, KCOLL_A_COMM_NRANKS, 4);
	nla_put_u32(m, KCOLL_A_COMM_ERR, ECANCELED);
	nla_put_u32(m, KCOLL_A_HIST_RETAINED, 1);
	nla_put_u32(m, KCOLL_A_HIST_UID, 1000);
	nla_put_string(m, KCOLL_A_HIST_TASK, "train.py");
	nla_put_u64(m, KCOLL_A_HIST_CREATED_NS, 1000000000ull);
	nla_put_u64(m, KCOLL_A_HIST_DESTROYED_NS, 3000000000ull);
	nla_put_u32(m, KCOLL_A_HIST_CAPACITY, 64);
	nla_put_u64(m, KCOLL_A_HIST_RECORDED, 3);
	n = nla_nest_start(m, KCOLL_A_HIST_OPS);
	for (id = first; id <= last; id++)
		put_hist_op(m, id, id == 2 ? KCOLL_OP_BROADCAST : KCOLL_OP_ALLREDUCE,
			    id == 3 ? KCOLL_HIST_STATE_DONE : KCOLL_HIST_STATE_DONE,
			    id == 3 ? ECANCELED : 0);
	nla_nest_end(m, n);
	return m;
}

static void print_history(FILE *f, const void *arg)
{
	cc_print_history(f, arg, 1, true);
}

/*
 * A flight record split over two messages (as the module splits one too
 * large for a message) is one record again; text and JSON show every
 * field.
 */
TEST(history_messages_merge_and_print)
{
	struct nl_msg *m1 = hist_msg(1, 2), *m2 = hist_msg(3, 3);
	struct cc_hist *list = NULL, h;
	json_object *j, *e, *o, *v;
	size_t n = 0;
	char *s;

	ASSERT_EQ(0, cc_parse_hist(nlmsg_hdr(m1), &h));
	EXPECT_EQ(9, h.id);
	EXPECT_TRUE(h.retained);
	EXPECT_STREQ("train.py", h.task);
	EXPECT_EQ(2, h.nops);
	EXPECT_TRUE(h.ops[0].has_redop);
	EXPECT_FALSE(h.ops[0].has_root);
	EXPECT_TRUE(h.ops[1].has_root);
	EXPECT_EQ(2, h.ops[1].root);
	ASSERT_EQ(0, cc_hist_add(&list, &n, &h));
	ASSERT_EQ(0, cc_parse_hist(nlmsg_hdr(m2), &h));
	ASSERT_EQ(0, cc_hist_add(&list, &n, &h));
	nlmsg_free(m1);
	nlmsg_free(m2);
	ASSERT_EQ(1, n);
	ASSERT_EQ(3, list[0].nops);
	EXPECT_EQ(3, list[0].ops[2].id);
	EXPECT_EQ(ECANCELED, list[0].ops[2].status);
	/* a comm message is not a history message */
	m1 = comm_msg();
	EXPECT_EQ(-EINVAL, cc_parse_hist(nlmsg_hdr(m1), &h));
	nlmsg_free(m1);

	s = capture(print_history, list);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, "comm 9 (destroyed): rank 0/4, pid 777 (train.py), uid 1000"))
		TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "created 1970-01-01 00:00:01.000000, destroyed "
			       "1970-01-01 00:00:03.000000, error: ")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "3 operations recorded, the last 3 kept (at most 64)"))
		TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "  1        done    allreduce     fp32    sum      -         1000"))
		TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "  2        done    broadcast     fp32    -        2         2000"))
		TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "1970-01-01 00:00:01.501000")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, " 250.000     1000.000  ok\n")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, strerror(ECANCELED))) TH_LOG("%s", s);
	free(s);

	j = cc_history_json(list, n);
	ASSERT_EQ(1, json_object_array_length(j));
	e = json_object_array_get_idx(j, 0);
	ASSERT_TRUE(json_object_object_get_ex(e, "comm", &v));
	EXPECT_EQ(9, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "destroyed", &v));
	EXPECT_TRUE(json_object_get_boolean(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "task", &v));
	EXPECT_STREQ("train.py", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "errno", &v));
	EXPECT_EQ(ECANCELED, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "ops", &o));
	ASSERT_EQ(3, json_object_array_length(o));
	e = json_object_array_get_idx(o, 1);
	ASSERT_TRUE(json_object_object_get_ex(e, "op", &v));
	EXPECT_STREQ("broadcast", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "root", &v));
	EXPECT_EQ(2, json_object_get_int64(v));
	EXPECT_FALSE(json_object_object_get_ex(e, "redop", &v));
	ASSERT_TRUE(json_object_object_get_ex(e, "duration_ns", &v));
	EXPECT_EQ(1000000, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "queue_ns", &v));
	EXPECT_EQ(250000, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(e, "algo", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "level1", &v));
	EXPECT_STREQ("ring", json_object_get_string(v));
	json_object_put(j);
	cc_hists_free(list, n);
}

/* A running operation has no end, no status, and prints dashes for them. */
TEST(history_running_operation)
{
	struct nl_msg *m = new_msg(KCOLL_CMD_HISTORY_GET);
	struct cc_hist h;
	json_object *j, *e, *v;
	struct nlattr *n;
	char *s;

	nla_put_u64(m, KCOLL_A_COMM_ID, 5);
	nla_put_u32(m, KCOLL_A_HIST_CAPACITY, 64);
	nla_put_u64(m, KCOLL_A_HIST_RECORDED, 1);
	n = nla_nest_start(m, KCOLL_A_HIST_OPS);
	put_hist_op(m, 1, KCOLL_OP_ALLREDUCE, KCOLL_HIST_STATE_RUNNING, 0);
	nla_nest_end(m, n);
	ASSERT_EQ(0, cc_parse_hist(nlmsg_hdr(m), &h));
	nlmsg_free(m);
	EXPECT_FALSE(h.retained);
	ASSERT_EQ(1, h.nops);
	EXPECT_EQ(0, h.ops[0].end_ns);
	s = capture(print_history, &h);
	EXPECT_NE(NULL, strstr(s, "comm 5 (live)")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, " running ")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, " 250.000            -  -\n")) TH_LOG("%s", s);
	free(s);
	j = cc_history_json(&h, 1);
	e = json_object_array_get_idx(j, 0);
	ASSERT_TRUE(json_object_object_get_ex(e, "ops", &v));
	e = json_object_array_get_idx(v, 0);
	EXPECT_FALSE(json_object_object_get_ex(e, "status", &v));
	EXPECT_FALSE(json_object_object_get_ex(e, "end_ns", &v));
	ASSERT_TRUE(json_object_object_get_ex(e, "state", &v));
	EXPECT_STREQ("running", json_object_get_string(v));
	json_object_put(j);
	free(h.ops);
}

/*
 * An operation that did not run what is configured: the last-ops record
 * and the algo-fallback event carry which levels and the plan's note,
 * and show, monitor and their JSON say so.
 */
TEST(a_fallback_shows_in_show_and_monitor)
{
	static const char note[] = "level0 tree cannot run broadcast below the top level, NHR ran";
	struct nl_msg *m = new_msg(KCOLL_CMD_COMM_GET);
	json_object *j, *v, *nt;
	struct nlattr *n, *e;
	struct cc_event ev;
	struct cc_comm c;
	char *s;

	nla_put_u64(m, KCOLL_A_COMM_ID, 5);
	n = nla_nest_start(m, KCOLL_A_COMM_LAST_OPS);
	put_lastop(m, KCOLL_A_COMM_LAST_OP, 1, KCOLL_ALGO_NHR, 0);
	e = nla_nest_start(m, KCOLL_A_COMM_LAST_OP);
	nla_put_u64(m, KCOLL_LASTOP_A_ID, 2);
	nla_put_u32(m, KCOLL_LASTOP_A_OP, KCOLL_OP_BROADCAST);
	nla_put_u32(m, KCOLL_LASTOP_A_ALGO_L0, KCOLL_ALGO_MESH);
	nla_put_u32(m, KCOLL_LASTOP_A_ALGO_L1, KCOLL_ALGO_NHR);
	nla_put_u32(m, KCOLL_LASTOP_A_FALLBACK, 1u << KCOLL_LEVEL0);
	nla_put_string(m, KCOLL_LASTOP_A_NOTE, note);
	nla_nest_end(m, e);
	nla_nest_end(m, n);
	n = nla_nest_start(m, KCOLL_A_COMM_ALGOS);
	e = nla_nest_start(m, KCOLL_A_COMM_ALGO);
	nla_put_u32(m, KCOLL_ALGO_A_OP, KCOLL_OP_REDUCESCATTER);
	nla_put_u32(m, KCOLL_ALGO_A_L0, KCOLL_ALGO_AUTO);
	nla_put_u32(m, KCOLL_ALGO_A_CONF_L0, KCOLL_ALGO_TREE);
	nla_nest_end(m, e);
	nla_nest_end(m, n);
	ASSERT_EQ(0, cc_parse_comm(nlmsg_hdr(m), &c));
	nlmsg_free(m);
	ASSERT_EQ(2, c.nlast);
	EXPECT_EQ(0, c.last[0].fallback);
	EXPECT_STREQ("", c.last[0].note);
	EXPECT_EQ(1u << KCOLL_LEVEL0, c.last[1].fallback);
	EXPECT_STREQ(note, c.last[1].note);
	EXPECT_EQ(KCOLL_ALGO_TREE, c.algos[KCOLL_OP_REDUCESCATTER].conf[KCOLL_LEVEL0]);
	s = capture(print_comm, &c);
	ASSERT_NE(NULL, s);
	EXPECT_NE(NULL, strstr(s, " fullmesh! ")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "! not as configured: level0 tree cannot run broadcast"))
		TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "reducescatter  tree>NA")) TH_LOG("%s", s);
	/* the operation that ran as configured has no such line */
	EXPECT_EQ(strstr(s, "! not as configured"), strrchr(s, '!')) TH_LOG("%s", s);
	free(s);
	j = cc_comm_json(&c, true);
	ASSERT_TRUE(json_object_object_get_ex(j, "last_ops", &v));
	v = json_object_array_get_idx(v, 1);
	ASSERT_TRUE(json_object_object_get_ex(v, "note", &nt));
	EXPECT_STREQ(note, json_object_get_string(nt));
	ASSERT_TRUE(json_object_object_get_ex(v, "fallback", &v));
	ASSERT_EQ(1, json_object_array_length(v));
	EXPECT_STREQ("level0", json_object_get_string(json_object_array_get_idx(v, 0)));
	json_object_put(j);
	cc_comm_release(&c);

	m = new_msg(KCOLL_CMD_EVENT_ALGO_FALLBACK);
	nla_put_u64(m, KCOLL_A_COMM_ID, 5);
	nla_put_u32(m, KCOLL_A_COMM_NRANKS, 8);
	n = nla_nest_start(m, KCOLL_A_EVENT_OP);
	nla_put_u64(m, KCOLL_LASTOP_A_ID, 2);
	nla_put_u32(m, KCOLL_LASTOP_A_OP, KCOLL_OP_BROADCAST);
	nla_put_u64(m, KCOLL_LASTOP_A_COUNT, 1024);
	nla_put_u32(m, KCOLL_LASTOP_A_FALLBACK, 1u << KCOLL_LEVEL0);
	nla_put_string(m, KCOLL_LASTOP_A_NOTE, note);
	nla_nest_end(m, n);
	ASSERT_EQ(0, cc_parse_event(nlmsg_hdr(m), &ev));
	nlmsg_free(m);
	EXPECT_EQ(KCOLL_CMD_EVENT_ALGO_FALLBACK, ev.cmd);
	ASSERT_TRUE(ev.has_op);
	s = capture(print_event, &ev);
	EXPECT_NE(NULL, strstr(s, "T algo-fallback comm 5 rank 0/8")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "op 2 broadcast count 1024: level0 not as configured: "
			       "level0 tree cannot run")) TH_LOG("%s", s);
	free(s);
	j = cc_event_json(&ev, "T");
	ASSERT_TRUE(json_object_object_get_ex(j, "event", &v));
	EXPECT_STREQ("algo-fallback", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "op", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "note", &v));
	EXPECT_STREQ(note, json_object_get_string(v));
	json_object_put(j);
}

/* explain says which configured level did not run, as the plan does. */
TEST(explain_reports_a_fallback)
{
	struct kc_algo_conf conf;
	struct kc_algo_cfg cfg;
	struct cc_explain x;
	struct kc_topo t;
	char err[256];
	char *s;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	ASSERT_EQ(0, kc_cfg_parse("level0:tree;level1:NA", &conf, err, sizeof(err)));
	kc_cfg_for_op(&conf, KCOLL_OP_BROADCAST, &cfg, NULL, 0);
	ASSERT_EQ(0, cc_explain_run(&t, 0, KCOLL_OP_BROADCAST, 1 << 20, &cfg, NULL, &x, err,
				    sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(KCOLL_ALGO_TREE, x.configured[KCOLL_LEVEL0]);
	EXPECT_EQ(1u << KCOLL_LEVEL0, x.fallback);
	EXPECT_NE(NULL, strstr(x.note, "level0 tree cannot run broadcast below the top level"))
		TH_LOG("%s", x.note);
	s = capture(print_explain, &x);
	EXPECT_NE(NULL, strstr(s, "(not as configured: see the note)")) TH_LOG("%s", s);
	free(s);
	/* AllReduce: Tree runs at level0, no builder replaces it */
	kc_cfg_for_op(&conf, KCOLL_OP_ALLREDUCE, &cfg, NULL, 0);
	ASSERT_EQ(0, cc_explain_run(&t, 0, KCOLL_OP_ALLREDUCE, 16 << 20, &cfg, NULL, &x, err,
				    sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(KCOLL_ALGO_TREE, x.chosen[KCOLL_LEVEL0]);
	EXPECT_EQ(0, x.fallback);
	kc_topo_free(&t);
}

TEST(sizes_parse_with_binary_suffixes)
{
	char err[160];
	u64 v;

	ASSERT_EQ(0, cc_parse_bytes("64M", &v, err, sizeof(err)));
	EXPECT_EQ(64ull << 20, v);
	ASSERT_EQ(0, cc_parse_bytes("4k", &v, err, sizeof(err)));
	EXPECT_EQ(4096, v);
	ASSERT_EQ(0, cc_parse_bytes("1GB", &v, err, sizeof(err)));
	EXPECT_EQ(1ull << 30, v);
	ASSERT_EQ(0, cc_parse_bytes("12", &v, err, sizeof(err)));
	EXPECT_EQ(12, v);
	EXPECT_EQ(-EINVAL, cc_parse_bytes("", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, cc_parse_bytes("-1", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, cc_parse_bytes("1X", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, cc_parse_bytes("M", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, cc_parse_bytes("99999999T", &v, err, sizeof(err)));
}

TEST(explain_reports_what_selection_and_the_plan_do)
{
	struct kc_algo_cfg cfg = { .pipe_bytes = 0 }, want;
	struct kc_plan *p;
	struct kc_op_desc d = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				.count = (64u << 20) / 4 };
	struct cc_explain x;
	struct kc_topo t;
	char err[256];
	u64 best;
	u32 i;
	char *s;

	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));
	best = kc_select_cfg(&t, &d, &cfg, NULL, &want);
	ASSERT_EQ(0, cc_explain_run(&t, 0, KCOLL_OP_ALLREDUCE, 64u << 20, &cfg, NULL, &x, err,
				    sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(best, x.time_fs);
	/* what selection resolved, built directly: the plan explain describes */
	ASSERT_EQ(0, kc_plan_build(&t, 0, &d, &want, &p, NULL, 0));
	EXPECT_EQ(0, memcmp(p->algo, x.chosen, sizeof(x.chosen)));
	EXPECT_EQ(p->nsteps, x.nsteps);
	kc_plan_free(p);
	EXPECT_EQ(4, x.nservers);
	EXPECT_LT(0, x.nsteps);
	EXPECT_LT(0, x.sent);
	ASSERT_LT(1, x.nalt);
	for (i = 0; i < x.nalt; i++) {
		/* nothing selection weighs beats what it chose */
		EXPECT_LE(x.time_fs, x.alt[i].time_fs) TH_LOG("%s", x.alt[i].name);
		if (i)
			EXPECT_LE(x.alt[i - 1].time_fs, x.alt[i].time_fs);
	}
	EXPECT_NE(NULL, strstr(x.why, "least modelled time")) TH_LOG("%s", x.why);
	s = capture(print_explain, &x);
	EXPECT_NE(NULL, strstr(s, "allreduce of 67108864 bytes")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "predicted time: ")) TH_LOG("%s", s);
	EXPECT_NE(NULL, strstr(s, "candidates (modelled time):")) TH_LOG("%s", s);
	free(s);

	/*
	 * Two one-rank servers: most algorithms are the same single exchange,
	 * so candidates tie; "next best" must then be one really slower, and
	 * the ties are counted.
	 */
	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 2, 1));
	ASSERT_EQ(0, cc_explain_run(&t, 0, KCOLL_OP_ALLREDUCE, 1024, &cfg, NULL, &x, err,
				    sizeof(err))) TH_LOG("%s", err);
	ASSERT_LT(2, x.nalt);
	EXPECT_EQ(x.time_fs, x.alt[1].time_fs) TH_LOG("no tie: %s", x.why);
	EXPECT_NE(NULL, strstr(x.why, "equally fast)")) TH_LOG("%s", x.why);
	for (i = 0; i < x.nalt; i++) {
		char want_next[80];

		if (x.alt[i].time_fs == x.time_fs)
			continue;
		snprintf(want_next, sizeof(want_next), "next best, %s,", x.alt[i].name);
		if (x.alt[i].time_fs != KC_COST_INF)
			EXPECT_NE(NULL, strstr(x.why, want_next)) TH_LOG("%s", x.why);
		break;
	}
	ASSERT_EQ(0, kc_topo_init_regular(&t, 1, 4, 2));

	/* a configuration that fixes every level: no choice, no candidates */
	cfg.algo[KCOLL_LEVEL0] = KCOLL_ALGO_RING;
	cfg.algo[KCOLL_LEVEL1] = KCOLL_ALGO_RING;
	cfg.algo[KCOLL_LEVEL2] = KCOLL_ALGO_RING;
	ASSERT_EQ(0, cc_explain_run(&t, 3, KCOLL_OP_ALLREDUCE, 1024, &cfg, NULL, &x, err,
				    sizeof(err)));
	EXPECT_EQ(KCOLL_ALGO_RING, x.chosen[KCOLL_LEVEL1]);
	EXPECT_NE(NULL, strstr(x.why, "every level is configured")) TH_LOG("%s", x.why);
	EXPECT_EQ(-EOPNOTSUPP, cc_explain_run(&t, 0, KCOLL_OP_ALLTOALLV, 1024, &cfg, NULL, &x,
					      err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "alltoallv")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, cc_explain_run(&t, 8, KCOLL_OP_ALLREDUCE, 1024, &cfg, NULL, &x, err,
					  sizeof(err)));
	kc_topo_free(&t);
}

/* ------------------------------------------------- the binary, no module */

struct run {
	int status;
	char out[8192];
};

static int run(struct run *r, const char *args)
{
	const char *bin = getenv("COLLCTL_BIN");
	char cmd[1024];
	size_t n;
	FILE *p;

	if (!bin)
		bin = "build/bin/collctl";
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(r->out, 1, sizeof(r->out) - 1, p);
	r->out[n] = '\0';
	r->status = pclose(p);
	r->status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	return 0;
}

/* The tests below need a machine without the kcoll family (the host). */
static bool family_present(void)
{
	struct cc_nl *nl;
	char err[256];

	if (cc_nl_open(&nl, err, sizeof(err)))
		return false;
	cc_nl_close(nl);
	return true;
}

TEST(without_the_module_collctl_says_what_to_do)
{
	struct run r;

	if (family_present())
		SKIP(return, "the kcoll family is registered here");
	ASSERT_EQ(0, run(&r, "show 1"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "family 'kcoll' is not registered (is the kcoll module "
			       "loaded? 'modprobe kcoll')")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "-j monitor --count 1 -T 1"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "is the kcoll module loaded?")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "-D /nonexistent/kcoll show"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "/nonexistent/kcoll")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "show x1"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "'x1' is not a communicator id")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "monitor --count 0"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "monitor: --count 0 out of range 1..4294967295"))
		TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "-S /nonexistent config"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "is the kcoll module loaded?")) TH_LOG("%s", r.out);
}

/* A rank table of @n ranks, one per server, in @path. */
static int write_table(const char *path, int n)
{
	FILE *o = fopen(path, "w");
	int i;

	if (!o)
		return -1;
	fprintf(o, "{\"version\":\"1.0\",\"server_count\":\"%d\",\"server_list\":[", n);
	for (i = 0; i < n; i++)
		fprintf(o, "%s{\"server_id\":\"s%d\",\"device\":[{\"device_id\":\"0\","
			"\"device_ip\":\"127.0.0.%d\",\"rank_id\":\"%d\"}]}", i ? "," : "", i,
			i + 1, i);
	fprintf(o, "],\"status\":\"completed\"}\n");
	return fclose(o);
}

TEST(calibrate_says_what_is_wrong_before_it_measures)
{
	char one[] = "/tmp/test_collctl.one.XXXXXX", two[] = "/tmp/test_collctl.two.XXXXXX";
	char args[512];
	struct run r;
	int fd;

	ASSERT_EQ(0, run(&r, "calibrate"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "--ranktable FILE --rank R, or KCOLL_RANKTABLE and "
			       "KCOLL_RANK")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "calibrate --ranktable x --rank 0 --sizes 4K,4K"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "not all equal")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "calibrate --ranktable x --rank 0 -n 0"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "calibrate: --iters 0 out of range 1..")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "calibrate --ranktable /nonexistent/table --rank 0"));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "/nonexistent/table")) TH_LOG("%s", r.out);

	fd = mkstemp(one);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, write_table(one, 1));
	snprintf(args, sizeof(args), "calibrate --ranktable %s --rank 0", one);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "has one rank: there is no link to measure"))
		TH_LOG("%s", r.out);
	fd = mkstemp(two);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, write_table(two, 2));
	snprintf(args, sizeof(args), "calibrate --ranktable %s --rank 2", two);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "rank 2, but")) TH_LOG("%s", r.out);
	/* without the module the first communicator cannot be made; nothing hangs */
	if (!family_present()) {
		snprintf(args, sizeof(args), "-D /nonexistent/kcoll calibrate --ranktable %s "
			 "--rank 0 -T 5", two);
		ASSERT_EQ(0, run(&r, args));
		EXPECT_EQ(1, r.status);
		EXPECT_NE(NULL, strstr(r.out, "level1 group of 2 ranks")) TH_LOG("%s", r.out);
		EXPECT_NE(NULL, strstr(r.out, "/nonexistent/kcoll")) TH_LOG("%s", r.out);
	}
	unlink(one);
	unlink(two);
}

TEST(explain_without_the_module_uses_the_builtin_model)
{
	struct run r;

	ASSERT_EQ(0, run(&r, "-S /nonexistent explain --op allreduce --bytes 64M --ranks 8"));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "link model: built-in defaults (module not loaded)"))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "on 8 ranks (8 servers, 1 super pods)")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "-S /nonexistent -j explain --op reduce --bytes 4M"));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "\"predicted_us\"")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "explain --bytes 4M"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "needs --op OP and --bytes N")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "explain --op nosuch --bytes 4M"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "unknown operation 'nosuch'")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "explain --op allreduce --bytes 4Q"));
	EXPECT_EQ(2, r.status);
	ASSERT_EQ(0, run(&r, "explain --op allreduce --bytes 4M --ranks 6 --per-server 4"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "6 ranks do not split into servers of 4")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "explain --op allreduce --bytes 4M --ranks 4 7"));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.out, "COMM has its own topology")) TH_LOG("%s", r.out);
}

/* Write a fake sysfs directory with the link model attributes. */
static int fake_sysfs_mesh(const char *dir, unsigned int alpha_ns, const char *gbps,
			   unsigned int slots, unsigned int auto_mesh)
{
	static const char *const f[] = { "alpha_ns", "gbps", "reduce_gbps" };
	char path[512];
	unsigned int l, i;
	FILE *o;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	for (l = 0; l < 3; l++) {
		for (i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/level%u_%s", dir, l, f[i]);
			o = fopen(path, "w");
			if (!o)
				return -1;
			if (i == 0)
				fprintf(o, "%u\n", alpha_ns);
			else
				fprintf(o, "%s\n", i == 1 ? gbps : "80");
			fclose(o);
		}
	}
	for (l = 1; l < 3; l++) {
		snprintf(path, sizeof(path), "%s/level%u_auto_mesh", dir, l);
		o = fopen(path, "w");
		if (!o)
			return -1;
		fprintf(o, "%u\n", auto_mesh);
		fclose(o);
	}
	snprintf(path, sizeof(path), "%s/level2_conv_pct", dir);
	o = fopen(path, "w");
	if (!o)
		return -1;
	fprintf(o, "100\n");
	fclose(o);
	snprintf(path, sizeof(path), "%s/slots", dir);
	o = fopen(path, "w");
	if (!o)
		return -1;
	fprintf(o, "%u\n", slots);
	fclose(o);
	snprintf(path, sizeof(path), "%s/algo", dir);
	o = fopen(path, "w");
	if (!o)
		return -1;
	fprintf(o, "\n");
	fclose(o);
	return 0;
}

static int fake_sysfs(const char *dir, unsigned int alpha_ns, const char *gbps,
		      unsigned int slots)
{
	return fake_sysfs_mesh(dir, alpha_ns, gbps, slots, 0);
}

TEST(explain_takes_the_link_model_from_sysfs)
{
	char dir[] = "/tmp/test_collctl.XXXXXX", args[512];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(dir));
	/* the defaults in sysfs units: the same choice as the built-in model */
	ASSERT_EQ(0, fake_sysfs(dir, 5000, "200", 8));
	snprintf(args, sizeof(args), "-S %s explain --op reduce --bytes 4M --ranks 8", dir);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "level1   NA          NHR")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "link model: /tmp/test_collctl.")) TH_LOG("%s", r.out);
	/* 10 ms latency, 1 Pbit/s: latency-bound, the tree wins (selftests/sim/test_model) */
	ASSERT_EQ(0, fake_sysfs(dir, 10000000, "1000000", 8));
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "level1   NA          tree")) TH_LOG("%s", r.out);
	/* --algo wins over the model */
	snprintf(args, sizeof(args), "-S %s explain --op reduce --bytes 4M --ranks 8 "
		 "--algo level1:ring", dir);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "level1   ring        ring")) TH_LOG("%s", r.out);
	/*
	 * slots is the executor's window: with 8 in flight NHR's 64 blocks
	 * of its first round take 8 latencies and RHD's halves win; with 64
	 * NHR ties RHD and comes first
	 */
	ASSERT_EQ(0, fake_sysfs(dir, 5000, "200", 8));
	snprintf(args, sizeof(args), "-S %s explain --op reducescatter --bytes 4K --ranks 128",
		 dir);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "level1   NA          H-D_R")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, fake_sysfs(dir, 5000, "200", 64));
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "level1   NA          NHR")) TH_LOG("%s", r.out);
	/*
	 * Rates with decimals (what collctl calibrate writes for an emulated
	 * link): 0.16 Gbit/s is 50 ns a byte, so a 4 MiB Ring AllGather on 4
	 * ranks (3 steps of 1 MiB) takes 157286.4 us plus 3 latencies of 5 us
	 */
	ASSERT_EQ(0, fake_sysfs(dir, 5000, "0.16", 8));
	snprintf(args, sizeof(args), "-S %s explain --op allgather --bytes 4M --ranks 4 "
		 "--algo level1:ring", dir);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "predicted time: 157301.400 us")) TH_LOG("%s", r.out);
	/*
	 * Mesh between servers only where levelN_auto_mesh admits it (what
	 * calibrate sets when Mesh measured faster than Ring): then it is
	 * the cheapest, one latency per phase
	 */
	snprintf(args, sizeof(args), "-S %s explain --op allreduce --bytes 4M --ranks 4", dir);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "fullmesh")) TH_LOG("%s", r.out);
	ASSERT_EQ(0, fake_sysfs_mesh(dir, 5000, "0.16", 8, 1));
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "level1   NA          fullmesh")) TH_LOG("%s", r.out);
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	EXPECT_EQ(0, system(args));
}

/* ---------------------------------------------------- doctor, fake /sys */

/*
 * Port 1 of @dev under @root/class/infiniband: a link-local GID 0, GID 1
 * @gid1 (RoCE v2), both on eth0, whose MTU is 1500.
 */
static void doctor_port(const char *root, const char *dev, const char *state, const char *gid1)
{
	static const char *const files[][2] = {
		{ "link_layer", "Ethernet\n" },
		{ "gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n" },
		{ "gid_attrs/types/0", "RoCE v2\n" },
		{ "gid_attrs/ndevs/0", "eth0\n" },
		{ "gid_attrs/types/1", "RoCE v2\n" },
		{ "gid_attrs/ndevs/1", "eth0\n" },
	};
	char rel[256];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/%s", dev, files[i][0]);
		fake_put(root, rel, files[i][1]);
	}
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/state", dev);
	fake_put(root, rel, state);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids/1", dev);
	fake_put(root, rel, gid1);
	fake_put(root, "class/net/eth0/mtu", "1500\n");
}

TEST(doctor_prints_the_address_libcoll_would_use_and_fails_without_a_port)
{
	char root[] = "/tmp/test_collctl.doctor.XXXXXX", args[512];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(root));
	unsetenv("KCOLL_DEVICE");
	unsetenv("KCOLL_ADDR");
	unsetenv("KCOLL_SECRET_FILE");
	unsetenv("KCOLL_SECRET");
	snprintf(args, sizeof(args), "%s/kcoll.conf", root);
	setenv("KCOLL_MODPROBE_CONF", args, 1);
	/* a port that is down: no device, no address, exit status 1 */
	doctor_port(root, "mlx5_0", "1: DOWN\n", "0000:0000:0000:0000:0000:ffff:0a00:0009\n");
	snprintf(args, sizeof(args), "-D /nonexistent/kcoll doctor --root %s", root);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "rdma device  problem  no active Ethernet (RoCE) port "
			       "with an address: mlx5_0 port 1: 1: DOWN, Ethernet"))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "address      problem")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "module       problem  /dev/kcoll does not exist") ||
			strstr(r.out, "/nonexistent/kcoll does not exist")) TH_LOG("%s", r.out);
	/* no listen_port parameter: no line */
	EXPECT_EQ(NULL, strstr(r.out, "listen port")) TH_LOG("%s", r.out);
	/* no node, no port: nothing to check, said so */
	EXPECT_NE(NULL, strstr(r.out, "permissions  problem  /nonexistent/kcoll: No such file"))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "mtu          problem  no RoCE port to check"))
		TH_LOG("%s", r.out);

	/* an active one after it: the device, port and address libcoll takes */
	doctor_port(root, "rxe0", "4: ACTIVE\n", "0000:0000:0000:0000:0000:ffff:0a00:020f\n");
	doctor_port(root, "rxe1", "4: ACTIVE\n", "fd00:0000:0000:0000:0000:0000:0000:0010\n");
	fake_put(root, "module/kcoll/parameters/listen_port", "4791\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "rdma device  ok       rxe0 port 1: 4: ACTIVE, Ethernet"))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "address      ok       10.0.2.15 ")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "listen port  ok       4791")) TH_LOG("%s", r.out);
	/* the module and its node are the checks that fail (-D names no device) */
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "module       problem")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "9 checks, 2 problems")) TH_LOG("%s", r.out);

	/* the named device, in JSON; the secret is never printed */
	setenv("KCOLL_SECRET", "doctor-must-not-print-this", 1);
	snprintf(args, sizeof(args), "-D /nonexistent/kcoll -j doctor --root %s "
		 "--rdma-device rxe1", root);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "\"address\":\"fd00::10\"")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "\"rdma_device\":\"rxe1\"")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "\"listen_port\":4791")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "\"problems\":2")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "KCOLL_SECRET (from the environment")) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "doctor-must-not-print-this")) TH_LOG("%s", r.out);
	unsetenv("KCOLL_SECRET");

	/* KCOLL_DEVICE naming a device whose port is down */
	setenv("KCOLL_DEVICE", "mlx5_0", 1);
	snprintf(args, sizeof(args), "-D /nonexistent/kcoll doctor --root %s", root);
	ASSERT_EQ(0, run(&r, args));
	unsetenv("KCOLL_DEVICE");
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "rdma device  problem")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "address      problem  RDMA device mlx5_0 (KCOLL_DEVICE)"))
		TH_LOG("%s", r.out);

	ASSERT_EQ(0, run(&r, "doctor --nosuch"));
	EXPECT_EQ(2, r.status);
	unsetenv("KCOLL_MODPROBE_CONF");
	snprintf(args, sizeof(args), "rm -rf %s", root);
	EXPECT_EQ(0, system(args));
}

/*
 * A node whose one bad check is the named one: rxe0 up on eth0, a file
 * for the kcoll node (the module check fails on it: no kcoll device; the
 * other checks do not depend on that), and modprobe.d in @root.
 */
static void doctor_node(const char *root, char *args, size_t len, const char *json)
{
	char path[300];

	doctor_port(root, "rxe0", "4: ACTIVE\n", "0000:0000:0000:0000:0000:ffff:0a00:020f\n");
	fake_put(root, "kcoll", "");
	snprintf(path, sizeof(path), "%s/kcoll", root);
	chmod(path, 0660);
	snprintf(path, sizeof(path), "%s/kcoll.conf", root);
	setenv("KCOLL_MODPROBE_CONF", path, 1);
	snprintf(args, len, "-D %s/kcoll %s doctor --root %s", root, json, root);
}

TEST(doctor_checks_the_mtu_of_the_ports_net_device)
{
	char root[] = "/tmp/test_collctl.mtu.XXXXXX", args[512];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(root));
	unsetenv("KCOLL_DEVICE");
	doctor_node(root, args, sizeof(args), "");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "mtu          ok       eth0 MTU 1500: RoCE path MTU 1024 "
			       "of rxe0 port 1 (use the same MTU on every node)\n"))
		TH_LOG("%s", r.out);
	fake_put(root, "class/net/eth0/mtu", "9000\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "mtu          ok       eth0 MTU 9000: RoCE path MTU 4096 "))
		TH_LOG("%s", r.out);
	/* 1119 less 96 bytes of headers is below 1024: 512, a problem */
	fake_put(root, "class/net/eth0/mtu", "1119\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "mtu          problem  eth0 MTU 1119: RoCE path MTU 512 of "
			       "rxe0 port 1\n")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "hint: RoCE's path MTU is the largest IB MTU (256..4096) "
			       "that fits the Ethernet MTU less 96 bytes of headers; below 1024"))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "'ip link set eth0 mtu 1500' (or more), and use the same "
			       "MTU on every node")) TH_LOG("%s", r.out);
	fake_put(root, "class/net/eth0/mtu", "1120\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "mtu          ok       eth0 MTU 1120: RoCE path MTU 1024 "))
		TH_LOG("%s", r.out);
	/* no net device to read: a problem naming the file */
	snprintf(args, sizeof(args), "rm %s/class/net/eth0/mtu", root);
	ASSERT_EQ(0, system(args));
	snprintf(args, sizeof(args), "-D %s/kcoll -j doctor --root %s", root, root);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "{\"check\":\"mtu\",\"status\":\"problem\",\"detail\":"
			       "\"eth0 (of rxe0 port 1): no MTU in ")) TH_LOG("%s", r.out);
	unsetenv("KCOLL_MODPROBE_CONF");
	snprintf(args, sizeof(args), "rm -rf %s", root);
	EXPECT_EQ(0, system(args));
}

TEST(doctor_says_whether_this_user_may_open_the_node)
{
	char root[] = "/tmp/test_collctl.perm.XXXXXX", args[600], sudo[512];
	const char *bin = getenv("COLLCTL_BIN");
	struct group *g = getgrgid(0);
	char want[256];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(root));
	doctor_node(root, args, sizeof(args), "");
	ASSERT_EQ(0, run(&r, args));
	snprintf(want, sizeof(want), "permissions  ok       0660 %s:%s, this user may open it\n",
		 getpwuid(geteuid()) ? getpwuid(geteuid())->pw_name : "?", g ? g->gr_name : "0");
	if (geteuid())	/* the node belongs to this user then */
		snprintf(want, sizeof(want), "permissions  ok       0660 ");
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	if (geteuid()) {
		snprintf(args, sizeof(args), "rm -rf %s", root);
		EXPECT_EQ(0, system(args));
		SKIP(return, "needs root to become user 65534");
	}
	/* user 65534, in no group: not in the node's group, told to join it */
	ASSERT_EQ(0, chmod(root, 0755));
	snprintf(sudo, sizeof(sudo), "setpriv --reuid=65534 --regid=65534 --clear-groups %s",
		 bin ? bin : "build/bin/collctl");
	setenv("COLLCTL_BIN", sudo, 1);
	ASSERT_EQ(0, run(&r, args));
	if (bin)
		setenv("COLLCTL_BIN", bin, 1);
	else
		unsetenv("COLLCTL_BIN");
	EXPECT_EQ(1, r.status);
	snprintf(want, sizeof(want), "permissions  problem  0660 root:%s, this user may not open "
		 "it\n", g ? g->gr_name : "0");
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "hint: cannot open %s/kcoll: Permission denied (mode 0660, "
		 "group %s; this user is not in group %s): ask the administrator to add you to "
		 "group %s (usermod -aG %s nobody, then log in again)", root, g ? g->gr_name : "0",
		 g ? g->gr_name : "0", g ? g->gr_name : "0", g ? g->gr_name : "0");
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	unsetenv("KCOLL_MODPROBE_CONF");
	snprintf(args, sizeof(args), "rm -rf %s", root);
	EXPECT_EQ(0, system(args));
}

TEST(doctor_compares_the_persisted_settings_with_the_modules)
{
	char root[] = "/tmp/test_collctl.pers.XXXXXX", args[512];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(root));
	doctor_node(root, args, sizeof(args), "");
	/* no file */
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "persisted    ok       none (")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "kcoll.conf does not exist)\n")) TH_LOG("%s", r.out);
	/* persisted, the module not loaded: modprobe will apply them */
	fake_put(root, "kcoll.conf", "# a comment\noptions kcoll timeout_ms=12345 "
		 "level0_gbps=12.5\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "kcoll.conf: timeout_ms=12345 level0_gbps=12.5 (the module "
			       "is not loaded; modprobe applies them)\n")) TH_LOG("%s", r.out);
	/* loaded with other values: a problem naming both */
	fake_put(root, "module/kcoll/parameters/timeout_ms", "30000\n");
	fake_put(root, "module/kcoll/parameters/level0_gbps", "12.500\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "persisted    problem  ")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "kcoll.conf: timeout_ms=12345 level0_gbps=12.5; timeout_ms "
			       "is 30000 now, 12345 is persisted\n")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "hint: the module was loaded without modprobe, or changed "
			       "since: reload it with modprobe")) TH_LOG("%s", r.out);
	/* the same values (12.500 is 12.5): ok */
	fake_put(root, "module/kcoll/parameters/timeout_ms", "12345\n");
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "level0_gbps=12.5, as the module has them\n"))
		TH_LOG("%s", r.out);
	/* a name the module does not have */
	fake_put(root, "kcoll.conf", "options kcoll timeout_ms=12345 nosuch=1\n");
	snprintf(args, sizeof(args), "-D %s/kcoll -j doctor --root %s", root, root);
	ASSERT_EQ(0, run(&r, args));
	EXPECT_NE(NULL, strstr(r.out, "{\"check\":\"persisted\",\"status\":\"problem\""))
		TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "the module has no parameter nosuch\",\"hint\":\"the kernel "
			       "ignores an unknown parameter at load: remove it with 'collctl "
			       "config --unpersist nosuch'")) TH_LOG("%s", r.out);
	unsetenv("KCOLL_MODPROBE_CONF");
	snprintf(args, sizeof(args), "rm -rf %s", root);
	EXPECT_EQ(0, system(args));
}

/* ------------------------------------------ config --persist, no module */

/* @path's text (at most 4 KiB) in @buf; "" if unreadable. */
static const char *file_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* collctl -S @dir/@args exits @status, saying @text. */
static void config_says(struct __test_metadata *_metadata, const char *dir, const char *args,
			int status, const char *text)
{
	char cmd[512];
	struct run r;

	snprintf(cmd, sizeof(cmd), "-S %s/%s", dir, args);
	ASSERT_EQ(0, run(&r, cmd));
	EXPECT_EQ(status, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, text)) TH_LOG("%s", r.out);
}

#define PERSIST_HEADER "# Managed by collctl config --persist (man 8 collctl): it rewrites " \
	"the first \"options kcoll\" line; other lines are kept.\n"
#define ADMIN_LINES "# the admin's\noptions ib_core x=1\n"

TEST(config_persist_owns_one_line_keeps_the_rest_and_refuses_bad_values)
{
	char dir[] = "/tmp/test_collctl.XXXXXX", conf[64], args[512], text[4096], want[4096];
	struct run r;

	ASSERT_NE(NULL, mkdtemp(dir));
	fake_put(dir, "sys/slots", "8\n");
	fake_put(dir, "sys/algo", "\n");
	fake_put(dir, "kcoll.conf", ADMIN_LINES);
	snprintf(conf, sizeof(conf), "%s/kcoll.conf", dir);
	ASSERT_EQ(0, setenv("KCOLL_MODPROBE_CONF", conf, 1));

	/* Set now and recorded; a value with blanks quoted as modprobe reads it. */
	config_says(_metadata, dir, "sys config --persist slots 16", 0, "slots = 16\n");
	config_says(_metadata, dir, "sys config --persist algo 'level0:ring; level1:NHR'", 0,
		    "algo = level0:ring; level1:NHR\n");
	snprintf(args, sizeof(args), "%s/sys/slots", dir);
	EXPECT_STREQ("16", file_text(args, text, sizeof(text)));
	snprintf(want, sizeof(want), PERSIST_HEADER ADMIN_LINES
		 "options kcoll slots=16 algo=\"level0:ring; level1:NHR\"\n");
	EXPECT_STREQ(want, file_text(conf, text, sizeof(text)));
	/* Again: replaced in place, not added. */
	config_says(_metadata, dir, "sys config --persist slots 32", 0, "slots = 32\n");
	snprintf(want, sizeof(want), PERSIST_HEADER ADMIN_LINES
		 "options kcoll slots=32 algo=\"level0:ring; level1:NHR\"\n");
	EXPECT_STREQ(want, file_text(conf, text, sizeof(text)));

	/* Refused, with the reason, and neither sysfs nor the file changes. */
	config_says(_metadata, dir, "sys config --persist algo level1:bogus", 1,
		    "config algo: HCCL_ALGO \"level1:bogus\": unknown algorithm \"bogus\"");
	config_says(_metadata, dir, "sys config --persist bogus 1", 2, "unknown tunable 'bogus'");
	config_says(_metadata, dir, "sys config --persist slots '4\"'", 1,
		    ": config --persist slots: the value '4\"' has a double quote or a newline, "
		    "which a modprobe.d line cannot hold");
	config_says(_metadata, dir, "none config --persist slots 4", 1,
		    "(is the kcoll module loaded?)");
	config_says(_metadata, dir, "sys config --persist slots", 2,
		    "usage: config --persist NAME VALUE");
	EXPECT_STREQ(want, file_text(conf, text, sizeof(text)));
	snprintf(args, sizeof(args), "%s/sys/slots", dir);
	EXPECT_STREQ("32", file_text(args, text, sizeof(text)));

	/* Shown as text and JSON. */
	ASSERT_EQ(0, run(&r, "config --show-persistent"));
	EXPECT_EQ(0, r.status);
	snprintf(want, sizeof(want), "%s\n%-20s %s\n%-20s %s\n", conf, "slots", "32", "algo",
		 "level0:ring; level1:NHR");
	EXPECT_STREQ(want, r.out);
	ASSERT_EQ(0, run(&r, "-j config --show-persistent"));
	snprintf(want, sizeof(want), "{\"path\":\"%s\",\"settings\":{\"slots\":\"32\","
		 "\"algo\":\"level0:ring; level1:NHR\"}}\n", conf);
	EXPECT_STREQ(want, r.out);

	/* Removed one by one; the line goes with the last, the rest stays. */
	ASSERT_EQ(0, run(&r, "config --unpersist slots"));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "config --unpersist slots"));
	EXPECT_EQ(1, r.status);
	/* after the program's name, collctl or collctl-san */
	snprintf(want, sizeof(want), ": config --unpersist slots: %s holds no slots\n", conf);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	ASSERT_EQ(0, run(&r, "config --unpersist algo"));
	EXPECT_STREQ(PERSIST_HEADER ADMIN_LINES, file_text(conf, text, sizeof(text)));
	unsetenv("KCOLL_MODPROBE_CONF");
	snprintf(args, sizeof(args), "rm -r %s", dir);
	EXPECT_EQ(0, system(args));
}

TEST_HARNESS_MAIN
