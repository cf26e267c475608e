#include "demi/data/byte_pixels.hpp"

#include "demi/util/threads.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

namespace {

DEMI_VECTOR_CLONES void NormalizePlane(int64_t n, const uint8_t* x, float mean, float scale,
                                       float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - mean) * scale;
}

/// Planes [begin, end) of C x spatial examples.
void NormalizePlanes(const PixelNormalization& normalization, int64_t begin, int64_t end,
                     int64_t spatial, const uint8_t* in, float* out) {
  const auto channels = static_cast<int64_t>(normalization.mean.size());
  for (int64_t plane = begin; plane < end; ++plane) {
    NormalizePlane(spatial, in + plane * spatial, normalization.mean[plane % channels],
                   normalization.scale, out + plane * spatial);
  }
}

}  // namespace

void NormalizeExample(const PixelNormalization& normalization, int64_t spatial, const uint8_t* in,
                      float* out) {
  NormalizePlanes(normalization, 0, static_cast<int64_t>(normalization.mean.size()), spatial, in,
                  out);
}

void NormalizeBatch(const PixelNormalization& normalization, int64_t examples, int64_t spatial,
                    const uint8_t* in, float* out) {
  const auto planes = examples * static_cast<int64_t>(normalization.mean.size());
  ParallelFor(planes, GrainFor(spatial), [&](int64_t begin, int64_t end) {
    NormalizePlanes(normalization, begin, end, spatial, in, out);
  });
}

}  // namespace demi
