// The memory report's machine-readable forms: the JSON line of `memory
// --json` and the SVG of `memory --timeline`, for a net whose name holds
// every character JSON and XML treat specially.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/memory/timeline_svg.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/svg.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// Quotes, markup, a backslash and control characters (a raw newline ended
// the hand-written JSON's string).
const char* kAwkwardName = "a\"b<c>d&e'f\\g\th\ni";

NetMemoryReport AwkwardReport(Phase phase = TRAIN, size_t budget = 0) {
  NetParameter param = ParseText<NetParameter>(R"(
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 8 dim: 4 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 3 } }
    layer { name: "relu" type: "ReLU" bottom: "y" top: "z" }
    layer { name: "ip2" type: "InnerProduct" bottom: "z" top: "w"
            inner_product_param { num_output: 2 } })");
  param.set_name(kAwkwardName);
  param.set_memory_optimization(NONE);
  param.mutable_state()->set_phase(phase);
  Net net(param);
  return ReportNetMemory(net, 8, budget);
}

TEST(MemoryReportJsonTest, RoundTripsEveryFieldAndAnAwkwardName) {
  const NetMemoryReport report = AwkwardReport();
  const std::string line = MemoryReportJson(report);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one object on one line: " << line;
  const nlohmann::json json = nlohmann::json::parse(line);
  EXPECT_EQ(json.at("net").get<std::string>(), kAwkwardName);
  EXPECT_EQ(json.at("phase").get<std::string>(), "TRAIN");
  EXPECT_EQ(json.at("batch").get<int64_t>(), 8);
  EXPECT_EQ(json.at("naive_bytes").get<size_t>(), report.none_bytes);
  EXPECT_EQ(json.at("slots_bytes").get<size_t>(), report.slots_bytes);
  EXPECT_EQ(json.at("arena_bytes").get<size_t>(), report.arena_bytes);
  EXPECT_EQ(json.at("lower_bound_bytes").get<size_t>(), report.lower_bound_bytes);
  EXPECT_EQ(json.at("persistent_bytes").get<size_t>(), report.persistent_bytes);
  EXPECT_EQ(json.at("peak_step").get<int>(), report.peak_step);
  EXPECT_GT(report.none_bytes, 0u);
}

/// Empty when `xml` is well-formed as far as an SVG writer can get it wrong:
/// every '<' opens a tag, every '&' an entity, tags nest and close, and
/// attribute values are quoted; otherwise the first fault.
std::string XmlFault(const std::string& xml) {
  std::vector<std::string> open;
  for (size_t i = 0; i < xml.size(); ++i) {
    if (xml[i] == '&') {
      const size_t end = xml.find(';', i);
      const std::string entity = end == std::string::npos ? "" : xml.substr(i, end - i + 1);
      if (entity != "&lt;" && entity != "&gt;" && entity != "&amp;" && entity != "&quot;" &&
          entity != "&apos;") {
        return "bare '&' at " + std::to_string(i);
      }
    } else if (xml[i] == '>') {
      return "'>' outside a tag at " + std::to_string(i);
    } else if (xml[i] == '<') {
      // Inside a tag: '>' ends it unless quoted; quoted values hold no '<'.
      size_t j = i + 1;
      char quote = 0;
      for (; j < xml.size() && (quote || xml[j] != '>'); ++j) {
        if (quote && xml[j] == '<') return "'<' inside an attribute at " + std::to_string(j);
        if (xml[j] == '"' || xml[j] == '\'') quote = quote == xml[j] ? 0 : (quote ? quote : xml[j]);
      }
      if (j == xml.size()) return "unclosed tag at " + std::to_string(i);
      const std::string tag = xml.substr(i + 1, j - i - 1);
      const bool closing = !tag.empty() && tag[0] == '/';
      const bool empty = !tag.empty() && tag.back() == '/';
      const std::string name = tag.substr(closing, tag.find_first_of(" /", closing) - closing);
      if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) {
        return "bad tag '<" + tag + ">'";
      }
      if (closing) {
        if (open.empty() || open.back() != name) return "'</" + name + ">' closes nothing open";
        open.pop_back();
      } else if (!empty) {
        open.push_back(name);
      }
      i = j;
    }
  }
  return open.empty() ? "" : "'<" + open.back() + ">' never closed";
}

TEST(MemoryTimelineSvgTest, EscapesTheNetName) {
  const std::string svg = MemoryTimelineSvg({AwkwardReport(), AwkwardReport()});
  EXPECT_EQ(XmlFault(svg), "") << svg;
  EXPECT_NE(svg.find("a&quot;b&lt;c&gt;d&amp;e&apos;f\\g\th\ni"), std::string::npos) << svg;
  // The checker itself catches what the writer used to emit.
  EXPECT_NE(XmlFault("<svg><text>a\"b<c</text></svg>"), "");
  EXPECT_NE(XmlFault("<svg><text>R&D</text></svg>"), "");
}

/// The text of every <text class="`cls`"> element, in order.
std::vector<std::string> Texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> texts;
  const std::regex text("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it) {
    texts.push_back((*it)[1].str());
  }
  return texts;
}

