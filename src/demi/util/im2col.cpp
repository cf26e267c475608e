#include "demi/util/im2col.hpp"

#include <algorithm>
#include <cstring>

#include "demi/util/threads.hpp"

namespace demi {

namespace {

/// The output columns [lo, hi) whose input column ow * stride - pad + offset
/// lies inside [0, width).
void InsideRange(int64_t out_w, int64_t stride, int64_t pad, int64_t offset, int64_t width,
                 int64_t* lo, int64_t* hi) {
  const int64_t first = pad - offset;         // ow * stride >= first
  const int64_t last = width + pad - offset;  // ow * stride < last
  *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  *hi = last <= 0 ? 0 : (last + stride - 1) / stride;
  *lo = std::min(*lo, out_w);
  *hi = std::max(*lo, std::min(*hi, out_w));
}

// Visits every (column row, output row) of channels [c_begin, c_end): where
// the column row's out_w entries start, whether the input row they read is
// inside the image (else padding), the input offset of output column 0 (may
// be negative: only [lo, hi) is read) and the range [lo, hi) of output
// columns inside the image. Im2col and Col2im share
// this walk so that they are exact adjoints; Col2im adds into each image
// element in the order (kh, kw, oh, ow), as the CUDA twin does.
template <typename Visit>
void ForEachWindowRow(const ConvGeometry& g, int64_t c_begin, int64_t c_end, Visit visit) {
  const int64_t out_h = g.output_h();
  const int64_t out_w = g.output_w();
  int64_t col = c_begin * g.kernel_h * g.kernel_w * out_h * out_w;
  for (int64_t c = c_begin; c < c_end; ++c) {
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        int64_t lo = 0, hi = 0;
        InsideRange(out_w, g.stride_w, g.pad_w, kw * g.dilation_w, g.width, &lo, &hi);
        for (int64_t oh = 0; oh < out_h; ++oh, col += out_w) {
          const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          const bool row_inside = ih >= 0 && ih < g.height;
          // Input offset of output column ow: row + ow * stride_w.
          const int64_t row = (c * g.height + ih) * g.width - g.pad_w + kw * g.dilation_w;
          visit(col, row_inside, row, lo, hi);
        }
      }
    }
  }
}

/// Channels per thread: each channel is kh * kw * out_h * out_w elements.
int64_t ChannelGrain(const ConvGeometry& g) {
  return GrainFor(g.kernel_h * g.kernel_w * g.output_h() * g.output_w());
}

}  // namespace

void Im2col(const float* image, const ConvGeometry& g, float* columns) {
  const int64_t out_w = g.output_w();
  const int64_t stride = g.stride_w;
  // Channels are disjoint column rows: threads take whole channels.
  ParallelFor(g.channels, ChannelGrain(g), [&](int64_t c_begin, int64_t c_end) {
    ForEachWindowRow(
        g, c_begin, c_end, [&](int64_t col, bool inside, int64_t row, int64_t lo, int64_t hi) {
          float* out = columns + col;
          if (!inside) {
            std::fill(out, out + out_w, 0.0f);
            return;
          }
          std::fill(out, out + lo, 0.0f);
          if (stride == 1 && lo < hi) {
            std::memcpy(out + lo, image + row + lo, sizeof(float) * static_cast<size_t>(hi - lo));
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) out[ow] = image[row + ow * stride];
          }
          std::fill(out + hi, out + out_w, 0.0f);
        });
  });
}

void Col2im(const float* columns, const ConvGeometry& g, float* image) {
  const int64_t stride = g.stride_w;
  const int64_t plane = g.height * g.width;
  // Channel c's column rows add only into image plane c: threads take whole
  // channels, so no two write the same element.
  ParallelFor(g.channels, ChannelGrain(g), [&](int64_t c_begin, int64_t c_end) {
    std::memset(image + c_begin * plane, 0,
                sizeof(float) * static_cast<size_t>((c_end - c_begin) * plane));
    ForEachWindowRow(g, c_begin, c_end,
                     [&](int64_t col, bool inside, int64_t row, int64_t lo, int64_t hi) {
                       if (!inside) return;
                       const float* in = columns + col;
                       for (int64_t ow = lo; ow < hi; ++ow) image[row + ow * stride] += in[ow];
                     });
  });
}

}  // namespace demi
