#ifndef DEMI_LAYERS_SOFTMAX_LAYER_HPP_
#define DEMI_LAYERS_SOFTMAX_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"

namespace demi {

/// @brief Softmax over one axis:
/// y[i, c, j] = exp(x[i, c, j] - m[i, j]) / sum over c' of exp(x[i, c', j] - m[i, j])
/// with m[i, j] = max over c of x[i, c, j], for every outer index i (the axes
/// before softmax_param.axis) and inner position j (the axes after it).
///
/// Shapes: bottom and top alike (in place allowed); axis defaults to 1 and
/// may be negative (counted from the end). Backward reads the top only:
/// dx = y * (dy - sum over c of dy * y); it reads no bottom data. A scratch
/// buffer of one value per inner position holds the maxima, sums and dots.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// oneDNN's softmax over the bottom viewed as outer x channels (x inner), in
/// Caffe's layout, in place or not; its scratch buffer stays empty.
class SoftmaxLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Softmax"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }

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
  /// The DNNL engine (softmax_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape();
  bool DnnlReady() const;
  void DnnlForward(const Blob& bottom, Blob* top);
  void DnnlBackward(const Blob& top, Blob* bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines

  int64_t outer_num_ = 0;  ///< product of the axes before the softmax axis
  int64_t channels_ = 0;   ///< size of the softmax axis
  int64_t inner_num_ = 0;  ///< product of the axes after it
  Blob scale_;             ///< inner_num_ values, scratch
};

}  // namespace demi

#endif  // DEMI_LAYERS_SOFTMAX_LAYER_HPP_
