// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll argument checking, needing no module: bad arguments give the
 * right negative errno and a message naming the argument before any
 * ioctl (a communicator around fd -1 shows that good arguments reach the
 * ioctl: EBADF); a missing device says to load the module; coll_strerror
 * and the name parsers.
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "coll_internal.h"

FIXTURE(fake) {
	coll_comm_t *c;
	float buf[64];
};

FIXTURE_SETUP(fake)
{
	self->c = coll_comm_wrap(-1, 1, 4);
	ASSERT_NE(NULL, self->c);
}

FIXTURE_TEARDOWN(fake)
{
	coll_comm_destroy(self->c);
}

static int has(const char *s)
{
	return strstr(coll_last_error(), s) != NULL;
}

TEST_F(fake, valid_arguments_reach_the_ioctl)
{
	coll_request_t *r;
	float *b = self->buf;

	EXPECT_EQ(-EBADF, coll_allreduce(self->c, b, b + 8, 8, COLL_FLOAT, COLL_SUM, &r));
	EXPECT_EQ(NULL, r);
	EXPECT_EQ(-EBADF, coll_reducescatter(self->c, b, b + 32, 2, COLL_FLOAT, COLL_MAX, &r));
	EXPECT_EQ(-EBADF, coll_allgather(self->c, b, b + 8, 2, COLL_FLOAT, &r));
	EXPECT_EQ(-EBADF, coll_broadcast(self->c, NULL, b, 8, COLL_FLOAT, 0, &r));
	EXPECT_EQ(-EBADF, coll_reduce(self->c, b, NULL, 8, COLL_FLOAT, COLL_SUM, 3, &r));
	EXPECT_EQ(-EBADF, coll_scatter(self->c, NULL, b, 2, COLL_FLOAT, 0, &r));
	EXPECT_EQ(-EBADF, coll_gather(self->c, b, NULL, 2, COLL_FLOAT, 0, &r));
	EXPECT_EQ(-EBADF, coll_alltoall(self->c, b, b + 8, 2, COLL_FLOAT, &r));
	EXPECT_EQ(-EBADF, coll_barrier(self->c, &r));
	EXPECT_EQ(-EBADF, coll_barrier_sync(self->c));
	EXPECT_TRUE(has("submission failed"));
}

TEST_F(fake, bad_arguments_fail_before_the_ioctl)
{
	coll_request_t *r;
	float *b = self->buf;
	uint64_t cnt[4] = { 1, 1, 1, 1 }, dsp[4] = { 0, 1, 2, 3 };

	EXPECT_EQ(-EINVAL, coll_allreduce(NULL, b, b, 8, COLL_FLOAT, COLL_SUM, &r));
	EXPECT_TRUE(has("communicator is NULL"));
	EXPECT_EQ(-EINVAL, coll_allreduce(self->c, b, b, 8, COLL_FLOAT, COLL_SUM, NULL));
	EXPECT_TRUE(has("request pointer is NULL"));
	EXPECT_EQ(-EINVAL, coll_allreduce(self->c, b, b, 8, (coll_dtype_t)12, COLL_SUM, &r));
	EXPECT_TRUE(has("data type 12"));
	EXPECT_EQ(-EINVAL, coll_allreduce(self->c, b, b, 8, COLL_FLOAT, (coll_redop_t)5, &r));
	EXPECT_TRUE(has("reduction 5"));
	EXPECT_EQ(-EINVAL, coll_broadcast(self->c, b, b, 8, COLL_FLOAT, 4, &r));
	EXPECT_TRUE(has("root 4 out of range for 4 ranks"));
	EXPECT_EQ(-EINVAL, coll_reduce(self->c, b, b, 8, COLL_FLOAT, COLL_SUM, 9, &r));
	EXPECT_EQ(-EINVAL, coll_allreduce(self->c, NULL, b, 8, COLL_FLOAT, COLL_SUM, &r));
	EXPECT_TRUE(has("send buffer is NULL"));
	EXPECT_EQ(-EINVAL, coll_allgather(self->c, b, NULL, 8, COLL_FLOAT, &r));
	EXPECT_TRUE(has("receive buffer is NULL"));
	/* rank 1 is the root here: it needs both buffers */
	EXPECT_EQ(-EINVAL, coll_gather(self->c, b, NULL, 2, COLL_FLOAT, 1, &r));
	EXPECT_EQ(-EINVAL, coll_scatter(self->c, NULL, b, 2, COLL_FLOAT, 1, &r));
	EXPECT_EQ(-EOVERFLOW, coll_allgather(self->c, b, b, SIZE_MAX / 2, COLL_FLOAT, &r));
	EXPECT_EQ(-EOVERFLOW, coll_allreduce(self->c, b, b, SIZE_MAX / 2, COLL_DOUBLE, COLL_SUM, &r));
	EXPECT_EQ(-EINVAL, coll_alltoallv(self->c, b, cnt, NULL, b, cnt, dsp, COLL_FLOAT, &r));
	EXPECT_TRUE(has("array 1 is NULL"));
	EXPECT_EQ(-EBADF, coll_alltoallv(self->c, b, cnt, dsp, b, cnt, dsp, COLL_FLOAT, &r));
}

