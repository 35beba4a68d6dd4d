// SPDX-License-Identifier: GPL-2.0
/*
 * collctl ranktable (tools/collctl/collctl_ranktable.c): tables of several
 * shapes, v1.0 and v1.2, read back with libcoll's own parser (ranks,
 * addresses, ports, servers, super pods); hosts from a list and from a
 * file; --output replaces a file and leaves it alone on an error; and
 * each bad input refused with its message and exit status.
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
#include "coll.h"
#include "collctl_ranktable.h"

/* The table for @o, read back by libcoll; NULL (with the message in @err) if refused. */
static struct coll_ranktable *gen(const struct cc_rt_opts *o, char *err, size_t len)
{
	struct coll_ranktable *rt = NULL;
	json_object *j;
	const char *s;

	if (cc_rt_build(o, &j, err, len))
		return NULL;
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY);
	if (coll_ranktable_parse(s, strlen(s), "generated", &rt))
		snprintf(err, len, "libcoll refused it: %s", coll_last_error());
	json_object_put(j);
	return rt;
}

/* Rank r of a K-per-host table of @hosts, as the generator must lay it out. */
static void check_layout(struct __test_metadata *_metadata, const struct coll_ranktable *rt,
			 const char *const *addrs, unsigned nhosts, unsigned k, unsigned base)
{
	unsigned r;

	ASSERT_EQ(nhosts * k, rt->nranks);
	ASSERT_EQ(nhosts, rt->nservers);
	for (r = 0; r < rt->nranks; r++) {
		EXPECT_STREQ(addrs[r / k], rt->ranks[r].addr);
		EXPECT_EQ(base + r % k, rt->ranks[r].port);
		EXPECT_EQ(r / k, rt->ranks[r].server_id);
	}
}

TEST(one_host_one_rank_is_v10)
{
	static const char *const a[] = { "10.0.0.1" };
	struct cc_rt_opts o = { .hosts = "10.0.0.1" };
	struct coll_ranktable *rt;
	char err[512] = "";

	rt = gen(&o, err, sizeof(err));
	ASSERT_NE(NULL, rt) TH_LOG("%s", err);
	EXPECT_STREQ("1.0", rt->version);
	EXPECT_EQ(1, rt->npods);
	EXPECT_STREQ("10.0.0.1", rt->server_names[0]);
	check_layout(_metadata, rt, a, 1, 1, COLL_DEFAULT_PORT);
	coll_ranktable_free(rt);
}

TEST(four_hosts_eight_ranks_each_with_a_base_port)
{
	static const char *const a[] = { "10.0.0.1", "10.0.0.2", "192.168.7.3", "2001:db8::5" };
	struct cc_rt_opts o = { .hosts = " 10.0.0.1, 10.0.0.2,192.168.7.3,2001:DB8:0::5",
				.ranks_per_node = "8", .base_port = "20000" };
	struct coll_ranktable *rt;
	char err[512] = "";

	rt = gen(&o, err, sizeof(err));
	ASSERT_NE(NULL, rt) TH_LOG("%s", err);
	EXPECT_STREQ("1.0", rt->version);
	check_layout(_metadata, rt, a, 4, 8, 20000);
	/* the address as written is the server_id; the table's address is canonical */
	EXPECT_STREQ("2001:DB8:0::5", rt->server_names[3]);
	coll_ranktable_free(rt);
}

TEST(super_pods_are_v12_with_consecutive_servers)
{
	static const char *const a[] = { "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4",
					 "10.0.0.5" };
	static const unsigned pod_of[] = { 0, 0, 1, 1, 1 };
	struct cc_rt_opts o = { .hosts = "10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4,10.0.0.5",
				.ranks_per_node = "2", .servers_per_pod = "2,3" };
	struct coll_ranktable *rt;
	char err[512] = "";
	unsigned r;

	rt = gen(&o, err, sizeof(err));
	ASSERT_NE(NULL, rt) TH_LOG("%s", err);
	EXPECT_STREQ("1.2", rt->version);
	ASSERT_EQ(2, rt->npods);
	EXPECT_STREQ("0", rt->pod_names[0]);
	EXPECT_STREQ("1", rt->pod_names[1]);
	check_layout(_metadata, rt, a, 5, 2, COLL_DEFAULT_PORT);
	for (r = 0; r < rt->nranks; r++)
		EXPECT_EQ(pod_of[r / 2], rt->ranks[r].pod_id);
	coll_ranktable_free(rt);
}

