// The DNNL engine of ReLU (see relu_layer.hpp).
#include "demi/layers/relu_layer.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

struct ReLULayer::DnnlState : DnnlActivation {};

void ReLULayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool ReLULayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void ReLULayer::DnnlReshape(const Blob& bottom) {
  DnnlState& s = *dnnl_;
  s.Reset();
  if (bottom.count() == 0) return;
  const memory::desc data = FlatDesc(bottom);
  const float slope = layer_param_.relu_param().negative_slope();
  // Backward from the top, as the CAFFE engine: y > 0 exactly where x > 0.
  const auto algorithm = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  s.ready = TryDnnl(layer_param_, StrCat("ReLU for bottom shape ", bottom.shape_string()), [&] {
    const dnnl::eltwise_forward::primitive_desc forward(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, algorithm, data, slope),
        attr, DnnlEngine());
    const dnnl::eltwise_backward::primitive_desc backward(
        dnnl::eltwise_backward::desc(algorithm, data, data, slope), attr, DnnlEngine(), forward);
    s.Set(forward, backward, data);
  });
}

void ReLULayer::DnnlForward(const Blob& bottom, Blob* top) {
  dnnl_->Forward(bottom.data()->cpu_data(), top->data()->mutable_cpu_data());
}

void ReLULayer::DnnlBackward(const Blob& top, Blob* bottom) {
  dnnl_->Backward(top.data()->cpu_data(), top.diff()->cpu_data(),
                  bottom->diff()->mutable_cpu_data());
}

}  // namespace demi
