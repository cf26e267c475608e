#include "demi/layers/relu_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ReLULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DnnlSetUp();
}

void ReLULayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (dnnl_) DnnlReshape(*bottom[0]);
}

void ReLULayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (DnnlReady()) {
    DnnlForward(*bottom[0], top[0]);
    return;
  }
  const float slope = layer_param_.relu_param().negative_slope();
  DEMI_CHECK(slope >= 0, "ReLU layer '", layer_param_.name(),
             "' needs a non-negative negative_slope, got ", slope);
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  // Vectorised to a select (a branch mispredicts on random signs).
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0 ? x[i] : slope * x[i];
  });
}

void ReLULayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  if (DnnlReady()) {
    DnnlBackward(*top[0], bottom[0]);
    return;
  }
  const float slope = layer_param_.relu_param().negative_slope();
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) dx[i] = y[i] > 0 ? dy[i] : slope * dy[i];
  });
}

DEMI_REGISTER_LAYER(ReLU);

}  // namespace demi
