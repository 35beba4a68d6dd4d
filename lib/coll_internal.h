/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libcoll internals: shared by the lib/ sources and the unit tests, not installed. */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>

#include "coll.h"
#include "uapi/linux/kcoll.h"

#define COLL_DEVICE	"/dev/kcoll"
#define COLL_SYSFS	"/sys/class/misc/kcoll/"

/* Not exported from libcoll.so (the static archive still links them). */
#define COLL_HIDDEN	__attribute__((visibility("hidden")))

struct coll_mr {
	struct coll_mr *next;
	uintptr_t addr;
	size_t len;
	uint64_t handle;
};

struct coll_request {
	struct coll_request *next, *prev;	/* comm's outstanding list */
	coll_comm_t *comm;
	bool done;
	struct coll_status st;
};

struct coll_comm {
	int fd;
	int efd;
	uint32_t rank, nranks;
	uint64_t comm_id;
	struct coll_mr *mrs;
	struct coll_request pending;		/* list head, submission order */
	uint32_t npending;
};

/* Record the calling thread's detailed message; returns @err. */
COLL_HIDDEN int coll_seterr(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
COLL_HIDDEN void coll_clearerr(void);

/*
 * A communicator object around an already open @fd, without creating the
 * module's communicator (unit tests use fd -1 to check argument
 * validation).  Returns NULL on ENOMEM.
 */
COLL_HIDDEN coll_comm_t *coll_comm_wrap(int fd, uint32_t rank, uint32_t nranks);

/*
 * The communicator's secret: @secret if set, else the file
 * $KCOLL_SECRET_FILE, else the string $KCOLL_SECRET, into @buf (room for
 * KCOLL_SECRET_MAX + 1 bytes); *@len 0 when there is none.  *@from names
 * the source for messages.  0 or a negative errno (message set).
 */
COLL_HIDDEN int coll_secret_get(const void *secret, size_t secret_len, uint8_t *buf,
				size_t *len, const char **from);

/* Open @device and check its ABI version; fd or negative errno (message set). */
COLL_HIDDEN int coll_dev_open(const char *device, struct kcoll_info *info);

#endif /* COLL_INTERNAL_H */
