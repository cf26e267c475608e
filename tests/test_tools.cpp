// The command-line tools, run as a user runs them: train (every update rule,
// Caffe's log lines, resume, fine-tune, signals, errors), test and
// device_query. `make runtest` builds the tools before the tests.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/util/device.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

/// Runs a tool with flags, failing the test if the tool was not built.
Result Tool(const std::string& name, const std::string& flags) {
  const std::string path = ToolPath(name);
  EXPECT_TRUE(fs::exists(path)) << path << " is missing: build the tools (make tools)";
  // --logtostderr: tests leave no glog files behind.
  return RunShell("timeout 120 " + path + " --logtostderr " + flags);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Every match of `pattern`'s first group, as numbers.
std::vector<double> Numbers(const std::string& text, const std::string& pattern) {
  std::vector<double> values;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    values.push_back(std::stod((*it)[1].str()));
  }
  return values;
}

// A student learns a fixed teacher on fresh gaussian inputs.
const char* kNet = R"(
  name: "student"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 16 dim: 4 } data_filler { type: "gaussian" } } }
  layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target"
          param { lr_mult: 0 decay_mult: 0 } param { lr_mult: 0 decay_mult: 0 }
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" }
                                bias_filler { type: "constant" value: 0.5 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 16 weight_filler { type: "xavier" } } }
  layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "pred"
          inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "pred" bottom: "target" top: "loss" }
)";

/// Writes the net and a solver for `type` into `dir`, with the fields of
/// `extra` overriding; returns the solver's path.
std::string WriteSolver(const ScratchDir& dir, const std::string& type, const std::string& extra) {
  WriteFileAtomically(dir.file("net.prototxt"), kNet);
  std::string hyper = "base_lr: 0.02 momentum: 0.9";
  if (type == "AdaGrad") hyper = "base_lr: 0.1";
  if (type == "RMSProp") hyper = "base_lr: 0.01 rms_decay: 0.95";
  if (type == "AdaDelta") hyper = "base_lr: 1 momentum: 0.95 delta: 1e-6";
  if (type == "Adam") hyper = "base_lr: 0.01";
  SolverParameter param = ParseText<SolverParameter>(
      StrCat("net: \"", dir.file("net.prototxt"), "\" type: \"", type, "\" ", hyper, R"(
    lr_policy: "step" gamma: 0.5 stepsize: 150 weight_decay: 0.0001
    display: 20 average_loss: 10 max_iter: 200
    test_iter: 2 test_interval: 100 snapshot: 100 random_seed: 1)"));
  param.MergeFrom(ParseText<SolverParameter>(extra));  // `extra` overrides
  const std::string path = dir.file(type + "_solver.prototxt");
  WriteProtoToTextFile(param, path);
  return path;
}

TEST(TrainToolTest, EveryTypeTrainsWithCaffesLogLines) {
  for (const std::string type : {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}) {
    ScratchDir dir;
    const Result run = Tool("train", "--solver=" + WriteSolver(dir, type, ""));
    ASSERT_EQ(run.status, 0) << type << ":\n" << run.output;
    const std::string& log = run.output;
    // The lines Caffe's tools/extra/parse_log.py reads, with its patterns.
    const std::vector<double> losses = Numbers(log, R"(Iteration \d+, loss = ([-+.\deE]+))");
    ASSERT_EQ(losses.size(), 11u) << type;  // iterations 0, 20, ..., 200
    EXPECT_LT(losses.back(), 0.2 * losses.front()) << type << ":\n" << log;
    EXPECT_EQ(
        Numbers(log, R"(Train net output #(\d+): loss = [\.\deE+-]+ \(\* 1 = [\.\deE+-]+ loss\))")
            .size(),
        10u)
        << type;
    EXPECT_EQ(Numbers(log, R"(Iteration (\d+), lr = [-+]?[0-9]*\.?[0-9]+([eE]?[-+]?[0-9]+)?)"),
              (std::vector<double>{0, 20, 40, 60, 80, 100, 120, 140, 160, 180}))
        << type;
    const std::vector<double> rates =
        Numbers(log, R"(Iteration \d+, lr = ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))");
    ASSERT_EQ(rates.size(), 10u);
    EXPECT_EQ(rates[7], rates[0]);                         // iteration 140
    EXPECT_NEAR(rates[8], rates[0] / 2, 1e-6 * rates[0]);  // 160: halved at 150
    EXPECT_EQ(Numbers(log, R"(Iteration (\d+), Testing net \(#0\))"),
              (std::vector<double>{0, 100, 200}));
    EXPECT_EQ(Numbers(log, R"(Test net output #(\d+): loss = [\.\deE+-]+ \(\* 1 = )").size(), 3u);
    // One progress line per display after the first.
    EXPECT_EQ(
        Numbers(log,
                R"(Speed: ([\d.eE+-]+) iter/s \([\d.eE+-]+ ms/iter\), \d+/200 iterations, ETA \S+)")
            .size(),
        9u)
        << log;
    for (int iter : {100, 200}) {
      const std::string prefix = dir.file(StrCat(type, "_solver_iter_", iter));
      EXPECT_TRUE(Contains(log, "Snapshotting to binary proto file " + prefix + ".caffemodel"));
      EXPECT_TRUE(Contains(
          log, "Snapshotting solver state to binary proto file " + prefix + ".solverstate"));
      EXPECT_TRUE(fs::exists(prefix + ".solverstate"));
    }
    EXPECT_TRUE(Contains(log, "Optimization Done."));
  }
}

TEST(TrainToolTest, ResumesAndFineTunes) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  ASSERT_EQ(Tool("train", "--solver=" + solver).status, 0);
  const std::string prefix = dir.file("SGD_solver_iter_");
  const std::string final_model = ReadFileToString(prefix + "200.caffemodel");

  const Result resumed =
      Tool("train", "--solver=" + solver + " --snapshot=" + prefix + "100.solverstate");
  ASSERT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_TRUE(Contains(resumed.output,
                       "Restoring previous solver status from " + prefix + "100.solverstate"));
  EXPECT_EQ(Numbers(resumed.output, R"(Iteration (\d+), loss = )").front(), 100);
  // Resuming reproduces the uninterrupted run's final model bit for bit.
  EXPECT_EQ(ReadFileToString(prefix + "200.caffemodel"), final_model);

  const Result tuned =
      Tool("train", "--solver=" + solver + " --weights=" + prefix + "200.caffemodel");
  ASSERT_EQ(tuned.status, 0) << tuned.output;
  EXPECT_TRUE(Contains(tuned.output, "Copying weights from " + prefix + "200.caffemodel"));
  EXPECT_EQ(Numbers(tuned.output, R"(Iteration (\d+), loss = )").front(), 0);
}

