#ifndef DEMI_LAYERS_MVN_LAYER_HPP_
#define DEMI_LAYERS_MVN_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Mean-variance normalization, as in Caffe: y = (x - mean) / (std + eps)
/// over each item and channel (each N x C slice, the rest of the axes
/// normalized together), or over each item with mvn_param.across_channels;
/// std = sqrt(mean((x - mean)^2)). With normalize_variance false,
/// y = x - mean. Note that Caffe adds eps (default 1e-9) to the standard
/// deviation, not to the variance.
///
/// Shapes: bottom N x C x ..., top alike (in place allowed). Forward keeps
/// each slice's std in a buffer for Backward. Backward computes the exact
/// gradient of that forward: dx = (dy - mean(dy)) / (std + eps)
/// - y mean(dy y) / std (the last term 0 for a constant slice), or
/// dx = dy - mean(dy) without variance normalization. It reads the top data
/// when normalizing the variance, and no bottom data.
class MVNLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "MVN"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override {
    return layer_param_.mvn_param().normalize_variance();
  }

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
  int64_t num_ = 0;  ///< slices normalized separately
  int64_t dim_ = 0;  ///< values in each
  Blob std_;         ///< per slice, with normalize_variance; saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_MVN_LAYER_HPP_
