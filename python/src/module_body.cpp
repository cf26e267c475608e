// The contents of the `_demitasse` module, shared by the extension module
// (module.cpp) and the copy the tools embed for Python layers (embed.cpp).
// Errors of the library (demi::Error, a std::runtime_error) reach Python as
// RuntimeError with the library's message.
#include <glog/logging.h>

#include <cstdlib>

#include "bindings.hpp"
#ifdef WITH_PYTHON_LAYER
#include "python_layer.hpp"
#endif

namespace demi {
namespace python {

namespace {

/// glog writes to files unless told otherwise; in an interpreter the log
/// belongs on stderr, as Caffe's tools print it, and in Caffe's line form
/// (no year: cli.cpp's BeginTool says why). GLOG_logtostderr,
/// GLOG_log_year_in_prefix and GLOG_minloglevel in the environment still
/// win. A tool has set it up.
void InitLogging() {
  if (google::IsGoogleLoggingInitialized()) return;
  if (std::getenv("GLOG_logtostderr") == nullptr) FLAGS_logtostderr = true;
  if (std::getenv("GLOG_log_year_in_prefix") == nullptr) FLAGS_log_year_in_prefix = false;
  google::InitGoogleLogging("demitasse");
}

}  // namespace

void DefineModule(py::module_& module) {
  module.doc() = "Demitasse's C++ core; use the `demitasse` package, not this module.";
  InitLogging();
  DefineDevice(module);
  DefineBlob(module);
  DefineNet(module);
  DefineSolver(module);
  DefineReplica(module);
  DefineIo(module);
#ifdef WITH_PYTHON_LAYER
  DefinePythonLayer(module);
#endif
}

}  // namespace python
}  // namespace demi
