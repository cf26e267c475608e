#include "demi/memory/timeline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

#include "demi/common.hpp"
#include "demi/util/strings.hpp"
#include "demi/util/svg.hpp"

namespace demi {

namespace {

constexpr double kWidth = 1000, kChartHeight = 300;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 160;  // margins
constexpr double kPanel = kTop + kChartHeight + kBottom;
constexpr int kMaxNamedSteps = 90;  ///< more steps than this: every k-th is named

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::string Fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string Caption(const NetMemoryReport& r, const MemoryTimeline& t, bool recompute) {
  std::string text = StrCat(r.net, " (", r.phase, ", batch ", r.batch, "): ");
  if (recompute) {
    // A budget of 1 byte asks for the smallest arena recomputation reaches.
    const std::string budget = r.recompute_budget <= 1
                                   ? std::string("as small as it goes")
                                   : StrCat("under ", Fixed(MiB(r.recompute_budget), 1), " MiB");
    return text + StrCat("with recomputation ", budget, ": arena ", Fixed(MiB(t.arena_bytes), 1),
                         " MiB",
                         r.recompute_fits || r.recompute_budget <= 1 ? "" : " (over budget)", ", ",
                         t.dropped.size(), " dropped, ", r.replayed_layers, " replayed steps");
  }
  return text + (t.forward_steps < static_cast<int>(t.steps.size())
                     ? "memory over the schedule, forward steps then backward"
                     : "memory over the schedule (forward steps only: a TEST net has no "
                       "backward)");
}

std::string StepLabel(const MemoryTimeline& t, size_t step) {
  switch (t.kinds[step]) {
    case MemoryTimeline::kBackward:
      return t.steps[step] + " (bwd)";
    case MemoryTimeline::kRecompute:
      return "recompute " + t.steps[step];
    default:
      return t.steps[step];
  }
}

/// `label` cut to fit under the axis.
std::string Shortened(const std::string& label) {
  return label.size() <= 30 ? label : label.substr(0, 28) + "..";
}

/// Fill colour of a tensor: activations blue, gradients orange, layer buffers
/// purple, scratch grey; a dropped (recomputed) tensor red.
const char* Fill(const TimelineTensor& tensor, const std::set<std::string>& dropped) {
  const std::string& name = tensor.request.name;
  if (dropped.count(name)) return "#e06060";
  if (tensor.memory == nullptr) return "#bbbbbb";
  if (EndsWith(name, " diff")) return "#f0a860";
  if (name.find('/') != std::string::npos) return "#b090d0";
  return "#7fa7e0";
}

void DrawPanel(const NetMemoryReport& r, const MemoryTimeline& t, bool recompute, double top,
               std::ostream& svg) {
  const size_t steps = std::max<size_t>(t.steps.size(), 1);
  const size_t peak =
      t.live_bytes.empty() ? 0 : *std::max_element(t.live_bytes.begin(), t.live_bytes.end());
  // The scale shows the plan; NONE, often far above it, is drawn only if near.
  const double scale_bytes =
      std::max<double>({static_cast<double>(t.arena_bytes), static_cast<double>(peak), 1.0}) * 1.1;
  const bool none_fits = r.none_bytes <= scale_bytes * 1.5;
  const double max_mib =
      MiB(none_fits ? std::max<double>(scale_bytes, r.none_bytes) * 1.02 : scale_bytes);
  const double chart_width = kWidth - kLeft - kRight;
  auto x = [&](double step) { return kLeft + chart_width * step / steps; };
  auto y = [&](double mib) { return top + kTop + kChartHeight * (1 - mib / max_mib); };
  const double bottom = top + kTop + kChartHeight;

  svg << "<g class=\"" << (recompute ? "recompute" : "timeline") << "\">\n";
  svg << "<text class=\"caption\" x=\"" << kLeft << "\" y=\"" << top + 22 << "\" font-size=\"14\">"
      << XmlEscaped(Caption(r, t, recompute)) << "</text>\n";
  // MiB axis.
  const double tick = TickStep(max_mib);
  for (double mib = 0; mib <= max_mib + 1e-9; mib += tick) {
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << Fixed(y(mib), 1) << "\" x2=\"" << kWidth - kRight
        << "\" y2=\"" << Fixed(y(mib), 1) << "\" stroke=\"#e4e4e4\"/>"
        << "<text class=\"mib-tick\" x=\"" << kLeft - 6 << "\" y=\"" << Fixed(y(mib) + 4, 1)
        << "\" text-anchor=\"end\">" << Fixed(mib, tick < 1 ? 2 : 0) << " MiB</text>\n";
  }
  svg << "<text x=\"14\" y=\"" << top + kTop + kChartHeight / 2 << "\" transform=\"rotate(-90 14 "
      << top + kTop + kChartHeight / 2 << ")\" text-anchor=\"middle\">MiB</text>\n";
  // Tensors: the plan as a map of offsets over steps.
  const std::set<std::string> dropped(t.dropped.begin(), t.dropped.end());
  for (const TimelineTensor& tensor : t.tensors) {
    const TensorRequest& q = tensor.request;
    const std::string title = XmlEscaped(
        StrCat(q.name, tensor.shape.empty() ? "" : StrCat(", shape ", tensor.shape), ", ", q.bytes,
               " bytes (", Fixed(MiB(q.bytes), 2), " MiB), live at steps ", q.first_step, "..",
               q.last_step, q.has_gap() ? StrCat(" but ", q.gap_first, "..", q.gap_last) : "",
               dropped.count(q.name) ? "; dropped after forward, recomputed" : ""));
    for (const auto& [first, last] : q.LiveIntervals()) {
      const double y0 = y(MiB(tensor.offset + q.bytes)), y1 = y(MiB(tensor.offset));
      svg << "<rect class=\"tensor\" x=\"" << Fixed(x(first), 2) << "\" y=\"" << Fixed(y0, 2)
          << "\" width=\"" << Fixed(x(last + 1) - x(first), 2) << "\" height=\""
          << Fixed(std::max(y1 - y0, 0.5), 2) << "\" fill=\"" << Fill(tensor, dropped)
          << "\" stroke=\"#ffffff\" stroke-width=\"0.3\"><title>" << title << "</title></rect>\n";
    }
  }
  // Live bytes, arena size, NONE.
  svg << "<polyline class=\"live\" fill=\"none\" stroke=\"#2a2\" stroke-width=\"1.5\" points=\"";
  for (size_t step = 0; step < t.live_bytes.size(); ++step) {
    const double level = y(MiB(t.live_bytes[step]));
    svg << Fixed(x(step), 1) << "," << Fixed(level, 1) << " " << Fixed(x(step + 1), 1) << ","
        << Fixed(level, 1) << " ";
  }
  svg << "\"/>\n";
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << Fixed(y(MiB(t.arena_bytes)), 1) << "\" x2=\""
      << kWidth - kRight << "\" y2=\"" << Fixed(y(MiB(t.arena_bytes)), 1)
      << "\" stroke=\"#36c\" stroke-dasharray=\"4\"/>\n";
  svg << "<text class=\"legend\" x=\"" << kWidth - kRight << "\" y=\"" << top + 40
      << "\" text-anchor=\"end\"><tspan fill=\"#36c\">ARENA " << Fixed(MiB(t.arena_bytes), 1)
      << " MiB (dashed)</tspan>  <tspan fill=\"#2a2\">live bytes, peak = lower bound "
      << Fixed(MiB(peak), 1) << " MiB</tspan>  <tspan fill=\"#c33\">NONE "
      << Fixed(MiB(r.none_bytes), 1) << " MiB" << (none_fits ? "" : " (above the scale)")
      << "</tspan></text>\n";
  if (none_fits) {
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << Fixed(y(MiB(r.none_bytes)), 1) << "\" x2=\""
        << kWidth - kRight << "\" y2=\"" << Fixed(y(MiB(r.none_bytes)), 1)
        << "\" stroke=\"#c33\"/>\n";
  }
  // Step axis: numbers below, the layer each step runs under them.
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << bottom << "\" x2=\"" << kWidth - kRight
      << "\" y2=\"" << bottom << "\" stroke=\"#000\"/>\n";
  // Numbers at round steps, at most ~25 of them; names of up to
  // kMaxNamedSteps steps.
  size_t numbered = 1;
  for (size_t round : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}) {
    numbered = round;
    if (t.steps.size() / round <= 25) break;
  }
  for (size_t step = 0; step < t.steps.size(); step += numbered) {
    const double centre = x(step + 0.5);
    svg << "<line x1=\"" << Fixed(centre, 1) << "\" y1=\"" << bottom << "\" x2=\""
        << Fixed(centre, 1) << "\" y2=\"" << bottom + 3
        << "\" stroke=\"#000\"/><text class=\"step\" x=\"" << Fixed(centre, 1) << "\" y=\""
        << bottom + 12 << "\" font-size=\"8\" text-anchor=\"middle\">" << step << "</text>\n";
  }
  const size_t every = (t.steps.size() + kMaxNamedSteps - 1) / kMaxNamedSteps;
  for (size_t step = 0; step < t.steps.size(); step += std::max<size_t>(every, 1)) {
    const double centre = x(step + 0.5);
    const char* colour = t.kinds[step] == MemoryTimeline::kRecompute  ? "#c33"
                         : t.kinds[step] == MemoryTimeline::kBackward ? "#a60"
                                                                      : "#333";
    svg << "<text class=\"step-name\" x=\"" << Fixed(centre, 1) << "\" y=\"" << bottom + 18
        << "\" font-size=\"8\" fill=\"" << colour
        << "\" text-anchor=\"end\" transform=\"rotate(-60 " << Fixed(centre, 1) << " "
        << bottom + 18 << ")\">" << XmlEscaped(Shortened(StepLabel(t, step))) << "</text>\n";
  }
  svg << "<text class=\"key\" x=\"" << kLeft << "\" y=\"" << top + kPanel - 8 << "\">"
      << "<tspan fill=\"#5a87d0\">activations</tspan>, <tspan fill=\"#e09040\">gradients"
      << "</tspan>, <tspan fill=\"#9070b0\">layer buffers</tspan>, <tspan fill=\"#999\">"
      << "scratch</tspan>" << (recompute ? ", <tspan fill=\"#e06060\">recomputed</tspan>" : "")
      << "; hover a block for its tensor</text>\n";
  svg << "<text x=\"" << kWidth - kRight << "\" y=\"" << top + kPanel - 8
      << "\" text-anchor=\"end\">step" << (every > 1 ? StrCat(" (every ", every, "th named)") : "")
      << "</text>\n";
  if (t.forward_steps < static_cast<int>(t.steps.size())) {
    const double at = x(t.forward_steps);
    svg << "<line class=\"backward-start\" x1=\"" << Fixed(at, 1) << "\" y1=\"" << top + kTop
        << "\" x2=\"" << Fixed(at, 1) << "\" y2=\"" << bottom
        << "\" stroke=\"#000\" stroke-dasharray=\"6 3\"/><text x=\"" << Fixed(at - 4, 1)
        << "\" y=\"" << top + kTop + 12 << "\" text-anchor=\"end\">forward</text><text x=\""
        << Fixed(at + 4, 1) << "\" y=\"" << top + kTop + 12 << "\">backward</text>\n";
  }
  svg << "</g>\n";
}

}  // namespace

std::string MemoryTimelineSvg(const std::vector<NetMemoryReport>& reports) {
  std::ostringstream body;
  double top = 0;
  for (const NetMemoryReport& report : reports) {
    DrawPanel(report, report.timeline, false, top, body);
    top += kPanel;
    if (report.recomputed) {
      DrawPanel(report, report.recompute_timeline, true, top, body);
      top += kPanel;
    }
  }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << top
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << body.str() << "</svg>\n";
  return svg.str();
}

}  // namespace demi
