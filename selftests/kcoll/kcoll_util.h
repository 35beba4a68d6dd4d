/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kcoll.ko selftests: opening /dev/kcoll (skipping
 * when the module is not loaded), becoming another user (kcoll_user.h),
 * the cluster's rank table from the environment tools/vm/kcoll-vm gives
 * every rank, and thin ioctl wrappers.
 *
 * Include after kselftest_harness.h.
 */
#ifndef KCOLL_UTIL_H
#define KCOLL_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/kcoll.h"
#include "kcoll_user.h"

/*
 * Plain TEST()s here talk to other ranks or to other processes: give them
 * the time a fixture test gets (the harness has no TEST_TIMEOUT()).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define KC_SYSFS "/sys/class/misc/kcoll/"

static inline __u64 env_u64(const char *name, __u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static inline int env_u32(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (int)strtoul(v, NULL, 0) : (int)def;
}

static inline int kc_open_(struct __test_metadata *_metadata)
{
	int fd = open(KC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, KC_DEV " missing: kcoll.ko not loaded");
	ASSERT_LE(0, fd);
	return fd;
}

/* SKIP() inside a helper only leaves the helper: leave the test too. */
#define kc_open(m) ({ int __fd = kc_open_(m); if (__fd < 0) return; __fd; })

/* The cluster's rank table, from the runner's environment. */
struct cluster {
	unsigned int rank, nranks;
	struct kcoll_rank ranks[64];
};

/*
 * Super-node of @node: KCOLL_SUPER_NODES holds the sizes given to
 * `kcoll-vm run --super-nodes` ("1,3": node0 in super-node 0, node1-3 in
 * 1; one size S: groups of S), which the runner writes only into its
 * JSON rank table; without it every node is in super-node 0.
 */
static inline unsigned int kc_super_node_of(unsigned int node)
{
	const char *l = getenv("KCOLL_SUPER_NODES");
	unsigned long first = 0, size;
	unsigned int pod = 0;
	char *end;

	if (l && *l && !strchr(l, ',')) {
		size = strtoul(l, &end, 10);
		return size ? node / size : 0;
	}
	while (l && *l) {
		size = strtoul(l, &end, 10);
		if (end == l || !size)
			return 0;
		if (node < first + size)
			return pod;
		first += size;
		pod++;
		l = *end == ',' ? end + 1 : end;
	}
	return pod ? pod - 1 : 0;
}

/*
 * Fill @c; @port_off shifts every rank's port (a second communicator
 * on the same nodes needs ports of its own).
 */
static inline int cluster_get_port(struct cluster *c, unsigned int port_off)
{
	const char *ips = getenv("KCOLL_NODE_IPS");
	unsigned int per = env_u32("KCOLL_RANKS_PER_NODE", 1);
	unsigned int base = env_u32("KCOLL_PORT", 16667) - env_u32("KCOLL_LOCAL_RANK", 0);
	char buf[1024], *save = NULL, *tok;
	unsigned int node = 0, i;

	base += port_off;
	memset(c, 0, sizeof(*c));
	c->rank = env_u32("KCOLL_RANK", 0);
	c->nranks = env_u32("KCOLL_NRANKS", 1);
	if (c->nranks > 64 || c->rank >= c->nranks)
		return -1;
	if (c->nranks == 1 || !ips) {
		c->nranks = 1;
		c->rank = 0;
		c->ranks[0].family = KCOLL_AF_INET;
		c->ranks[0].port = base;
		inet_pton(AF_INET, "127.0.0.1", c->ranks[0].addr);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", ips);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), node++) {
		for (i = 0; i < per; i++) {
			struct kcoll_rank *r = &c->ranks[node * per + i];

			if (node * per + i >= c->nranks)
				break;
			r->family = KCOLL_AF_INET;
			if (inet_pton(AF_INET, tok, r->addr) != 1)
				return -1;
			r->port = base + i;
			r->server_id = node;
			r->pod_id = kc_super_node_of(node);
		}
	}
	return 0;
}

static inline int cluster_get(struct cluster *c)
{
	return cluster_get_port(c, 0);
}

/* A one-rank cluster on the loopback address: no peer, no RDMA traffic. */
static inline void cluster_single(struct cluster *c, unsigned int port)
{
	memset(c, 0, sizeof(*c));
	c->nranks = 1;
	c->ranks[0].family = KCOLL_AF_INET;
	c->ranks[0].port = port;
	inet_pton(AF_INET, "127.0.0.1", c->ranks[0].addr);
}

/*
 * The operation timeout of the tests' communicators: 60 s, or
 * KCOLL_TEST_TIMEOUT_MS (the 64 MiB matrix under TCG needs more).
 */
static inline unsigned int kc_op_timeout_ms(void)
{
	return (unsigned int)env_u32("KCOLL_TEST_TIMEOUT_MS", 60000);
}

static inline int comm_create(int fd, const struct cluster *c, int efd, const char *algo)
{
	struct kcoll_comm_create cc = {
		.size = sizeof(cc),
		.rank = c->rank,
		.nranks = c->nranks,
		.ranks = (uintptr_t)c->ranks,
		.rank_size = sizeof(struct kcoll_rank),
		.eventfd = efd,
		.algo = (uintptr_t)algo,
		.connect_timeout_ms = 60000,
		.timeout_ms = kc_op_timeout_ms(),
	};

	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
}

