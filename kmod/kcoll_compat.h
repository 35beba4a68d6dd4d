/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels kcoll builds against (Debian 6.1
 * and 6.12) that the module meets, in one place.
 */
#ifndef KCOLL_COMPAT_H
#define KCOLL_COMPAT_H

#include <linux/eventfd.h>

/*
 * 6.8 dropped the count argument: every signal adds one.  Kbuild probes
 * the header (KCOLL_EVENTFD_SIGNAL_ONE) so distribution backports work.
 */
static inline void kcoll_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef KCOLL_EVENTFD_SIGNAL_ONE
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

#endif /* KCOLL_COMPAT_H */
