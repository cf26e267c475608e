#include "demi/memory/report.hpp"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "demi/common.hpp"
#include "demi/memory/recompute.hpp"
#include "demi/memory/schedule_order.hpp"
#include "demi/memory/schedule_search.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

NetMemoryReport ReportMemory(NetSchedule schedule, bool search_order, int64_t batch,
                             size_t budget) {
  // The order the net would run in as planned with ARENA (the report's
  // strategies all plan that order's schedule).
  const ScheduleChoice choice = search_order ? ChooseOrder(schedule.schedule) : ScheduleChoice{};
  if (search_order) schedule.schedule = Reordered(schedule.schedule, choice.order);
  NetLiveness liveness = AnalyzeLiveness(schedule);
  const Problem& problem = liveness.problem;
  NetMemoryReport report;
  const bool train = schedule.schedule.backward;
  report.net = schedule.net_name;
  report.phase = train ? "TRAIN" : "TEST";
  report.batch = batch;
  report.none_bytes = SolvePlan(problem, PlanStrategy::kNone).arena_bytes;
  report.slots_bytes = SolvePlan(problem, PlanStrategy::kSlots).arena_bytes;
  const Plan arena = SolvePlan(problem, PlanStrategy::kArena);
  report.arena_bytes = arena.arena_bytes;
  report.lower_bound_bytes = arena.lower_bound_bytes;
  report.persistent_bytes = liveness.persistent_bytes;
  report.searched_order = search_order;
  report.prototxt_bound_bytes =
      report.searched_order ? choice.prototxt_bound : arena.lower_bound_bytes;
  report.prototxt_arena_bytes = report.searched_order ? choice.prototxt_planned : arena.arena_bytes;
  report.order_free_bound_bytes = choice.order_free_bound;
  report.moved_layers = choice.moved_layers;
  report.timeline = DescribeTimeline(schedule, {}, liveness, arena);
  report.live_bytes = report.timeline.live_bytes;
  report.peak_step =
      static_cast<int>(std::max_element(report.live_bytes.begin(), report.live_bytes.end()) -
                       report.live_bytes.begin());
  for (const TensorRequest& tensor : problem.tensors) {
    if (tensor.LiveAt(report.peak_step)) {
      report.largest_at_peak.push_back(tensor);
    }
  }
  std::sort(report.largest_at_peak.begin(), report.largest_at_peak.end(),
            [](const TensorRequest& a, const TensorRequest& b) { return a.bytes > b.bytes; });
  if (report.largest_at_peak.size() > 10) report.largest_at_peak.resize(10);
  if (budget > 0 && train) {
    const Recomputation recomputation = ChooseRecomputation(schedule.schedule, budget);
    report.recomputed = true;
    report.recompute_budget = budget;
    report.recompute_fits = recomputation.fits;
    report.recompute_arena_bytes = recomputation.plan.arena_bytes;
    report.recompute_bound_bytes = recomputation.plan.lower_bound_bytes;
    for (int m : recomputation.dropped)
      report.dropped.push_back(schedule.schedule.memories[m].name);
    report.replayed_layers = recomputation.replayed_layers;
    report.forward_flops = recomputation.forward_flops;
    report.extra_flops = recomputation.extra_flops;
    const NetLiveness replayed = AnalyzeLiveness(schedule, recomputation.replays);
    report.recompute_timeline = DescribeTimeline(schedule, recomputation.replays, replayed,
                                                 SolvePlan(replayed.problem, PlanStrategy::kArena));
    report.recompute_timeline.dropped = report.dropped;
  }
  return report;
}

namespace {

/// The engines column, one line per engine and types: how many layers, and
/// their names where there are few.
void FormatEngines(const std::vector<LayerEngineRow>& rows, std::ostream* out) {
  if (rows.empty()) return;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const LayerEngineRow& row : rows) {
    const std::string key = StrCat(row.engine, ", ", row.types);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& group) { return group.first == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), {key, {}});
    it->second.push_back(row.layer);
  }
  *out << "  engines and types (engine_decision.hpp):\n";
  constexpr size_t kNamed = 6;
  for (const auto& [key, layers] : groups) {
    *out << "    " << key << ": " << layers.size() << (layers.size() == 1 ? " layer" : " layers");
    if (layers.size() <= kNamed) {
      *out << " (";
      for (size_t i = 0; i < layers.size(); ++i) *out << (i ? ", " : "") << layers[i];
      *out << ")";
    }
    *out << "\n";
  }
}

}  // namespace

