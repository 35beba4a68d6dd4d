// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the tests (selftests/kcoll/kcoll_connect.c): the
 * next N connection attempts of this node are given up right after their
 * request went out, as when a loaded rank gives up an attempt.  The peer
 * has accepted the request and then sees a reject, or (when the reject
 * overtook its reply and so names no connection of the peer's) nothing
 * more, until the next request.  kcoll_conn.c does the giving up.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/moduleparam.h>

#include "kcoll.h"

static unsigned int kcoll_fault_abandon_connects;
module_param_named(fault_abandon_connects, kcoll_fault_abandon_connects, uint, 0644);
MODULE_PARM_DESC(fault_abandon_connects,
		 "testing: give up the next N outgoing connection attempts after sending their request (default 0)");

bool kcoll_fault_abandon_armed(void)
{
	return READ_ONCE(kcoll_fault_abandon_connects);
}

/* Take one of the attempts to give up: true when there was one left. */
bool kcoll_fault_abandon(void)
{
	unsigned int n = READ_ONCE(kcoll_fault_abandon_connects), old;

	while (n) {
		old = cmpxchg(&kcoll_fault_abandon_connects, n, n - 1);
		if (old == n)
			return true;
		n = old;
	}
	return false;
}
