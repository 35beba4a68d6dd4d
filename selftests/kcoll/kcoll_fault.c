// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll fault test: every rank runs AllReduce in a loop and prints
 * "kcoll-fault: running" after a few good operations; the runner injects
 * a fault on that marker (kill a rank, delete an rxe device, stop a VM).
 * A surviving rank passes when an operation completes with an error
 * within the time limit and the communicator refuses the next one with
 * an error too; nothing may hang.  A killed rank may also die between two
 * operations, after sending all the survivors needed of the last one: then
 * that operation completes (exactly) and the next submission is refused,
 * which passes as well.
 *
 * What a rank accepts, from the environment (the same on every rank):
 *   KCOLL_FAULT_TIMEOUT_MS   the communicator's operation timeout
 *                            (default 15000)
 *   KCOLL_FAULT_EXPECT       errno names the failing operation (or the
 *                            refused submission) may end with, comma-
 *                            separated (default: any error)
 *   KCOLL_FAULT_NODE, KCOLL_FAULT_EXPECT_NODE
 *                            the node the fault hits, and the errno names
 *                            its own ranks accept instead
 *   KCOLL_FAULT_MAX_MS       the failing operation must end within this
 *                            many ms of its submission (default 4 x the
 *                            timeout); an ETIMEDOUT must not come before
 *                            the timeout
 * After the failure every rank closes its communicator and checks that the
 * pages pinned with FOLL_PIN (/proc/vmstat) return to their number before
 * the communicator existed.
 *
 *   kcoll-vm run -n 3 --module kcoll.ko \
 *     -f "kill-rank:rank=2,from=0,marker=kcoll-fault: running" -- kcoll_fault
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/kcoll.h"
/* Only for kcoll_util.h's helpers: this test is a plain program. */
#include "kselftest_harness.h"
#include "kcoll_util.h"

static const struct { int err; const char *name; } errnames[] = {
	{ ETIMEDOUT, "ETIMEDOUT" }, { ECONNRESET, "ECONNRESET" },
	{ ECONNREFUSED, "ECONNREFUSED" }, { ECONNABORTED, "ECONNABORTED" },
	{ EHOSTUNREACH, "EHOSTUNREACH" }, { ENETUNREACH, "ENETUNREACH" },
	{ ENETDOWN, "ENETDOWN" }, { ENODEV, "ENODEV" }, { ENXIO, "ENXIO" },
	{ EIO, "EIO" }, { ECANCELED, "ECANCELED" }, { EPIPE, "EPIPE" },
};

static const char *errname(int err)
{
	size_t i;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return "E?";
}

/* Is @err one of the names in @list (comma-separated; NULL or "": any)? */
static int err_expected(int err, const char *list)
{
	const char *name = errname(err), *p;
	size_t n = strlen(name);

	if (!list || !*list)
		return 1;
	for (p = list; *p; p += strcspn(p, ","), p += *p == ',')
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return 1;
	return 0;
}

/*
 * Close the communicator, then wait up to 10 s for the pinned pages to
 * come back to @base.  Returns the exit status: 0 if @ok and they did.
 */
