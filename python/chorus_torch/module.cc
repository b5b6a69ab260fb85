// The Python module chorus_torch._C: the creator function torch.distributed calls for
// init_process_group("chorus") / new_group(backend="chorus") (registered by __init__.py).
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Chorus collectives as a torch.distributed backend (CPU tensors)";
  // Rendezvous blocks until every rank has joined: other Python threads run meanwhile.
  m.def("create_process_group", &chorus_torch::ProcessGroupChorus::create, pybind11::arg("store"),
        pybind11::arg("rank"), pybind11::arg("world_size"), pybind11::arg("timeout"),
        pybind11::call_guard<pybind11::gil_scoped_release>());
}
