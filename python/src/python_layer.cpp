#include "python_layer.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <vector>

#include "demi/layer_registry.hpp"

namespace demi {
namespace python {

namespace {

/// In a tool, no interpreter runs until the first Python layer: start one
/// (it reads PYTHONPATH, as Caffe's tools do), make the bindings this
/// program embeds importable as demitasse._demitasse (so `import caffe`
/// does not load a second copy of the library from the extension module),
/// and release the GIL, which each call then takes. Never finalized: nets
/// may outlive main. Under python3 the interpreter is already running.
void EnsureInterpreter() {
  static std::once_flag started;
  std::call_once(started, [] {
    if (Py_IsInitialized()) return;
    py::initialize_interpreter();
    {
      py::module_ core = py::module_::import("_demitasse");  // embed.cpp
      py::module_::import("sys").attr("modules")["demitasse._demitasse"] = core;
    }
    PyEval_SaveThread();
  });
}

/// The layer's bottoms or tops as a list of Blob. They belong to the net,
/// which outlives every call; a Blob kept past the net is not safe.
py::list BlobList(const std::vector<Blob*>& blobs) {
  py::list list;
  for (Blob* blob : blobs)
    list.append(PyBlob{std::shared_ptr<Blob>(std::shared_ptr<Blob>(), blob), nullptr});
  return list;
}

std::string Describe(const LayerParameter& param) {
  return StrCat("Python layer '", param.name(), "' (", param.python_param().module(), ".",
                param.python_param().layer(), ")");
}

}  // namespace

std::vector<std::shared_ptr<Blob>>& LayerBlobs::blobs() const {
  DEMI_CHECK(layer != nullptr, "self.blobs of a Python layer whose net is gone");
  return layer->blobs();
}

template <typename Body>
void PythonLayer::Call(const char* method, Body body) {
  std::string failure;
  {
    py::gil_scoped_acquire gil;
    try {
      body();
    } catch (py::error_already_set& error) {
      const std::string type_name = py::handle(error.type()).attr("__name__").cast<std::string>();
      failure = StrCat(Describe(layer_param_), ": ", method, " raised ", type_name, ": ",
                       std::string(py::str(error.value())));
    }
  }
  if (!failure.empty()) ThrowError(failure);
}

PythonLayer::PythonLayer(const LayerParameter& param) : Layer(param) {
  const PythonParameter& python = param.python_param();
  DEMI_CHECK(!python.module().empty() && !python.layer().empty(), "layer '", param.name(),
             "' of type Python needs python_param { module: \"...\" layer: \"...\" } naming a "
             "module on PYTHONPATH and a class in it deriving caffe.Layer");
  EnsureInterpreter();
  blobs_view_ = std::make_shared<LayerBlobs>(LayerBlobs{this});
  Call("construction", [&] {
    py::object cls = py::module_::import(python.module().c_str()).attr(python.layer().c_str());
    py::object self = cls();
    self.attr("param_str") = python.param_str();
    self.attr("phase") = static_cast<int>(phase_);
    self.attr("name") = param.name();
    self.attr("blobs") = py::cast(blobs_view_);
    self_ = std::move(self);
  });
  if (python.share_in_parallel()) {
    LOG(INFO) << Describe(param) << ": share_in_parallel has no effect here; every replica "
              << "builds its own instance";
  }
}

PythonLayer::~PythonLayer() {
  blobs_view_->layer = nullptr;
  // An interpreter shutting down (python3 exiting with nets alive) has no
  // GIL to give: the object is left to it.
  if (!Py_IsInitialized() || _Py_IsFinalizing()) {
    self_.release();
    return;
  }
  py::gil_scoped_acquire gil;
  self_ = py::object();
}

void PythonLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Call("setup", [&] { self_.attr("setup")(BlobList(bottom), BlobList(top)); });
  param_propagate_down_.resize(blobs_.size(), true);
}

void PythonLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Call("reshape", [&] { self_.attr("reshape")(BlobList(bottom), BlobList(top)); });
}

void PythonLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Call("forward", [&] { self_.attr("forward")(BlobList(bottom), BlobList(top)); });
}

void PythonLayer::Backward_cpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  Call("backward", [&] {
    py::list down;
    for (bool value : propagate_down) down.append(value);
    self_.attr("backward")(BlobList(top), down, BlobList(bottom));
  });
}

void DefinePythonLayer(py::module_& module) {
  py::class_<LayerBlobs, std::shared_ptr<LayerBlobs>>(
      module, "_LayerBlobs", "A Python layer's learnable blobs (pycaffe's BlobVec).")
      .def("__len__", [](const LayerBlobs& self) { return self.blobs().size(); })
      .def("__getitem__",
           [](const LayerBlobs& self, int64_t index) {
             auto& blobs = self.blobs();
             const int64_t size = static_cast<int64_t>(blobs.size());
             if (index < 0) index += size;
             if (index < 0 || index >= size) throw py::index_error("layer blob index out of range");
             return PyBlob{blobs[index], nullptr};
           })
      .def(
          "add_blob",
          [](const LayerBlobs& self, const py::args& dims) {
            std::vector<int64_t> shape;
            for (const py::handle dim : dims) shape.push_back(dim.cast<int64_t>());
            for (int64_t dim : shape) {
              DEMI_CHECK(dim >= 0, "add_blob: dimensions must not be negative, got ",
                         ShapeString(shape));
            }
            self.blobs().push_back(std::make_shared<Blob>(shape));
          },
          "Appends a learnable blob of the given shape (zeros) to the layer's params.");
}

DEMI_REGISTER_LAYER(Python);

}  // namespace python
}  // namespace demi
