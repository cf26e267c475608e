#include "demi/layers/pooling_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

// Floats hold plane indexes exactly up to 2^24.
constexpr int64_t kMaxArgmaxPlane = int64_t{1} << 24;

// Caffe's pooled size before the pad correction: ceil or floor of
// (in + 2 pad - kernel) / stride, plus one. The numerator may be negative.
int64_t PooledSize(int64_t in, int64_t kernel, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t span = in + 2 * pad - kernel;
  int64_t steps = span / stride;  // truncates toward zero
  if (span % stride != 0) {
    if (ceil_mode && span > 0) ++steps;
    if (!ceil_mode && span < 0) --steps;
  }
  return steps + 1;
}

// One dimension of a pooling window: [begin, end) before clipping to the
// image (end clipped to in + pad only, which sets AVE's divisor), and
// [lo, hi) inside the image.
struct Window {
  int64_t begin, end, lo, hi;
};

Window PoolWindow(int64_t out, int64_t kernel, int64_t pad, int64_t stride, int64_t in) {
  const int64_t begin = out * stride - pad;
  const int64_t end = std::min(begin + kernel, in + pad);
  return {begin, end, std::max<int64_t>(begin, 0), std::min(end, in)};
}

}  // namespace

void PoolingLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const PoolingParameter& param = layer_param_.pooling_param();
  const std::string& name = layer_param_.name();
  method_ = param.pool();
  DEMI_CHECK(bottom[0] != top[0], "Pooling layer '", name,
             "' cannot run in place: its output is written while its windows read the input");
  DEMI_CHECK(method_ != PoolingParameter::STOCHASTIC, "Pooling layer '", name,
             "': STOCHASTIC pooling is not supported; use MAX or AVE");
  global_ = param.global_pooling();
  const bool has_kernel = param.has_kernel_size() || param.has_kernel_h() || param.has_kernel_w();
  if (global_) {
    DEMI_CHECK(!has_kernel, "Pooling layer '", name,
               "' sets global_pooling, which takes the kernel from the bottom; remove kernel_size");
  } else {
    DEMI_CHECK(param.has_kernel_size() != (param.has_kernel_h() && param.has_kernel_w()),
               "Pooling layer '", name,
               "' needs kernel_size or both kernel_h and kernel_w (not both forms)");
    kernel_h_ = param.has_kernel_size() ? param.kernel_size() : param.kernel_h();
    kernel_w_ = param.has_kernel_size() ? param.kernel_size() : param.kernel_w();
    DEMI_CHECK(kernel_h_ > 0 && kernel_w_ > 0, "Pooling layer '", name,
               "' needs a non-zero kernel, got ", kernel_h_, " x ", kernel_w_);
  }
  DEMI_CHECK((!param.has_pad_h() && !param.has_pad_w()) ||
                 (!param.has_pad() && param.has_pad_h() && param.has_pad_w()),
             "Pooling layer '", name, "' needs pad or both pad_h and pad_w (not both forms)");
  DEMI_CHECK((!param.has_stride_h() && !param.has_stride_w()) ||
                 (!param.has_stride() && param.has_stride_h() && param.has_stride_w()),
             "Pooling layer '", name,
             "' needs stride or both stride_h and stride_w (not both forms)");
  pad_h_ = param.has_pad_h() ? param.pad_h() : param.pad();
  pad_w_ = param.has_pad_w() ? param.pad_w() : param.pad();
  stride_h_ = param.has_stride_h() ? param.stride_h() : param.stride();
  stride_w_ = param.has_stride_w() ? param.stride_w() : param.stride();
  DEMI_CHECK(stride_h_ > 0 && stride_w_ > 0, "Pooling layer '", name,
             "' needs a non-zero stride, got ", stride_h_, " x ", stride_w_);
  if (global_) {
    DEMI_CHECK(pad_h_ == 0 && pad_w_ == 0 && stride_h_ == 1 && stride_w_ == 1, "Pooling layer '",
               name, "' sets global_pooling, which needs pad 0 and stride 1; got pad ", pad_h_,
               " x ", pad_w_, ", stride ", stride_h_, " x ", stride_w_);
  } else {
    DEMI_CHECK(pad_h_ < kernel_h_ && pad_w_ < kernel_w_, "Pooling layer '", name, "' has pad ",
               pad_h_, " x ", pad_w_, ", which must be smaller than the kernel ", kernel_h_, " x ",
               kernel_w_);
  }
  // round_mode (BVLC) and ceil_mode (forks) say the same thing two ways.
  const bool round_ceil = param.round_mode() == PoolingParameter::CEIL;
  DEMI_CHECK(!param.has_round_mode() || !param.has_ceil_mode() || round_ceil == param.ceil_mode(),
             "Pooling layer '", name,
             "' sets round_mode: ", PoolingParameter::RoundMode_Name(param.round_mode()),
             " and ceil_mode: ", param.ceil_mode() ? "true" : "false",
             ", which disagree; keep one of them");
  ceil_mode_ = round_ceil && param.ceil_mode();
  if (method_ == PoolingParameter::MAX) {
    RegisterBuffer("argmax", &argmax_, BufferLifetime::kSavedForBackward);
  }
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    staging_.ForEachBuffer([this](const char* name, Blob* blob) {
      RegisterBuffer(name, blob, BufferLifetime::kScratch);
    });
  }