TEST(TrainToolTest, PlotKeepsAnSvgOfTheCurvesTheLogShows) {
  ScratchDir dir;
  const std::string plot = dir.file("curves.svg");
  const Result run =
      Tool("train", "--solver=" + WriteSolver(dir, "SGD", "snapshot: 0") + " --plot=" + plot);
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string svg = ReadFileToString(plot);
  // Every displayed loss and every test (iterations 0, 100, 200) is a point.
  const size_t displays = Numbers(run.output, R"(Iteration (\d+)(?: \([^)]*\))?, loss = )").size();
  EXPECT_GE(displays, 10u);
  EXPECT_TRUE(Contains(svg, StrCat("<title>train loss: ", displays, " points"))) << svg;
  EXPECT_TRUE(Contains(svg, "<title>test #0 loss: 3 points, last ")) << svg;
  EXPECT_TRUE(Contains(svg, "at iteration 200</title>")) << svg;
  EXPECT_TRUE(Contains(svg, ">iteration</text>")) << svg;
  const Result bad = Tool("train", "--solver=" + WriteSolver(dir, "SGD", "") +
                                       " --plot=" + dir.file("no_such_dir/curves.svg"));
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_TRUE(Contains(bad.output, dir.file("no_such_dir"))) << bad.output;
}

