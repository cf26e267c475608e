#include "demi/parallel/training_fingerprint.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>

#include <set>
#include <vector>

#include "demi/layers/base_data_layer.hpp"
#include "demi/solver_param.hpp"

namespace demi {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

/// The build, as far as it decides what a rank computes.
std::string BuildDescription() {
  std::string build = StrCat("g++ ", __VERSION__);
#ifdef CPU_ONLY
  build += ", CPU only";
#else
  build += ", CUDA";
#endif
#ifdef USE_CUDNN
  build += ", cuDNN";
#endif
#ifdef USE_NCCL
  build += ", NCCL";
#endif
  return build;
}

/// Solver fields that may differ between ranks (see the header for why).
const std::set<std::string>& SolverFieldsNotCompared() {
  static const std::set<std::string> fields = {
      "net",           "net_param",         "train_net",           "train_net_param",
      "test_net",      "test_net_param",    "test_iter",           "test_state",
      "train_state",   "test_compute_loss", "snapshot_prefix",     "snapshot_format",
      "snapshot_diff", "weights",           "average_loss",        "debug_info",
      "solver_mode",   "device_id",         "memory_optimization", "cudnn_workspace_mb",
      "memory_budget"};
  return fields;
}

/// Layer fields that the fingerprint holds elsewhere or that rules out
/// (filtering is done; blobs are compared by shape).
const std::set<std::string>& LayerFieldsNotListed() {
  static const std::set<std::string> fields = {"name",  "type",    "bottom",  "top",
                                               "blobs", "include", "exclude", "phase"};
  return fields;
}

bool IsPathField(const FieldDescriptor& field) {
  static const std::set<std::string> names = {"source", "mean_file", "meanfile", "root_folder",
                                              "file_name"};
  return field.type() == FieldDescriptor::TYPE_STRING && names.count(field.name()) > 0;
}

/// Clears the path fields of `message` and of the messages it holds.
void ClearPaths(Message* message) {
  const Reflection& reflection = *message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (IsPathField(*field)) {
      reflection.ClearField(message, field);
    } else if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection.FieldSize(*message, field); ++i) {
          ClearPaths(reflection.MutableRepeatedMessage(message, field, i));
        }
      } else {
        ClearPaths(reflection.MutableMessage(message, field));
      }
    }
  }
}

/// Element `index` of a field (-1: a singular field, its default when unset)
/// on one line; a message as { a: 1 b: 2 }.
std::string ValueText(const Message& message, const FieldDescriptor& field, int index) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintFieldValueToString(message, &field, index, &text);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (field.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) return text;
  return text.empty() ? "{ }" : "{ " + text + " }";
}

/// A field's value on one line; a repeated field as [a, b].
std::string FieldText(const Message& message, const FieldDescriptor& field) {
  if (!field.is_repeated()) return ValueText(message, field, -1);
  std::string list = "[";
  const int size = message.GetReflection()->FieldSize(message, &field);
  for (int i = 0; i < size; ++i) list += (i > 0 ? ", " : "") + ValueText(message, field, i);
  return list + "]";
}

std::string JoinNames(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : " ") + name;
  return out;
}

}  // namespace

Fingerprint RunFingerprint(const SolverParameter& param, const std::string& replicas) {
  Fingerprint fingerprint = {{"build", BuildDescription()}, {"replicas per rank", replicas}};
  // Legacy spellings (solver_type: ADAM) compare as their upgrades (type: "Adam").
  SolverParameter upgraded = param;
  UpgradeSolverAsNeeded("solver parameters", &upgraded);
  const auto& descriptor = *upgraded.GetDescriptor();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor& field = *descriptor.field(i);
    if (SolverFieldsNotCompared().count(field.name()) > 0) continue;
    fingerprint.push_back({"solver." + field.name(), FieldText(upgraded, field)});
  }
  return fingerprint;
}

Fingerprint NetFingerprint(const Net& train_net) {
  Fingerprint fingerprint;
  const auto& layers = train_net.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& layer = *layers[i];
    LayerParameter settings = layer.layer_param();
    const std::string name = settings.name();
    const std::string prefix = StrCat("net layer '", name, "' ");
    fingerprint.push_back({StrCat("net layer #", i), name});
    fingerprint.push_back({prefix + "type", settings.type()});
    fingerprint.push_back({prefix + "bottoms", JoinNames(settings.bottom())});
    fingerprint.push_back({prefix + "tops", JoinNames(settings.top())});
    for (size_t j = 0; j < layer.blobs().size(); ++j) {
      fingerprint.push_back(
          {StrCat(prefix, "param ", j, " shape"), layer.blobs()[j]->shape_string()});
    }
    ClearPaths(&settings);
    std::vector<const FieldDescriptor*> fields;
    settings.GetReflection()->ListFields(settings, &fields);
    for (const FieldDescriptor* field : fields) {
      if (LayerFieldsNotListed().count(field->name()) > 0) continue;
      fingerprint.push_back({prefix + field->name(), FieldText(settings, *field)});
    }
    if (const auto* data = dynamic_cast<const BaseDataLayer*>(&layer)) {
      fingerprint.push_back(
          {prefix + "shard layout",
           StrCat(data->source_records(), " records in batches of ", data->batch_size(), " over ",
                  data->num_shards(), " shard(s)")});
    }
  }
  return fingerprint;
}

}  // namespace demi
