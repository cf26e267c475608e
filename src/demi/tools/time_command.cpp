// `time` (and `caffe time`): times a net's forward and backward passes, per
// layer, in Caffe's log style:
//   time --model=models/lenet/lenet_dummy.prototxt --iterations=50
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "demi/engine_decision.hpp"
#include "demi/net.hpp"
#include "demi/pending_losses.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/interval_timer.hpp"
#include "demi/util/upgrade_proto.hpp"

DEFINE_string(memory_optimization, "", "Override the net's memory planning: NONE, SLOTS or ARENA.");

namespace demi {

namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The intervals `time` measures, as slots of an IntervalTimer.
struct TimeSlots {
  int layers;
  int Forward(int layer) const { return layer; }
  int Backward(int layer) const { return layers + layer; }
  int ForwardPass() const { return 2 * layers; }
  int BackwardPass() const { return 2 * layers + 1; }
  int Iteration() const { return 2 * layers + 2; }
  int count() const { return 2 * layers + 3; }
};

/// The clocks of a timed run: the host's, and a GPU net's device clock
/// (CUDA events). The device's times are the ones reported as Caffe's lines
/// (Caffe times GPU runs with events too); the host's go beside them.
class RunClocks {
 public:
  RunClocks(int slots, bool gpu)
      : host_(MakeHostTimer(slots)), device_(gpu ? MakeDeviceTimer(slots) : nullptr) {}
  void Begin(int slot) {
    host_->Begin(slot);
    if (device_) device_->Begin(slot);
  }
  void End(int slot) {
    if (device_) device_->End(slot);
    host_->End(slot);
  }
  /// Ends the iteration's slot after the device finished its work, so the
  /// host's iteration time is the wall time a step takes.
  void EndIteration(int slot) {
    if (device_) {
      device_->End(slot);
      device_->Collect();
    }
    host_->End(slot);
    host_->Collect();
  }
  /// The reported clock: the device's where there is one.
  const IntervalTimer& main() const { return device_ ? *device_ : *host_; }
  const IntervalTimer* host_beside() const { return device_ ? host_.get() : nullptr; }

