#include "demi/layers/mvn_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"

namespace demi {

void MVNLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (layer_param_.mvn_param().normalize_variance()) {
    RegisterBuffer("std", &std_, BufferLifetime::kSavedForBackward);
  }
}

void MVNLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const MVNParameter& param = layer_param_.mvn_param();
  const Blob& x = *bottom[0];
  const int slice_axes = std::min(x.num_axes(), param.across_channels() ? 1 : 2);
  num_ = x.count(0, slice_axes);
  dim_ = x.count(slice_axes);
  top[0]->ReshapeLike(x);
  if (param.normalize_variance()) std_.Reshape(std::vector<int64_t>{num_});
}

void MVNLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const MVNParameter& param = layer_param_.mvn_param();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  float* std_dev = param.normalize_variance() ? std_.mutable_cpu_data() : nullptr;
  for (int64_t i = 0; i < num_; ++i) {
    const float* in = x + i * dim_;
    float* out = y + i * dim_;
    double sum = 0;
    for (int64_t j = 0; j < dim_; ++j) sum += in[j];
    const double mean = sum / static_cast<double>(dim_);
    if (!param.normalize_variance()) {
      for (int64_t j = 0; j < dim_; ++j) out[j] = static_cast<float>(in[j] - mean);
      continue;
    }
    double sumsq = 0;
    for (int64_t j = 0; j < dim_; ++j) sumsq += (in[j] - mean) * (in[j] - mean);
    const double s = std::sqrt(sumsq / static_cast<double>(dim_));
    std_dev[i] = static_cast<float>(s);
    const double d = s + param.eps();
    for (int64_t j = 0; j < dim_; ++j) out[j] = static_cast<float>((in[j] - mean) / d);
  }
}

void MVNLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const MVNParameter& param = layer_param_.mvn_param();
  const float* y = param.normalize_variance() ? top[0]->cpu_data() : nullptr;
  const float* std_dev = param.normalize_variance() ? std_.cpu_data() : nullptr;
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t i = 0; i < num_; ++i) {
    const float* g = dy + i * dim_;
    float* out = dx + i * dim_;
    double sum_g = 0;
    double sum_gy = 0;
    for (int64_t j = 0; j < dim_; ++j) {
      sum_g += g[j];
      if (y) sum_gy += double(g[j]) * y[i * dim_ + j];
    }
    const double mean_g = sum_g / static_cast<double>(dim_);
    if (!param.normalize_variance()) {
      for (int64_t j = 0; j < dim_; ++j) out[j] = static_cast<float>(g[j] - mean_g);
      continue;
    }
    const double s = std_dev[i];
    const double d = s + param.eps();
    // d std / dx is (x - mean) / (dim std): no gradient term when std is 0.
    const double mean_gy_over_s = s > 0 ? sum_gy / static_cast<double>(dim_) / s : 0.0;
    for (int64_t j = 0; j < dim_; ++j) {
      out[j] = static_cast<float>((g[j] - mean_g) / d - y[i * dim_ + j] * mean_gy_over_s);
    }
  }
}

DEMI_REGISTER_LAYER(MVN);

}  // namespace demi
