// The solver's cuda_graph: where it applies (CudaGraphBlocker, on any
// machine), and, where a GPU exists, training replayed from CUDA graphs
// (StepGraph) against the same training queued call by call.
#include <set>
#include <string>
#include <vector>

#include "demi/step_graph.hpp"
#include "gpu_test_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

Context GpuContext() {
  Context context;
  context.device = Device::kGPU;
  return context;
}

TEST(CudaGraphTest, TheBlockerSaysWhyGraphsCannotApply) {
  SolverParameter param;
  EXPECT_EQ(CudaGraphBlocker(param, GpuContext()), "");
  EXPECT_EQ(CudaGraphBlocker(param, Context()), "the solver runs on the CPU");
  // Replicas hand gradients over between the graphs' launches.
  Context replicated = GpuContext();
  replicated.num_replicas = 2;
  EXPECT_EQ(CudaGraphBlocker(param, replicated), "");
  param.set_debug_info(true);
  EXPECT_NE(CudaGraphBlocker(param, GpuContext()).find("debug_info"), std::string::npos);
}

/// Dummy data into a small net with what a graph must handle: BatchNorm's
/// statistics (updated on the device), Dropout (drawn on the host each
/// step), the losses whose values and normalizers stay on the device
/// (softmax, sigmoid cross-entropy, Euclidean) and Accuracy with its
/// per-class top, counted on the device. Only the data layer runs outside
/// the graphs. `extra`: more solver fields; `net_extra`: more net fields.
std::string GraphSolver(const std::string& extra, const std::string& net_extra = "") {
  return R"(
    base_lr: 0.05 momentum: 0.9 lr_policy: "step" gamma: 0.5 stepsize: 3 max_iter: 9
    display: 2 average_loss: 3 random_seed: 7 snapshot_after_train: false
    deterministic: true )" +
         extra + R"(
    net_param { )" +
         net_extra + R"(
      layer { name: "data" type: "DummyData" top: "x" top: "label" top: "target"
              dummy_data_param { shape { dim: 8 dim: 3 dim: 6 dim: 6 } shape { dim: 8 }
                                 shape { dim: 8 dim: 3 }
                                 data_filler { type: "gaussian" std: 1 }
                                 data_filler { type: "constant" value: 2 }
                                 data_filler { type: "uniform" min: 0 max: 1 } } }
      layer { name: "conv" type: "Convolution" bottom: "x" top: "conv"
              convolution_param { num_output: 4 kernel_size: 3
                                  weight_filler { type: "xavier" } } }
      layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
      layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
      layer { name: "ip1" type: "InnerProduct" bottom: "conv" top: "ip1"
              inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
      layer { name: "drop" type: "Dropout" bottom: "ip1" top: "ip1" }
      layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "scores"
              inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "scores" bottom: "label"
              top: "loss" }
      layer { name: "sigmoid_loss" type: "SigmoidCrossEntropyLoss" bottom: "scores"
              bottom: "target" top: "sigmoid_loss" loss_weight: 0.5 }
      layer { name: "euclidean_loss" type: "EuclideanLoss" bottom: "scores" bottom: "target"
              top: "euclidean_loss" loss_weight: 0.25 }
      layer { name: "accuracy" type: "Accuracy" bottom: "scores" bottom: "label"
              top: "accuracy" top: "class_accuracy" }
    })";
}

/// Every blob of every layer (params, BatchNorm's statistics) and every
/// output of the two solvers' train nets, bit for bit.
void ExpectTrainedAlike(Solver* reference, Solver* other) {
  const auto& a = reference->net().layers();
  const auto& b = other->net().layers();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(reference->net().layer_names()[i]);
    ASSERT_EQ(a[i]->blobs().size(), b[i]->blobs().size());
    for (size_t j = 0; j < a[i]->blobs().size(); ++j) {
      const Blob& x = *a[i]->blobs()[j];
      const Blob& y = *b[i]->blobs()[j];
      ASSERT_EQ(x.count(), y.count());
      for (int64_t k = 0; k < x.count(); ++k) ASSERT_EQ(x.cpu_data()[k], y.cpu_data()[k]) << k;
    }
  }
  const auto& outputs = reference->net().output_blobs();
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Blob& x = *outputs[j];
    const Blob& y = *other->net().output_blobs()[j];
    ASSERT_EQ(x.count(), y.count());
    for (int64_t k = 0; k < x.count(); ++k) EXPECT_EQ(x.cpu_data()[k], y.cpu_data()[k]) << j;
  }
  EXPECT_EQ(reference->smoothed_loss(), other->smoothed_loss());
}

