// The DNNL engine of ReLU (see relu_layer.hpp).
#include "demi/layers/relu_layer.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/engine.hpp"

namespace demi {

using dnnl::memory;

struct ReLULayer::DnnlState {
  dnnl::eltwise_forward forward;
  dnnl::eltwise_backward backward;
  bool ready = false;
  // One layout for all four: in place they are two pairs of one memory.
  memory src, dst, diff_dst, diff_src;
  DnnlScratch scratchpad;
};

void ReLULayer::DnnlSetUp() {
  if (!WantsDnnl(layer_param_.relu_param().engine(), context_)) return;
  if (layer_param_.relu_param().negative_slope() < 0) return;  // CAFFE rejects it
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool ReLULayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void ReLULayer::DnnlReshape(const Blob& bottom) {
  DnnlState& s = *dnnl_;
  s.ready = false;
  s.scratchpad.Reshape();
  if (bottom.count() == 0) return;
  const memory::desc data = FlatDesc(bottom);
  const float slope = layer_param_.relu_param().negative_slope();
  // Backward from the top, as the CAFFE engine: y > 0 exactly where x > 0.
  const auto algorithm = dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  try {
    const dnnl::eltwise_forward::primitive_desc forward(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, algorithm, data, slope),
        attr, DnnlEngine());
    const dnnl::eltwise_backward::primitive_desc backward(
        dnnl::eltwise_backward::desc(algorithm, data, data, slope), attr, DnnlEngine(), forward);
    s.forward = dnnl::eltwise_forward(forward);
    s.backward = dnnl::eltwise_backward(backward);
    s.scratchpad.Reshape({forward.scratchpad_desc(), backward.scratchpad_desc()});
  } catch (const dnnl::error& error) {
    LogDnnlFallback(layer_param_, StrCat("oneDNN has no ReLU for bottom shape ",
                                         bottom.shape_string(), " (", error.what(), ")"));
    return;
  }
  for (memory* m : {&s.src, &s.dst, &s.diff_dst, &s.diff_src}) *m = UnboundMemory(data);
  s.ready = true;
}

void ReLULayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  Bind(s.src, bottom.cpu_data());
  Bind(s.dst, top->mutable_cpu_data());
  DnnlExecute(s.forward, {{DNNL_ARG_SRC, s.src.get()},
                          {DNNL_ARG_DST, s.dst.get()},
                          {DNNL_ARG_SCRATCHPAD, s.scratchpad.Bound().get()}});
}

void ReLULayer::DnnlBackward(const Blob& top, Blob* bottom) {
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
