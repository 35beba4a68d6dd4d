// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: no ioctl of a file waits for another, a creation
 * can be cancelled, and aborting is final.
 *
 *  - While KCOLL_IOC_COMM_CREATE waits for a peer that never comes (the
 *    second rank of the table is at a port nobody listens on), the
 *    file's other ioctls return at once (INFO, MEM_REG, MEM_DEREG work;
 *    SUBMIT, REAP and a second CREATE get EBUSY), the kernel reports no
 *    hung task with hung_task_timeout_secs at 3, and ABORT cancels the
 *    creation promptly (ECANCELED) and the file can create again.  Once
 *    the module held the file's lock across the connect: every other
 *    ioctl waited uninterruptibly, up to connect_timeout_ms.
 *  - A signal ends the creation's wait with EINTR, and the owner's last
 *    close() of the file from another thread cancels it; either way the
 *    rank's port is free again at once.
 *  - On two ranks, the peer aborts first (our operation fails with
 *    ECONNRESET); after our own KCOLL_IOC_ABORT every submission fails
 *    with ECANCELED, not with the error that ended the communicator.
 *  - Send buffers in read-only memory, plain or registered with
 *    KCOLL_MEM_REG_RDONLY, work across the cluster (the device reads
 *    them); nothing stays pinned.
 *
 * The creation tests use this node's address (KCOLL_IP) and run alone on
 * their node; the others use the whole cluster.  Skips (exit 4) without
 * /dev/kcoll.
 */
#include <pthread.h>
#include <signal.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT_BASE	17400
#define PORT_OFF	80
#define HUNG_SYSCTL	"/proc/sys/kernel/hung_task_timeout_secs"
/* Longer than any test waits for a creation to end by itself. */
#define CONNECT_MS	15000
/* "Promptly": an ioctl that does not wait, under TCG on a busy host. */
#define PROMPT_MS	1000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Ports of this rank's creation tests: local ranks of a node apart. */
static unsigned int test_port(unsigned int n)
{
	return PORT_BASE + 10 * env_u32("KCOLL_LOCAL_RANK", 0) + 2 * n;
}

/* A creation on another thread: waits for the peer at @port + 1. */
struct creator {
	int fd;
	struct kcoll_rank r[2];
	struct kcoll_comm_create cc;
	pthread_t t;
	int ret, err;
	double start, end;
	int done;		/* atomic */
};

static void *creator_main(void *arg)
{
	struct creator *c = arg;

	c->start = now_ms();
	c->ret = ioctl(c->fd, KCOLL_IOC_COMM_CREATE, &c->cc);
	c->err = errno;
	c->end = now_ms();
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The two-rank table of this node's address: we are rank 0 at @port and
 * wait for rank 1 at @port + 1 (passive), or rank 1 at @port + 1 and
 * connect to rank 0 at @port, where nobody listens (active: refused,
 * retried until the timeout).
 */
static void table_init(struct creator *c, int fd, const char *ip, unsigned int port,
		       bool active, unsigned int timeout_ms)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	for (i = 0; i < 2; i++) {
		c->r[i].family = KCOLL_AF_INET;
		inet_pton(AF_INET, ip, c->r[i].addr);
		c->r[i].port = port + i;
	}
	c->cc.size = sizeof(c->cc);
	c->cc.rank = active ? 1 : 0;
	c->cc.nranks = 2;
	c->cc.ranks = (uintptr_t)c->r;
	c->cc.rank_size = sizeof(c->r[0]);
	c->cc.eventfd = -1;
	c->cc.connect_timeout_ms = timeout_ms;
}

static int creator_start(struct creator *c)
{
	return pthread_create(&c->t, NULL, creator_main, c);
}

/* Wait up to @ms for the creator to return; then join it (however long). */
static bool creator_join(struct creator *c, unsigned int ms)
{
	double until = now_ms() + ms;
	bool in_time;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE) && now_ms() < until)
		sleep_ms(10);
	in_time = __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
	pthread_join(c->t, NULL);
	return in_time;
}