TEST(MemoryTimelineSvgTest, NamesStepsTensorsAndTheMiBAxis) {
  const NetMemoryReport train = AwkwardReport();
  const std::string svg = MemoryTimelineSvg({train, AwkwardReport(TEST)});
  EXPECT_EQ(XmlFault(svg), "") << svg;
  // The step axis: every step numbered and named, forward then backward.
  const std::vector<std::string> names = Texts(svg, "step-name");
  const std::vector<std::string> train_names(names.begin(), names.begin() + 8);
  EXPECT_EQ(train_names, (std::vector<std::string>{"data", "ip", "relu", "ip2", "ip2 (bwd)",
                                                   "relu (bwd)", "ip (bwd)", "data (bwd)"}));
  const std::vector<std::string> test_names(names.begin() + 8, names.end());
  EXPECT_EQ(test_names, (std::vector<std::string>{"data", "ip", "relu", "ip2"}));
  const std::vector<std::string> steps = Texts(svg, "step");
  EXPECT_EQ(steps.size(), 12u);
  EXPECT_EQ(steps[7], "7");
  // One forward/backward marker: the TEST net has no backward.
  size_t markers = 0;
  for (size_t at = svg.find("class=\"backward-start\""); at != std::string::npos;
       at = svg.find("class=\"backward-start\"", at + 1)) {
    ++markers;
  }
  EXPECT_EQ(markers, 1u);
  const std::vector<std::string> captions = Texts(svg, "caption");
  ASSERT_EQ(captions.size(), 2u);
  EXPECT_NE(captions[0].find("forward steps then backward"), std::string::npos) << captions[0];
  EXPECT_NE(captions[1].find("forward steps only"), std::string::npos) << captions[1];
  EXPECT_EQ(captions[1].find("then backward"), std::string::npos) << captions[1];
  // MiB ticks from 0.
  const std::vector<std::string> mib = Texts(svg, "mib-tick");
  ASSERT_GE(mib.size(), 3u);
  EXPECT_EQ(mib[0].substr(0, 1), "0");
  EXPECT_NE(mib[0].find(" MiB"), std::string::npos);
  // A hover title per tensor of the plan: name, shape, bytes, steps live.
  // "y" (8 x 3 floats, written by ip at step 1) lives until relu's backward.
  EXPECT_NE(svg.find("<title>y, shape 8x3, 96 bytes"), std::string::npos) << svg;
  size_t titles = 0;
  for (size_t at = svg.find("<rect class=\"tensor\""); at != std::string::npos;
       at = svg.find("<rect class=\"tensor\"", at + 1)) {
    ++titles;
  }
  EXPECT_GE(titles, train.timeline.tensors.size());
  for (const TimelineTensor& tensor : train.timeline.tensors) {
    const TensorRequest& q = tensor.request;
    EXPECT_NE(svg.find(StrCat("<title>", XmlEscaped(q.name), tensor.shape.empty() ? "" : ", shape ",
                              tensor.shape, ", ", q.bytes, " bytes")),
              std::string::npos)
        << q.name;
    EXPECT_NE(svg.find(StrCat("live at steps ", q.first_step, "..", q.last_step)),
              std::string::npos)
        << q.name;
  }
}

TEST(MemoryTimelineSvgTest, DrawsTheRecomputationUnderABudget) {
  // conv -> ReLU -> pool -> conv -> ReLU -> ip -> loss: the smallest arena
  // drops activations and recomputes them.
  NetParameter param = ParseText<NetParameter>(R"(
    layer { name: "data" type: "DummyData" top: "x" top: "label"
            dummy_data_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } shape { dim: 4 } } }
    layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
            convolution_param { num_output: 8 kernel_size: 3 pad: 1 } }
    layer { name: "relu1" type: "ReLU" bottom: "c1" top: "c1" }
    layer { name: "pool1" type: "Pooling" bottom: "c1" top: "p1"
            pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: "conv2" type: "Convolution" bottom: "p1" top: "c2"
            convolution_param { num_output: 8 kernel_size: 3 pad: 1 } }
    layer { name: "relu2" type: "ReLU" bottom: "c2" top: "c2" }
    layer { name: "ip" type: "InnerProduct" bottom: "c2" top: "y"
            inner_product_param { num_output: 5 } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" })");
  param.set_memory_optimization(NONE);
  param.mutable_state()->set_phase(TRAIN);
  const NetMemoryReport report = ReportNetMemory(Net(param), 4, 1);
  ASSERT_TRUE(report.recomputed);
  ASSERT_FALSE(report.dropped.empty()) << "the smallest arena drops some activation";
  const std::string svg = MemoryTimelineSvg({report});
  EXPECT_EQ(XmlFault(svg), "") << svg;
  EXPECT_NE(svg.find("<g class=\"recompute\">"), std::string::npos);
  const std::vector<std::string> captions = Texts(svg, "caption");
  ASSERT_EQ(captions.size(), 2u);
  EXPECT_NE(captions[1].find("with recomputation as small as it goes: arena "), std::string::npos)
      << captions[1];
  const std::vector<std::string> names = Texts(svg, "step-name");
  EXPECT_NE(std::find_if(names.begin(), names.end(),
                         [](const std::string& name) { return name.rfind("recompute ", 0) == 0; }),
            names.end())
      << "a replayed step is marked";
  EXPECT_NE(svg.find(StrCat("<title>", report.dropped[0])), std::string::npos);
  EXPECT_NE(svg.find("dropped after forward, recomputed</title>"), std::string::npos) << svg;
}

}  // namespace
}  // namespace demi
