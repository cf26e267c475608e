// The gradient checker must catch a wrong gradient, or every layer test that
// relies on it proves nothing.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "demi/layers/neuron_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// y = x^2 with a configurable (possibly wrong) derivative factor.
class SquareLayer : public NeuronLayer {
 public:
  SquareLayer(const LayerParameter& param, float derivative_factor)
      : NeuronLayer(param), factor_(derivative_factor) {}
  const char* type() const override { return "TestSquare"; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    Sqr(bottom[0]->count(), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
  }
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override {
    const float* x = bottom[0]->cpu_data();
    const float* dy = top[0]->cpu_diff();
    float* dx = bottom[0]->mutable_cpu_diff();
    for (int64_t i = 0; i < bottom[0]->count(); ++i) dx[i] = factor_ * x[i] * dy[i];
  }

 private:
  float factor_;
};

class GradientCheckerTest : public ::testing::Test {
 protected:
  GradientCheckerTest() : x_({2, 3}) { FillGaussian(&x_, 9); }
  Blob x_, y_;
  std::vector<Blob*> bottom_{&x_}, top_{&y_};
};

TEST_F(GradientCheckerTest, AcceptsTheRightGradient) {
  SquareLayer layer(LayerParameter(), 2.0f);
  GradientChecker(1e-2f, 1e-3f).CheckGradient(&layer, bottom_, top_);
}

TEST_F(GradientCheckerTest, RejectsAWrongGradient) {
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    SquareLayer layer(LayerParameter(), 2.2f);  // 10% off everywhere
    GradientChecker(1e-2f, 1e-3f).CheckGradient(&layer, bottom_, top_);
  }
  // Every element whose gradient is not tiny is flagged (5 of 6 for this seed).
  EXPECT_GE(failures.size(), 5);
  for (int i = 0; i < failures.size(); ++i) {
    EXPECT_NE(std::string(failures.GetTestPartResult(i).message()).find("TestSquare layer"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace demi
