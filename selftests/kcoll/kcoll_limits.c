// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: limits and ownership.
 *
 *  - Pinned memory is charged to the registering process's
 *    RLIMIT_MEMLOCK: an unprivileged process over it gets ENOMEM (a
 *    limit of 0 too) and nothing stays pinned; within it the
 *    registration works.
 *  - The limit and the mapping are checked before anything is sized by
 *    the request: 8 threads looping 2^36-byte registrations, over a
 *    64 KiB limit or over a mostly unmapped range, fail at once (ENOMEM,
 *    EFAULT) without a transient 128 MiB page array each, which in the
 *    suite's 512 MiB VMs called the OOM killer.
 *  - A file's communicator and registrations belong to the process that
 *    opened it.  A child that inherited the file (fork) or a process it
 *    was passed to (SCM_RIGHTS) gets EPERM from every ioctl but
 *    KCOLL_IOC_INFO, and the owner's state is untouched by the attempts.
 *
 * One-rank communicators on the loopback address: every rank of the
 * cluster runs this alone on its node.  Skips (exit 4) without /dev/kcoll.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT 17200

/*
 * Unprivileged, the tests see the pinned-page totals only as the kernel
 * folds them (about once a second; see vmstat_fold()): give it a few.
 */
#define UNPRIV_SETTLE_MS 5000

/*
 * The tests of the limit become user 65534 (kc_become()): root's
 * CAP_IPC_LOCK lifts the limit.  The harness runs every test in a child
 * of its own, so this is undone for the next test.
 */

TEST(register_over_memlock_is_enomem_nothing_pinned)
{
	struct kcoll_mem_reg reg = { .size = sizeof(reg) };
	struct rlimit rl = { 64 << 10, 64 << 10 };
	size_t len = 1 << 20;
	char *p = map_buf(len);
	int fd = kc_open(_metadata);
	long long pinned;
	__u64 h1, h2;

	ASSERT_NE(NULL, p);
	memset(p, 1, len);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	pinned = foll_pinned();			/* exact while still root */
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	reg.addr = (uintptr_t)p;
	reg.len = len;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, UNPRIV_SETTLE_MS));
	/* 64 KiB fit: two 32 KiB registrations, then not one page more. */
	h1 = reg_buf(fd, p, 32 << 10);
	EXPECT_NE(0, h1);
	h2 = reg_buf(fd, p + (32 << 10), 32 << 10);
	EXPECT_NE(0, h2);
	EXPECT_LT(pinned, foll_pinned_above(pinned, UNPRIV_SETTLE_MS));
	reg.addr = (uintptr_t)(p + (64 << 10));
	reg.len = 4096;
	EXPECT_EQ(-1, ioctl(fd, KCOLL_IOC_MEM_REG, &reg));
	EXPECT_EQ(ENOMEM, errno);
	close(fd);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, UNPRIV_SETTLE_MS));
	munmap(p, len);
}

TEST(memlock_limit_zero_is_enomem)
{
	struct rlimit rl = { 0, 0 };
	float *p = map_buf(1 << 16);
	struct kcoll_submit s;
	struct cluster c;
	long long pinned;
	int fd = kc_open(_metadata);

	ASSERT_NE(NULL, p);
	memset(p, 1, 1 << 16);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	pinned = foll_pinned();			/* exact while still root */
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	EXPECT_EQ(0, reg_buf(fd, p, 4096));
	EXPECT_EQ(ENOMEM, errno) TH_LOG("%s", strerror(errno));
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.count = 16;
	s.send.addr = (uintptr_t)p;
	s.recv.addr = (uintptr_t)(p + 4096);
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ENOMEM, errno) TH_LOG("%s", strerror(errno));
	close(fd);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, UNPRIV_SETTLE_MS));
	munmap(p, 1 << 16);
}

/* ------------------------------------------ huge registrations, at once */

#define HUGE_LEN	(1ULL << 36)
#define HUGE_THREADS	8
#define HUGE_LOOPS	200
#define HUGE_SECONDS	10

static long long vmstat_get(const char *key)
{
	long long v, ret = -1;
	char name[64];
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (!strcmp(name, key))
			ret = v;
	fclose(f);
	return ret;
}

