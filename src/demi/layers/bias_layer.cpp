#include "demi/layers/bias_layer.hpp"

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void BiasLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const BiasParameter& param = layer_param_.bias_param();
  const std::string& name = layer_param_.name();
  if (bottom.size() == 2) {
    DEMI_CHECK(blobs_.empty(), "Bias layer '", name,
               "' takes its bias from bottom 1, but was given ", blobs_.size(), " param blobs");
    return;
  }
  if (!blobs_.empty()) {
    DEMI_CHECK(blobs_.size() == 1, "Bias layer '", name, "' has one param blob, but was given ",
               blobs_.size());
  } else {
    blobs_.push_back(std::make_shared<Blob>(
        AxesShape(*this, *bottom[0], param.axis(), param.num_axes(), "bias_param")));
    GetFiller(param.filler())->Fill(blobs_[0].get(), rng());
  }
  param_propagate_down_.assign(blobs_.size(), true);
}

void BiasLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& bias = bottom.size() == 2 ? *bottom[1] : *blobs_[0];
  const int axis = OperandAxis(*this, *bottom[0], bias, layer_param_.bias_param().axis(),
                               "bias_param", "bias", bottom.size() == 2);
  outer_ = bottom[0]->count(0, axis);
  bias_dim_ = bias.count();
  inner_ = bottom[0]->count(axis + bias.num_axes());
  top[0]->ReshapeLike(*bottom[0]);
}

void BiasLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* b = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->cpu_data();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();  // may be x (in place)
  const int64_t dim = bias_dim_, inner = inner_;
  // Threads take rows (o, d) of `inner` elements.
  ParallelFor(outer_ * dim, GrainFor(inner), [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float shift = b[r % dim];
#pragma omp simd
      for (int64_t j = r * inner; j < (r + 1) * inner; ++j) y[j] = x[j] + shift;
    }
  });
}

void BiasLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  const float* dy = top[0]->diff_on(device);
  if (propagate_down[0]) Copy(device, top[0]->count(), dy, bottom[0]->mutable_diff_on(device));
  const bool bias_is_param = bottom.size() == 1;
  if (bias_is_param ? !param_propagate_down(0) : !propagate_down[1]) return;
  // A param gradient accumulates; bottom 1's gradient is written.
  SumPerBias(device, dy, bias_is_param,
             (bias_is_param ? blobs_[0].get() : bottom[1])->mutable_diff_on(device));
}

void BiasLayer::SumPerBias(Device device, const float* dy, bool accumulate, float* db) const {
#ifndef CPU_ONLY
  if (device == Device::kGPU) return SumPerBiasGpu(dy, accumulate, db);
#endif
  if (!accumulate) Set(bias_dim_, 0.0f, db);
  const int64_t outer = outer_, dim = bias_dim_, inner = inner_;
  // Threads take bias entries: each db[d] still adds o = 0, 1, ... in order.
  ParallelFor(dim, GrainFor(outer * inner), [=](int64_t begin, int64_t end) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t d = begin; d < end; ++d) {
        const float* row = dy + (o * dim + d) * inner;
        double sum = 0;
        for (int64_t j = 0; j < inner; ++j) sum += row[j];
        db[d] += static_cast<float>(sum);
      }
    }
  });
}

DEMI_REGISTER_LAYER(Bias);

}  // namespace demi
