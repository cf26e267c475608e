#ifndef DEMI_TOOLS_BATCH_FIT_HPP_
#define DEMI_TOOLS_BATCH_FIT_HPP_

// What batch of a net fits some bytes: `memory --fit=SIZE` reports it and
// `train --memory_budget=auto` trains at it. A net is measured, never bound:
// its plan is computed at each candidate batch without allocating it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// A net to size, with what its solver adds to its bytes.
struct FitSpec {
  NetParameter param;         ///< with its state set
  std::string source;         ///< its prototxt, when it comes from one
  int history_per_param = 1;  ///< solver history blobs per param (Adam: 2)
  int iter_size = 1;
  std::string strategy = "ARENA";  ///< NONE, SLOTS or ARENA
  /// What the solver's test nets plan at their own batches: they share the
  /// train net's arena, which is never smaller (SolverTestArena); with
  /// NONE nothing is shared and it adds.
  size_t arena_floor = 0;
};

/// The train net `solver` builds (from net, net_param, train_net or
/// train_net_param, in its train_state), sized with the solver's history
/// and iter_size.
FitSpec SolverTrainNet(const SolverParameter& solver, const std::string& solver_file);

/// The test nets `solver` builds, each in its test state, as FitSpecs.
std::vector<FitSpec> SolverTestNetSpecs(const SolverParameter& solver);

/// The most any of `tests` plans at its written batch by `strategy`, and
/// which one (index, its batch) for messages.
struct TestArena {
  size_t bytes = 0;
  int net = -1;
  int64_t batch = 0;
};
TestArena SolverTestArena(const std::vector<FitSpec>& tests, const std::string& strategy);

/// Solver history blobs per param for a solver type (Adam, AdaDelta: 2).
int HistoryBlobsPerParam(const std::string& solver_type);

/// The memory report of `spec` at `batch` (0: as written); `budget` > 0 adds
/// recomputation under it (1: the smallest arena it reaches).
NetMemoryReport ReportAtBatch(const FitSpec& spec, int64_t batch, size_t budget = 0);

/// Bytes of the learnable params of `spec` (the same at every batch).
size_t ParamBytes(const FitSpec& spec);

/// What a report needs in all: planned bytes (recomputed, or by the spec's
/// strategy; at least its arena_floor), persistent bytes (params and
/// gradients among them) and the solver's history.
size_t NeededBytes(const FitSpec& spec, const NetMemoryReport& report, size_t param_bytes);

/// The largest batch whose needed bytes fit `budget`; 0 when not even 1
/// does. `recompute`: with the least recomputation reaches.
int64_t LargestFittingBatch(const FitSpec& spec, size_t param_bytes, size_t budget, bool recompute);

/// How `train --memory_budget=auto` trains a net in `available` bytes.
struct AutoFit {
  int64_t written_batch = 0;  ///< the batch of the prototxt
  int64_t global_batch = 0;   ///< written batch times the solver's iter_size
  int64_t batch = 0;          ///< the largest divisor of the global batch that fits
  int iter_size = 1;          ///< global_batch / batch
  /// The arena budget recomputation plans under; 0: none needed.
  size_t memory_budget = 0;
  size_t needed_bytes = 0;  ///< what the chosen batch needs in all
};

/// The largest divisor of the global batch that fits `available` bytes,
/// recomputing (only as much as the room asks) where that lets a larger
/// batch fit. Throws an Error with the figures when not even batch 1 fits.
AutoFit ChooseAutoFit(const FitSpec& train, size_t available, const std::string& limit);

/// Rewrites `solver` so that its train net runs at `fit.batch` with
/// `fit.iter_size` and `fit.memory_budget`, its test nets unchanged.
void ApplyAutoFit(const AutoFit& fit, SolverParameter* solver);

}  // namespace demi

#endif  // DEMI_TOOLS_BATCH_FIT_HPP_
