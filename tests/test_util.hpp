#ifndef DEMI_TESTS_TEST_UTIL_HPP_
#define DEMI_TESTS_TEST_UTIL_HPP_

#include <gtest/gtest.h>

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
