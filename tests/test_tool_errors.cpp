// Bad input to the tools, as a hostile user gives it: each case must end with
// exit status 1 and one clear error line naming the file, layer, blob or
// value at fault; no abort, no stack trace. (Issue 14: out of memory,
// weights that match nothing, empty nets, and the minor flag cases.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <new>
#include <opencv2/core.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

/// Runs a tool with flags; --logtostderr so that every line is in the output.
Result Tool(const std::string& name, const std::string& flags,
            const std::string& shell_setup = "") {
  return RunShell(StrCat("bash -c '", shell_setup, "timeout 120 ", ToolPath(name),
                         " --logtostderr ", flags, "'"));
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// glog's lines of `severity` ('E' for ERROR, 'W' for WARNING):
/// "E1125 12:40:06.123456  1234 file.cpp:12] message".
std::vector<std::string> LogLines(const std::string& output, char severity) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > 1 && line[0] == severity && std::isdigit(static_cast<unsigned char>(line[1])))
      lines.push_back(line);
  }
  return lines;
}

/// Exit 1, exactly one error line holding every part, and no sign of a
/// crash (glog's fatal lines or failure handler, std::terminate).
void ExpectOneClearError(const Result& run, const std::vector<std::string>& parts,
                         const std::string& what) {
  EXPECT_EQ(run.status, 1) << what << ":\n" << run.output;
  const std::vector<std::string> errors = LogLines(run.output, 'E');
  ASSERT_EQ(errors.size(), 1u) << what << ":\n" << run.output;
  for (const std::string& part : parts) {
    EXPECT_TRUE(Contains(errors[0], part)) << what << ": '" << part << "' not in\n" << errors[0];
  }
  EXPECT_TRUE(LogLines(run.output, 'F').empty()) << what << ":\n" << run.output;
  for (const char* crash : {"*** ", "terminate called", "Aborted"}) {
    EXPECT_FALSE(Contains(run.output, crash)) << what << ":\n" << run.output;
  }
}

