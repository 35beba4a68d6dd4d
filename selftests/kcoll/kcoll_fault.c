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

static unsigned int env_u32(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : def;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	unsigned int rank = env_u32("KCOLL_RANK", 0), n = env_u32("KCOLL_NRANKS", 1);
	unsigned int per = env_u32("KCOLL_RANKS_PER_NODE", 1);
	unsigned int base = env_u32("KCOLL_PORT", 16667) - env_u32("KCOLL_LOCAL_RANK", 0);
	unsigned int timeout_ms = env_u32("KCOLL_FAULT_TIMEOUT_MS", 15000);
	const char *ips = getenv("KCOLL_NODE_IPS");
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
		s.send.addr = (uintptr_t)data;
		s.recv.addr = (uintptr_t)data;
		t0 = now_s();
		if (ioctl(fd, KCOLL_IOC_SUBMIT, &s)) {
			int err = errno;

			printf("kcoll-fault: rank %u: submit %u refused: %s; %s\n", rank, it,
			       strerror(err), it > 3 ? "PASS" : "FAIL (before the fault)");
			return it > 3 ? 0 : 1;
		}
		if (ioctl(fd, KCOLL_IOC_REAP, &r)) {
			printf("kcoll-fault: rank %u: reap failed: %s (a hang?)\n", rank,
			       strerror(errno));
			return 1;
		}
		if (cpl.status) {
			printf("kcoll-fault: rank %u: op %u ended with %s after %.1f s\n", rank, it,
			       strerror(-cpl.status), now_s() - t0);
			if (!ioctl(fd, KCOLL_IOC_SUBMIT, &s)) {
				printf("kcoll-fault: rank %u: communicator still accepts operations\n",
				       rank);
				return 1;
			}
			printf("kcoll-fault: rank %u: next submit refused: %s; PASS\n", rank,
			       strerror(errno));
			close(fd);
			return 0;
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
