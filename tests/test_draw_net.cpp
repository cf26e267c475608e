// draw_net: the DOT drawing (every layer and blob, the plan as colour) and the
// tool around it (both argument forms, rendering, bad input, no Graphviz).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/draw_net.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

const char* kModel = "models/lenet/lenet_dummy.prototxt";

struct DotNode {
  std::string id;
  std::string first_line;  ///< the layer's or blob's name
  std::string shape;
  std::string fill;
};

/// The nodes of a DOT text as NetToDot writes them, and its edges.
std::vector<DotNode> Nodes(const std::string& dot) {
  std::vector<DotNode> nodes;
  const std::regex node(
      R"re((\w+) \[label="((?:[^"\\]|\\.)*)", shape=(\w+), fillcolor="([^"]*)"\];)re");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), node); it != std::sregex_iterator();
       ++it) {
    const std::string label = (*it)[2].str();
    nodes.push_back(
        {(*it)[1].str(), label.substr(0, label.find("\\n")), (*it)[3].str(), (*it)[4].str()});
  }
  return nodes;
}

std::set<std::pair<std::string, std::string>> Edges(const std::string& dot) {
  std::set<std::pair<std::string, std::string>> edges;
  const std::regex edge(R"((\w+) -> (\w+);)");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), edge); it != std::sregex_iterator();
       ++it) {
    edges.insert({(*it)[1].str(), (*it)[2].str()});
  }
  return edges;
}

NetParameter ModelFor(Phase phase) {
  NetParameter param;
  ReadNetParamsFromTextFile(kModel, &param);
  param.mutable_state()->set_phase(phase);
  param.set_memory_optimization(NONE);
  return param;
}

TEST(DrawNetTest, DrawsEveryLayerAndBlobConnected) {
  for (Phase phase : {TRAIN, TEST}) {
    const Net net(ModelFor(phase));
    const std::string dot = NetToDot(net, DrawNetOptions());
    const std::vector<DotNode> nodes = Nodes(dot);
    std::map<std::string, std::string> layer_ids;  // name -> node id
    std::map<std::string, std::vector<std::string>> blob_ids;
    for (const DotNode& node : nodes) {
      if (node.shape == "box") layer_ids[node.first_line] = node.id;
      if (node.shape == "octagon") blob_ids[node.first_line].push_back(node.id);
    }
    const std::set<std::pair<std::string, std::string>> edges = Edges(dot);
    // A Split's tops are drawn as its bottom.
    std::map<int, int> source;
    for (size_t i = 0; i < net.layers().size(); ++i) {
      if (std::string(net.layers()[i]->type()) != "Split") continue;
      const int bottom = net.bottom_id_vecs()[i][0];
      for (int t : net.top_id_vecs()[i]) source[t] = source.count(bottom) ? source[bottom] : bottom;
    }
    int drawn = 0;
    for (size_t i = 0; i < net.layers().size(); ++i) {
      const std::string& name = net.layer_names()[i];
      if (std::string(net.layers()[i]->type()) == "Split") {
        EXPECT_EQ(layer_ids.count(name), 0u) << name << " is an inserted split:\n" << dot;
        continue;
      }
      ++drawn;
      ASSERT_EQ(layer_ids.count(name), 1u) << name << " missing:\n" << dot;
      // Every bottom and top of the layer is a blob node joined to it.
      for (const auto& ids : {net.bottom_id_vecs()[i], net.top_id_vecs()[i]}) {
        for (int b : ids) {
          const std::string& blob = net.blob_names()[source.count(b) ? source[b] : b];
          ASSERT_TRUE(blob_ids.count(blob)) << blob << " missing:\n" << dot;
          bool joined = false;
          for (const std::string& id : blob_ids[blob]) {
            joined =
                joined || edges.count({id, layer_ids[name]}) || edges.count({layer_ids[name], id});
          }
          EXPECT_TRUE(joined) << "no edge between " << name << " and " << blob << ":\n" << dot;
        }
      }
    }
    EXPECT_EQ(static_cast<int>(layer_ids.size()), drawn) << dot;
    EXPECT_GT(drawn, 5);
  }
}

