/* SPDX-License-Identifier: GPL-2.0 */
/* The kcoll module's attributes in sysfs, for collctl and collctl calibrate. */
#ifndef COLLCTL_SYSFS_H
#define COLLCTL_SYSFS_H

#include <stddef.h>

/* Read @dir/@name into @buf, trailing newline and spaces removed.  0 or -errno. */
int cc_sysfs_read(const char *dir, const char *name, char *buf, size_t len);
/* Write @val to @dir/@name.  0 or -errno (open or write). */
int cc_sysfs_write(const char *dir, const char *name, const char *val);

#endif /* COLLCTL_SYSFS_H */
