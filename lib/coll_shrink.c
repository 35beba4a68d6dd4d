// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcoll: coll_comm_shrink(), the survivors of a failure form a new
 * communicator of just them (MPIX_Comm_shrink, ncclCommShrink).
 *
 * Who is alive is what the module learnt before the connections went
 * down (KCOLL_IOC_PEERS, kmod/kcoll_peers.c): a rank that said farewell,
 * or that another rank found gone, or that vanished without a word is
 * dead; one that said its communicator failed is alive.  The first rank
 * to fail tells every peer, so the survivors see the same set.
 *
 * Nothing more is exchanged: the new communicator's 128-bit id is derived
 * from the old one's and the list of survivors, so the survivors meet in
 * it only if they agree (the module's listener tells communicators apart
 * by that id), and a rank that saw another set is not connected but
 * fails at its connect timeout.  The old communicator's secret is kept:
 * the survivors are members already.  Every rank's port is 0 (the
 * module's listener), since the old communicator may still hold its own
 * ports.  The ranks keep their servers and super-nodes, so the new
 * topology is what is left of the old one (a server that lost a rank is
 * a smaller server).
 *
 * The connections are the old ones where both ends still hold them: a
 * failure parks the connection to every live peer (kmod/kcoll_adopt.c),
 * and the module takes it over for the new communicator given the old
 * one's file and each survivor's old rank (KCOLL_CREATE_F_PARENT); the
 * others are made anew.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "coll_internal.h"

/* The ranks @fates calls alive, into @keep (old ranks, in order); returns how many. */
uint32_t coll_shrink_survivors(const uint8_t *fates, uint32_t n, uint32_t *keep)
{
	uint32_t i, m = 0;

	for (i = 0; i < n; i++)
		if (fates[i] == KCOLL_FATE_ALIVE || fates[i] == KCOLL_FATE_FAILED)
			keep[m++] = i;
	return m;
}

/* "0,1,3": the old ranks of @keep, for messages. */
static void coll_shrink_list(const uint32_t *keep, uint32_t m, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < m && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%u", i ? "," : "", keep[i]);
	if (off >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

static int coll_shrink_fates(coll_comm_t *c, uint8_t *fates)
{
	struct kcoll_peers p = {
		.size = sizeof(p),
		.nranks = c->nranks,
		.fates = (uintptr_t)fates,
	};

	if (ioctl(c->fd, KCOLL_IOC_PEERS, &p) == 0)
		return 0;
	if (errno == ENOTTY)
		return coll_seterr(-EOPNOTSUPP, "coll_comm_shrink: the loaded kcoll module "
				   "cannot say which ranks are alive: load a module with "
				   "KCOLL_FEAT_PEERS");
	return coll_seterr(-errno, "coll_comm_shrink: KCOLL_IOC_PEERS: %s", strerror(errno));
}

int coll_comm_shrink(coll_comm_t *comm, coll_comm_t **newcomm)
{
	struct coll_parent parent;
	uint32_t *keep = NULL, m;
	uint8_t *fates = NULL;
	char list[256];
	int ret;

	coll_clearerr();
	if (!newcomm)
		return coll_seterr(-EINVAL, "coll_comm_shrink: newcomm pointer is NULL");
	*newcomm = NULL;
	if (!comm || !comm->ranks || comm->fd < 0)
		return coll_seterr(-EINVAL, "coll_comm_shrink: no communicator");
	fates = calloc(comm->nranks, 1);
	keep = calloc(comm->nranks, sizeof(*keep));
	if (!fates || !keep) {
		ret = coll_seterr(-ENOMEM, "coll_comm_shrink: out of memory");
		goto out;
	}
	ret = coll_shrink_fates(comm, fates);
	if (ret)
		goto out;
	m = coll_shrink_survivors(fates, comm->nranks, keep);
	parent.fd = comm->fd;
	parent.ranks = keep;
	ret = coll_child_create(comm, keep, m, "kcoll shrink", comm->shrinks++, NULL,
				&parent, newcomm);
	if (ret) {
		char why[512];

		snprintf(why, sizeof(why), "%s", coll_last_error());
		coll_shrink_list(keep, m, list, sizeof(list));
		coll_seterr(ret, "coll_comm_shrink: the survivors seen here (ranks %s of %u) "
			    "could not form a communicator: %s%s", list, comm->nranks, why,
			    ret == -ETIMEDOUT ? " (a survivor that saw other ranks alive "
			    "waits for another communicator)" : "");
	}
out:
	free(fates);
	free(keep);
	return ret;
}
