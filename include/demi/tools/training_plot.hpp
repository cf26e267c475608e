#ifndef DEMI_TOOLS_TRAINING_PLOT_HPP_
#define DEMI_TOOLS_TRAINING_PLOT_HPP_

#include <glog/logging.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace demi {

/// The curves of a training run: per series ("train loss", "test #0 accuracy"),
/// its (iteration, value) points in order.
struct TrainingCurves {
  std::map<std::string, std::vector<std::pair<int64_t, double>>> series;
};

/// An SVG of `curves`: one chart of the losses (series whose name holds
/// "loss") and one of the other outputs (accuracy, ...), against
/// iterations, with value and iteration ticks and a legend; `title` above.
std::string TrainingCurvesSvg(const TrainingCurves& curves, const std::string& title);

/// @brief Keeps `train --plot=PATH` up to date: an SVG of the run's curves,
/// rewritten (atomically) at every display and after every test.
///
/// It reads the solver's own log lines, as tools/extra/parse_log.py reads a
/// log, through a glog LogSink: "Iteration N, loss = X" (displayed, smoothed
/// train loss), "Iteration N, Testing net (#j)" and "Test net output #k:
/// name = v". So the solver needs no hook, and the picture shows exactly what
/// the log says. SVG, drawn here, rather than a PNG through matplotlib: a
/// training process then starts no Python and depends on nothing to render;
/// browsers show SVG (and reload it), and tools/extra/plot_training_log.py
/// draws PNGs from the log afterwards.
class TrainingPlot : public google::LogSink {
 public:
  /// Checks `path` can be written (an Error naming it if not) and starts
  /// listening to the log.
  explicit TrainingPlot(std::string path);
  ~TrainingPlot() override;
  TrainingPlot(const TrainingPlot&) = delete;
  TrainingPlot& operator=(const TrainingPlot&) = delete;

  void send(google::LogSeverity severity, const char* full_filename, const char* base_filename,
            int line, const struct ::tm* tm_time, const char* message, size_t message_len) override;
  /// Takes one log message (glog's prefix excluded); rewrites the file when
  /// it completes a display or a test.
  void Observe(const std::string& message);
  TrainingCurves curves() const;

 private:
  void Write();

  std::string path_;
  mutable std::mutex mutex_;
  TrainingCurves curves_;
  int64_t test_iteration_ = -1;  ///< the test being logged, -1: none
  int test_net_ = 0;
};

}  // namespace demi

#endif  // DEMI_TOOLS_TRAINING_PLOT_HPP_