// On a CPU the field is ignored (with a warning): training is as without it.
TEST(CudaGraphTest, ACpuSolverTrainsAsWithoutIt) {
  auto plain = MakeSolver(GraphSolver(""));
  auto asked = MakeSolver(GraphSolver("cuda_graph: true"));
  EXPECT_TRUE(asked->param().cuda_graph());
  plain->Step(4);
  asked->Step(4);
  ExpectTrainedAlike(plain.get(), asked.get());
}

/// The step of layer `name` in `net`'s execution order.
int StepOf(const Net& net, const std::string& name) {
  const int layer = net.layer_index(name);
  for (size_t step = 0; step < net.execution_order().size(); ++step) {
    if (net.execution_order()[step] == layer) return static_cast<int>(step);
  }
  ADD_FAILURE() << name << " has no step";
  return -1;
}

/// The range of `ranges` that holds `step`, or null.
const StepRange* RangeOf(const std::vector<StepRange>& ranges, int step) {
  for (const StepRange& range : ranges) {
    if (range.first <= step && step <= range.last) return &range;
  }
  return nullptr;
}

// Forward: every step in one range, in order; the data layer outside alone,
// Dropout (which stages its mask) starting a graph, a layer left outside
// alone with a new graph after it.
TEST(CudaGraphTest, ForwardRangesSetSourcesAndLayersLeftOutsideApart) {
  auto solver = MakeSolver(GraphSolver(""));
  const Net& net = solver->net();
  const int steps = static_cast<int>(net.layers().size());
  EXPECT_EQ(PlanStepRanges(net, false, {}, nullptr).size(), 3u);  // data | conv.. | drop..
  const std::vector<StepRange> ranges =
      PlanStepRanges(net, false, {net.layer_index("ip2")}, nullptr);
  int next = 0;
  for (const StepRange& range : ranges) {
    EXPECT_EQ(range.first, next);
    EXPECT_LE(range.first, range.last);
    next = range.last + 1;
  }
  EXPECT_EQ(next, steps);
  const StepRange* data = RangeOf(ranges, StepOf(net, "data"));
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(data->outside);
  EXPECT_EQ(data->first, data->last);
  EXPECT_EQ(RangeOf(ranges, StepOf(net, "drop"))->first, StepOf(net, "drop"));
  const StepRange* ip2 = RangeOf(ranges, StepOf(net, "ip2"));
  EXPECT_TRUE(ip2->outside);
  EXPECT_EQ(ip2->first, ip2->last);
  EXPECT_FALSE(RangeOf(ranges, StepOf(net, "ip2") + 1)->outside);
  EXPECT_EQ(ranges.size(), 5u);  // data | conv..ip1 | drop | ip2 | the rest
}

// Backward: one graph, cut after each layer whose hook hands gradients over
// (not after the last one, which ends the pass anyway) and around a layer
// left outside; the steps that do nothing (data, Accuracy) start and end
// no range.
TEST(CudaGraphTest, BackwardRangesEndWhereGradientsAreHandedOver) {
  auto solver = MakeSolver(GraphSolver(""));
  const Net& net = solver->net();
  EXPECT_EQ(PlanStepRanges(net, true, {}, nullptr).size(), 1u);
  const std::set<int> hand_overs{net.layer_index("ip1"), net.layer_index("conv")};
  const auto hands_over = [&](int layer_id) { return hand_overs.count(layer_id) > 0; };
  EXPECT_EQ(PlanStepRanges(net, true, {}, hands_over).size(), 2u);
  const std::vector<StepRange> ranges =
      PlanStepRanges(net, true, {net.layer_index("ip2")}, hands_over);
  ASSERT_EQ(ranges.size(), 4u);  // the losses.. | ip2 | drop..ip1 | relu..conv
  for (size_t r = 1; r < ranges.size(); ++r) EXPECT_LT(ranges[r].last, ranges[r - 1].first);
  EXPECT_EQ(RangeOf(ranges, StepOf(net, "ip1"))->first, StepOf(net, "ip1"));
  EXPECT_EQ(RangeOf(ranges, StepOf(net, "conv"))->first, StepOf(net, "conv"));
  EXPECT_TRUE(RangeOf(ranges, StepOf(net, "ip2"))->outside);
  for (const char* idle : {"data", "accuracy"}) {
    for (const StepRange& range : ranges) {
      EXPECT_NE(range.first, StepOf(net, idle)) << idle;
      EXPECT_NE(range.last, StepOf(net, idle)) << idle;
    }
  }
}

