// SPDX-License-Identifier: GPL-2.0
/*
 * libcoll's rank table parser: HCCL v1.0 and v1.2 tables (and the shape
 * tools/vm/kcoll-vm writes) load with the right ranks, servers, super pods,
 * addresses and ports; every malformed table fails with -EINVAL, creates
 * nothing, and its message names the file and the field (and the rank
 * where there is one).
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

static int parse(const char *s, struct coll_ranktable **rt)
{
	return coll_ranktable_parse(s, strlen(s), "t.json", rt);
}

#define DEV(ip, port, rank) \
	"{\"device_id\":\"0\",\"device_ip\":\"" ip "\",\"device_port\":\"" port "\",\"rank_id\":\"" rank "\"}"

static const char v10[] =
	"{ \"status\":\"completed\", \"version\":\"1.0\", \"server_count\":\"2\",\n"
	"  \"server_list\":[ { \"server_id\":\"node_0\", \"host_ip\":\"172.16.0.110\",\n"
	"      \"device\":[ {\"device_id\":\"0\",\"device_ip\":\"192.168.1.8\",\"device_port\":\"16667\",\"host_port\":\"16666\",\"rank_id\":\"0\"},\n"
	"                 {\"device_id\":\"1\",\"device_ip\":\"192.168.1.9\",\"device_port\":\"16667\",\"rank_id\":\"1\"} ] },\n"
	"    { \"server_id\":\"node_1\", \"device\":[ {\"device_id\":\"0\",\"device_ip\":\"192.168.2.8\",\"rank_id\":\"2\"},\n"
	"                 {\"device_id\":\"1\",\"device_ip\":\"fe80::1\",\"device_port\":\"20000\",\"rank_id\":\"3\"} ] } ] }\n";

static const char v12[] =
	"{\"status\":\"completed\",\"version\":\"1.2\",\"server_count\":\"4\",\"server_list\":["
	"{\"server_id\":\"node_0\",\"device\":[" DEV("10.0.0.1", "1", "1") "," DEV("10.0.0.1", "2", "0") "]},"
	"{\"server_id\":\"node_1\",\"device\":[" DEV("10.0.0.2", "1", "2") "]},"
	"{\"server_id\":\"node_2\",\"device\":[" DEV("10.0.0.3", "1", "3") "]},"
	"{\"server_id\":\"node_3\",\"device\":[" DEV("10.0.0.4", "1", "4") ","
	"{\"device_ip\":\"10.0.0.4\",\"kcoll_addr\":\"10.9.9.9\",\"kcoll_port\":\"7\",\"rank_id\":\"5\"}]}],"
	"\"super_pod_list\":[{\"super_pod_id\":\"A\",\"server_list\":[{\"server_id\":\"node_0\"},{\"server_id\":\"node_1\"}]},"
	"{\"super_pod_id\":\"B\",\"server_list\":[{\"server_id\":\"node_2\"},{\"server_id\":\"node_3\"}]}]}";

TEST(hccl_v1_0_table_loads_with_ports_and_servers)
{
	struct coll_ranktable *rt;

	ASSERT_EQ(0, parse(v10, &rt));
	EXPECT_EQ(4, rt->nranks);
	EXPECT_EQ(2, rt->nservers);
	EXPECT_EQ(1, rt->npods);
	EXPECT_STREQ("1.0", rt->version);
	EXPECT_STREQ("192.168.1.8", rt->ranks[0].addr);
	EXPECT_EQ(16667, rt->ranks[0].port);
	EXPECT_EQ(COLL_DEFAULT_PORT, rt->ranks[2].port);
	EXPECT_STREQ("fe80::1", rt->ranks[3].addr);
	EXPECT_EQ(20000, rt->ranks[3].port);
	EXPECT_EQ(0, rt->ranks[1].server_id);
	EXPECT_EQ(1, rt->ranks[2].server_id);
	EXPECT_STREQ("node_1", rt->server_names[1]);
	coll_ranktable_free(rt);
}

TEST(hccl_v1_2_table_assigns_super_pods_and_kcoll_overrides)
{
	struct coll_ranktable *rt;

	ASSERT_EQ(0, parse(v12, &rt));
	EXPECT_EQ(6, rt->nranks);
	EXPECT_EQ(4, rt->nservers);
	EXPECT_EQ(2, rt->npods);
	/* ranks listed out of order inside a server are indexed by rank_id */
	EXPECT_EQ(2, rt->ranks[0].port);
	EXPECT_EQ(1, rt->ranks[1].port);
	EXPECT_EQ(0, rt->ranks[2].pod_id + 0 * rt->ranks[1].pod_id);
	EXPECT_EQ(1, rt->ranks[3].pod_id);
	EXPECT_EQ(1, rt->ranks[5].pod_id);
	EXPECT_STREQ("B", rt->pod_names[1]);
	EXPECT_STREQ("10.9.9.9", rt->ranks[5].addr);
	EXPECT_EQ(7, rt->ranks[5].port);
	coll_ranktable_free(rt);
}

