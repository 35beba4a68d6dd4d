/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module counts as refused on a communicator, through collctl's
 * netlink client (tools/collctl/collctl_nl.h), for the tests that play
 * impostors.  Include after kcoll_util.h.
 */
#ifndef KCOLL_REFUSED_H
#define KCOLL_REFUSED_H

#include "collctl_nl.h"

/* Connections refused on communicator @id, or -1 (none such, or no count). */
static inline long long kc_comm_refused(__u64 id)
{
	struct cc_comm cm;
	struct cc_nl *nl;
	char err[256];
	long long n = -1;

	if (cc_nl_open(&nl, err, sizeof(err)))
		return -1;
	if (!cc_nl_get(nl, id, &cm, err, sizeof(err))) {
		n = cm.has_auth ? (long long)cm.refused : -1;
		cc_comm_release(&cm);
	}
	cc_nl_close(nl);
	return n;
}

#endif /* KCOLL_REFUSED_H */
