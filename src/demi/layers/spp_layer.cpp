#include "demi/layers/spp_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

namespace {

// Floats hold plane indexes exactly up to 2^24.
constexpr int64_t kMaxArgmaxPlane = int64_t{1} << 24;
constexpr int64_t kMaxPyramidHeight = 16;

// One dimension of a bin's window: [begin, end) with end clipped to
// in + pad only (AVE's divisor), and [lo, hi) inside the image.
struct Window {
  int64_t begin, end, lo, hi;
};

Window BinWindow(int64_t bin, int64_t kernel, int64_t pad, int64_t in) {
  const int64_t begin = bin * kernel - pad;
  const int64_t end = std::min(begin + kernel, in + pad);
  return {begin, end, std::max<int64_t>(begin, 0), std::min(end, in)};
}

// Calls visit(bin, rows, cols) for the bins x bins windows of one plane, bin
// counting row-major.
template <typename Visit>
void ForEachBin(int64_t bins, int64_t kernel_h, int64_t kernel_w, int64_t pad_h, int64_t pad_w,
                int64_t height, int64_t width, Visit visit) {
  for (int64_t bh = 0; bh < bins; ++bh) {
    const Window rows = BinWindow(bh, kernel_h, pad_h, height);
    for (int64_t bw = 0; bw < bins; ++bw) {
      visit(bh * bins + bw, rows, BinWindow(bw, kernel_w, pad_w, width));
    }
  }
}

}  // namespace

void SPPLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const SPPParameter& param = layer_param_.spp_param();
  const std::string& name = layer_param_.name();
  DEMI_CHECK(param.pyramid_height() >= 1 && param.pyramid_height() <= kMaxPyramidHeight,
             "SPP layer '", name, "' needs pyramid_height between 1 and ", kMaxPyramidHeight,
             ", got ", param.pyramid_height());
  DEMI_CHECK(param.pool() != SPPParameter::STOCHASTIC, "SPP layer '", name,
             "': STOCHASTIC pooling is not supported; use MAX or AVE");
  max_ = param.pool() == SPPParameter::MAX;
  pyramid_height_ = param.pyramid_height();
  levels_.resize(static_cast<size_t>(pyramid_height_));
  if (max_) RegisterBuffer("argmax", &argmax_, BufferLifetime::kSavedForBackward);
}

void SPPLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  DEMI_CHECK(bottom[0]->num_axes() == 4, "SPP layer '", name,
             "' needs a 4-D N x C x H x W bottom, got shape ", bottom[0]->shape_string());
  num_ = bottom[0]->shape(0);
  channels_ = bottom[0]->shape(1);
  height_ = bottom[0]->shape(2);
  width_ = bottom[0]->shape(3);
  int64_t offset = 0;
  for (int64_t l = 0; l < pyramid_height_; ++l) {
    Level& level = levels_[static_cast<size_t>(l)];
    level.bins = int64_t{1} << l;
    level.kernel_h = (height_ + level.bins - 1) / level.bins;
    level.kernel_w = (width_ + level.bins - 1) / level.bins;
    level.pad_h = (level.kernel_h * level.bins - height_ + 1) / 2;
    level.pad_w = (level.kernel_w * level.bins - width_ + 1) / 2;
    DEMI_CHECK(level.pad_h < level.kernel_h && level.pad_w < level.kernel_w, "SPP layer '", name,
               "': bottom shape ", bottom[0]->shape_string(), " cannot be pooled into ", level.bins,
               " x ", level.bins, " bins at pyramid level ", l, ": kernel ", level.kernel_h, " x ",
               level.kernel_w, " would need pad ", level.pad_h, " x ", level.pad_w,
               ", and pooling needs pad < kernel");
    level.offset = offset;
    offset += channels_ * level.bins * level.bins;
  }
  top_dim_ = offset;
  if (pyramid_height_ == 1) {
    top[0]->Reshape(num_, channels_, 1, 1);
  } else {
    top[0]->Reshape(std::vector<int64_t>{num_, top_dim_});
  }
  if (max_) {
    DEMI_CHECK(height_ * width_ <= kMaxArgmaxPlane, "SPP layer '", name,
               "' keeps argmax indexes as floats and takes planes of at most ", kMaxArgmaxPlane,
               " elements; bottom shape is ", bottom[0]->shape_string());
    argmax_.Reshape(std::vector<int64_t>{num_, top_dim_});
  }
}

void SPPLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t plane = height_ * width_;
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  float* argmax = max_ ? argmax_.mutable_cpu_data() : nullptr;
  for (int64_t n = 0; n < num_; ++n) {
    for (const Level& level : levels_) {
      for (int64_t c = 0; c < channels_; ++c) {
        const float* x_p = x + (n * channels_ + c) * plane;
        const int64_t out = n * top_dim_ + level.offset + c * level.bins * level.bins;
        auto pool = [&](int64_t bin, const Window& rows, const Window& cols) {
          if (max_) {
            // pad < kernel keeps every window partly inside the image.
            int64_t best = rows.lo * width_ + cols.lo;
            for (int64_t h = rows.lo; h < rows.hi; ++h) {
              for (int64_t w = cols.lo; w < cols.hi; ++w) {
                if (x_p[h * width_ + w] > x_p[best]) best = h * width_ + w;
              }
            }
            y[out + bin] = x_p[best];
            argmax[out + bin] = static_cast<float>(best);
            return;
          }
          double sum = 0;
          for (int64_t h = rows.lo; h < rows.hi; ++h) {
            for (int64_t w = cols.lo; w < cols.hi; ++w) sum += x_p[h * width_ + w];
          }
          y[out + bin] =
              static_cast<float>(sum / ((rows.end - rows.begin) * (cols.end - cols.begin)));
        };
        ForEachBin(level.bins, level.kernel_h, level.kernel_w, level.pad_h, level.pad_w, height_,
                   width_, pool);
      }
    }
  }
}

void SPPLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t plane = height_ * width_;
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  Set(bottom[0]->count(), 0.0f, dx);
  const float* argmax = max_ ? argmax_.cpu_data() : nullptr;
  for (int64_t n = 0; n < num_; ++n) {
    for (const Level& level : levels_) {
      for (int64_t c = 0; c < channels_; ++c) {
        float* dx_p = dx + (n * channels_ + c) * plane;
        const int64_t out = n * top_dim_ + level.offset + c * level.bins * level.bins;
        auto unpool = [&](int64_t bin, const Window& rows, const Window& cols) {
          if (max_) {
            dx_p[static_cast<int64_t>(argmax[out + bin])] += dy[out + bin];
            return;
          }
          const float share =
              dy[out + bin] / static_cast<float>((rows.end - rows.begin) * (cols.end - cols.begin));
          for (int64_t h = rows.lo; h < rows.hi; ++h) {
            for (int64_t w = cols.lo; w < cols.hi; ++w) dx_p[h * width_ + w] += share;
          }
        };
        ForEachBin(level.bins, level.kernel_h, level.kernel_w, level.pad_h, level.pad_w, height_,
                   width_, unpool);
      }
    }
  }
}

DEMI_REGISTER_LAYER(SPP);

}  // namespace demi
