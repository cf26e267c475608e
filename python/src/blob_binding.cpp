// Blob: its data and diff as zero-copy numpy views in Caffe's layout.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "demi/util/host_retain.hpp"

namespace demi {
namespace python {

namespace {

/// A writable float32 view of the blob's data or diff, shaped as the blob.
/// The view's base holds the host allocation it points into (the blob's own
/// bytes or its arena's block), not the blob: a reshape to a larger batch or
/// a re-plan that moves the blob leaves the view reading and writing the old
/// bytes, which stay alive as long as the view does, never freed memory.
/// The memory is made current on the host first (a GPU net's next pass
/// copies it back), as pycaffe does on every access.
py::array View(const PyBlob& self, bool diff) {
  const Blob& blob = *self.blob;
  DEMI_CHECK(blob.channel_block() == 1, "this blob's channels are in blocks of ",
             blob.channel_block(), " (oneDNN's layout on a CPU, channels last on a GPU), which ",
             "Python cannot read; build the net with keep_blob");
  std::vector<py::ssize_t> shape(blob.shape().begin(), blob.shape().end());
  if (blob.count() == 0) return py::array_t<float>(shape);
  float* values = diff ? self.blob->mutable_cpu_diff() : self.blob->mutable_cpu_data();
  SyncedMemory& memory = diff ? *self.blob->diff() : *self.blob->data();
  auto* allocation = new std::shared_ptr<const void>(RetainHostBlock(memory));
  py::capsule base(allocation,
                   [](void* held) { delete static_cast<std::shared_ptr<const void>*>(held); });
  return py::array_t<float>(shape, values, base);
}

void Reshape(const PyBlob& self, const py::args& dims) {
  std::vector<int64_t> shape;
  // reshape(2, 3) and reshape((2, 3)) both work, as numpy's do.
  py::sequence values = dims;
  if (dims.size() == 1 && py::isinstance<py::sequence>(dims[0])) {
    values = dims[0].cast<py::sequence>();
  }
  for (const py::handle dim : values) shape.push_back(dim.cast<int64_t>());
  for (int64_t dim : shape) {
    DEMI_CHECK(dim >= 0, "blob.reshape: dimensions must not be negative, got ", ShapeString(shape));
  }
  self.blob->Reshape(shape);
}

}  // namespace

void DefineBlob(py::module_& module) {
  py::class_<PyBlob>(module, "Blob",
                     "An N-D float32 array with data and diff (gradient), as in Caffe.")
      .def_property_readonly(
          "data", [](const PyBlob& self) { return View(self, false); },
          "The values: a numpy view (no copy) that writes go through to.")
      .def_property_readonly(
          "diff", [](const PyBlob& self) { return View(self, true); },
          "The gradient: a numpy view (no copy) that writes go through to.")
      .def_property_readonly("shape",
                             [](const PyBlob& self) {
                               const auto& shape = self.blob->shape();
                               py::tuple dims(shape.size());
                               for (size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i];
                               return dims;
                             })
      .def_property_readonly("count", [](const PyBlob& self) { return self.blob->count(); })
      .def_property_readonly("num", [](const PyBlob& self) { return self.blob->num(); })
      .def_property_readonly("channels", [](const PyBlob& self) { return self.blob->channels(); })
      .def_property_readonly("height", [](const PyBlob& self) { return self.blob->height(); })
      .def_property_readonly("width", [](const PyBlob& self) { return self.blob->width(); })
      .def("reshape", &Reshape,
           "Gives the blob a new shape; call net.reshape() afterwards so the layers follow. "
           "Views taken before a reshape show the old shape.")
      .def("__repr__",
           [](const PyBlob& self) { return "<demitasse.Blob " + self.blob->shape_string() + ">"; });
}

}  // namespace python
}  // namespace demi
