// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcoll: error texts and the per-thread detailed message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coll_internal.h"

static _Thread_local char coll_errbuf[512];

int coll_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(coll_errbuf, sizeof(coll_errbuf), fmt, ap);
	va_end(ap);
	return err;
}

void coll_clearerr(void)
{
	coll_errbuf[0] = '\0';
}

const char *coll_last_error(void)
{
	return coll_errbuf;
}

const char *coll_errname(int err)
{
	const char *name = strerrorname_np(err < 0 ? -err : err);

	return name ? name : coll_strerror(err);
}

const char *coll_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case ENODEV:
		return "no kcoll device: the kcoll module is not loaded (run 'modprobe kcoll' "
		       "or 'insmod kcoll.ko'), or the RDMA device went away";
	case EPROTONOSUPPORT:
		return "kcoll module ABI version differs from libcoll's: install a libcoll "
		       "built for the loaded module (or load the matching module)";
	case EACCES:
		return "permission denied: on /dev/kcoll (check the device node's mode or run "
		       "with the needed privileges), or creating a communicator, this rank's "
		       "port is below 1024 and the process lacks CAP_NET_BIND_SERVICE";
	case EPERM:
		return "permission denied on /dev/kcoll: check the device node's mode or run "
		       "with the needed privileges";
	case EADDRNOTAVAIL:
		return "this rank's address (the rank table's device_ip) is not an address of "
		       "this node: check the rank table and this process's rank";
	case EINTR:
		return "interrupted by a signal (nothing was left half-done: call again)";
	case EINVAL:
		return "invalid argument (coll_last_error() or the kernel log says which)";
	case ENOTCONN:
		return "no communicator on this file";
	case EBUSY:
		return "busy: a communicator already exists on this file (or is being "
		       "created), or the registration is used by an operation not yet "
		       "completed";
	case ETIMEDOUT:
		return "timed out: a peer did not answer in time (check that every rank runs "
		       "and the connect/operation timeouts)";
	case EHOSTUNREACH:
		return "a peer is unreachable over RDMA: while creating, its address does not "
		       "resolve (check the rank table's device_ip and the RDMA link); during an "
		       "operation, it stopped acknowledging (its node died or the network to "
		       "it is cut; the kernel log names the rank)";
	case ECONNREFUSED:
		return "a peer refused the connection (is its rank started, with the same "
		       "rank table?)";
	case EADDRINUSE:
		return "this rank's port is already in use (another communicator or process "
		       "uses the rank table's device_port)";
	case ECONNRESET:
		return "a peer disconnected";
	case EIO:
		return "an RDMA transfer failed";
	case ECANCELED:
		return "cancelled: the communicator was aborted (or its creation cancelled)";
	case EKEYREJECTED:
		return "a peer could not prove the communicator's secret: give every rank "
		       "the same KCOLL_SECRET or KCOLL_SECRET_FILE";
	case EPROTO:
		return "ranks disagree on the operation (its kind, element type, reduce "
		       "operation, count or counts, root, number or algorithms)";
	case EOPNOTSUPP:
		return "the configured algorithm cannot run this operation";
	case ENOMEM:
		return "out of memory, over RLIMIT_MEMLOCK for pinned buffers "
		       "(raise it with ulimit -l; a limit of 0 pins nothing), or over the "
		       "module's user_max_bytes for communicators";
	case EAGAIN:
		return "too many operations in flight: complete some with coll_wait first";
	case ERANGE:
		return "buffer extends beyond its registration";
	case EOVERFLOW:
		return "size overflow";
	case EFAULT:
		return "bad buffer address";
	case ENOENT:
		return "not found (unknown registration, or nothing outstanding to wait for)";
	case E2BIG:
		return "structure has unknown non-zero fields for this module";
	case ENOTTY:
		return "not a kcoll device, or the module does not know this request";
	default:
		return strerror(err);
	}
}
