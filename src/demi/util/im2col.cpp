#include "demi/util/im2col.hpp"

#include <cstring>

namespace demi {

namespace {

// Visits every (column row, output position) pair with the input offset it
// reads (or -1 for padding). Im2col and Col2im share this walk so that they
// are exact adjoints.
template <typename Visit>
void ForEachWindowElement(const ConvGeometry& g, Visit visit) {
  const int64_t out_h = g.output_h();
  const int64_t out_w = g.output_w();
  int64_t col = 0;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        for (int64_t oh = 0; oh < out_h; ++oh) {
          const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
          const bool row_inside = ih >= 0 && ih < g.height;
          for (int64_t ow = 0; ow < out_w; ++ow, ++col) {
            const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
            const bool inside = row_inside && iw >= 0 && iw < g.width;
            visit(col, inside ? (c * g.height + ih) * g.width + iw : -1);
          }
        }
      }
    }
  }
}

}  // namespace

void Im2col(const float* image, const ConvGeometry& g, float* columns) {
  ForEachWindowElement(g,
                       [&](int64_t col, int64_t in) { columns[col] = in >= 0 ? image[in] : 0.0f; });
}

void Col2im(const float* columns, const ConvGeometry& g, float* image) {
  std::memset(image, 0, sizeof(float) * static_cast<size_t>(g.channels * g.height * g.width));
  ForEachWindowElement(g, [&](int64_t col, int64_t in) {
    if (in >= 0) image[in] += columns[col];
  });
}

}  // namespace demi