// Caffe's line prefix leaves the year out (its log parsers read it as the
// month); glog's flag and its GLOG_ variable put it back.
TEST(ToolLogTest, TheYearInTheLinePrefixFollowsGlogsFlagAndVariable) {
  ScratchDir dir;
  WriteSolver(dir, "SGD", "");  // writes net.prototxt
  const std::string flags = "--model=" + dir.file("net.prototxt") + " --iterations=1";
  const std::regex with_year(R"((^|\n)I20\d{6} )"), without_year(R"((^|\n)I\d{4} )");
  const Result plain = Tool("time", flags);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_TRUE(std::regex_search(plain.output, without_year)) << plain.output;
  EXPECT_FALSE(std::regex_search(plain.output, with_year)) << plain.output;
  const Result flag = Tool("time", "--log_year_in_prefix " + flags);
  EXPECT_TRUE(std::regex_search(flag.output, with_year)) << flag.output;
  const Result variable = RunShell("GLOG_log_year_in_prefix=1 timeout 120 " + ToolPath("time") +
                                   " --logtostderr " + flags);
  EXPECT_TRUE(std::regex_search(variable.output, with_year)) << variable.output;
}

TEST(TrainToolTest, AutoMemoryBudgetTrainsTheGlobalBatchThatFits) {
  ScratchDir dir;
  // Batch 16 with iter_size 2: with room to spare, one batch of 32.
  const Result run = Tool(
      "train", "--solver=" + WriteSolver(dir, "SGD", "iter_size: 2") + " --memory_budget=auto");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Contains(run.output,
                       "batch 32 x iter_size 1 (global batch 32, written 16 x 2), "
                       "no recomputation needed"))
      << run.output;
  EXPECT_TRUE(Contains(run.output, "Top shape: 32 4 (128)"));  // the train net
  EXPECT_TRUE(Contains(run.output, "Top shape: 16 4 (64)"));   // the test net, as written
  EXPECT_TRUE(Contains(run.output, "Optimization Done."));
  EXPECT_FALSE(Contains(run.output, "BatchNorm normalizes")) << run.output;
  // With BatchNorm the merged batch changes what the net computes: said.
  std::string net = kNet;
  const std::string relu = R"(layer { name: "relu")";
  net.replace(net.find(relu), 0, R"(layer { name: "bn" type: "BatchNorm" bottom: "h" top: "h" } )");
  WriteFileAtomically(dir.file("bn.prototxt"), net);
  const Result bn = Tool("train", "--solver=" +
                                      WriteSolver(dir, "SGD",
                                                  StrCat("iter_size: 2 max_iter: 2 net: \"",
                                                         dir.file("bn.prototxt"), "\"")) +
                                      " --memory_budget=auto");
  ASSERT_EQ(bn.status, 0) << bn.output;
  EXPECT_TRUE(Contains(bn.output,
                       "BatchNorm normalizes over each pass's batch, 32 now against 16 as "
                       "written, and updates its statistics 1 time(s) per iteration against 2"))
      << bn.output;
}

// --allreduce_bucket_mb reaches the replicas: per param (0) the net's
// params are reduced one by one, in one bucket (the default) at once.
TEST(TrainToolTest, AllReduceBucketFlagSetsTheCollectivesPerStep) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  auto collectives_per_step = [&](const std::string& flags) {
    const Result run = Tool("train", "--solver=" + solver + " --cpu_replicas=2 " + flags);
    EXPECT_EQ(run.status, 0) << run.output;
    std::smatch match;
    const std::regex line("([0-9.]+) gradient all-reduces per step");
    EXPECT_TRUE(std::regex_search(run.output, match, line)) << run.output;
    return match.empty() ? 0.0 : std::stod(match[1]);
  };
  EXPECT_EQ(collectives_per_step(""), 1.0);
  EXPECT_GT(collectives_per_step("--allreduce_bucket_mb=0"), 1.0);
}

