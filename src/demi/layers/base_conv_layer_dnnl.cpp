// The DNNL engine of Convolution and Deconvolution (see base_conv_layer.hpp).
#include "demi/layers/base_conv_layer.hpp"
#include "demi/layers/pointwise_conv_matmuls.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

using dnnl::memory;

/// The three oneDNN primitives of the layer's convolution (image -> output)
/// over the whole batch, and the planned buffers their layouts need. One
/// buffer per side serves all three primitives: they run one after another.
struct BaseConvolutionLayer::DnnlState : DnnlLayerState {
  dnnl::convolution_forward forward;
  dnnl::convolution_backward_data adjoint;
  dnnl::convolution_backward_weights weight_gradient;
  /// A 1x1 convolution between channels-last bfloat16 blobs takes its
  /// weight and bias gradients (instead of weight_gradient) and, of 64
  /// output channels or more, its image gradient (instead of adjoint) from
  /// matmuls.
  bool pointwise = false;
  PointwiseConvolutionMatmuls matmuls;
  Blob pixels_buffer;       ///< a strided one's pixels (PointwiseConvolutionMatmuls)
  bool fused_bias = false;  ///< Convolution adds b inside the forward primitive
  // Each side of each primitive, in its chosen layout beside Caffe's.
  DnnlTensor fwd_image, fwd_weights, fwd_output;
  DnnlTensor adj_output, adj_weights, adj_image;
  DnnlTensor wg_image, wg_output, wg_weights;
  memory bias, bias_grad;
  std::vector<float> bias_grad_values;  ///< sized in Reshape: diff_bias is added, not written
  std::vector<double> channel_sums;     ///< Deconvolution's bias gradient, sized in Reshape
  Blob image_buffer, output_buffer, weights_buffer;
};

namespace {

memory::dims Dims(std::initializer_list<int64_t> values) { return memory::dims(values); }

memory::desc AnyLayout(const memory::dims& dims, memory::data_type type = memory::data_type::f32) {
  return memory::desc(dims, type, memory::format_tag::any);
}

}  // namespace

void BaseConvolutionLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  dnnl_ = std::make_shared<DnnlState>();
  DnnlState& s = *dnnl_;
  s.fused_bias = bias_term_ && !reverse_dimensions();
  RegisterBuffer("dnnl_image", &s.image_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_output", &s.output_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_weights", &s.weights_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_pixels", &s.pixels_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_scratchpad", &s.scratchpad.blob, BufferLifetime::kScratch);
}

