// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll unit tests: coll_comm_shrink()'s arguments, which ranks it
 * keeps, and the id that makes survivors meet only when they agree.  The
 * shrink itself runs in the virtual cluster (selftests/kcoll/kcoll_shrink.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "coll_internal.h"

TEST(shrink_bad_arguments_are_einval)
{
	coll_comm_t *c = coll_comm_wrap(-1, 0, 2), *nc = (coll_comm_t *)1;

	ASSERT_NE(NULL, c);
	EXPECT_EQ(-EINVAL, coll_comm_shrink(c, NULL));
	EXPECT_EQ(-EINVAL, coll_comm_shrink(NULL, &nc));
	EXPECT_EQ(NULL, nc);
	/* A communicator object without a module communicator behind it. */
	EXPECT_EQ(-EINVAL, coll_comm_shrink(c, &nc));
	EXPECT_NE(NULL, strstr(coll_last_error(), "no communicator"));
	coll_comm_destroy(c);
}

TEST(survivors_are_the_alive_and_the_failed_in_order)
{
	const uint8_t fates[] = { KCOLL_FATE_ALIVE, KCOLL_FATE_FAILED, KCOLL_FATE_LOST,
				  KCOLL_FATE_NAMED, KCOLL_FATE_LEFT, KCOLL_FATE_ALIVE };
	uint32_t keep[6] = { 0 };

	ASSERT_EQ(3, coll_shrink_survivors(fates, 6, keep));
	EXPECT_EQ(0, keep[0]);
	EXPECT_EQ(1, keep[1]);
	EXPECT_EQ(5, keep[2]);
	EXPECT_EQ(0, coll_shrink_survivors(fates + 2, 3, keep));
}

/* A wrapped communicator of @n ranks at 10.0.0.i, port 0, id @seed. */
static coll_comm_t *fake_comm(uint32_t n, uint8_t seed)
{
	coll_comm_t *c = coll_comm_wrap(-1, 0, n);
	uint32_t i;

	if (!c)
		return NULL;
	c->ranks = calloc(n, sizeof(*c->ranks));
	if (!c->ranks)
		return c;
	for (i = 0; i < n; i++)
		snprintf(c->ranks[i].addr, sizeof(c->ranks[i].addr), "10.0.0.%u", i + 1);
	memset(c->uid, seed, sizeof(c->uid));
	return c;
}

TEST(the_id_follows_the_parent_the_survivors_and_the_call)
{
	const uint32_t abc[] = { 0, 1, 3 }, abd[] = { 0, 1, 2 };
	uint8_t u1[16], u2[16], u3[16], zero[16] = { 0 };
	coll_comm_t *c = fake_comm(4, 7), *d = fake_comm(4, 8), *t = fake_comm(4, 0);

	ASSERT_TRUE(c && d && t && c->ranks && d->ranks && t->ranks);
	coll_child_uid(c, "kcoll shrink", c->shrinks, abc, 3, u1);
	coll_child_uid(c, "kcoll shrink", c->shrinks, abc, 3, u2);
	EXPECT_EQ(0, memcmp(u1, u2, 16)) TH_LOG("the same survivors meet");
	EXPECT_NE(0, memcmp(u1, zero, 16));
	coll_child_uid(c, "kcoll shrink", c->shrinks, abd, 3, u2);
	EXPECT_NE(0, memcmp(u1, u2, 16)) TH_LOG("other survivors, another communicator");
	coll_child_uid(c, "kcoll shrink", c->shrinks, abc, 2, u2);
	EXPECT_NE(0, memcmp(u1, u2, 16));
	coll_child_uid(d, "kcoll shrink", d->shrinks, abc, 3, u2);
	EXPECT_NE(0, memcmp(u1, u2, 16)) TH_LOG("another parent, another communicator");
	c->shrinks++;
	coll_child_uid(c, "kcoll shrink", c->shrinks, abc, 3, u2);
	EXPECT_NE(0, memcmp(u1, u2, 16)) TH_LOG("a second call is a new communicator");
	/* A rank table's communicator (no id): its addresses and ports name it. */
	coll_child_uid(t, "kcoll shrink", t->shrinks, abc, 3, u1);
	t->ranks[2].port = 16668;
	coll_child_uid(t, "kcoll shrink", t->shrinks, abc, 3, u3);
	EXPECT_NE(0, memcmp(u1, u3, 16));
	coll_comm_destroy(c);
	coll_comm_destroy(d);
	coll_comm_destroy(t);
}

TEST_HARNESS_MAIN
