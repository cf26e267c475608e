#ifndef DEMI_LAYERS_REDUCTION_LAYER_HPP_
#define DEMI_LAYERS_REDUCTION_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Reduces every axis from reduction_param.axis (default 0) on, as in
/// Caffe: viewing the bottom as num x dim around the axis,
/// y[i] = coeff * op(x[i, :]) with op SUM (sum x), ASUM (sum |x|), SUMSQ
/// (sum x^2) or MEAN (sum x / dim).
///
/// Shapes: the top is the bottom's shape before the axis (a scalar for axis 0).
/// Backward: dx[i, j] = coeff dy[i] times 1 (SUM), 1 / dim (MEAN), sign(x)
/// (ASUM) or 2 x (SUMSQ). It reads the bottom data for ASUM and SUMSQ only and
/// never the top.
class ReductionLayer : public Layer {
 public:
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Reduction"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override;
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
  int64_t num_ = 0;  ///< outputs: product of the axes before `axis`
  int64_t dim_ = 0;  ///< values reduced into each
};

}  // namespace demi

#endif  // DEMI_LAYERS_REDUCTION_LAYER_HPP_
