// SPDX-License-Identifier: GPL-2.0
/*
 * -V/--version for the tools (version.h).  The tools ship with the module
 * and the library of one tree: the tool's version is the project's
 * (kmod/kcoll_version.h); libcoll's and the ABI are what was compiled in;
 * the module's come from the loaded one through the info ioctl.
 */
#include <errno.h>
#include <string.h>

#include "coll.h"
#include "kmod/kcoll_version.h"
#include "uapi/linux/kcoll.h"
#include "version.h"

void tool_print_version(FILE *f, const char *prog, const char *device)
{
	struct coll_module_info mi;
	int ret;

	fprintf(f, "%s %s (kcoll)\n", prog, KCOLL_VERSION);
	fprintf(f, "libcoll %d.%d (ABI %d)\n", COLL_VERSION_MAJOR, COLL_VERSION_MINOR,
		KCOLL_ABI_VERSION);
	ret = coll_module_info(device, &mi);
	if (ret == -ENOENT || ret == -ENODEV || ret == -ENXIO)
		fprintf(f, "module: not loaded (%s)\n", device ? device : "/dev/kcoll");
	else if (ret)
		fprintf(f, "module: unknown (%s)\n", strerror(-ret));
	else
		fprintf(f, "module: %u.%u.%u, ABI %u%s\n", mi.version >> 16,
			(mi.version >> 8) & 0xff, mi.version & 0xff, mi.abi_version,
			mi.abi_version == KCOLL_ABI_VERSION ? "" : " (differs from libcoll's)");
}
