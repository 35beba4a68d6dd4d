/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -V/--version of coll-perf, coll-sim and collctl: the same three lines
 * in every tool, so a bug report says which tool, library and module ran.
 */
#ifndef KC_TOOLS_VERSION_H
#define KC_TOOLS_VERSION_H

#include <stdio.h>

/*
 * "PROG 0.1.0 (kcoll)", "libcoll 0.1 (ABI 1)" and the module behind
 * @device (NULL: /dev/kcoll): "module: 0.1.0, ABI 1", or "module: not
 * loaded" when the device is missing (not an error: -V still exits 0).
 */
void tool_print_version(FILE *f, const char *prog, const char *device);

#endif