bool BaseConvolutionLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void BaseConvolutionLayer::DnnlReshape(const Blob& bottom, const Blob& top) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.image_buffer, &s.output_buffer, &s.weights_buffer, &s.pixels_buffer});
  if (bottom.count() == 0) return;  // CAFFE handles empty batches
  const ConvGeometry& g = geometry_;
  // The convolution's image is geometry_ (the bottom for Convolution, the
  // top for Deconvolution); its output is the other side.
  const int64_t image_h = g.height, image_w = g.width;
  const int64_t out_h = reverse_dimensions() ? bottom.shape(2) : top_h_;
  const int64_t out_w = reverse_dimensions() ? bottom.shape(3) : top_w_;
  const memory::dims image_dims = Dims({num_, g.channels, image_h, image_w});
  const memory::dims output_dims = Dims({num_, conv_out_channels_, out_h, out_w});
  const memory::dims weight_dims =
      group_ == 1 ? Dims({conv_out_channels_, g.channels, g.kernel_h, g.kernel_w})
                  : Dims({group_, conv_out_channels_ / group_, g.channels / group_, g.kernel_h,
                          g.kernel_w});
  const memory::dims strides = Dims({g.stride_h, g.stride_w});
  const memory::dims dilates = Dims({g.dilation_h - 1, g.dilation_w - 1});
  const memory::dims pad_l = Dims({g.pad_h, g.pad_w});
  // oneDNN wants the right padding that yields Caffe's (floored) output size.
  const memory::dims pad_r =
      Dims({(out_h - 1) * g.stride_h + g.dilation_h * (g.kernel_h - 1) + 1 - image_h - g.pad_h,
            (out_w - 1) * g.stride_w + g.dilation_w * (g.kernel_w - 1) + 1 - image_w - g.pad_w});
  // The layouts the blobs hold (Caffe's, or channel-blocked between DNNL
  // layers), in their storage types.
  const Blob& image_blob = reverse_dimensions() ? top : bottom;
  const Blob& output_blob = reverse_dimensions() ? bottom : top;
  const memory::desc image_user = BlobDesc(image_blob);
  const memory::desc output_user = BlobDesc(output_blob);
  const memory::desc weights_user = DenseDesc({weight_dims.begin(), weight_dims.end()});
  const memory::desc bias_user = DenseDesc({conv_out_channels_});
  // Between blobs in Caffe's layout, 1x1 kernels run as GEMMs faster than
  // through reorders into blocked channels; larger kernels gain from the
  // blocked direct convolution more than the reorders cost (measured on
  // ResNet-50's layers at batch 8). A blocked blob on either side makes the
  // blocked kernel the faster for 1x1 too.
  const bool plain = g.kernel_h == 1 && g.kernel_w == 1 &&
                     image_user == DenseDesc(image_dims, DnnlStorageType(image_blob)) &&
                     output_user == DenseDesc(output_dims, DnnlStorageType(output_blob));
  // Each primitive reads its inputs in its math type (BFLOAT16: bf16, with
  // FLOAT sums), and writes FLOAT, or bf16 into a BFLOAT16 blob.
  // Convolution's forward is the forward primitive; Deconvolution's is the
  // adjoint, and its backward the other two.
  const memory::data_type forward_type = DnnlMathType(engine_.types.forward_math);
  const memory::data_type backward_type = DnnlMathType(engine_.types.backward_math);
  const memory::data_type convolve_type = reverse_dimensions() ? backward_type : forward_type;
  const memory::data_type adjoint_type = reverse_dimensions() ? forward_type : backward_type;
  const memory::data_type f32 = memory::data_type::f32;
  const memory::data_type output_type = convolve_type == f32 ? f32 : DnnlStorageType(output_blob);
  const memory::data_type image_type = adjoint_type == f32 ? f32 : DnnlStorageType(image_blob);
  // The image and output of a primitive: the plain layouts when `plain`,
  // else oneDNN's choice, of the type given. A widened blob's own layout
  // (DnnlWidens: FLOAT16, and BFLOAT16 where oneDNN does not compute in it):
  // oneDNN converts it between layouts with its reference reorder only (tens
  // of times slower than the convolution), and a change of type alone is our
  // loop (DnnlTensor).
  const auto image_md = [&](memory::data_type in) {
    if (DnnlWidens(image_blob.storage_type())) return WithDataType(image_user, in);
    return plain ? DenseDesc({image_dims.begin(), image_dims.end()}, in)
                 : AnyLayout(image_dims, in);
  };
  const auto output_md = [&](memory::data_type in) {
    if (DnnlWidens(output_blob.storage_type())) return WithDataType(output_user, in);
    return plain ? DenseDesc({output_dims.begin(), output_dims.end()}, in)
                 : AnyLayout(output_dims, in);
  };
  // The backward as matmuls (DnnlState::pointwise): bfloat16 blobs channels
  // last on both sides, as oneDNN's AMX kernels have them, and a 1x1
  // geometry at any stride. (Of 8 or 16 channels, a blocked description:
  // the same bytes.)
  const bool pointwise_geometry = !reverse_dimensions() && group_ == 1 && g.kernel_h == 1 &&
                                  g.kernel_w == 1 && g.pad_h == 0 && g.pad_w == 0 &&
                                  g.dilation_h == 1 && g.dilation_w == 1;
  const bool pointwise_layouts = backward_type == memory::data_type::bf16 &&
                                 image_blob.channels_last() && output_blob.channels_last() &&
                                 image_blob.storage_type() == BFLOAT16 &&
                                 output_blob.storage_type() == BFLOAT16;
  s.pointwise = false;
  if (pointwise_geometry && pointwise_layouts && runs_backward()) {
    const PointwiseGeometry pointwise{num_,  g.channels, conv_out_channels_, image_h,   image_w,
                                      out_h, out_w,      g.stride_h,         g.stride_w};
    // The image gradient's matmul sums over the K output channels: below 64
    // it ran slower than oneDNN's kernel (GoogLeNet's 16 and 48).
    constexpr int64_t kMinAdjointChannels = 64;
    try {
      s.matmuls.Reshape(pointwise, BFLOAT16, conv_out_channels_ >= kMinAdjointChannels,
                        &s.pixels_buffer, &s.weights_buffer);
      s.pointwise = true;
    } catch (const dnnl::error& error) {  // the convolution's own primitives, then
      LOG(INFO) << "Convolution layer '" << layer_param_.name()
                << "' runs oneDNN's backward kernels: oneDNN has no matmul for its 1x1 backward ("
                << error.what() << ")";
    }
  }
  const auto algorithm = dnnl::algorithm::convolution_direct;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const dnnl::engine& engine = DnnlEngine();
  const std::string what = StrCat("convolution for bottom shape ", bottom.shape_string());
  s.ready = TryDnnl(layer_param_, what, [&] {
    // image, weights in `in` -> output; also the hint of the backward
    // primitives reading `in`.
    const auto convolve = [&](memory::data_type in) {
      const auto desc = s.fused_bias ? dnnl::convolution_forward::desc(
                                           dnnl::prop_kind::forward_training, algorithm,
                                           image_md(in), AnyLayout(weight_dims, in), bias_user,
                                           output_md(output_type), strides, dilates, pad_l, pad_r)
                                     : dnnl::convolution_forward::desc(
                                           dnnl::prop_kind::forward_training, algorithm,
                                           image_md(in), AnyLayout(weight_dims, in),
                                           output_md(output_type), strides, dilates, pad_l, pad_r);
      return dnnl::convolution_forward::primitive_desc(desc, attr, engine);
    };
    const dnnl::convolution_forward::primitive_desc forward = convolve(convolve_type);
    s.forward = dnnl::convolution_forward(forward);
    s.fwd_image.Reshape(forward.src_desc(), image_user, &s.image_buffer);
    s.fwd_weights.Reshape(forward.weights_desc(), weights_user, &s.weights_buffer);
    s.fwd_output.Reshape(forward.dst_desc(), output_user, &s.output_buffer);
    memory::desc adjoint_scratchpad, weight_gradient_scratchpad;
    if (s.pointwise && s.matmuls.adjoint()) {
      adjoint_scratchpad = s.matmuls.adjoint_scratchpad();
    } else {
      const dnnl::convolution_backward_data::primitive_desc adjoint(
          dnnl::convolution_backward_data::desc(
              algorithm, image_md(image_type), AnyLayout(weight_dims, adjoint_type),
              output_md(adjoint_type), strides, dilates, pad_l, pad_r),
          attr, engine, adjoint_type == convolve_type ? forward : convolve(adjoint_type));
      s.adjoint = dnnl::convolution_backward_data(adjoint);
      s.adj_output.Reshape(adjoint.diff_dst_desc(), output_user, &s.output_buffer);
      s.adj_weights.Reshape(adjoint.weights_desc(), weights_user, &s.weights_buffer);
      s.adj_image.Reshape(adjoint.diff_src_desc(), image_user, &s.image_buffer);
      adjoint_scratchpad = adjoint.scratchpad_desc();
    }
    if (s.pointwise) {
      weight_gradient_scratchpad = s.matmuls.weight_gradient_scratchpad();
    } else {
      // The weight gradient reads image and output gradient in
      // backward_type and sums into f32 weights (and bias).
      const auto weight_gradient_desc =
          s.fused_bias ? dnnl::convolution_backward_weights::desc(
                             algorithm, image_md(backward_type), AnyLayout(weight_dims, f32),
                             bias_user, output_md(backward_type), strides, dilates, pad_l, pad_r)
                       : dnnl::convolution_backward_weights::desc(
                             algorithm, image_md(backward_type), AnyLayout(weight_dims, f32),
                             output_md(backward_type), strides, dilates, pad_l, pad_r);
      const dnnl::convolution_backward_weights::primitive_desc weight_gradient(
          weight_gradient_desc, attr, engine,
          backward_type == convolve_type ? forward : convolve(backward_type));
      s.weight_gradient = dnnl::convolution_backward_weights(weight_gradient);
      s.wg_image.Reshape(weight_gradient.src_desc(), image_user, &s.image_buffer);
      s.wg_output.Reshape(weight_gradient.diff_dst_desc(), output_user, &s.output_buffer);
      s.wg_weights.Reshape(weight_gradient.diff_weights_desc(), weights_user, &s.weights_buffer,
                           /*own_buffer=*/true);
      weight_gradient_scratchpad = weight_gradient.scratchpad_desc();
    }
    s.bias = UnboundMemory(bias_user);
    s.bias_grad = UnboundMemory(bias_user);
    s.bias_grad_values.assign(s.fused_bias ? conv_out_channels_ : 0, 0.0f);
    s.channel_sums.assign(bias_term_ && !s.fused_bias ? num_output_ : 0, 0.0);
    s.scratchpad.Reshape(
        {forward.scratchpad_desc(), adjoint_scratchpad, weight_gradient_scratchpad});
  });
  if (!s.ready) return;
  columns_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's scratch is not needed
}

