/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ranks share through the runner's run directory.  Times across VMs
 * on the host's clock: a rank stamps a file in its directory of the
 * shared run directory (9p: the attributes are the host's), and any rank
 * reads another's stamp (needs KCOLL_OUTDIR, which kcoll-vm sets).  And
 * requests to the runner to cut a node off or kill it (KCOLL_FAULT_REQ).
 * For kcoll_death, kcoll_leave, kcoll_stall and kcoll_shrink.
 */
#ifndef KCOLL_STAMP_H
#define KCOLL_STAMP_H

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "kcoll_util.h"

/* A file @name of the runner's out/ directory (shared by all VMs). */
static inline void out_path(char *p, size_t len, const char *name)
{
	char dir[PATH_MAX / 2];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", getenv("KCOLL_OUTDIR"));
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	snprintf(p, len, "%s/%s", dir, name);
}

/* A file of rank @rank's directory in the run directory. */
static inline void stamp_path(char *p, size_t len, unsigned int rank, const char *name)
{
	char rel[PATH_MAX / 2];

	snprintf(rel, sizeof(rel), "rank.%u/%s", rank, name);
	out_path(p, len, rel);
}

/* Write our stamp @name; returns its time on the host's clock, or -1. */
static inline double stamp(unsigned int rank, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	int fd;

	stamp_path(p, sizeof(p), rank, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, "x", 1) != 1 || fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	close(fd);
	return st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/*
 * This VM's clock on the host's, for a time that must hold the event and
 * nothing else: a 9p round trip took 10-200 ms in a busy virtual cluster,
 * which a stamp puts into the times it measures.  Each sample writes a
 * file between two readings of the local clock; the host set the file's
 * time (coarse: up to @tick late) in between, which bounds the offset
 * from both sides.  The bounds of all samples are intersected; an empty
 * intersection (a host tick longer than @tick) falls back to the sample
 * with the shortest round trip.  Returns host time - CLOCK_MONOTONIC and
 * sets *@err to half the width that remains, or returns NAN.
 */
#define HOST_CLOCK_SAMPLES	24
#define HOST_CLOCK_TICK		0.004	/* the host's file times at HZ=250 */

static inline double host_clock_offset(unsigned int rank, double *err)
{
	double lo = -INFINITY, hi = INFINITY, best_rtt = INFINITY, best = NAN;
	char p[PATH_MAX];
	int fd, i;

	stamp_path(p, sizeof(p), rank, "clock");
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NAN;
	for (i = 0; i < HOST_CLOCK_SAMPLES; i++) {
		double t0 = kc_now_s(), t1, host;
		struct stat st;

		if (pwrite(fd, "x", 1, 0) != 1)
			break;
		t1 = kc_now_s();
		if (fstat(fd, &st))
			break;
		host = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		if (host - t1 > lo)
			lo = host - t1;
		if (host + HOST_CLOCK_TICK - t0 < hi)
			hi = host + HOST_CLOCK_TICK - t0;
		if (t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			best = host + HOST_CLOCK_TICK / 2 - (t0 + t1) / 2;
		}
		sleep_ms(3);
	}
	close(fd);
	if (i < HOST_CLOCK_SAMPLES)
		return NAN;
	if (lo <= hi) {
		*err = (hi - lo) / 2;
		return (lo + hi) / 2;
	}
	*err = (best_rtt + HOST_CLOCK_TICK) / 2;
	return best;
}

/* Write our stamp @name holding host time @t (from host_clock_offset()). */
static inline int stamp_at(unsigned int rank, const char *name, double t)
{
	char p[PATH_MAX], b[32];
	int fd, n = snprintf(b, sizeof(b), "%.6f\n", t), ret = -1;

	stamp_path(p, sizeof(p), rank, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, b, n) == n)
		ret = 0;
	close(fd);
	return ret;
}

/* Wait up to @ms for rank @rank's stamp_at() @name; the time it holds, or -1. */
static inline double stamp_at_wait(unsigned int rank, const char *name, unsigned int ms)
{
	double until = kc_now_s() * 1e3 + ms, t;
	char p[PATH_MAX], b[32];
	ssize_t n;
	int fd;

	stamp_path(p, sizeof(p), rank, name);
	for (;;) {
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, b, sizeof(b) - 1);
			close(fd);
			if (n > 0 && b[n - 1] == '\n') {
				b[n] = 0;
				t = strtod(b, NULL);
				return t > 0 ? t : -1;
			}
		}
		if (kc_now_s() * 1e3 > until)
			return -1;
		sleep_ms(5);
	}
}

/* Wait up to @ms for file @p to exist with a host time of @after or later; that time, or -1. */
static inline double path_wait(const char *p, double after, unsigned int ms)
{
	struct stat st;
	double until = kc_now_s() * 1e3 + ms, t;

	for (;;) {
		if (!stat(p, &st)) {
			t = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
			if (t >= after)
				return t;
		}
		if (kc_now_s() * 1e3 > until)
			return -1;
		sleep_ms(5);
	}
}

/* Wait up to @ms for rank @rank's stamp @name; its host time, or -1. */
static inline double stamp_wait(unsigned int rank, const char *name, unsigned int ms)
{
	char p[PATH_MAX];

	stamp_path(p, sizeof(p), rank, name);
	return path_wait(p, 0, ms);
}

/*
 * Cut this node off the network, or join it again: the runner sets the
 * node's tap on the bridge down or up (kcoll-vm's link-down, link-up),
 * so the VM itself, its eth0 and rxe0 stay as they are and its packets
 * are lost, as when a cable or a switch goes.  The runner carries a
 * request out on its next poll (0.2 s); a cut is stamped before it is
 * asked for, and the runner stamps when it did (link_done_wait()).
 */
/* Ask the runner for fault @act ("link-down", "kill-vm") on this rank's node. */
static inline int fault_request(const char *act)
{
	const char *req = getenv("KCOLL_FAULT_REQ");
	char line[64];
	int fd, n, ret = -1;

	if (!req)
		return -1;
	n = snprintf(line, sizeof(line), "%s:node=%d\n", act, env_u32("KCOLL_NODE", 0));
	fd = open(req, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, line, n) == n)
		ret = 0;
	close(fd);
	return ret;
}

static inline int link_request(bool up)
{
	return fault_request(up ? "link-up" : "link-down");
}

/*
 * When the runner set node @node's link down (@up false) or up, at or
 * after host time @asked (a stamp written before the request), waiting
 * up to @ms: the runner stamps out/fault.link-ACTION.nodeN once done.
 * A time measured from it leaves out how long the runner took to poll.
 */
static inline double link_done_wait(unsigned int node, bool up, double asked, unsigned int ms)
{
	char p[PATH_MAX], name[64];

	snprintf(name, sizeof(name), "fault.%s.node%u", up ? "link-up" : "link-down", node);
	out_path(p, sizeof(p), name);
	return path_wait(p, asked, ms);
}

#endif /* KCOLL_STAMP_H */