 private:
  std::unique_ptr<IntervalTimer> host_, device_;
};

/// The net `time` runs: --model with the phase, state, engine, batch, memory
/// and schedule flags applied.
NetParameter TimedNetParam(Phase phase) {
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
  ApplyBatchFlag(&param);
  if (!FLAGS_memory_budget.empty()) param.set_memory_budget(MemoryBudgetBytes());
  ScheduleOrder schedule;
  if (ParseScheduleFlag(&schedule)) param.set_schedule(schedule);
  return param;
}

/// One forward (and backward) pass, each layer timed. The loss goes into
/// *loss on the net's device, unread, as in training (PendingLosses): on a
/// GPU the host does not wait for the forward pass at the loss layer.
void TimeIteration(Net& net, bool backward, const TimeSlots& slots, RunClocks* clocks,
                   float* loss) {
  const int num_layers = static_cast<int>(net.layers().size());
  clocks->Begin(slots.Iteration());
  clocks->Begin(slots.ForwardPass());
  // In the net's execution order: its plan shares memory on that order.
  for (int step = 0; step < num_layers; ++step) {
    const int i = net.execution_order()[step];
    clocks->Begin(slots.Forward(i));
    net.ForwardAddingLoss(step, step, loss);
    clocks->End(slots.Forward(i));
  }
  clocks->End(slots.ForwardPass());
  if (backward) {
    clocks->Begin(slots.BackwardPass());
    for (int step = num_layers; step-- > 0;) {
      const int i = net.execution_order()[step];
      if (!net.layer_need_backward()[i]) continue;
      clocks->Begin(slots.Backward(i));
      // Through the net: under a memory_budget it first recomputes the
      // activations this layer's backward needs (counted in its time).
      net.BackwardFromTo(step, step);
      clocks->End(slots.Backward(i));
    }
    clocks->End(slots.BackwardPass());
  }
  clocks->EndIteration(slots.Iteration());
}

/// " (host X ms)" beside a device time; "" for a CPU run.
std::string HostBeside(const RunClocks& clocks, int slot, double iterations) {
  const IntervalTimer* host = clocks.host_beside();
  return host ? StrCat(" (host ", host->total_ms(slot) / iterations, " ms)") : std::string();
}

/// Beyond Caffe's lines: the layers' times summed by type, most first, with
/// their share of the iteration, which says where a net's time goes
/// (layers another absorbed show next to nothing: the absorber's time holds
/// theirs).
void ReportTypeAverages(const Net& net, bool backward, const TimeSlots& slots,
                        const IntervalTimer& timer, int iterations) {
  struct TypeTimes {
    std::string type;
    double forward_ms = 0, backward_ms = 0;
    double total_ms() const { return forward_ms + backward_ms; }
  };
  std::map<std::string, TypeTimes> by_type;
  for (int i = 0; i < slots.layers; ++i) {
    const std::string& type = net.layers()[i]->type();
    TypeTimes& times = by_type.try_emplace(type, TypeTimes{type}).first->second;
    times.forward_ms += timer.total_ms(slots.Forward(i)) / iterations;
    if (backward) times.backward_ms += timer.total_ms(slots.Backward(i)) / iterations;
  }
  std::vector<TypeTimes> types;
  for (const auto& entry : by_type) types.push_back(entry.second);
  std::stable_sort(types.begin(), types.end(), [](const TypeTimes& a, const TypeTimes& b) {
    return a.total_ms() > b.total_ms();
  });
  const double pass =
      timer.total_ms(backward ? slots.Iteration() : slots.ForwardPass()) / iterations;
  LOG(INFO) << "Average time per layer type (forward, backward, share of the "
            << (backward ? "forward-backward" : "forward") << " pass):";
  for (const TypeTimes& times : types) {
    const double share = pass > 0 ? 100 * times.total_ms() / pass : 0;
    LOG(INFO) << std::setfill(' ') << std::setw(20) << times.type
              << "\tforward: " << times.forward_ms << " ms\tbackward: " << times.backward_ms
              << " ms\t" << std::fixed << std::setprecision(1) << share << std::defaultfloat
              << " %";
  }
}

/// Caffe's summary lines, averages over `iterations`; a GPU run's are device
/// times, marked so, with the host's beside them.
void ReportAverages(const Net& net, bool backward, const TimeSlots& slots, const RunClocks& clocks,
                    int iterations) {
  const double n = iterations;
  const IntervalTimer& main = clocks.main();
  const bool device = clocks.host_beside() != nullptr;
  auto average = [&](int slot) {
    return StrCat(main.total_ms(slot) / n, " ms", device ? " on the device" : "",
                  HostBeside(clocks, slot, n), ".");
  };
  LOG(INFO) << "Average time per layer: ";
  for (int i = 0; i < slots.layers; ++i) {
    const std::string& name = net.layer_names()[i];
    LOG(INFO) << std::setfill(' ') << std::setw(10) << name
              << "\tforward: " << average(slots.Forward(i));
    if (backward) {
      LOG(INFO) << std::setfill(' ') << std::setw(10) << name
                << "\tbackward: " << average(slots.Backward(i));
    }
  }
  LOG(INFO) << "Average Forward pass: " << average(slots.ForwardPass());
  if (backward) {
    LOG(INFO) << "Average Backward pass: " << average(slots.BackwardPass());
    LOG(INFO) << "Average Forward-Backward: " << average(slots.Iteration());
  }
  ReportTypeAverages(net, backward, slots, main, iterations);
}

int TimeNet() {
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required");
  DEMI_CHECK(FLAGS_iterations > 0, "--iterations must be positive");
  // --phase is shared with memory, where empty means both phases.
  const std::string phase_name = FLAGS_phase.empty() ? "TRAIN" : FLAGS_phase;
  DEMI_CHECK(phase_name == "TRAIN" || phase_name == "TEST", "--phase must be TRAIN or TEST");
  const Context context = ToolContext();
  ApplyThreadsFlag(FLAGS_threads);
  const Phase phase = phase_name == "TRAIN" ? TRAIN : TEST;
  Net net(TimedNetParam(phase), context, nullptr, FLAGS_model);
  const bool backward = phase == TRAIN;

  LOG(INFO) << "Performing Forward";
  float initial_loss = net.Forward();
  LOG(INFO) << "Initial loss: " << initial_loss;
  if (backward) {
    LOG(INFO) << "Performing Backward";
    net.Backward();
  }

  const TimeSlots slots{static_cast<int>(net.layers().size())};
  RunClocks clocks(slots.count(), context.device == Device::kGPU);
  LOG(INFO) << "*** Benchmark begins ***";
  LOG(INFO) << "Testing for " << FLAGS_iterations << " iterations"
            << (context.device == Device::kGPU ? ", timed on the device (CUDA events)" : "") << ".";
  const auto total_start = Clock::now();
  double previous = 0;
  PendingLosses losses(context.device, 1);
  for (int iter = 0; iter < FLAGS_iterations; ++iter) {
    TimeIteration(net, backward, slots, &clocks, losses.Add(iter));
    losses.Clear();  // never read: the loss was shown above
    const double total = clocks.main().total_ms(slots.Iteration());
    LOG(INFO) << "Iteration: " << iter + 1 << " forward-backward time: " << total - previous
              << " ms.";
    previous = total;
  }
  net.CheckDeferredErrors();  // a bad label the device found
  ReportAverages(net, backward, slots, clocks, FLAGS_iterations);
  LOG(INFO) << "Total Time: " << MillisecondsSince(total_start) << " ms.";
  LOG(INFO) << "*** Benchmark ends ***";
  return 0;
}

}  // namespace

Command TimeCommand() {
  return MakeCommand(
      "time", "benchmark model execution time",
      "--model=net.prototxt [--iterations=50] [--phase=TRAIN|TEST] [--batch=N] [--gpu=0 "
      "[--deterministic]] "
      "[--memory_optimization=NONE|SLOTS|ARENA] [--schedule=search|prototxt]",
      {"model", "iterations", "phase", "level", "stage", "gpu", "deterministic",
       "memory_optimization", "engine", "precision", "threads", "batch", "memory_budget",
       "schedule"},
      WithoutArgs(TimeNet));
}

}  // namespace demi
