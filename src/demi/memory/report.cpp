#include "demi/memory/report.hpp"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "demi/memory/recompute.hpp"
#include "demi/memory/schedule_order.hpp"
#include "demi/memory/schedule_search.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

/// `text` with XML's five special characters as entities, for SVG text.
std::string XmlEscaped(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&apos;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

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
  report.live_bytes.assign(static_cast<size_t>(std::max(liveness.num_steps, 1)), 0);
  for (const TensorRequest& tensor : problem.tensors) {
    for (int step = tensor.first_step; step <= tensor.last_step; ++step) {
      if (!tensor.LiveAt(step)) continue;
      report.live_bytes[step] =
          CheckedAdd(report.live_bytes[step], AlignedBytes(tensor.bytes), [&] {
            return StrCat("the live bytes at step ", step, " with tensor '", tensor.name, "'");
          });
    }
  }
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

std::string MemoryTimelineSvg(const std::vector<NetMemoryReport>& reports) {
  const int width = 800, height = 240, margin = 50;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << height * reports.size() << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  for (size_t n = 0; n < reports.size(); ++n) {
    const NetMemoryReport& r = reports[n];
    const int top = static_cast<int>(n) * height;
    const double max_bytes = std::max<double>(r.none_bytes, 1);
    const size_t steps = r.live_bytes.size();
    auto x = [&](size_t step) {
      return margin + (width - 2.0 * margin) * step / std::max<size_t>(steps, 1);
    };
    auto y = [&](double bytes) {
      return top + height - margin - (height - 2.0 * margin) * bytes / max_bytes;
    };
    svg << "<text x=\"" << margin << "\" y=\"" << top + 20 << "\">" << XmlEscaped(r.net) << " ("
        << r.phase << ", batch " << r.batch << "): live bytes over the schedule, MiB</text>\n";
    svg << "<line x1=\"" << x(0) << "\" y1=\"" << y(r.none_bytes) << "\" x2=\"" << x(steps)
        << "\" y2=\"" << y(r.none_bytes) << "\" stroke=\"#c33\"/><text x=\"" << x(steps) - 160
        << "\" y=\"" << y(r.none_bytes) - 4 << "\" fill=\"#c33\">NONE " << std::fixed
        << std::setprecision(1) << MiB(r.none_bytes) << "</text>\n";
    svg << "<line x1=\"" << x(0) << "\" y1=\"" << y(r.arena_bytes) << "\" x2=\"" << x(steps)
        << "\" y2=\"" << y(r.arena_bytes) << "\" stroke=\"#36c\" stroke-dasharray=\"4\"/><text x=\""
        << x(steps) - 160 << "\" y=\"" << y(r.arena_bytes) - 4 << "\" fill=\"#36c\">ARENA "
        << MiB(r.arena_bytes) << "</text>\n";
    svg << "<polyline fill=\"none\" stroke=\"#393\" points=\"";
    for (size_t step = 0; step < steps; ++step) {
      svg << x(step) << "," << y(r.live_bytes[step]) << " " << x(step + 1) << ","
          << y(r.live_bytes[step]) << " ";
    }
    svg << "\"/><text x=\"" << margin << "\" y=\"" << top + height - 20
        << "\" fill=\"#393\">live bytes (peak = lower bound " << MiB(r.lower_bound_bytes)
        << "); forward steps, then backward</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
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
