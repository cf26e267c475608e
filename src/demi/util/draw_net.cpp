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

/// Whether each blob of `net` gets a gradient in backward: some layer
/// propagates into it, or it is an output of a layer that runs backward (a
/// loss, whose gradient is its weight).
std::vector<bool> BlobsWithGradient(const Net& net) {
  std::vector<bool> has(net.blobs().size(), false);
  std::vector<bool> read(net.blobs().size(), false);
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const auto& bottoms = net.bottom_id_vecs()[i];
    for (size_t b = 0; b < bottoms.size(); ++b) {
      read[bottoms[b]] = true;
      if (net.bottom_need_backward()[i][b]) has[bottoms[b]] = true;
    }
  }
  for (size_t i = 0; i < net.layers().size(); ++i) {
    for (int t : net.top_id_vecs()[i]) {
      if (!read[t] && net.layer_need_backward()[i]) has[t] = true;
    }
  }
  return has;
}

/// Graphviz's node and rank sizes, in points, as NetToDot draws: labels in
/// 10-point Helvetica (~5.9 points a character, 12 a line), box margins
/// 16 x 8, octagons ~1.4 times wider, ranks 36 apart; a compact drawing
/// writes each label on one line in nodes at least 18 high, ranks 11 apart.
constexpr double kCharWidth = 5.9, kLineHeight = 12, kRankGap = 36, kCompactRankGap = 11;
constexpr double kPointsToPixels = 96.0 / 72.0;  // PNGs render at 96 dpi

/// A node as drawn: its label's lines, shape and fill.
struct DotNodeDraft {
  std::string id;
  std::vector<std::string> lines;
  bool octagon = false;
  std::string fill;
};

/// Estimates how far a drawing reaches along its ranks (Graphviz's layout of
/// a DAG puts each node one rank past its inputs): per node, the longest
/// chain of node sizes and rank gaps leading to it, across (LR), down (TB)
/// and down when compact.
class DotExtent {
 public:
  void Add(const DotNodeDraft& node, const std::vector<std::string>& inputs) {
    size_t widest = 0;
    for (const std::string& line : node.lines) {
      widest = std::max(widest, line.size());
    }
    const double widen = node.octagon ? 1.4 : 1.0;
    const double width = std::max(54.0, (kCharWidth * widest + 16) * widen);
    const double height = std::max(36.0, kLineHeight * node.lines.size() + 8);
    Reach reach;
    for (const std::string& input : inputs) {
      const auto it = reach_.find(input);
      if (it == reach_.end()) continue;
      reach.across = std::max(reach.across, it->second.across + kRankGap);
      reach.down = std::max(reach.down, it->second.down + kRankGap);
      reach.compact = std::max(reach.compact, it->second.compact + kCompactRankGap);
    }
    reach.across += width;
    reach.down += height;
    reach.compact += 18;
    reach_[node.id] = reach;
  }
  /// The estimated extent in pixels along the ranks.
  double Across() const { return Max(&Reach::across); }
  double Down() const { return Max(&Reach::down); }
  double CompactDown() const { return Max(&Reach::compact); }