/// 100000 x 100000 x 1000 floats (37 TiB) read by a ReLU whose output is
/// reduced to one number: the ReLU's output is a planned activation.
std::string HugeNet(const std::string& dims) {
  return StrCat(R"(
    name: "huge" engine: CAFFE
    layer { name: "data" type: "Input" top: "x" input_param { shape { )",
                dims, R"( } } }
    layer { name: "relu" type: "ReLU" bottom: "x" top: "r" }
    layer { name: "sum" type: "Reduction" bottom: "r" top: "s" }
  )");
}
const char* kHugeDims = "dim: 100000 dim: 100000 dim: 1000";

/// A solver training the net at `net_path` for a few iterations.
std::string WriteSolverFor(const ScratchDir& dir, const std::string& net_path,
                           const std::string& extra = "") {
  const std::string path = dir.file("solver.prototxt");
  WriteFileAtomically(path, StrCat("net: \"", net_path,
                                   "\" base_lr: 0.01 lr_policy: \"fixed\" max_iter: 2 "
                                   "random_seed: 1 snapshot_after_train: false ",
                                   extra));
  return path;
}

TEST(ToolErrorsTest, AHugeNetIsRefusedBeforeAllocatingWithItsFigures) {
  ScratchDir dir;
  const std::string net = dir.file("huge.prototxt");
  WriteFileAtomically(net, HugeNet(kHugeDims));
  const std::vector<std::string> parts = {"net 'huge'", "does not fit host memory",
                                          " MiB more (arena ",
                                          "memory --model=" + net + " (see --fit)"};
  ExpectOneClearError(Tool("test", "--model=" + net + " --weights=" + dir.file("w.caffemodel")),
                      parts, "test");
  ExpectOneClearError(Tool("time", "--model=" + net + " --iterations=1"), parts, "time");
  ExpectOneClearError(Tool("train", "--solver=" + WriteSolverFor(dir, net)), parts, "train");
}

TEST(ToolErrorsTest, TheMemoryToolReportsAHugeNetsFiguresWithoutAllocating) {
  ScratchDir dir;
  const std::string net = dir.file("huge.prototxt");
  WriteFileAtomically(net, HugeNet(kHugeDims));
  const Result run = Tool("memory", "--model=" + net + " --phase=TEST");
  EXPECT_EQ(run.status, 0) << run.output;
  // The ReLU's output, 4e13 bytes = 38146972.7 MiB, under every strategy.
  for (const char* strategy : {"NONE", "SLOTS", "ARENA"}) {
    EXPECT_TRUE(std::regex_search(run.output, std::regex(StrCat(strategy, " +38146972\\.7 MiB"))))
        << strategy << ":\n"
        << run.output;
  }
}

TEST(ToolErrorsTest, ShapesAndByteSumsThatOverflowAreNamed) {
  ScratchDir dir;
  // 5e18 floats: the count fits 64 bits, its 2e19 bytes do not.
  const std::string one = dir.file("one.prototxt");
  WriteFileAtomically(one, HugeNet("dim: 1000000 dim: 1000000 dim: 1000000 dim: 5"));
  ExpectOneClearError(Tool("memory", "--model=" + one),
                      {"layer 'data' (Input)", "1000000 1000000 1000000 5", "overflows"},
                      "one blob");
  // Two inputs of 8e18 bytes each: data and diff of both sum past 2^64.
  const std::string two = dir.file("two.prototxt");
  WriteFileAtomically(two, R"(
    name: "two" engine: CAFFE
    layer { name: "data" type: "Input" top: "a" top: "b"
            input_param { shape { dim: 1000000 dim: 1000000 dim: 1000000 dim: 2 } } }
    layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" top: "c" }
  )");
  ExpectOneClearError(Tool("memory", "--model=" + two + " --phase=TEST"),
                      {"net 'two'", "input b", "overflows"}, "two blobs");
}

TEST(ToolErrorsTest, AnAllocationThatFailsIsOneOutOfMemoryLine) {
  ScratchDir dir;
  const std::string net = dir.file("huge.prototxt");
  WriteFileAtomically(net, HugeNet(kHugeDims));
  // NONE allocates tensor by tensor, unchecked: the first one fails.
  ExpectOneClearError(Tool("time", "--model=" + net + " --iterations=1 --memory_optimization=NONE"),
                      {"out of memory", "memory --model="}, "NONE");
}

TEST(ToolErrorsTest, VggUnderAnAddressSpaceLimitFailsWithTheLimitNamed) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory needs terabytes of address space";
#endif
  // VGG-16 trains a batch of 64 in about 14 GiB; ulimit -v leaves ~2.9 GiB.
  const Result run =
      Tool("time", "--model=models/vgg16/train_val.prototxt --stage=dummy --iterations=1",
           "ulimit -v 3000000; ");
  ExpectOneClearError(run, {"net 'VGG_ILSVRC_16_layers'", "does not fit host memory", "ulimit -v"},
                      "vgg16");
}

// ---- weights and empty nets ----

const char* kSmallNet = R"(
  name: "small"
  layer { name: "data" type: "DummyData" top: "x" top: "y"
          dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 }
                             data_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 5 weight_filler { type: "xavier" } } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "p"
          inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "p" bottom: "y" top: "loss" }
)";

/// Writes the weights of the net `text` to `path`, keeping only the layers
/// named in `keep` (all when empty).
void WriteWeights(const std::string& text, const std::string& path,
                  const std::vector<std::string>& keep = {}) {
  Net net(ParseText<NetParameter>(text));
  NetParameter weights;
  net.ToProto(&weights);
  if (!keep.empty()) {
    NetParameter kept;
    for (const LayerParameter& layer : weights.layer()) {
      if (std::find(keep.begin(), keep.end(), layer.name()) != keep.end()) {
        kept.add_layer()->CopyFrom(layer);
      }
    }
    weights = kept;
  }
  WriteProtoToBinaryFile(weights, path);
}

TEST(ToolErrorsTest, WeightsThatMatchNoLayerAreAnErrorNamingTheFile) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  // Another net's model: same shapes, other layer names.
  std::string other = kSmallNet;
  for (const std::string name : {"ip1", "ip2"}) {
    const std::string field = "name: \"" + name + "\"";
    other.replace(other.find(field), field.size(), "name: \"x" + name + "\"");
  }
  const std::string weights = dir.file("other.caffemodel");
  WriteWeights(other, weights);
  const std::vector<std::string> parts = {weights, "match no layer of net 'small'", "[ip1, ip2]",
                                          "[xip1, xip2]"};
  ExpectOneClearError(Tool("test", "--model=" + net + " --weights=" + weights + " --iterations=1"),
                      parts, "test");
  ExpectOneClearError(
      Tool("train", "--solver=" + WriteSolverFor(dir, net) + " --weights=" + weights), parts,
      "train");
}

