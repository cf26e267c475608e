#include "demi/layers/pointwise_conv_matmuls.hpp"

#include <cstring>

#include "demi/util/channel_blocks.hpp"
#include "demi/util/threads.hpp"

namespace demi {

using dnnl::memory;

void PointwiseConvolutionMatmuls::Reshape(const PointwiseGeometry& g, Type stored, bool adjoint,
                                          Blob* pixels_buffer, Blob* weights_buffer) {
  const memory::data_type type = DnnlStorageType(stored);
  const int64_t p = g.pixels(), k = g.out_channels, c = g.in_channels;
  const memory::desc dy({p, k}, type, memory::format_tag::ab);
  const memory::desc x({p, c}, type, memory::format_tag::ab);
  const dnnl::engine& engine = DnnlEngine();
  // Both matmuls first: where oneDNN has either not, nothing here changes.
  // dX = dY W, W in the layout the matmul picks (from Caffe's FLOAT K x C).
  dnnl::matmul::primitive_desc adjoint_pd;
  if (adjoint) {
    adjoint_pd = dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(dy, memory::desc({k, c}, type, memory::format_tag::any), x),
        UserScratchpadAttr(), engine);
  }
  // dW += dY^T X: dY's transpose a strided view, the sum post-op adding into
  // the diff as Caffe accumulates.
  const memory::desc dy_transposed({k, p}, type, memory::dims{1, k});
  const memory::desc dw({k, c}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::primitive_attr accumulate = UserScratchpadAttr();
  dnnl::post_ops sum;
  sum.append_sum(1.0f);
  accumulate.set_post_ops(sum);
  weight_gradient_pd_ =
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(dy_transposed, x, dw), accumulate, engine);
  weight_gradient_ = dnnl::matmul(weight_gradient_pd_);
  dy_transposed_ = UnboundMemory(dy_transposed);
  x_ = UnboundMemory(x);
  dw_ = UnboundMemory(dw);
  has_adjoint_ = adjoint;
  if (adjoint) {
    adjoint_pd_ = adjoint_pd;
    adjoint_ = dnnl::matmul(adjoint_pd_);
    weights_.Reshape(adjoint_pd_.weights_desc(), DenseDesc({k, c}), weights_buffer);
    dy_ = UnboundMemory(dy);
    dx_ = UnboundMemory(x);
  }
  geometry_ = g;
  stored_ = stored;
  element_bytes_ = x.get_size() / static_cast<size_t>(p * c);
  bias_sums_.assign(k, 0.0);
  pixels_buffer_ = pixels_buffer;
  if (g.strided()) ReserveBytes(pixels_buffer, x.get_size());
}

memory::desc PointwiseConvolutionMatmuls::adjoint_scratchpad() const {
  return has_adjoint_ ? adjoint_pd_.scratchpad_desc() : memory::desc();
}

memory::desc PointwiseConvolutionMatmuls::weight_gradient_scratchpad() const {
  return weight_gradient_pd_.scratchpad_desc();
}

void PointwiseConvolutionMatmuls::Adjoint(DnnlLayerState* state, const void* dy,
                                          const float* weights, void* dx) {
  const bool strided = geometry_.strided();
  void* pixels = strided ? pixels_buffer_->mutable_cpu_data() : dx;
  Bind(dy_, dy);
  Bind(dx_, pixels);
  const memory& w = weights_.In(weights);
  state->Execute(
      adjoint_,
      {{DNNL_ARG_SRC, dy_.get()}, {DNNL_ARG_WEIGHTS, w.get()}, {DNNL_ARG_DST, dx_.get()}});
  if (strided) ScatterStridedPixels(geometry_, element_bytes_, pixels, dx);
}

void PointwiseConvolutionMatmuls::WeightGradient(DnnlLayerState* state, const void* x,
                                                 const void* dy, float* weights_diff,
                                                 float* bias_diff) {
  const PointwiseGeometry& g = geometry_;
  if (weights_diff != nullptr) {
    const void* pixels = x;
    if (g.strided()) {
      void* packed = pixels_buffer_->mutable_cpu_data();
      GatherStridedPixels(g, element_bytes_, x, packed);
      pixels = packed;
    }
    Bind(dy_transposed_, dy);
    Bind(x_, pixels);
    Bind(dw_, weights_diff);
    state->Execute(weight_gradient_, {{DNNL_ARG_SRC, dy_transposed_.get()},
                                      {DNNL_ARG_WEIGHTS, x_.get()},
                                      {DNNL_ARG_DST, dw_.get()}});
  }
  if (bias_diff == nullptr) return;
  const ChannelBlocks t{g.num, g.out_channels, g.out_height * g.out_width, g.out_channels};
  double* sums = bias_sums_.data();
  VisitStorageType(stored_, [&](auto tag) {
    using T = decltype(tag);
    const T* d = static_cast<const T*>(dy);
    SumChannels<T>(t, sums, [d](int64_t k, int64_t) { return static_cast<float>(d[k]); });
  });
  for (int64_t c = 0; c < g.out_channels; ++c) bias_diff[c] += static_cast<float>(sums[c]);
}

void GatherStridedPixels(const PointwiseGeometry& g, size_t element_bytes, const void* image,
                         void* pixels) {
  const size_t pixel = static_cast<size_t>(g.in_channels) * element_bytes;
  const auto* from = static_cast<const char*>(image);
  auto* to = static_cast<char*>(pixels);
  // Threads take output rows.
  ParallelFor(g.num * g.out_height, GrainFor(g.out_width * g.in_channels),
              [=](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  const int64_t n = row / g.out_height, h = row % g.out_height * g.stride_h;
                  const char* line = from + (n * g.height + h) * g.width * pixel;
                  char* packed = to + row * g.out_width * pixel;
                  for (int64_t w = 0; w < g.out_width; ++w) {
                    std::memcpy(packed + w * pixel, line + w * g.stride_w * pixel, pixel);
                  }
                }
              });
}

void ScatterStridedPixels(const PointwiseGeometry& g, size_t element_bytes, const void* pixels,
                          void* image) {
  const size_t pixel = static_cast<size_t>(g.in_channels) * element_bytes;
  const auto* from = static_cast<const char*>(pixels);
  auto* to = static_cast<char*>(image);
  // Threads take image rows; each is written once, a read pixel or zeros.
  ParallelFor(g.num * g.height, GrainFor(g.width * g.in_channels), [=](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / g.height, h = row % g.height;
      char* line = to + row * g.width * pixel;
      const int64_t out_h = h / g.stride_h;
      if (h % g.stride_h != 0 || out_h >= g.out_height) {
        std::memset(line, 0, g.width * pixel);
        continue;
      }
      const char* packed = from + (n * g.out_height + out_h) * g.out_width * pixel;
      for (int64_t w = 0; w < g.width; ++w) {
        const int64_t out_w = w / g.stride_w;
        if (w % g.stride_w == 0 && out_w < g.out_width) {
          std::memcpy(line + w * pixel, packed + out_w * pixel, pixel);
        } else {
          std::memset(line + w * pixel, 0, pixel);
        }
      }
    }
  });
}

}  // namespace demi
