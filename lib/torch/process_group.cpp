// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: the collectives of ProcessGroupKcoll, each one libcoll
 * operation.
 *
 * Buffers go to libcoll as they are when the c10d form is one flat
 * contiguous tensor (allreduce, broadcast, reduce, _allgather_base,
 * _reduce_scatter_base, alltoall_base); the list forms (allgather, gather,
 * scatter, reduce_scatter, alltoall, allreduce_coalesced) are staged
 * through one flat tensor, since libcoll takes one buffer per side: the
 * inputs are copied in before submission, the outputs copied out by the
 * completion thread before the Work completes (WorkKcoll::after).
 *
 * A call with nothing to move (0 elements) completes at once without
 * libcoll: every rank passes the same sizes, so every rank skips it.
 */
#include <pybind11/pybind11.h>

#include "kcoll_torch.hpp"

namespace kcoll_torch {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

ProcessGroupKcoll::ProcessGroupKcoll(std::unique_ptr<StoreOob> oob, coll_comm_t *comm, int rank,
				     int size, std::chrono::milliseconds timeout)
	: c10d::ProcessGroup(rank, size), oob_(std::move(oob)),
	  engine_(std::make_unique<Engine>(comm)), timeout_(timeout)
{
}

/*
 * Python may drop the last reference with the GIL held; stopping the
 * engine joins the completion thread, which may be inside a Future
 * callback written in Python, waiting for the GIL.  So let go of it.
 */
ProcessGroupKcoll::~ProcessGroupKcoll()
{
	forget_root(engine_.get());
	if (Py_IsInitialized() && PyGILState_Check()) {
		pybind11::gil_scoped_release nogil;

		engine_.reset();
	} else {
		engine_.reset();
	}
}

c10::intrusive_ptr<WorkKcoll> ProcessGroupKcoll::work(OpType type, const char *what,
						      std::vector<at::Tensor> outputs)
{
	return c10::make_intrusive<WorkKcoll>(getRank(), type, what, std::move(outputs));
}

void ProcessGroupKcoll::run(const c10::intrusive_ptr<WorkKcoll> &w,
			    const std::function<int(coll_request_t **)> &start)
{
	engine_->submit(w, start);
}

/* One flat contiguous copy of @ts, in order. */
static at::Tensor flatten(const std::vector<at::Tensor> &ts)
{
	std::vector<at::Tensor> flat;

	flat.reserve(ts.size());
	for (const auto &t : ts)
		flat.push_back(t.reshape({-1}));
	return at::cat(flat);
}

/* Copy consecutive pieces of @flat into @outs, each shaped as its target. */
static void unflatten(const at::Tensor &flat, std::vector<at::Tensor> &outs)
{
	int64_t off = 0;

	for (auto &o : outs) {
		o.copy_(flat.narrow(0, off, o.numel()).view(o.sizes()));
		off += o.numel();
	}
}

WorkPtr ProcessGroupKcoll::allreduce(std::vector<at::Tensor> &tensors,
				     const c10d::AllreduceOptions &opts)
{
	at::Tensor &t = single(tensors, "allreduce");
	coll_dtype_t dt = dtype_of(t, "allreduce");
	coll_redop_t op = redop_of(opts.reduceOp, t, "allreduce");
	auto w = work(OpType::ALLREDUCE, "allreduce", { t });
	coll_comm_t *c = engine_->comm();
	void *p = t.data_ptr();
	size_t n = t.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { t };
	run(w, [=](coll_request_t **r) { return coll_allreduce(c, p, p, n, dt, op, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::allreduce_coalesced(std::vector<at::Tensor> &tensors,
					       const c10d::AllreduceCoalescedOptions &opts)
{
	TORCH_CHECK(!tensors.empty(), "kcoll allreduce_coalesced: no tensors");
	for (const auto &t : tensors)
		(void)dtype_of(t, "allreduce_coalesced");
	for (const auto &t : tensors)
		TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type() && t.device().is_cpu() &&
			    t.layout() == at::kStrided, "kcoll allreduce_coalesced: the tensors "
			    "must be dense CPU tensors of one dtype");
	coll_dtype_t dt = dtype_of(tensors[0], "allreduce_coalesced");
	coll_redop_t op = redop_of(opts.reduceOp, tensors[0], "allreduce_coalesced");
	auto w = work(OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors);
	at::Tensor flat = flatten(tensors);
	coll_comm_t *c = engine_->comm();
	void *p = flat.data_ptr();
	size_t n = flat.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { flat };
	w->after = [flat, tensors]() mutable { unflatten(flat, tensors); };
	run(w, [=](coll_request_t **r) { return coll_allreduce(c, p, p, n, dt, op, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::broadcast(std::vector<at::Tensor> &tensors,
				     const c10d::BroadcastOptions &opts)
{
	at::Tensor &t = single(tensors, "broadcast");
	coll_dtype_t dt = dtype_of(t, "broadcast");
	auto w = work(OpType::BROADCAST, "broadcast", { t });
	coll_comm_t *c = engine_->comm();
	void *p = t.data_ptr();
	size_t n = t.numel();
	uint32_t root = opts.rootRank;

	check_root(opts.rootRank, getSize(), "broadcast");
	TORCH_CHECK(opts.rootTensor == 0, "kcoll broadcast: rootTensor must be 0");
	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { t };
	run(w, [=](coll_request_t **r) { return coll_broadcast(c, p, p, n, dt, root, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::reduce(std::vector<at::Tensor> &tensors,
				  const c10d::ReduceOptions &opts)
{
	at::Tensor &t = single(tensors, "reduce");
	coll_dtype_t dt = dtype_of(t, "reduce");
	coll_redop_t op = redop_of(opts.reduceOp, t, "reduce");
	auto w = work(OpType::REDUCE, "reduce", { t });
	coll_comm_t *c = engine_->comm();
	void *p = t.data_ptr();
	size_t n = t.numel();
	uint32_t root = opts.rootRank;

	check_root(opts.rootRank, getSize(), "reduce");
	TORCH_CHECK(opts.rootTensor == 0, "kcoll reduce: rootTensor must be 0");
	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { t };
	run(w, [=](coll_request_t **r) { return coll_reduce(c, p, p, n, dt, op, root, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::allgather(std::vector<std::vector<at::Tensor>> &outputs,
				     std::vector<at::Tensor> &inputs,
				     const c10d::AllgatherOptions &)
{
	at::Tensor &in = single(inputs, "allgather");
	coll_dtype_t dt = dtype_of(in, "allgather");

	TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(getSize()),
		    "kcoll allgather: needs one output list of ", getSize(), " tensors");
	check_like(outputs[0], in, "allgather");
	auto w = work(OpType::ALLGATHER, "allgather", outputs[0]);
	at::Tensor flat = at::empty({ getSize() * in.numel() }, in.options());
	coll_comm_t *c = engine_->comm();
	void *s = in.data_ptr(), *d = flat.data_ptr();
	size_t n = in.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { in, flat };
	w->after = [flat, outs = outputs[0]]() mutable { unflatten(flat, outs); };
	run(w, [=](coll_request_t **r) { return coll_allgather(c, s, d, n, dt, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::_allgather_base(at::Tensor &output, at::Tensor &input,
					   const c10d::AllgatherOptions &)
{
	check_tensor(input, "_allgather_base");
	check_tensor(output, "_allgather_base");
	TORCH_CHECK(output.scalar_type() == input.scalar_type() &&
		    output.numel() == getSize() * input.numel(), "kcoll _allgather_base: the "
		    "output must have the input's dtype and group size times its elements");
	coll_dtype_t dt = dtype_of(input, "_allgather_base");
	auto w = work(OpType::_ALLGATHER_BASE, "_allgather_base", { output });
	coll_comm_t *c = engine_->comm();
	void *s = input.data_ptr(), *d = output.data_ptr();
	size_t n = input.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { input, output };
	run(w, [=](coll_request_t **r) { return coll_allgather(c, s, d, n, dt, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::allgather_coalesced(std::vector<std::vector<at::Tensor>> &,
					       std::vector<at::Tensor> &,
					       const c10d::AllgatherOptions &)
{
	TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll: allgather_coalesced is not supported: call "
		"all_gather per tensor, or all_gather_into_tensor on one flattened tensor");
}

WorkPtr ProcessGroupKcoll::gather(std::vector<std::vector<at::Tensor>> &outputs,
				  std::vector<at::Tensor> &inputs, const c10d::GatherOptions &opts)
{
	at::Tensor &in = single(inputs, "gather");
	coll_dtype_t dt = dtype_of(in, "gather");
	bool is_root = opts.rootRank == getRank();
	uint32_t root = opts.rootRank;

	check_root(opts.rootRank, getSize(), "gather");
	if (is_root) {
		TORCH_CHECK(outputs.size() == 1 &&
			    outputs[0].size() == static_cast<size_t>(getSize()),
			    "kcoll gather: the root needs one output list of ", getSize(),
			    " tensors");
		check_like(outputs[0], in, "gather");
	} else {
		TORCH_CHECK(outputs.empty(), "kcoll gather: only the root takes output tensors");
	}
	auto w = work(OpType::GATHER, "gather",
		      is_root ? outputs[0] : std::vector<at::Tensor>());
	at::Tensor flat = is_root ? at::empty({ getSize() * in.numel() }, in.options()) :
				    at::Tensor();
	coll_comm_t *c = engine_->comm();
	void *s = in.data_ptr(), *d = is_root ? flat.data_ptr() : nullptr;
	size_t n = in.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { in };
	if (is_root) {
		w->keep.push_back(flat);
		w->after = [flat, outs = outputs[0]]() mutable { unflatten(flat, outs); };
	}
	run(w, [=](coll_request_t **r) { return coll_gather(c, s, d, n, dt, root, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::scatter(std::vector<at::Tensor> &outputs,
				   std::vector<std::vector<at::Tensor>> &inputs,
				   const c10d::ScatterOptions &opts)
{
	at::Tensor &out = single(outputs, "scatter");
	coll_dtype_t dt = dtype_of(out, "scatter");
	bool is_root = opts.rootRank == getRank();
	uint32_t root = opts.rootRank;
	at::Tensor flat;

	check_root(opts.rootRank, getSize(), "scatter");
	if (is_root) {
		TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(getSize()),
			    "kcoll scatter: the root needs one input list of ", getSize(),
			    " tensors");
		check_like(inputs[0], out, "scatter");
		flat = flatten(inputs[0]);
	} else {
		TORCH_CHECK(inputs.empty(), "kcoll scatter: only the root takes input tensors");
	}
	auto w = work(OpType::SCATTER, "scatter", { out });
	coll_comm_t *c = engine_->comm();
	void *s = is_root ? flat.data_ptr() : nullptr, *d = out.data_ptr();
	size_t n = out.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { out };
	if (is_root)
		w->keep.push_back(flat);
	run(w, [=](coll_request_t **r) { return coll_scatter(c, s, d, n, dt, root, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::reduce_scatter(std::vector<at::Tensor> &outputs,
					  std::vector<std::vector<at::Tensor>> &inputs,
					  const c10d::ReduceScatterOptions &opts)
{
	at::Tensor &out = single(outputs, "reduce_scatter");
	coll_dtype_t dt = dtype_of(out, "reduce_scatter");
	coll_redop_t op = redop_of(opts.reduceOp, out, "reduce_scatter");

	TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(getSize()),
		    "kcoll reduce_scatter: needs one input list of ", getSize(), " tensors");
	check_like(inputs[0], out, "reduce_scatter");
	auto w = work(OpType::REDUCE_SCATTER, "reduce_scatter", { out });
	at::Tensor flat = flatten(inputs[0]);
	coll_comm_t *c = engine_->comm();
	void *s = flat.data_ptr(), *d = out.data_ptr();
	size_t n = out.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { flat, out };
	run(w, [=](coll_request_t **r) { return coll_reducescatter(c, s, d, n, dt, op, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::_reduce_scatter_base(at::Tensor &output, at::Tensor &input,
						const c10d::ReduceScatterOptions &opts)
{
	check_tensor(input, "_reduce_scatter_base");
	check_tensor(output, "_reduce_scatter_base");
	TORCH_CHECK(output.scalar_type() == input.scalar_type() &&
		    input.numel() == getSize() * output.numel(), "kcoll _reduce_scatter_base: "
		    "the input must have the output's dtype and group size times its elements");
	coll_dtype_t dt = dtype_of(output, "_reduce_scatter_base");
	coll_redop_t op = redop_of(opts.reduceOp, output, "_reduce_scatter_base");
	auto w = work(OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", { output });
	coll_comm_t *c = engine_->comm();
	void *s = input.data_ptr(), *d = output.data_ptr();
	size_t n = output.numel();

	if (!n) {
		w->complete(0, "");
		return w;
	}
	w->keep = { input, output };
	run(w, [=](coll_request_t **r) { return coll_reducescatter(c, s, d, n, dt, op, r); });
	return w;
}

/*
 * Element counts of @splits (rows of dim 0, each @row elements; none:
 * equal shares of @rows) and their displacements, into @v at @at.
 */
static void vcounts(std::vector<uint64_t> &v, size_t at, const std::vector<int64_t> &splits,
		    int64_t rows, int64_t row, int size, const char *side)
{
	uint64_t off = 0;
	int64_t sum = 0;

	if (splits.empty()) {
		TORCH_CHECK(rows % size == 0, "kcoll alltoall_base: ", side, " dimension 0 (",
			    rows, ") does not divide by the group size ", size,
			    ": give split sizes");
		for (int i = 0; i < size; i++) {
			v[at + i] = static_cast<uint64_t>(rows / size * row);
			v[at + size + i] = off;
			off += v[at + i];
		}
		return;
	}
	TORCH_CHECK(splits.size() == static_cast<size_t>(size), "kcoll alltoall_base: ",
		    splits.size(), " ", side, " split sizes for ", size, " ranks");
	for (int i = 0; i < size; i++) {
		TORCH_CHECK(splits[i] >= 0, "kcoll alltoall_base: negative split size");
		sum += splits[i];
		v[at + i] = static_cast<uint64_t>(splits[i] * row);
		v[at + size + i] = off;
		off += v[at + i];
	}
	TORCH_CHECK(sum == rows, "kcoll alltoall_base: ", side, " split sizes add up to ", sum,
		    " rows, the tensor has ", rows);
}

WorkPtr ProcessGroupKcoll::alltoall_base(at::Tensor &output, at::Tensor &input,
					 std::vector<int64_t> &outputSplits,
					 std::vector<int64_t> &inputSplits,
					 const c10d::AllToAllOptions &)
{
	int size = getSize();

	check_tensor(input, "alltoall_base");
	check_tensor(output, "alltoall_base");
	TORCH_CHECK(input.scalar_type() == output.scalar_type(), "kcoll alltoall_base: input "
		    "and output dtypes differ");
	TORCH_CHECK(input.dim() >= 1 && output.dim() >= 1, "kcoll alltoall_base: tensors "
		    "need a dimension 0 to split");
	coll_dtype_t dt = dtype_of(input, "alltoall_base");
	auto w = work(OpType::ALLTOALL_BASE, "alltoall_base", { output });
	coll_comm_t *c = engine_->comm();
	void *s = input.data_ptr(), *d = output.data_ptr();
	int64_t irow = input.size(0) ? input.numel() / input.size(0) : 0;
	int64_t orow = output.size(0) ? output.numel() / output.size(0) : 0;

	w->keep = { input, output };
	if (inputSplits.empty() && outputSplits.empty()) {
		TORCH_CHECK(input.numel() == output.numel() && input.numel() % size == 0,
			    "kcoll alltoall_base: equal splits need input and output of the same "
			    "size, a multiple of the group size");
		size_t n = input.numel() / size;

		if (!n) {
			w->complete(0, "");
			return w;
		}
		run(w, [=](coll_request_t **r) { return coll_alltoall(c, s, d, n, dt, r); });
		return w;
	}
	/* sendcounts, sdispls, recvcounts, rdispls: kept until the operation ends. */
	w->vcounts.assign(4 * size, 0);
	vcounts(w->vcounts, 0, inputSplits, input.size(0), irow, size, "input");
	vcounts(w->vcounts, 2 * size, outputSplits, output.size(0), orow, size, "output");
	const uint64_t *v = w->vcounts.data();

	run(w, [=](coll_request_t **r) {
		return coll_alltoallv(c, s, v, v + size, d, v + 2 * size, v + 3 * size, dt, r);
	});
	return w;
}

WorkPtr ProcessGroupKcoll::alltoall(std::vector<at::Tensor> &outputs,
				    std::vector<at::Tensor> &inputs, const c10d::AllToAllOptions &)
{
	int size = getSize();

	TORCH_CHECK(inputs.size() == static_cast<size_t>(size) &&
		    outputs.size() == static_cast<size_t>(size),
		    "kcoll alltoall: needs ", size, " input and ", size, " output tensors");
	coll_dtype_t dt = dtype_of(inputs[0], "alltoall");
	for (const auto &t : inputs)
		TORCH_CHECK(t.device().is_cpu() && t.layout() == at::kStrided &&
			    t.scalar_type() == inputs[0].scalar_type(), "kcoll alltoall: every "
			    "tensor must be a dense CPU tensor of one dtype");
	for (const auto &t : outputs)
		TORCH_CHECK(t.device().is_cpu() && t.layout() == at::kStrided &&
			    t.scalar_type() == inputs[0].scalar_type(), "kcoll alltoall: every "
			    "tensor must be a dense CPU tensor of one dtype");
	auto w = work(OpType::ALLTOALL, "alltoall", outputs);
	at::Tensor sflat = flatten(inputs);
	int64_t rtotal = 0;

	w->vcounts.assign(4 * size, 0);
	for (int i = 0; i < size; i++) {
		w->vcounts[i] = inputs[i].numel();
		w->vcounts[2 * size + i] = outputs[i].numel();
		w->vcounts[3 * size + i] = rtotal;
		rtotal += outputs[i].numel();
		if (i)
			w->vcounts[size + i] = w->vcounts[size + i - 1] + w->vcounts[i - 1];
	}
	at::Tensor rflat = at::empty({ rtotal }, inputs[0].options());
	coll_comm_t *c = engine_->comm();
	void *s = sflat.data_ptr(), *d = rflat.data_ptr();
	const uint64_t *v = w->vcounts.data();

	w->keep = { sflat, rflat };
	w->after = [rflat, outputs]() mutable { unflatten(rflat, outputs); };
	run(w, [=](coll_request_t **r) {
		return coll_alltoallv(c, s, v, v + size, d, v + 2 * size, v + 3 * size, dt, r);
	});
	return w;
}

WorkPtr ProcessGroupKcoll::barrier(const c10d::BarrierOptions &)
{
	auto w = work(OpType::BARRIER, "barrier", {});
	coll_comm_t *c = engine_->comm();

	run(w, [=](coll_request_t **r) { return coll_barrier(c, r); });
	return w;
}

WorkPtr ProcessGroupKcoll::send(std::vector<at::Tensor> &, int, int)
{
	TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll: point-to-point send is not supported "
		"(kcoll runs collectives only): use a gloo group for it, "
		"torch.distributed.new_group(backend='gloo')");
}

WorkPtr ProcessGroupKcoll::recv(std::vector<at::Tensor> &, int, int)
{
	TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll: point-to-point recv is not supported "
		"(kcoll runs collectives only): use a gloo group for it, "
		"torch.distributed.new_group(backend='gloo')");
}

WorkPtr ProcessGroupKcoll::recvAnysource(std::vector<at::Tensor> &, int)
{
	TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll: point-to-point recv is not supported "
		"(kcoll runs collectives only): use a gloo group for it, "
		"torch.distributed.new_group(backend='gloo')");
}

} // namespace kcoll_torch