TEST(one_pod_per_server_and_the_highest_ports)
{
	static const char *const a[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	struct cc_rt_opts o = { .hosts = "10.1.0.1,10.1.0.2,10.1.0.3", .ranks_per_node = "4",
				.base_port = "65532", .servers_per_pod = "1,1,1" };
	struct coll_ranktable *rt;
	char err[512] = "";

	rt = gen(&o, err, sizeof(err));
	ASSERT_NE(NULL, rt) TH_LOG("%s", err);
	EXPECT_EQ(3, rt->npods);
	check_layout(_metadata, rt, a, 3, 4, 65532);
	EXPECT_EQ(65535, rt->ranks[11].port);
	EXPECT_EQ(2, rt->ranks[11].pod_id);
	coll_ranktable_free(rt);
}

/* A new file in /tmp (its name in @path, "...XXXXXX") holding @text; NULL on failure. */
static FILE *hosts_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (f && (fputs(text, f) < 0 || fflush(f))) {
		fclose(f);
		f = NULL;
	}
	return f;
}

/* A file: comments, blank lines, blanks around a host, a name resolved (localhost: IPv4 wins). */
TEST(hosts_from_a_file)
{
	static const char *const a[] = { "127.0.0.1" };
	char path[] = "/tmp/kcoll-hosts.XXXXXX", err[512] = "";
	struct cc_rt_opts o = { .hosts = path, .ranks_per_node = "3" };
	struct coll_ranktable *rt;
	FILE *f = hosts_file(path, "# the cluster\n\n   localhost   # this node\n  \n");

	ASSERT_NE(NULL, f);
	fclose(f);
	rt = gen(&o, err, sizeof(err));
	unlink(path);
	ASSERT_NE(NULL, rt) TH_LOG("%s", err);
	EXPECT_STREQ("localhost", rt->server_names[0]);
	check_layout(_metadata, rt, a, 1, 3, COLL_DEFAULT_PORT);
	coll_ranktable_free(rt);
}

/* Each must be refused with its return value and exactly its message. */
static const struct bad {
	struct cc_rt_opts o;
	int ret;
	const char *msg;
} bad_inputs[] = {
	{ { .hosts = NULL }, -EINVAL,
	  "--hosts is required: a comma-separated list or a file of hosts, one per line" },
	{ { .hosts = " " }, -EINVAL,
	  "--hosts ' ' lists no host: expected a comma-separated list or a file of hosts" },
	{ { .hosts = "10.0.0.1,,10.0.0.2" }, -EINVAL,
	  "--hosts host 2 is empty (a trailing or doubled comma?)" },
	{ { .hosts = "10.0.0.1,10.0.0.2,10.0.0.1" }, -EINVAL,
	  "--hosts host 3: duplicate host '10.0.0.1': address 10.0.0.1 is also '10.0.0.1' "
	  "at --hosts host 1; give each host once and the ranks per host with "
	  "--ranks-per-node" },
	/* the same address written two ways */
	{ { .hosts = "2001:db8::1,2001:DB8:0:0::1" }, -EINVAL,
	  "--hosts host 2: duplicate host '2001:DB8:0:0::1': address 2001:db8::1 is also "
	  "'2001:db8::1' at --hosts host 1; give each host once and the ranks per host "
	  "with --ranks-per-node" },
	{ { .hosts = "10.0.0.1", .ranks_per_node = "0" }, -EINVAL,
	  "--ranks-per-node 0 out of range 1..1024 (ranks per host)" },
	{ { .hosts = "10.0.0.1", .ranks_per_node = "1025" }, -EINVAL,
	  "--ranks-per-node 1025 out of range 1..1024 (ranks per host)" },
	{ { .hosts = "10.0.0.1", .ranks_per_node = "two" }, -EINVAL,
	  "--ranks-per-node 'two' is not a number (expected 1..1024) (ranks per host)" },
	{ { .hosts = "10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4", .servers_per_pod = "2,3" },
	  -EINVAL,
	  "--servers-per-pod 2,3 sums to 5 servers; --hosts gave 4" },
	{ { .hosts = "10.0.0.1,10.0.0.2", .servers_per_pod = "2,0" }, -EINVAL,
	  "--servers-per-pod 2,0: super pod 1: 0 out of range 1..65536 (servers in a pod)" },
	{ { .hosts = "10.0.0.1,10.0.0.2", .servers_per_pod = "1," }, -EINVAL,
	  "--servers-per-pod 1,: super pod 1: '' is not a number (expected 1..65536) "
	  "(servers in a pod)" },
	{ { .hosts = "10.0.0.1", .ranks_per_node = "8", .base_port = "65530" }, -EINVAL,
	  "--base-port 65530 with --ranks-per-node 8 needs device ports 65530..65537, "
	  "past 65535: expected a base port of at most 65528" },
	{ { .hosts = "10.0.0.1", .base_port = "0" }, -EINVAL,
	  "--base-port 0 out of range 1..65535" },
	{ { .hosts = "10.0.0.1,10.0.1" }, -EINVAL,
	  "--hosts host 2: '10.0.1' is not an IPv4 (a.b.c.d) address" },
	{ { .hosts = "fe80::1::2" }, -EINVAL,
	  "--hosts host 1: 'fe80::1::2' is not an IPv6 address" },
	{ { .hosts = "localhost,10.0.0.2" }, -EINVAL,
	  "--hosts host 1: host 'localhost' is 127.0.0.1, a loopback address that the other "
	  "hosts cannot reach (a name in /etc/hosts as 127.0.1.1?): give its network address" },
	{ { .hosts = "/nonexistent/hosts" }, -ENOENT,
	  "--hosts: cannot open /nonexistent/hosts: No such file or directory" },
	{ { .hosts = "a234567890123456789012345678901234567890""12345678901234567890123456" },
	  -EINVAL,
	  "--hosts host 1: host 'a234567890123456789012345678901234567890...' is 66 "
	  "characters: expected 1..64 (it becomes the server_id)" },
};

