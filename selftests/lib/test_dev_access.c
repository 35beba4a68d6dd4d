// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll: what it says when the device refuses this user (EACCES opening
 * /dev/kcoll, lib/coll_comm.c).  The node's mode and group come from the
 * udev rule, so the message names them and the fix that fits: join the
 * group when the group may use the node, the rule when only its owner may,
 * and never "not in group" for a member.  A file stands in for the node
 * (libcoll stats whatever path it is given); the tests become user 65534,
 * so they need root and skip without it.
 */
/* The 6.1 harness defines FIXTURE_SETUP/TEARDOWN functions non-static. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "coll.h"

#define USER 65534
#define RULE "/etc/udev/rules.d/60-kcoll.rules"

/*
 * The stand-in for the node: a file in a directory of USER's own, so that
 * the teardown, which runs as USER, can remove both.
 */
FIXTURE(node) {
	char dir[64], path[80];
};

FIXTURE_SETUP(node)
{
	int fd;

	if (geteuid())
		return;		/* NEED_ROOT() skips the test */
	snprintf(self->dir, sizeof(self->dir), "/tmp/coll-node-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chown(self->dir, USER, USER));
	snprintf(self->path, sizeof(self->path), "%s/kcoll", self->dir);
	fd = open(self->path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(node)
{
	unlink(self->path);
	rmdir(self->dir);
}

/* The 6.1 harness runs the test after a SKIP() in the setup: skip here. */
#define NEED_ROOT()							\
	do {								\
		if (geteuid())						\
			SKIP(return, "needs root to become user %d", USER); \
	} while (0)

/*
 * Give the node @mode, owner @owner and group @gid, then become USER, with
 * @gid as its one supplementary group when @in_group, else none.  0 or -1.
 */
static int node_then_user(const char *path, mode_t mode, uid_t owner, gid_t gid, bool in_group)
{
	return chown(path, owner, gid) || chmod(path, mode) ||
	       setgroups(in_group ? 1 : 0, &gid) || setresgid(USER, USER, USER) ||
	       setresuid(USER, USER, USER) ? -1 : 0;
}

/* libcoll's message for @path; "" if it did not fail with EACCES. */
static const char *refusal(const char *path)
{
	struct coll_module_info info;

	return coll_module_info(path, &info) == -EACCES ? coll_last_error() : "";
}

static const char *name_of_group(gid_t gid)
{
	struct group *g = getgrgid(gid);

	return g ? g->gr_name : "?";
}

TEST_F(node, only_its_owner_names_the_rule_not_a_group)
{
	char want[512];

	NEED_ROOT();
	ASSERT_EQ(0, node_then_user(self->path, 0600, 0, 0, false));
	snprintf(want, sizeof(want), "cannot open %s: Permission denied (mode 0600, group %s; "
		 "only its owner may open it, as when no udev rule applied): ask the "
		 "administrator to install kcoll's 60-kcoll.rules and create group kcoll, or "
		 "to set the mode with a rule in " RULE, self->path, name_of_group(0));
	EXPECT_STREQ(want, refusal(self->path));
}

TEST_F(node, outside_the_group_says_join_it_naming_group_and_user)
{
	struct passwd *pw = getpwuid(USER);
	const char *g = name_of_group(1);
	char want[512];

	NEED_ROOT();
	snprintf(want, sizeof(want), "cannot open %s: Permission denied (mode 0660, group %s; "
		 "this user is not in group %s): ask the administrator to add you to group %s "
		 "(usermod -aG %s %s, then log in again), or to change the mode with a rule in "
		 RULE, self->path, g, g, g, g, pw ? pw->pw_name : "USER");
	ASSERT_EQ(0, node_then_user(self->path, 0660, 0, 1, false));
	EXPECT_STREQ(want, refusal(self->path));
}

/* Refused although in the group (here by the owner's bits): no "not in group". */
TEST_F(node, a_member_refused_is_not_told_to_join)
{
	const char *g = name_of_group(1);
	char want[512];

	NEED_ROOT();
	snprintf(want, sizeof(want), "cannot open %s: Permission denied (mode 0060, group %s; "
		 "this user is in group %s, so an ACL or a security module refused it): ask "
		 "the administrator", self->path, g, g);
	ASSERT_EQ(0, node_then_user(self->path, 0060, USER, 1, true));
	EXPECT_STREQ(want, refusal(self->path));
}

/* A member of the group gets past the open (the file is no kcoll device). */
TEST_F(node, a_member_opens_it)
{
	struct coll_module_info info;

	NEED_ROOT();
	ASSERT_EQ(0, node_then_user(self->path, 0660, 0, 1, true));
	EXPECT_EQ(-ENODEV, coll_module_info(self->path, &info));
	EXPECT_NE(NULL, strstr(coll_last_error(), "is not a kcoll device")) {
		TH_LOG("%s", coll_last_error());
	}
}

TEST_HARNESS_MAIN