TEST(DrawNetTest, BlobsAtTheSameArenaOffsetShareAColour) {
  const Net net(ModelFor(TRAIN));
  const std::string dot = NetToDot(net, DrawNetOptions());
  // The plan as the drawing should see it, computed independently here.
  const NetLiveness liveness = AnalyzeLiveness(net, true, {});
  const Plan plan = SolvePlan(liveness.problem, PlanStrategy::kArena);
  std::map<std::string, long> offset_of;  // blob name -> data offset, -1 if persistent
  for (size_t b = 0; b < net.blobs().size(); ++b) {
    const auto& memories = liveness.memories;
    const auto it = std::find(memories.begin(), memories.end(), net.blobs()[b]->data().get());
    offset_of[net.blob_names()[b]] =
        it == memories.end() ? -1 : static_cast<long>(plan.offsets[it - memories.begin()]);
  }
  std::map<std::string, std::string> fill_of;
  for (const DotNode& node : Nodes(dot)) {
    if (node.shape == "octagon") fill_of[node.first_line] = node.fill;
  }
  int shared_pairs = 0, persistent = 0;
  for (const auto& [a, offset_a] : offset_of) {
    ASSERT_TRUE(fill_of.count(a)) << a << ":\n" << dot;
    if (offset_a < 0) {
      EXPECT_EQ(fill_of[a], "0.000 0.000 0.850") << a << " is persistent: grey";
      ++persistent;
      continue;
    }
    for (const auto& [b, offset_b] : offset_of) {
      if (a >= b || offset_b < 0) continue;
      if (offset_a == offset_b) {
        ++shared_pairs;
        EXPECT_EQ(fill_of[a], fill_of[b]) << a << " and " << b << " share offset " << offset_a;
      } else {
        EXPECT_NE(fill_of[a], fill_of[b])
            << a << " @ " << offset_a << ", " << b << " @ " << offset_b;
      }
    }
  }
  // LeNet's plan puts some activations at one offset, and its loss is an output.
  EXPECT_GT(shared_pairs, 0) << dot;
  EXPECT_GT(persistent, 0) << dot;
}

