// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-khz - print the host's time-stamp counter frequency in kHz.
 *
 * Under qemu TCG a guest's TSC is the host's, while the PIT, HPET and
 * PM timer it calibrates against are emulated: on a loaded host the
 * guest's calibration reads are delayed, it gives up ("Unable to
 * calibrate against PIT") or settles on a wild value, and a slow debug
 * kernel's clock then runs many times too fast.  kcoll-vm measures the
 * frequency here instead and boots debug kernels with tsc_early_khz=.
 *
 * The TSC and CLOCK_MONOTONIC_RAW both count real time, so a sample is
 * off only by the time between its paired reads, however long the sleep
 * between the pairs took: each sample brackets a 100 ms sleep, and the
 * median of five is printed.
 * Exit 1 where there is no usable TSC (not x86, or the reads failed).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

static double mono_raw_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	const struct timespec nap = { 0, 100000000 };
	double khz[5], t0, t1;
	uint64_t c0, c1;
	int i;

	for (i = 0; i < 5; i++) {
		c0 = __rdtsc();
		t0 = mono_raw_s();
		nanosleep(&nap, NULL);
		c1 = __rdtsc();
		t1 = mono_raw_s();
		if (t0 < 0 || t1 <= t0 || c1 <= c0)
			return 1;
		khz[i] = (double)(c1 - c0) / (t1 - t0) / 1000;
	}
	qsort(khz, 5, sizeof(khz[0]), cmp_double);
	printf("%.0f\n", khz[2]);
	return 0;
}
#else
int main(void)
{
	return 1;
}
#endif
