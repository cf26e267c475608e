#include "demi/util/draw_net.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "demi/net.hpp"
#include "demi/net_schedule.hpp"

namespace demi {

namespace {

std::string FormatBytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string JoinShape(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

/// A DOT label of several centred lines, each escaped.
std::string DotLabel(const std::vector<std::string>& lines) {
  std::string label;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string quoted = DotQuoted(lines[i]);
    label += (i ? "\\n" : "") + quoted.substr(1, quoted.size() - 2);
  }
  return "\"" + label + "\"";
}

/// "k5 s2 p1" from a (possibly per-axis) kernel, stride and pad.
template <typename Field>
std::string Window(const char* letter, const Field& values, uint32_t h, uint32_t w, bool has_hw) {
  if (has_hw) return StrCat(letter, h, "x", w);
  std::string text = letter;
  for (int i = 0; i < values.size(); ++i) text += (i ? "x" : "") + std::to_string(values.Get(i));
  return values.size() ? text : "";
}

/// The settings a reader looks for first, for the common layer types.
std::string KeyParams(const LayerParameter& layer) {
  const std::string type = layer.type();
  std::vector<std::string> parts;
  if (type == "Convolution" || type == "Deconvolution") {
    const ConvolutionParameter& p = layer.convolution_param();
    parts.push_back(StrCat("out ", p.num_output()));
    parts.push_back(Window("k", p.kernel_size(), p.kernel_h(), p.kernel_w(), p.has_kernel_h()));
    parts.push_back(Window("s", p.stride(), p.stride_h(), p.stride_w(), p.has_stride_h()));
    parts.push_back(Window("p", p.pad(), p.pad_h(), p.pad_w(), p.has_pad_h()));
    if (p.group() != 1) parts.push_back(StrCat("group ", p.group()));
  } else if (type == "Pooling") {
    const PoolingParameter& p = layer.pooling_param();
    parts.push_back(PoolingParameter::PoolMethod_Name(p.pool()));
    if (p.global_pooling()) {
      parts.push_back("global");
    } else {
      parts.push_back(p.has_kernel_h() ? StrCat("k", p.kernel_h(), "x", p.kernel_w())
                                       : StrCat("k", p.kernel_size()));
      parts.push_back(p.has_stride_h() ? StrCat("s", p.stride_h(), "x", p.stride_w())
                                       : StrCat("s", p.stride()));
      if (p.pad() || p.pad_h() || p.pad_w()) parts.push_back(StrCat("p", p.pad()));
    }
  } else if (type == "InnerProduct") {
    parts.push_back(StrCat("out ", layer.inner_product_param().num_output()));
  } else if (type == "LRN") {
    parts.push_back(StrCat("size ", layer.lrn_param().local_size()));
  } else if (type == "Dropout") {
    parts.push_back(StrCat("ratio ", layer.dropout_param().dropout_ratio()));
  } else if (type == "Eltwise") {
    parts.push_back(EltwiseParameter::EltwiseOp_Name(layer.eltwise_param().operation()));
  } else if (type == "Concat") {
    parts.push_back(StrCat("axis ", layer.concat_param().axis()));
  }
  std::string text;
  for (const std::string& part : parts) {
    if (!part.empty()) text += (text.empty() ? "" : " ") + part;
  }
  return text;
}

/// Where the plan puts one blob: indices into the plan's tensors, or -1 for
/// memory kept out of the arena.
struct BlobPlacement {
  int data = -1;
  int diff = -1;
};

/// Graphviz "H S V" colours, one per distinct data offset, hues rising with
/// the offset so that neighbours in the arena look alike.
std::map<size_t, std::string> OffsetColours(const std::vector<size_t>& offsets) {
  std::map<size_t, std::string> colours;
  for (size_t offset : offsets) colours[offset];
  size_t rank = 0;
  for (auto& [offset, colour] : colours) {
    char text[32];
    // Hues 0..0.8 (red to violet, leaving magenta for no confusion with red).
    const double hue = colours.size() > 1 ? 0.8 * rank / (colours.size() - 1) : 0.0;
    std::snprintf(text, sizeof(text), "%.3f 0.350 1.000", hue);
    colour = text;
    ++rank;
  }
  return colours;
}

}  // namespace

std::string DotQuoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

std::string NetToDot(const Net& net, const DrawNetOptions& options) {
  const NetLiveness liveness = AnalyzeLiveness(net, net.phase() == TRAIN, options.keep);
  const Plan plan = SolvePlan(liveness.problem, options.strategy);
  std::map<const SyncedMemory*, int> tensor_of;
  for (size_t i = 0; i < liveness.memories.size(); ++i) {
    tensor_of[liveness.memories[i]] = static_cast<int>(i);
  }
  auto tensor = [&](const SyncedMemory* memory) {
    const auto it = tensor_of.find(memory);
    return it == tensor_of.end() ? -1 : it->second;
  };
  const size_t num_blobs = net.blobs().size();
  std::vector<BlobPlacement> placements(num_blobs);
  std::vector<size_t> data_offsets;
  for (size_t b = 0; b < num_blobs; ++b) {
    placements[b] = {tensor(net.blobs()[b]->data().get()), tensor(net.blobs()[b]->diff().get())};
    if (placements[b].data >= 0) data_offsets.push_back(plan.offsets[placements[b].data]);
  }
  const std::map<size_t, std::string> colours = OffsetColours(data_offsets);
  auto where = [&](const char* what, int index) {
    return index < 0 ? StrCat(what, " persistent")
                     : StrCat(what, " @ ", FormatBytes(plan.offsets[index]));
  };

  std::ostringstream dot;
  const char* phase = net.phase() == TRAIN ? "TRAIN" : "TEST";
  dot << "digraph " << DotQuoted(net.name()) << " {\n"
      << "  rankdir=" << options.rankdir << ";\n"
      << "  labelloc=t;\n  fontname=\"Helvetica\";\n"
      << "  label="
      << DotLabel({StrCat("net ", net.name(), " (", phase, "), ",
                          PlanStrategyName(options.strategy), " plan: arena ",
                          FormatBytes(plan.arena_bytes), ", naive ", FormatBytes(plan.naive_bytes),
                          ", lower bound ", FormatBytes(plan.lower_bound_bytes)),
                   "blobs at the same arena offset share a colour (hue rises with the offset); "
                   "grey: kept out of the arena"})
      << ";\n"
      << "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n";

  // The node that holds each blob's current value; empty until one is drawn.
  std::vector<std::string> current(num_blobs);
  std::vector<int> versions(num_blobs, 0);
  auto draw_blob = [&](int b) {
    const Blob& blob = *net.blobs()[b];
    const BlobPlacement& at = placements[b];
    const std::string id = StrCat("blob_", b, "_", versions[b]++);
    std::vector<std::string> lines = {
        net.blob_names()[b],
        StrCat(JoinShape(blob.shape()), " (", FormatBytes(blob.data()->size()), ")"),
        where("data", at.data)};
    if (net.phase() == TRAIN) lines.push_back(where("diff", at.diff));
    const std::string fill = at.data < 0 ? "0.000 0.000 0.850" : colours.at(plan.offsets[at.data]);
    dot << "  " << id << " [label=" << DotLabel(lines) << ", shape=octagon, fillcolor=\"" << fill
        << "\"];\n";
    current[b] = id;
  };

  const auto& layers = net.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& bottoms = net.bottom_id_vecs()[i];
    const auto& tops = net.top_id_vecs()[i];
    for (int b : bottoms) {
      if (current[b].empty()) draw_blob(b);
    }
    if (std::string(layers[i]->type()) == "Split") {
      for (int t : tops) current[t] = current[bottoms[0]];
      continue;
    }
    std::vector<std::string> lines = {net.layer_names()[i], layers[i]->type()};
    const std::string key = KeyParams(layers[i]->layer_param());
    if (!key.empty()) lines.push_back(key);
    std::string params;
    for (const auto& param : layers[i]->blobs()) {
      params += (params.empty() ? "params " : ", ") + JoinShape(param->shape());
    }
    if (!params.empty()) lines.push_back(params);
    const std::string id = StrCat("layer_", i);
    dot << "  " << id << " [label=" << DotLabel(lines)
        << ", shape=box, fillcolor=\"0.600 0.080 0.950\"];\n";
    for (int b : bottoms) dot << "  " << current[b] << " -> " << id << ";\n";
    for (int t : tops) {
      draw_blob(t);
      dot << "  " << id << " -> " << current[t] << ";\n";
    }
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace demi
