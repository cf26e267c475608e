#ifndef DEMI_LAYERS_ELEMENTWISE_HPP_
#define DEMI_LAYERS_ELEMENTWISE_HPP_

// Element-wise layers written once. A layer states its formulas as small
// structs whose operator() is DEMI_HOST_DEVICE (util/host_device.hpp); the
// Map functions below run one over every element on context().device: on the
// host as a threaded loop, on the GPU as the grid-stride kernel of
// layers/elementwise.cuh, which the layer's .cu instantiates for its formulas.

#include <cmath>
#include <cstdint>

#include "demi/blob.hpp"
#include "demi/layers/neuron_layer.hpp"
#include "demi/util/host_device.hpp"
#include "demi/util/threads.hpp"

namespace demi {

/// The kernels' launchers (elementwise.cuh): y[i] = f(x[i]) and
/// y[i] = f(a[i], b[i]) over n device elements.
template <typename F>
void MapOnGpu(int64_t n, const float* x, float* y, F f);
template <typename F>
void MapOnGpu(int64_t n, const float* a, const float* b, float* y, F f);

template <typename F>
void MapOnHost(int64_t n, const float* x, float* y, F f) {
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

template <typename F>
void MapOnHost(int64_t n, const float* a, const float* b, float* y, F f) {
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(a[i], b[i]);
  });
}

template <typename F>
void Map(Device device, int64_t n, const float* x, float* y, F f) {
#ifndef CPU_ONLY
  if (device == Device::kGPU) return MapOnGpu(n, x, y, f);
#endif
  MapOnHost(n, x, y, f);
}

template <typename F>
void Map(Device device, int64_t n, const float* a, const float* b, float* y, F f) {
#ifndef CPU_ONLY
  if (device == Device::kGPU) return MapOnGpu(n, a, b, y, f);
#endif
  MapOnHost(n, a, b, y, f);
}

/// top data = forward(bottom data).
template <typename F>
void MapForward(Device device, const Blob& bottom, Blob* top, F forward) {
  Map(device, bottom.count(), bottom.data_on(device), top->mutable_data_on(device), forward);
}

/// bottom diff = backward(data, top diff), where `data` is the top (a
/// gradient read from the output), the bottom or a saved copy of it.
template <typename F>
void MapBackward(Device device, const Blob& data, const Blob& top, Blob* bottom, F backward) {
  Map(device, top.count(), data.data_on(device), top.diff_on(device),
      bottom->mutable_diff_on(device), backward);
}

/// @brief A neuron layer computed by its two formulas alone, on both
/// devices: Forward maps `ForwardFormula` over the bottom, Backward maps `BackwardFormula`
/// over the top's data and diff (the gradient is read from y, so the layer
/// runs in place and its Backward reads no bottom). The layer's .cu
/// instantiates MapOnGpu for both formulas.
template <typename ForwardFormula, typename BackwardFormula>
class MappedNeuronLayer : public OneBodyLayer<NeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }

 protected:
  /// The formulas, with the layer's parameters.
  virtual ForwardFormula forward_formula() const = 0;
  virtual BackwardFormula backward_formula() const = 0;

  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    MapForward(context_.device, *bottom[0], top[0], forward_formula());
  }
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override {
    if (!propagate_down[0]) return;
    MapBackward(context_.device, *top[0], *top[0], bottom[0], backward_formula());
  }
};

}  // namespace demi

#endif  // DEMI_LAYERS_ELEMENTWISE_HPP_
