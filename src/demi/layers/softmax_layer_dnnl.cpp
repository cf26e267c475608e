// The DNNL engine of Softmax (see softmax_layer.hpp).
#include "demi/layers/softmax_layer.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/engine.hpp"

namespace demi {

using dnnl::memory;

struct SoftmaxLayer::DnnlState {
  dnnl::softmax_forward forward;
  dnnl::softmax_backward backward;
  bool ready = false;
  // One layout for all four: in place they are two pairs of one memory.
  memory src, dst, diff_dst, diff_src;
  DnnlScratch scratchpad;
};

void SoftmaxLayer::DnnlSetUp() {
  if (!WantsDnnl(layer_param_.softmax_param().engine(), context_)) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool SoftmaxLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void SoftmaxLayer::DnnlReshape() {
  DnnlState& s = *dnnl_;
  s.ready = false;
  s.scratchpad.Reshape();
  if (outer_num_ * channels_ * inner_num_ == 0) return;
  // Caffe's axes folded into the three that matter (two when the softmax
  // axis is the last, oneDNN's fastest case).
  const memory::desc data = inner_num_ == 1 ? DenseDesc({outer_num_, channels_})
                                            : DenseDesc({outer_num_, channels_, inner_num_});
  constexpr int kAxis = 1;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  try {
    const dnnl::softmax_forward::primitive_desc forward(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, data, kAxis), attr,
        DnnlEngine());
    const dnnl::softmax_backward::primitive_desc backward(
        dnnl::softmax_backward::desc(data, data, kAxis), attr, DnnlEngine(), forward);
    s.forward = dnnl::softmax_forward(forward);
    s.backward = dnnl::softmax_backward(backward);
    s.scratchpad.Reshape({forward.scratchpad_desc(), backward.scratchpad_desc()});
  } catch (const dnnl::error& error) {
    LogDnnlFallback(layer_param_, StrCat("oneDNN has no softmax over ", channels_,
                                         " channels with inner size ", inner_num_, " (",
                                         error.what(), ")"));
    return;
  }
  for (memory* m : {&s.src, &s.dst, &s.diff_dst, &s.diff_src}) *m = UnboundMemory(data);
  s.ready = true;
  scale_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's scratch is not needed
}

void SoftmaxLayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  Bind(s.src, bottom.cpu_data());
  Bind(s.dst, top->mutable_cpu_data());
  DnnlExecute(s.forward, {{DNNL_ARG_SRC, s.src.get()},
                          {DNNL_ARG_DST, s.dst.get()},
                          {DNNL_ARG_SCRATCHPAD, s.scratchpad.Bound().get()}});
}

void SoftmaxLayer::DnnlBackward(const Blob& top, Blob* bottom) {
  DnnlState& s = *dnnl_;
  Bind(s.dst, top.cpu_data());
  Bind(s.diff_dst, top.cpu_diff());
  Bind(s.diff_src, bottom->mutable_cpu_diff());
  DnnlExecute(s.backward, {{DNNL_ARG_DST, s.dst.get()},
                           {DNNL_ARG_DIFF_DST, s.diff_dst.get()},
                           {DNNL_ARG_DIFF_SRC, s.diff_src.get()},
                           {DNNL_ARG_SCRATCHPAD, s.scratchpad.Bound().get()}});
}

}  // namespace demi