/* The file tools/vm/kcoll-vm writes (write_ranktable), 2 nodes x 2 ranks. */
TEST(kcoll_vm_table_file_loads)
{
	static const char vm[] =
		"{\n  \"status\": \"completed\",\n  \"version\": \"1.2\",\n"
		"  \"server_count\": \"2\",\n  \"rank_count\": \"4\",\n  \"server_list\": [\n"
		"    { \"server_id\": \"node0\", \"host_ip\": \"10.77.0.1\", \"device\": [\n"
		"        { \"device_id\": \"0\", \"device_ip\": \"10.77.0.1\", \"device_port\": \"16667\", \"rank_id\": \"0\" },\n"
		"        { \"device_id\": \"1\", \"device_ip\": \"10.77.0.1\", \"device_port\": \"16668\", \"rank_id\": \"1\" }\n"
		"      ] },\n"
		"    { \"server_id\": \"node1\", \"host_ip\": \"10.77.0.2\", \"device\": [\n"
		"        { \"device_id\": \"0\", \"device_ip\": \"10.77.0.2\", \"device_port\": \"16667\", \"rank_id\": \"2\" },\n"
		"        { \"device_id\": \"1\", \"device_ip\": \"10.77.0.2\", \"device_port\": \"16668\", \"rank_id\": \"3\" }\n"
		"      ] }\n  ],\n  \"super_pod_list\": [\n"
		"    { \"super_pod_id\": \"0\", \"server_list\": [{ \"server_id\": \"node0\" }, { \"server_id\": \"node1\" }] }\n"
		"  ]\n}\n";
	char path[] = "/tmp/coll_rt_XXXXXX";
	struct coll_ranktable *rt;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(vm) - 1, write(fd, vm, sizeof(vm) - 1));
	close(fd);
	ASSERT_EQ(0, coll_ranktable_load(path, &rt));
	unlink(path);
	EXPECT_EQ(4, rt->nranks);
	EXPECT_EQ(16668, rt->ranks[3].port);
	EXPECT_STREQ("10.77.0.2", rt->ranks[3].addr);
	EXPECT_EQ(1, rt->ranks[2].server_id);
	coll_ranktable_free(rt);
}

TEST(missing_file_is_enoent_with_path)
{
	struct coll_ranktable *rt = (void *)1;

	EXPECT_EQ(-ENOENT, coll_ranktable_load("/nonexistent/rt.json", &rt));
	EXPECT_EQ(NULL, rt);
	EXPECT_NE(NULL, strstr(coll_last_error(), "/nonexistent/rt.json"));
}

struct bad {
	const char *json;
	const char *msg[3];	/* substrings the message must contain */
};

#define S1(ip, port, rank) "{\"server_id\":\"n0\",\"device\":[" DEV(ip, port, rank) "]}"
#define TBL(servers) "{\"status\":\"completed\",\"version\":\"1.0\",\"server_list\":[" servers "]}"

