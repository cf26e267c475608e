#ifndef DEMI_TESTS_CHANNELS_LAST_TEST_UTIL_HPP_
#define DEMI_TESTS_CHANNELS_LAST_TEST_UTIL_HPP_

// Values moved between Caffe's layout (num x channels x spatial) and
// channels last (num x spatial x channels), for tests that hand a kernel
// its input as the other layout holds it.
#include <cstdint>
#include <vector>

namespace demi {

/// `caffe` (num x channels x the rest) channels last, as T.
template <typename T = float>
std::vector<T> ToChannelsLast(const std::vector<float>& caffe, int64_t num, int64_t channels) {
  const int64_t spatial = static_cast<int64_t>(caffe.size()) / (num * channels);
  std::vector<T> last(caffe.size());
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < spatial; ++i) {
        last[(n * spatial + i) * channels + c] = caffe[(n * channels + c) * spatial + i];
      }
    }
  }
  return last;
}

/// The other way: `last` (num x the rest x channels) in Caffe's layout, as floats.
template <typename T>
std::vector<float> ToCaffeLayout(const std::vector<T>& last, int64_t num, int64_t channels) {
  const int64_t spatial = static_cast<int64_t>(last.size()) / (num * channels);
  std::vector<float> caffe(last.size());
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < spatial; ++i) {
        caffe[(n * channels + c) * spatial + i] =
            static_cast<float>(last[(n * spatial + i) * channels + c]);
      }
    }
  }
  return caffe;
}

}  // namespace demi

#endif  // DEMI_TESTS_CHANNELS_LAST_TEST_UTIL_HPP_
