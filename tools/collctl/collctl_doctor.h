/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl doctor: what a user checks on a node before running a job
 * (collctl_doctor.c).
 */
#ifndef COLLCTL_DOCTOR_H
#define COLLCTL_DOCTOR_H

#include <stdbool.h>

struct cc_doctor_env {
	const char *prog;
	const char *device;		/* the kcoll device; NULL: /dev/kcoll */
	bool json;
};

/* collctl doctor ARGS (argv[0] is "doctor"): exit status 0, 1 or 2. */
int cc_doctor(const struct cc_doctor_env *env, int argc, char **argv);

#endif /* COLLCTL_DOCTOR_H */
