// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll.ko selftest: what a user can put into the kernel log.
 *
 *  - An HCCL_ALGO string is the caller's: one with "\nBUG: fake" in it
 *    leaves no line of the log (as dmesg shows it, record by record from
 *    /dev/kmsg, newlines decoded) that starts with "BUG: fake".
 *  - 500 failed creations in a row (a bad algorithm string, port,
 *    address family, topology) add at most a handful of kcoll lines.
 *
 * One-rank communicators on the loopback address (no peer, no RDMA
 * traffic): every rank of the cluster may run this at the same time.
 * Needs root (/dev/kmsg).  Skips (exit 4) without /dev/kcoll.
 */
#include "kselftest_harness.h"
#include "kcoll_util.h"

#define PORT 17330

/* A one-rank communicator on @fd; its id, or 0 with errno set. */
static __u64 create1(int fd, const char *algo, unsigned int port)
{
	struct cluster c;
	struct kcoll_comm_create cc = {
		.size = sizeof(cc), .nranks = 1, .rank_size = sizeof(struct kcoll_rank),
		.eventfd = -1, .algo = (uintptr_t)algo,
	};

	cluster_single(&c, port);
	cc.ranks = (uintptr_t)c.ranks;
	return ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) ? 0 : cc.comm_id;
}

/* --------------------------------------------------------- kernel log */

/* /dev/kmsg from now on; -1 (errno) when it cannot be read. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Every record since kmsg_open(), its text unescaped (/dev/kmsg writes
 * a newline inside a record as \x0a), and so split into the lines dmesg
 * shows; @fn sees each line.  Returns the number of records.
 */
static int kmsg_lines(int fd, void (*fn)(const char *line, void *arg), void *arg)
{
	char rec[8192], text[8192];
	int records = 0;
	ssize_t n;

	for (;;) {
		char *p, *end, *o = text;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten meanwhile: go on from the oldest */
		if (n <= 0)
			break;
		rec[n] = 0;
		records++;
		p = strchr(rec, ';');
		if (!p)
			continue;
		end = strchr(++p, '\n');
		if (end)
			*end = 0;
		for (; *p; p++) {
			unsigned int c;

			if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &c) == 1) {
				*o++ = (char)c;
				p += 3;
			} else {
				*o++ = *p;
			}
		}
		*o = 0;
		for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
			fn(p, arg);
	}
	return records;
}

struct log_scan {
	int fake;		/* lines that start with "BUG: fake" */
	int kcoll;		/* lines that name kcoll */
	char first_fake[256];
};

static void scan_line(const char *line, void *arg)
{
	struct log_scan *s = arg;

	if (!strncmp(line, "BUG: fake", 9) && !s->fake++)
		snprintf(s->first_fake, sizeof(s->first_fake), "%s", line);
	if (strstr(line, "kcoll"))
		s->kcoll++;
}

TEST(algo_string_cannot_forge_a_log_line)
{
	static const char *const algos[] = {
		"\nBUG: fake", "level1:ring\nBUG: fake", "level1:ring;\r\nBUG: fake oops",
		"allreduce=level1:ring/\nBUG: fake\n",
	};
	struct log_scan s = {};
	int fd, kmsg;
	size_t i;

	kmsg = kmsg_open();
	if (kmsg < 0)
		SKIP(return, "/dev/kmsg: %s (needs root)", strerror(errno));
	fd = kc_open(_metadata);
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		EXPECT_EQ(0, create1(fd, algos[i], PORT));
		EXPECT_EQ(EINVAL, errno);
	}
	close(fd);
	kmsg_lines(kmsg, scan_line, &s);
	close(kmsg);
	EXPECT_EQ(0, s.fake) TH_LOG("forged: \"%s\"", s.first_fake);
}

TEST(failed_creates_add_a_bounded_number_of_lines)
{
	struct kcoll_rank r[3];
	struct log_scan s = {};
	int fd, kmsg, i, records, refused = 0;

	kmsg = kmsg_open();
	if (kmsg < 0)
		SKIP(return, "/dev/kmsg: %s (needs root)", strerror(errno));
	fd = kc_open(_metadata);
	/*
	 * Past the rate limit's interval (5 s) since what earlier tests
	 * logged: the first refusals are logged, so some lines must come.
	 */
	sleep_ms(6000);
	for (i = 0; i < 500; i++) {
		struct kcoll_comm_create cc = {
			.size = sizeof(cc), .nranks = 1, .ranks = (uintptr_t)r,
			.rank_size = sizeof(r[0]), .eventfd = -1,
		};
		unsigned int k;

		memset(r, 0, sizeof(r));
		for (k = 0; k < 3; k++) {
			r[k].family = KCOLL_AF_INET;
			r[k].port = PORT + 1 + k;
			inet_pton(AF_INET, "127.0.0.1", r[k].addr);
		}
		switch (i % 4) {
		case 0:		/* HCCL_ALGO the parser refuses */
			cc.algo = (uintptr_t)"level1:no-such-algorithm";
			break;
		case 1:		/* port out of range */
			r[0].port = 0;
			break;
		case 2:		/* unknown address family */
			r[0].family = 77;
			break;
		case 3:		/* a server's ranks not contiguous */
			cc.nranks = 3;
			r[1].server_id = 1;
			break;
		}
		if (ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc) && errno == EINVAL)
			refused++;
	}
	close(fd);
	records = kmsg_lines(kmsg, scan_line, &s);
	close(kmsg);
	EXPECT_EQ(500, refused);
	TH_LOG("%d records, %d kcoll lines", records, s.kcoll);
	EXPECT_LE(1, s.kcoll);
	EXPECT_LE(s.kcoll, 20);
}

KC_HARNESS_MAIN
