/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Version of the kcoll module.  Keep in step with PACKAGE_VERSION in
 * dkms.conf; `make check-version` compares the two.
 */
#ifndef KCOLL_VERSION_H
#define KCOLL_VERSION_H

#define KCOLL_VERSION	"0.1.0"

#endif /* KCOLL_VERSION_H */
