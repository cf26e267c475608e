// The DNNL engine of Softmax (see softmax_layer.hpp).
#include "demi/layers/softmax_layer.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

struct SoftmaxLayer::DnnlState : DnnlActivation {};

void SoftmaxLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool SoftmaxLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void SoftmaxLayer::DnnlReshape() {
  DnnlState& s = *dnnl_;
  s.Reset();
  if (outer_num_ * channels_ * inner_num_ == 0) return;
  // Caffe's axes folded into the three that matter (two when the softmax
  // axis is the last, oneDNN's fastest case).
  const memory::desc data = inner_num_ == 1 ? DenseDesc({outer_num_, channels_})
                                            : DenseDesc({outer_num_, channels_, inner_num_});
  constexpr int kAxis = 1;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const std::string what =
      StrCat("softmax over ", channels_, " channels with inner size ", inner_num_);
  s.ready = TryDnnl(layer_param_, what, [&] {
    const dnnl::softmax_forward::primitive_desc forward(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, data, kAxis), attr,
        DnnlEngine());
    const dnnl::softmax_backward::primitive_desc backward(
        dnnl::softmax_backward::desc(data, data, kAxis), attr, DnnlEngine(), forward);
    s.Set(forward, backward, data);
  });
  if (!s.ready) return;
  scale_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's scratch is not needed
}

void SoftmaxLayer::DnnlForward(const Blob& bottom, Blob* top) {
  dnnl_->Forward(bottom.cpu_data(), top->mutable_cpu_data());
}

void SoftmaxLayer::DnnlBackward(const Blob& top, Blob* bottom) {
  dnnl_->Backward(top.cpu_data(), top.cpu_diff(), bottom->mutable_cpu_diff());
}

}  // namespace demi
