#ifndef DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_
#define DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"
#include "demi/layers/narrow_staging.hpp"

namespace demi {

/// @brief Fully connected layer: y = x W^T + b.
///
/// The bottom is viewed as M x K, with M the product of the axes before
/// `axis` and K of the rest; the top has shape bottom[0:axis] + [num_output].
/// W is num_output x K (K x num_output with `transpose`), b is num_output.
/// Backward reads the bottom (for dW) and not the top.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// oneDNN's inner product (forward, with b, and backward data) on W in
/// Caffe's layout, either orientation: a reordered copy of W would cost more
/// than the product at small batches. With axis 1 the bottom may be a
/// channel-blocked N x C x H x W blob, reordered into Caffe's layout through
/// a planned buffer. dW and db are added to the param diffs by the same GEMM
/// as the CAFFE engine's (oneDNN's backward-weights primitive can only
/// overwrite, which would cost a weight-sized buffer and a pass over it).
///
/// On a GPU the layer may store 16 bits (FLOAT16, BFLOAT16): cuBLAS
/// multiplies x and W rounded to the type (at each Forward, from the FLOAT
/// master copy) with FLOAT sums, and adds dW into the FLOAT gradient; a FLOAT
/// bottom or top (a loss reads FLOAT) is converted through scratch.
class InnerProductLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "InnerProduct"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return false; }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  /// With axis 1 the bottom may be blocked; the top is 2-D, never blocked.
  BlobFormats blocked_layouts() const override {
    return DnnlReady() && axis_ == 1 ? BlobFormats::kPerBlob : BlobFormats::kNone;
  }
  BlobFormats narrow_blobs() const override {
    return NarrowBlobsWhen(context_.device == Device::kGPU, BlobFormats::kPerBlob);
  }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  /// The DNNL engine (inner_product_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape(const Blob& bottom);
  bool DnnlReady() const;
  void DnnlForward(const Blob& bottom, Blob* top);
  /// The bottom's data as an M x K matrix in Caffe's layout (a reordered
  /// copy when the bottom is blocked).
  const float* DnnlPlainBottom(const Blob& bottom);
  /// Whether the weight and bias gradients are a oneDNN primitive
  /// (BFLOAT16 backward math) rather than GEMMs.
  bool DnnlComputesWeightGradient() const;
  /// Adds dW and db (either null: not wanted) from x and dy.
  void DnnlWeightGradient(const Blob& bottom, const Blob& top, float* weights_diff,
                          float* bias_diff);
  void DnnlBackwardData(const Blob& top, Blob* bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines
#ifndef CPU_ONLY
  /// Forward and Backward in staging_.type(), a 16-bit type
  /// (inner_product_layer.cu).
  void ForwardStoredGpu(const Blob& bottom, Blob* top);
  void BackwardStoredGpu(const Blob& top, bool propagate_down, Blob* bottom);
  NarrowStaging staging_;  ///< on a GPU: the type computed in, FLOAT sides' stand-ins
  Blob narrow_weights_;    ///< W rounded to staging_.type() at each Forward
#endif

  int axis_ = 1;   ///< canonical `axis`
  int64_t m_ = 0;  ///< rows: product of the axes before `axis`
  int64_t k_ = 0;  ///< inputs per row
  int64_t n_ = 0;  ///< num_output
  bool bias_term_ = true;
  bool transpose_ = false;
};

}  // namespace demi

#endif  // DEMI_LAYERS_INNER_PRODUCT_LAYER_HPP_
