#include "demi/tools/batch_fit.hpp"

#include <algorithm>
#include <vector>

#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/solver_param.hpp"
#include "demi/test_net_sources.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

namespace {

/// The train net of `solver` as written, before any state is set; `source`:
/// its prototxt, when it comes from one.
NetParameter WrittenTrainNet(const SolverParameter& solver, const std::string& solver_file,
                             std::string* source) {
  NetParameter param;
  source->clear();
  if (solver.has_train_net_param()) {
    param = solver.train_net_param();
  } else if (solver.has_net_param()) {
    param = solver.net_param();
  } else {
    *source = solver.has_train_net() ? solver.train_net() : solver.net();
    DEMI_CHECK(!source->empty(), solver_file,
               " names no net (net, net_param, train_net, train_net_param)");
    ReadNetParamsFromTextFile(*source, &param);
  }
  return param;
}

/// Every divisor of `n`, smallest first.
std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

/// What the plan of `report` takes: recomputed where it was, else by the
/// spec's strategy; at least the spec's arena_floor, which NONE (nothing
/// shared) adds.
size_t PlannedBytes(const FitSpec& spec, const NetMemoryReport& report) {
  const size_t planned = report.recomputed          ? report.recompute_arena_bytes
                         : spec.strategy == "NONE"  ? report.none_bytes
                         : spec.strategy == "SLOTS" ? report.slots_bytes
                                                    : report.arena_bytes;
  if (!report.recomputed && spec.strategy == "NONE") {
    return CheckedAdd(planned, spec.arena_floor, "the bytes of the train and test nets");
  }
  return std::max(planned, spec.arena_floor);
}

}  // namespace

std::vector<FitSpec> SolverTestNetSpecs(const SolverParameter& solver) {
  std::vector<FitSpec> specs;
  for (TestNetSource& test : SolverTestNets(solver)) {
    FitSpec spec;
    spec.param = std::move(test.param);
    spec.source = test.path;
    spec.history_per_param = HistoryBlobsPerParam(solver.type());
    specs.push_back(std::move(spec));
  }
  return specs;
}

TestArena SolverTestArena(const std::vector<FitSpec>& tests, const std::string& strategy) {
  TestArena most;
  for (size_t i = 0; i < tests.size(); ++i) {
    FitSpec test = tests[i];
    test.strategy = strategy;
    test.arena_floor = 0;
    // Planned bytes alone: params, gradients and history are the train net's.
    const NetMemoryReport report = ReportAtBatch(test, 0);
    const size_t bytes = PlannedBytes(test, report);
    if (bytes > most.bytes) most = {bytes, static_cast<int>(i), report.batch};
  }
  return most;
}

int HistoryBlobsPerParam(const std::string& solver_type) {
  return solver_type == "Adam" || solver_type == "AdaDelta" ? 2 : 1;
}

FitSpec SolverTrainNet(const SolverParameter& solver, const std::string& solver_file) {
  FitSpec spec;
  spec.param = WrittenTrainNet(solver, solver_file, &spec.source);
  // The state the solver gives its train net: phase TRAIN, the net's own
  // state, then the solver's train_state.
  NetState state;
  state.set_phase(TRAIN);
  state.MergeFrom(spec.param.state());
  state.MergeFrom(solver.train_state());
  *spec.param.mutable_state() = state;
  ApplySolverOverrides(solver, &spec.param);
  spec.history_per_param = HistoryBlobsPerParam(solver.type());
  spec.iter_size = std::max(1, solver.iter_size());
  return spec;
}

NetMemoryReport ReportAtBatch(const FitSpec& spec, int64_t batch, size_t budget) {
  NetParameter param = spec.param;
  param.set_memory_optimization(NONE);  // measure only: bind nothing
  if (batch > 0) SetBatchSize(&param, batch);
  Net net(param, Context(), nullptr, spec.source);
  // The batch as written: the first axis of the first blob (an input).
  const bool has_batch_axis = !net.blobs().empty() && net.blobs()[0]->num_axes() > 0;
  const int64_t actual = batch > 0 ? batch : (has_batch_axis ? net.blobs()[0]->shape(0) : 0);
  return ReportNetMemory(net, actual, budget);
}

