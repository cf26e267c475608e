#include "demi/pending_losses.hpp"

#include "demi/util/device.hpp"

namespace demi {

PendingLosses::PendingLosses(Device device, int capacity) : device_(device), capacity_(capacity) {
  DEMI_CHECK(capacity >= 1, "pending losses need room for at least one, got ", capacity);
  values_.Resize(capacity * sizeof(float));
}

float* PendingLosses::Add(int iteration) {
  DEMI_CHECK(!full(), "already ", capacity_, " losses pending");
  const size_t slot = iterations_.size();
  iterations_.push_back(iteration);
#ifndef CPU_ONLY
  if (device_ == Device::kGPU) {
    float* loss = static_cast<float*>(values_.mutable_gpu_data()) + slot;
    DeviceMemset(loss, 0, sizeof(float));
    return loss;
  }
#endif
  float* loss = static_cast<float*>(values_.mutable_cpu_data()) + slot;
  *loss = 0;
  return loss;
}

void PendingLosses::DropLast() {
  if (!iterations_.empty()) iterations_.pop_back();
}

std::vector<PendingLosses::Loss> PendingLosses::Take() {
  std::vector<Loss> losses;
  if (iterations_.empty()) return losses;
  const auto* values = static_cast<const float*>(values_.cpu_data());
  for (size_t i = 0; i < iterations_.size(); ++i) losses.push_back({iterations_[i], values[i]});
  iterations_.clear();
  return losses;
}

}  // namespace demi
