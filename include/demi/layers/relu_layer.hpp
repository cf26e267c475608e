#ifndef DEMI_LAYERS_RELU_LAYER_HPP_
#define DEMI_LAYERS_RELU_LAYER_HPP_

#include <memory>

#include "demi/layers/neuron_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// ReLU's formulas, for the host loop and the CUDA kernel alike.
struct ReLUForward {
  float slope;
  DEMI_HOST_DEVICE float operator()(float x) const { return x > 0 ? x : slope * x; }
};
struct ReLUBackward {
  float slope;
  /// Reads the top: y > 0 exactly where x > 0, so in place works.
  DEMI_HOST_DEVICE float operator()(float y, float dy) const { return y > 0 ? dy : slope * dy; }
};

/// A ReLU that another layer absorbed (Net's fuse_layers), or none: the
/// ReLU's formulas where that layer computes the ReLU's input.
struct AbsorbedReLU {
  bool on = false;
  float slope = 0;  ///< negative_slope (not negative)
  DEMI_HOST_DEVICE float Forward(float v) const { return on ? ReLUForward{slope}(v) : v; }
  /// dy through it, given its input v or its output: v > 0 exactly where
  /// the output is.
  DEMI_HOST_DEVICE float Backward(float v, float dy) const {
    return on ? ReLUBackward{slope}(v, dy) : dy;
  }
  /// The ReLU `layer` as absorbed, or none where its negative_slope is
  /// negative (the ReLU then stays apart and rejects it).
  static AbsorbedReLU Of(const Layer& layer);
};

/// @brief Rectified linear unit: y = max(0, x) + negative_slope * min(0, x).
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top:
/// y > 0 exactly where x > 0 (for a non-negative slope), so the in-place form
/// needs no copy of the input; it reads no bottom data.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// oneDNN's eltwise ReLU in the blobs' layout, in place or not; its backward
/// also reads the top (eltwise_relu_use_dst_for_bwd), so both engines give
/// the same values. A negative slope runs the CAFFE engine, which rejects it.
class ReLULayer : public OneBodyLayer<NeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "ReLU"; }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  /// Element-wise: any layout, the same for bottom and top.
  BlobFormats blocked_layouts() const override { return BlobFormats::kUniform; }
  /// Channels last too, on either device: any layout the blobs share.
  BlobFormats channels_last_layouts() const override { return BlobFormats::kUniform; }
  /// 16-bit blobs through oneDNN's eltwise primitives (BFLOAT16), cuDNN's
  /// activation on a GPU, or the CAFFE engine's map on either device (both
  /// types: elementwise.hpp's MapStored).
  BlobFormats narrow_blobs() const override;
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  /// The DNNL engine (relu_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape(const Blob& bottom);
  bool DnnlReady() const;
  void DnnlForward(const Blob& bottom, Blob* top);
  void DnnlBackward(const Blob& top, Blob* bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines
};

}  // namespace demi

#endif  // DEMI_LAYERS_RELU_LAYER_HPP_
