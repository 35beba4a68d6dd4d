// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcoll_torch: the Python module.  Importing it registers the "kcoll"
 * backend of torch.distributed (Backend.register_backend), after which
 * init_process_group("kcoll", ...) and new_group(backend="kcoll") create
 * ProcessGroupKcoll through create() (bootstrap.cpp).
 *
 * The creator runs without the GIL: it blocks on the store and on the
 * module's connection setup, and other Python threads (the store's own
 * server thread on rank 0 among them) must go on meanwhile.
 */
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/extension.h>

#include "kcoll_torch.hpp"

namespace py = pybind11;

PYBIND11_MODULE(kcoll_torch, m)
{
	m.doc() = "kcoll process group for torch.distributed: import to register "
		  "backend 'kcoll'";
	py::class_<kcoll_torch::ProcessGroupKcoll, c10d::ProcessGroup,
		   c10::intrusive_ptr<kcoll_torch::ProcessGroupKcoll>>(m, "ProcessGroupKcoll")
		.def_property_readonly("timeout", &kcoll_torch::ProcessGroupKcoll::timeout)
		.def_readonly("origin", &kcoll_torch::ProcessGroupKcoll::origin,
			      "'group': made from the process's first kcoll group without "
			      "an exchange of addresses; 'store': bootstrapped over the store")
		.def_readonly("parent_ranks", &kcoll_torch::ProcessGroupKcoll::parent_ranks,
			      "for 'group': each rank's rank in the first kcoll group");
	m.def("create_process_group", &kcoll_torch::create, py::arg("store"), py::arg("rank"),
	      py::arg("size"), py::arg("timeout"), py::call_guard<py::gil_scoped_release>(),
	      "The backend's creator (what init_process_group calls).");
	m.attr("BACKEND") = "kcoll";
	py::module::import("torch.distributed")
		.attr("Backend")
		.attr("register_backend")("kcoll", m.attr("create_process_group"));
}