static const char *node_ip(void)
{
	const char *ip = getenv("KCOLL_IP");

	return ip && *ip ? ip : NULL;
}

/*
 * The same table again on a new attempt of @fd, 1 s timeout: ETIMEDOUT
 * shows the port was free to listen on (EADDRINUSE: something of the
 * cancelled creation was left) and the file was free to create (EBUSY).
 */
static int recreate_errno(int fd, const char *ip, unsigned int port)
{
	struct creator c;

	table_init(&c, fd, ip, port, false, 1000);
	if (!ioctl(fd, KCOLL_IOC_COMM_CREATE, &c.cc))
		return 0;
	return errno;
}

/* ------------------------------------------------------ hung task */

static int sysctl_read(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int sysctl_write(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%d\n", v) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* Whether a record since kc_kmsg_open() contains @what; prints it. */
static bool kmsg_has(int fd, const char *what)
{
	char rec[2048];
	bool found = false;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten meanwhile: go on */
		if (n <= 0)
			return found;
		rec[n] = 0;
		if (strstr(rec, what)) {
			fprintf(stderr, "# kernel: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			found = true;
		}
	}
}

/* One call must not wait: checked with its duration. */
#define PROMPT(call, what) ({							\
	double __t = now_ms();							\
	int __r = (call);							\
	EXPECT_GT(__t + PROMPT_MS, now_ms()) TH_LOG("%s waited %.0f ms", what,	\
						    now_ms() - __t);		\
	__r; })

