// train --plot: the curves read from the solver's log lines, and their SVG.
#include <gtest/gtest.h>

#include <regex>

#include "demi/tools/training_plot.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

/// The text of every <text class="`cls`"> element, in order.
std::vector<std::string> Texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> texts;
  const std::regex text("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it) {
    texts.push_back((*it)[1].str());
  }
  return texts;
}

TEST(TrainingPlotTest, ReadsDisplaysAndTestsFromTheLogAndRewritesTheSvg) {
  ScratchDir dir;
  const std::string path = dir.file("curves.svg");
  TrainingPlot plot(path);
  plot.Observe("Iteration 0, Testing net (#0)");
  plot.Observe("    Test net output #0: accuracy = 0.1");
  plot.Observe("    Test net output #1: loss = 2.3 (* 1 = 2.3 loss)");
  plot.Observe("Iteration 0, loss = 2.31");
  plot.Observe("    Train net output #0: loss = 2.31 (* 1 = 2.31 loss)");
  plot.Observe("Iteration 0, lr = 0.01");
  plot.Observe("Iteration 50 (12.5 iter/s, 4.0s/50 iters), loss = 1.2");
  // Lines of other kinds change nothing.
  plot.Observe("    Test net output #0: accuracy = 0.9");
  plot.Observe("Iteration 100, loss = 0.6");
  plot.Observe("Iteration 100, Testing net (#0)");
  plot.Observe("    Test net output #0: accuracy = 0.8");
  plot.Observe("    Test net output #1: loss = 0.7 (* 1 = 0.7 loss)");

  const TrainingCurves curves = plot.curves();
  using Points = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(curves.series.at("train loss"), (Points{{0, 2.31}, {50, 1.2}, {100, 0.6}}));
  EXPECT_EQ(curves.series.at("test #0 accuracy"), (Points{{0, 0.1}, {100, 0.8}}));
  EXPECT_EQ(curves.series.at("test #0 loss"), (Points{{0, 2.3}, {100, 0.7}}));
  EXPECT_EQ(curves.series.size(), 3u);

  const std::string svg = ReadFileToString(path);  // as last rewritten
  EXPECT_EQ(Texts(svg, "chart-title"), (std::vector<std::string>{"loss", "test outputs"}));
  EXPECT_EQ(Texts(svg, "legend"), (std::vector<std::string>{"test #0 loss 0.7", "train loss 0.6",
                                                            "test #0 accuracy 0.8"}));
  const std::vector<std::string> iterations = Texts(svg, "iteration-tick");
  ASSERT_FALSE(iterations.empty());
  EXPECT_EQ(iterations.front(), "0");
  EXPECT_EQ(iterations.back(), "100");
  // Loss values 0 .. 2.31: ticks every 0.5 up to 2.5.
  const std::vector<std::string> values = Texts(svg, "value-tick");
  EXPECT_EQ(values.front(), "0");
  EXPECT_NE(std::find(values.begin(), values.end(), "2.5"), values.end()) << svg;
  EXPECT_NE(svg.find("<title>train loss: 3 points, last 0.6 at iteration 100</title>"),
            std::string::npos)
      << svg;
}

TEST(TrainingPlotTest, AnUnwritablePathIsNamedAtOnce) {
  EXPECT_THROW(TrainingPlot("/no/such/dir/curves.svg"), Error);
}

}  // namespace
}  // namespace demi