void BaseConvolutionLayer::DnnlConvolve(const void* image, const float* weights, void* output) {
  DnnlState& s = *dnnl_;
  const memory& src = s.fwd_image.In(image);
  const memory& w = s.fwd_weights.In(weights);
  const memory& dst = s.fwd_output.Out(output);
  if (s.fused_bias) Bind(s.bias, blobs_[1]->cpu_data());
  s.Execute(s.forward, {{DNNL_ARG_SRC, src.get()},
                        {DNNL_ARG_WEIGHTS, w.get()},
                        {DNNL_ARG_BIAS, s.bias.get()},
                        {DNNL_ARG_DST, dst.get()}});
  s.fwd_output.Finish(output);
}

void BaseConvolutionLayer::DnnlConvolveAdjoint(const void* output, const float* weights,
                                               void* image) {
  DnnlState& s = *dnnl_;
  if (s.pointwise && s.matmuls.adjoint()) {
    s.matmuls.Adjoint(&s, output, weights, image);
    return;
  }
  const memory& diff_dst = s.adj_output.In(output);
  const memory& w = s.adj_weights.In(weights);
  const memory& diff_src = s.adj_image.Out(image);
  s.Execute(s.adjoint, {{DNNL_ARG_DIFF_DST, diff_dst.get()},
                        {DNNL_ARG_WEIGHTS, w.get()},
                        {DNNL_ARG_DIFF_SRC, diff_src.get()}});
  s.adj_image.Finish(image);
}

