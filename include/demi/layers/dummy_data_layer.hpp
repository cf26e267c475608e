#ifndef DEMI_LAYERS_DUMMY_DATA_LAYER_HPP_
#define DEMI_LAYERS_DUMMY_DATA_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/filler.hpp"
#include "demi/layer.hpp"

namespace demi {

/// @brief Produces tops filled by fillers, for benchmarks and tests.
///
/// dummy_data_param gives one shape (or legacy num/channels/height/width) and
/// one data_filler for all tops or one per top; the default filler is
/// constant 0. Every Forward refills every top: a planned top shares its
/// bytes with other tensors between iterations.
///
/// On a GPU the constant, uniform and gaussian (not sparse) fillers fill on
/// the device, from a counter-based generator (SplitMix64 of seed + index;
/// gaussian by Box-Muller) seeded each Forward from the layer's stream: the
/// values are as random and as repeatable as the CPU's, but not the same
/// values. Filling on the host and copying took 85-90 % of a ResNet-50
/// training step on an H100 (gaussian 64 x 3 x 224 x 224: 240 of 350 ms).
/// Other fillers fill on the host, as on the CPU.
class DummyDataLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>&, const std::vector<Blob*>&) override {}
  const char* type() const override { return "DummyData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool ForwardDraws() const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
#endif

 private:
  std::vector<std::unique_ptr<Filler>> fillers_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_DUMMY_DATA_LAYER_HPP_
