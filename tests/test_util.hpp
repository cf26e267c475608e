#ifndef DEMI_TESTS_TEST_UTIL_HPP_
#define DEMI_TESTS_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/layer.hpp"
#include "demi/layer_registry.hpp"
#include "demi/proto/demi.pb.h"
#include "demi/util/io.hpp"
#include "demi/util/math.hpp"

namespace demi {

/// Parses a prototxt snippet into a message, failing the test on bad syntax.
template <typename Message>
Message ParseText(const std::string& text) {
  Message message;
  ParseProtoText(text, "test prototxt", &message);
  return message;
}

inline std::unique_ptr<Layer> MakeLayer(const std::string& text) {
  return LayerRegistry::Create(ParseText<LayerParameter>(text));
}

inline void FillGaussian(Blob* blob, uint32_t seed, float stddev = 1.0f) {
  RandomEngine engine(seed);
  RngGaussian(blob->count(), 0.0f, stddev, blob->mutable_cpu_data(), &engine);
}

inline void FillUniform(Blob* blob, uint32_t seed, float lo, float hi) {
  RandomEngine engine(seed);
  RngUniform(blob->count(), lo, hi, blob->mutable_cpu_data(), &engine);
}

inline void FillValues(Blob* blob, const std::vector<float>& values) {
  ASSERT_EQ(static_cast<int64_t>(values.size()), blob->count());
  std::copy(values.begin(), values.end(), blob->mutable_cpu_data());
}

inline std::vector<float> DataOf(const Blob& blob) {
  return std::vector<float>(blob.cpu_data(), blob.cpu_data() + blob.count());
}

inline std::vector<float> DiffOf(const Blob& blob) {
  return std::vector<float>(blob.cpu_diff(), blob.cpu_diff() + blob.count());
}

/// A quiet NaN, to overwrite memory a Backward claims not to read.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// start, start + 1, ..., n values.
inline std::vector<float> Iota(int64_t n, float start = 1.0f) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[i] = start + static_cast<float>(i);
  return values;
}

/// Distinct values 0.05 apart in a shuffled order, so max pooling has no
/// ties and a finite-difference step of 1e-2 never changes the argmax.
inline void FillDistinct(Blob* blob, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(blob->count()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = 0.05f * static_cast<float>(i) - 0.025f * static_cast<float>(values.size());
  }
  std::shuffle(values.begin(), values.end(), RandomEngine(seed));
  std::copy(values.begin(), values.end(), blob->mutable_cpu_data());
}

/// Element-wise EXPECT_NEAR with an absolute tolerance.
inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                       float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

/// Asserts that running `fn` throws demi::Error whose message contains every
/// one of `parts`.
template <typename Fn>
void ExpectErrorContaining(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected a demi::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
    }
  }
}

}  // namespace demi

#endif  // DEMI_TESTS_TEST_UTIL_HPP_