size_t ParamBytes(const FitSpec& spec) {
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

size_t NeededBytes(const FitSpec& spec, const NetMemoryReport& report, size_t param_bytes) {
  const size_t planned = PlannedBytes(spec, report);
  // persistent already holds params and their gradients; add solver history.
  const char* what = "the bytes needed with params and solver history";
  const size_t history_bytes =
      CheckedMul(param_bytes, static_cast<size_t>(spec.history_per_param), what);
  return CheckedAdd(CheckedAdd(planned, report.persistent_bytes, what), history_bytes, what);
}

int64_t LargestFittingBatch(const FitSpec& spec, size_t param_bytes, size_t budget,
                            bool recompute) {
  auto fits = [&](int64_t batch) {
    return NeededBytes(spec, ReportAtBatch(spec, batch, recompute ? 1 : 0), param_bytes) <= budget;
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

AutoFit ChooseAutoFit(const FitSpec& train, size_t available, const std::string& limit) {
  AutoFit fit;
  fit.written_batch = std::max<int64_t>(ReportAtBatch(train, 0).batch, 1);
  fit.global_batch = fit.written_batch * train.iter_size;
  const size_t param_bytes = ParamBytes(train);
  // Bytes grow with the batch, so the divisors that fit are a prefix: find
  // its end by bisection, recomputing as much as the planner can.
  const std::vector<int64_t> divisors = Divisors(fit.global_batch);
  auto recomputed_need = [&](int64_t batch) {
    return NeededBytes(train, ReportAtBatch(train, batch, 1), param_bytes);
  };
  const size_t batch1_need = recomputed_need(1);
  DEMI_CHECK(batch1_need <= available, "--memory_budget=auto: not even batch 1 of net '",
             train.param.name(), "' fits: it needs ", MiB(batch1_need),
             " MiB with params, gradients, solver history and the most recomputation",
             train.arena_floor > 0
                 ? StrCat(" (the test nets, sharing its arena, plan ", MiB(train.arena_floor),
                          " MiB of it at their own batches)")
                 : std::string(),
             ", but ", MiB(available), " MiB are available (", limit, ")");
  size_t lo = 0, hi = divisors.size();  // divisors[lo] fits; divisors[hi] does not (or end)
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (recomputed_need(divisors[mid]) <= available ? lo : hi) = mid;
  }
  fit.batch = divisors[lo];
  fit.iter_size = static_cast<int>(fit.global_batch / fit.batch);
  const NetMemoryReport stored = ReportAtBatch(train, fit.batch);
  fit.needed_bytes = NeededBytes(train, stored, param_bytes);
  if (fit.needed_bytes <= available) return fit;  // fits without recomputation
  // The arena may take what params, gradients and history leave (the
  // test nets' floor is within it).
  NetMemoryReport no_arena = stored;
  no_arena.arena_bytes = no_arena.none_bytes = no_arena.slots_bytes = 0;
  FitSpec without_floor = train;
  without_floor.arena_floor = 0;
  const size_t fixed = NeededBytes(without_floor, no_arena, param_bytes);
  fit.memory_budget = available - fixed;
  fit.needed_bytes =
      NeededBytes(train, ReportAtBatch(train, fit.batch, fit.memory_budget), param_bytes);
  return fit;
}

void ApplyAutoFit(const AutoFit& fit, SolverParameter* solver) {
  std::string source;
  NetParameter net = WrittenTrainNet(*solver, "the solver", &source);
  SetBatchSize(&net, fit.batch);
  // The test nets keep their batch: a generic net (net, net_param) becomes
  // one test_net_param per test instance it served, in InitTestNets' order
  // (test_net_param, then test_net files, then the generic net).
  const bool generic = solver->has_net() || solver->has_net_param();
  if (generic) {
    NetParameter written;
    if (solver->has_net_param()) {
      written = solver->net_param();
    } else {
      ReadNetParamsFromTextFile(solver->net(), &written);
    }
    std::vector<NetParameter> tests(solver->test_net_param().begin(),
                                    solver->test_net_param().end());
    for (const std::string& path : solver->test_net()) {
      tests.emplace_back();
      ReadNetParamsFromTextFile(path, &tests.back());
    }
    while (static_cast<int>(tests.size()) < solver->test_iter_size()) tests.push_back(written);
    solver->clear_test_net();
    solver->clear_test_net_param();
    for (NetParameter& test : tests) solver->add_test_net_param()->Swap(&test);
  }
  solver->clear_net();
  solver->clear_net_param();
  solver->clear_train_net();
  *solver->mutable_train_net_param() = net;
  solver->set_iter_size(fit.iter_size);
  if (fit.memory_budget > 0) solver->set_memory_budget(fit.memory_budget);
}

}  // namespace demi
