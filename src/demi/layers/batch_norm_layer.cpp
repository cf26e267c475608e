#include "demi/layers/batch_norm_layer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/layers/batch_norm_image_moments.hpp"
#include "demi/layers/batch_norm_sums.hpp"
#include "demi/layers/scale_layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

constexpr int kNumStatBlobs = 3;              // mean sum, variance sum, moving-average factor
constexpr int kScaleBlob = 3, kBiasBlob = 4;  // scale_bias: gamma and beta

/// NVCaffe's rule: scale_bias, or either of its fillers, turns it on.
bool HasScaleBias(const BatchNormParameter& param) {
  return param.scale_bias() || param.has_scale_filler() || param.has_bias_filler();
}

/// A filler of `param`, else constant `value`.
FillerParameter FillerOr(bool given, const FillerParameter& param, float value) {
  if (given) return param;
  FillerParameter constant;
  constant.set_type("constant");
  constant.set_value(value);
  return constant;
}

/// Calls body(std::true_type) where a pass takes a ReLU,
/// body(std::false_type) where not: the CPU loops vectorize only without a
/// branch on it.
template <typename Body>
void WithReLU(bool relu, const Body& body) {
  if (relu) {
    body(std::true_type{});
  } else {
    body(std::false_type{});
  }
}

}  // namespace

BatchNormLayer::BatchNormLayer(const LayerParameter& param)
    : Layer(param), scale_bias_(HasScaleBias(param.batch_norm_param())) {
  // The three blobs are statistics that Forward computes: keep the solver off
  // them. The net reads the specs from this layer's own parameter.
  for (int i = 0; i < kNumStatBlobs; ++i) {
    if (i >= layer_param_.param_size()) {
      ParamSpec* spec = layer_param_.add_param();
      spec->set_lr_mult(0.0f);
      spec->set_decay_mult(0.0f);
      continue;
    }
    ParamSpec* spec = layer_param_.mutable_param(i);
    if (spec->lr_mult() != 0.0f) {
      LOG(WARNING) << "BatchNorm layer '" << layer_param_.name() << "': param " << i
                   << " is a computed statistic, not learned; setting its lr_mult "
                   << spec->lr_mult() << " to 0";
      spec->set_lr_mult(0.0f);
    }
    spec->set_decay_mult(0.0f);
  }
  // gamma and beta learn at the net's rate and decay (NVCaffe's 1 and 1)
  // unless the layer gives specs of its own: ParamSpec's defaults.
  while (scale_bias_ && layer_param_.param_size() < kNumStatBlobs + 2) layer_param_.add_param();
}

void BatchNormLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const BatchNormParameter& param = layer_param_.batch_norm_param();
  const std::string& name = layer_param_.name();
  use_global_stats_ = param.has_use_global_stats() ? param.use_global_stats() : phase_ == TEST;
  moving_average_fraction_ = param.moving_average_fraction();
  eps_ = param.eps();
  in_place_ = top[0] == bottom[0];
  DEMI_CHECK(bottom[0]->num_axes() >= 2, "BatchNorm layer '", name,
             "' needs a bottom of shape N x C or N x C x ..., got ", bottom[0]->shape_string());
  channels_ = bottom[0]->shape(1);
  if (blobs_.empty()) {
    blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{channels_}));
    blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{channels_}));
    blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{1}));
    for (auto& blob : blobs_) Set(blob->count(), 0.0f, blob->mutable_cpu_data());
    if (scale_bias_) {
      for (int i : {kScaleBlob, kBiasBlob}) {
        blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{channels_}));
        const bool given = i == kScaleBlob ? param.has_scale_filler() : param.has_bias_filler();
        const FillerParameter& filler =
            i == kScaleBlob ? param.scale_filler() : param.bias_filler();
        GetFiller(FillerOr(given, filler, i == kScaleBlob ? 1.0f : 0.0f))
            ->Fill(blobs_.back().get(), rng());
      }
    }
  } else {
    const size_t expected = scale_bias_ ? kNumStatBlobs + 2 : kNumStatBlobs;
    bool fits = blobs_.size() == expected && blobs_[0]->count() == channels_ &&
                blobs_[1]->count() == channels_ && blobs_[2]->count() == 1;
    for (size_t i = kNumStatBlobs; fits && i < blobs_.size(); ++i) {
      fits = blobs_[i]->count() == channels_;
    }
    DEMI_CHECK(fits, "BatchNorm layer '", name, "' was given ", blobs_.size(),
               " blobs that do not fit bottom shape ", bottom[0]->shape_string(), "; it needs ",
               expected, ": ", channels_, " means, ", channels_, " variances and 1 factor",
               scale_bias_
                   ? StrCat(", then ", channels_, " scales and ", channels_, " biases (scale_bias)")
                   : std::string());
  }
  // Gradients for gamma and beta only (a net then decides by lr_mult).
  param_propagate_down_.assign(blobs_.size(), false);
  for (size_t i = kNumStatBlobs; i < blobs_.size(); ++i) param_propagate_down_[i] = true;
  if (scale_bias_) affine_ = {this, kScaleBlob, kBiasBlob};
  RegisterBuffer("mean", &mean_, BufferLifetime::kScratch);
  RegisterBuffer("inv_std", &inv_std_, BufferLifetime::kSavedForBackward);
  if (keeps_x_norm()) RegisterXNorm();
