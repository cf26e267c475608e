// `memory` (and `caffe memory`): reports how much memory a net's
// activations, gradients and layer buffers take under each planning
// strategy, and finds the largest batch that fits:
//   memory --model=models/lenet/lenet_dummy.prototxt [--batch=32] [--phase=TRAIN]
//   memory --solver=solver.prototxt --fit=16GiB [--json] [--timeline=plan.svg]
//   memory --model=net.prototxt --gpu=0   (also device bytes after one step)
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/net.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/byte_size.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
#include "demi/util/engine.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"

DEFINE_string(fit, "",
              "Find the largest batch whose planned bytes, with params, gradients and "
              "solver history, fit this budget (e.g. 16GiB, 512MiB).");
DEFINE_string(strategy, "ARENA", "Strategy used by --fit: NONE, SLOTS or ARENA.");
DEFINE_string(timeline, "", "Write an SVG chart of live bytes over the schedule to this file.");
DEFINE_bool(json, false, "Print one JSON object per net per line instead of tables.");

namespace demi {

namespace {

struct NetSpec {
  NetParameter param;  ///< with its state set
  std::string source;  ///< its prototxt, when it comes from one
};

/// --memory_budget as `memory` reads it: 0 (none), 1 ("smallest": the least
/// recomputation reaches) or bytes.
size_t RecomputeBudget() {
  if (FLAGS_memory_budget.empty()) return 0;
  if (FLAGS_memory_budget == "smallest") return 1;
  return ParseByteSize(FLAGS_memory_budget, "--memory_budget");
}

NetState StateFor(Phase phase, const NetState* base) {
  NetState state;
  if (base) state = *base;
  state.set_phase(phase);
  if (!base) {
    state.set_level(FLAGS_level);
    for (const std::string& stage : SplitList(FLAGS_stage)) state.add_stage(stage);
  }
  return state;
}

/// The nets to report on, each with its state, the number of history blobs
/// per param the solver keeps and its iter_size (for --fit).
std::vector<NetSpec> CollectNets(int* history_per_param, int* iter_size) {
  std::vector<NetSpec> nets;
  *history_per_param = 1;  // SGD with momentum, unless a solver says otherwise
  *iter_size = 1;
  if (!FLAGS_model.empty()) {
    NetParameter param;
    ReadNetParamsFromTextFile(FLAGS_model, &param);
    std::vector<Phase> phases;
    if (FLAGS_phase.empty() || FLAGS_phase == "TRAIN") phases.push_back(TRAIN);
    if (FLAGS_phase.empty() || FLAGS_phase == "TEST") phases.push_back(TEST);
    DEMI_CHECK(!phases.empty(), "--phase must be TRAIN or TEST");
    for (Phase phase : phases) {
      NetSpec spec{param, FLAGS_model};
      *spec.param.mutable_state() = StateFor(phase, nullptr);
      nets.push_back(spec);
    }
    return nets;
  }
  DEMI_CHECK(!FLAGS_solver.empty(), "give --model or --solver");
  SolverParameter solver;
  ReadProtoFromTextFile(FLAGS_solver, &solver);
  const std::string type = solver.type();
  *history_per_param = (type == "Adam" || type == "AdaDelta") ? 2 : 1;
  *iter_size = std::max(1, solver.iter_size());
  NetParameter param;
  std::string path;
  if (solver.has_net_param()) {
    param = solver.net_param();
  } else if (solver.has_train_net_param()) {
    param = solver.train_net_param();
  } else {
    path = solver.has_net() ? solver.net() : solver.train_net();
    DEMI_CHECK(!path.empty(), FLAGS_solver, " names no net (net, net_param, train_net)");
    ReadNetParamsFromTextFile(path, &param);
  }
  NetSpec train{param, path};
  *train.param.mutable_state() =
      StateFor(TRAIN, solver.has_train_state() ? &solver.train_state() : nullptr);
  nets.push_back(train);
  const int num_tests = std::max(solver.test_iter_size(), solver.test_state_size());
  for (int i = 0; i < num_tests; ++i) {
    NetSpec test{param, path};
    *test.param.mutable_state() =
        StateFor(TEST, i < solver.test_state_size() ? &solver.test_state(i) : nullptr);
    nets.push_back(test);
  }
  return nets;
}

NetMemoryReport Report(const NetSpec& spec, int64_t batch, size_t budget = 0) {
  NetParameter param = spec.param;
  param.set_memory_optimization(NONE);  // measure only: bind nothing
  if (batch > 0) SetBatchSize(&param, batch);
  Net net(param, Context(), nullptr, spec.source);
  // The batch as written: the first axis of the first blob (an input).
  const bool has_batch_axis = !net.blobs().empty() && net.blobs()[0]->num_axes() > 0;
  const int64_t actual = batch > 0 ? batch : (has_batch_axis ? net.blobs()[0]->shape(0) : 0);
  return ReportNetMemory(net, actual, budget);
}

size_t Needed(const NetMemoryReport& report, size_t param_bytes, int history) {
  const size_t planned = report.recomputed           ? report.recompute_arena_bytes
                         : FLAGS_strategy == "NONE"  ? report.none_bytes
                         : FLAGS_strategy == "SLOTS" ? report.slots_bytes
                                                     : report.arena_bytes;
  // persistent already holds params and their gradients; add solver history.
  const char* what = "the bytes needed with params and solver history";
  const size_t history_bytes = CheckedMul(param_bytes, static_cast<size_t>(history), what);
  return CheckedAdd(CheckedAdd(planned, report.persistent_bytes, what), history_bytes, what);
}

size_t ParamBytes(const NetSpec& spec) {
  NetParameter param = spec.param;
  param.set_memory_optimization(NONE);
  SetBatchSize(&param, 1);
  Net net(param, Context(), nullptr, spec.source);
  size_t bytes = 0;
  for (const Blob* blob : net.learnable_params()) {
    bytes = CheckedAdd(bytes, blob->data()->size(), "the bytes of the params");
  }
  return bytes;
}

/// The largest batch whose bytes fit `budget` (0 when not even 1 does);
/// `recompute`: with the least recomputation reaches.
int64_t LargestFittingBatch(const NetSpec& train, int history, size_t param_bytes, size_t budget,
                            bool recompute) {
  auto fits = [&](int64_t batch) {
    return Needed(Report(train, batch, recompute ? 1 : 0), param_bytes, history) <= budget;
  };
  if (!fits(1)) return 0;
  int64_t lo = 1, hi = 2;
  while (fits(hi) && hi < (int64_t{1} << 20)) lo = hi, hi *= 2;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

/// How `batch` keeps the prototxt's global batch (batch as written times the
/// solver's iter_size): the largest divisor of it that fits, and its iter_size.
std::string GlobalBatchAdvice(int64_t batch, int64_t global) {
  if (batch >= global) return StrCat("the global batch ", global, " fits at iter_size 1");
  int64_t divisor = batch;
  while (global % divisor != 0) --divisor;
  return StrCat("keep the global batch ", global, " with batch ", divisor, " and iter_size ",
                global / divisor);
}

int FitBatch(const NetSpec& train, int history, int iter_size) {
  const size_t budget = ParseByteSize(FLAGS_fit, "--fit");
  const size_t param_bytes = ParamBytes(train);
  const NetMemoryReport written = Report(train, 0);
  const int64_t global = std::max<int64_t>(written.batch, 1) * iter_size;
  const int64_t stored = LargestFittingBatch(train, history, param_bytes, budget, false);
  const bool trains = train.param.state().phase() == TRAIN;
  const int64_t recomputed =
      trains ? LargestFittingBatch(train, history, param_bytes, budget, true) : stored;
  DEMI_CHECK(std::max(stored, recomputed) > 0, "not even batch 1 fits in ", FLAGS_fit, " (needs ",
             Needed(Report(train, 1, trains ? 1 : 0), param_bytes, history),
             " bytes with params, gradients and ", history, " history blob(s) per param)");
  auto describe = [&](int64_t batch, bool recompute) {
    if (batch == 0) return std::string("none");
    const NetMemoryReport best = Report(train, batch, recompute ? 1 : 0);
    return StrCat(batch, " (", Needed(best, param_bytes, history) / (1024.0 * 1024.0), " MiB; ",
                  GlobalBatchAdvice(batch, global), ")");
  };
  std::cout << "Largest batch that fits " << FLAGS_fit << " with " << FLAGS_strategy
            << " (planned activations and gradients, params, gradients and " << history
            << " history blob(s) per param):\n";
  std::cout << "  without recomputation: " << describe(stored, false) << "\n";
  if (trains) {
    std::cout << "  with recomputation:    " << describe(recomputed, true);
    // The budget train takes is the arena's alone (params and history apart).
    if (recomputed > 0) {
      std::cout << " (train at that batch with --memory_budget="
                << Report(train, recomputed, 1).recompute_arena_bytes << ")";
    }
    std::cout << "\n";
  }
  return 0;
}

/// Device bytes of `spec` built on the --gpu device with its own strategy,
/// after one training (or scoring) step: what the planner promised against
/// what the device holds.
void ReportDeviceMemory(const NetSpec& spec, const Context& context) {
  NetParameter param = spec.param;
  if (FLAGS_batch > 0) SetBatchSize(&param, FLAGS_batch);
  Net net(param, context, nullptr, spec.source);
  net.Forward();
  if (param.state().phase() == TRAIN) net.Backward();
  SynchronizeDevice();
  std::cout << DeviceMemoryLine(net, context.device_id) << "\n";
}

int ReportMemory() {
  // A bad --gpu fails before any net is built.
  const Context context = ContextForGpuFlag(FLAGS_gpu);
  ApplyThreadsFlag(FLAGS_threads);
  int history = 1, iter_size = 1;
  std::vector<NetSpec> nets = CollectNets(&history, &iter_size);
  Engine engine;
  if (ParseEngineFlag(FLAGS_engine, &engine)) {
    for (NetSpec& spec : nets) spec.param.set_engine(engine);
  }
  if (!FLAGS_fit.empty()) return FitBatch(nets.front(), history, iter_size);
  const size_t budget = RecomputeBudget();
  std::vector<NetMemoryReport> reports;
  for (const NetSpec& spec : nets) reports.push_back(Report(spec, FLAGS_batch, budget));
  for (const auto& report : reports) {
    std::cout << (FLAGS_json ? MemoryReportJson(report) : FormatMemoryReport(report)) << "\n";
  }
  if (!FLAGS_timeline.empty()) {
    WriteFileAtomically(FLAGS_timeline, MemoryTimelineSvg(reports));
    std::cerr << "Wrote " << FLAGS_timeline << "\n";
  }
  if (context.device == Device::kGPU) ReportDeviceMemory(nets.front(), context);
  return 0;
}

}  // namespace

Command MemoryCommand() {
  Command command = MakeCommand(
      "memory", "report a net's planned memory and the largest batch that fits",
      "--model=net.prototxt | --solver=solver.prototxt [--phase=TRAIN|TEST] [--batch=N] "
      "[--fit=16GiB] [--json] [--timeline=plan.svg] [--gpu=0]",
      {"model", "solver", "phase", "batch", "fit", "strategy", "timeline", "json", "gpu", "engine",
       "threads", "level", "stage", "memory_budget"},
      WithoutArgs(ReportMemory));
  command.quiet = true;
  return command;
}

}  // namespace demi