static const struct bad bads[] = {
	{ "{\"server_list\": [", { "t.json:1:18: ", "invalid JSON" } },
	/* strict JSON: a trailing comma, single quotes, a key twice, a BOM inside */
	{ TBL(S1("10.0.0.1", "1", "0") ","), { "t.json:1:", "unexpected character ']'",
	  "trailing comma" } },
	{ "{\"status\":\"completed\",\n \"server_list\":[" S1("10.0.0.1", "1", "0") ",]}",
	  { "t.json:2:", "']' (a trailing comma before it?)" } },
	{ "{\"status\":'completed'}", { "t.json:1:11: ", "invalid JSON" } },
	{ "{\"status\":\"completed\",\n  \"status\":\"completed\"}",
	  { "t.json:2:3: ", "key \"status\" given twice in one object" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"device_ip\":\"10.0.0.1\",\"rank_id\":\"0\","
	      "\"rank_id\":\"1\"}]}"), { "t.json:1:", "key \"rank_id\" given twice" } },
	{ "{\"a\":\"\xef\xbb\xbf\"}\xef\xbb\xbf", { "t.json:1:12: ", "a UTF-8 byte order mark inside the text" } },
	{ "[1,2]", { "t.json", "must be a JSON object" } },
	{ "{\"status\":\"initializing\",\"server_list\":[" S1("10.0.0.1", "1", "0") "]}",
	  { "$.status", "initializing", "completed" } },
	{ "{\"version\":\"2.0\",\"server_list\":[" S1("10.0.0.1", "1", "0") "]}",
	  { "$.version", "2.0" } },
	{ "{\"version\":1.0,\"server_list\":[" S1("10.0.0.1", "1", "0") "]}",
	  { "$.version", "must be a string" } },
	{ "{\"status\":\"completed\"}", { "$.server_list is missing" } },
	{ TBL(""), { "$.server_list", "non-empty array" } },
	{ "{\"server_count\":\"3\",\"server_list\":[" S1("10.0.0.1", "1", "0") "]}",
	  { "$.server_count", "\"3\"", "1 servers" } },
	{ "{\"rank_count\":\"2\",\"server_list\":[" S1("10.0.0.1", "1", "0") "]}",
	  { "$.rank_count", "1 devices" } },
	{ TBL("{\"device\":[" DEV("10.0.0.1", "1", "0") "]}"), { "server_list[0].server_id is missing" } },
	{ TBL(S1("10.0.0.1", "1", "0") "," S1("10.0.0.2", "1", "1")),
	  { "server_list[1].server_id", "\"n0\"", "duplicate" } },
	{ TBL("{\"server_id\":\"n0\"}"), { "server_list[0].device", "n0" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"device_ip\":\"10.0.0.1\"}]}"),
	  { "server_list[0].device[0].rank_id is missing" } },
	{ TBL(S1("10.0.0.1", "1", "x1")), { "device[0].rank_id", "\"x1\"", "decimal" } },
	{ TBL(S1("10.0.0.1", "1", "-1")), { "rank_id", "\"-1\"" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"rank_id\":\"0\"}]}"),
	  { "device[0].device_ip is missing", "rank 0" } },
	{ TBL(S1("10.0.0.256", "1", "0")), { "device_ip", "10.0.0.256", "rank 0" } },
	{ TBL(S1("node-a", "1", "0")), { "device_ip", "not an IPv4 or IPv6" } },
	{ TBL(S1("10.0.0.1", "0", "0")), { "device_port", "\"0\"", "1..65535" } },
	{ TBL(S1("10.0.0.1", "70000", "0")), { "device_port", "70000" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"device_ip\":\"10.0.0.1\",\"rank_id\":0}]}"),
	  { "rank_id must be a string" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[" DEV("10.0.0.1", "1", "0") "," DEV("10.0.0.1", "2", "0") "]}"),
	  { "device[1].rank_id", "duplicate", "device[0]" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[" DEV("10.0.0.1", "1", "0") "," DEV("10.0.0.1", "2", "2") "]}"),
	  { "device[1].rank_id", "\"2\"", "out of range" } },
	{ TBL("{\"server_id\":\"a\",\"device\":[" DEV("10.0.0.1", "1", "0") "," DEV("10.0.0.1", "2", "2") "]},"
	      "{\"server_id\":\"b\",\"device\":[" DEV("10.0.0.2", "1", "1") "]}"),
	  { "server \"a\"", "not contiguous", "rank 2" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[" DEV("10.0.0.1", "5", "0") "," DEV("10.0.0.1", "5", "1") "]}"),
	  { "rank 0 and rank 1", "10.0.0.1", "port 5" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"device_ip\":\"10.0.0.1\",\"kcoll_addr\":\"x\",\"rank_id\":\"0\"}]}"),
	  { "kcoll_addr", "\"x\"" } },
	{ TBL("{\"server_id\":\"n0\",\"device\":[{\"device_ip\":\"10.0.0.1\",\"kcoll_port\":\"99999\",\"rank_id\":\"0\"}]}"),
	  { "kcoll_port", "99999" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") "],\"super_pod_list\":[]}",
	  { "super_pod_list is empty" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") "],\"super_pod_list\":"
	  "[{\"super_pod_id\":\"0\",\"server_list\":[{\"server_id\":\"n9\"}]}]}",
	  { "super_pod_list[0].server_list[0].server_id", "\"n9\"", "no such server" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") "],\"super_pod_list\":"
	  "[{\"super_pod_id\":\"0\",\"server_list\":[{\"server_id\":\"n0\"}]},"
	  "{\"super_pod_id\":\"0\",\"server_list\":[{\"server_id\":\"n0\"}]}]}",
	  { "super_pod_list[1].super_pod_id", "duplicate" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") "],\"super_pod_list\":"
	  "[{\"super_pod_id\":\"0\",\"server_list\":[{\"server_id\":\"n0\"}]},"
	  "{\"super_pod_id\":\"1\",\"server_list\":[{\"server_id\":\"n0\"}]}]}",
	  { "super_pod_list[1].server_list[0].server_id", "already in super pod \"0\"" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") ","
	  "{\"server_id\":\"n1\",\"device\":[" DEV("10.0.0.2", "1", "1") "]}],\"super_pod_list\":"
	  "[{\"super_pod_id\":\"0\",\"server_list\":[{\"server_id\":\"n0\"}]}]}",
	  { "server_list[1]", "\"n1\"", "in no super pod" } },
	{ "{\"version\":\"1.2\",\"server_list\":[" S1("10.0.0.1", "1", "0") ","
	  "{\"server_id\":\"n1\",\"device\":[" DEV("10.0.0.2", "1", "1") "]},"
	  "{\"server_id\":\"n2\",\"device\":[" DEV("10.0.0.3", "1", "2") "]}],\"super_pod_list\":"
	  "[{\"super_pod_id\":\"P\",\"server_list\":[{\"server_id\":\"n0\"},{\"server_id\":\"n2\"}]},"
	  "{\"super_pod_id\":\"Q\",\"server_list\":[{\"server_id\":\"n1\"}]}]}",
	  { "super pod \"P\"", "not contiguous" } },
	{ TBL(S1("10.0.0.1", "1", "0")) " x", { "t.json:1:", "unexpected character 'x'" } },
};

/* A UTF-8 byte order mark at the start is skipped; equal keys in different objects are fine. */
TEST(bom_is_skipped_and_keys_repeat_across_objects)
{
	static const char t[] = "\xef\xbb\xbf" TBL(S1("10.0.0.1", "1", "0") ","
		"{\"server_id\":\"n1\",\"device\":[" DEV("10.0.0.2", "1", "1") "]}");
	struct coll_ranktable *rt;

	ASSERT_EQ(0, parse(t, &rt)) TH_LOG("%s", coll_last_error());
	EXPECT_EQ(2, rt->nranks);
	coll_ranktable_free(rt);
}

/*
 * A semantic error names file:line:col of the faulty value, or of the
 * object that lacks a field, then its JSON path: editors jump to it.
 */
#define L(s) s "\n"
#define PRETTY(dev0, dev1, tail) \
	L("{") L("  \"status\": \"completed\",") L("  \"server_count\": \"2\",") \
	L("  \"server_list\": [") \
	L("    { \"server_id\": \"n0\",") L("      \"device\": [ " dev0 " ] },") \
	L("    { \"server_id\": \"n1\",") L("      \"device\": [") L("        " dev1) L("      ] }") \
	L("  ]" tail) L("}")
#define D0 "{ \"device_ip\": \"10.0.0.1\", \"rank_id\": \"0\" }"

static const struct bad at[] = {
	{ PRETTY(D0, "{ \"device_ip\": \"10.0.0.300\", \"rank_id\": \"1\" }", ""),
	  { "t.json:9:24: server_list[1].device[0].device_ip is \"10.0.0.300\" (rank 1): "
	    "not an IPv4 or IPv6 address" } },
	{ PRETTY(D0, "{ \"device_ip\": \"10.0.0.2\" }", ""),
	  { "t.json:9:9: server_list[1].device[0].rank_id is missing" } },
	{ PRETTY("{ \"device_ip\": \"10.0.0.1\", \"rank_id\": \"1\" }",
		 "{ \"device_ip\": \"10.0.0.2\", \"rank_id\": \"1\" }", ""),
	  { "t.json:9:47: server_list[1].device[0].rank_id is \"1\": duplicate, also at "
	    "server_list[0].device[0]" } },
	{ PRETTY(D0, "{ \"device_ip\": \"10.0.0.2\", \"device_port\": \"0\", \"rank_id\": \"1\" }", ""),
	  { "t.json:9:51: server_list[1].device[0].device_port is \"0\"" } },
	{ PRETTY(D0 ", { \"device_ip\": \"10.0.0.1\", \"rank_id\": \"2\" }",
		 "{ \"device_ip\": \"10.0.0.2\", \"rank_id\": \"1\" }", ""),
	  { "t.json:6:102: ", "ranks of server \"n0\" are not contiguous" } },
	{ PRETTY(D0, "{ \"device_ip\": \"10.0.0.1\", \"rank_id\": \"1\" }", ""),
	  { "t.json:9:9: rank 0 and rank 1 both use address 10.0.0.1" } },
	{ PRETTY(D0, "{ \"device_ip\": \"10.0.0.2\", \"rank_id\": \"1\" }",
		 ",\n  \"version\": \"1.2\", \"super_pod_list\": [ { \"super_pod_id\": \"0\",\n"
		 "    \"server_list\": [ { \"server_id\": \"n0\" }, { \"server_id\": \"n7\" } ] } ]"),
	  { "t.json:13:60: super_pod_list[0].server_list[1].server_id is \"n7\": no such server" } },
	{ "{ \"status\": \"completed\",\n  \"version\": 1.0 }",
	  { "t.json:2:14: $.version must be a string" } },
};

TEST(semantic_errors_name_line_and_column)
{
	struct coll_ranktable *rt;
	size_t i;

	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		rt = (void *)1;
		EXPECT_EQ(-EINVAL, parse(at[i].json, &rt));
		EXPECT_EQ(NULL, rt);
		if (strncmp(coll_last_error(), at[i].msg[0], strlen(at[i].msg[0])) ||
		    (at[i].msg[1] && !strstr(coll_last_error(), at[i].msg[1]))) {
			TH_LOG("table %zu: message \"%s\" does not start with \"%s\"%s%s", i,
			       coll_last_error(), at[i].msg[0], at[i].msg[1] ? " or lacks " : "",
			       at[i].msg[1] ? at[i].msg[1] : "");
			EXPECT_TRUE(0);
		}
	}
}