TEST_F(fake, completion_and_memory_calls_check_their_arguments)
{
	coll_mr_t *mr = (void *)1;
	coll_request_t *none = NULL;
	int done;

	EXPECT_EQ(-EINVAL, coll_wait(NULL, NULL));
	EXPECT_EQ(-EINVAL, coll_wait(&none, NULL));
	EXPECT_EQ(-EINVAL, coll_test(&none, &done, NULL));
	EXPECT_EQ(0, coll_wait_all(&none, 1, NULL));
	EXPECT_EQ(-EINVAL, coll_mem_register(self->c, NULL, 16, &mr));
	EXPECT_EQ(NULL, mr);
	EXPECT_EQ(-EINVAL, coll_mem_register(self->c, self->buf, 0, &mr));
	EXPECT_EQ(-EBADF, coll_mem_register(self->c, self->buf, 16, &mr));
	EXPECT_EQ(-EINVAL, coll_mem_deregister(self->c, NULL));
	EXPECT_EQ(-EBADF, coll_comm_abort(self->c));
	EXPECT_EQ(-EINVAL, coll_comm_abort(NULL));
	EXPECT_EQ(1, coll_comm_rank(self->c));
	EXPECT_EQ(4, coll_comm_size(self->c));
	EXPECT_EQ(-1, coll_comm_event_fd(self->c));
}

TEST(comm_init_checks_ranks_before_opening_the_device)
{
	struct coll_rank_desc r[2] = {
		{ .addr = "10.0.0.1", .port = 1 }, { .addr = "10.0.0.2", .port = 1 },
	};
	coll_comm_t *c = (void *)1;

	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(r, 2, 2, NULL, &c));
	EXPECT_EQ(NULL, c);
	EXPECT_TRUE(has("rank 2 out of range for 2 ranks"));
	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(NULL, 2, 0, NULL, &c));
	strcpy(r[1].addr, "10.0.0");
	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(r, 2, 0, NULL, &c));
	EXPECT_TRUE(has("rank 1: address '10.0.0'"));
	strcpy(r[1].addr, "::1");
	r[1].port = 70000;
	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(r, 2, 0, NULL, &c));
	EXPECT_TRUE(has("rank 1: port 70000"));
}

