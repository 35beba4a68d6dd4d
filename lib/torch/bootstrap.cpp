// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: creating the process group, with the c10d Store as
 * libcoll's out-of-band allgather (coll_comm_init_oob()).
 *
 * torch.distributed calls the backend's creator with a PrefixStore of the
 * group (init_process_group and new_group alike) on the group's members
 * only.  So new_group() cannot be coll_comm_split() of the world
 * communicator (a split is collective over the parent: the non-members
 * would have to take part, and 1.13 does not call them); each group gets
 * its own communicator through coll_comm_init_oob() over its own store,
 * which is what a split makes too (a fresh unique id and secret on the
 * node's one listener), with one more exchange of addresses.
 *
 * Before that, every rank tells through the store whether it can use
 * kcoll at all (/dev/kcoll, ABI, eventfd completions): a rank without the
 * module fails every rank at once with its reason instead of leaving the
 * others waiting in the bootstrap until the store's timeout.
 */
#include <algorithm>
#include <cstring>
#include <limits>

#include "kcoll_torch.hpp"

extern "C" {
#include "uapi/linux/kcoll.h"
}

namespace kcoll_torch {

/*
 * struct coll_oob's allgather over the Store: rank r sets key
 * kcoll/ag/SEQ/r, then reads every rank's key (get() blocks until it is
 * set, up to the store's timeout, the process group's).  SEQ counts the
 * calls: every rank makes the same calls in the same order.
 */
static int store_allgather(const void *s, void *r, size_t len, void *ctx)
{
	auto *o = static_cast<StoreOob *>(ctx);
	const auto *b = static_cast<const uint8_t *>(s);
	std::string base = "kcoll/ag/" + std::to_string(o->seq++) + "/";

	try {
		o->store->set(base + std::to_string(o->rank), std::vector<uint8_t>(b, b + len));
		for (int i = 0; i < o->size; i++) {
			std::vector<uint8_t> v = o->store->get(base + std::to_string(i));

			if (v.size() != len) {
				fprintf(stderr, "kcoll: store key %s%d holds %zu bytes, %zu "
					"expected\n", base.c_str(), i, v.size(), len);
				return -1;
			}
			memcpy(static_cast<uint8_t *>(r) + i * len, v.data(), len);
		}
	} catch (const std::exception &e) {
		fprintf(stderr, "kcoll: the c10d store allgather failed: %s\n", e.what());
		return -1;
	}
	return 0;
}

/* 0 if this process can use kcoll, else a negative errno and @why. */
static int can_use_kcoll(std::string &why)
{
	struct coll_module_info info;
	int err = coll_module_info(nullptr, &info);

	if (err) {
		why = *coll_last_error() ? coll_last_error() : coll_strerror(err);
		return err;
	}
	if (!(info.features & KCOLL_FEAT_EVENTFD)) {
		why = "the loaded kcoll module does not signal completions on an eventfd "
		      "(KCOLL_FEAT_EVENTFD): load a kcoll.ko that does";
		return -EOPNOTSUPP;
	}
	return 0;
}

c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store> &store,
					      int rank, int size,
					      const std::chrono::duration<float> &timeout)
{
	auto oob = std::make_unique<StoreOob>(StoreOob{ store, rank, size });
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
	std::vector<int32_t> errs(size);
	std::string why;
	int32_t mine = can_use_kcoll(why);

	TORCH_CHECK(size > 0 && rank >= 0 && rank < size, "kcoll: rank ", rank,
		    " out of range for ", size, " ranks");
	TORCH_CHECK(store_allgather(&mine, errs.data(), sizeof(mine), oob.get()) == 0,
		    "kcoll: the c10d store exchange failed (is every rank started with the same "
		    "store and world size?)");
	TORCH_CHECK(!mine, "kcoll: cannot create the process group on rank ", rank, ": ", why);
	for (int i = 0; i < size; i++)
		TORCH_CHECK(!errs[i], "kcoll: cannot create the process group: rank ", i,
			    " cannot use kcoll: ", coll_strerror(errs[i]));

	/* The process group's timeout is every operation's (0: the module's default). */
	struct coll_comm_opts copts;
	memset(&copts, 0, sizeof(copts));
	copts.size = sizeof(copts);
	copts.timeout_ms = static_cast<uint32_t>(
		std::clamp<int64_t>(ms.count(), 1, std::numeric_limits<uint32_t>::max()));
	struct coll_oob_opts oopts;
	memset(&oopts, 0, sizeof(oopts));
	oopts.size = sizeof(oopts);
	oopts.comm = &copts;
	struct coll_oob o = { store_allgather, oob.get(), static_cast<uint32_t>(rank),
			      static_cast<uint32_t>(size) };
	coll_comm_t *comm = nullptr;
	int err = coll_comm_init_oob(&o, &oopts, &comm);

	TORCH_CHECK(!err, "kcoll: creating the communicator of ", size, " ranks failed: ",
		    *coll_last_error() ? coll_last_error() : coll_strerror(err));
	try {
		return c10::make_intrusive<ProcessGroupKcoll>(std::move(oob), comm, rank, size, ms);
	} catch (...) {
		coll_comm_destroy(comm);
		throw;
	}
}

} // namespace kcoll_torch
