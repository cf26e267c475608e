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

#include "demi/engine_decision.hpp"
#include "demi/memory/report.hpp"
#include "demi/memory/timeline_svg.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/solver_param.hpp"
#include "demi/tools/batch_fit.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/byte_size.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
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

/// --memory_budget as `memory` reads it: 0 (none), 1 ("smallest": the least
/// recomputation reaches) or bytes.
size_t RecomputeBudget() {
  if (FLAGS_memory_budget.empty()) return 0;
  if (FLAGS_memory_budget == "smallest") return 1;
  return MemoryBudgetBytes();
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

/// The phases --phase asks for, TRAIN first: both when it is empty.
std::vector<Phase> PhasesAsked() {
  DEMI_CHECK(FLAGS_phase.empty() || FLAGS_phase == "TRAIN" || FLAGS_phase == "TEST",
             "--phase must be TRAIN or TEST, got '", FLAGS_phase, "'");
  if (FLAGS_phase == "TRAIN") return {TRAIN};
  if (FLAGS_phase == "TEST") return {TEST};
  return {TRAIN, TEST};
}

/// The nets to report on, each with its state: the --model's, or the
/// solver's train net (sized with its history and iter_size, for --fit) and
/// test nets; `solver_tests`: the solver's test nets whatever --phase says
/// (they share the train net's arena, for --fit).
std::vector<FitSpec> CollectNets(std::vector<FitSpec>* solver_tests) {
  std::vector<FitSpec> nets;
  if (!FLAGS_model.empty()) {
    NetParameter param;
    ReadNetParamsFromTextFile(FLAGS_model, &param);
    for (Phase phase : PhasesAsked()) {
      FitSpec spec;
      spec.param = param;
      spec.source = FLAGS_model;
      *spec.param.mutable_state() = StateFor(phase, nullptr);
      nets.push_back(spec);
    }
    return nets;
  }
  DEMI_CHECK(!FLAGS_solver.empty(), "give --model or --solver");
  SolverParameter solver;
  ReadSolverParamsFromTextFile(FLAGS_solver, &solver);  // its test fields checked
  if (!solver.has_train_state()) *solver.mutable_train_state() = StateFor(TRAIN, nullptr);
  // The test nets as the solver builds them (test_net files, test_net_param
  // or the net in TEST), with --level and --stage where no test_state is.
  while (solver.test_state_size() < solver.test_iter_size()) {
    *solver.add_test_state() = StateFor(TEST, nullptr);
  }
  const std::vector<Phase> phases = PhasesAsked();
  const FitSpec train = SolverTrainNet(solver, FLAGS_solver);
  *solver_tests = SolverTestNetSpecs(solver);
  const std::vector<FitSpec>& tests = *solver_tests;
  DEMI_CHECK(!tests.empty() || phases.front() == TRAIN, "--phase=TEST: the solver ", FLAGS_solver,
             " has no test nets (no test_iter)");
  if (phases.front() == TRAIN) nets.push_back(train);
  if (phases.back() == TEST) nets.insert(nets.end(), tests.begin(), tests.end());
  return nets;
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

int FitBatch(FitSpec train, const std::vector<FitSpec>& solver_tests) {
  train.strategy = FLAGS_strategy;
  if (train.param.state().phase() == TRAIN) {
    // The test nets share the arena at their own batches: a floor under it.
    const TestArena tests = SolverTestArena(solver_tests, FLAGS_strategy);
    train.arena_floor = tests.bytes;
    if (tests.net >= 0) {
      std::cout << "Test net #" << tests.net << " plans " << tests.bytes / (1024.0 * 1024.0)
                << " MiB at its batch " << tests.batch
                << (FLAGS_strategy == "NONE"
                        ? ": with NONE nothing is shared, so it adds to the train net's\n"
                        : ": the arena it shares with the train net is never smaller\n");
    }
  }
  const int history = train.history_per_param;
  const size_t budget = ParseByteSize(FLAGS_fit, "--fit");
  const size_t param_bytes = ParamBytes(train);
  const NetMemoryReport written = ReportAtBatch(train, 0);
  const int64_t global = std::max<int64_t>(written.batch, 1) * train.iter_size;
  const int64_t stored = LargestFittingBatch(train, param_bytes, budget, false);
  const bool trains = train.param.state().phase() == TRAIN;
  const int64_t recomputed =
      trains ? LargestFittingBatch(train, param_bytes, budget, true) : stored;
  DEMI_CHECK(std::max(stored, recomputed) > 0, "not even batch 1 fits in ", FLAGS_fit, " (needs ",
             NeededBytes(train, ReportAtBatch(train, 1, trains ? 1 : 0), param_bytes),
             " bytes with params, gradients and ", history, " history blob(s) per param",
             train.arena_floor > 0
                 ? StrCat(", and the test nets' arena of ", train.arena_floor, " bytes under it")
                 : std::string(),
             ")");
  auto describe = [&](int64_t batch, bool recompute) {
    if (batch == 0) return std::string("none");
    const NetMemoryReport best = ReportAtBatch(train, batch, recompute ? 1 : 0);
    return StrCat(batch, " (", NeededBytes(train, best, param_bytes) / (1024.0 * 1024.0), " MiB; ",
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
                << ReportAtBatch(train, recomputed, 1).recompute_arena_bytes << ")";
    }
    std::cout << "\n";
  }
  return 0;
}

/// Device bytes of `spec` built on the --gpu device with its own strategy,
/// after one training (or scoring) step: what the planner promised against
/// what the device holds.
void ReportDeviceMemory(const FitSpec& spec, const Context& context) {
  NetParameter param = spec.param;
  ApplyBatchFlag(&param);
  Net net(param, context, nullptr, spec.source);
  net.Forward();
  if (param.state().phase() == TRAIN) net.Backward();
  SynchronizeDevice();
  std::cout << DeviceMemoryLine(net.memory_plan().arena_bytes, context.device_id) << "\n";
}

int ReportMemory() {
  // A bad --gpu fails before any net is built.
  const Context context = ToolContext();
  ApplyThreadsFlag(FLAGS_threads);
  std::vector<FitSpec> solver_tests;
  std::vector<FitSpec> nets = CollectNets(&solver_tests);
  ScheduleOrder schedule;
  const bool schedule_given = ParseScheduleFlag(&schedule);
  for (std::vector<FitSpec>* specs : {&nets, &solver_tests}) {
    for (FitSpec& spec : *specs) {
      ApplyEngineFlags(&spec.param);
      if (schedule_given) spec.param.set_schedule(schedule);
    }
  }
  if (!FLAGS_fit.empty()) return FitBatch(nets.front(), solver_tests);
  const size_t budget = RecomputeBudget();
  std::vector<NetMemoryReport> reports;
  for (const FitSpec& spec : nets) reports.push_back(ReportAtBatch(spec, FLAGS_batch, budget));
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
      "[--fit=16GiB] [--json] [--timeline=plan.svg] [--gpu=0] [--schedule=search|prototxt]",
      WithNetFlags({"model", "solver", "phase", "batch", "fit", "strategy", "timeline", "json",
                    "memory_budget", "schedule"}),
      WithoutArgs(ReportMemory));
  command.quiet = true;
  return command;
}

}  // namespace demi
