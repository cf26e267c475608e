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

 private:
  std::vector<std::unique_ptr<Filler>> fillers_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_DUMMY_DATA_LAYER_HPP_
