#include "demi/layers/split_layer.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

// launchers

void SplitLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // The tops are views of the bottom's data on every device: nothing moves.
  Forward_cpu(bottom, top);
}

void SplitLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const int64_t count = bottom[0]->count();
  float* dx = bottom[0]->mutable_gpu_diff();
  GpuCopy(count, top[0]->gpu_diff(), dx);
  for (size_t i = 1; i < top.size(); ++i) GpuAxpy(count, 1.0f, top[i]->gpu_diff(), dx);
}

}  // namespace demi
