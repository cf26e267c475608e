#include "demi/layers/loss_kernels.cuh"
#include "demi/layers/loss_layer.hpp"

namespace demi {

void LossLayer::BackwardFromSavedOnGpu(const std::vector<Blob*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob*>& bottom, const char* target,
                                       const Blob& saved, SyncedMemory* device_normalizer) const {
  RefuseGradient(propagate_down, 1, target);
  const int64_t n = saved.count();
  if (!propagate_down[0] || n == 0) return;
  DEMI_CHECK(device_normalizer->size() > 0, type(), " layer '", layer_param_.name(),
             "': Backward before any Forward");
  GpuScaledLossGradient(n, 1.0f, top[0]->gpu_diff(),
                        static_cast<const float*>(device_normalizer->gpu_data()), 0.0f,
                        saved.gpu_data(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