void BaseConvolutionLayer::DnnlWeightGradient(const void* image, const void* output,
                                              float* weights_diff, float* bias_diff) {
  DnnlState& s = *dnnl_;
  if (s.pointwise) {
    s.matmuls.WeightGradient(&s, image, output, weights_diff, bias_diff);
    return;
  }
  const memory& src = s.wg_image.In(image);
  const memory& diff_dst = s.wg_output.In(output);
  const memory& diff_w = s.wg_weights.Out(weights_diff);
  Bind(s.bias_grad, s.bias_grad_values.data());
  s.Execute(s.weight_gradient, {{DNNL_ARG_SRC, src.get()},
                                {DNNL_ARG_DIFF_DST, diff_dst.get()},
                                {DNNL_ARG_DIFF_WEIGHTS, diff_w.get()},
                                {DNNL_ARG_DIFF_BIAS, s.bias_grad.get()}});
  if (weights_diff != nullptr) s.wg_weights.Finish(weights_diff, /*accumulate=*/true);
  if (bias_diff != nullptr) {
    for (size_t m = 0; m < s.bias_grad_values.size(); ++m) bias_diff[m] += s.bias_grad_values[m];
  }
}

void BaseConvolutionLayer::DnnlAddBias(Blob* top) {
  const float* b = blobs_[1]->cpu_data();
  float* y = top->mutable_cpu_data();
  ForEachChannelElement(ChannelBlocks::Of(*top), [=](int64_t k, int64_t c) { y[k] += b[c]; });
}

void BaseConvolutionLayer::DnnlAddBiasGradient(const Blob& top, float* bias_diff) {
  const float* dy = top.cpu_diff();
  std::vector<double>& sums = dnnl_->channel_sums;
  const ChannelBlocks t = ChannelBlocks::Of(top);
  if (t.block > 1) {
    ChannelSums(t, sums.data(), [dy](int64_t k, int64_t) { return dy[k]; });
  } else {
    ParallelFor(t.channels, GrainFor(t.outer * t.inner), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        sums[c] = 0;
        for (int64_t n = 0; n < t.outer; ++n)
          sums[c] += LaneSum(t.inner, dy + (n * t.channels + c) * t.inner);
      }
    });
  }
  for (int64_t c = 0; c < t.channels; ++c) bias_diff[c] += static_cast<float>(sums[c]);
}

}  // namespace demi
