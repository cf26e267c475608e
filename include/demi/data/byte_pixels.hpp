#ifndef DEMI_DATA_BYTE_PIXELS_HPP_
#define DEMI_DATA_BYTE_PIXELS_HPP_

// Step 6 of the transform (transformer.hpp), apart from the others. A batch
// of the bytes steps 1-5 leave is a quarter of its floats: it travels from
// the decode threads to the compute device as bytes, and is normalised there
// (Forward) in one pass.
#include <cstdint>
#include <vector>

namespace demi {

/// out = (pixel - mean[c]) * scale, c the pixel's channel.
struct PixelNormalization {
  std::vector<float> mean;  ///< one per channel
  float scale = 1;
};

/// Normalises one C x `spatial` example of bytes (C = mean.size()) into
/// floats on the calling thread, with the float path's arithmetic (a
/// subtraction, then a multiplication): the results equal Transform's bit
/// for bit.
void NormalizeExample(const PixelNormalization& normalization, int64_t spatial, const uint8_t* in,
                      float* out);
/// NormalizeExample over `examples` consecutive examples, threaded over the
/// calling thread's OpenMP threads.
void NormalizeBatch(const PixelNormalization& normalization, int64_t examples, int64_t spatial,
                    const uint8_t* in, float* out);

#ifndef CPU_ONLY
/// NormalizeBatch on this thread's stream: `in`, `out` and `mean` (the
/// channels' means) in device memory. Bit-identical to the host's: the
/// subtraction and multiplication are separate roundings on both.
void NormalizeBytesGpu(const float* mean, float scale, int64_t examples, int64_t channels,
                       int64_t spatial, const uint8_t* in, float* out);
#endif

}  // namespace demi

#endif  // DEMI_DATA_BYTE_PIXELS_HPP_