// A solver state given as weights says which flag takes it.
TEST(ToolErrorsTest, ASolverStateAsWeightsIsAnErrorNamingTheFlag) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::string state = dir.file("small_iter_5.solverstate");
  WriteFileAtomically(state, "");
  ExpectOneClearError(Tool("test", "--model=" + net + " --weights=" + state + " --iterations=1"),
                      {state, "is a solver state", "use --snapshot"}, "test");
}

// Caffe's fine-tuning lines: each layer of the file the net lacks, and a
// warning for the net's layers the file lacks.
TEST(ToolErrorsTest, LayersThatGotNoWeightsAreListedInAWarning) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::string weights = dir.file("ip1.caffemodel");
  WriteWeights(kSmallNet, weights, {"ip1"});
  for (const std::string tool : {"test", "train"}) {
    const Result run =
        tool == "test"
            ? Tool("test", "--model=" + net + " --weights=" + weights + " --iterations=1")
            : Tool("train", "--solver=" + WriteSolverFor(dir, net) + " --weights=" + weights);
    EXPECT_EQ(run.status, 0) << tool << ":\n" << run.output;
    bool warned = false;
    for (const std::string& line : LogLines(run.output, 'W')) {
      if (Contains(line, "No weights for layer(s) ip2 of net 'small'")) warned = true;
    }
    EXPECT_TRUE(warned) << tool << ":\n" << run.output;
  }
  const std::string more = dir.file("more.caffemodel");
  std::string extra = kSmallNet;
  extra.replace(extra.find("name: \"ip2\""), 11, "name: \"head\"");
  WriteWeights(extra, more);
  const Result run = Tool("test", "--model=" + net + " --weights=" + more + " --iterations=1");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Contains(run.output, "Ignoring source layer head")) << run.output;
}

TEST(ToolErrorsTest, AnEmptyNetIsAnErrorNamingThePrototxt) {
  ScratchDir dir;
  const std::string empty = dir.file("empty.prototxt");
  WriteFileAtomically(empty, "name: \"nothing\"\n");
  const std::vector<std::string> parts = {empty, "net 'nothing'", "has no layers"};
  ExpectOneClearError(Tool("test", "--model=" + empty + " --weights=" + dir.file("w.caffemodel")),
                      parts, "test");
  ExpectOneClearError(Tool("train", "--solver=" + WriteSolverFor(dir, empty)), parts, "train");
  ExpectOneClearError(Tool("time", "--model=" + empty), parts, "time");
  // Layers that the state filters out all leave an empty net too.
  const std::string train_only = dir.file("train_only.prototxt");
  WriteFileAtomically(train_only, R"(
    name: "train_only"
    layer { name: "data" type: "Input" top: "x" include { phase: TRAIN }
            input_param { shape { dim: 1 } } }
  )");
  ExpectOneClearError(
      Tool("test", "--model=" + train_only + " --weights=" + dir.file("w.caffemodel")),
      {train_only, "has no layers for phase TEST", "all 1 of its layers"}, "filtered");
}

// ---- the minor cases ----

TEST(ToolErrorsTest, AWeightsFileGivenAsASnapshotIsNamedAsSuch) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::string solver = WriteSolverFor(dir, net);
  const std::string weights = dir.file("model.caffemodel");
  WriteWeights(kSmallNet, weights);
  // By its extension, and by its content under another name.
  const std::string renamed = dir.file("model.solverstate");
  WriteWeights(kSmallNet, renamed);
  for (const std::string& file : {weights, renamed}) {
    ExpectOneClearError(
        Tool("train", "--solver=" + solver + " --snapshot=" + file),
        {file + " is a weights file (NetParameter), not a .solverstate; use --weights"}, file);
  }
}

TEST(ToolErrorsTest, SolverValuesAreRefusedNamingTheSolverFile) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"type: \"adam\"", "unknown solver type 'adam'; known types: AdaDelta, AdaGrad, Adam"},
      {"iter_size: 0", "iter_size must be at least 1, got 0"},
      {"average_loss: 0", "average_loss must be at least 1"},
      {"regularization_type: \"L3\"", "unknown regularization_type \"L3\""},
      {"test_iter: 0 test_interval: 10", "test_iter 0 must be positive, got 0"},
      {"test_iter: 5 test_interval: -1", "the solver has test nets but test_interval is -1"},
      {"test_iter: 5 test_state { stage: \"a\" } test_state { stage: \"b\" }",
       "the solver has 1 test nets but 2 test_state values"},
  };
  for (const auto& [extra, message] : cases) {
    const std::string solver = WriteSolverFor(dir, net, extra);
    ExpectOneClearError(Tool("train", "--solver=" + solver), {solver + ": " + message}, extra);
  }
}