#endif
#ifdef USE_CUDNN
  CudnnSetUp(bottom, top);
#endif
  DnnlSetUp(top);
}

void PoolingLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  DEMI_CHECK(bottom[0]->num_axes() == 4, "Pooling layer '", name,
             "' needs a 4-D N x C x H x W bottom, got shape ", bottom[0]->shape_string());
  planes_ = bottom[0]->count(0, 2);
  channels_ = bottom[0]->shape(1);
  height_ = bottom[0]->shape(2);
  width_ = bottom[0]->shape(3);
  if (global_) {
    kernel_h_ = height_;
    kernel_w_ = width_;
  }
  pooled_h_ = PooledSize(height_, kernel_h_, pad_h_, stride_h_, ceil_mode_);
  pooled_w_ = PooledSize(width_, kernel_w_, pad_w_, stride_w_, ceil_mode_);
  if (pad_h_ > 0 || pad_w_ > 0) {
    // As in Caffe: the last window must start inside the image or its pad.
    if ((pooled_h_ - 1) * stride_h_ >= height_ + pad_h_) --pooled_h_;
    if ((pooled_w_ - 1) * stride_w_ >= width_ + pad_w_) --pooled_w_;
  }
  DEMI_CHECK(pooled_h_ >= 1 && pooled_w_ >= 1, "Pooling layer '", name, "': the kernel ", kernel_h_,
             " x ", kernel_w_, " does not fit in bottom shape ", bottom[0]->shape_string(),
             " padded by ", pad_h_, " x ", pad_w_);
  top[0]->Reshape(bottom[0]->shape(0), bottom[0]->shape(1), pooled_h_, pooled_w_);
  if (method_ == PoolingParameter::MAX) {
    DEMI_CHECK(height_ * width_ <= kMaxArgmaxPlane, "Pooling layer '", name,
               "' keeps argmax indexes as floats and takes planes of at most ", kMaxArgmaxPlane,
               " elements; bottom shape is ", bottom[0]->shape_string());
    argmax_.ReshapeLike(*top[0]);
    if (top.size() > 1) top[1]->ReshapeLike(*top[0]);
  }
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    staging_.Reshape(engine_.types, *bottom[0], *top[0], top.size() == 1);
  }
#endif
#ifdef USE_CUDNN
  if (cudnn_) CudnnReshape(*bottom[0], *top[0]);
#endif
  if (dnnl_) DnnlReshape(*bottom[0], *top[0]);
}

BlobFormats PoolingLayer::narrow_blobs() const {
  // The GPU's kernels (cuDNN's, or ours) keep no argmax mask top in 16 bits.
  const bool gpu = context_.device == Device::kGPU && layer_param_.top_size() < 2;
  return NarrowBlobsWhen(DnnlReady() || gpu, BlobFormats::kPerBlob);
}

BlobFormats PoolingLayer::channels_last_layouts() const {
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU && staging_.type() != FLOAT && layer_param_.top_size() == 1) {
    return BlobFormats::kPerBlob;
  }
#endif
  // oneDNN pools any layout; channels last where its convolutions want it.
  if (context_.device == Device::kCPU && DnnlReady() &&
      DnnlPrefersChannelsLast(engine_.types.forward_storage)) {
    return BlobFormats::kPerBlob;
  }
  return BlobFormats::kNone;
}

void PoolingLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (DnnlReady()) return DnnlForward(*bottom[0], top[0]);
  const int64_t in_plane = height_ * width_;
  const int64_t out_plane = pooled_h_ * pooled_w_;
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  const bool max = method_ == PoolingParameter::MAX;
  float* argmax = max ? argmax_.mutable_cpu_data() : nullptr;
  // Threads take whole planes (n, c).
  ParallelFor(
      planes_, GrainFor(out_plane * kernel_h_ * kernel_w_), [&](int64_t p_begin, int64_t p_end) {
        for (int64_t p = p_begin; p < p_end; ++p) {
          const float* x_p = x + p * in_plane;
          for (int64_t oh = 0; oh < pooled_h_; ++oh) {
            const Window wh = PoolWindow(oh, kernel_h_, pad_h_, stride_h_, height_);
            for (int64_t ow = 0; ow < pooled_w_; ++ow) {
              const Window ww = PoolWindow(ow, kernel_w_, pad_w_, stride_w_, width_);
              const int64_t out = p * out_plane + oh * pooled_w_ + ow;
              if (max) {
                int64_t best = -1;
                for (int64_t h = wh.lo; h < wh.hi; ++h) {
                  for (int64_t w = ww.lo; w < ww.hi; ++w) {
                    if (best < 0 || x_p[h * width_ + w] > x_p[best]) best = h * width_ + w;
                  }
                }
                y[out] = best < 0 ? 0.0f : x_p[best];
                argmax[out] = static_cast<float>(best);
              } else if (wh.lo < wh.hi && ww.lo < ww.hi) {
                double sum = 0;
                for (int64_t h = wh.lo; h < wh.hi; ++h) {
                  for (int64_t w = ww.lo; w < ww.hi; ++w) sum += x_p[h * width_ + w];
                }
                y[out] = static_cast<float>(sum / ((wh.end - wh.begin) * (ww.end - ww.begin)));
              } else {
                y[out] = 0.0f;
              }
            }
          }
        }
      });
  if (max && top.size() > 1) Copy(top[0]->count(), argmax, top[1]->mutable_cpu_data());
}

void PoolingLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  if (DnnlReady()) return DnnlBackward(*top[0], bottom[0]);
  const int64_t in_plane = height_ * width_;
  const int64_t out_plane = pooled_h_ * pooled_w_;
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  Set(bottom[0]->count(), 0.0f, dx);
  if (method_ == PoolingParameter::MAX) {
    const float* argmax = argmax_.cpu_data();
    // Threads take whole planes: each adds only into its own plane of dx.
    ParallelFor(planes_, GrainFor(out_plane), [=](int64_t p_begin, int64_t p_end) {
      for (int64_t p = p_begin; p < p_end; ++p) {
        for (int64_t o = p * out_plane; o < (p + 1) * out_plane; ++o) {
          const int64_t best = static_cast<int64_t>(argmax[o]);
          if (best >= 0) dx[p * in_plane + best] += dy[o];
        }
      }
    });
    return;
  }
  ParallelFor(
      planes_, GrainFor(out_plane * kernel_h_ * kernel_w_), [&](int64_t p_begin, int64_t p_end) {
        for (int64_t p = p_begin; p < p_end; ++p) {
          float* dx_p = dx + p * in_plane;
          for (int64_t oh = 0; oh < pooled_h_; ++oh) {
            const Window wh = PoolWindow(oh, kernel_h_, pad_h_, stride_h_, height_);
            for (int64_t ow = 0; ow < pooled_w_; ++ow) {
              const Window ww = PoolWindow(ow, kernel_w_, pad_w_, stride_w_, width_);
              if (wh.lo >= wh.hi || ww.lo >= ww.hi) continue;
              const float share = dy[p * out_plane + oh * pooled_w_ + ow] /
                                  static_cast<float>((wh.end - wh.begin) * (ww.end - ww.begin));
              for (int64_t h = wh.lo; h < wh.hi; ++h) {
                for (int64_t w = ww.lo; w < ww.hi; ++w) dx_p[h * width_ + w] += share;
              }
            }
          }
        }
      });
}

DEMI_REGISTER_LAYER(Pooling);

}  // namespace demi
