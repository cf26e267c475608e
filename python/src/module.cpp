// The `_demitasse` extension module. Errors of the library (demi::Error, a
// std::runtime_error) reach Python as RuntimeError with the library's message.
#include <glog/logging.h>

#include <cstdlib>

#include "bindings.hpp"

namespace {

/// glog writes to files unless told otherwise; in an interpreter the log
/// belongs on stderr, as Caffe's tools print it. GLOG_logtostderr and
/// GLOG_minloglevel in the environment still win.
void InitLogging() {
  if (google::IsGoogleLoggingInitialized()) return;
  if (std::getenv("GLOG_logtostderr") == nullptr) FLAGS_logtostderr = true;
  google::InitGoogleLogging("demitasse");
}

}  // namespace

PYBIND11_MODULE(_demitasse, module) {
  module.doc() = "Demitasse's C++ core; use the `demitasse` package, not this module.";
  InitLogging();
  demi::python::DefineDevice(module);
  demi::python::DefineBlob(module);
  demi::python::DefineNet(module);
  demi::python::DefineSolver(module);
  demi::python::DefineIo(module);
}
