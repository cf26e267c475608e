// The memory report's machine-readable forms: the JSON line of `memory
// --json` and the SVG of `memory --timeline`, for a net whose name holds
// every character JSON and XML treat specially.
#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// Quotes, markup, a backslash and control characters (a raw newline ended
// the hand-written JSON's string).
const char* kAwkwardName = "a\"b<c>d&e'f\\g\th\ni";

NetMemoryReport AwkwardReport() {
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
  param.mutable_state()->set_phase(TRAIN);
  Net net(param);
  return ReportNetMemory(net, 8);
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

}  // namespace
}  // namespace demi