TEST(TrainToolTest, SignalsSnapshotAndStop) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  // Long enough that only SIGINT ends it.
  SolverParameter param;
  ReadProtoFromTextFile(solver, &param);
  param.set_max_iter(100000000);
  param.set_snapshot(0);
  param.set_display(1000);
  WriteProtoToTextFile(param, solver);
  const std::string log = dir.file("log");
  const std::string script =
      StrCat(ToolPath("train"), " --logtostderr --solver=", solver, " > ", log, " 2>&1 & pid=$!\n",
             "wait_for() { for i in $(seq 300); do grep -q \"$1\" ", log,
             " && return 0; sleep 0.1; done; return 1; }\n",
             "wait_for 'Iteration 0, loss' || { kill -9 $pid; exit 90; }\n", "kill -HUP $pid\n",
             "wait_for 'Snapshotting solver state' || { kill -9 $pid; exit 91; }\n",
             // Past the iteration of SIGHUP's snapshot (a stop there writes no
             // second one): two display lines after it.
             "n=$(grep -c 'Iteration [0-9]*, loss' ", log, ")\n",
             "for i in $(seq 300); do [ $(grep -c 'Iteration [0-9]*, loss' ", log,
             ") -gt $((n + 1)) ] && break; sleep 0.1; done\n", "kill -INT $pid\n", "wait $pid\n");
  WriteFileAtomically(dir.file("run.sh"), script);
  const Result run = RunShell("timeout 120 bash " + dir.file("run.sh"));
  const std::string output = ReadFileToString(log);
  ASSERT_EQ(run.status, 0) << run.output << output;
  EXPECT_TRUE(Contains(output, "Optimization stopped early.")) << output;
  // SIGHUP's snapshot and the one snapshot_after_train writes on the stop.
  EXPECT_EQ(
      Numbers(output, R"(Snapshotting solver state to binary proto file \S+_iter_(\d+))").size(),
      2u)
      << output;
}

// The suite's few runs of bench/signal_stress.sh: signals at moments from
// start-up to mid-training end every run cleanly, with whole snapshots.
TEST(TrainToolTest, SignalsAtAnyMomentEndCleanly) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  SolverParameter param;
  ReadProtoFromTextFile(solver, &param);
  param.set_max_iter(100000000);
  param.set_snapshot(0);
  param.set_display(1000);
  param.set_snapshot_prefix(dir.file("run"));
  WriteProtoToTextFile(param, solver);
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"TERM", "0.02"}, {"INT", "0.3"}, {"TERM", "0.8"}, {"INT", "1.2"}};
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [signal, delay] = runs[i];
    const std::string log = dir.file(StrCat("log", i));
    // env: a background job would start with SIGINT ignored.
    const Result run = RunShell(StrCat(
        "env --default-signal=INT,TERM ", ToolPath("train"), " --logtostderr --solver=", solver,
        " > ", log, " 2>&1 & pid=$!; sleep ", delay, "; kill -", signal,
        " $pid; for i in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
        "kill -9 $pid 2>/dev/null; wait $pid"));
    const std::string output = ReadFileToString(log);
    const std::string what = StrCat("SIG", signal, " after ", delay, " s:\n", output);
    EXPECT_FALSE(std::regex_search(output, std::regex(R"(\*\*\*|corrupted|Check failed)"))) << what;
    if (run.status != 0) {
      // Only before train's handler exists may the signal's default act.
      EXPECT_EQ(run.status, 128 + (signal == "TERM" ? SIGTERM : SIGINT)) << what;
      EXPECT_FALSE(Contains(output, "Initializing solver")) << what;
      continue;
    }
    EXPECT_TRUE(Contains(output, "Optimization stopped early.")) << what;
    // snapshot_after_train (SIGINT) or snapshot_stop (SIGTERM): one whole snapshot.
    const std::vector<double> iters =
        Numbers(output, R"(Snapshotting solver state to binary proto file \S+_iter_(\d+))");
    ASSERT_EQ(iters.size(), 1u) << what;
    const std::string stem = StrCat(dir.file("run"), "_iter_", static_cast<int>(iters[0]));
    SolverState state;
    ReadProtoFromBinaryFile(stem + ".solverstate", &state);
    EXPECT_EQ(state.iter(), static_cast<int>(iters[0])) << what;
    NetParameter model;
    ReadProtoFromBinaryFile(stem + ".caffemodel", &model);
    EXPECT_GT(model.layer_size(), 0) << what;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
    }
    fs::remove(stem + ".solverstate");
    fs::remove(stem + ".caffemodel");
  }
}

