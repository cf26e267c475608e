// The DNNL engine of InnerProduct (see inner_product_layer.hpp).
#include "demi/layers/inner_product_layer.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

/// The forward primitive and, as its backward, the data gradient. In FLOAT
/// backward math the weight and bias gradients are GEMMs (BackwardOnDevice);
/// in BFLOAT16 they are one more primitive, reading x and dy in bf16.
struct InnerProductLayer::DnnlState : DnnlForwardBackward {
  // Each input in the layout and type its primitive reads, beside Caffe's
  // (the bottom's blocked layout, or W's row-major one, in FLOAT).
  DnnlTensor src, weights;                         // forward
  DnnlTensor diff_dst, adjoint_weights, diff_src;  // data gradient
  DnnlTensor plain_src;             // x as M x K floats, for the GEMM weight gradient
  dnnl::primitive weight_gradient;  // BFLOAT16 backward math only
  DnnlTensor wg_src, wg_diff_dst, wg_weights;
  memory bias, dst, bias_grad;
  std::vector<float> bias_grad_values;  ///< diff_bias is added, not written
  // One buffer per input serves the primitives, which run one after another.
  Blob src_buffer, weights_buffer, diff_dst_buffer;
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

/// `user`'s dims in `type`: as `user` in FLOAT, oneDNN's choice in bf16
/// (its bf16 kernels want blocked weights; the data is reordered anyway).
memory::desc InMathType(const memory::desc& user, memory::data_type type) {
  if (type == memory::data_type::f32) return user;
  return memory::desc(user.dims(), type, memory::format_tag::any);
}

}  // namespace

void InnerProductLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_src", &dnnl_->src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_weights", &dnnl_->weights_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_diff_dst", &dnnl_->diff_dst_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool InnerProductLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

bool InnerProductLayer::DnnlComputesWeightGradient() const {
  return DnnlReady() && engine_.types.backward_math == BFLOAT16;
}

void InnerProductLayer::DnnlReshape(const Blob& bottom) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.src_buffer, &s.weights_buffer, &s.diff_dst_buffer});
  if (m_ == 0) return;  // CAFFE handles empty batches
  // A 4-D bottom flattened from axis 1 keeps its axes, so that a blocked
  // bottom is reordered as such; otherwise the bottom is M x K.
  const bool image = axis_ == 1 && bottom.num_axes() == 4;
  const memory::desc user_src = image ? BlobDesc(bottom) : DenseDesc({m_, k_});
  const memory::desc plain_src = image ? DenseDesc(bottom.shape()) : user_src;
  const memory::desc user_weights = CaffeWeights(plain_src.dims(), n_, transpose_);
  const memory::desc dst = DenseDesc({m_, n_});
  const memory::desc bias = DenseDesc({n_});
  const memory::data_type forward_type = DnnlMathType(engine_.types.forward_math);
  const memory::data_type backward_type = DnnlMathType(engine_.types.backward_math);
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const dnnl::engine& engine = DnnlEngine();
  const std::string what = StrCat("inner product for bottom shape ", bottom.shape_string());
  s.ready = TryDnnl(layer_param_, what, [&] {
    // x, W in `in` -> y in f32; also the hint of the backward primitives.
    const auto multiply = [&](memory::data_type in) {
      const memory::desc x = InMathType(plain_src, in), w = InMathType(user_weights, in);
      const auto desc = bias_term_ ? dnnl::inner_product_forward::desc(
                                         dnnl::prop_kind::forward_training, x, w, bias, dst)
                                   : dnnl::inner_product_forward::desc(
                                         dnnl::prop_kind::forward_training, x, w, dst);
      return dnnl::inner_product_forward::primitive_desc(desc, attr, engine);
    };
    const dnnl::inner_product_forward::primitive_desc forward = multiply(forward_type);
    const dnnl::inner_product_forward::primitive_desc backward_hint =
        backward_type == forward_type ? forward : multiply(backward_type);
    // dx is written in FLOAT, in Caffe's layout; dy and W are read in backward_type.
    const dnnl::inner_product_backward_data::primitive_desc adjoint(
        dnnl::inner_product_backward_data::desc(plain_src, InMathType(user_weights, backward_type),
                                                InMathType(dst, backward_type)),
        attr, engine, backward_hint);
    s.Set(forward, adjoint);
    s.src.Reshape(forward.src_desc(), user_src, &s.src_buffer);
    s.weights.Reshape(forward.weights_desc(), user_weights, &s.weights_buffer);
    s.diff_dst.Reshape(adjoint.diff_dst_desc(), dst, &s.diff_dst_buffer);
    s.adjoint_weights.Reshape(adjoint.weights_desc(), user_weights, &s.weights_buffer);
    s.diff_src.Reshape(adjoint.diff_src_desc(), user_src, &s.src_buffer);
    s.plain_src.Reshape(plain_src, user_src, &s.src_buffer);
    s.bias = UnboundMemory(bias);
    s.dst = UnboundMemory(dst);
    if (backward_type == memory::data_type::f32) return;
    // The weight (and bias) gradient reads x and dy in bf16 and sums into
    // FLOAT, added to the param diffs.
    const memory::desc x = InMathType(plain_src, backward_type);
    const memory::desc dw(user_weights.dims(), memory::data_type::f32, memory::format_tag::any);
    const memory::desc dy = InMathType(dst, backward_type);
    const dnnl::inner_product_backward_weights::primitive_desc weight_gradient(
        bias_term_ ? dnnl::inner_product_backward_weights::desc(x, dw, bias, dy)
                   : dnnl::inner_product_backward_weights::desc(x, dw, dy),
        attr, engine, backward_hint);
    s.weight_gradient = dnnl::primitive(weight_gradient);
    s.wg_src.Reshape(weight_gradient.src_desc(), user_src, &s.src_buffer);
    s.wg_diff_dst.Reshape(weight_gradient.diff_dst_desc(), dst, &s.diff_dst_buffer);
    s.wg_weights.Reshape(weight_gradient.diff_weights_desc(), user_weights, &s.weights_buffer,
                         /*own_buffer=*/true);
    s.bias_grad = UnboundMemory(bias);
    s.bias_grad_values.assign(bias_term_ ? n_ : 0, 0.0f);
    s.scratchpad.Reshape(
        {forward.scratchpad_desc(), adjoint.scratchpad_desc(), weight_gradient.scratchpad_desc()});
  });
}

void InnerProductLayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  const memory& src = s.src.In(bottom.cpu_data());
  const memory& weights = s.weights.In(blobs_[0]->cpu_data());
  if (bias_term_) Bind(s.bias, blobs_[1]->cpu_data());
  Bind(s.dst, top->mutable_cpu_data());
  s.Execute(s.forward, {{DNNL_ARG_SRC, src.get()},
                        {DNNL_ARG_WEIGHTS, weights.get()},
                        {DNNL_ARG_BIAS, s.bias.get()},
                        {DNNL_ARG_DST, s.dst.get()}});
}

const float* InnerProductLayer::DnnlPlainBottom(const Blob& bottom) {
  return static_cast<const float*>(dnnl_->plain_src.In(bottom.cpu_data()).get_data_handle());
}

void InnerProductLayer::DnnlWeightGradient(const Blob& bottom, const Blob& top, float* weights_diff,
                                           float* bias_diff) {
  DnnlState& s = *dnnl_;
  const memory& src = s.wg_src.In(bottom.cpu_data());
  const memory& diff_dst = s.wg_diff_dst.In(top.cpu_diff());
  const memory& diff_weights = s.wg_weights.Out(weights_diff);
  Bind(s.bias_grad, s.bias_grad_values.data());
  s.Execute(s.weight_gradient, {{DNNL_ARG_SRC, src.get()},
                                {DNNL_ARG_DIFF_DST, diff_dst.get()},
                                {DNNL_ARG_DIFF_WEIGHTS, diff_weights.get()},
                                {DNNL_ARG_DIFF_BIAS, s.bias_grad.get()}});
  if (weights_diff != nullptr) s.wg_weights.Finish(weights_diff, /*accumulate=*/true);
  if (bias_diff != nullptr) {
    for (int64_t j = 0; j < n_; ++j) bias_diff[j] += s.bias_grad_values[j];
  }
}

void InnerProductLayer::DnnlBackwardData(const Blob& top, Blob* bottom) {
  DnnlState& s = *dnnl_;
  const memory& diff_dst = s.diff_dst.In(top.cpu_diff());
  const memory& weights = s.adjoint_weights.In(blobs_[0]->cpu_data());
  const memory& diff_src = s.diff_src.Out(bottom->mutable_cpu_diff());
  s.Execute(s.backward, {{DNNL_ARG_DIFF_DST, diff_dst.get()},
                         {DNNL_ARG_WEIGHTS, weights.get()},
                         {DNNL_ARG_DIFF_SRC, diff_src.get()}});
  s.diff_src.Finish(bottom->mutable_cpu_diff());
}

}  // namespace demi
