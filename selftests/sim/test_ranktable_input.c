// SPDX-License-Identifier: GPL-2.0
/*
 * coll-sim --rank-table reads HCCL rank tables through libcoll's parser:
 * a v1.2 table of super-nodes of 2 and 3 servers (2 ranks each) gives
 * exactly the output of the same topology from flags, and malformed
 * tables fail with exit status 2 and libcoll's message (file, field,
 * value).  Runs build/bin/coll-sim next to this test's build directory.
 */
/* The harness's macros expand to functions without prototypes and compare mixed signs. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kselftest_harness.h"

#define ARGS " --op allreduce --algo 'level1:AHC' -b 1K -e 1M -f 32 --conformance --json"

/*
 * build/obj/selftests/sim/<test> -> build/bin/coll-sim, and
 * build/san/selftests/sim/<test> (SAN=1) -> build/bin/coll-sim-san.
 */
static void coll_sim_path(char *buf, size_t len)
{
	char exe[4096], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	dir = dirname(exe);
	snprintf(buf, len, "%s/../../../bin/coll-sim%s", dir,
		 strstr(dir, "/san/selftests/") ? "-san" : "");
}

/* Run coll-sim with args; its stdout and stderr in out, exit status returned. */
static int run(const char *args, char *out, size_t len)
{
	char cmd[8192], sim[4200];
	size_t n = 0;
	FILE *f;
	int st;

	coll_sim_path(sim, sizeof(sim));
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", sim, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n < len - 1 && fgets(out + n, (int)(len - n), f))
		n += strlen(out + n);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * A v1.2 table: pods A (node_0, node_1) and B (node_2..node_4), 2 ranks
 * each; the last rank's rank_id is @last (NULL: "9"), and @cut > 0
 * truncates the file to that many bytes.
 */
static void write_table(char *path, const char *last, long cut)
{
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	unsigned s, d, r = 0;

	fprintf(f, "{\"status\":\"completed\",\"version\":\"1.2\",\"server_count\":\"5\","
		   "\"server_list\":[");
	for (s = 0; s < 5; s++) {
		fprintf(f, "%s{\"server_id\":\"node_%u\",\"device\":[", s ? "," : "", s);
		for (d = 0; d < 2; d++, r++) {
			char rid[16];

			snprintf(rid, sizeof(rid), "%u", r);
			fprintf(f, "%s{\"device_id\":\"%u\",\"device_ip\":\"10.0.%u.%u\","
				   "\"rank_id\":\"%s\"}", d ? "," : "", d, s, d + 1,
				r == 9 && last ? last : rid);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"super_pod_list\":[{\"super_pod_id\":\"A\",\"server_list\":"
		   "[{\"server_id\":\"node_0\"},{\"server_id\":\"node_1\"}]},"
		   "{\"super_pod_id\":\"B\",\"server_list\":[{\"server_id\":\"node_2\"},"
		   "{\"server_id\":\"node_3\"},{\"server_id\":\"node_4\"}]}]}\n");
	fflush(f);
	if (cut > 0 && ftruncate(fd, cut))
		perror("ftruncate");
	fclose(f);
}

TEST(rank_table_equals_the_same_topology_from_flags)
{
	char path[] = "/tmp/kcoll-sim-rt-XXXXXX", a[16384], b[16384], args[4200];

	write_table(path, NULL, 0);
	snprintf(args, sizeof(args), "--rank-table %s" ARGS, path);
	EXPECT_EQ(0, run(args, a, sizeof(a))) TH_LOG("%s", a);
	EXPECT_EQ(0, run("--servers-per-pod 2,3 --per-server 2" ARGS, b, sizeof(b)));
	EXPECT_NE(NULL, strstr(a, "\"time_s\""));
	EXPECT_STREQ(b, a);
	unlink(path);
}

/* Malformed tables: exit status 2 and libcoll's message, naming the file. */
TEST(malformed_rank_tables_fail_with_libcoll_messages)
{
	static const struct {
		const char *last;
		long cut;
		const char *msg;
	} bad[] = {
		{ "8", 0, ".rank_id is \"8\": duplicate" },
		{ "10", 0, ".rank_id is \"10\": out of range" },
		{ "x9", 0, ".rank_id is \"x9\": expected a decimal integer" },
		{ NULL, 100, ":1:101: invalid JSON" },
	};
	char path[64], out[16384], args[4200];
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof(path), "/tmp/kcoll-sim-rt-XXXXXX");
		write_table(path, bad[i].last, bad[i].cut);
		snprintf(args, sizeof(args), "--rank-table %s" ARGS, path);
		EXPECT_EQ(2, run(args, out, sizeof(out))) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, bad[i].msg)) TH_LOG("expected '%s' in: %s", bad[i].msg, out);
		EXPECT_NE(NULL, strstr(out, path)) TH_LOG("no file name in: %s", out);
		unlink(path);
	}
	EXPECT_EQ(2, run("--rank-table /nonexistent/rt.json" ARGS, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot open rank table /nonexistent/rt.json")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
