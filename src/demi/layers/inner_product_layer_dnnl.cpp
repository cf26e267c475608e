// The DNNL engine of InnerProduct (see inner_product_layer.hpp).
#include "demi/layers/inner_product_layer.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

/// The forward primitive and, as its backward, the data gradient (the
/// weight and bias gradients are GEMMs, in BackwardOnDevice).
struct InnerProductLayer::DnnlState : DnnlForwardBackward {
  // x and dx in Caffe's layout beside the bottom's (blocked or not); one
  // buffer serves both, used one after the other.
  DnnlTensor src, diff_src;
  memory weights, bias, dst, diff_dst;
  Blob src_buffer;
};

namespace {

/// Caffe's W (num_output x K, or K x num_output with `transpose`) as the
/// weights of an inner product whose src has dims `src_dims` (M and then
/// K's axes): the dims are num_output and K's axes, the strides Caffe's.
memory::desc CaffeWeights(const memory::dims& src_dims, int64_t num_output, bool transpose) {
  memory::dims dims = src_dims;
  dims[0] = num_output;
  memory::dims strides(dims.size());
  int64_t inner = 1;  // product of K's axes after i
  for (size_t i = dims.size() - 1; i >= 1; --i) {
    strides[i] = transpose ? inner * num_output : inner;
    inner *= dims[i];
  }
  strides[0] = transpose ? 1 : inner;
  return memory::desc(dims, memory::data_type::f32, strides);
}

}  // namespace

void InnerProductLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_src", &dnnl_->src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool InnerProductLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void InnerProductLayer::DnnlReshape(const Blob& bottom) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.src_buffer});
  if (m_ == 0) return;  // CAFFE handles empty batches
  // A 4-D bottom flattened from axis 1 keeps its axes, so that a blocked
  // bottom is reordered as such; otherwise the bottom is M x K.
  const bool image = axis_ == 1 && bottom.num_axes() == 4;
  const memory::desc user_src = image ? BlobDesc(bottom) : DenseDesc({m_, k_});
  const memory::desc src = image ? DenseDesc(bottom.shape()) : user_src;
  const memory::desc weights = CaffeWeights(src.dims(), n_, transpose_);
  const memory::desc dst = DenseDesc({m_, n_});
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const std::string what = StrCat("inner product for bottom shape ", bottom.shape_string());
  s.ready = TryDnnl(layer_param_, what, [&] {
    const auto forward_desc =
        bias_term_ ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src,
                                                       weights, DenseDesc({n_}), dst)
                   : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src,
                                                       weights, dst);
    const dnnl::inner_product_forward::primitive_desc forward(forward_desc, attr, DnnlEngine());
    const dnnl::inner_product_backward_data::primitive_desc adjoint(
        dnnl::inner_product_backward_data::desc(src, weights, dst), attr, DnnlEngine(), forward);
    s.Set(forward, adjoint);
    s.src.Reshape(src, user_src, &s.src_buffer);
    s.diff_src.Reshape(src, user_src, &s.src_buffer);
    s.weights = UnboundMemory(weights);
    s.bias = UnboundMemory(DenseDesc({n_}));
    s.dst = UnboundMemory(dst);
    s.diff_dst = UnboundMemory(dst);
  });
}

void InnerProductLayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  const memory& src = s.src.In(bottom.cpu_data());
  Bind(s.weights, blobs_[0]->cpu_data());
  if (bias_term_) Bind(s.bias, blobs_[1]->cpu_data());
  Bind(s.dst, top->mutable_cpu_data());
  s.Execute(s.forward, {{DNNL_ARG_SRC, src.get()},
                        {DNNL_ARG_WEIGHTS, s.weights.get()},
                        {DNNL_ARG_BIAS, s.bias.get()},
                        {DNNL_ARG_DST, s.dst.get()}});
}

const float* InnerProductLayer::DnnlPlainBottom(const Blob& bottom) {
  return static_cast<const float*>(dnnl_->src.In(bottom.cpu_data()).get_data_handle());
}

void InnerProductLayer::DnnlBackwardData(const Blob& top, Blob* bottom) {
  DnnlState& s = *dnnl_;
  Bind(s.diff_dst, top.cpu_diff());
  Bind(s.weights, blobs_[0]->cpu_data());
  const memory& diff_src = s.diff_src.Out(bottom->mutable_cpu_diff());
  s.Execute(s.backward, {{DNNL_ARG_DIFF_DST, s.diff_dst.get()},
                         {DNNL_ARG_WEIGHTS, s.weights.get()},
                         {DNNL_ARG_DIFF_SRC, diff_src.get()}});
  s.diff_src.Finish(bottom->mutable_cpu_diff());
}

}  // namespace demi