static int finish(int fd, float *data, size_t count, unsigned int rank, long long base,
		  int ok, const char *expect)
{
	long long now;
	int i;

	if (!ok)
		printf("kcoll-fault: rank %u: not the expected error (%s)\n", rank,
		       expect && *expect ? expect : "any");
	close(fd);
	munmap(data, count * 4);
	for (i = 0, now = foll_pinned(); now != base && i < 200; i++, now = foll_pinned())
		usleep(50000);
	printf("kcoll-fault: rank %u: pinned pages %lld before, %lld after close\n", rank,
	       base, now);
	if (now != base)
		ok = 0;
	printf("kcoll-fault: rank %u: %s\n", rank, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

int main(void)
{
	unsigned int rank = env_u32("KCOLL_RANK", 0), n = env_u32("KCOLL_NRANKS", 1);
	unsigned int per = env_u32("KCOLL_RANKS_PER_NODE", 1);
	unsigned int base = env_u32("KCOLL_PORT", 16667) - env_u32("KCOLL_LOCAL_RANK", 0);
	unsigned int timeout_ms = env_u32("KCOLL_FAULT_TIMEOUT_MS", 15000);
	unsigned int max_ms = env_u32("KCOLL_FAULT_MAX_MS", 4 * timeout_ms);
	const char *ips = getenv("KCOLL_NODE_IPS"), *expect = getenv("KCOLL_FAULT_EXPECT");
	const char *fnode = getenv("KCOLL_FAULT_NODE"), *mynode = getenv("KCOLL_NODE");
	struct kcoll_mem_reg reg = { .size = sizeof(reg) };
	long long pin_base, pin_reg;
	static struct kcoll_rank ranks[64];
	struct kcoll_comm_create cc = { .size = sizeof(cc) };
	size_t count = 1 << 18, i;
	char buf[1024], *tok, *save = NULL;
	unsigned int node = 0, l, it;
	float *data;
	double t0;
	int fd;

	if (!ips || n < 2 || n > 64) {
		fprintf(stderr, "kcoll-fault: needs the cluster environment of kcoll-vm\n");
		return 4;
	}
	snprintf(buf, sizeof(buf), "%s", ips);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), node++)
		for (l = 0; l < per && node * per + l < n; l++) {
			struct kcoll_rank *r = &ranks[node * per + l];

			r->family = KCOLL_AF_INET;
			inet_pton(AF_INET, tok, r->addr);
			r->port = base + l;
			r->server_id = node;
		}
	if (fnode && mynode && !strcmp(fnode, mynode))
		expect = getenv("KCOLL_FAULT_EXPECT_NODE");
	pin_base = foll_pinned();
	fd = open("/dev/kcoll", O_RDWR);
	if (fd < 0) {
		perror("kcoll-fault: /dev/kcoll");
		return 4;
	}
	cc.rank = rank;
	cc.nranks = n;
	cc.ranks = (uintptr_t)ranks;
	cc.rank_size = sizeof(ranks[0]);
	cc.eventfd = -1;
	cc.timeout_ms = timeout_ms;
	cc.connect_timeout_ms = 60000;
	if (ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc)) {
		perror("kcoll-fault: create");
		return 1;
	}
	data = mmap(NULL, count * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED)
		return 1;
	/*
	 * Registered, so pinned for the communicator's whole life: the count
	 * must rise now and come back when the communicator goes.
	 */
	reg.addr = (uintptr_t)data;
	reg.len = count * 4;
	if (ioctl(fd, KCOLL_IOC_MEM_REG, &reg)) {
		perror("kcoll-fault: register");
		return 1;
	}
	pin_reg = foll_pinned();
	printf("kcoll-fault: rank %u: pinned pages %lld before, %lld registered\n", rank,
	       pin_base, pin_reg);
	/* /proc/vmstat lags by the per-CPU deltas not yet folded in: half. */
	if (pin_reg < pin_base + (long long)(count * 4 / 4096 / 2)) {
		printf("kcoll-fault: rank %u: the registration pinned too little; FAIL\n", rank);
		return 1;
	}
	for (it = 0; it < 200; it++) {
		struct kcoll_submit s = { .size = sizeof(s) };
		struct kcoll_completion cpl;
		struct kcoll_reap r = {
			.size = sizeof(r), .flags = KCOLL_REAP_WAIT, .entries = (uintptr_t)&cpl,
			.max = 1, .entry_size = sizeof(cpl), .timeout_ms = 4 * timeout_ms,
		};

		for (i = 0; i < count; i++)
			data[i] = 1.0f;
		s.op = KCOLL_OP_ALLREDUCE;
		s.dtype = KCOLL_FP32;
		s.redop = KCOLL_SUM;
		s.count = count;
		s.send.handle = reg.handle;
		s.recv.handle = reg.handle;
		t0 = kc_now_s();
		if (ioctl(fd, KCOLL_IOC_SUBMIT, &s)) {
			int err = errno;

			printf("kcoll-fault: rank %u: submit %u refused: %s (%s)\n", rank, it,
			       strerror(err), errname(err));
			if (it <= 3) {
				printf("kcoll-fault: rank %u: FAIL (before the fault)\n", rank);
				return 1;
			}
			return finish(fd, data, count, rank, pin_base, err_expected(err, expect),
				      expect);
		}
		if (ioctl(fd, KCOLL_IOC_REAP, &r)) {
			printf("kcoll-fault: rank %u: reap failed: %s (a hang?)\n", rank,
			       strerror(errno));
			return 1;
		}
		if (cpl.status) {
			int err = -cpl.status, ok = err_expected(err, expect);
			double took = kc_now_s() - t0;

			printf("kcoll-fault: rank %u: op %u ended with %s (%s) after %.1f s\n", rank,
			       it, strerror(err), errname(err), took);
			if (took * 1000 > max_ms) {
				printf("kcoll-fault: rank %u: later than %u ms\n", rank, max_ms);
				ok = 0;
			}
			if (err == ETIMEDOUT && took * 1000 + 50 < timeout_ms) {
				printf("kcoll-fault: rank %u: timed out before %u ms\n", rank,
				       timeout_ms);
				ok = 0;
			}
			if (!ioctl(fd, KCOLL_IOC_SUBMIT, &s)) {
				printf("kcoll-fault: rank %u: communicator still accepts operations\n",
				       rank);
				return 1;
			}
			printf("kcoll-fault: rank %u: next submit refused: %s (%s)\n", rank,
			       strerror(errno), errname(errno));
			return finish(fd, data, count, rank, pin_base, ok, expect);
		}
		if (data[0] != (float)n || data[count - 1] != (float)n) {
			printf("kcoll-fault: rank %u: wrong result %g\n", rank, data[0]);
			return 1;
		}
		if (it == 3) {
			printf("kcoll-fault: running\n");
			fflush(stdout);
		}
	}
	printf("kcoll-fault: rank %u: no fault seen\n", rank);
	return 1;
}
