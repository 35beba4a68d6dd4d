/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Version of the kcoll module.  Keep in step with PACKAGE_VERSION in
 * dkms.conf; `make check-version` compares the two.
 */
#ifndef KCOLL_VERSION_H
#define KCOLL_VERSION_H

#define KCOLL_VERSION	"0.1.0"
/* The same as (major << 16) | (minor << 8) | patch, for KCOLL_IOC_INFO. */
#define KCOLL_VERSION_CODE	0x000100

#endif /* KCOLL_VERSION_H */