#ifdef USE_CUDNN
  CudnnSetUp();
#endif
}

void BatchNormLayer::RegisterXNorm() {
  if (x_norm_registered_) return;
  x_norm_registered_ = true;
  RegisterBuffer("x_norm", &x_norm_, BufferLifetime::kSavedForBackward);
}

bool BatchNormLayer::TopOverwrittenLater() {
  const bool kept = keeps_x_norm();
  top_overwritten_ = true;
  if (keeps_x_norm()) RegisterXNorm();
  return keeps_x_norm() != kept;
}

bool BatchNormLayer::Absorb(Layer* next) {
  if (relu_.on) return false;  // a ReLU ends the chain
  if (dynamic_cast<ReLULayer*>(next) != nullptr) {
    // Its backward needs the sign of gamma x_hat + beta, which the kept
    // x_hat gives.
    const AbsorbedReLU relu = AbsorbedReLU::Of(*next);
    if (!has_affine() || !relu.on) return false;
    relu_ = relu;
    return true;
  }
  auto* scale = dynamic_cast<ScaleLayer*>(next);
  if (scale == nullptr || has_affine() || !scale->ScalesChannels(num_, channels_, spatial_)) {
    return false;
  }
  affine_ = {scale, 0, scale->bias_index()};
  RegisterXNorm();  // the net reshapes this layer next, sizing it
  return true;
}

void BatchNormLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->num_axes() >= 2 && bottom[0]->shape(1) == channels_, "BatchNorm layer '",
             layer_param_.name(), "' was set up for ", channels_,
             " channels (axis 1), but bottom shape is ", bottom[0]->shape_string());
  num_ = bottom[0]->shape(0);
  spatial_ = bottom[0]->count(2);
  top[0]->ReshapeLike(*bottom[0]);
  mean_.Reshape(std::vector<int64_t>{channels_});
  inv_std_.Reshape(std::vector<int64_t>{channels_});
  sums_.assign(2 * channels_, 0.0);
  means_dy_y_.assign(channels_, 0.0f);
  coefficients_.assign(channels_, 0.0f);
  zeros_.assign(channels_, 0.0f);
  if (keeps_x_norm()) {
    x_norm_.set_storage_type(top[0]->storage_type());  // a copy of y
    x_norm_.ReshapeLike(*bottom[0]);
  }
#ifdef USE_CUDNN
  if (cudnn_) CudnnReshape(*bottom[0]);
#endif
}

void BatchNormLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  VisitStorageType(top[0]->storage_type(),
                   [&](auto tag) { ForwardStored<decltype(tag)>(*bottom[0], top[0]); });
}

template <typename T>
void BatchNormLayer::BatchMoments(const Blob& bottom, float* mean, float* var) {
  const T* x = bottom.cpu_data_as<T>();
  if constexpr (std::is_same_v<T, float>) {
    if (bottom.channel_block() > 1) {
      BlockedLayoutMoments(ChannelBlocks::Of(bottom), x, mean, var);
    } else {
      Moments(x, mean, var);
    }
  } else {
    ImageMoments(ChannelBlocks::Of(bottom), x, sums_.data(), mean, var);
  }
}

