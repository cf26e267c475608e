#ifndef DEMI_LAYERS_CROP_LAYER_HPP_
#define DEMI_LAYERS_CROP_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Crops bottom[0] to the shape of bottom[1] on every axis from
/// crop_param.axis (default 2) on, as in Caffe.
///
/// Bottoms: the data A and a reference B with as many axes. Top: A's shape on
/// the axes before `axis`, B's from `axis` on; top[i...] = A[i... + offset...].
/// crop_param.offset gives no offset (all 0), one for every cropped axis, or
/// one per cropped axis. Gradients flow into A only (zero outside the crop);
/// B's values do not affect the top, so its gradient, when asked, is zero.
/// Backward reads no data.
class CropLayer : public Layer {
 public:
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Crop"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

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
  /// Offset in A of the first element of top row `row` (a row runs along the
  /// last axis).
  int64_t SourceOffset(int64_t row, const Blob& top) const;

  std::vector<int64_t> offsets_;  ///< per axis of A (0 before `axis`)
  std::vector<int64_t> strides_;  ///< of A, per axis
};

}  // namespace demi

#endif  // DEMI_LAYERS_CROP_LAYER_HPP_