/* VmallocUsed of /proc/meminfo in KiB (0 where the kernel hides it). */
static long long vmalloc_used_kib(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %lld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct huge {
	int fd;
	void *addr;
	int want;		/* the errno every call must give */
	double end;
	unsigned int calls, wrong, last_err;
	int *finished;		/* threads done (atomic) */
};

static void *huge_main(void *arg)
{
	struct huge *h = arg;
	struct kcoll_mem_reg reg = { .size = sizeof(reg), .addr = (uintptr_t)h->addr,
				     .len = HUGE_LEN };

	while (h->calls < HUGE_LOOPS && kc_now_s() < h->end) {
		h->calls++;
		reg.handle = 0;
		if (!ioctl(h->fd, KCOLL_IOC_MEM_REG, &reg)) {
			h->wrong++;
			h->last_err = 0;
		} else if (errno != h->want) {
			h->wrong++;
			h->last_err = errno;
		}
	}
	__atomic_fetch_add(h->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * HUGE_THREADS threads loop 2^36-byte registrations of @addr; each call
 * must fail with @want, no OOM kill may happen, VmallocUsed must not rise
 * by a page array's worth (128 MiB), and nothing may stay pinned.
 */
static void huge_loop(struct __test_metadata *_metadata, void *addr, int want,
		      long long pinned, unsigned int settle_ms)
{
	struct huge h[HUGE_THREADS];
	pthread_t t[HUGE_THREADS];
	int finished = 0;
	long long oom0, oom1, vm0, vm, vmmax;
	int fd = kc_open(_metadata), i;
	double end = kc_now_s() + HUGE_SECONDS;

	oom0 = vmstat_get("oom_kill");
	vm0 = vmalloc_used_kib();
	vmmax = vm0;
	for (i = 0; i < HUGE_THREADS; i++) {
		h[i] = (struct huge){ .fd = fd, .addr = addr, .want = want, .end = end,
				      .finished = &finished };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, huge_main, &h[i]));
	}
	/* Sample VmallocUsed while they run. */
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < HUGE_THREADS) {
		vm = vmalloc_used_kib();
		if (vm > vmmax)
			vmmax = vm;
		sleep_ms(5);
	}
	for (i = 0; i < HUGE_THREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, h[i].wrong) TH_LOG("thread %d: %u of %u calls did not fail with %s (last: %s)",
						i, h[i].wrong, h[i].calls, strerror(want),
						h[i].last_err ? strerror(h[i].last_err) : "success");
		EXPECT_LT(0, h[i].calls);
	}
	oom1 = vmstat_get("oom_kill");
	TH_LOG("%u calls per thread; VmallocUsed %lld KiB, at most %lld KiB meanwhile; oom_kill %lld -> %lld",
	       h[0].calls, vm0, vmmax, oom0, oom1);
	EXPECT_EQ(oom0, oom1) TH_LOG("the OOM killer ran");
	if (vm0 > 0)
		EXPECT_GT(vm0 + (64 << 10), vmmax) TH_LOG("a transient allocation of %lld KiB",
							  vmmax - vm0);
	close(fd);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, settle_ms));
}

TEST(huge_registrations_over_memlock_fail_before_allocating)
{
	struct rlimit rl = { 64 << 10, 64 << 10 };
	char *p = map_low(1 << 20);
	long long pinned;

	ASSERT_NE(NULL, p) TH_LOG("mmap at 4 GiB: %s", strerror(errno));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	pinned = foll_pinned();			/* exact while still root */
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	huge_loop(_metadata, p, ENOMEM, pinned, UNPRIV_SETTLE_MS);
	munmap(p, 1 << 20);
}

TEST(huge_mostly_unmapped_registration_is_efault_without_allocating)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	char *p = map_low(1 << 20);
	long long pinned;

	ASSERT_NE(NULL, p) TH_LOG("mmap at 4 GiB: %s", strerror(errno));
	/* Unlimited: root, or a limit raised as far as it goes. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) && geteuid() != 0)
		SKIP(return, "cannot lift RLIMIT_MEMLOCK");
	pinned = foll_pinned();
	huge_loop(_metadata, p, EFAULT, pinned, 2000);
	munmap(p, 1 << 20);
}

TEST(submit_plain_pointer_over_memlock_is_enomem)
{
	struct rlimit rl = { 64 << 10, 64 << 10 };
	size_t count = 1 << 16;			/* 256 KiB of fp32 */
	float *sb = map_buf(count * 4), *rb = map_buf(count * 4);
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	struct cluster c;
	long long pinned;
	int fd = kc_open(_metadata);

	ASSERT_NE(NULL, sb);
	ASSERT_NE(NULL, rb);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	pinned = foll_pinned();			/* exact while still root */
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.count = count;
	s.send.addr = (uintptr_t)sb;
	s.recv.addr = (uintptr_t)rb;
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_GE(pinned, foll_pinned_settle(pinned, UNPRIV_SETTLE_MS));
	/* Within the limit it runs. */
	s.count = 4096;
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, wait_one(fd, &cpl));
	EXPECT_GE(pinned, foll_pinned_settle(pinned, UNPRIV_SETTLE_MS));
	close(fd);
}

