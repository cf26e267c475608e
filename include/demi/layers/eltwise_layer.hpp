#ifndef DEMI_LAYERS_ELTWISE_LAYER_HPP_
#define DEMI_LAYERS_ELTWISE_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Element-wise combination of K >= 2 bottoms of one shape, as in
/// Caffe. eltwise_param.operation:
/// - SUM (default): y = sum_k coeff_k x_k, with one coeff per bottom
///   (default all 1); dx_k = coeff_k dy.
/// - PROD: y = prod_k x_k; dx_k = dy prod_{j != k} x_j, recomputed from the
///   other bottoms with stable_prod_grad (the default), else dy y / x_k.
/// - MAX: y = max_k x_k, ties going to the later of the first two bottoms and
///   to the earlier of the rest (Caffe's order); the index of the winning
///   bottom is kept in an argmax buffer saved for backward, and
///   dx_k = dy where bottom k won, else 0.
///
/// Top: the bottoms' shape (not in place). Backward reads: SUM nothing; MAX
/// only its argmax; PROD every bottom's data, and the top's only without
/// stable_prod_grad.
///
/// On the CPU, SUM runs oneDNN's sum primitive (DNNL, or DEFAULT unless the
/// net's engine says CAFFE) in the blobs' layout, and its backward one
/// threaded pass per bottom; PROD and MAX run the CAFFE loops.
class EltwiseLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Eltwise"; }
  bool CanReplay() const override { return true; }
  /// Element-wise: any layout, the same for every bottom and the top.
  BlobFormats blocked_layouts() const override { return BlobFormats::kUniform; }
  /// Channels last too, on either device: any layout the blobs share.
  BlobFormats channels_last_layouts() const override { return BlobFormats::kUniform; }
  /// SUM keeps 16-bit blobs through oneDNN's sum (and a FLOAT backward),
  /// and on a GPU through its CUDA kernels (in FLOAT).
  BlobFormats narrow_blobs() const override {
    return NarrowBlobsWhen(
        DnnlReady() || (context_.device == Device::kGPU && op_ == EltwiseParameter::SUM),
        BlobFormats::kUniform);
  }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  int MinBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override {
    return layer_param_.eltwise_param().operation() == EltwiseParameter::PROD;
  }
  bool BackwardReadsTopData(int) const override {
    const EltwiseParameter& param = layer_param_.eltwise_param();
    return param.operation() == EltwiseParameter::PROD && !param.stable_prod_grad();
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
  /// PROD and SUM, whose bodies are math calls, on `device`: the top from
  /// the bottoms, and the gradients of the bottoms that propagate down.
  void ForwardByMath(Device device, const std::vector<Blob*>& bottom, Blob* top) const;
  void BackwardByMath(Device device, const Blob& top, const std::vector<bool>& propagate_down,
                      const std::vector<Blob*>& bottom) const;
#ifndef CPU_ONLY
  /// SUM over 16-bit blobs on the GPU (eltwise_layer.cu): each value summed
  /// in FLOAT and rounded once, and the gradients c_k dy.
  void SumStoredGpu(const std::vector<Blob*>& bottom, Blob* top) const;
  void SumBackwardStoredGpu(const Blob& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) const;
#endif

  /// The DNNL engine of SUM (eltwise_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape(const std::vector<Blob*>& bottom, const Blob& top);
  bool DnnlReady() const;
  void DnnlForward(const std::vector<Blob*>& bottom, Blob* top);
  void DnnlBackward(const Blob& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines and operations

  EltwiseParameter::EltwiseOp op_ = EltwiseParameter::SUM;
  std::vector<float> coeffs_;  ///< SUM: one per bottom
  bool stable_prod_grad_ = true;
  Blob argmax_;  ///< MAX only: index of the winning bottom, as a float; saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_ELTWISE_LAYER_HPP_