TEST(TrainToolTest, SignalWhileWaitingForARankStopsNamingIt) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  const std::string log = dir.file("log");
  // Rank 1 never comes; without the signal rank 0 would wait 300 s (and the
  // test's timeout would end it with status 124).
  const Result run = RunShell(
      StrCat("timeout 120 bash -c 'env --default-signal=INT,TERM ", ToolPath("train"),
             " --logtostderr --solver=", solver, " --world_size=2 --rank=0 --rendezvous=file://",
             dir.file("store"), " --comm_timeout=300 --rendezvous_log_seconds=0.2 > ", log,
             " 2>&1 & pid=$!; for i in $(seq 600); do grep -q \"waiting for rank(s) 1 to join (\" ",
             log, " && break; sleep 0.1; done; kill -TERM $pid; wait $pid'"));
  const std::string output = ReadFileToString(log);
  EXPECT_EQ(run.status, 1) << output;
  EXPECT_TRUE(Contains(output, "rank 0 of 2: waiting for rank(s) 1 to join (0 s of 300)"))
      << output;
  EXPECT_TRUE(std::regex_search(
      output, std::regex(R"(rank 0 of 2: stopped by SIGTERM after \d+ s waiting for rank\(s\) 1 )"
                         R"(to join)")))
      << output;
}

TEST(TrainToolTest, Errors) {
  ScratchDir dir;
  const std::string solver = WriteSolver(dir, "SGD", "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--solver is required"},
      {"--solver=" + dir.file("none.prototxt"), dir.file("none.prototxt")},
      {"--solver=" + solver + " --snapshot=a.solverstate --weights=b.caffemodel",
       "--snapshot to resume training or --weights to fine-tune, not both"},
      {"--solver=" + solver + " --sigint_effect=quit", "unknown signal effect 'quit'"},
      {"--solver=" + solver + " --weights=" + dir.file("none.caffemodel"),
       dir.file("none.caffemodel")},
  };
  for (const auto& [flags, message] : cases) {
    const Result run = Tool("train", flags);
    EXPECT_EQ(run.status, 1) << flags << ":\n" << run.output;
    EXPECT_TRUE(Contains(run.output, message)) << flags << ":\n" << run.output;
  }
  // A diverging run stops with the iteration of the first non-finite loss.
  const std::string diverging = WriteSolver(dir, "SGD", "base_lr: 1e30");
  const Result nan = Tool("train", "--solver=" + diverging);
  EXPECT_EQ(nan.status, 1) << nan.output;
  EXPECT_TRUE(std::regex_search(nan.output, std::regex("loss is (NaN|infinite) at iteration \\d+")))
      << nan.output;
}