TEST(create_waiting_for_a_peer_blocks_no_other_ioctl)
{
	struct kcoll_info info = { .size = sizeof(info) };
	struct kcoll_mem_dereg dr = { .size = sizeof(dr) };
	struct kcoll_completion cpl;
	struct kcoll_reap rp = { .size = sizeof(rp), .entries = (uintptr_t)&cpl, .max = 1,
				 .entry_size = sizeof(cpl) };
	struct kcoll_submit s = { .op = KCOLL_OP_BARRIER };
	struct kcoll_abort ab = { .size = sizeof(ab) };
	unsigned int port = test_port(0), rounds = 0;
	const char *ip = node_ip();
	int hung_old = -1, kmsg, fd;
	struct creator c, second;
	struct cluster one;
	double t, until;
	void *buf = map_buf(1 << 16);

	ASSERT_NE(NULL, buf);
	if (!ip)
		SKIP(return, "no KCOLL_IP (run under kcoll-vm)");
	kmsg = kc_kmsg_open();
	fd = kc_open(_metadata);
	table_init(&c, fd, ip, port, false, CONNECT_MS);
	ASSERT_EQ(0, creator_start(&c));
	sleep_ms(300);
	ASSERT_FALSE(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		TH_LOG("the creation ended at once: %s", strerror(c.err));
	}
	/*
	 * One rank per node changes the sysctl, and puts it back below: no
	 * ASSERT in between, which would leave the test with it at 3.
	 */
	if (geteuid() == 0 && env_u32("KCOLL_LOCAL_RANK", 0) == 0) {
		hung_old = sysctl_read(HUNG_SYSCTL);
		if (hung_old >= 0 && sysctl_write(HUNG_SYSCTL, 3))
			hung_old = -1;
	}

	/* Longer than twice the hung-task timeout: the checker runs every 3 s. */
	until = now_ms() + 7500;
	while (now_ms() < until) {
		struct kcoll_mem_reg reg = { .size = sizeof(reg), .addr = (uintptr_t)buf,
					     .len = 1 << 16 };

		rounds++;
		EXPECT_EQ(0, PROMPT(ioctl(fd, KCOLL_IOC_INFO, &info), "INFO"));
		EXPECT_EQ(0, PROMPT(ioctl(fd, KCOLL_IOC_MEM_REG, &reg), "MEM_REG"));
		dr.handle = reg.handle;
		EXPECT_EQ(0, PROMPT(ioctl(fd, KCOLL_IOC_MEM_DEREG, &dr), "MEM_DEREG"));
		EXPECT_EQ(-1, PROMPT(submit(fd, &s), "SUBMIT"));
		EXPECT_EQ(EBUSY, errno);
		rp.flags = 0;
		EXPECT_EQ(-1, PROMPT(ioctl(fd, KCOLL_IOC_REAP, &rp), "REAP"));
		EXPECT_EQ(EBUSY, errno);
		rp.flags = KCOLL_REAP_WAIT;
		EXPECT_EQ(-1, PROMPT(ioctl(fd, KCOLL_IOC_REAP, &rp), "REAP (wait)"));
		EXPECT_EQ(EBUSY, errno);
		cluster_single(&one, 17499);
		EXPECT_EQ(-1, PROMPT(comm_create(fd, &one, -1, NULL), "second CREATE"));
		EXPECT_EQ(EBUSY, errno);
		if (_metadata->passed == 0)
			break;
		sleep_ms(250);
	}
	TH_LOG("%u rounds of ioctls while the creation waited", rounds);
	EXPECT_FALSE(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE));

	/* ABORT cancels it, promptly, and returns once it is undone. */
	t = now_ms();
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab)) TH_LOG("%s", strerror(errno));
	EXPECT_GT(t + 2000, now_ms()) TH_LOG("ABORT took %.0f ms", now_ms() - t);
	EXPECT_TRUE(creator_join(&c, 2000)) TH_LOG("the creation did not end");
	EXPECT_EQ(-1, c.ret);
	EXPECT_EQ(ECANCELED, c.err) TH_LOG("creation: %s", strerror(c.err));
	EXPECT_EQ(0, c.cc.comm_id);		/* a failed ioctl writes nothing */

	if (kmsg >= 0)
		EXPECT_FALSE(kmsg_has(kmsg, "blocked for more than"));
	if (hung_old >= 0)
		sysctl_write(HUNG_SYSCTL, hung_old);

	/* The file creates again: the port is free, nothing is busy. */
	EXPECT_EQ(ETIMEDOUT, recreate_errno(fd, ip, port));
	table_init(&second, fd, ip, port, false, CONNECT_MS);
	ASSERT_EQ(0, creator_start(&second));
	sleep_ms(200);
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab));
	EXPECT_TRUE(creator_join(&second, 2000));
	EXPECT_EQ(ECANCELED, second.err);
	cluster_single(&one, 17499);
	ASSERT_EQ(0, comm_create(fd, &one, -1, NULL)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, submit(fd, &s));
	EXPECT_EQ(0, wait_one(fd, &cpl));
	/* With a communicator, ABORT aborts it as before. */
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab));
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ECANCELED, errno);
	close(fd);
	if (kmsg >= 0)
		close(kmsg);
	munmap(buf, 1 << 16);
}

/* ------------------------------------------------------ signals, close */

static void on_usr1(int sig)
{
	(void)sig;
}

static void interrupted(struct __test_metadata *_metadata, bool active)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	unsigned int port = test_port(active ? 2 : 1);
	const char *ip = node_ip();
	struct creator c;
	double t;
	int fd;

	if (!ip)
		SKIP(return, "no KCOLL_IP (run under kcoll-vm)");
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	fd = kc_open(_metadata);
	table_init(&c, fd, ip, port, active, CONNECT_MS);
	ASSERT_EQ(0, creator_start(&c));
	sleep_ms(500);
	ASSERT_FALSE(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		TH_LOG("the creation ended at once: %s", strerror(c.err));
	}
	t = now_ms();
	ASSERT_EQ(0, pthread_kill(c.t, SIGUSR1));
	EXPECT_TRUE(creator_join(&c, 2000)) TH_LOG("a signal did not end the creation");
	EXPECT_EQ(-1, c.ret);
	EXPECT_EQ(EINTR, c.err) TH_LOG("creation: %s after %.0f ms", strerror(c.err),
				       c.end - t);
	/* Nothing half-done: the same file creates again on the same port. */
	EXPECT_EQ(ETIMEDOUT, recreate_errno(fd, ip, active ? port + 1 : port));
	close(fd);
}