/// The label of the first blob node named `name`, "" if none.
std::string BlobLabel(const std::string& dot, const std::string& name) {
  const std::regex node(R"re(blob_\w+ \[label="((?:[^"\\]|\\.)*)", shape=octagon)re");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), node); it != std::sregex_iterator();
       ++it) {
    const std::string label = (*it)[1].str();
    if (label.substr(0, label.find("\\n")) == name) return label;
  }
  return "";
}

TEST(DrawNetTest, BlobsWithoutAGradientSaySo) {
  const Net net(ModelFor(TRAIN));
  const std::string dot = NetToDot(net, DrawNetOptions());
  for (const char* input : {"data", "label"}) {
    const std::string label = BlobLabel(dot, input);
    EXPECT_NE(label.find("no gradient"), std::string::npos) << input << ": " << label;
    EXPECT_EQ(label.find("diff"), std::string::npos) << input << ": " << label;
  }
  EXPECT_NE(BlobLabel(dot, "conv1").find("diff @ "), std::string::npos) << dot;
  // The loss, an output, has a gradient (its weight), kept out of the arena.
  EXPECT_NE(BlobLabel(dot, "loss").find("diff persistent"), std::string::npos) << dot;
  EXPECT_EQ(NetToDot(Net(ModelFor(TEST)), DrawNetOptions()).find("gradient"), std::string::npos)
      << "a TEST drawing has no gradients to speak of";
}

TEST(DrawNetTest, ANetTooWideForLeftToRightIsDrawnTopToBottom) {
  EXPECT_NE(NetToDot(Net(ModelFor(TRAIN)), DrawNetOptions()).find("rankdir=LR;"), std::string::npos)
      << "LeNet fits left to right";
  NetParameter param;
  ReadNetParamsFromTextFile("models/googlenet/deploy.prototxt", &param);
  SetBatchSize(&param, 1);
  param.mutable_state()->set_phase(TEST);
  param.set_memory_optimization(NONE);
  const Net googlenet(param);
  const std::string dot = NetToDot(googlenet, DrawNetOptions());
  EXPECT_NE(dot.find("rankdir=TB;"), std::string::npos) << dot.substr(0, 200);
  DrawNetOptions asked;
  asked.fit_rankdir = false;
  EXPECT_NE(NetToDot(googlenet, asked).find("rankdir=LR;"), std::string::npos)
      << "an explicit direction is kept";
}

TEST(DrawNetTest, ADeployNetIsDrawnAsTest) {
  for (const char* model :
       {"models/googlenet/deploy.prototxt", "models/lenet_fashion/deploy.prototxt"}) {
    NetParameter param;
    ReadNetParamsFromTextFile(model, &param);
    EXPECT_EQ(DrawPhaseOf(param), TEST) << model;
  }
  for (const char* model : {"models/googlenet/train_val.prototxt", kModel}) {
    NetParameter param;
    ReadNetParamsFromTextFile(model, &param);
    EXPECT_EQ(DrawPhaseOf(param), TRAIN) << model;
  }
}

TEST(DrawNetTest, QuotesNamesForDot) {
  EXPECT_EQ(DotQuoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
  NetParameter param = ModelFor(TEST);
  param.set_name("la\"net\\");
  const Net net(param);
  const std::string dot = NetToDot(net, DrawNetOptions());
  EXPECT_NE(dot.find("digraph \"la\\\"net\\\\\" {"), std::string::npos) << dot;
}

Result DrawNet(const std::string& arguments, const std::string& environment = "") {
  const std::string path = ToolPath("draw_net");
  EXPECT_TRUE(fs::exists(path)) << path << " is missing: build the tools (make tools)";
  return RunShell("timeout 120 env " + environment + " " + path + " --logtostderr " + arguments);
}

bool HasDot() { return RunShell("command -v dot").status == 0; }

TEST(DrawNetToolTest, WritesDotAndRendersBothArgumentForms) {
  ScratchDir dir;
  const Result dot = DrawNet(StrCat("--model=", kModel, " --output=", dir.file("net.dot"),
                                    " --phase=TEST --rankdir=TB --batch=3"));
  ASSERT_EQ(dot.status, 0) << dot.output;
  const std::string text = ReadFileToString(dir.file("net.dot"));
  EXPECT_NE(text.find("rankdir=TB;"), std::string::npos) << text;
  EXPECT_NE(text.find("3x1x28x28"), std::string::npos) << "--batch=3:\n" << text;
  EXPECT_NE(text.find("(TEST)"), std::string::npos) << text;
  if (!HasDot()) GTEST_SKIP() << "Graphviz's dot is not installed";
  // Caffe's form on a deploy net, no --phase: titled TEST, as it runs.
  const Result deploy =
      DrawNet(StrCat("models/lenet_fashion/deploy.prototxt ", dir.file("deploy.dot")));
  ASSERT_EQ(deploy.status, 0) << deploy.output;
  EXPECT_NE(ReadFileToString(dir.file("deploy.dot")).find("(TEST), "), std::string::npos);
  const Result png = DrawNet(StrCat(kModel, " ", dir.file("net.png")));
  ASSERT_EQ(png.status, 0) << png.output;
  const std::string image = ReadFileToString(dir.file("net.png"));
  ASSERT_GT(image.size(), 8u);
  EXPECT_EQ(image.substr(0, 8), "\x89PNG\r\n\x1a\n");
  const Result svg = DrawNet(StrCat(kModel, " ", dir.file("net.svg")));
  ASSERT_EQ(svg.status, 0) << svg.output;
  EXPECT_NE(ReadFileToString(dir.file("net.svg")).find("<svg"), std::string::npos);
  // Nothing but the outputs is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 4);
}

TEST(DrawNetToolTest, BadInputExitsOneNamingTheFault) {
  ScratchDir dir;
  const std::string bad = dir.file("bad.prototxt");
  WriteFileAtomically(bad, "name: \"x\"\nlayer { name: \"a\" type: \"Input\" \n  top: }\n");
  const Result syntax = DrawNet("--model=" + bad + " --output=" + dir.file("x.dot"));
  EXPECT_EQ(syntax.status, 1) << syntax.output;
  EXPECT_NE(syntax.output.find(bad + ":3"), std::string::npos) << syntax.output;
  const std::string unknown = dir.file("unknown.prototxt");
  WriteFileAtomically(unknown, "layer { name: \"odd\" type: \"NoSuchLayer\" top: \"x\" }\n");
  const Result type = DrawNet(unknown + " " + dir.file("x.dot"));
  EXPECT_EQ(type.status, 1) << type.output;
  EXPECT_NE(type.output.find("NoSuchLayer"), std::string::npos) << type.output;
  const Result phase = DrawNet(StrCat(kModel, " ", dir.file("x.dot"), " --phase=VAL"));
  EXPECT_EQ(phase.status, 1) << phase.output;
  EXPECT_NE(phase.output.find("--phase must be TRAIN or TEST, not 'VAL'"), std::string::npos);
  const Result no_extension = DrawNet(StrCat(kModel, " ", dir.file("x")));
  EXPECT_EQ(no_extension.status, 1) << no_extension.output;
  EXPECT_NE(no_extension.output.find("has no extension"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("x.dot")));
}

TEST(DrawNetToolTest, MissingGraphvizIsOneClearError) {
  ScratchDir dir;
  const Result run =
      DrawNet(StrCat(kModel, " ", dir.file("net.png")), "PATH=" + dir.file("no_such_dir"));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("Graphviz's 'dot' is not on PATH"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("apt-get install graphviz"), std::string::npos) << run.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "no partial output is left";
}

}  // namespace
}  // namespace demi
