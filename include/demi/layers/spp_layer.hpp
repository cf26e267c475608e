#ifndef DEMI_LAYERS_SPP_LAYER_HPP_
#define DEMI_LAYERS_SPP_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Spatial pyramid pooling, as in Caffe: a fixed-length vector from an
/// image of any size.
///
/// Level l (0 <= l < pyramid_height) pools each H x W plane into
/// 2^l x 2^l bins with Caffe's Pooling (CEIL rounding) of, per dimension,
/// kernel = stride = ceil(in / bins) and pad = (kernel bins - in + 1) / 2,
/// so the bins tile the padded image. MAX takes the largest value of the
/// window clipped to the image; AVE divides the clipped window's sum by the
/// window's size clipped to [-pad, in + pad) (padding counts, as in Pooling).
/// Caffe's Pooling rejects pad >= kernel, which rules out some sizes for a
/// level (every in < bins, and others such as 5 for 4 bins or 9 for 8): they
/// are an error here too. Otherwise each level gives exactly bins x bins.
///
/// Bottom: N x C x H x W. Top: with pyramid_height 1, N x C x 1 x 1 (one
/// global pooling); otherwise N x (C * sum over l of 4^l), each image's
/// levels in order, each level C x bins x bins flattened (Caffe's Flatten
/// and Concat along axis 1). STOCHASTIC pooling is rejected, as in Pooling.
///
/// The windows are computed here directly rather than through internal
/// Pooling layers: a level's kernel depends on the bottom size, so
/// internal layers would be recreated on every new size. MAX keeps the argmax
/// of every output (index within its H x W plane) in a buffer saved for
/// backward. Backward reads neither the bottom nor the top data.
class SPPLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "SPP"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  /// One pyramid level's pooling, per dimension.
  struct Level {
    int64_t bins;
    int64_t kernel_h, kernel_w;
    int64_t pad_h, pad_w;
    int64_t offset;  ///< of the level's first output within one image's top
  };

  bool max_ = true;
  int64_t pyramid_height_ = 0;
  int64_t num_ = 0, channels_ = 0, height_ = 0, width_ = 0;
  int64_t top_dim_ = 0;  ///< outputs per image: C * sum of bins^2
  std::vector<Level> levels_;
  Blob argmax_;  ///< MAX only: index of each output's max within its plane, saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_SPP_LAYER_HPP_
