#ifndef DEMI_LAYERS_BIAS_LAYER_HPP_
#define DEMI_LAYERS_BIAS_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Adds a bias broadcast over the bottom, as in Caffe: y = x + b.
///
/// b has the shape of bottom 0's axes [axis, axis + num_axes), and is added
/// to every slice of x along the other axes. It is either
/// - a learned param (one bottom), of shape bottom.shape[axis : axis +
///   num_axes] from bias_param (axis default 1, negative counts from the end;
///   num_axes default 1, -1 to the end, 0 for a scalar), filled by
///   bias_param.filler (default constant 0); or
/// - bottom 1 (two bottoms), whose whole shape must match bottom 0's from
///   `axis` on (a scalar bottom 1 applies from axis 0); its gradient flows.
/// Top: bottom 0's shape; in place allowed.
///
/// Backward: dx = dy and db = the sum of dy over the broadcast axes; it reads
/// no data.
class BiasLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Bias"; }
  bool CanReplay() const override { return true; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// Backward_cpu works on either device (context().device).
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override {
    Backward_cpu(top, propagate_down, bottom);
  }
#endif

 private:
  /// db[d] (+)= the sum of dy over the outer and inner axes, on `device`;
  /// `accumulate` adds to db (a param gradient) instead of writing it.
  void SumPerBias(Device device, const float* dy, bool accumulate, float* db) const;
#ifndef CPU_ONLY
  void SumPerBiasGpu(const float* dy, bool accumulate, float* db) const;  ///< bias_layer.cu
#endif

  int64_t outer_ = 0;     ///< product of bottom 0's axes before `axis`
  int64_t bias_dim_ = 0;  ///< count of b
  int64_t inner_ = 0;     ///< product of bottom 0's axes after b's
};

}  // namespace demi

#endif  // DEMI_LAYERS_BIAS_LAYER_HPP_