TEST(malformed_tables_fail_with_einval_and_a_precise_message)
{
	struct coll_ranktable *rt;
	size_t i, k;
	int ret;

	ASSERT_LE(20, sizeof(bads) / sizeof(bads[0]));
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		rt = (void *)1;
		ret = parse(bads[i].json, &rt);
		if (ret != -EINVAL || rt)
			TH_LOG("table %zu: ret %d, message: %s", i, ret, coll_last_error());
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_EQ(NULL, rt);
		EXPECT_EQ(0, strncmp(coll_last_error(), "t.json:", 7));
		for (k = 0; k < 3 && bads[i].msg[k]; k++)
			if (!strstr(coll_last_error(), bads[i].msg[k])) {
				TH_LOG("table %zu: message \"%s\" lacks \"%s\"", i,
				       coll_last_error(), bads[i].msg[k]);
				EXPECT_TRUE(0);
			}
	}
}

TEST(bad_table_never_creates_a_communicator)
{
	char path[] = "/tmp/coll_rt_XXXXXX";
	coll_comm_t *comm = (void *)1;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(2, write(fd, "{}", 2));
	close(fd);
	EXPECT_EQ(-EINVAL, coll_comm_init_ranktable(path, 0, &comm));
	EXPECT_EQ(NULL, comm);
	EXPECT_NE(NULL, strstr(coll_last_error(), "server_list is missing"));
	unlink(path);
}

TEST_HARNESS_MAIN