 private:
  struct Reach {
    double across = 0, down = 0, compact = 0;
  };
  double Max(double Reach::*field) const {
    double points = 0;
    for (const auto& [id, reach] : reach_) points = std::max(points, reach.*field);
    return points * kPointsToPixels;
  }
  std::map<std::string, Reach> reach_;
};

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
  const std::vector<bool> has_gradient = BlobsWithGradient(net);
  const std::map<size_t, std::string> colours = OffsetColours(data_offsets);
  auto where = [&](const char* what, int index) {
    return index < 0 ? StrCat(what, " persistent")
                     : StrCat(what, " @ ", FormatBytes(plan.offsets[index]));
  };

  // Nodes and edges first: their extent along the ranks decides the
  // direction and whether labels must be compact.
  std::vector<DotNodeDraft> nodes;
  std::vector<std::pair<std::string, std::string>> edges;
  DotExtent extent;
  // The node that holds each blob's current value; empty until one is drawn.
  std::vector<std::string> current(num_blobs);
  std::vector<int> versions(num_blobs, 0);
  auto draw_blob = [&](int b, const std::vector<std::string>& inputs) {
    const Blob& blob = *net.blobs()[b];
    const BlobPlacement& at = placements[b];
    DotNodeDraft node;
    node.id = StrCat("blob_", b, "_", versions[b]++);
    node.lines = {net.blob_names()[b],
                  StrCat(JoinShape(blob.shape()), " (", FormatBytes(blob.data()->size()), ")"),
                  where("data", at.data)};
    if (net.phase() == TRAIN) {
      node.lines.push_back(has_gradient[b] ? where("diff", at.diff) : std::string("no gradient"));
    }
    node.octagon = true;
    node.fill = at.data < 0 ? "0.000 0.000 0.850" : colours.at(plan.offsets[at.data]);
    extent.Add(node, inputs);
    current[b] = node.id;
    nodes.push_back(std::move(node));
  };

  const auto& layers = net.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& bottoms = net.bottom_id_vecs()[i];
    const auto& tops = net.top_id_vecs()[i];
    for (int b : bottoms) {
      if (current[b].empty()) draw_blob(b, {});
    }
    if (std::string(layers[i]->type()) == "Split") {
      for (int t : tops) current[t] = current[bottoms[0]];
      continue;
    }
    DotNodeDraft node;
    node.id = StrCat("layer_", i);
    node.lines = {net.layer_names()[i], layers[i]->type()};
    const std::string key = KeyParams(layers[i]->layer_param());
    if (!key.empty()) node.lines.push_back(key);
    std::string params;
    for (const auto& param : layers[i]->blobs()) {
      params += (params.empty() ? "params " : ", ") + JoinShape(param->shape());
    }
    if (!params.empty()) node.lines.push_back(params);
    node.fill = "0.600 0.080 0.950";
    std::vector<std::string> inputs;
    for (int b : bottoms) {
      edges.push_back({current[b], node.id});
      inputs.push_back(current[b]);
    }
    extent.Add(node, inputs);
    const std::string id = node.id;
    nodes.push_back(std::move(node));
    for (int t : tops) {
      draw_blob(t, {id});
      edges.push_back({id, current[t]});
    }
  }

  std::string rankdir = options.rankdir;
  const bool across = rankdir == "LR" || rankdir == "RL";
  if (options.fit_rankdir && across && extent.Across() > kMaxRenderedPixels) {
    LOG(WARNING) << "net " << net.name() << ": drawn " << rankdir << " it would be about "
                 << static_cast<int64_t>(extent.Across()) << " pixels wide, past Graphviz's "
                 << kMaxRenderedPixels << "-pixel limit (it would shrink it to a strip); "
                 << "drawing it top to bottom (TB) instead";
    rankdir = "TB";
  }
  // Still too tall top to bottom (ResNet-50): one-line labels, ranks closer.
  const bool compact = options.fit_rankdir && (rankdir == "TB" || rankdir == "BT") &&
                       extent.Down() > kMaxRenderedPixels;
  if (compact) {
    LOG(WARNING) << "net " << net.name() << ": drawn " << rankdir << " it would be about "
                 << static_cast<int64_t>(extent.Down()) << " pixels tall; writing each label "
                 << "on one line (about " << static_cast<int64_t>(extent.CompactDown())
                 << " pixels)";
  }
  std::ostringstream dot;
  const char* phase = net.phase() == TRAIN ? "TRAIN" : "TEST";
  dot << "digraph " << DotQuoted(net.name()) << " {\n"
      << "  rankdir=" << rankdir << ";\n"
      << (compact ? "  ranksep=0.15;\n" : "") << "  labelloc=t;\n  fontname=\"Helvetica\";\n"
      << "  label="
      << DotLabel({StrCat("net ", net.name(), " (", phase, "), ",
                          PlanStrategyName(options.strategy), " plan: arena ",
                          FormatBytes(plan.arena_bytes), ", naive ", FormatBytes(plan.naive_bytes),
                          ", lower bound ", FormatBytes(plan.lower_bound_bytes)),
                   "blobs at the same arena offset share a colour (hue rises with the offset); "
                   "grey: kept out of the arena"})
      << ";\n"
      << "  node [fontname=\"Helvetica\", fontsize=10, style=filled"
      << (compact ? ", height=0.25, margin=\"0.08,0.02\"" : "") << "];\n";
  for (const DotNodeDraft& node : nodes) {
    std::vector<std::string> lines = node.lines;
    if (compact) {
      std::string line;
      for (const std::string& part : node.lines) line += (line.empty() ? "" : " | ") + part;
      lines = {line};
    }
    dot << "  " << node.id << " [label=" << DotLabel(lines)
        << ", shape=" << (node.octagon ? "octagon" : "box") << ", fillcolor=\"" << node.fill
        << "\"];\n";
  }
  for (const auto& [from, to] : edges) dot << "  " << from << " -> " << to << ";\n";
  dot << "}\n";
  return dot.str();
}

Phase DrawPhaseOf(const NetParameter& param) {
  bool has_input = param.input_size() > 0;
  for (const LayerParameter& layer : param.layer()) {
    for (const NetStateRule& rule : layer.include()) {
      if (rule.has_phase()) return TRAIN;
    }
    for (const NetStateRule& rule : layer.exclude()) {
      if (rule.has_phase()) return TRAIN;
    }
    has_input = has_input || layer.type() == "Input";
  }
  return has_input ? TEST : TRAIN;
}

}  // namespace demi