template <typename T>
void BatchNormLayer::ForwardStored(const Blob& bottom, Blob* top) {
  float* mean = mean_.mutable_cpu_data();
  float* inv_std = inv_std_.mutable_cpu_data();  // holds the variance until the end
  if (use_global_stats_) {
    const float factor = blobs_[2]->cpu_data()[0];
    const float scale = factor == 0.0f ? 0.0f : 1.0f / factor;
    for (int64_t c = 0; c < channels_; ++c) {
      mean[c] = blobs_[0]->cpu_data()[c] * scale;
      inv_std[c] = blobs_[1]->cpu_data()[c] * scale;
    }
  } else {
    BatchMoments<T>(bottom, mean, inv_std);
    // Running sums: blobs = f * blobs + batch statistics (variance unbiased).
    const int64_t m = num_ * spatial_;
    const float f = moving_average_fraction_;
    const float correction = m > 1 ? static_cast<float>(m) / static_cast<float>(m - 1) : 1.0f;
    float* factor = blobs_[2]->mutable_cpu_data();
    factor[0] = factor[0] * f + 1.0f;
    Axpby(channels_, 1.0f, mean, f, blobs_[0]->mutable_cpu_data());
    Axpby(channels_, correction, inv_std, f, blobs_[1]->mutable_cpu_data());
  }
  for (int64_t c = 0; c < channels_; ++c) inv_std[c] = 1.0f / std::sqrt(inv_std[c] + eps_);
  const T* x = bottom.cpu_data_as<T>();
  T* y = top->mutable_cpu_data_as<T>();  // may be x (in place): each element reads its own
  const ChannelBlocks t = Channels(*top);
  const bool save_x_norm = keeps_x_norm() && runs_backward();
  if (!has_affine()) {
    StoreChannelElements(t, y, [=](int64_t k, int64_t c) { return (x[k] - mean[c]) * inv_std[c]; });
    if (save_x_norm) Copy(top->count(), y, x_norm_.mutable_cpu_data_as<T>());
    return;
  }
  // The affine part (and the ReLU) in the same pass: y = gamma x_hat + beta,
  // rectified with a ReLU absorbed; x_hat kept.
  const float* gamma = this->gamma().cpu_data();
  const float* beta = this->beta() ? this->beta()->cpu_data() : zeros_.data();
  const float slope = relu_.slope;
  WithReLU(relu_.on, [&](auto relu) {
    constexpr bool kReLU = decltype(relu)::value;
    const auto out = [=](float x_hat, int64_t c) {
      const float v = gamma[c] * x_hat + beta[c];
      return kReLU ? ReLUForward{slope}(v) : v;
    };
    if (!save_x_norm) {
      StoreChannelElements(
          t, y, [=](int64_t k, int64_t c) { return out((x[k] - mean[c]) * inv_std[c], c); });
      return;
    }
    const auto normalized = [=](int64_t k, int64_t c) { return (x[k] - mean[c]) * inv_std[c]; };
    if constexpr (kReLU) {
      // y from x_hat as stored (rounded in a 16-bit type), where Backward
      // recomputes the ReLU's signs.
      StoreChannelElementChain(t, x_norm_.mutable_cpu_data_as<T>(), y, normalized, out);
    } else {
      StoreChannelElementPairs(t, x_norm_.mutable_cpu_data_as<T>(), y, [=](int64_t k, int64_t c) {
        const float x_hat = normalized(k, c);
        return std::array<float, 2>{x_hat, out(x_hat, c)};
      });
    }
  });
}

void BatchNormLayer::Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (use_global_stats_) {
    Layer::Replay(bottom, top);
    return;
  }
  // Forward adds the batch's statistics to the running sums (blobs 0 to 2:
  // the means, variances and factor; scale_bias's gamma and beta it leaves
  // alone) once per iteration: a replay restores them afterwards, bit for
  // bit, where they live (a GPU's on the device, no round trip to the host).
  const Device device = context_.device;
  for (size_t i = 0; i < replay_running_.size(); ++i) {
    Blob& kept = replay_running_[i];
    kept.ReshapeLike(*blobs_[i]);  // kept: no allocation per iteration
    Copy(device, kept.count(), blobs_[i]->data_on(device), kept.mutable_data_on(device));
  }
  Layer::Replay(bottom, top);
  for (size_t i = 0; i < replay_running_.size(); ++i) {
    const Blob& kept = replay_running_[i];
    Copy(device, kept.count(), kept.data_on(device), blobs_[i]->mutable_data_on(device));
  }
}

void BatchNormLayer::Moments(const float* x, float* mean, float* var) const {
  const int64_t m = num_ * spatial_;
  const int64_t num = num_, spatial = spatial_, stride = channels_ * spatial_;
  // Threads take channels; each channel's sums add its rows in order.
  ParallelFor(channels_, GrainFor(2 * m), [=](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < num; ++n) sum += LaneSum(spatial, x + n * stride + c * spatial);
      const double mu = m > 0 ? sum / m : 0.0;
      double sumsq = 0;
      for (int64_t n = 0; n < num; ++n) {
        sumsq += LaneSquaredDeviation(spatial, x + n * stride + c * spatial, mu);
      }
      mean[c] = static_cast<float>(mu);
      var[c] = m > 0 ? static_cast<float>(sumsq / m) : 0.0f;
    }
  });
}

bool BatchNormLayer::WantsBlockedLayouts() const { return engine_.engine == EngineKind::kDnnl; }

ChannelBlocks BatchNormLayer::Channels(const Blob& blob) const {
  return {num_, channels_, spatial_, blob.channel_block()};
}

void BatchNormLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  VisitStorageType(top[0]->storage_type(), [&](auto tag) {
    BackwardStored<decltype(tag)>(top[0], propagate_down[0], bottom[0]);
  });
}

