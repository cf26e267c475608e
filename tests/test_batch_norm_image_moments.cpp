// BatchNorm's 16-bit batch moments, image by image (ImageMoments): against
// the two-pass mean and variance in double over the same stored values, in
// Caffe's layout, channel blocks and channels last (the last two bit for
// bit alike), with an offset far from zero where a sum of squares would
// cancel, a pixel a channel and no pixels at all.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "demi/layers/batch_norm_image_moments.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/float16.hpp"

namespace demi {
namespace {

struct Shape {
  int64_t num, channels, spatial;
};

// Values around `offset`, as stored in T, in Caffe's layout.
template <typename T>
std::vector<T> Values(const Shape& s, float offset, float spread, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(offset, spread);
  std::vector<T> values(s.num * s.channels * s.spatial);
  for (T& v : values) v = T(normal(rng));
  return values;
}

// Caffe's layout into blocks of `block` channels (block = channels: channels
// last), ChannelBlocks' element order.
template <typename T>
std::vector<T> InBlocks(const std::vector<T>& caffe, const Shape& s, int64_t block) {
  std::vector<T> blocked(caffe.size());
  for (int64_t n = 0; n < s.num; ++n) {
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int64_t i = 0; i < s.spatial; ++i) {
        const int64_t at = ((n * (s.channels / block) + c / block) * s.spatial + i) * block;
        blocked[at + c % block] = caffe[(n * s.channels + c) * s.spatial + i];
      }
    }
  }
  return blocked;
}

struct Moments {
  std::vector<float> mean, var;
};

template <typename T>
Moments Computed(const std::vector<T>& x, const Shape& s, int64_t block) {
  Moments out{std::vector<float>(s.channels), std::vector<float>(s.channels)};
  std::vector<double> scratch(2 * s.channels);
  ImageMoments(ChannelBlocks{s.num, s.channels, s.spatial, block}, x.data(), scratch.data(),
               out.mean.data(), out.var.data());
  return out;
}

// The mean, then the mean squared deviation, in double over Caffe's layout.
template <typename T>
Moments Reference(const std::vector<T>& x, const Shape& s) {
  Moments out{std::vector<float>(s.channels), std::vector<float>(s.channels)};
  const double m = static_cast<double>(s.num * s.spatial);
  for (int64_t c = 0; c < s.channels; ++c) {
    double sum = 0, squares = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t n = 0; n < s.num; ++n) {
        for (int64_t i = 0; i < s.spatial; ++i) {
          const double v = static_cast<float>(x[(n * s.channels + c) * s.spatial + i]);
          if (pass == 0) {
            sum += v;
          } else {
            squares += (v - sum / m) * (v - sum / m);
          }
        }
      }
    }
    out.mean[c] = static_cast<float>(sum / m);
    out.var[c] = static_cast<float>(squares / m);
  }
  return out;
}

void ExpectNear(const Moments& got, const Moments& want, double tolerance, const char* what) {
  for (size_t c = 0; c < want.mean.size(); ++c) {
    EXPECT_NEAR(got.mean[c], want.mean[c], tolerance * (std::abs(want.mean[c]) + 1e-3))
        << what << ", channel " << c;
    EXPECT_NEAR(got.var[c], want.var[c], tolerance * want.var[c]) << what << ", channel " << c;
  }
}

void ExpectSameBits(const Moments& a, const Moments& b, const char* what) {
  for (size_t c = 0; c < a.mean.size(); ++c) {
    EXPECT_EQ(a.mean[c], b.mean[c]) << what << ", channel " << c;
    EXPECT_EQ(a.var[c], b.var[c]) << what << ", channel " << c;
  }
}

template <typename T>
void CheckEveryLayout(const Shape& s, float offset, float spread, double tolerance) {
  SCOPED_TRACE(::testing::Message()
               << s.num << " x " << s.channels << " x " << s.spatial << " around " << offset);
  const std::vector<T> caffe = Values<T>(s, offset, spread, 7);
  const Moments want = Reference(caffe, s);
  ExpectNear(Computed(caffe, s, 1), want, tolerance, "Caffe's layout");
  const Moments last = Computed(InBlocks(caffe, s, s.channels), s, s.channels);
  ExpectNear(last, want, tolerance, "channels last");
  for (int64_t block : {8, 16}) {
    if (s.channels % block != 0 || block == s.channels) continue;
    ExpectSameBits(Computed(InBlocks(caffe, s, block), s, block), last, "channel blocks");
  }
}

// 96 channels: channels last takes 64 and then 32 a thread, blocks 16 or 8;
// 12: a narrow channels last of 12 lanes.
TEST(ImageMomentsTest, MatchTwoPassesInDoubleInEveryLayout) {
  for (const Shape& s : {Shape{3, 96, 49}, Shape{2, 12, 10}, Shape{5, 16, 1}, Shape{1, 32, 300}}) {
    CheckEveryLayout<bfloat16>(s, 0.5f, 2.0f, 1e-5);
    CheckEveryLayout<float16>(s, -1.0f, 0.5f, 1e-5);
  }
}

// A mean 1000 spreads away from a spread of 1 (float16 keeps 0.5 steps
// there): a sum of squares less the squared sum would lose the variance.
TEST(ImageMomentsTest, AnOffsetFarFromZeroKeepsTheVariance) {
  CheckEveryLayout<float16>(Shape{4, 32, 64}, 1000.0f, 1.0f, 1e-5);
  CheckEveryLayout<bfloat16>(Shape{4, 32, 64}, -3000.0f, 40.0f, 1e-5);
}

TEST(ImageMomentsTest, NoValuesGiveZeros) {
  for (int64_t block : {1, 16}) {
    const Shape s{2, 16, 0};
    const Moments got = Computed(std::vector<bfloat16>(), s, block);
    for (int64_t c = 0; c < s.channels; ++c) {
      EXPECT_EQ(got.mean[c], 0.0f);
      EXPECT_EQ(got.var[c], 0.0f);
    }
  }
}

}  // namespace
}  // namespace demi
