#include <gtest/gtest.h>

#include <cmath>

#include "demi/filler.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

struct Moments {
  double mean, stddev, max_abs;
};

Moments MomentsOf(const Blob& blob) {
  double sum = 0, sumsq = 0, max_abs = 0;
  for (int64_t i = 0; i < blob.count(); ++i) {
    const double v = blob.cpu_data()[i];
    sum += v;
    sumsq += v * v;
    max_abs = std::max(max_abs, std::fabs(v));
  }
  const double mean = sum / blob.count();
  return {mean, std::sqrt(sumsq / blob.count() - mean * mean), max_abs};
}

void Fill(const std::string& text, Blob* blob, uint32_t seed = 3) {
  RandomEngine engine(seed);
  GetFiller(ParseText<FillerParameter>(text))->Fill(blob, &engine);
}

TEST(FillerTest, Constant) {
  Blob blob({2, 3});
  Fill("type: 'constant' value: 2.5", &blob);
  for (float v : DataOf(blob)) EXPECT_EQ(v, 2.5f);
}

TEST(FillerTest, UniformStaysInRange) {
  Blob blob({100, 100});
  Fill("type: 'uniform' min: -2 max: 3", &blob);
  for (float v : DataOf(blob)) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LE(v, 3.0f);
  }
  EXPECT_NEAR(MomentsOf(blob).mean, 0.5, 0.05);
}

TEST(FillerTest, GaussianMoments) {
  Blob blob({200, 100});
  Fill("type: 'gaussian' mean: 1 std: 2", &blob);
  Moments m = MomentsOf(blob);
  EXPECT_NEAR(m.mean, 1.0, 0.05);
  EXPECT_NEAR(m.stddev, 2.0, 0.05);
}

TEST(FillerTest, SparseGaussianKeepsAboutSparsePerOutput) {
  Blob blob({500, 100});  // 500 outputs, fan-in 100
  Fill("type: 'gaussian' std: 1 sparse: 10", &blob);
  int64_t nonzero = 0;
  for (float v : DataOf(blob)) nonzero += v != 0.0f;
  EXPECT_NEAR(static_cast<double>(nonzero) / 500, 10.0, 0.5);
}

TEST(FillerTest, PositiveUnitballRowsSumToOne) {
  Blob blob({4, 3, 2});
  Fill("type: 'positive_unitball'", &blob);
  for (int row = 0; row < 4; ++row) {
    double sum = 0;
    for (int j = 0; j < 6; ++j) {
      const float v = blob.cpu_data()[row * 6 + j];
      EXPECT_GE(v, 0.0f);
      sum += v;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(FillerTest, XavierScaleFollowsVarianceNorm) {
  Blob blob({1000, 20, 2, 2});  // fan_in 80, fan_out 4000
  Fill("type: 'xavier'", &blob);
  EXPECT_LE(MomentsOf(blob).max_abs, std::sqrt(3.0 / 80) + 1e-6);
  EXPECT_NEAR(MomentsOf(blob).stddev, std::sqrt(1.0 / 80), 1e-3);
  Fill("type: 'xavier' variance_norm: FAN_OUT", &blob);
  EXPECT_NEAR(MomentsOf(blob).stddev, std::sqrt(1.0 / 4000), 1e-4);
  Fill("type: 'xavier' variance_norm: AVERAGE", &blob);
  EXPECT_NEAR(MomentsOf(blob).stddev, std::sqrt(1.0 / 2040), 1e-4);
}

TEST(FillerTest, MSRAStd) {
  Blob blob({1000, 10, 3, 3});  // fan_in 90
  Fill("type: 'msra'", &blob);
  EXPECT_NEAR(MomentsOf(blob).stddev, std::sqrt(2.0 / 90), 1e-3);
  EXPECT_NEAR(MomentsOf(blob).mean, 0.0, 1e-3);
}

TEST(FillerTest, BilinearKernelOfSize4) {
  Blob blob({1, 1, 4, 4});
  Fill("type: 'bilinear'", &blob);
  // Upsampling factor 2: the 1-D profile is .25 .75 .75 .25.
  const float profile[4] = {0.25f, 0.75f, 0.75f, 0.25f};
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) {
      EXPECT_FLOAT_EQ(blob.data_at(0, 0, y, x), profile[y] * profile[x]);
    }
  }
}

TEST(FillerTest, SameSeedSameValues) {
  Blob a({10, 10}), b({10, 10});
  Fill("type: 'gaussian'", &a, 42);
  Fill("type: 'gaussian'", &b, 42);
  EXPECT_EQ(DataOf(a), DataOf(b));
}

TEST(FillerTest, UnknownTypeIsAnError) {
  Blob blob({2});
  ExpectErrorContaining([&] { Fill("type: 'fancy'", &blob); }, {"fancy", "xavier"});
}

// A net prototxt reached glog CHECKs in util/math with these settings, which
// aborted the process instead of naming what is wrong.
TEST(FillerTest, BadBoundsOrStdAreErrors) {
  Blob blob({4, 3});
  ExpectErrorContaining([&] { Fill("type: 'uniform' min: 2 max: 1", &blob); },
                        {"uniform filler needs min <= max", "min 2", "max 1"});
  ExpectErrorContaining([&] { Fill("type: 'uniform' min: nan max: 1", &blob); },
                        {"uniform filler needs min <= max"});
  ExpectErrorContaining([&] { Fill("type: 'gaussian' std: 0", &blob); },
                        {"gaussian filler needs std > 0, got 0"});
  ExpectErrorContaining([&] { Fill("type: 'gaussian' std: -1", &blob); },
                        {"gaussian filler needs std > 0, got -1"});
}

TEST(FillerTest, EmptyBlobsAreLeftEmpty) {
  Blob blob({0, 3});
  Fill("type: 'gaussian' sparse: 2", &blob);
  Fill("type: 'positive_unitball'", &blob);
  EXPECT_EQ(blob.count(), 0);
}

}  // namespace
}  // namespace demi