TEST(bad_values_are_refused_with_their_message)
{
	json_object *j;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		j = (json_object *)bad_inputs;	/* not NULL: a refusal must clear it */
		err[0] = '\0';
		EXPECT_EQ(bad_inputs[i].ret, cc_rt_build(&bad_inputs[i].o, &j, err, sizeof(err)))
			TH_LOG("bad_inputs[%zu]", i);
		EXPECT_EQ(NULL, j);
		EXPECT_STREQ(bad_inputs[i].msg, err);
	}
}

TEST(bad_lines_of_a_file_name_the_line)
{
	char path[] = "/tmp/kcoll-hosts.XXXXXX", err[512] = "", msg[600];
	struct cc_rt_opts o = { .hosts = path };
	json_object *j;
	FILE *f = hosts_file(path, "# nothing but comments\n\n");

	ASSERT_NE(NULL, f);
	EXPECT_EQ(-EINVAL, cc_rt_build(&o, &j, err, sizeof(err)));
	snprintf(msg, sizeof(msg), "--hosts: %s lists no host (only blank lines and comments)",
		 path);
	EXPECT_STREQ(msg, err);
	fputs("10.0.0.1\n10.0.0.2 10.0.0.3\n", f);
	fflush(f);
	EXPECT_EQ(-EINVAL, cc_rt_build(&o, &j, err, sizeof(err)));
	snprintf(msg, sizeof(msg), "%s:4: '10.0.0.2 10.0.0.3' is more than one word: expected "
		 "one host per line", path);
	EXPECT_STREQ(msg, err);
	fclose(f);
	unlink(path);
}

/* Up to @len bytes of file @path into @buf: how many, or 0 if it cannot be read. */
static size_t slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len, f) : 0;

	if (f)
		fclose(f);
	return n;
}

/* The program: --output writes the table, and a refused run leaves it as it was. */
TEST(output_is_replaced_whole_or_not_at_all)
{
	char dir[] = "/tmp/kcoll-rt.XXXXXX", path[64], before[4096], after[4096];
	char *ok[] = { "ranktable", "-H", "10.0.0.1,10.0.0.2", "-k", "2", "--output", path, NULL };
	char *bad[] = { "ranktable", "--hosts", "10.0.0.1,10.0.0.2", "-k", "2", "-s", "1,2",
			"--output", path, NULL };
	struct coll_ranktable *rt;
	size_t n1, n2;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rt.json", dir);
	optind = 0;
	ASSERT_EQ(0, cc_ranktable_main("collctl", 7, ok));
	ASSERT_EQ(0, coll_ranktable_load(path, &rt)) TH_LOG("%s", coll_last_error());
	EXPECT_EQ(4, rt->nranks);
	EXPECT_EQ(16668, rt->ranks[3].port);
	coll_ranktable_free(rt);
	n1 = slurp(path, before, sizeof(before));
	ASSERT_LT(0, n1);
	EXPECT_EQ(2, cc_ranktable_main("collctl", 9, bad));
	n2 = slurp(path, after, sizeof(after));
	ASSERT_EQ(n1, n2);
	EXPECT_EQ(0, memcmp(before, after, n1));
	EXPECT_EQ('\n', after[n2 - 1]);
	unlink(path);
	/* no temporary file left beside it */
	EXPECT_EQ(0, rmdir(dir));
}

TEST_HARNESS_MAIN
