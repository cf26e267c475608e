// The pieces of the `_demitasse` extension module: one Define* function per
// concept, called from module.cpp. The Python layer (python/demitasse/*.py)
// gives them pycaffe's names and conventions.
#ifndef DEMI_PYTHON_BINDINGS_HPP_
#define DEMI_PYTHON_BINDINGS_HPP_

#include <pybind11/pybind11.h>

#include <memory>

#include "demi/blob.hpp"
#include "demi/common.hpp"

namespace demi {
namespace python {

namespace py = pybind11;

/// A blob as Python holds it: the blob and whatever owns its memory (its
/// net, which may itself be kept alive by a solver), so that neither the
/// blob nor a numpy view of it can outlive that memory.
struct PyBlob {
  std::shared_ptr<Blob> blob;
  std::shared_ptr<const void> owner;
};

/// The context a net or solver is built in: the device Python chose with
/// set_mode_cpu / set_mode_gpu / set_device (kept in python/demitasse).
Context MakeContext(bool gpu, int device_id);

/// Everything the module holds: the functions below, in order.
void DefineModule(py::module_& module);
void DefineBlob(py::module_& module);
void DefineNet(py::module_& module);
void DefineSolver(py::module_& module);
void DefineReplica(py::module_& module);
void DefineIo(py::module_& module);
void DefineDevice(py::module_& module);

}  // namespace python
}  // namespace demi

#endif  // DEMI_PYTHON_BINDINGS_HPP_
