// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: reproducers of kernel problems kcoll_fuzz found,
 * each reduced to the few calls that show it.
 *
 *  - A pin request (MEM_REG, or a plain SUBMIT buffer) for up to
 *    KCOLL_MAX_REG_BYTES (2^36) allocated its page array, 128 MiB, before
 *    charging RLIMIT_MEMLOCK and before anything showed the range was
 *    mapped.  Any user (the device is 0666) could so make the kernel
 *    allocate and zero 128 MiB per call; a few threads at a time ran a
 *    VM into the OOM killer (kcoll_fuzz seed 1796538063969580, 100000
 *    calls, 6.1).  Now the charge comes first (ENOMEM over the limit) and
 *    a range that is not mapped fails with EFAULT before any allocation.
 *
 * One-rank communicators on the loopback address: every rank of the
 * cluster runs this alone on its node.  Skips (exit 4) without /dev/kcoll.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT 17290
#define HUGE_LEN (1ULL << 36)		/* KCOLL_MAX_REG_BYTES */

/* What the kernel logs when an allocation runs a machine out of memory. */
static const char *const oom_marks[] = {
	"invoked oom-killer", "vmalloc error", "page allocation failure", "Out of memory",
};

/* Lines about memory exhaustion logged since kc_kmsg_open(); printed. */
static int kmsg_oom_lines(int fd)
{
	char rec[4096];
	int found = 0;
	unsigned int i;
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		for (i = 0; i < sizeof(oom_marks) / sizeof(oom_marks[0]); i++) {
			if (strstr(rec, oom_marks[i])) {
				printf("# kmsg: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
				found++;
			}
		}
	}
	return found;
}

struct huge {
	int fd;
	void *page;
	bool submit;			/* a plain SUBMIT buffer, else MEM_REG */
	int expect;			/* the errno every call must get */
	int good, bad, last_err;
	_Atomic bool stop;
	long long min_avail;
};

static void *huge_calls(void *arg)
{
	struct huge *h = arg;
	int i;

	for (i = 0; i < 8; i++) {
		struct kcoll_mem_reg reg = { .size = sizeof(reg), .addr = (uintptr_t)h->page,
					     .len = HUGE_LEN };
		/* uint8 in place: one pin of HUGE_LEN - 4096 bytes */
		struct kcoll_submit s = { .op = KCOLL_OP_ALLREDUCE, .dtype = KCOLL_UINT8,
					  .redop = KCOLL_SUM, .count = HUGE_LEN - 4096,
					  .send.addr = (uintptr_t)h->page,
					  .recv.addr = (uintptr_t)h->page };
		int ret = h->submit ? submit(h->fd, &s) : ioctl(h->fd, KCOLL_IOC_MEM_REG, &reg);

		if (ret == -1 && errno == h->expect) {
			__atomic_fetch_add(&h->good, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&h->bad, 1, __ATOMIC_RELAXED);
			h->last_err = ret ? errno : 0;
		}
	}
	return NULL;
}

static void *mem_monitor(void *arg)
{
	struct huge *h = arg;
	long long v;

	while (!atomic_load(&h->stop)) {
		v = kc_mem_available_kib();
		if (v >= 0 && v < h->min_avail)
			h->min_avail = v;
		sleep_ms(2);
	}
	return NULL;
}

/*
 * Eight threads make eight pin requests each for HUGE_LEN bytes starting
 * at a mapped page (the rest is not mapped) while a ninth samples
 * MemAvailable: every call gets @expect, the memory available never
 * drops by 64 MiB, and the kernel logs no allocation failure.
 */
static void huge_pins(struct __test_metadata *_metadata, int fd, bool use_submit, int expect)
{
	struct huge h = { .fd = fd, .submit = use_submit, .expect = expect };
	int kfd = kc_kmsg_open(), i;
	pthread_t tid[8], mon;
	long long start;

	h.page = map_low(4096);
	ASSERT_NE(NULL, h.page);
	start = kc_mem_available_kib();
	ASSERT_LT(0, start);
	h.min_avail = start;
	ASSERT_EQ(0, pthread_create(&mon, NULL, mem_monitor, &h));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, huge_calls, &h));
	for (i = 0; i < 8; i++)
		pthread_join(tid[i], NULL);
	atomic_store(&h.stop, true);
	pthread_join(mon, NULL);
	EXPECT_EQ(64, h.good) TH_LOG("%d calls did not get %s (last: %s)", h.bad,
				     strerror(expect), strerror(h.last_err));
	EXPECT_GT(64LL << 10, start - h.min_avail)
		TH_LOG("MemAvailable fell from %lld to %lld KiB during the calls", start,
		       h.min_avail);
	if (kfd >= 0) {
		EXPECT_EQ(0, kmsg_oom_lines(kfd));
		close(kfd);
	}
	munmap(h.page, 4096);
}

/* Root (CAP_IPC_LOCK: no RLIMIT_MEMLOCK): the range is not mapped, EFAULT. */
TEST(unmapped_huge_registrations_fail_without_allocating)
{
	int fd = kc_open(_metadata);

	huge_pins(_metadata, fd, false, EFAULT);
	close(fd);
}

TEST(unmapped_huge_plain_buffers_fail_without_allocating)
{
	struct cluster c;
	int fd = kc_open(_metadata);

	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	huge_pins(_metadata, fd, true, EFAULT);
	close(fd);
}

/* A user over RLIMIT_MEMLOCK by far: ENOMEM, from the charge, before any work. */
TEST(huge_pins_over_memlock_fail_without_allocating)
{
	struct rlimit rl = { 64 << 10, 64 << 10 };
	struct cluster c;
	int fd = kc_open(_metadata);

	cluster_single(&c, PORT);
	ASSERT_EQ(0, comm_create(fd, &c, -1, NULL));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	if (kc_become(65534, true))
		SKIP(return, "cannot drop root");
	huge_pins(_metadata, fd, false, ENOMEM);
	huge_pins(_metadata, fd, true, ENOMEM);
	close(fd);
}

KC_HARNESS_MAIN
