#ifndef DEMI_LAYERS_FILTER_LAYER_HPP_
#define DEMI_LAYERS_FILTER_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Keeps the items whose selector is non-zero, as in Caffe.
///
/// Bottoms: K >= 1 data blobs, each N x ..., then the selector, of shape (N)
/// or (N, 1, ...). Tops: K, top k holding the selected items of bottom k in
/// their order: M x ... with M the number of non-zero selectors.
///
/// M depends on the selector's values, which only Forward sees: Reshape sizes
/// the tops for all N items (so a memory plan holds any selection) and Forward
/// shrinks axis 0 to M in place, within that memory; the net then reshapes
/// the layers after it (ForwardReshapesTops), whose blobs shrink within
/// their planned memory too. (A net with a Filter runs without CUDA graphs.)
///
/// Backward scatters each top's gradient back to the selected items and writes
/// zero to the others; the selector gets no gradient (asking for one is an
/// error). The selected indices are kept from Forward, so Backward reads no
/// data.
class FilterLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Filter"; }
  int MinBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override {
    return bottom_index != selector_index_;
  }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool ForwardReshapesTops() const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  int selector_index_ = -1;                   ///< the last bottom
  std::vector<int64_t> selected_;             ///< items kept by the last Forward
  std::vector<std::vector<int64_t>> shapes_;  ///< top shapes, axis 0 set by Forward
  Blob selected_rows_;  ///< selected_ as floats, for Forward_gpu and Backward_gpu
};

}  // namespace demi

#endif  // DEMI_LAYERS_FILTER_LAYER_HPP_
