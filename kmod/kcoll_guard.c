// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing a node: what keeps one user of kcoll from hurting the others.
 *
 * The log.  Messages that a local user (bad input) or a remote peer (a
 * connection request) can cause share one rate limit, kcoll_user_rs
 * (kcoll_info_rl() and kcoll_warn_rl() in kcoll.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "kcoll.h"

DEFINE_RATELIMIT_STATE(kcoll_user_rs, DEFAULT_RATELIMIT_INTERVAL, DEFAULT_RATELIMIT_BURST);