template <typename T>
void BatchNormLayer::BackwardStored(Blob* top, bool propagate_down, Blob* bottom) {
  const bool gamma_grad = has_affine() && gamma_learns();
  const bool beta_grad = has_affine() && beta_learns();
  if (!propagate_down && !gamma_grad && !beta_grad) return;
  const T* dy = top->cpu_diff_as<T>();
  const ChannelBlocks t = Channels(*top);
  // The sums of dy and dy x_hat per channel, in one pass over both; y is
  // x_hat, the top's data or its copy (read only here and for dx with batch
  // statistics; and for the ReLU's signs).
  double* sum_dy = sums_.data();
  double* sum_dy_y = sums_.data() + channels_;
  const bool batch_grad = propagate_down && !use_global_stats_;
  const bool sums = batch_grad || gamma_grad || beta_grad;
  const float* gamma = has_affine() ? this->gamma().cpu_data() : nullptr;
  const T* y = nullptr;
  if (sums || relu_.on) {
    y = keeps_x_norm() ? x_norm_.cpu_data_as<T>() : top->cpu_data_as<T>();
  }
  // Read only where the ReLU is absorbed, so with gamma and beta (zeros
  // without a bias).
  const BatchNormAffine affine{gamma, this->beta() ? this->beta()->cpu_data() : zeros_.data(),
                               relu_};
  // Blobs in channel blocks (the DNNL engine's) take dy through the ReLU
  // inside the two passes below. Caffe's layout writes it into the top's
  // diff first (where the ReLU apart writes it too): one pass more, but its
  // sums' loops vectorize only without it.
  const bool gated_passes = relu_.on && t.block > 1;
  if (relu_.on && !gated_passes) {
    StoreChannelElements(t, top->mutable_cpu_diff_as<T>(), [=](int64_t k, int64_t c) {
      return affine.ReLUGradient(c, static_cast<float>(y[k]), static_cast<float>(dy[k]));
    });
  }
  if (sums) {
    if (t.block > 1) {
      WithReLU(gated_passes, [&](auto gated) {
        BlockedLayoutSums<T, decltype(gated)::value>(t, dy, y, affine, sum_dy, sum_dy_y);
      });
    } else if constexpr (std::is_same_v<T, float>) {
      CaffeLayoutSums(num_, channels_, spatial_, dy, y, sum_dy, sum_dy_y);
    } else {
      SumChannelsOf<T, 2>(t, {sum_dy, sum_dy_y}, [dy, y](int64_t k, int64_t) {
        const float g = static_cast<float>(dy[k]);
        return std::array<float, 2>{g, g * static_cast<float>(y[k])};
      });
    }
  }
  if (gamma_grad) {
    float* diff = affine_.owner->blobs()[affine_.gamma]->mutable_cpu_diff();
    for (int64_t c = 0; c < channels_; ++c) diff[c] += static_cast<float>(sum_dy_y[c]);
  }
  if (beta_grad) {
    float* diff = this->beta()->mutable_cpu_diff();
    for (int64_t c = 0; c < channels_; ++c) diff[c] += static_cast<float>(sum_dy[c]);
  }
  if (!propagate_down) return;
  // d x_hat = gamma dy: the per-channel factor of dx is gamma inv_std.
  const float* inv_std = inv_std_.cpu_data();
  const float* factor = inv_std;
  if (has_affine()) {
    for (int64_t c = 0; c < channels_; ++c) coefficients_[c] = gamma[c] * inv_std[c];
    factor = coefficients_.data();
  }
  T* dx = bottom->mutable_cpu_diff_as<T>();  // may be dy (in place)
  WithReLU(gated_passes, [&](auto gated) {
    // g: dy, through the ReLU where these passes take it.
    const auto g = [=](int64_t k, int64_t c) {
      const float d = static_cast<float>(dy[k]);
      return decltype(gated)::value ? affine.ReLUGradient(c, static_cast<float>(y[k]), d) : d;
    };
    if (use_global_stats_) {
      // mean and var are constants: the layer is affine in x.
      StoreChannelElements(t, dx, [=](int64_t k, int64_t c) { return g(k, c) * factor[c]; });
      return;
    }
    // dx = factor (g - mean(g) - y mean(g y)), the means per channel.
    const double m = static_cast<double>(num_ * spatial_);
    float* mean_g = mean_.mutable_cpu_data();  // free in backward
    float* mean_g_y = means_dy_y_.data();
    for (int64_t c = 0; c < channels_; ++c) {
      mean_g[c] = static_cast<float>(sum_dy[c] / m);
      mean_g_y[c] = static_cast<float>(sum_dy_y[c] / m);
    }
    StoreChannelElements(t, dx, [=](int64_t k, int64_t c) {
      return factor[c] * (g(k, c) - mean_g[c] - static_cast<float>(y[k]) * mean_g_y[c]);
    });
  });
}

DEMI_REGISTER_LAYER(BatchNorm);

}  // namespace demi
