// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll: where a communicator's secret comes from (lib/coll_secret.c).
 * The option wins over $KCOLL_SECRET_FILE, which wins over $KCOLL_SECRET;
 * a file others may read or write is refused; lengths outside 16..256
 * bytes are refused with a message that names the source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "coll_internal.h"

#define GOOD "sixteen-or-more-bytes-of-secret"

/* A temporary file holding @len bytes of @s, with @mode; its path in @path. */
static int secret_file(char path[64], const char *s, size_t len, mode_t mode)
{
	int fd;

	snprintf(path, 64, "/tmp/coll-secret-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, s, len) != (ssize_t)len || fchmod(fd, mode)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* What every test gets: a clean environment and somewhere to put the secret. */
struct got {
	uint8_t buf[KCOLL_SECRET_MAX + 1];
	size_t len;
	const char *from;
};

static void clean_env(void)
{
	unsetenv("KCOLL_SECRET_FILE");
	unsetenv("KCOLL_SECRET");
}

TEST(no_secret_anywhere_is_none)
{
	struct got g, *self = &g;

	clean_env();
	ASSERT_EQ(0, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
	EXPECT_EQ(0, self->len);
	EXPECT_EQ(NULL, self->from);
}

TEST(the_option_wins_over_the_environment)
{
	struct got g, *self = &g;

	clean_env();
	setenv("KCOLL_SECRET", "from the environment, long enough", 1);
	ASSERT_EQ(0, coll_secret_get(GOOD, strlen(GOOD), self->buf, &self->len, &self->from));
	ASSERT_EQ(strlen(GOOD), self->len);
	EXPECT_EQ(0, memcmp(GOOD, self->buf, self->len));
	EXPECT_STREQ("coll_comm_opts.secret", self->from);
}

TEST(a_private_file_wins_over_the_variable_and_loses_one_newline)
{
	struct got g, *self = &g;
	char path[64];

	clean_env();
	ASSERT_EQ(0, secret_file(path, GOOD "\n", strlen(GOOD) + 1, 0600));
	setenv("KCOLL_SECRET_FILE", path, 1);
	setenv("KCOLL_SECRET", "from the environment, long enough", 1);
	ASSERT_EQ(0, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
	EXPECT_EQ(strlen(GOOD), self->len);
	EXPECT_EQ(0, memcmp(GOOD, self->buf, self->len));
	EXPECT_STREQ("KCOLL_SECRET_FILE", self->from);
	unlink(path);
}

TEST(a_file_others_may_read_is_refused)
{
	struct got g, *self = &g;
	char path[64];

	clean_env();
	ASSERT_EQ(0, secret_file(path, GOOD, strlen(GOOD), 0644));
	setenv("KCOLL_SECRET_FILE", path, 1);
	EXPECT_EQ(-EACCES, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
	EXPECT_NE(NULL, strstr(coll_last_error(), "chmod 600")) TH_LOG("%s", coll_last_error());
	unlink(path);
}

TEST(a_missing_file_is_an_error_not_no_secret)
{
	struct got g, *self = &g;

	clean_env();
	setenv("KCOLL_SECRET_FILE", "/nonexistent/secret", 1);
	EXPECT_EQ(-ENOENT, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
}

TEST(lengths_outside_the_bounds_are_refused_with_the_source)
{
	struct got g, *self = &g;
	static char big[KCOLL_SECRET_MAX + 2];
	char path[64];

	clean_env();
	EXPECT_EQ(-EINVAL, coll_secret_get("short", 5, self->buf, &self->len, &self->from));
	EXPECT_NE(NULL, strstr(coll_last_error(), "coll_comm_opts.secret"));
	setenv("KCOLL_SECRET", "too short", 1);
	EXPECT_EQ(-EINVAL, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
	EXPECT_NE(NULL, strstr(coll_last_error(), "KCOLL_SECRET")) TH_LOG("%s", coll_last_error());
	memset(big, 'x', sizeof(big) - 1);
	ASSERT_EQ(0, secret_file(path, big, sizeof(big) - 1, 0600));
	setenv("KCOLL_SECRET_FILE", path, 1);
	EXPECT_EQ(-EINVAL, coll_secret_get(NULL, 0, self->buf, &self->len, &self->from));
	EXPECT_NE(NULL, strstr(coll_last_error(), "KCOLL_SECRET_FILE")) TH_LOG("%s",
									     coll_last_error());
	unlink(path);
}

TEST_HARNESS_MAIN
