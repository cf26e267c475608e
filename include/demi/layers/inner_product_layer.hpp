#ifndef DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_
#define DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Fully connected layer: y = x W^T + b.
///
/// The bottom is viewed as M x K, with M the product of the axes before
/// `axis` and K of the rest; the top has shape bottom[0:axis] + [num_output].
/// W is num_output x K (K x num_output with `transpose`), b is num_output.
/// Backward reads the bottom (for dW) and not the top.
class InnerProductLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "InnerProduct"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return true; }
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
  int64_t m_ = 0;  ///< rows: product of the axes before `axis`
  int64_t k_ = 0;  ///< inputs per row
  int64_t n_ = 0;  ///< num_output
  bool bias_term_ = true;
  bool transpose_ = false;
};

}  // namespace demi

#endif  // DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_
