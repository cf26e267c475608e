// Net: built from a prototxt with every blob kept (keep_blob: "*"), so each
// blob Python can reach stays in Caffe's layout, owns its memory (no arena
// slot another tensor reuses) and still holds its values after a pass.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "demi/engine_decision.hpp"
#include "demi/layer_registry.hpp"
#include "demi/memory/report.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"
#ifdef WITH_PYTHON_LAYER
#include "python_layer.hpp"
#endif

namespace demi {
namespace python {

namespace {

using NetPtr = std::shared_ptr<Net>;
using NamedBlobs = std::vector<std::pair<std::string, PyBlob>>;

/// `seed`: the base of the layers' random streams (fillers, dropout), or -1
/// for the library's default. `precision`: as train's --precision ("" keeps
/// the file's types).
NetPtr LoadNet(const std::string& path, int phase, int level,
               const std::vector<std::string>& stages, bool gpu, int device_id, int64_t seed,
               const std::string& precision) {
  DEMI_CHECK(phase == TRAIN || phase == TEST,
             "phase must be demitasse.TRAIN (0) or demitasse.TEST (1), got ", phase);
  Context context = MakeContext(gpu, device_id);
  if (seed >= 0) context.seed = static_cast<uint32_t>(seed);
  NetParameter param;
  ReadNetParamsFromTextFile(path, &param);
  param.mutable_state()->set_phase(static_cast<Phase>(phase));
  param.mutable_state()->set_level(level);
  for (const std::string& stage : stages) param.mutable_state()->add_stage(stage);
  Type type;
  if (ParsePrecisionFlag(precision, &type)) ApplyPrecision(type, &param);
  param.add_keep_blob("*");
  // forward(start, end) and backward take layer indices: run them as written.
  param.set_schedule(PROTOTXT);
  return std::make_shared<Net>(param, context, nullptr, path);
}

NamedBlobs Blobs(const NetPtr& net) {
  NamedBlobs blobs;
  for (size_t i = 0; i < net->blobs().size(); ++i) {
    blobs.emplace_back(net->blob_names()[i], PyBlob{net->blobs()[i], net});
  }
  return blobs;
}

/// The learnable blobs of layer `layer_id` (weights, bias, ...), as pycaffe's
/// net.params lists them.
std::vector<PyBlob> BlobsOfLayer(const NetPtr& net, int layer_id) {
  DEMI_CHECK(layer_id >= 0 && layer_id < static_cast<int>(net->layers().size()), "layer index ",
             layer_id, " is outside net '", net->name(), "' (", net->layers().size(), " layers)");
  std::vector<PyBlob> blobs;
  for (const auto& blob : net->layers()[layer_id]->blobs()) blobs.push_back(PyBlob{blob, net});
  return blobs;
}

/// The Python object of a Python layer (pycaffe's net.layers[i] is it, and
/// py-faster-rcnn calls its methods there), else None.
py::object LayerInstance(const NetPtr& net, int layer_id) {
  DEMI_CHECK(layer_id >= 0 && layer_id < static_cast<int>(net->layers().size()), "layer index ",
             layer_id, " is outside net '", net->name(), "' (", net->layers().size(), " layers)");
#ifdef WITH_PYTHON_LAYER
  if (const auto* layer = dynamic_cast<const PythonLayer*>(net->layers()[layer_id].get())) {
    return layer->instance();
  }
#endif
  return py::none();
}

std::string BlobName(const Net& net, const Blob* blob) {
  for (size_t i = 0; i < net.blobs().size(); ++i) {
    if (net.blobs()[i].get() == blob) return net.blob_names()[i];
  }
  ThrowError(StrCat("net '", net.name(), "' has an input or output blob it does not list"));
}

std::vector<std::string> Names(const Net& net, const std::vector<Blob*>& blobs) {
  std::vector<std::string> names;
  for (const Blob* blob : blobs) names.push_back(BlobName(net, blob));
  return names;
}

/// For each layer, the names of the blobs `ids` (its bottoms or tops) lists.
std::vector<std::vector<std::string>> BlobNamesPerLayer(const Net& net,
                                                        const std::vector<std::vector<int>>& ids) {
  std::vector<std::vector<std::string>> names(ids.size());
  for (size_t layer = 0; layer < ids.size(); ++layer) {
    for (int id : ids[layer]) names[layer].push_back(net.blob_names()[id]);
  }
  return names;
}

void CheckLayerRange(const Net& net, int first, int last, const char* what) {
  const int num_layers = static_cast<int>(net.layers().size());
  DEMI_CHECK(0 <= first && first <= last && last < num_layers, what, " from layer ", first,
             " to layer ", last, " is not a range of net '", net.name(), "' (layers 0 to ",
             num_layers - 1, ")");
}

float ForwardFromTo(Net& net, int start, int end) {
  CheckLayerRange(net, start, end, "forward");
  py::gil_scoped_release release;
  return net.ForwardFromTo(start, end);
}

void BackwardFromTo(Net& net, int start, int end) {
  CheckLayerRange(net, end, start, "backward");
  py::gil_scoped_release release;
  net.BackwardFromTo(start, end);
}

void Save(const Net& net, const std::string& path) {
  NetParameter param;
  net.ToProto(&param);
  WriteProtoToBinaryFile(param, path);
}

/// ReportNetMemory as a dict: what the net would take under each planning
/// strategy (with only its inputs and outputs kept, as tools/memory plans
/// it), plus `held`: what this net, every blob kept, holds now.
py::dict MemoryReport(const Net& net) {
  const bool has_batch_axis = !net.blobs().empty() && net.blobs()[0]->num_axes() > 0;
  const NetMemoryReport report =
      ReportNetMemory(net, has_batch_axis ? net.blobs()[0]->shape(0) : 0);
  py::dict dict;
  dict["net"] = report.net;
  dict["phase"] = report.phase;
  dict["batch"] = report.batch;
  dict["none_bytes"] = report.none_bytes;
  dict["slots_bytes"] = report.slots_bytes;
  dict["arena_bytes"] = report.arena_bytes;
  dict["lower_bound_bytes"] = report.lower_bound_bytes;
  dict["persistent_bytes"] = report.persistent_bytes;
  dict["peak_step"] = report.peak_step;
  py::list largest;
  for (const TensorRequest& tensor : report.largest_at_peak) {
    py::dict entry;
    entry["name"] = tensor.name;
    entry["bytes"] = tensor.bytes;
    entry["first_step"] = tensor.first_step;
    entry["last_step"] = tensor.last_step;
    largest.append(entry);
  }
  dict["largest_at_peak"] = largest;
  py::list engines;  // each layer's engine and types (engine_decision.hpp)
  for (const LayerEngineRow& row : report.engines) {
    py::dict entry;
    entry["layer"] = row.layer;
    entry["type"] = row.type;
    entry["engine"] = row.engine;
    entry["types"] = row.types;
    engines.append(entry);
  }
  dict["engines"] = engines;
  dict["live_bytes"] = report.live_bytes;
  py::dict held;
  held["strategy"] = MemoryOptimization_Name(net.memory_optimization());
  held["arena_bytes"] = net.memory_plan().arena_bytes;
  held["persistent_bytes"] = net.persistent_bytes();
  dict["held"] = held;
  dict["text"] = FormatMemoryReport(report);
  return dict;
}

}  // namespace

void DefineNet(py::module_& module) {
  py::class_<Net, NetPtr>(module, "_Net", "The C++ net; demitasse.Net wraps it.")
      .def(py::init(&LoadNet), py::arg("path"), py::arg("phase"), py::arg("level"),
           py::arg("stages"), py::arg("gpu"), py::arg("device_id"), py::arg("seed"),
           py::arg("precision"))
      .def_property_readonly("name", &Net::name)
      .def_property_readonly("phase", [](const Net& net) { return static_cast<int>(net.phase()); })
      .def_property_readonly("blob_names", &Net::blob_names)
      .def_property_readonly("blob_loss_weights", &Net::blob_loss_weights)
      .def_property_readonly("layer_names", &Net::layer_names)
      .def_property_readonly("layer_types",
                             [](const Net& net) {
                               std::vector<std::string> types;
                               for (const auto& layer : net.layers())
                                 types.push_back(layer->type());
                               return types;
                             })
      .def_property_readonly("input_names",
                             [](const Net& net) { return Names(net, net.input_blobs()); })
      .def_property_readonly("output_names",
                             [](const Net& net) { return Names(net, net.output_blobs()); })
      .def_property_readonly(
          "bottom_names",
          [](const Net& net) { return BlobNamesPerLayer(net, net.bottom_id_vecs()); })
      .def_property_readonly(
          "top_names", [](const Net& net) { return BlobNamesPerLayer(net, net.top_id_vecs()); })
      .def("blobs", &Blobs)
      .def("layer_blobs", &BlobsOfLayer, py::arg("layer_id"))
      .def("layer_instance", &LayerInstance, py::arg("layer_id"))
      .def("forward", &ForwardFromTo, py::arg("start"), py::arg("end"))
      .def("backward", &BackwardFromTo, py::arg("start"), py::arg("end"))
      .def("reshape", &Net::Reshape)
      .def("clear_param_diffs", &Net::ClearParamDiffs)
      .def("copy_from", py::overload_cast<const std::string&>(&Net::CopyTrainedLayersFrom),
           py::arg("path"))
      .def("share_with", &Net::ShareTrainedLayersWith, py::arg("other"))
      .def("save", &Save, py::arg("path"))
      .def("memory_report", &MemoryReport);
  module.def(
      "layer_type_list", [] { return LayerRegistry::Types(); },
      "The layer types this build registers (\"Convolution\", ...), as pycaffe's "
      "layer_type_list.");
}

}  // namespace python
}  // namespace demi