/* What a second process sees on the owner's file: EPERM, except info. */
static int foreign_attempts(int fd, __u64 handle, float *buf)
{
	struct kcoll_info info = { .size = sizeof(info) };
	struct kcoll_mem_dereg dr = { .size = sizeof(dr), .handle = handle };
	struct kcoll_mem_reg reg = { .size = sizeof(reg), .addr = (uintptr_t)buf,
				     .len = 4096 };
	struct kcoll_abort ab = { .size = sizeof(ab) };
	struct kcoll_completion cpl;
	struct kcoll_reap rp = { .size = sizeof(rp), .entries = (uintptr_t)&cpl, .max = 1,
				 .entry_size = sizeof(cpl) };
	struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
				  .count = 16 };
	struct cluster c;
	int bad = 0;

	s.send.handle = handle;
	s.recv.addr = (uintptr_t)buf;
	cluster_single(&c, PORT + 1);
	if (ioctl(fd, KCOLL_IOC_INFO, &info))
		bad |= 1;
	if (!submit(fd, &s) || errno != EPERM)
		bad |= 2;
	if (!ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr) || errno != EPERM)
		bad |= 4;
	if (!ioctl(fd, KCOLL_IOC_MEM_REG, &reg) || errno != EPERM)
		bad |= 8;
	if (!ioctl(fd, KCOLL_IOC_REAP, &rp) || errno != EPERM)
		bad |= 16;
	if (!ioctl(fd, KCOLL_IOC_ABORT, &ab) || errno != EPERM)
		bad |= 32;
	if (!comm_create(fd, &c, -1, NULL) || errno != EPERM)
		bad |= 64;
	return bad;
}

/* The owner's communicator and registration still work. */
static void owner_still_works(struct __test_metadata *_metadata, int fd, __u64 h, float *buf)
{
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	int i;

	for (i = 0; i < 16; i++)
		buf[i] = (float)(i * 3);
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.count = 16;
	s.send.handle = h;
	s.recv.addr = (uintptr_t)(buf + 512);
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, s.op_id);			/* the child submitted nothing */
	ASSERT_EQ(0, wait_one(fd, &cpl));
	for (i = 0; i < 16; i++)
		EXPECT_EQ((float)(i * 3), buf[512 + i]);
}

TEST(forked_child_cannot_use_parents_file)
{
	float *buf = map_buf(4096);
	struct cluster c;
	int fd = kc_open(_metadata), status;
	pid_t pid;
	__u64 h;

	ASSERT_NE(NULL, buf);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	h = reg_buf(fd, buf, 4096);
	ASSERT_NE(0, h);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(foreign_attempts(fd, h, buf));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("refusals missing: mask %#x",
					      WEXITSTATUS(status));
	owner_still_works(_metadata, fd, h, buf);
	close(fd);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, b = 'f';
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST(file_passed_over_unix_socket_is_eperm)
{
	float *buf = map_buf(4096);
	struct cluster c;
	int sv[2], status;
	pid_t pid;
	__u64 h;
	int fd;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	/* The receiver exists before the file does: it inherits nothing. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		float *mine = map_buf(4096);
		int got;

		close(sv[0]);
		got = recv_fd(sv[1]);
		if (got < 0 || !mine)
			_exit(255);
		_exit(foreign_attempts(got, 1, mine));
	}
	close(sv[1]);
	fd = kc_open(_metadata);
	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	h = reg_buf(fd, buf, 4096);
	ASSERT_EQ(1, h);
	ASSERT_EQ(0, send_fd(sv[0], fd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("refusals missing: mask %#x",
					      WEXITSTATUS(status));
	owner_still_works(_metadata, fd, h, buf);
	close(sv[0]);
	close(fd);
}

TEST(child_own_file_is_its_own)
{
	/* The rule is per file, not per module: a child's own open works. */
	float *buf = map_buf(4096);
	int fd = kc_open(_metadata), status;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	close(fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kcoll_completion cpl;
		struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_FP32,
					  .count = 16 };
		struct cluster c;
		int cfd = open(KC_DEV, O_RDWR);

		cluster_single(&c, PORT);
		s.send.handle = cfd < 0 ? 0 : reg_buf(cfd, buf, 4096);
		s.recv.addr = (uintptr_t)(buf + 512);
		if (cfd < 0 || comm_create(cfd, &c, -1, NULL) || !s.send.handle ||
		    submit(cfd, &s) || wait_one(cfd, &cpl))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

KC_HARNESS_MAIN