TEST(ToolErrorsTest, BadReplicationFlagsAreNamed) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::string solver = "--solver=" + WriteSolverFor(dir, net);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--world_size=0", "--world_size must be at least 1, got 0"},
      {"--world_size=-3", "--world_size must be at least 1, got -3"},
      {"--world_size=2 --rank=2", "--rank=2 is outside [0, 2) for --world_size=2"},
      {"--world_size=2 --rank=-1", "--rank=-1 is outside [0, 2)"},
      {"--world_size=2 --rank=0 --rendezvous=file://relative/dir --comm_timeout=5",
       "'file://relative/dir' names a relative directory 'relative/dir'; give an absolute one: "
       "file:///"},
      {"--gpu=abc", "--gpu: 'abc' is not a device id or 'all'"},
      {"--gpu=0,x1", "--gpu: 'x1' is not a device id or 'all'"},
      {"--gpu=1.5", "--gpu: '1.5' is not a device id or 'all'"},
  };
  for (const auto& [flags, message] : cases) {
    ExpectOneClearError(Tool("train", solver + " " + flags), {message}, flags);
  }
  EXPECT_FALSE(std::filesystem::exists("relative")) << "a relative rendezvous dir was created";
}

TEST(ToolErrorsTest, AStaleRankKeyIsRefusedAtOnceByEveryRank) {
  ScratchDir dir;
  const std::string net = dir.file("small.prototxt");
  WriteFileAtomically(net, kSmallNet);
  const std::string rank =
      StrCat(ToolPath("train"), " --logtostderr --solver=", WriteSolverFor(dir, net),
             " --world_size=2 --rendezvous=file://", dir.file("rendezvous"),
             " --rendezvous_host=127.0.0.1 --run_id=same");
  // An earlier run whose rank 1 never came leaves rank 0's key behind.
  const Result earlier = RunShell(StrCat("timeout 60 ", rank, " --rank=0 --comm_timeout=1"));
  ASSERT_EQ(earlier.status, 1) << earlier.output;
  // Now rank 1 starts first and waits for rank 0, which is refused: rank 1
  // must learn it at once, not after --comm_timeout.
  const auto start = std::chrono::steady_clock::now();
  const Result run =
      RunShell(StrCat("timeout 120 ", rank, " --rank=1 --comm_timeout=100 > ",
                      dir.file("rank1.log"), " 2>&1 & sleep 2; timeout 60 ", rank,
                      " --rank=0 --comm_timeout=100 > ", dir.file("rank0.log"), " 2>&1; wait $!"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0);
  EXPECT_EQ(run.status, 1);
  const Result rank0 = RunShell("cat " + dir.file("rank0.log"));
  const Result rank1 = RunShell("cat " + dir.file("rank1.log"));
  ExpectOneClearError({1, rank0.output},
                      {"already holds rank 0's key for run_id 'same'", "earlier run", "--run_id"},
                      "rank 0");
  ExpectOneClearError({1, rank1.output},
                      {"rank 0 was refused", "run_id 'same'", "earlier run", "--run_id"}, "rank 1");
}

// ---- the one line for every kind of exception ----

TEST(ToolErrorsTest, EveryExceptionBecomesOneLine) {
  auto line = [](auto thrower) {
    try {
      thrower();
    } catch (...) {
      return DescribeToolError(std::current_exception());
    }
    return std::string("nothing thrown");
  };
  EXPECT_EQ(line([] { ThrowError("layer 'x': bad"); }), "layer 'x': bad");
  const std::string oom = line([] { throw std::bad_alloc(); });
  EXPECT_TRUE(Contains(oom, "out of memory: std::bad_alloc")) << oom;
  EXPECT_TRUE(Contains(oom, "memory --model=")) << oom;
  const std::string opencv =
      line([] { throw cv::Exception(cv::Error::StsBadArg, "bad image", "imdecode", "x.cpp", 7); });
  EXPECT_EQ(opencv, "OpenCV: bad image (in imdecode)");
  EXPECT_EQ(line([] { throw std::runtime_error("two\nlines"); }), "unexpected error: two lines");
}

}  // namespace
}  // namespace demi