TEST(create_waiting_for_a_peer_is_interrupted_by_a_signal)
{
	interrupted(_metadata, false);
}

TEST(create_connecting_to_nobody_is_interrupted_by_a_signal)
{
	interrupted(_metadata, true);
}

TEST(create_is_cancelled_by_close_from_another_thread)
{
	unsigned int port = test_port(3);
	const char *ip = node_ip();
	struct creator c;
	int fd, dupfd;
	double t;

	if (!ip)
		SKIP(return, "no KCOLL_IP (run under kcoll-vm)");
	fd = kc_open(_metadata);
	dupfd = dup(fd);
	ASSERT_LE(0, dupfd);
	table_init(&c, fd, ip, port, false, CONNECT_MS);
	ASSERT_EQ(0, creator_start(&c));
	sleep_ms(500);
	/* Another descriptor of the file stays open: no cancellation. */
	close(dupfd);
	sleep_ms(500);
	ASSERT_FALSE(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		TH_LOG("the creation ended: %s", strerror(c.err));
	}
	t = now_ms();
	close(fd);
	EXPECT_TRUE(creator_join(&c, 2000)) TH_LOG("close() did not end the creation");
	EXPECT_EQ(-1, c.ret);
	EXPECT_EQ(ECANCELED, c.err) TH_LOG("creation: %s after %.0f ms", strerror(c.err),
					   c.end - t);
	/* Its port is free again. */
	fd = kc_open(_metadata);
	EXPECT_EQ(ETIMEDOUT, recreate_errno(fd, ip, port));
	close(fd);
}

/* ------------------------------------------------- abort is final */

TEST(abort_after_the_peer_aborted_then_submit_is_ecanceled)
{
	size_t count = 1 << 16;
	float *b = map_buf(count * sizeof(float));
	struct kcoll_abort ab = { .size = sizeof(ab) };
	struct kcoll_completion cpl;
	struct kcoll_submit s;
	struct cluster c;
	int fd, st;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF));
	if (c.nranks < 2)
		SKIP(return, "needs peers (run under kcoll-vm with -n >= 2)");
	if (c.rank >= 2)
		SKIP(return, "ranks 0 and 1 take part");
	c.nranks = 2;
	fd = kc_open(_metadata);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL)) TH_LOG("%s", strerror(errno));
	memset(&s, 0, sizeof(s));
	s.op = KCOLL_OP_ALLREDUCE;
	s.dtype = KCOLL_FP32;
	s.count = count;
	s.send.addr = (uintptr_t)b;
	s.recv.addr = (uintptr_t)b;
	if (c.rank == 1) {
		/* Rank 0's operation runs and waits for us: end it from here. */
		sleep_ms(3000);
		EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab));
		EXPECT_EQ(-1, submit(fd, &s));
		EXPECT_EQ(ECANCELED, errno);
		close(fd);
		return;
	}
	ASSERT_EQ(0, submit(fd, &s)) TH_LOG("%s", strerror(errno));
	st = wait_one(fd, &cpl);
	ASSERT_EQ(-ECONNRESET, st) TH_LOG("the operation ended with %d", st);
	/* The peer ended the communicator: that is what submissions get... */
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ECONNRESET, errno);
	/* ...until we abort it ourselves. */
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_ABORT, &ab));
	EXPECT_EQ(-1, submit(fd, &s));
	EXPECT_EQ(ECANCELED, errno) TH_LOG("after ABORT: %s", strerror(errno));
	close(fd);
}

/* ------------------------------------------------- read-only send buffers */

/* fp32 values that sum exactly. */
static float val(unsigned int rank, size_t i)
{
	return (float)(rank * 1000 + i % 977);
}