TEST(TrainToolTest, GpuWithoutADeviceFailsClearly) {
  if (DeviceCount() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  ScratchDir dir;
  const Result run = Tool("train", "--solver=" + WriteSolver(dir, "SGD", "") + " --gpu=0");
  EXPECT_EQ(run.status, 1);
  EXPECT_TRUE(Contains(run.output, "--gpu=0 was given but no CUDA device is available"))
      << run.output;
  const Result query = Tool("device_query", "");
  EXPECT_EQ(query.status, 0) << query.output;
  EXPECT_TRUE(Contains(query.output, "No CUDA device is available")) << query.output;
  EXPECT_EQ(Tool("device_query", "--gpu=0").status, 1);
  // The one-net tools refuse the same way, before building anything.
  const std::string model = "--model=models/lenet/lenet_dummy.prototxt --gpu=0";
  for (const char* tool : {"memory", "time", "test"}) {
    const Result one = Tool(tool, model + (std::string(tool) == "test" ? " --weights=x" : ""));
    EXPECT_EQ(one.status, 1) << tool << ":\n" << one.output;
    EXPECT_TRUE(Contains(one.output, "--gpu=0 was given but no CUDA device is available"))
        << tool << ":\n"
        << one.output;
  }
}

// On a CPU `time` reads the host's clock: Caffe's lines, no device times,
// and each pass at least as long as its layers together (they run inside it).
TEST(TimeToolTest, TimesLayersAndPassesOnTheHostClock) {
  const Result run =
      Tool("time", "--model=models/lenet/lenet_dummy.prototxt --iterations=3 --deterministic");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Contains(run.output, "Iteration: 3 forward-backward time: ")) << run.output;
  EXPECT_FALSE(Contains(run.output, "on the device")) << run.output;
  const std::vector<double> forward = Numbers(run.output, R"(\tforward: ([\d.e-]+) ms\.)");
  const std::vector<double> backward = Numbers(run.output, R"(\tbackward: ([\d.e-]+) ms\.)");
  const std::vector<double> forward_pass =
      Numbers(run.output, R"(Average Forward pass: ([\d.e-]+) ms\.)");
  const std::vector<double> backward_pass =
      Numbers(run.output, R"(Average Backward pass: ([\d.e-]+) ms\.)");
  const std::vector<double> both =
      Numbers(run.output, R"(Average Forward-Backward: ([\d.e-]+) ms\.)");
  ASSERT_FALSE(forward.empty());
  ASSERT_EQ(forward.size(), backward.size());
  ASSERT_EQ(forward_pass.size(), 1u);
  ASSERT_EQ(backward_pass.size(), 1u);
  ASSERT_EQ(both.size(), 1u);
  double forward_sum = 0, backward_sum = 0;
  for (double ms : forward) forward_sum += ms;
  for (double ms : backward) backward_sum += ms;
  EXPECT_LE(forward_sum, forward_pass[0] * 1.001 + 1e-3) << run.output;
  EXPECT_LE(backward_sum, backward_pass[0] * 1.001 + 1e-3) << run.output;
  EXPECT_LE(forward_pass[0] + backward_pass[0], both[0] * 1.001 + 1e-3) << run.output;
  // The per-type lines add up the per-layer ones: LeNet's two convolutions
  // under one line, and every type's share of the pass.
  ASSERT_TRUE(Contains(run.output, "Average time per layer type")) << run.output;
  const std::vector<double> type_forward =
      Numbers(run.output, R"(\tforward: ([\d.e-]+) ms\tbackward: )");
  const std::vector<double> conv_backward =
      Numbers(run.output, R"(\sConvolution\tforward: [\d.e-]+ ms\tbackward: ([\d.e-]+) ms)");
  const std::vector<double> shares = Numbers(run.output, R"(ms\t([\d.]+) %)");
  ASSERT_EQ(conv_backward.size(), 1u) << run.output;
  double type_sum = 0;
  for (double ms : type_forward) type_sum += ms;
  EXPECT_NEAR(type_sum, forward_sum, 1e-3 * forward_sum + 1e-3) << run.output;
  const std::vector<double> conv1 = Numbers(run.output, R"(conv1\tbackward: ([\d.e-]+) ms\.)");
  const std::vector<double> conv2 = Numbers(run.output, R"(conv2\tbackward: ([\d.e-]+) ms\.)");
  ASSERT_EQ(conv1.size(), 1u);
  ASSERT_EQ(conv2.size(), 1u);
  EXPECT_NEAR(conv_backward[0], conv1[0] + conv2[0], 1e-3 * conv_backward[0] + 1e-3);
  double share_sum = 0;
  for (double share : shares) share_sum += share;
  EXPECT_LE(share_sum, 100.5) << run.output;
  EXPECT_GT(share_sum, 0) << run.output;
}

TEST(MemoryToolTest, ReportsEveryStrategyForBothPhases) {
  const Result run = Tool("memory", "--model=models/lenet/lenet_dummy.prototxt --batch=32");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(Contains(run.output, "net LeNet (TRAIN, batch 32)")) << run.output;
  EXPECT_TRUE(Contains(run.output, "net LeNet (TEST, batch 32)")) << run.output;
  const std::vector<double> none = Numbers(run.output, R"(NONE\s+([\d.]+) MiB)");
  const std::vector<double> arena = Numbers(run.output, R"(ARENA\s+([\d.]+) MiB)");
  const std::vector<double> bound = Numbers(run.output, R"(lower bound\s+([\d.]+) MiB)");
  ASSERT_EQ(none.size(), 2u);
  ASSERT_EQ(arena.size(), 2u);
  ASSERT_EQ(bound.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LE(bound[i], arena[i]);
    EXPECT_LT(arena[i], none[i]);
  }
}

TEST(MemoryToolTest, ASolversNetsFollowThePhaseFlag) {
  ScratchDir dir;
  const std::string solver = "--solver=" + WriteSolver(dir, "SGD", "");
  const auto phases = [](const std::string& output) {
    return std::make_pair(Contains(output, "(TRAIN, batch"), Contains(output, "(TEST, batch"));
  };
  const Result both = Tool("memory", solver);
  ASSERT_EQ(both.status, 0) << both.output;
  EXPECT_EQ(phases(both.output), std::make_pair(true, true)) << both.output;
  const Result train = Tool("memory", solver + " --phase=TRAIN");
  ASSERT_EQ(train.status, 0) << train.output;
  EXPECT_EQ(phases(train.output), std::make_pair(true, false)) << train.output;
  const Result test = Tool("memory", solver + " --phase=TEST");
  ASSERT_EQ(test.status, 0) << test.output;
  EXPECT_EQ(phases(test.output), std::make_pair(false, true)) << test.output;
  const Result bad = Tool("memory", solver + " --phase=test");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(Contains(bad.output, "--phase must be TRAIN or TEST, got 'test'")) << bad.output;
}

