#ifndef DEMI_LAYERS_ELEMENTWISE_HPP_
#define DEMI_LAYERS_ELEMENTWISE_HPP_

// Element-wise layers written once. A layer states its formulas as small
// structs whose operator() is DEMI_HOST_DEVICE (util/host_device.hpp); the
// Map functions below run one over every element on context().device: on the
// host as a threaded loop, on the GPU as the grid-stride kernel of
// layers/elementwise.cuh, which the layer's .cu instantiates for its formulas.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "demi/blob.hpp"
#include "demi/layers/neuron_layer.hpp"
#include "demi/util/host_device.hpp"
#include "demi/util/rounded_chunks.hpp"
#include "demi/util/threads.hpp"

namespace demi {

/// The kernels' launchers (elementwise.cuh): y[i] = f(x[i]) and
/// y[i] = f(a[i], b[i]) over n device elements stored in T (float, float16
/// or bfloat16), in float arithmetic, each result rounded once to T.
template <typename T, typename F>
void MapOnGpu(int64_t n, const T* x, T* y, F f);
template <typename T, typename F>
void MapOnGpu(int64_t n, const T* a, const T* b, T* y, F f);

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

/// chunk[i] = f(widened[0][i], widened[1][i], ...) for i < m.
template <typename F, size_t... I>
void MapWidened(F f, int64_t m, const float (*widened)[kRoundedChunk], float* chunk,
                std::index_sequence<I...>) {
#pragma omp simd
  for (int64_t i = 0; i < m; ++i) chunk[i] = f(widened[I][i]...);
}

/// y[i] = f(x[i]) (or f(a[i], b[i])) over n host values stored in a 16-bit
/// type, in floats a chunk at a time (rounded_chunks.hpp), in place too:
/// each input's chunk widened first (LoadWidened), then mapped, then rounded.
template <typename Half, typename F, typename... Inputs>
void MapStoredOnHost(int64_t n, Half* y, F f, const Inputs*... inputs) {
  ParallelStoreRounded(n, y, [&](int64_t at, int64_t m, float* chunk) {
    float widened[sizeof...(Inputs)][kRoundedChunk];
    int k = 0;
    (LoadWidened(m, inputs + at, widened[k++]), ...);
    MapWidened(f, m, widened, chunk, std::index_sequence_for<Inputs...>{});
  });
}

/// A blob's data or diff on `device` as elements of T, its storage type.
template <typename T>
const T* StoredOn(Device device, const Blob& blob, bool diff) {
#ifndef CPU_ONLY
  if (device == Device::kGPU)
    return static_cast<const T*>((diff ? blob.diff() : blob.data())->gpu_data());
#endif
  return diff ? blob.cpu_diff_as<T>() : blob.cpu_data_as<T>();
}
template <typename T>
T* MutableStoredOn(Device device, Blob* blob, bool diff) {
#ifndef CPU_ONLY
  if (device == Device::kGPU) {
    return static_cast<T*>((diff ? blob->diff() : blob->data())->mutable_gpu_data());
  }
#endif
  return diff ? blob->mutable_cpu_diff_as<T>() : blob->mutable_cpu_data_as<T>();
}

/// Whether a map over blobs stored in 16 bits ran, on either device (false:
/// they are FLOAT, for Map). `inputs(tag)` gives each input's pointer on the
/// device as elements of the tag's type.
template <typename F, typename... Inputs>
bool MapStored(Device device, Blob* out, bool diff, F f, const Inputs&... inputs) {
  const Type type = out->storage_type();
  if (type == FLOAT) return false;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      T* y = MutableStoredOn<T>(device, out, diff);
#ifndef CPU_ONLY
      if (device == Device::kGPU) return MapOnGpu(out->count(), inputs(tag)..., y, f);
#endif
      MapStoredOnHost(out->count(), y, f, inputs(tag)...);
    }
  });
  return true;
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

/// top data = forward(bottom data), in the blobs' storage type.
template <typename F>
void MapForward(Device device, const Blob& bottom, Blob* top, F forward) {
  const auto x = [&](auto tag) { return StoredOn<decltype(tag)>(device, bottom, false); };
  if (MapStored(device, top, false, forward, x)) return;
  Map(device, bottom.count(), bottom.data_on(device), top->mutable_data_on(device), forward);
}

/// bottom diff = backward(data, top diff), where `data` is the top (a
/// gradient read from the output), the bottom or a saved copy of it.
template <typename F>
void MapBackward(Device device, const Blob& data, const Blob& top, Blob* bottom, F backward) {
  const auto x = [&](auto tag) { return StoredOn<decltype(tag)>(device, data, false); };
  const auto dy = [&](auto tag) { return StoredOn<decltype(tag)>(device, top, true); };
  if (MapStored(device, bottom, true, backward, x, dy)) return;
  Map(device, top.count(), data.data_on(device), top.diff_on(device),
      bottom->mutable_diff_on(device), backward);
}

/// bottom diff = backward(top diff), for a gradient that reads no data.
template <typename F>
void MapGradient(Device device, const Blob& top, Blob* bottom, F backward) {
  const auto dy = [&](auto tag) { return StoredOn<decltype(tag)>(device, top, true); };
  if (MapStored(device, bottom, true, backward, dy)) return;
  Map(device, top.count(), top.diff_on(device), bottom->mutable_diff_on(device), backward);
}

/// @brief A neuron layer computed by its two formulas alone, on both
/// devices: Forward maps `ForwardFormula` over the bottom, Backward maps `BackwardFormula`
/// over the top's data and diff (the gradient is read from y, so the layer
/// runs in place and its Backward reads no bottom). The layer's .cu
/// instantiates MapOnGpu for both formulas (DEMI_INSTANTIATE_MAP). Its
/// blobs may be stored in 16 bits (the CAFFE engine's rows of
/// engine_decision.cpp), computed in float.
template <typename ForwardFormula, typename BackwardFormula>
class MappedNeuronLayer : public OneBodyLayer<NeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  /// The formulas, with the layer's parameters, for blobs stored in `stored`.
  virtual ForwardFormula forward_formula(Type stored) const = 0;
  virtual BackwardFormula backward_formula(Type stored) const = 0;

  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    MapForward(context_.device, *bottom[0], top[0], forward_formula(top[0]->storage_type()));
  }
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override {
    if (!propagate_down[0]) return;
    MapBackward(context_.device, *top[0], *top[0], bottom[0],
                backward_formula(top[0]->storage_type()));
  }
};

}  // namespace demi

#endif  // DEMI_LAYERS_ELEMENTWISE_HPP_
