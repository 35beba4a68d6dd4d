// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: the "kcoll" process group of torch.distributed (PyTorch
 * 1.13, Debian's python3-torch/libtorch-dev), a thin adapter over libcoll.
 *
 * Every collective checks its tensors, maps dtype and reduction to
 * libcoll's, submits one asynchronous libcoll operation and returns a
 * WorkKcoll.  One completion thread per process group sleeps in poll() on
 * the communicator's eventfd (coll_comm_event_fd()), collects finished
 * requests with coll_test() and completes their Work (and its Future, which
 * DDP's communication hook waits on).  No thread per call, no busy loop.
 *
 * libcoll's communicator is not thread safe: every libcoll call on it goes
 * through Engine::mu_ (submission in the caller's thread, coll_test in the
 * completion thread).
 */
#ifndef KCOLL_TORCH_HPP
#define KCOLL_TORCH_HPP

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

extern "C" {
#include "coll.h"
}

namespace kcoll_torch {

/* One operation: what it keeps alive and what it does after success. */
class WorkKcoll : public c10d::Work {
 public:
	WorkKcoll(int rank, c10d::OpType type, const char *what,
		  std::vector<at::Tensor> outputs);

	std::vector<at::Tensor> result() override;
	c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

	/* Called once, by the engine, when libcoll says the operation ended. */
	void complete(int err, const std::string &msg);

	const char *what;			/* "allreduce", ... for messages */
	coll_request_t *req = nullptr;
	std::vector<at::Tensor> keep;		/* buffers libcoll reads or writes */
	std::vector<uint64_t> vcounts;		/* alltoallv's four arrays */
	std::function<void()> after;		/* copies staged results out */

 private:
	std::vector<at::Tensor> outputs_;
	c10::intrusive_ptr<c10::ivalue::Future> future_;
};

/* A communicator, its pending requests and the thread that completes them. */
class Engine {
 public:
	explicit Engine(coll_comm_t *comm);
	~Engine();
	Engine(const Engine &) = delete;
	Engine &operator=(const Engine &) = delete;

	/*
	 * Run @start (a libcoll submission that sets *req) under the lock and
	 * track @w until it completes; a submission error throws with
	 * coll_last_error().
	 */
	void submit(const c10::intrusive_ptr<WorkKcoll> &w,
		    const std::function<int(coll_request_t **)> &start);

	/* Run @f on the communicator under the lock (calls other than submissions). */
	int locked(const std::function<int(coll_comm_t *)> &f);

	coll_comm_t *comm() const { return comm_; }

 private:
	void loop();

	coll_comm_t *comm_;
	int stop_fd_;
	std::mutex mu_;
	std::list<c10::intrusive_ptr<WorkKcoll>> pending_;
	std::thread thread_;
};

/* Bootstrap state: the Store that serves as libcoll's out-of-band allgather. */
struct StoreOob {
	c10::intrusive_ptr<c10d::Store> store;
	int rank;
	int size;
	uint64_t seq = 0;	/* allgathers so far: keys are never reused */
};

class ProcessGroupKcoll : public c10d::ProcessGroup {
 public:
	ProcessGroupKcoll(std::unique_ptr<StoreOob> oob, coll_comm_t *comm, int rank, int size,
			  std::chrono::milliseconds timeout);
	~ProcessGroupKcoll() override;

	const std::string getBackendName() const override { return "kcoll"; }

	c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
		const c10d::BroadcastOptions &opts = c10d::BroadcastOptions()) override;
	c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
		const c10d::AllreduceOptions &opts = c10d::AllreduceOptions()) override;
	c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor> &tensors,
		const c10d::AllreduceCoalescedOptions &opts =
			c10d::AllreduceCoalescedOptions()) override;
	c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors,
		const c10d::ReduceOptions &opts = c10d::ReduceOptions()) override;
	c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
		std::vector<at::Tensor> &inputs,
		const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
	c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &output, at::Tensor &input,
		const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
	c10::intrusive_ptr<c10d::Work> allgather_coalesced(
		std::vector<std::vector<at::Tensor>> &outputs, std::vector<at::Tensor> &inputs,
		const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
	c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
		std::vector<at::Tensor> &inputs,
		const c10d::GatherOptions &opts = c10d::GatherOptions()) override;
	c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &outputs,
		std::vector<std::vector<at::Tensor>> &inputs,
		const c10d::ScatterOptions &opts = c10d::ScatterOptions()) override;
	c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &outputs,
		std::vector<std::vector<at::Tensor>> &inputs,
		const c10d::ReduceScatterOptions &opts = c10d::ReduceScatterOptions()) override;
	c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor &output,
		at::Tensor &input,
		const c10d::ReduceScatterOptions &opts = c10d::ReduceScatterOptions()) override;
	c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &output, at::Tensor &input,
		std::vector<int64_t> &outputSplits, std::vector<int64_t> &inputSplits,
		const c10d::AllToAllOptions &opts = c10d::AllToAllOptions()) override;
	c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &outputs,
		std::vector<at::Tensor> &inputs,
		const c10d::AllToAllOptions &opts = c10d::AllToAllOptions()) override;
	c10::intrusive_ptr<c10d::Work> barrier(
		const c10d::BarrierOptions &opts = c10d::BarrierOptions()) override;
	c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dst,
					   int tag) override;
	c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int src,
					   int tag) override;
	c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &tensors,
						    int tag) override;

	std::chrono::milliseconds timeout() const { return timeout_; }
	Engine &engine() { return *engine_; }

	/*
	 * How the communicator was made: "group" (coll_comm_create_group() of
	 * the process's first kcoll group, ranks @parent_ranks of it) or
	 * "store" (coll_comm_init_oob() over the c10d store).
	 */
	std::string origin = "store";
	std::vector<int64_t> parent_ranks;

 private:
	c10::intrusive_ptr<WorkKcoll> work(c10d::OpType type, const char *what,
					   std::vector<at::Tensor> outputs);
	void run(const c10::intrusive_ptr<WorkKcoll> &w,
		 const std::function<int(coll_request_t **)> &start);

	/* Declared first: destroyed last, after the engine's communicator. */
	std::unique_ptr<StoreOob> oob_;
	std::unique_ptr<Engine> engine_;
	std::chrono::milliseconds timeout_;
};

/* ------------------------------------------------ types.cpp: checks */

/* The libcoll element type of @t; throws for what kcoll cannot carry. */
coll_dtype_t dtype_of(const at::Tensor &t, const char *what);
/* The libcoll reduction of @op for @t's type; throws for what kcoll lacks. */
coll_redop_t redop_of(const c10d::ReduceOp &op, const at::Tensor &t, const char *what);
/*
 * A single CPU dense contiguous tensor of a supported dtype (the
 * multi-device list form of the c10d API must have exactly one entry).
 */
at::Tensor &single(std::vector<at::Tensor> &ts, const char *what);
void check_tensor(const at::Tensor &t, const char *what);
/* Every tensor of @ts has @ref's dtype and number of elements. */
void check_like(const std::vector<at::Tensor> &ts, const at::Tensor &ref, const char *what);
/* The rank argument lies in the group. */
void check_root(int64_t root, int size, const char *what);

/* ------------------------------------------- bootstrap.cpp: creation */

/* The PG of @e goes: it can no longer be the parent of new groups. */
void forget_root(const Engine *e);

c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store> &store,
					      int rank, int size,
					      const std::chrono::duration<float> &timeout);

} // namespace kcoll_torch

#endif