TEST(MemoryToolTest, Bfloat16WithoutOnednnsBfloat16KernelsIsAStorageType) {
  // oneDNN computes bfloat16 with AVX-512 only. Capped at AVX2 by its own
  // ONEDNN_MAX_CPU_ISA (any CPU then is one without), --precision=BFLOAT16
  // still stores the blobs between convolution and pooling in 16 bits, and
  // every layer computes in FLOAT.
  const std::string memory =
      StrCat("timeout 120 env ONEDNN_MAX_CPU_ISA=AVX2 ", ToolPath("memory"),
             " --logtostderr --model=models/lenet/lenet_dummy.prototxt --batch=32 --phase=TRAIN");
  const Result narrow = RunShell(memory + " --precision=BFLOAT16");
  const Result wide = RunShell(memory);
  ASSERT_EQ(narrow.status, 0) << narrow.output;
  ASSERT_EQ(wide.status, 0) << wide.output;
  EXPECT_TRUE(Contains(narrow.output,
                       "DNNL, forward BFLOAT16 (math FLOAT), backward BFLOAT16 (math FLOAT): 4 "
                       "layers (conv1, pool1, conv2, pool2)"))
      << narrow.output;
  EXPECT_FALSE(Contains(narrow.output, "(math BFLOAT16)")) << narrow.output;
  const std::vector<double> narrow_arena = Numbers(narrow.output, R"(ARENA\s+([\d.]+) MiB)");
  const std::vector<double> wide_arena = Numbers(wide.output, R"(ARENA\s+([\d.]+) MiB)");
  ASSERT_EQ(narrow_arena.size(), 1u) << narrow.output;
  ASSERT_EQ(wide_arena.size(), 1u) << wide.output;
  EXPECT_LT(narrow_arena[0], wide_arena[0]);
  // And it trains: the layers widen and round the 16-bit blobs.
  const Result step =
      RunShell(StrCat("timeout 120 env ONEDNN_MAX_CPU_ISA=AVX2 ", ToolPath("time"),
                      " --logtostderr --model=models/lenet/lenet_dummy.prototxt --batch=8 "
                      "--iterations=1 --precision=BFLOAT16"));
  ASSERT_EQ(step.status, 0) << step.output;
  EXPECT_TRUE(Contains(step.output, "BFLOAT16 on this CPU is a storage type")) << step.output;
}

TEST(MemoryToolTest, ReportsTheBoundInPrototxtAndChosenOrder) {
  const std::string model =
      "--model=models/squeezenet1.1/train_val.prototxt --stage=dummy --batch=2";
  const Result run = Tool("memory", model);
  ASSERT_EQ(run.status, 0) << run.output;
  const std::vector<double> prototxt =
      Numbers(run.output, R"(bound ([\d.]+) MiB in prototxt order)");
  const std::vector<double> chosen = Numbers(run.output, R"(([\d.]+) MiB in the chosen order)");
  const std::vector<double> floor = Numbers(run.output, R"(no order goes below ([\d.]+) MiB)");
  ASSERT_EQ(prototxt.size(), 2u) << run.output;  // TRAIN and TEST
  ASSERT_EQ(chosen.size(), 2u) << run.output;
  ASSERT_EQ(floor.size(), 2u) << run.output;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LE(chosen[i], prototxt[i]);
    EXPECT_LE(floor[i], chosen[i]);
  }
  const Result as_written = Tool("memory", model + " --schedule=prototxt");
  ASSERT_EQ(as_written.status, 0) << as_written.output;
  EXPECT_FALSE(Contains(as_written.output, "chosen order")) << as_written.output;
  const Result bad = Tool("memory", model + " --schedule=fastest");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(Contains(bad.output, "--schedule must be search or prototxt")) << bad.output;
}

