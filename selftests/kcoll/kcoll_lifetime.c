// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: the end of a process and of the module.
 *
 *  - A process killed (SIGKILL) with an operation in flight and memory
 *    registered: its pages are unpinned (the kernel's FOLL_PIN counters in
 *    /proc/vmstat return to their value before the test) and every other
 *    rank gets an error, not a hang.
 *  - The module cannot be removed while a file is open (delete_module()
 *    gives EWOULDBLOCK); after close() it can, and it loads again.
 *
 * Every rank runs this binary; the multi-rank test skips on one rank.
 * Skips (exit 4) without /dev/kcoll.
 */
#include <glob.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT_OFF 60

/*
 * The victim or a survivor: create, register, submit a 16 MiB AllReduce
 * on the registration, tell the parent (one byte on @wfd), wait for it.
 * Exit 0 when the operation ended with an error (or was refused because
 * the victim had already gone), 1 when it succeeded, 2+ on set-up errors.
 */
static int child_op(const struct cluster *c, int wfd)
{
	size_t count = 4 << 20, i;
	float *b = map_buf(count * 4);
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .rank = c->rank, .nranks = c->nranks,
		.ranks = (uintptr_t)c->ranks, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1, .timeout_ms = 20000, .connect_timeout_ms = 60000,
	};
	struct kcoll_completion cpl;
	struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				  .redop = KCOLL_SUM, .count = count };
	int fd = open(KC_DEV, O_RDWR | O_CLOEXEC), st;

	if (fd < 0 || !b || ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc))
		return 2;
	for (i = 0; i < count; i++)
		b[i] = 1.0f;
	s.send.handle = reg_buf(fd, b, count * 4);
	if (!s.send.handle)
		return 3;
	s.recv.handle = s.send.handle;
	if (submit(fd, &s)) {
		fprintf(stderr, "# rank %u: submit refused: %s\n", c->rank, strerror(errno));
		return errno == ECONNRESET || errno == ECANCELED ? 0 : 4;
	}
	if (write(wfd, "s", 1) != 1)
		return 5;
	st = wait_one(fd, &cpl);
	fprintf(stderr, "# rank %u: operation ended: %s\n", c->rank,
	       st ? strerror(st < -1000 ? -1000 - st : -st) : "success");
	return st ? 0 : 1;
}

TEST(killed_mid_operation_unpins_and_peers_get_errors)
{
	struct cluster c;
	long long base, now;
	int pfd[2], status;
	char ch;
	pid_t pid;

	close(kc_open(_metadata));
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	base = foll_pinned_settle(foll_pinned(), 500);
	ASSERT_LE(0, base);
	ASSERT_EQ(0, pipe(pfd));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pfd[0]);
		_exit(child_op(&c, pfd[1]));
	}
	close(pfd[1]);
	if (c.rank == 0) {
		/* The victim: killed once its operation runs. */
		ASSERT_EQ(1, read(pfd[0], &ch, 1));
		sleep_ms(100);
		ASSERT_LT(base, foll_pinned()) TH_LOG("nothing pinned while in flight?");
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
	} else {
		/* A survivor: its operation must end with an error in time. */
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("survivor exit %d", WEXITSTATUS(status));
	}
	close(pfd[0]);
	now = foll_pinned_settle(base, 10000);
	EXPECT_GE(base, now) TH_LOG("%lld pages still pinned", now - base);
}

static int refcnt(void)
{
	FILE *f = fopen("/sys/module/kcoll/refcnt", "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* The copy of kcoll.ko the runner loaded (tools/vm/kcoll-vm), if any. */
static int module_file(char *path, size_t len)
{
	const char *env = getenv("KCOLL_TEST_KO");
	glob_t g;
	int ret = -1;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, R_OK);
	}
	if (glob("/kcvm/run/modules/kcoll*.ko", 0, NULL, &g))
		return -1;
	if (g.gl_pathc == 1) {
		snprintf(path, len, "%s", g.gl_pathv[0]);
		ret = 0;
	}
	globfree(&g);
	return ret;
}

TEST(rmmod_refused_while_open_then_succeeds)
{
	struct cluster c;
	char ko[256];
	int fd, base, kofd;
	float *b = map_buf(4096);

	ASSERT_NE(NULL, b);
	if (geteuid() != 0)
		SKIP(return, "unloading needs root");
	if (module_file(ko, sizeof(ko)))
		SKIP(return, "no kcoll.ko file to load again (set KCOLL_TEST_KO)");
	kofd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, kofd);
	base = refcnt();
	ASSERT_LE(0, base);
	fd = kc_open(_metadata);
	cluster_single(&c, 17300);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	ASSERT_NE(0, reg_buf(fd, b, 4096));
	EXPECT_LT(base, refcnt());
	EXPECT_EQ(-1, syscall(SYS_delete_module, "kcoll", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	/* Refused, and nothing changed: the file still works. */
	EXPECT_EQ(0, access(KC_DEV, F_OK));
	close(fd);
	EXPECT_EQ(base, refcnt());
	ASSERT_EQ(0, syscall(SYS_delete_module, "kcoll", O_NONBLOCK))
		TH_LOG("delete_module after close: %s", strerror(errno));
	EXPECT_EQ(-1, refcnt());		/* gone */
	/* Load it again, as the runner did, for whatever runs next. */
	ASSERT_EQ(0, syscall(SYS_finit_module, kofd, "", 0))
		TH_LOG("reload %s: %s", ko, strerror(errno));
	close(kofd);
	fd = -1;
	for (int i = 0; i < 40 && fd < 0; i++) {
		fd = open(KC_DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			sleep_ms(50);
	}
	ASSERT_LE(0, fd) TH_LOG("%s did not come back: %s", KC_DEV, strerror(errno));
	close(fd);
}

KC_HARNESS_MAIN