std::string FormatMemoryReport(const NetMemoryReport& r) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  out << "net " << r.net << " (" << r.phase << ", batch " << r.batch << ")\n";
  out << "  activations, gradients and layer buffers:\n";
  auto row = [&](const char* name, size_t bytes) {
    out << "    " << std::left << std::setw(12) << name << std::right << std::setw(10) << MiB(bytes)
        << " MiB  " << std::setw(6) << std::setprecision(3)
        << (r.none_bytes ? static_cast<double>(bytes) / r.none_bytes : 0.0) << " x NONE  "
        << std::setw(6)
        << (r.lower_bound_bytes ? static_cast<double>(bytes) / r.lower_bound_bytes : 0.0)
        << " x bound\n"
        << std::setprecision(1);
  };
  row("NONE", r.none_bytes);
  row("SLOTS", r.slots_bytes);
  row("ARENA", r.arena_bytes);
  row("lower bound", r.lower_bound_bytes);
  out << "  persistent (params, gradients, inputs, outputs): " << MiB(r.persistent_bytes)
      << " MiB\n";
  if (r.searched_order) {
    out << "  schedule: bound " << MiB(r.prototxt_bound_bytes) << " MiB in prototxt order, "
        << MiB(r.lower_bound_bytes) << " MiB in the chosen order (";
    if (r.moved_layers > 0) {
      out << r.moved_layers << " layers moved; planned " << MiB(r.prototxt_arena_bytes)
          << " MiB in prototxt order";
    } else {
      out << "prototxt order kept";
    }
    out << "); no order goes below " << MiB(r.order_free_bound_bytes) << " MiB\n";
  }
  if (r.recomputed) {
    out << "  recomputation "
        << (r.recompute_budget == 1 ? std::string("(smallest reachable)")
                                    : StrCat("under a budget of ", MiB(r.recompute_budget), " MiB"))
        << (r.recompute_fits || r.recompute_budget == 1 ? "" : ", NOT MET") << ":\n";
    row("ARENA", r.recompute_arena_bytes);
    row("lower bound", r.recompute_bound_bytes);
    out << "    drops " << r.dropped.size() << " activations, recomputed by " << r.replayed_layers
        << " layer forwards: " << r.extra_flops / 1e9 << " GFLOP more per iteration ("
        << (r.forward_flops > 0 ? 100.0 * r.extra_flops / r.forward_flops : 0.0)
        << " % of a forward pass)\n";
    if (!r.dropped.empty()) {
      out << "    dropped:";
      for (size_t i = 0; i < r.dropped.size() && i < 12; ++i) out << " " << r.dropped[i];
      if (r.dropped.size() > 12) out << " ... (" << r.dropped.size() - 12 << " more)";
      out << "\n";
    }
  }
  FormatEngines(r.engines, &out);
  out << "  largest tensors live at the peak (step " << r.peak_step << "):\n";
  for (const TensorRequest& tensor : r.largest_at_peak) {
    out << "    " << std::setw(10) << MiB(tensor.bytes) << " MiB  " << tensor.name << " [steps "
        << tensor.first_step << ".." << tensor.last_step << "]\n";
  }
  return out.str();
}

std::string MemoryReportJson(const NetMemoryReport& r) {
  // ordered_json keeps the keys in the order written, as the report reads.
  nlohmann::ordered_json json;
  json["net"] = r.net;
  json["phase"] = r.phase;
  json["batch"] = r.batch;
  json["naive_bytes"] = r.none_bytes;
  json["slots_bytes"] = r.slots_bytes;
  json["arena_bytes"] = r.arena_bytes;
  json["lower_bound_bytes"] = r.lower_bound_bytes;
  json["persistent_bytes"] = r.persistent_bytes;
  json["peak_step"] = r.peak_step;
  json["prototxt_lower_bound_bytes"] = r.prototxt_bound_bytes;
  json["prototxt_arena_bytes"] = r.prototxt_arena_bytes;
  if (r.searched_order) {
    json["order_free_bound_bytes"] = r.order_free_bound_bytes;
    json["moved_layers"] = r.moved_layers;
  }
  if (r.recomputed) {
    json["recompute_budget_bytes"] = r.recompute_budget;
    json["recompute_fits"] = r.recompute_fits;
    json["recompute_arena_bytes"] = r.recompute_arena_bytes;
    json["recompute_lower_bound_bytes"] = r.recompute_bound_bytes;
    json["recompute_dropped"] = r.dropped;
    json["recompute_replayed_layers"] = r.replayed_layers;
    json["forward_flops"] = r.forward_flops;
    json["recompute_extra_flops"] = r.extra_flops;
  }
  for (const LayerEngineRow& row : r.engines) {
    json["layers"].push_back(
        {{"name", row.layer}, {"type", row.type}, {"engine", row.engine}, {"types", row.types}});
  }
  // A net name that is not valid UTF-8 is written with U+FFFD, not refused.
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string DeviceMemoryLine(size_t planned_arena_bytes, int device) {
  const DeviceInfo info = GetDeviceInfo(device);
  const DeviceMemoryCounters counters = GetDeviceMemoryCounters();
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "GPU " << device << " memory: planned arena "
       << MiB(planned_arena_bytes) << " MiB; held by Demitasse " << MiB(counters.current)
       << " MiB (peak " << MiB(counters.peak) << " MiB, " << counters.allocations
       << " allocations); device " << MiB(info.total_bytes - info.free_bytes) << " of "
       << MiB(info.total_bytes) << " MiB in use";
  return line.str();
}

}  // namespace demi