TEST(GpuMemoryToolTest, ReportsDeviceBytesAfterOneStep) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const Result run =
      Tool("memory", "--model=models/lenet/lenet_dummy.prototxt --phase=TRAIN --gpu=0");
  ASSERT_EQ(run.status, 0) << run.output;
  const std::vector<double> planned = Numbers(run.output, R"(planned arena ([\d.]+) MiB)");
  const std::vector<double> held = Numbers(run.output, R"(held by Demitasse ([\d.]+) MiB)");
  const std::vector<double> peak = Numbers(run.output, R"(\(peak ([\d.]+) MiB)");
  ASSERT_EQ(planned.size(), 1u) << run.output;
  ASSERT_EQ(held.size(), 1u) << run.output;
  ASSERT_EQ(peak.size(), 1u) << run.output;
  EXPECT_GT(planned[0], 0);
  EXPECT_GE(held[0], planned[0]);  // the arena plus params, gradients and inputs
  EXPECT_GE(peak[0], held[0]);
}

TEST(TestToolTest, ScoresATrainedModel) {
  ScratchDir dir;
  ASSERT_EQ(Tool("train", "--solver=" + WriteSolver(dir, "Adam", "")).status, 0);
  const Result run = Tool("test", "--model=" + dir.file("net.prototxt") +
                                      " --weights=" + dir.file("Adam_solver_iter_200.caffemodel") +
                                      " --iterations=3");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(Numbers(run.output, R"(Batch (\d+), loss = )"), (std::vector<double>{0, 1, 2}));
  const std::vector<double> mean = Numbers(run.output, R"(\] Loss: ([\d.eE+-]+))");
  ASSERT_EQ(mean.size(), 1u);
  EXPECT_LT(mean[0], 0.5);  // trained
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(\] loss = \S+ \(\* 1 = \S+ loss\))")));
  const Result missing = Tool("test", "--model=" + dir.file("net.prototxt"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(Contains(missing.output, "--weights is required"));
}

TEST(UpgradeToolTest, WritesV1NetsAndLegacySolversInTheCurrentFormat) {
  ScratchDir dir;
  const std::string old_net = dir.file("v1.prototxt");
  WriteFileAtomically(old_net, R"(
    name: "old"
    input: "data" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8
    layers { name: "conv" type: CONVOLUTION bottom: "data" top: "conv" blobs_lr: 1 blobs_lr: 2
             convolution_param { num_output: 4 kernel_size: 3 } }
    layers { name: "relu" type: RELU bottom: "conv" top: "conv" }
  )");
  const Result net_run = Tool("upgrade_net_proto_text", old_net + " " + dir.file("new.prototxt"));
  ASSERT_EQ(net_run.status, 0) << net_run.output;
  NetParameter upgraded;
  ReadProtoFromTextFile(dir.file("new.prototxt"), &upgraded);
  EXPECT_EQ(upgraded.layers_size(), 0);
  EXPECT_EQ(upgraded.input_size(), 0);
  ASSERT_EQ(upgraded.layer_size(), 3);
  EXPECT_EQ(upgraded.layer(1).type(), "Convolution");
  EXPECT_EQ(upgraded.layer(1).param(1).lr_mult(), 2);
  upgraded.mutable_state()->set_phase(TEST);
  Net net(upgraded);  // and it runs
  net.Forward();
  EXPECT_EQ(net.blob_by_name("conv")->shape(), (std::vector<int64_t>{1, 4, 6, 6}));

  const std::string old_solver = dir.file("solver.prototxt");
  WriteFileAtomically(old_solver, "solver_type: ADAM\nbase_lr: 0.1\n");
  const Result solver_run =
      Tool("upgrade_solver_proto_text", old_solver + " " + dir.file("solver2.prototxt"));
  ASSERT_EQ(solver_run.status, 0) << solver_run.output;
  SolverParameter solver;
  ReadProtoFromTextFile(dir.file("solver2.prototxt"), &solver);
  EXPECT_EQ(solver.type(), "Adam");
  EXPECT_FALSE(solver.has_solver_type());
  EXPECT_EQ(Tool("upgrade_net_proto_text", old_net).status, 1);  // usage error
}

}  // namespace
}  // namespace demi