/*
 * COMM_CREATE of @cc named @uid (NULL: by its rank table): 0 or -errno,
 * the module's id of it in *@id (may be NULL).
 */
static inline int kc_comm_create_named(int fd, struct kcoll_comm_create *cc,
				       const unsigned char *uid, __u64 *id)
{
	if (uid)
		memcpy(cc->uid, uid, sizeof(cc->uid));
	if (ioctl(fd, KCOLL_IOC_COMM_CREATE, cc))
		return -errno;
	if (id)
		*id = cc->comm_id;
	return 0;
}

static inline int submit(int fd, struct kcoll_submit *s)
{
	s->size = sizeof(*s);
	return ioctl(fd, KCOLL_IOC_SUBMIT, s);
}

/* Wait for one completion; returns its status, or -1000 - errno. */
static inline int wait_one(int fd, struct kcoll_completion *cpl)
{
	struct kcoll_reap r = {
		.size = sizeof(r),
		.flags = KCOLL_REAP_WAIT,
		.entries = (uintptr_t)cpl,
		.max = 1,
		.entry_size = sizeof(*cpl),
		/* Longer than the operation's own timeout. */
		.timeout_ms = 2 * kc_op_timeout_ms(),
	};

	if (ioctl(fd, KCOLL_IOC_REAP, &r))
		return -1000 - errno;
	if (r.count != 1)
		return -2000;
	return cpl->status;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double kc_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /dev/kmsg from now on (non-blocking), or -1 when it cannot be read. */
static inline int kc_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* The contents of @path (a sysfs or proc file), NUL-terminated; 0 or -1. */
static inline int kc_file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Write @val to @path in one write(); 0 or the errno of the open or write. */
static inline int kc_file_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		err = errno;
	close(fd);
	return err;
}

static inline void *map_buf(size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * @len bytes of memory at 4 GiB, low in the address space, so that 2^36
 * bytes (KCOLL_MAX_REG_BYTES) from them are user addresses: mmap() may
 * place a mapping within 64 GiB of the top, and a huge registration
 * from it would fail its address check (EFAULT) before anything the
 * test means to reach.  The rest of those 64 GiB stays unmapped.
 */
static inline void *map_low(size_t len)
{
	void *p = mmap((void *)(1UL << 32), len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, len);
	return p;
}

static inline __u64 reg_buf(int fd, void *p, size_t len)
{
	struct kcoll_mem_reg reg = { .size = sizeof(reg), .addr = (uintptr_t)p, .len = len };

	return ioctl(fd, KCOLL_IOC_MEM_REG, &reg) ? 0 : reg.handle;
}

/* MemAvailable of the node in KiB, or -1. */
static inline long long kc_mem_available_kib(void)
{
	long long v = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Fold every CPU's pending vmstat deltas into the totals /proc/vmstat
 * shows.  The kernel does that about once a second, or when a CPU's delta
 * passes a small threshold (a few pages on the test VMs): unfolded, a
 * one-page registration can show up a second late, and a baseline read
 * before it shows up makes the registration look leaked.  Writing
 * vm.stat_refresh needs root; unprivileged callers get the lazy totals
 * (and foll_pinned_settle() waits for the kernel's own fold).
 */
static inline void vmstat_fold(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return;
	n = write(fd, "1", 1);	/* failed: the lazy totals it is */
	(void)n;
	close(fd);
}

/*
 * Pages pinned with FOLL_PIN system-wide: the kernel's own counters
 * (/proc/vmstat, always present since 5.8).  kcoll pins every buffer that
 * way, so after a test this returns to its value before the test.
 */
static inline long long foll_pinned(void)
{
	long long acq = -1, rel = -1, v;
	char name[64];
	FILE *f;

	vmstat_fold();
	f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/* Poll the pinned count every 50 ms for up to @ms while it is (not) above @base. */
static inline long long foll_pinned_poll(long long base, unsigned int ms, bool rise)
{
	long long now = foll_pinned();

	while ((now > base) != rise && ms >= 50) {
		sleep_ms(50);
		ms -= 50;
		now = foll_pinned();
	}
	return now;
}

/*
 * Wait up to @ms for the pinned count to come back to @base or below: the
 * count is system-wide, and on a slow (debug) kernel a pin taken before
 * the baseline may be released meanwhile.  What kcoll pinned must go.
 */
static inline long long foll_pinned_settle(long long base, unsigned int ms)
{
	return foll_pinned_poll(base, ms, false);
}

/*
 * Wait up to @ms for the pinned count to rise above @base: what an
 * unprivileged caller (no vmstat_fold()) just pinned shows up with the
 * kernel's next fold.
 */
static inline long long foll_pinned_above(long long base, unsigned int ms)
{
	return foll_pinned_poll(base, ms, true);
}

/*
 * TEST_HARNESS_MAIN, but the whole binary skips (exit 4, KSFT_SKIP) when
 * the module is not loaded, rather than failing in fixtures.
 */
#define KC_HARNESS_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		if (access(KC_DEV, F_OK)) {				\
			ksft_print_header();				\
			ksft_exit_skip(KC_DEV " missing: kcoll.ko not loaded\n"); \
		}							\
		return test_harness_run(argc, argv);			\
	}

#endif /* KCOLL_UTIL_H */
