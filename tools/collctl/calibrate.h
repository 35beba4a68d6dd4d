/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collctl calibrate: measure the links of every topology level of a rank
 * table with the module itself and fit automatic selection's link model
 * to them (collctl_fit.c).  Runs on every rank, like coll-perf.
 */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include <stdbool.h>

#include "kc_cost.h"

struct cc_calib_env {
	const char *prog;
	const char *sysfs;		/* where --write puts the model */
	const char *device;		/* NULL: libcoll's default /dev/kcoll */
	bool json;
	struct kc_cost_model start;	/* the module's model now */
};

/* collctl calibrate ARGS (argv[0] is "calibrate"): exit status 0, 1 or 2. */
int cc_calibrate(const struct cc_calib_env *env, int argc, char **argv);

#endif /* CALIBRATE_H */
