/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Times across VMs on the host's clock: a rank stamps a file in its
 * directory of the runner's shared run directory (9p: the attributes are
 * the host's), and any rank reads another's stamp.  Needs KCOLL_OUTDIR
 * (kcoll-vm sets it).  For kcoll_death and kcoll_leave.
 */
#ifndef KCOLL_STAMP_H
#define KCOLL_STAMP_H

#include <limits.h>
#include <sys/stat.h>

#include "kcoll_util.h"

/* A file of rank @rank's directory in the run directory (shared by all VMs). */
static inline void stamp_path(char *p, size_t len, unsigned int rank, const char *name)
{
	char dir[PATH_MAX / 2];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", getenv("KCOLL_OUTDIR"));
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	snprintf(p, len, "%s/rank.%u/%s", dir, rank, name);
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

/* Wait up to @ms for rank @rank's stamp @name; its host time, or -1. */
static inline double stamp_wait(unsigned int rank, const char *name, unsigned int ms)
{
	char p[PATH_MAX];
	struct stat st;
	double until = kc_now_s() * 1e3 + ms;

	stamp_path(p, sizeof(p), rank, name);
	for (;;) {
		if (!stat(p, &st))
			return st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		if (kc_now_s() * 1e3 > until)
			return -1;
		sleep_ms(5);
	}
}

#endif /* KCOLL_STAMP_H */
