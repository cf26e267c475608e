#include "demi/tools/training_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <regex>
#include <sstream>

#include "demi/common.hpp"
#include "demi/util/io.hpp"
#include "demi/util/svg.hpp"

namespace demi {

namespace {

constexpr double kWidth = 800, kChartHeight = 260, kLeft = 70, kRight = 180, kTop = 40,
                 kBottom = 50;
constexpr double kPanel = kTop + kChartHeight + kBottom;
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string Number(double value) {
  std::ostringstream out;
  out << std::setprecision(4) << value;
  return out.str();
}

using Series = std::vector<std::pair<std::string, const std::vector<std::pair<int64_t, double>>*>>;

void DrawChart(const Series& series, const std::string& what, double top, int64_t max_iteration,
               std::ostream& svg) {
  double low = 0, high = 0;
  bool first = true;
  for (const auto& [name, points] : series) {
    for (const auto& [iteration, value] : *points) {
      if (!std::isfinite(value)) continue;
      low = first ? value : std::min(low, value);
      high = first ? value : std::max(high, value);
      first = false;
    }
  }
  low = std::min(low, 0.0);  // losses and accuracies read best from zero
  if (high <= low) high = low + 1;
  const double step = TickStep(high - low);
  high = std::ceil(high / step) * step;
  const double chart_width = kWidth - kLeft - kRight;
  auto x = [&](double iteration) {
    return kLeft + chart_width * iteration / std::max<int64_t>(max_iteration, 1);
  };
  auto y = [&](double value) { return top + kTop + kChartHeight * (high - value) / (high - low); };
  svg << "<g class=\"chart\">\n<text class=\"chart-title\" x=\"" << kLeft << "\" y=\"" << top + 24
      << "\" font-size=\"13\">" << XmlEscaped(what) << "</text>\n";
  for (double value = low; value <= high + step / 2; value += step) {
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << y(value) << "\" x2=\"" << kLeft + chart_width
        << "\" y2=\"" << y(value) << "\" stroke=\"#e6e6e6\"/><text class=\"value-tick\" x=\""
        << kLeft - 6 << "\" y=\"" << y(value) + 4 << "\" text-anchor=\"end\">" << Number(value)
        << "</text>\n";
  }
  const double iteration_step = std::max(1.0, std::round(TickStep(max_iteration)));
  for (double it = 0; it <= max_iteration + iteration_step / 2; it += iteration_step) {
    svg << "<text class=\"iteration-tick\" x=\"" << x(it) << "\" y=\""
        << top + kTop + kChartHeight + 16 << "\" text-anchor=\"middle\">" << Number(it)
        << "</text>\n";
  }
  svg << "<text x=\"" << kLeft + chart_width / 2 << "\" y=\"" << top + kTop + kChartHeight + 36
      << "\" text-anchor=\"middle\">iteration</text>\n"
      << "<rect x=\"" << kLeft << "\" y=\"" << top + kTop << "\" width=\"" << chart_width
      << "\" height=\"" << kChartHeight << "\" fill=\"none\" stroke=\"#000\"/>\n";
  for (size_t s = 0; s < series.size(); ++s) {
    const char* colour = kColours[s % (sizeof(kColours) / sizeof(kColours[0]))];
    svg << "<polyline class=\"series\" fill=\"none\" stroke=\"" << colour
        << "\" stroke-width=\"1.5\" points=\"";
    for (const auto& [iteration, value] : *series[s].second) {
      if (std::isfinite(value)) svg << x(iteration) << "," << y(value) << " ";
    }
    const auto& last = series[s].second->back();
    svg << "\"><title>" << XmlEscaped(series[s].first) << ": " << series[s].second->size()
        << " points, last " << Number(last.second) << " at iteration " << last.first
        << "</title></polyline>\n<text class=\"legend\" x=\"" << kLeft + chart_width + 10
        << "\" y=\"" << top + kTop + 14 + 16 * s << "\" fill=\"" << colour << "\">"
        << XmlEscaped(series[s].first) << " " << Number(last.second) << "</text>\n";
  }
  svg << "</g>\n";
}

}  // namespace

std::string TrainingCurvesSvg(const TrainingCurves& curves, const std::string& title) {
  Series losses, others;
  int64_t max_iteration = 1;
  for (const auto& [name, points] : curves.series) {
    if (points.empty()) continue;
    (name.find("loss") != std::string::npos ? losses : others).push_back({name, &points});
    max_iteration = std::max(max_iteration, points.back().first);
  }
  std::ostringstream body;
  double top = 0;
  if (!losses.empty()) {
    DrawChart(losses, "loss", top, max_iteration, body);
    top += kPanel;
  }
  if (!others.empty()) {
    DrawChart(others, "test outputs", top, max_iteration, body);
    top += kPanel;
  }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
      << std::max(top, 60.0) + 10 << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << "<text class=\"title\" x=\"" << kWidth / 2 << "\" y=\"16\" text-anchor=\"middle\""
      << " font-size=\"13\">" << XmlEscaped(title) << "</text>\n"
      << (top == 0 ? "<text x=\"20\" y=\"44\">no displayed iteration yet</text>\n" : "")
      << body.str() << "</svg>\n";
  return svg.str();
}

TrainingPlot::TrainingPlot(std::string path) : path_(std::move(path)) {
  CheckCanCreateFile(path_);
  google::AddLogSink(this);
}

TrainingPlot::~TrainingPlot() { google::RemoveLogSink(this); }

void TrainingPlot::send(google::LogSeverity severity, const char* full_filename,
                        const char* base_filename, int line, const struct ::tm* tm_time,
                        const char* message, size_t message_len) {
  if (severity != google::GLOG_INFO) return;
  Observe(std::string(message, message_len));
}

void TrainingPlot::Observe(const std::string& message) {
  static const std::string kNumber =
      R"(([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)))";
  static const std::regex kLoss("^Iteration (\\d+)(?: \\([^)]*\\))?, loss = " + kNumber);
  static const std::regex kTesting(R"(^Iteration (\d+), Testing net \(#(\d+)\))");
  static const std::regex kTestOutput(R"(Test net output #\d+: (\S+) = )" + kNumber);
  std::smatch match;
  std::lock_guard<std::mutex> lock(mutex_);
  if (std::regex_search(message, match, kLoss)) {
    curves_.series["train loss"].push_back({std::stoll(match[1]), std::stod(match[2])});
    test_iteration_ = -1;
  } else if (std::regex_search(message, match, kTesting)) {
    test_iteration_ = std::stoll(match[1]);
    test_net_ = std::stoi(match[2]);
    return;
  } else if (test_iteration_ >= 0 && std::regex_search(message, match, kTestOutput)) {
    curves_.series[StrCat("test #", test_net_, " ", match[1].str())].push_back(
        {test_iteration_, std::stod(match[2])});
  } else {
    return;
  }
  Write();
}

TrainingCurves TrainingPlot::curves() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return curves_;
}

void TrainingPlot::Write() {
  // A plot is a view: a failed write is logged to stderr (not through glog,
  // which would call back here) and training goes on.
  try {
    WriteFileAtomically(path_, TrainingCurvesSvg(curves_, StrCat("training curves: ", path_)));
  } catch (const Error& error) {
    std::fprintf(stderr, "train --plot: %s\n", error.what());
  }
}

}  // namespace demi
