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
	case EPERM:
		return "permission denied on /dev/kcoll: check the device node's mode or run "
		       "with the needed privileges";
	case EINVAL:
		return "invalid argument (coll_last_error() or the kernel log says which)";
	case ENOTCONN:
		return "no communicator on this file";
	case EBUSY:
		return "busy: a communicator already exists on this file, or the registration "
		       "is used by an operation not yet completed";
	case ETIMEDOUT:
		return "timed out: a peer did not answer in time (check that every rank runs "
		       "and the connect/operation timeouts)";
	case EHOSTUNREACH:
		return "a peer's address is unreachable over RDMA (check the rank table's "
		       "device_ip and the RDMA link)";
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
		return "operation cancelled (the communicator was aborted)";
	case EPROTO:
		return "ranks disagree on the operation (its kind, element type, reduce "
		       "operation, count or counts, or root) or on the sequence of operations";
	case EOPNOTSUPP:
		return "the configured algorithm cannot run this operation";
	case ENOMEM:
		return "out of memory, or over RLIMIT_MEMLOCK for pinned buffers "
		       "(raise it with ulimit -l)";
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
