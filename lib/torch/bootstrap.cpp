// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: creating the process group.
 *
 * torch.distributed calls the backend's creator with a PrefixStore of the
 * group (init_process_group and new_group alike) on the group's members
 * only.  The first kcoll group of the process (the world, in practice) is
 * bootstrapped with the c10d Store as libcoll's out-of-band allgather
 * (coll_comm_init_oob()).  A later group whose members all have that
 * first group is made from it by coll_comm_create_group(): the split
 * that needs only the members, since 1.13 does not call the others.  The
 * members exchange just their ranks in the first group through the store
 * (they learn them nowhere else) and, afterwards, the outcome; no
 * addresses, no new secret.  Groups whose members lack a common first
 * group (a gloo world with kcoll subgroups) are bootstrapped as the first.
 *
 * Before all that, every rank tells through the store whether it can use
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

/*
 * The process's first kcoll group, the parent of later ones: its engine
 * (whose lock guards libcoll calls on its communicator), its rank and id.
 * Held under root_mu while a group is made of it, so it cannot go meanwhile.
 */
struct Root {
	Engine *engine = nullptr;
	int32_t rank = -1;
	uint8_t uid[16] = {};
};
static std::mutex root_mu;
static Root root;

void forget_root(const Engine *e)
{
	std::lock_guard<std::mutex> lock(root_mu);

	if (root.engine == e)
		root = Root();
}

/* What each member tells the others first. */
struct Hello {
	int32_t err;		/* 0, or why this rank cannot use kcoll */
	int32_t root_rank;	/* its rank in its first kcoll group, -1: none */
	uint8_t root_uid[16];	/* that group's communicator id */
};

/* The members' ranks in their common first group, or empty if they have none. */
static std::vector<uint32_t> common_root(const std::vector<Hello> &all)
{
	std::vector<uint32_t> members;

	for (const auto &h : all) {
		if (h.root_rank < 0 || memcmp(h.root_uid, all[0].root_uid, sizeof(h.root_uid)))
			return {};
		members.push_back(static_cast<uint32_t>(h.root_rank));
	}
	return members;
}

/* Settings of a group's communicator: the process group's timeout is every operation's. */
static struct coll_comm_opts comm_opts(std::chrono::milliseconds ms)
{
	struct coll_comm_opts copts;

	memset(&copts, 0, sizeof(copts));
	copts.size = sizeof(copts);
	copts.timeout_ms = static_cast<uint32_t>(
		std::clamp<int64_t>(ms.count(), 1, std::numeric_limits<uint32_t>::max()));
	return copts;
}

/* A communicator over the store, as for the first group. */
static coll_comm_t *from_store(StoreOob *oob, std::chrono::milliseconds ms)
{
	struct coll_comm_opts copts = comm_opts(ms);
	struct coll_oob_opts oopts;
	memset(&oopts, 0, sizeof(oopts));
	oopts.size = sizeof(oopts);
	oopts.comm = &copts;
	struct coll_oob o = { store_allgather, oob, static_cast<uint32_t>(oob->rank),
			      static_cast<uint32_t>(oob->size) };
	coll_comm_t *comm = nullptr;
	int err = coll_comm_init_oob(&o, &oopts, &comm);

	TORCH_CHECK(!err, "kcoll: creating the communicator of ", oob->size, " ranks failed: ",
		    *coll_last_error() ? coll_last_error() : coll_strerror(err));
	return comm;
}

/*
 * The group of @members of the first group, then every member's outcome
 * through the store, so that all fail alike (one that fails early would
 * leave the others to their connect timeout, and say nothing to them).
 * The group's own timeout replaces the first group's.
 */
static coll_comm_t *from_root(StoreOob *oob, const std::vector<uint32_t> &members,
			      std::chrono::milliseconds ms)
{
	struct coll_comm_opts copts = comm_opts(ms);
	coll_comm_t *comm = nullptr;
	std::string why;
	int32_t err;

	{
		std::lock_guard<std::mutex> lock(root_mu);

		err = -ESRCH;
		why = "its first kcoll group was destroyed meanwhile";
		if (root.engine)
			err = root.engine->locked([&](coll_comm_t *parent) {
				int ret = coll_comm_create_group(parent, members.data(),
								 members.size(), &copts, &comm);

				why = *coll_last_error() ? coll_last_error() : coll_strerror(ret);
				return ret;
			});
	}
	std::vector<int32_t> errs(oob->size);

	if (store_allgather(&err, errs.data(), sizeof(err), oob)) {
		coll_comm_destroy(comm);
		TORCH_CHECK(false, "kcoll: the c10d store exchange failed after making the group");
	}
	TORCH_CHECK(!err, "kcoll: making the group of ", oob->size, " ranks on rank ", oob->rank,
		    " failed: ", why);
	for (int i = 0; i < oob->size; i++)
		if (errs[i]) {
			coll_comm_destroy(comm);
			TORCH_CHECK(false, "kcoll: making the group of ", oob->size, " ranks failed "
				    "on its rank ", i, ": ", coll_strerror(errs[i]));
		}
	return comm;
}

c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store> &store,
					      int rank, int size,
					      const std::chrono::duration<float> &timeout)
{
	auto oob = std::make_unique<StoreOob>(StoreOob{ store, rank, size });
	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
	std::vector<Hello> all(size);
	Hello mine = { 0, -1, {} };
	std::string why;

	TORCH_CHECK(size > 0 && rank >= 0 && rank < size, "kcoll: rank ", rank,
		    " out of range for ", size, " ranks");
	mine.err = can_use_kcoll(why);
	{
		std::lock_guard<std::mutex> lock(root_mu);

		if (root.engine) {
			mine.root_rank = root.rank;
			memcpy(mine.root_uid, root.uid, sizeof(root.uid));
		}
	}
	TORCH_CHECK(store_allgather(&mine, all.data(), sizeof(mine), oob.get()) == 0,
		    "kcoll: the c10d store exchange failed (is every rank started with the same "
		    "store and world size?)");
	TORCH_CHECK(!mine.err, "kcoll: cannot create the process group on rank ", rank, ": ", why);
	for (int i = 0; i < size; i++)
		TORCH_CHECK(!all[i].err, "kcoll: cannot create the process group: rank ", i,
			    " cannot use kcoll: ", coll_strerror(all[i].err));

	std::vector<uint32_t> members = common_root(all);
	coll_comm_t *comm = members.empty() ? from_store(oob.get(), ms) :
			    from_root(oob.get(), members, ms);
	c10::intrusive_ptr<ProcessGroupKcoll> pg;

	try {
		pg = c10::make_intrusive<ProcessGroupKcoll>(std::move(oob), comm, rank, size, ms);
	} catch (...) {
		coll_comm_destroy(comm);
		throw;
	}
	if (!members.empty()) {
		pg->origin = "group";
		pg->parent_ranks.assign(members.begin(), members.end());
	}
	std::lock_guard<std::mutex> lock(root_mu);

	if (!root.engine) {
		root.engine = &pg->engine();
		root.rank = rank;
		coll_comm_unique_id(comm, root.uid);
	}
	return pg;
}

} // namespace kcoll_torch
