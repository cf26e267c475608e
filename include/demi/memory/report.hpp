#ifndef DEMI_MEMORY_REPORT_HPP_
#define DEMI_MEMORY_REPORT_HPP_

#include <string>
#include <vector>

#include "demi/memory/liveness.hpp"
#include "demi/memory/planner.hpp"
#include "demi/memory/timeline.hpp"

namespace demi {

/// One layer's engine and types as the net decided them (names only: the
/// report knows nothing of layers).
struct LayerEngineRow {
  std::string layer;
  std::string type;
  std::string engine;
  std::string types;
};

/// Every strategy's bytes for one net, and what is live at its peak.
struct NetMemoryReport {
  std::string net;
  std::string phase;
  int64_t batch = 0;
  size_t none_bytes = 0;
  size_t slots_bytes = 0;
  size_t arena_bytes = 0;
  size_t lower_bound_bytes = 0;
  size_t persistent_bytes = 0;  ///< params, gradients, inputs, outputs, kept blobs
  /// The strategies' figures are for the order the net runs in: the one
  /// the planner chose (`searched_order`) or prototxt order.
  bool searched_order = false;
  size_t prototxt_bound_bytes = 0;    ///< the lower bound in prototxt order
  size_t prototxt_arena_bytes = 0;    ///< ARENA in prototxt order
  size_t order_free_bound_bytes = 0;  ///< no allowed order's bound is lower
  int moved_layers = 0;               ///< layers the chosen order runs at other steps
  int peak_step = 0;
  std::vector<TensorRequest> largest_at_peak;  ///< up to ten, largest first
  /// Live bytes at every step of the schedule.
  std::vector<size_t> live_bytes;
  /// The schedule step by step with the ARENA plan's tensors (their shapes
  /// filled by ReportNetMemory).
  MemoryTimeline timeline;

  /// Recomputation (TRAIN nets, when asked for): the arena under `budget`
  /// (1: the smallest the planner reaches), what is dropped and its cost.
  bool recomputed = false;
  size_t recompute_budget = 0;
  bool recompute_fits = true;
  size_t recompute_arena_bytes = 0;
  size_t recompute_bound_bytes = 0;
  std::vector<std::string> dropped;
  int replayed_layers = 0;
  double forward_flops = 0;
  double extra_flops = 0;
  MemoryTimeline recompute_timeline;  ///< the schedule with its replays

  /// The engine and types of every layer, in prototxt order (filled by the
  /// net's side: ReportNetMemory).
  std::vector<LayerEngineRow> engines;
};

/// The report of a net's `schedule` (a TRAIN net's when it has backward
/// steps), in the order the planner chooses when `search_order`, else in
/// prototxt order. `budget` > 0 adds the recomputation a TRAIN net chooses
/// under it (1 byte: the smallest arena it reaches).
NetMemoryReport ReportMemory(NetSchedule schedule, bool search_order, int64_t batch,
                             size_t budget = 0);

/// One line for a net training on GPU `device`: the arena its plan needs
/// (`planned_arena_bytes`), the bytes Demitasse holds on the device now and
/// at its peak (its own counters), and the device's used and total memory
/// (cudaMemGetInfo).
std::string DeviceMemoryLine(size_t planned_arena_bytes, int device);

/// A human-readable table of one report.
std::string FormatMemoryReport(const NetMemoryReport& report);
/// One JSON object on one line.
std::string MemoryReportJson(const NetMemoryReport& report);

}  // namespace demi

#endif  // DEMI_MEMORY_REPORT_HPP_