#ifndef CPU_ONLY
// The passes replayed from graphs train what the same passes queued call by
// call train, bit for bit: params, statistics, Dropout's draws, the losses
// read back and the outputs displayed (which the replays leave on the device
// for the host to fetch); over two Steps (the second replays the graphs the
// first captured) with the host changing a weight between (uploaded before
// the next launch); with several passes per iteration; and with a dynamic
// loss scale that grows every 3 iterations (each new scale drops the graphs,
// which hold the old one).
TEST(GpuCudaGraphTest, ReplayedPassesTrainWhatQueuedPassesTrain) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  struct Case {
    std::string solver, net;
    int captures, replays;
  };
  // A pass as usual, one captured (and replayed), the other 7 (16 with two
  // passes an iteration) replayed, across both Steps; a grown scale after
  // iterations 2, 5 and 8 starts over: iterations 3 and 6 run as usual, 4
  // and 7 capture.
  const std::vector<Case> cases = {
      {"", "", 1, 8},
      {"iter_size: 2", "", 1, 17},
      {"loss_scale_growth_interval: 3", "global_grad_scale_adaptive: true", 3, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.solver);
    auto queued = SolverRegistry::Create(ParseText<SolverParameter>(GraphSolver(c.solver, c.net)),
                                         GpuContext());
    auto replayed = SolverRegistry::Create(
        ParseText<SolverParameter>(GraphSolver(c.solver + " cuda_graph: true", c.net)),
        GpuContext());
    ASSERT_EQ(queued->step_graph(), nullptr);
    ASSERT_NE(replayed->step_graph(), nullptr);
    for (Solver* solver : {queued.get(), replayed.get()}) {
      solver->Step(5);
      solver->net().layer_by_name("conv")->blobs()[0]->mutable_cpu_data()[0] = 0.25f;
      solver->Step(4);
    }
    ExpectTrainedAlike(queued.get(), replayed.get());
    const StepGraph& graph = *replayed->step_graph();
    EXPECT_EQ(graph.captures(), c.captures);
    EXPECT_EQ(graph.replays(), c.replays);
    EXPECT_EQ(graph.LayersOutside(), (std::vector<std::string>{"data"}));
  }
}

// pycaffe's loop, step(1) over and over, replays what its first calls
// captured (each call once captured anew, so such a loop never replayed),
// and trains what queued passes train; a callback added between calls
// (pycaffe's add_callback) has the next pass planned and captured again.
TEST(GpuCudaGraphTest, StepsOfOneReplayWhatTheFirstCaptured) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  SetCurrentDevice(0);
  auto queued = SolverRegistry::Create(ParseText<SolverParameter>(GraphSolver("")), GpuContext());
  auto replayed = SolverRegistry::Create(
      ParseText<SolverParameter>(GraphSolver(" cuda_graph: true")), GpuContext());
  Solver::Callback idle;
  for (Solver* solver : {queued.get(), replayed.get()}) {
    for (int i = 0; i < 6; ++i) solver->Step(1);
    solver->AddCallback(&idle);
    for (int i = 0; i < 3; ++i) solver->Step(1);
    solver->RemoveCallback(&idle);
  }
  ExpectTrainedAlike(queued.get(), replayed.get());
  const StepGraph& graph = *replayed->step_graph();
  // Iterations 0 and 6 as usual, 1 and 7 captured; 5 + 2 replays after them.
  EXPECT_EQ(graph.captures(), 2);
  EXPECT_EQ(graph.replays(), 7);
}
#endif  // CPU_ONLY

}  // namespace
}  // namespace demi