static float *ro_vals(unsigned int rank, size_t n, bool ro)
{
	size_t len = (n * sizeof(float) + 4095) & ~(size_t)4095, i;
	float *p = map_buf(len);

	if (!p)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = val(rank, i);
	if (ro && mprotect(p, len, PROT_READ)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static int run(int fd, __u32 op, size_t count, struct kcoll_buf sb, void *rb)
{
	struct kcoll_completion cpl;
	struct kcoll_submit s;

	memset(&s, 0, sizeof(s));
	s.op = op;
	s.dtype = KCOLL_FP32;
	s.redop = KCOLL_SUM;
	s.count = count;
	s.send = sb;
	s.recv.addr = (uintptr_t)rb;
	if (submit(fd, &s))
		return -1000 - errno;
	return wait_one(fd, &cpl);
}

TEST(readonly_send_buffers_across_the_cluster)
{
	const size_t n = 1 << 16;
	struct kcoll_mem_reg reg = { .size = sizeof(reg), .flags = KCOLL_MEM_REG_RDONLY };
	struct cluster c;
	float *ro, *ro_all, *late, *rb;
	unsigned int p, me, r;
	long long base, now;
	float sum0;
	size_t i;
	int fd;

	ASSERT_EQ(0, cluster_get_port(&c, PORT_OFF + 1));
	p = c.nranks;
	me = c.rank;
	base = foll_pinned_settle(foll_pinned(), 500);
	fd = kc_open(_metadata);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL)) TH_LOG("%s", strerror(errno));
	ro = ro_vals(me, n, true);
	ro_all = ro_vals(me, n * p, true);
	rb = map_buf(n * p * sizeof(float));
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, ro_all);
	ASSERT_NE(NULL, rb);
	sum0 = (float)(1000 * p * (p - 1) / 2);

	/* AllReduce from a read-only plain pointer. */
	ASSERT_EQ(0, run(fd, KCOLL_OP_ALLREDUCE, n, (struct kcoll_buf){ 0, (uintptr_t)ro }, rb));
	for (i = 0; i < n; i++)
		ASSERT_EQ(sum0 + p * (float)(i % 977), rb[i]) TH_LOG("AllReduce [%zu]", i);
	/* AllGather. */
	ASSERT_EQ(0, run(fd, KCOLL_OP_ALLGATHER, n, (struct kcoll_buf){ 0, (uintptr_t)ro }, rb));
	for (r = 0; r < p; r++)
		for (i = 0; i < n; i++)
			ASSERT_EQ(val(r, i), rb[r * n + i]) TH_LOG("AllGather [%u][%zu]", r, i);
	/* ReduceScatter: n * p elements from read-only memory. */
	ASSERT_EQ(0, run(fd, KCOLL_OP_REDUCESCATTER, n,
			 (struct kcoll_buf){ 0, (uintptr_t)ro_all }, rb));
	for (i = 0; i < n; i++)
		ASSERT_EQ(sum0 + p * (float)((me * n + i) % 977), rb[i])
			TH_LOG("ReduceScatter [%zu]", i);

	/* A read-only registration written after it was made: the data counts. */
	late = map_buf(n * sizeof(float));
	ASSERT_NE(NULL, late);
	reg.addr = (uintptr_t)late;
	reg.len = n * sizeof(float);
	ASSERT_EQ(0, ioctl(fd, KCOLL_IOC_MEM_REG, &reg)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < n; i++)
		late[i] = val(me, i);
	ASSERT_EQ(0, run(fd, KCOLL_OP_ALLREDUCE, n, (struct kcoll_buf){ reg.handle, 0 }, rb));
	for (i = 0; i < n; i++)
		ASSERT_EQ(sum0 + p * (float)(i % 977), rb[i]) TH_LOG("registered [%zu]", i);

	close(fd);
	now = foll_pinned_settle(base, 10000);
	EXPECT_GE(base, now) TH_LOG("%lld pages still pinned", now - base);
	munmap(ro, n * sizeof(float));
	munmap(ro_all, n * p * sizeof(float));
	munmap(late, n * sizeof(float));
	munmap(rb, n * p * sizeof(float));
}

KC_HARNESS_MAIN
