/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A communicator's first fault (KCOLL_IOC_FAULT) in words: libcoll's
 * coll_last_error() after a failed operation and `collctl show` say the
 * same thing.  Not part of coll.h: it takes the module's struct.
 */
#ifndef COLL_FAULT_H
#define COLL_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/kcoll.h"

/*
 * Write @f, as seen by rank @self, into @buf (at most @len bytes, NUL
 * included).  @node(rank, arg), if not NULL, names a rank's node;
 * @algo(id), if not NULL, names an algorithm (else its number is shown).
 * Returns the length snprintf() would have written; 0 when @f says
 * nothing beyond its errno (KCOLL_FAULT_NONE).
 */
size_t coll_fault_format(const struct kcoll_fault *f, uint32_t self,
			 const char *(*node)(uint32_t rank, void *arg), void *arg,
			 const char *(*algo)(uint32_t id), char *buf, size_t len);

#endif /* COLL_FAULT_H */
