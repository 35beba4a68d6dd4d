// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' shared numeric arguments (tools/common/size.c): every unit
 * and spelling of a size, fractions that are and are not whole bytes,
 * overflow at 2^64, and the message each bad input gets (naming it);
 * whole numbers in a range; sizes printed back as the axis labels of
 * coll-sim --plot.
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"
#include "size.h"

static uint64_t sz(const char *s)
{
	char err[160] = "";
	uint64_t v = 12345;

	if (parse_size(s, &v, err, sizeof(err)))
		return UINT64_MAX - 1;
	return v;
}

TEST(size_units)
{
	EXPECT_EQ(0, sz("0"));
	EXPECT_EQ(4096, sz("4096"));
	EXPECT_EQ(512, sz("512B"));
	EXPECT_EQ(1024, sz("1K"));
	EXPECT_EQ(1024, sz("1k"));
	EXPECT_EQ(1024, sz("1KiB"));
	EXPECT_EQ(1024, sz("1kib"));
	EXPECT_EQ(1024, sz("1KB"));
	EXPECT_EQ(64ull << 20, sz("64M"));
	EXPECT_EQ(64ull << 20, sz("64MiB"));
	EXPECT_EQ(2ull << 30, sz("2G"));
	EXPECT_EQ(2ull << 30, sz("2GiB"));
	EXPECT_EQ(3ull << 40, sz("3T"));
	EXPECT_EQ(3ull << 40, sz("3TiB"));
	EXPECT_EQ(1ull << 30, sz("1g"));
}

TEST(size_fractions)
{
	EXPECT_EQ(1536, sz("1.5K"));
	EXPECT_EQ(1572864, sz("1.5M"));
	EXPECT_EQ(512, sz("0.5K"));
	EXPECT_EQ(512, sz(".5K"));
	EXPECT_EQ(256, sz("0.25K"));
	EXPECT_EQ(5, sz("5.0"));
	EXPECT_EQ(1024, sz("1.000000000000000000000000K"));
	EXPECT_EQ(1, sz("0.0009765625K"));
	/* not whole: refused, not rounded */
	EXPECT_EQ(UINT64_MAX - 1, sz("1.3K"));
	EXPECT_EQ(UINT64_MAX - 1, sz("0.5"));
	EXPECT_EQ(UINT64_MAX - 1, sz("0.00048828125K"));
}

TEST(size_limits)
{
	char err[160];
	uint64_t v;

	EXPECT_EQ(UINT64_MAX, sz("18446744073709551615"));
	EXPECT_EQ(-ERANGE, parse_size("18446744073709551616", &v, err, sizeof(err)));
	EXPECT_STREQ("'18446744073709551616' is too large (at most 16E - 1 bytes)", err);
	EXPECT_EQ(-ERANGE, parse_size("16777216T", &v, err, sizeof(err)));
	EXPECT_EQ(16777215ull << 40, sz("16777215T"));
	EXPECT_EQ(-ERANGE, parse_size("18446744073709551615.5K", &v, err, sizeof(err)));
}

TEST(size_bad)
{
	static const char *const bad[] = { "x", "M", "1X", "1 K", " 1K", "1KK", "1iB", "0x10",
					   "1e3", "1.5.K", ".", "1KiBB", "+1" };
	char err[160];
	uint64_t v = 7;
	unsigned int i;

	EXPECT_EQ(-EINVAL, parse_size("", &v, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "empty size"));
	EXPECT_EQ(-EINVAL, parse_size(NULL, &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, parse_size("-1", &v, err, sizeof(err)));
	EXPECT_STREQ("'-1': a size cannot be negative", err);
	EXPECT_EQ(-EINVAL, parse_size("1.3K", &v, err, sizeof(err)));
	EXPECT_STREQ("'1.3K' is not a whole number of bytes", err);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		EXPECT_EQ(-EINVAL, parse_size(bad[i], &v, err, sizeof(err))) TH_LOG("%s", bad[i]);
		snprintf(want, sizeof(want), "'%s' is not a size: expected", bad[i]);
		EXPECT_EQ(0, strncmp(err, want, strlen(want))) TH_LOG("%s: %s", bad[i], err);
	}
	EXPECT_EQ(7, v);	/* untouched by every failure */
}

TEST(ranged)
{
	char err[160];
	uint64_t v = 0;

	EXPECT_EQ(0, parse_ranged("7", 0, 7, &v, err, sizeof(err)));
	EXPECT_EQ(7, v);
	EXPECT_EQ(-ERANGE, parse_ranged("9", 0, 7, &v, err, sizeof(err)));
	EXPECT_STREQ("9 out of range 0..7", err);
	EXPECT_EQ(-ERANGE, parse_ranged("0", 1, 1048576, &v, err, sizeof(err)));
	EXPECT_STREQ("0 out of range 1..1048576", err);
	EXPECT_EQ(-ERANGE, parse_ranged("-3", 1, 8, &v, err, sizeof(err)));
	EXPECT_STREQ("-3 out of range 1..8", err);
	EXPECT_EQ(-ERANGE, parse_ranged("99999999999999999999999", 1, 8, &v, err, sizeof(err)));
	EXPECT_STREQ("99999999999999999999999 out of range 1..8", err);
	EXPECT_EQ(-EINVAL, parse_ranged("4x", 1, 8, &v, err, sizeof(err)));
	EXPECT_STREQ("'4x' is not a number (expected 1..8)", err);
	EXPECT_EQ(-EINVAL, parse_ranged("", 1, 8, &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, parse_ranged("-", 1, 8, &v, err, sizeof(err)));
	EXPECT_EQ(7, v);
}

TEST(format)
{
	char b[32];

	EXPECT_STREQ("0", format_size(0, b, sizeof(b)));
	EXPECT_STREQ("8", format_size(8, b, sizeof(b)));
	EXPECT_STREQ("1K", format_size(1024, b, sizeof(b)));
	EXPECT_STREQ("1536", format_size(1536, b, sizeof(b)));
	EXPECT_STREQ("3K", format_size(3072, b, sizeof(b)));
	EXPECT_STREQ("64M", format_size(64ull << 20, b, sizeof(b)));
	EXPECT_STREQ("1G", format_size(1ull << 30, b, sizeof(b)));
	EXPECT_STREQ("8E", format_size(1ull << 63, b, sizeof(b)));
}

TEST_HARNESS_MAIN
