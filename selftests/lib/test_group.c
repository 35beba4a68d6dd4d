// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll unit tests: coll_comm_create_group()'s arguments, which leave
 * nothing changed when wrong, the count that makes a repeated group a
 * new communicator, and its id (apart from a shrink's of the same
 * ranks).  The groups themselves run in the virtual cluster
 * (selftests/kcoll/kcoll_group.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "coll_internal.h"

/*
 * Rank @rank of @n at 10.0.0.i, id @seed, on an fd that is not the
 * module's (creation fails after the checks: the host has no /dev/kcoll,
 * and the device is named /nonexistent).
 */
static coll_comm_t *fake_comm(uint32_t rank, uint32_t n, uint8_t seed)
{
	coll_comm_t *c = coll_comm_wrap(open("/dev/null", O_RDONLY | O_CLOEXEC), rank, n);
	uint32_t i;

	if (!c)
		return NULL;
	c->ranks = calloc(n, sizeof(*c->ranks));
	c->hosts = calloc(n, sizeof(*c->hosts));
	c->pods = calloc(n, sizeof(*c->pods));
	c->opts.device = strdup("/nonexistent/kcoll");
	if (!c->ranks || !c->hosts || !c->pods || !c->opts.device) {
		coll_comm_destroy(c);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		snprintf(c->ranks[i].addr, sizeof(c->ranks[i].addr), "10.0.0.%u", i + 1);
		c->hosts[i] = i;
	}
	memset(c->uid, seed, sizeof(c->uid));
	return c;
}

TEST(bad_member_lists_are_einval_and_count_nothing)
{
	const uint32_t dup[] = { 1, 2, 1 }, far[] = { 1, 4 }, other[] = { 0, 2 };
	const uint32_t many[] = { 0, 1, 2, 3, 1 };
	coll_comm_t *c = fake_comm(1, 4, 3), *nc = (coll_comm_t *)1;

	ASSERT_NE(NULL, c);
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, dup, 3, NULL, NULL));
	EXPECT_EQ(-EINVAL, coll_comm_create_group(NULL, dup, 2, NULL, &nc));
	EXPECT_EQ(NULL, nc);
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, NULL, 2, NULL, &nc));
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, dup, 0, NULL, &nc));
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, many, 5, NULL, &nc));
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, dup, 3, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "members[2] = 1 is listed twice"))
		TH_LOG("%s", coll_last_error());
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, far, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "members[1] = 4 is not a rank"))
		TH_LOG("%s", coll_last_error());
	EXPECT_EQ(-EINVAL, coll_comm_create_group(c, other, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "rank 1 is not in the list"))
		TH_LOG("%s", coll_last_error());
	EXPECT_EQ(NULL, nc);
	EXPECT_EQ(0, c->ngroups);
	coll_comm_destroy(c);
}

TEST(each_list_counts_its_own_groups)
{
	const uint32_t a[] = { 0, 1 }, b[] = { 1, 2 }, ba[] = { 1, 0 };
	coll_comm_t *c = fake_comm(1, 4, 3), *nc = NULL;

	ASSERT_NE(NULL, c);
	/* Each call fails at the device, after it was counted (as every member's). */
	EXPECT_GT(0, coll_comm_create_group(c, a, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "(group 0 of this list)"))
		TH_LOG("%s", coll_last_error());
	EXPECT_GT(0, coll_comm_create_group(c, b, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "(group 0 of this list)"));
	EXPECT_GT(0, coll_comm_create_group(c, a, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "(group 1 of this list)"))
		TH_LOG("%s", coll_last_error());
	/* Another order is another list: other new ranks. */
	EXPECT_GT(0, coll_comm_create_group(c, ba, 2, NULL, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "(group 0 of this list)"));
	EXPECT_EQ(NULL, nc);
	EXPECT_EQ(3, c->ngroups);
	coll_comm_destroy(c);
}

TEST(the_id_follows_the_tag_the_count_and_the_list)
{
	const uint32_t ab[] = { 0, 1 }, ba[] = { 1, 0 };
	uint8_t g0[16], g0b[16], g1[16], s0[16], r0[16];
	coll_comm_t *c = fake_comm(0, 4, 9);

	ASSERT_NE(NULL, c);
	coll_child_uid(c, "kcoll group", 0, ab, 2, g0);
	coll_child_uid(c, "kcoll group", 0, ab, 2, g0b);
	EXPECT_EQ(0, memcmp(g0, g0b, 16)) TH_LOG("members that agree meet");
	coll_child_uid(c, "kcoll group", 1, ab, 2, g1);
	EXPECT_NE(0, memcmp(g0, g1, 16)) TH_LOG("the second group of a list is another");
	coll_child_uid(c, "kcoll shrink", 0, ab, 2, s0);
	EXPECT_NE(0, memcmp(g0, s0, 16)) TH_LOG("a shrink to the same ranks is another");
	coll_child_uid(c, "kcoll group", 0, ba, 2, r0);
	EXPECT_NE(0, memcmp(g0, r0, 16)) TH_LOG("another order is another communicator");
	coll_comm_destroy(c);
}

TEST_HARNESS_MAIN
