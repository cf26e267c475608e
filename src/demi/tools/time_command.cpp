// `time` (and `caffe time`): times a net's forward and backward passes, per
// layer, in Caffe's log style:
//   time --model=models/lenet/lenet_dummy.prototxt --iterations=50
#include <chrono>
#include <iomanip>
#include <string>
#include <vector>

#include "demi/engine_decision.hpp"
#include "demi/net.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/upgrade_proto.hpp"

DEFINE_string(memory_optimization, "", "Override the net's memory planning: NONE, SLOTS or ARENA.");

namespace demi {

namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int TimeNet() {
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required");
  DEMI_CHECK(FLAGS_iterations > 0, "--iterations must be positive");
  // --phase is shared with memory, where empty means both phases.
  const std::string phase_name = FLAGS_phase.empty() ? "TRAIN" : FLAGS_phase;
  DEMI_CHECK(phase_name == "TRAIN" || phase_name == "TEST", "--phase must be TRAIN or TEST");
  const Context context = ContextForGpuFlag(FLAGS_gpu);
  ApplyThreadsFlag(FLAGS_threads);
  const Phase phase = phase_name == "TRAIN" ? TRAIN : TEST;
  NetParameter param;
  ReadNetParamsFromTextFile(FLAGS_model, &param);
  param.mutable_state()->set_phase(phase);
  param.mutable_state()->set_level(FLAGS_level);
  for (const std::string& stage : SplitList(FLAGS_stage)) param.mutable_state()->add_stage(stage);
  if (!FLAGS_memory_optimization.empty()) {
    MemoryOptimization strategy;
    DEMI_CHECK(MemoryOptimization_Parse(FLAGS_memory_optimization, &strategy),
               "--memory_optimization must be NONE, SLOTS or ARENA, got '",
               FLAGS_memory_optimization, "'");
    param.set_memory_optimization(strategy);
  }
  ApplyEngineFlags(&param);
  if (FLAGS_batch > 0) SetBatchSize(&param, FLAGS_batch);
  if (!FLAGS_memory_budget.empty()) param.set_memory_budget(MemoryBudgetBytes());
  ScheduleOrder schedule;
  if (ParseScheduleFlag(&schedule)) param.set_schedule(schedule);
  Net net(param, context, nullptr, FLAGS_model);
  const bool backward = phase == TRAIN;

  LOG(INFO) << "Performing Forward";
  float initial_loss = net.Forward();
  LOG(INFO) << "Initial loss: " << initial_loss;
  if (backward) {
    LOG(INFO) << "Performing Backward";
    net.Backward();
  }

  const auto& layers = net.layers();
  const size_t num_layers = layers.size();
  std::vector<double> forward_ms(num_layers, 0.0), backward_ms(num_layers, 0.0);
  double total_forward = 0, total_backward = 0;
  LOG(INFO) << "*** Benchmark begins ***";
  LOG(INFO) << "Testing for " << FLAGS_iterations << " iterations.";
  const auto total_start = Clock::now();
  for (int iter = 0; iter < FLAGS_iterations; ++iter) {
    const auto iter_start = Clock::now();
    auto pass_start = Clock::now();
    // In the net's execution order: its plan shares memory on that order.
    for (int i : net.execution_order()) {
      const auto start = Clock::now();
      layers[i]->Forward(net.bottom_vecs()[i], net.top_vecs()[i]);
      forward_ms[i] += MillisecondsSince(start);
    }
    total_forward += MillisecondsSince(pass_start);
    if (backward) {
      pass_start = Clock::now();
      for (size_t step = num_layers; step-- > 0;) {
        const int i = net.execution_order()[step];
        if (!net.layer_need_backward()[i]) continue;
        const auto start = Clock::now();
        // Through the net: under a memory_budget it first recomputes the
        // activations this layer's backward needs (counted in its time).
        net.BackwardFromTo(static_cast<int>(step), static_cast<int>(step));
        backward_ms[i] += MillisecondsSince(start);
      }
      total_backward += MillisecondsSince(pass_start);
    }
    LOG(INFO) << "Iteration: " << iter + 1
              << " forward-backward time: " << MillisecondsSince(iter_start) << " ms.";
  }
  const double n = FLAGS_iterations;
  LOG(INFO) << "Average time per layer: ";
  for (size_t i = 0; i < num_layers; ++i) {
    const std::string& name = net.layer_names()[i];
    LOG(INFO) << std::setfill(' ') << std::setw(10) << name << "\tforward: " << forward_ms[i] / n
              << " ms.";
    if (backward) {
      LOG(INFO) << std::setfill(' ') << std::setw(10) << name
                << "\tbackward: " << backward_ms[i] / n << " ms.";
    }
  }
  LOG(INFO) << "Average Forward pass: " << total_forward / n << " ms.";
  if (backward) {
    LOG(INFO) << "Average Backward pass: " << total_backward / n << " ms.";
    LOG(INFO) << "Average Forward-Backward: " << (total_forward + total_backward) / n << " ms.";
  }
  LOG(INFO) << "Total Time: " << MillisecondsSince(total_start) << " ms.";
  LOG(INFO) << "*** Benchmark ends ***";
  return 0;
}

}  // namespace

Command TimeCommand() {
  return MakeCommand(
      "time", "benchmark model execution time",
      "--model=net.prototxt [--iterations=50] [--phase=TRAIN|TEST] [--batch=N] [--gpu=0] "
      "[--memory_optimization=NONE|SLOTS|ARENA] [--schedule=search|prototxt]",
      {"model", "iterations", "phase", "level", "stage", "gpu", "memory_optimization", "engine",
       "precision", "threads", "batch", "memory_budget", "schedule"},
      WithoutArgs(TimeNet));
}

}  // namespace demi