TEST(missing_device_says_to_load_the_module)
{
	struct coll_rank_desc r[1] = { { .addr = "10.0.0.1", .port = 1 } };
	struct coll_comm_opts o = { .size = sizeof(o), .device = "/nonexistent/kcoll" };
	struct coll_module_info mi;
	coll_comm_t *c = (void *)1;

	EXPECT_EQ(-ENODEV, coll_comm_init_ranks(r, 1, 0, &o, &c));
	EXPECT_EQ(NULL, c);
	EXPECT_TRUE(has("/nonexistent/kcoll") && (has("modprobe kcoll") || has("udev")));
	EXPECT_EQ(-ENODEV, coll_module_info("/nonexistent/kcoll", &mi));
	EXPECT_NE(NULL, strstr(coll_strerror(-ENODEV), "modprobe kcoll"));
}

TEST(non_kcoll_device_is_reported_as_such)
{
	struct coll_module_info mi;

	EXPECT_EQ(-ENODEV, coll_module_info("/dev/null", &mi));
	EXPECT_TRUE(has("not a kcoll device"));
}

TEST(too_long_algo_override_from_environment_is_rejected)
{
	struct coll_rank_desc r[1] = { { .addr = "10.0.0.1", .port = 1 } };
	char *s = malloc(KCOLL_ALGO_STR_MAX + 1);
	coll_comm_t *c;

	ASSERT_NE(NULL, s);
	memset(s, 'x', KCOLL_ALGO_STR_MAX);
	s[KCOLL_ALGO_STR_MAX] = '\0';
	setenv("KCOLL_ALGO", s, 1);
	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(r, 1, 0, NULL, &c));
	EXPECT_TRUE(has("KCOLL_ALGO is longer"));
	unsetenv("KCOLL_ALGO");
	setenv("HCCL_ALGO", s, 1);
	EXPECT_EQ(-EINVAL, coll_comm_init_ranks(r, 1, 0, NULL, &c));
	EXPECT_TRUE(has("HCCL_ALGO is longer"));
	unsetenv("HCCL_ALGO");
	free(s);
}

TEST(strerror_explains_what_to_do)
{
	EXPECT_NE(NULL, strstr(coll_strerror(-EPROTONOSUPPORT), "ABI"));
	EXPECT_NE(NULL, strstr(coll_strerror(-EACCES), "/dev/kcoll"));
	EXPECT_NE(NULL, strstr(coll_strerror(-EACCES), "CAP_NET_BIND_SERVICE"));
	EXPECT_NE(NULL, strstr(coll_strerror(-EADDRNOTAVAIL), "not an address of this node"));
	EXPECT_NE(NULL, strstr(coll_strerror(-ENOMEM), "MEMLOCK"));
	EXPECT_STREQ("success", coll_strerror(0));
	EXPECT_NE(NULL, coll_strerror(-4242));
}

TEST(names_parse_with_nccl_aliases)
{
	coll_op_t op;
	coll_dtype_t t;
	coll_redop_t o;

	ASSERT_EQ(0, coll_op_parse("all_reduce_perf", &op));
	EXPECT_EQ(COLL_OP_ALLREDUCE, op);
	ASSERT_EQ(0, coll_op_parse("ReduceScatter", &op));
	EXPECT_EQ(COLL_OP_REDUCESCATTER, op);
	ASSERT_EQ(0, coll_op_parse("alltoall_perf", &op));
	EXPECT_EQ(COLL_OP_ALLTOALL, op);
	EXPECT_EQ(-EINVAL, coll_op_parse("sendrecv", &op));
	ASSERT_EQ(0, coll_dtype_parse("bf16", &t));
	EXPECT_EQ(COLL_BFLOAT16, t);
	ASSERT_EQ(0, coll_dtype_parse("half", &t));
	EXPECT_EQ(COLL_FLOAT16, t);
	EXPECT_EQ(-EINVAL, coll_dtype_parse("float128", &t));
	ASSERT_EQ(0, coll_redop_parse("avg", &o));
	EXPECT_EQ(COLL_AVG, o);
	EXPECT_EQ(4, coll_dtype_size(COLL_FLOAT));
	EXPECT_EQ(0, coll_dtype_size((coll_dtype_t)99));
}

TEST_HARNESS_MAIN
