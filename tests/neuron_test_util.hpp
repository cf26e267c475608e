#ifndef DEMI_TESTS_NEURON_TEST_UTIL_HPP_
#define DEMI_TESTS_NEURON_TEST_UTIL_HPP_

// Shared checks of the small element-wise layers (ELU, Power, Exp, Log,
// AbsVal, BNLL, Threshold, Swish, Clip): a forward/backward pass that can
// poison what Backward must not read, in-place equivalence, gradient checks
// on odd shapes and setup errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/neuron_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
// Each test file gets its own copy of these helpers.
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);
const float kLn4 = std::log(4.0f);
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Pass {
  std::vector<float> y;
  std::vector<float> dx;
};

/// Runs the layer `text` forward on x, then backward with top gradient dy.
/// Between the two, the bottom data (poison_bottom) and the top data
/// (poison_top) are overwritten with NaN, which shows that Backward does not
/// read them; in place, bottom and top are one blob.
inline Pass RunLayer(const std::string& text, const std::vector<float>& x_values,
                     const std::vector<float>& dy, bool in_place = false,
                     bool poison_bottom = false, bool poison_top = false) {
  const int64_t n = static_cast<int64_t>(x_values.size());
  Blob x({n});
  FillValues(&x, x_values);
  Blob y;
  std::vector<Blob*> bottom{&x};
  std::vector<Blob*> top{in_place ? &x : &y};
  auto layer = MakeLayer(text);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Pass pass{DataOf(*top[0]), {}};
  if (poison_bottom) Set(n, kNaN, x.mutable_cpu_data());
  if (poison_top) Set(n, kNaN, top[0]->mutable_cpu_data());
  std::copy(dy.begin(), dy.end(), top[0]->mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  pass.dx = DiffOf(x);
  return pass;
}

inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                       float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

/// In place gives the same top and bottom gradient as out of place, on
/// Gaussian data; `poison` overwrites the in-place blob's data with NaN
/// before Backward (for layers that keep their own copy of the input).
inline void ExpectInPlaceMatches(const std::string& text, bool poison, float stddev = 1.0f) {
  Blob source({2, 3, 4, 5});
  FillGaussian(&source, 41, stddev);
  Blob gradient({2, 3, 4, 5});
  FillGaussian(&gradient, 42);
  const Pass out = RunLayer(text, DataOf(source), DataOf(gradient));
  const Pass in = RunLayer(text, DataOf(source), DataOf(gradient), true, poison, poison);
  EXPECT_EQ(in.y, out.y);
  EXPECT_EQ(in.dx, out.dx);
}

/// Finite-difference check on odd shapes, with inputs uniform in [lo, hi).
inline void CheckGradientOnShapes(const std::string& text, float lo, float hi,
                                  float stepsize = 1e-2f, float kink = 0.0f,
                                  float kink_range = -1.0f) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {1, 13, 1, 1}}) {
    SCOPED_TRACE(ShapeString(shape));
    Blob x(shape);
    FillUniform(&x, 51, lo, hi);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(text);
    GradientChecker checker(stepsize, 1e-3f, 1701, kink, kink_range);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

inline void ExpectSetUpError(const std::string& text, const std::vector<std::string>& parts) {
  Blob x({2, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(text);
  ExpectErrorContaining([&] { layer->SetUp(bottom, top); }, parts);
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_NEURON_TEST_UTIL_HPP_
