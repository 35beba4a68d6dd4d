// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: what kcoll can carry, and the clear error for the rest.
 *
 * Anything kcoll cannot do exactly is refused before a byte moves, with
 * the alternative named: a wrong result is never an option.  TORCH_CHECK
 * raises RuntimeError in Python; what a later kcoll could add (point to
 * point, say) raises NotImplementedError through TORCH_CHECK_NOT_IMPLEMENTED.
 */
#include "kcoll_torch.hpp"

namespace kcoll_torch {

coll_dtype_t dtype_of(const at::Tensor &t, const char *what)
{
	switch (t.scalar_type()) {
	case at::kFloat: return COLL_FLOAT;
	case at::kDouble: return COLL_DOUBLE;
	case at::kHalf: return COLL_FLOAT16;
	case at::kBFloat16: return COLL_BFLOAT16;
	case at::kChar: return COLL_INT8;
	case at::kByte: return COLL_UINT8;
	case at::kShort: return COLL_INT16;
	case at::kInt: return COLL_INT32;
	case at::kLong: return COLL_INT64;
	/* One byte 0/1: exact for data movement and MIN/MAX (redop_of). */
	case at::kBool: return COLL_UINT8;
	default:
		break;
	}
	TORCH_CHECK_NOT_IMPLEMENTED(!t.is_complex(), "kcoll ", what, ": complex tensors (",
		t.scalar_type(), ") are not supported: pass torch.view_as_real(t) for data "
		"movement and SUM, or use the gloo backend");
	TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll ", what, ": dtype ", t.scalar_type(),
		" is not supported (float32, float64, float16, bfloat16, int8, uint8, int16, "
		"int32, int64, bool): convert the tensor, or use the gloo backend");
}

coll_redop_t redop_of(const c10d::ReduceOp &op, const at::Tensor &t, const char *what)
{
	bool is_float = at::isFloatingType(t.scalar_type());
	bool is_bool = t.scalar_type() == at::kBool;

	switch (op.op_) {
	case c10d::ReduceOp::SUM:
		TORCH_CHECK(!is_bool, "kcoll ", what, ": SUM of bool tensors is not supported: "
			    "use ReduceOp.MAX for a logical or, or sum an integer tensor");
		return COLL_SUM;
	case c10d::ReduceOp::PRODUCT:
		TORCH_CHECK(!is_bool, "kcoll ", what, ": PRODUCT of bool tensors is not "
			    "supported: use ReduceOp.MIN for a logical and");
		return COLL_PROD;
	case c10d::ReduceOp::MIN:
		return COLL_MIN;
	case c10d::ReduceOp::MAX:
		return COLL_MAX;
	case c10d::ReduceOp::AVG:
		/* The module divides once at the end, in the element's precision. */
		TORCH_CHECK(is_float, "kcoll ", what, ": ReduceOp.AVG needs a floating-point "
			    "tensor (", t.scalar_type(), " given): use SUM and divide by the group "
			    "size");
		return COLL_AVG;
	case c10d::ReduceOp::BAND:
	case c10d::ReduceOp::BOR:
	case c10d::ReduceOp::BXOR:
		TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll ", what, ": bitwise reductions (BAND, "
			"BOR, BXOR) are not supported: use the gloo backend for them, or MIN/MAX "
			"on 0/1 values");
		break;
	case c10d::ReduceOp::PREMUL_SUM:
		TORCH_CHECK_NOT_IMPLEMENTED(false, "kcoll ", what, ": PREMUL_SUM is not "
			"supported: multiply the tensor first, then reduce with SUM");
		break;
	default:
		break;
	}
	TORCH_CHECK(false, "kcoll ", what, ": unknown reduction ", static_cast<int>(op.op_));
}

void check_tensor(const at::Tensor &t, const char *what)
{
	TORCH_CHECK(t.defined(), "kcoll ", what, ": undefined tensor");
	TORCH_CHECK(t.device().is_cpu(), "kcoll ", what, ": tensor on ", t.device(),
		    ": kcoll takes CPU tensors only; use the nccl backend for CUDA tensors, or "
		    "copy to the CPU with .cpu()");
	TORCH_CHECK(t.layout() == at::kStrided, "kcoll ", what, ": sparse tensors are not "
		    "supported: use .to_dense(), or the gloo backend");
	TORCH_CHECK(t.is_contiguous(), "kcoll ", what, ": the tensor is not contiguous "
		    "(kcoll reads and writes memory in place): pass t.contiguous() and copy the "
		    "result back, or use the gloo backend");
	(void)dtype_of(t, what);
}

at::Tensor &single(std::vector<at::Tensor> &ts, const char *what)
{
	TORCH_CHECK(ts.size() == 1, "kcoll ", what, ": exactly one tensor per call (", ts.size(),
		    " given): the multi-device list form is for several GPUs per process");
	check_tensor(ts[0], what);
	return ts[0];
}

void check_like(const std::vector<at::Tensor> &ts, const at::Tensor &ref, const char *what)
{
	for (const auto &t : ts) {
		TORCH_CHECK(t.defined() && t.device().is_cpu() && t.layout() == at::kStrided,
			    "kcoll ", what, ": every tensor must be a dense CPU tensor");
		TORCH_CHECK(t.scalar_type() == ref.scalar_type(), "kcoll ", what, ": dtype ",
			    t.scalar_type(), " differs from the input's ", ref.scalar_type());
		TORCH_CHECK(t.numel() == ref.numel(), "kcoll ", what, ": a tensor of ",
			    t.numel(), " elements where the input has ", ref.numel());
	}
}

void check_root(int64_t root, int size, const char *what)
{
	TORCH_CHECK(root >= 0 && root < size, "kcoll ", what, ": root rank ", root,
		    " is not in the group of ", size, " ranks");
}

} // namespace kcoll_torch
